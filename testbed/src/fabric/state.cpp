#include "rocehil/testbed/state.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {

namespace {

constexpr int schema_version = 1;

MirrorDirection mirror_from(std::string_view text, const std::string& path) {
  for (auto d :
       {MirrorDirection::spine_to_leaf, MirrorDirection::leaf_to_spine, MirrorDirection::both})
    if (to_string(d) == text) return d;
  throw input_error(
      fmt::format("{}: options.mirror '{}' is not spine-to-leaf, leaf-to-spine or "
                  "both; run 'rocehil testbed down' and 'up' again",
                  path, text));
}

}  // namespace

void write_state(const std::string& path, const TestbedState& s) {
  const TestbedOptions& o = s.options;
  const nlohmann::json j = {
      {"schema_version", schema_version},
      {"id", o.id},
      {"dir", o.dir},
      {"phase", s.phase},
      {"mgmt_octet", s.mgmt_octet},
      {"options",
       {{"hosts", o.hosts},
        {"racks", o.racks},
        {"spines", o.spines},
        {"host_mbps", o.host_mbps},
        {"uplink_mbps", o.uplink_mbps},
        {"ecn_mark_mbps", o.ecn_mark_mbps},
        {"ecn", o.ecn},
        {"mtu", o.mtu},
        {"mirror", to_string(o.mirror)},
        {"mirror_mode", to_string(o.mirror_mode)},
        {"mirror_truncate", o.mirror_truncate},
        {"ecmp_seed", o.ecmp_seed},
        {"slurm", o.slurm},
        {"routing", to_string(o.routing)},
        {"bfd", {{"interval_ms", o.bfd.interval_ms}, {"multiplier", o.bfd.multiplier}}},
        {"lossless", o.lossless},
        {"vm",
         {{"enabled", o.vm.enabled},
          {"memory_mb", o.vm.memory_mb},
          {"accel", to_string(o.vm.accel)},
          {"kernel_cache", o.vm.kernel_cache}}}}}};
  // Written to a temporary name and renamed: a crash never leaves half a state file.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << j.dump(2) << '\n';
    if (!out) throw system_error(fmt::format("cannot write {}", temporary), errno);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw system_error(fmt::format("cannot rename {} to {}", temporary, path), errno);
}

std::optional<TestbedState> read_state(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw input_error(
        fmt::format("{}: not valid JSON ({}); remove it and run 'rocehil testbed "
                    "down --id ID' with the testbed's id",
                    path, e.what()));
  }
  try {
    if (j.at("schema_version").get<int>() != schema_version)
      throw input_error(
          fmt::format("{}: schema_version {} is not {}; it was written by another "
                      "rocehil version",
                      path, j.at("schema_version").dump(), schema_version));
    TestbedState s;
    s.phase = j.at("phase").get<std::string>();
    s.mgmt_octet = j.at("mgmt_octet").get<int>();
    TestbedOptions& o = s.options;
    o.id = j.at("id").get<std::string>();
    o.dir = j.at("dir").get<std::string>();
    const auto& opt = j.at("options");
    o.hosts = opt.at("hosts").get<int>();
    o.racks = opt.at("racks").get<int>();
    o.spines = opt.at("spines").get<int>();
    o.host_mbps = opt.at("host_mbps").get<int>();
    o.uplink_mbps = opt.at("uplink_mbps").get<int>();
    o.ecn_mark_mbps = opt.at("ecn_mark_mbps").get<int>();
    o.ecn = opt.at("ecn").get<bool>();
    o.mtu = opt.at("mtu").get<int>();
    o.mirror = mirror_from(opt.at("mirror").get<std::string>(), path);
    // State written before remote mirrors: every mirror was local.
    o.mirror_mode = parse_mirror_mode(opt.value("mirror_mode", std::string("local")));
    o.mirror_truncate = opt.value("mirror_truncate", 0);
    o.ecmp_seed = opt.value("ecmp_seed", std::uint32_t{0});  // state written before the option
    o.slurm = opt.value("slurm", false);
    // State written before --routing: every switch had static routes.
    o.routing = parse_routing(opt.value("routing", std::string("static")));
    if (const auto bfd = opt.find("bfd"); bfd != opt.end()) {
      o.bfd.interval_ms = bfd->at("interval_ms").get<int>();
      o.bfd.multiplier = bfd->at("multiplier").get<int>();
    }
    // State written before --lossless: the kernel forwarded, through one tbf per port.
    o.lossless = opt.value("lossless", false);
    // Written by rocehil versions with guests; an older state file's hosts were namespaces.
    if (const auto vm = opt.find("vm"); vm != opt.end()) {
      o.vm.enabled = vm->at("enabled").get<bool>();
      o.vm.memory_mb = vm->at("memory_mb").get<int>();
      o.vm.accel = parse_guest_accel(vm->at("accel").get<std::string>());
      o.vm.kernel_cache = vm->at("kernel_cache").get<std::string>();
    }
    if (s.mgmt_octet < 0 || s.mgmt_octet > 255)
      throw input_error(fmt::format("{}: mgmt_octet {} is not 0 to 255", path, s.mgmt_octet));
    validate(o);
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw input_error(
        fmt::format("{}: {}; it was not written by this rocehil, or was edited", path, e.what()));
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(path)) throw;
    throw input_error(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace rocehil::testbed
