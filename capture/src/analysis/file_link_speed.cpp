#include "rocehil/capture/file_link_speed.hpp"

#include <fmt/format.h>

namespace rocehil::capture {

namespace {

std::string interface_text(const FileInterface& i) {
  std::string text = i.section == 0 ? fmt::format("interface {}", i.index)
                                    : fmt::format("section {} interface {}", i.section, i.index);
  if (!i.name.empty()) text += fmt::format(" '{}'", i.name);
  return text;
}

}  // namespace

LinkSpeed file_link_speed(const std::vector<FileInterface>& interfaces,
                          std::optional<double> given) {
  if (given) return {*given, "--link-gbps", {}};
  const FileInterface* first = nullptr;
  bool differ = false;
  for (const FileInterface& i : interfaces) {
    if (i.speed_bps == 0) continue;
    if (first == nullptr)
      first = &i;
    else
      differ |= i.speed_bps != first->speed_bps;
  }
  if (first == nullptr)
    return {100,
            interfaces.empty() ? "assumed: the file records no interface speed (pcap has no "
                                 "if_speed); give --link-gbps"
                               : "assumed: the file's interfaces state no if_speed; give "
                                 "--link-gbps",
            {}};
  const double first_gbps = static_cast<double>(first->speed_bps) / 1e9;
  if (!differ)
    return {first_gbps, fmt::format("the file's if_speed ({})", interface_text(*first)), {}};
  // A file merged from several links (mergecap, a capture of several ports): each interface's
  // pauses at its own speed.
  LinkSpeed speed{first_gbps, "each interface's if_speed:", {}};
  for (const FileInterface& i : interfaces) {
    const double gbps = i.speed_bps != 0 ? static_cast<double>(i.speed_bps) / 1e9 : first_gbps;
    speed.by_interface.push_back(gbps);
    speed.source += fmt::format(" {} {:g} Gb/s{}{}", interface_text(i), gbps,
                                i.speed_bps != 0 ? "" : " (states none: the first's)",
                                &i == &interfaces.back() ? "" : ",");
  }
  return speed;
}

}  // namespace rocehil::capture
