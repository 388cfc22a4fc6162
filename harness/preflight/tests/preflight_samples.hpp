#pragma once

// Hosts, probe outputs (data/probe/) and check reports shared by the preflight tests and the
// command line's table tests, so both hold the same reports.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/preflight/preflight.hpp"

namespace rocehil::preflight::samples {

inline constexpr std::string_view version = "rocehil 0.1.0";

inline HostFacts sample(const std::string& name) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "data/probe" / name);
  std::ostringstream s;
  s << in.rdbuf();
  return parse_probe_output(s.str());
}

inline HostFacts connectx() {
  return sample("connectx_host.txt");
}

inline inventory::Nic nic(std::string device, std::string netdev, std::string ip, int gid_index,
                          int gpu = -1) {
  inventory::Nic n;
  n.device = std::move(device);
  n.netdev = std::move(netdev);
  n.ip = std::move(ip);
  n.gid_index = gid_index;
  n.gpu = gpu;
  return n;
}

inline inventory::Host gpu_host(std::vector<inventory::Nic> nics) {
  inventory::Host h;
  h.name = "gpu001";
  h.address = "10.0.1.1";
  h.agent = "/usr/local/bin/rocehil";
  h.provider = inventory::Provider::verbs;
  h.nics = std::move(nics);
  return h;
}

inline inventory::Host healthy_inventory() {
  auto h = gpu_host({nic("mlx5_0", "ens1f0np0", "10.10.1.2", 3, 0),
                     nic("mlx5_1", "ens2f0np0", "10.11.1.2", 3, 1)});
  h.name = "gpu002";
  h.address = "10.0.1.2";
  for (auto& n : h.nics) {
    n.mtu = 9000;
    n.link_gbps = 400;
  }
  return h;
}

inline inventory::Host testbed_inventory(inventory::Provider provider) {
  inventory::Host h;
  h.name = "t1";
  h.address = "198.19.1.11";
  h.agent = "/usr/local/bin/rocehil";
  h.provider = provider;
  h.nics = {nic("", "t1-nic0", "198.18.1.11", -1)};
  h.nics[0].mtu = 9000;
  return h;
}

inline HostCheck checked(std::string name, std::string address, const inventory::Host& h,
                         HostFacts f, double ssh_ms) {
  HostCheck c;
  c.host = std::move(name);
  c.address = std::move(address);
  c.ssh_ms = ssh_ms;
  c.items = evaluate_host(h, f, version);
  c.verdict = verdict_of(h, f, c.items);
  c.facts = std::move(f);
  return c;
}

// gpu001 checked (its second port down) and gpu002 unreachable.
inline CheckReport two_host_report() {
  CheckReport r;
  r.inventory_file = "fabric.yaml";
  r.controller_version = std::string(version);
  HostCheck ok;
  ok.host = "gpu001";
  ok.address = "10.0.1.1";
  ok.ssh_ms = 12.34;
  ok.facts = connectx();
  const auto host = gpu_host(
      {nic("mlx5_0", "ens1f0np0", "10.10.1.1", 3), nic("mlx5_1", "ens2f0np0", "10.11.1.1", 3)});
  ok.items = evaluate_host(host, *ok.facts, version);
  ok.verdict = verdict_of(host, *ok.facts, ok.items);
  HostCheck gone;
  gone.host = "gpu002";
  gone.address = "10.0.1.2";
  gone.verdict = HostVerdict::unreachable;
  gone.unreachable = "ssh: connect to host 10.0.1.2 port 22: Connection refused";
  r.hosts = {ok, gone};
  return r;
}

// Two healthy ConnectX hosts, a testbed host (soft only) and one unreachable.
inline CheckReport four_host_report() {
  CheckReport r;
  r.inventory_file = "fabric.yaml";
  r.inventory_name = "lab";
  r.selection = "all";
  r.controller_version = std::string(version);
  const auto h = healthy_inventory();
  r.hosts.push_back(checked("gpu002", "10.0.1.2", h, sample("connectx_healthy.txt"), 11.96));
  auto h2 = h;
  h2.name = "gpu003";
  r.hosts.push_back(checked("gpu003", "10.0.1.3", h2, sample("connectx_healthy.txt"), 8.04));
  r.hosts.push_back(checked("t1", "198.19.1.11", testbed_inventory(inventory::Provider::soft),
                            sample("testbed_host.txt"), 1.26));
  HostCheck gone;
  gone.host = "h2";
  gone.address = "198.19.1.12";
  gone.verdict = HostVerdict::unreachable;
  gone.ssh_ms = 3.0;
  gone.unreachable = "ssh: connect to host 198.19.1.12 port 22: Connection refused";
  r.hosts.push_back(gone);

  return r;
}

}  // namespace rocehil::preflight::samples
