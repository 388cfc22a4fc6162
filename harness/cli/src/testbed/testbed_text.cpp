#include "testbed/testbed_text.hpp"

#include <fmt/format.h>

#include <cctype>

#include "shared/text_table.hpp"

namespace rocehil::cli {

using testbed::Role;

std::string render_up_text(const testbed::UpResult& up) {
  const auto& t = up.topology;
  int hosts = 0, leaves = 0, spines = 0;
  for (const auto& ns : t.namespaces) {
    hosts += ns.role == testbed::Role::host;
    leaves += ns.role == testbed::Role::leaf;
    spines += ns.role == testbed::Role::spine;
  }
  std::string out = fmt::format(
      "testbed {} is up in {:.1f} s: {} hosts, {} leaves, {} spines, capture namespace {}\n", t.id,
      up.seconds, hosts, leaves, spines, t.find("cap")->netns);
  out += fmt::format("  inventory  {}\n", up.paths.inventory());
  out += fmt::format("  ssh        ssh -F {} h1\n", up.paths.ssh_config());
  // Debian ships no MIB files: the example walks ifName (IF-MIB) by number.
  if (const testbed::Namespace* l1 = t.find("l1"))
    out += fmt::format(
        "  snmp       snmpbulkwalk -v2c -c \"$(cat {})\" {} 1.3.6.1.2.1.31.1.1.1.1   (l1; every "
        "switch answers on its management address)\n",
        up.paths.snmp_community(), l1->mgmt_address);
  for (const auto& m : t.mirrors) {
    if (!m.remote) {
      out += fmt::format("  mirror     {} copies {} ({})\n", m.interface, fmt::join(m.links, ", "),
                         testbed::to_string(m.direction));
      continue;
    }
    const auto& r = *m.remote;
    out += fmt::format("  mirror     {} session {} from {} to cap {} ({}): copies {} ({}){}\n",
                       testbed::to_string(r.mode), r.session, r.source, r.destination, m.interface,
                       fmt::join(m.links, ", "), testbed::to_string(m.direction),
                       r.truncate ? fmt::format(", {} bytes kept", r.truncate) : "");
  }
  if (up.slurm_conf)
    out += fmt::format(
        "  slurm      SLURM_CONF={} salloc -N {} rocehil run SUITE -i {} "
        "--launcher slurm --hosts slurm\n",
        *up.slurm_conf, hosts + 1, up.paths.inventory());
  out += fmt::format("  status     rocehil testbed status --dir {}\n", up.paths.dir);
  out += fmt::format("  down       rocehil testbed down --dir {}\n", up.paths.dir);
  return out;
}

namespace {

// The mirror mode, and for a remote one each spine's relay with what it has sent.
std::string render_relays_text(const testbed::StatusResult& s) {
  std::string out = fmt::format("\nmirror mode {}\n", testbed::to_string(s.mirror_mode));
  if (s.relays.empty()) return out;
  TextTable relays({{"switch", TextTable::Align::left},
                    {"session", TextTable::Align::right},
                    {"from -> to", TextTable::Align::left},
                    {"relay", TextTable::Align::left},
                    {"frames", TextTable::Align::right},
                    {"truncated", TextTable::Align::right},
                    {"dropped", TextTable::Align::right},
                    {"send errors", TextTable::Align::right}});
  for (const auto& r : s.relays) {
    const auto& c = r.counters;
    const auto count = [&](std::uint64_t testbed::RelayCounters::*field) {
      return c ? std::to_string((*c).*field) : std::string("-");
    };
    relays.add_row(
        {r.spine, std::to_string(r.session.session),
         fmt::format("{} -> {}", r.session.source, r.session.destination),
         r.running ? fmt::format("runs (pid {})", r.pid)
                   : fmt::format("NOT RUNNING ({})", r.detail),
         count(&testbed::RelayCounters::frames), count(&testbed::RelayCounters::truncated),
         count(&testbed::RelayCounters::dropped), count(&testbed::RelayCounters::send_errors)});
  }
  out += relays.render();
  return out;
}

std::string uptime_text(long long ms) {
  const long long s = ms / 1000;
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

// --routing bgp: each switch's sessions and its routes to the racks, as its vtysh reports them.
std::string render_routing_text(const testbed::StatusResult& s) {
  if (s.routing != testbed::Routing::bgp)
    return fmt::format("\nrouting {}\n", testbed::to_string(s.routing));
  std::string out = fmt::format("\nrouting bgp (eBGP per uplink, BFD {} ms x {})\n",
                                s.bfd.interval_ms, s.bfd.multiplier);
  TextTable sessions({{"switch", TextTable::Align::left},
                      {"asn", TextTable::Align::right},
                      {"peer", TextTable::Align::left},
                      {"link", TextTable::Align::left},
                      {"state", TextTable::Align::left},
                      {"up for", TextTable::Align::right},
                      {"prefixes", TextTable::Align::right},
                      {"bfd", TextTable::Align::left}});
  TextTable routes({{"switch", TextTable::Align::left},
                    {"to", TextTable::Align::left},
                    {"via", TextTable::Align::left}});
  std::string problems;
  for (const auto& ns : s.namespaces) {
    if (!ns.routing) continue;
    for (const auto& x : ns.routing->sessions) {
      const bool up = x.state == "Established";
      sessions.add_row(
          {ns.spec.name, std::to_string(testbed::bgp_asn(ns.spec)),
           fmt::format("{} ({} {})", x.neighbor.address, x.neighbor.name, x.neighbor.asn),
           x.neighbor.link, up ? x.state : fmt::format("NOT UP: {}", x.state),
           up ? uptime_text(x.uptime_ms) : "-", up ? std::to_string(x.prefixes_received) : "-",
           x.bfd.empty() ? "-" : x.bfd});
    }
    for (const auto& r : ns.routing->routes) {
      std::vector<std::string> hops;
      for (const auto& h : r.next_hops)
        hops.push_back(fmt::format("{} ({})", h.address, h.interface));
      routes.add_row({ns.spec.name, r.prefix,
                      hops.empty() ? "NO ROUTE" : fmt::format("{}", fmt::join(hops, ", "))});
    }
    for (const auto& p : testbed::routing_problems(ns.spec, s.topology, *ns.routing))
      problems += fmt::format("  {}: {}\n", ns.spec.name, p);
  }
  out += sessions.render();
  out += '\n';
  out += routes.render();
  if (!problems.empty()) out += "not converged:\n" + problems;
  return out;
}

// --lossless: a line per switch from its forwarding process's counters (`status --json` has
// every port, queue and priority).
std::string render_dataplane_text(const testbed::StatusResult& s) {
  if (!s.lossless) return {};
  std::string out = "\nlossless switches (status --json: every port, queue and priority)\n";
  for (const auto& ns : s.namespaces) {
    if (!ns.dataplane) continue;
    const auto& d = *ns.dataplane;
    if (!d.ports) {
      out += fmt::format("  {:<8} NO COUNTERS: {}\n", ns.spec.name, d.problem);
      continue;
    }
    const auto t = testbed::dataplane::totals(*d.ports);
    // A lossless class dropped is a defect of the model, not congestion: in capitals.
    out += fmt::format(
        "  {:<8} forwarded {}; PFC sent {}, received {}; ECN marked {}; drops {} (queues) + {} "
        "(no route, unresolved, TTL) + {} (its sockets, the process away); {}; PFC storms {}\n",
        ns.spec.name, t.forwarded, t.pfc_sent, t.pfc_received, t.ecn_marked, t.queue_drops,
        t.forwarding_drops, t.socket_drops,
        t.lossless_drops ? fmt::format("LOSSLESS DROPS {}", t.lossless_drops)
                         : std::string("lossless drops 0"),
        t.storms_detected);
  }
  return out;
}

}  // namespace

std::string render_status_text(const testbed::StatusResult& s) {
  if (s.phase == "none" && s.stray_namespaces.empty())
    return fmt::format("testbed {}: nothing is up (no state file in {})\n", s.id,
                       s.dir.empty() ? "--dir" : s.dir);
  std::string out =
      fmt::format("testbed {} ({}): {}; management {} on bridge {} ({})\n", s.id, s.phase,
                  s.healthy() ? "healthy" : "NOT healthy", s.topology.mgmt_prefix,
                  s.topology.bridge, s.bridge_exists ? "present" : "MISSING");
  TextTable namespaces({{"namespace", TextTable::Align::left},
                        {"role", TextTable::Align::left},
                        {"rack", TextTable::Align::right},
                        {"exists", TextTable::Align::left},
                        {"fabric address", TextTable::Align::left},
                        {"sshd", TextTable::Align::left},
                        {"snmpd", TextTable::Align::left},
                        {"lldpd", TextTable::Align::left}});
  TextTable interfaces({{"namespace", TextTable::Align::left},
                        {"interface", TextTable::Align::left},
                        {"link", TextTable::Align::left},
                        {"to", TextTable::Align::left},
                        {"state", TextTable::Align::left},
                        {"shaped", TextTable::Align::right},
                        {"rx pkts", TextTable::Align::right},
                        {"tx pkts", TextTable::Align::right}});
  for (const auto& ns : s.namespaces) {
    std::string sshd = "-";
    if (ns.sshd_answers)
      sshd = fmt::format("{} {}", ns.spec.mgmt_address,
                         *ns.sshd_answers ? "answers" : "NO ANSWER (" + ns.sshd_detail + ")");
    std::string snmpd = "-";
    if (ns.snmpd_answers)
      snmpd = fmt::format("{} {}", ns.spec.mgmt_address,
                          *ns.snmpd_answers ? "answers" : "NO ANSWER (" + ns.snmpd_detail + ")");
    std::string lldpd = "-";
    if (ns.lldpd_runs)
      lldpd = *ns.lldpd_runs ? fmt::format("runs, {} neighbour{}", ns.lldp_neighbors.size(),
                                           ns.lldp_neighbors.size() == 1 ? "" : "s")
                             : "NOT RUNNING (" + ns.lldpd_detail + ")";
    namespaces.add_row(
        {ns.spec.netns, std::string(testbed::to_string(ns.spec.role)),
         ns.spec.rack ? std::to_string(ns.spec.rack) : "-", ns.exists ? "yes" : "MISSING",
         ns.spec.fabric_address.empty() ? "-" : ns.spec.fabric_address, sshd, snmpd, lldpd});
    for (const auto& i : ns.interfaces) {
      std::string to = fmt::format("{}:{}", i.peer_namespace, i.peer_interface);
      if (i.mirror) to = fmt::format("copies {}", fmt::join(i.mirror->links, ","));
      interfaces.add_row({ns.spec.name, i.name, i.link, to, i.exists ? i.operstate : "MISSING",
                          i.mbps ? fmt::format("{} Mb/s", i.mbps) : "-",
                          std::to_string(i.rx_packets), std::to_string(i.tx_packets)});
    }
  }
  // Appended piece by piece: gcc 12 warns (-Wrestrict, falsely) on "\n" + std::string&&.
  out += '\n';
  out += namespaces.render();
  out += '\n';
  out += interfaces.render();
  if (s.slurm) {
    // sinfo's view, as `SLURM_CONF=... sinfo -N` would print it.
    out += fmt::format("\nslurm (SLURM_CONF={}){}\n", s.slurm_conf,
                       s.slurm_problem.empty() ? "" : ": sinfo: " + s.slurm_problem);
    for (const auto& ns : s.namespaces)
      if (ns.sshd_answers)
        out += fmt::format("  {:<8} {}\n", ns.spec.name,
                           ns.slurm_state ? *ns.slurm_state : "NOT A NODE slurmctld knows");
  }
  bool guests = false;
  for (const auto& ns : s.namespaces) guests = guests || ns.guest.has_value();
  if (guests) {
    // The hosts' QEMU guests (--vm): what their consoles last said.
    out += "\nguests (QEMU, soft-RoCE)\n";
    for (const auto& ns : s.namespaces) {
      if (!ns.guest) continue;
      const auto& g = *ns.guest;
      // Anything but ready in capitals, as the other tables show what is wrong.
      std::string state = g.state;
      if (state != "ready")
        for (char& c : state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      out += fmt::format(
          "  {:<8} {:<8} {}{}\n", ns.spec.name, state,
          g.running ? fmt::format("pid {}, {} MiB resident; ", g.pid, g.resident_kib / 1024) : "",
          g.detail);
    }
    out += fmt::format("  consoles: {}\n",
                       s.dir.empty() ? "DIR/run/*.console.log" : s.dir + "/run/*.console.log");
  }
  out += render_relays_text(s);
  out += render_routing_text(s);
  out += render_dataplane_text(s);
  for (const auto& stray : s.stray_namespaces)
    out += fmt::format("stray namespace {} carries the id but is not in the state file\n", stray);
  return out;
}

}  // namespace rocehil::cli
