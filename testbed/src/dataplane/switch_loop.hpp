#pragma once

// A lossless switch's forwarding process, in the switch's network namespace (`rocehil testbed
// switchd`). The kernel keeps the control plane (ARP, BGP, BFD, LLDP, SNMP: its forwarding is
// off); this loop forwards IPv4 between the fabric ports by the kernel's FIB, through eight
// queues per egress port (DSCP to class; WRED with ECN; strict priority for the CNP class, DWRR
// for the rest; each port paced at its speed), with PFC: XOFF and XON out of an ingress port
// whose lossless bytes cross the thresholds, PFC received obeyed per priority, and SONiC's PFC
// watchdog. Its counters are a shared file (shared_counters.hpp) anything can read.
//
// It waits in epoll (packet sockets, a timerfd, netlink, signals): an idle switch costs no CPU.

#include <functional>
#include <string>
#include <string_view>

namespace rocehil::testbed::dataplane {

using LogLine = std::function<void(std::string_view)>;

// Runs the switch of `config_path` (switch_config.hpp) until SIGTERM or SIGINT; SIGHUP reads the
// file again (a changed knob). Returns 0 on a clean stop. Throws rocehil::Error when it cannot
// start (a port missing, no packet socket); a reload that fails keeps the old knobs and says why
// through `log`.
int run_switch(const std::string& config_path, const LogLine& log);

}  // namespace rocehil::testbed::dataplane
