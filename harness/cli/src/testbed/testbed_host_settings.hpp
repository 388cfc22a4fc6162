#pragma once

// The settings a `testbed up --lossless` gives its hosts' soft provider, as a fabric team sets
// its hosts up for a lossless class: PFC on the switches' lossless priorities with trust dscp,
// and the DCQCN timers stretched to the fabric's time.
//
// The lossless switches hold milliseconds of traffic where a 100 Gbit/s switch holds
// microseconds (XOFF 250 KB is 2 ms at 1 Gbit/s), so a CE mark waits milliseconds before its CNP
// can leave the receiver. ConnectX's rate-increase timer (300 us) is about twice the time a
// 100 Gbit/s queue at SONiC's Kmax (2 MB) takes to drain; kept at 300 us here it would give a
// flow back its rate several times before the next CNP could arrive, and ECN would spare little
// PFC (measured: 1,100 and 1,245 XOFF with ECN on against 1,599 and 1,709 off on a 2:1 incast of
// 3 x 16 MiB; stretched, 128 to 304: docs/rehearsal.md). Stretched by the same ratio: 3,000 us
// against the 1.6 ms the default Kmax (200 KB) takes at 1 Gbit/s. The byte counter's scaled value
// (~190 KB) does not fit its 15-bit field, so it is off. All are the hosts' settings like any
// other: `settings show` reads them and `run --set` changes them for a run.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocehil/testbed/topology.hpp"

namespace rocehil::cli {

struct HostSettingValue {
  std::string_view name;  // the settings catalogue's name
  std::string_view value;
};

inline constexpr HostSettingValue lossless_host_dcqcn[] = {
    {"roce_rp.rpg_time_reset", "3000"},
    {"roce_rp.rpg_byte_reset", "0"},
};

// Writes lossless_host_dcqcn, `pfc` = `pfc_priorities` ("none" when empty) and `trust` = dscp
// into the soft provider's files of every host NIC of `t` under `soft_dir`
// (SOFT_DIR/ADDRESS/..., what the agent reads when a run starts). Returns each name with the
// value written, in that order. Throws rocehil::Error (infrastructure) naming a file it cannot
// write.
std::vector<std::pair<std::string, std::string>> write_lossless_host_settings(
    const testbed::Topology& t, const std::vector<int>& pfc_priorities,
    const std::string& soft_dir);

}  // namespace rocehil::cli
