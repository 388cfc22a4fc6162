#include "rocehil/capture/file_link_speed.hpp"

#include <fmt/format.h>

#include "rocehil/common/error.hpp"

namespace rocehil::capture {

namespace {

std::string interface_text(const FileInterface& i) {
  std::string text = i.section == 0 ? fmt::format("interface {}", i.index)
                                    : fmt::format("section {} interface {}", i.section, i.index);
  if (!i.name.empty()) text += fmt::format(" '{}'", i.name);
  return text;
}

}  // namespace

LinkSpeed file_link_speed(const std::string& file, const std::vector<FileInterface>& interfaces,
                          std::optional<double> given) {
  if (given) return {*given, "--link-gbps"};
  const FileInterface* first = nullptr;
  for (const FileInterface& i : interfaces) {
    if (i.speed_bps == 0) continue;
    if (first == nullptr) {
      first = &i;
    } else if (i.speed_bps != first->speed_bps) {
      throw input_error(fmt::format(
          "{}: {} was captured at {:g} Gb/s and {} at {:g} Gb/s (if_speed); pause times differ "
          "per link speed: give --link-gbps for the link you mean, or split the file by "
          "interface first (editcap/tshark -Y 'frame.interface_id == N')",
          file, interface_text(*first), static_cast<double>(first->speed_bps) / 1e9,
          interface_text(i), static_cast<double>(i.speed_bps) / 1e9));
    }
  }
  if (first != nullptr)
    return {static_cast<double>(first->speed_bps) / 1e9,
            fmt::format("the file's if_speed ({})", interface_text(*first))};
  return {100, interfaces.empty() ? "assumed: the file records no interface speed (pcap has no "
                                    "if_speed); give --link-gbps"
                                  : "assumed: the file's interfaces state no if_speed; give "
                                    "--link-gbps"};
}

}  // namespace rocehil::capture
