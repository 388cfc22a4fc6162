#include "rocehil/inventory/inventory.hpp"

#include <algorithm>

namespace rocehil::inventory {

std::string_view to_string(Provider p) {
  return p == Provider::soft ? "soft" : "verbs";
}

std::string_view to_string(Launcher l) {
  switch (l) {
    case Launcher::local: return "local";
    case Launcher::slurm: return "slurm";
    case Launcher::ssh: break;
  }
  return "ssh";
}

std::string_view to_string(SnmpSettings::Version v) {
  return v == SnmpSettings::Version::v3 ? "3" : "2c";
}

std::optional<Launcher> launcher_named(std::string_view name) {
  for (const Launcher l : {Launcher::ssh, Launcher::local, Launcher::slurm})
    if (to_string(l) == name) return l;
  return std::nullopt;
}

namespace {

template <typename T>
const T* find_named(const std::vector<T>& items, std::string_view name) {
  const auto it =
      std::find_if(items.begin(), items.end(), [&](const T& item) { return item.name == name; });
  return it == items.end() ? nullptr : &*it;
}

}  // namespace

const Host* Inventory::find_host(std::string_view wanted) const {
  return find_named(hosts, wanted);
}
const Switch* Inventory::find_switch(std::string_view wanted) const {
  return find_named(switches, wanted);
}
const CapturePoint* Inventory::find_capture(std::string_view wanted) const {
  return find_named(captures, wanted);
}
const Rack* Inventory::find_rack(std::string_view wanted) const {
  return find_named(racks, wanted);
}

}  // namespace rocehil::inventory
