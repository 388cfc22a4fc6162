#pragma once

// A fabric link of a running testbed taken down or brought up as a pulled cable would be: both
// its ends (`ip link set dev IF down` in each end's namespace), so each side's routes through it
// go and neither end forwards onto it. What `rocehil testbed link` and a run's link events do.
// Bringing it up writes the routes over it again; with --routing bgp only a host's (to its
// leaf): the switches' own routing does theirs (BFD and the interface's state end the link's
// session and routes move to the other spines; the session comes back once the link is up).

#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// One end of a link as iproute2 reaches it.
struct LinkPort {
  std::string netns;      // rocehil-<id>-l1
  std::string interface;  // as Linux names it in that namespace
};

// The two ends of the fabric link `link` (a host link or an uplink: "h1-l1", "l1-s1"). Throws
// rocehil::Error (bad input) for a name that is none, listing the fabric links there are.
std::vector<LinkPort> link_ports(const Topology& t, std::string_view link);

// Whether `ip -j link show dev IF` says the interface is administratively up (flag UP). Throws
// rocehil::Error (infrastructure) when the text is not ip's JSON for one interface.
bool admin_up_in(std::string_view ip_json);

// For the testbed in DIR: both ends of `link` set up or down, each read back. Root. Throws
// rocehil::Error: bad input when DIR holds no testbed that is up or no such link, infrastructure
// when ip fails or an end does not read back as set.
void set_link_state(const std::string& dir, std::string_view link, bool up);

// For the testbed in DIR: whether both ends of `link` are administratively up.
bool link_is_up(const std::string& dir, std::string_view link);

}  // namespace rocehil::testbed
