// The preflight table as `rocehil inventory check` and a failed `rocehil run` print it.
#include "fabric/preflight_text.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "preflight_samples.hpp"

namespace rocehil::cli {
namespace {

using namespace preflight;
using namespace preflight::samples;

bool contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

// The line of the table that starts with `host`.
std::string row(const std::string& text, const std::string& host) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("  " + host + " ")) return line;
  return "";
}

std::vector<std::string> cells(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

TEST(PreflightText, TwoHosts) {
  const CheckReport r = two_host_report();
  const std::string text = render_check_text(r);
  EXPECT_TRUE(contains(text, "2 hosts: 0 ok, 0 soft only, 1 failed, 1 unreachable")) << text;
  EXPECT_TRUE(contains(text, "gpu002: unreachable: ssh: connect to host")) << text;
  EXPECT_TRUE(contains(text, "gpu001: fail rdma mlx5_1/1: port 1 is DOWN")) << text;
  EXPECT_TRUE(contains(text, "1/2 active")) << text;
}

TEST(PreflightText, FourHostTable) {
  const CheckReport r = four_host_report();
  const std::string text = render_check_text(r);
  EXPECT_TRUE(contains(text, "\n4 hosts: 2 ok, 1 soft only, 0 failed, 1 unreachable\n")) << text;
  EXPECT_TRUE(contains(text,
                       "  h2: unreachable: ssh: connect to host 198.19.1.12 port 22: Connection "
                       "refused\n"))
      << text;
  EXPECT_TRUE(text.starts_with("  HOST ")) << text;
  EXPECT_EQ(cells(row(text, "gpu002")),
            (std::vector<std::string>{"gpu002", "10.0.1.2", "ok", "12", "ms", "ok", "2/2", "active",
                                      "9000", "3", "np+rp", "28.39.2048"}))
      << text;
  EXPECT_EQ(cells(row(text, "t1")),
            (std::vector<std::string>{"t1", "198.19.1.11", "soft", "only", "1", "ms", "ok", "-",
                                      "9000", "?", "?", "-"}))
      << text;
  EXPECT_EQ(cells(row(text, "h2")), (std::vector<std::string>{"h2", "198.19.1.12", "unreachable",
                                                              "-", "-", "-", "-", "-", "-", "-"}))
      << text;
  // Nothing to spell out for the healthy hosts.
  EXPECT_FALSE(contains(text, "  gpu002: ")) << text;
  // The short cells are explained, '?' (t1's) among them.
  EXPECT_TRUE(contains(text, "PFC: the priorities with PFC on")) << text;
  EXPECT_TRUE(contains(text, "?: the host's NICs do not say")) << text;
}

// --deploy says per host what it did, in text as in JSON, even where all went well.
TEST(PreflightText, WhatDeployDidIsSaidForEveryHost) {
  CheckReport r = four_host_report();
  std::vector<std::string> told;
  for (auto& h : r.hosts) {
    if (h.verdict == HostVerdict::unreachable) continue;
    h.items.push_back({.name = "deploy",
                       .status = CheckStatus::info,
                       .detail = told.empty() ? "installed rocehil 0.1.0 with apt-get in 2.5 s"
                                              : "rocehil 0.1.0 installed already; nothing to do"});
    told.push_back(fmt::format("  {}: deploy: {}\n", h.host, h.items.back().detail));
  }
  ASSERT_GE(told.size(), 2u);
  const std::string text = render_check_text(r);
  for (const auto& line : told) EXPECT_TRUE(contains(text, line)) << line << text;
}

TEST(PreflightText, TableCellsOfAFailedHost) {
  CheckReport r;
  auto h = healthy_inventory();
  h.nics[0].mtu = 4200;
  HostFacts f = sample("connectx_healthy.txt");
  f.agent_version = "rocehil 0.0.9";
  f.netdevs[1].pfc = std::array<bool, 8>{};
  f.netdevs[0].ecn_np.reset();
  f.netdevs[0].ecn_rp.reset();
  f.netdevs[1].ecn_np.reset();
  r.hosts.push_back(checked("gpu002", "10.0.1.2", h, f, 0.4));
  const std::string text = render_check_text(r);
  EXPECT_EQ(cells(row(text, "gpu002")),
            (std::vector<std::string>{"gpu002", "10.0.1.2", "failed", "0", "ms", "0.0.9", "2/2",
                                      "active", "9000", "3/none", "rp", "28.39.2048"}))
      << text;
  EXPECT_TRUE(contains(text,
                       "  gpu002: fail agent: agent is rocehil 0.0.9, this controller is "
                       "rocehil 0.1.0; --deploy installs this version's package "
                       "(--deploy=binary copies this binary)\n"))
      << text;
  EXPECT_TRUE(contains(text, "  gpu002: fail mtu ens1f0np0: mtu 9000, the inventory says 4200\n"))
      << text;
  EXPECT_TRUE(contains(text, "  gpu002: warn pfc ens2f0np0: no priority has PFC enabled")) << text;
  EXPECT_TRUE(contains(text, "1 host: 0 ok, 0 soft only, 1 failed, 0 unreachable")) << text;
}

}  // namespace
}  // namespace rocehil::cli
