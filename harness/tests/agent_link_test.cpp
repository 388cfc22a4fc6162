// The ssh command line an agent is started with, and the data check of point-to-point tests.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "rocehil/common/error.hpp"
#include "rocehil/harness/agent_link.hpp"
#include "rocehil/harness/point_to_point.hpp"

namespace rocehil::harness {
namespace {

// What /bin/sh makes of a quoted word: the shell itself is the independent check.
std::string through_shell(const std::string& word) {
  const std::string command = "printf '%s' " + shell_quote(word);
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 256> buffer{};
  for (std::size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
    out.append(buffer.data(), n);
  EXPECT_EQ(WEXITSTATUS(pclose(pipe)), 0);
  return out;
}

TEST(AgentLinkShellQuote, HostileWordsComeOutOfTheShellUnchanged) {
  for (const std::string word : {"plain", "h1;touch /tmp/rocehil-quote", "$(id)", "`id`", "it's",
                                 "'", "''", "a\nb", "*", "~root", "$HOME", "\\", ""}) {
    EXPECT_EQ(through_shell(word), word) << word;
  }
}

TEST(AgentLinkSsh, ArgumentsAreQuotedIntoOneRemoteCommand) {
  const AgentCommand c = ssh_agent_command("gpu01",
                                           {.config_file = "/tmp/c",
                                            .user = "ops",
                                            .port = 2222,
                                            .identity = {},
                                            .connect_timeout_s = 10},
                                           {"/opt/rocehil dir/rocehil", "traffic", "server"});
  const std::vector<std::string> expected{"ssh",
                                          "-T",
                                          "-o",
                                          "BatchMode=yes",
                                          "-o",
                                          "ConnectTimeout=10",
                                          "-o",
                                          "ServerAliveInterval=5",
                                          "-F",
                                          "/tmp/c",
                                          "-l",
                                          "ops",
                                          "-p",
                                          "2222",
                                          "gpu01",
                                          "--",
                                          "'/opt/rocehil dir/rocehil' 'traffic' 'server'"};
  EXPECT_EQ(c.argv, expected);
  EXPECT_EQ(c.name, "gpu01");
}

TEST(AgentLinkSsh, AHostThatSshWouldReadAsAnOptionIsRefused) {
  for (const std::string host : {"-oProxyCommand=id", "", "h1 h2", "h1\nh2", "h\t1"}) {
    try {
      ssh_agent_command(host, {}, {"rocehil", "agent"});
      ADD_FAILURE() << "accepted " << host;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      EXPECT_NE(std::string(e.what()).find("is not a host name"), std::string::npos);
    }
  }
}

ResultsEvent with_crcs(std::vector<std::pair<std::uint32_t, std::uint32_t>> source_target) {
  ResultsEvent r;
  std::uint32_t qpn = 0x10;
  for (const auto& [source, target] : source_target) {
    QpResult q;
    q.qpn = qpn++;
    q.source_crc32 = source;
    q.target_crc32 = target;
    r.per_qp.push_back(q);
  }
  return r;
}

TEST(PointToPointDataCheck, ComparesWhatLeftWithWhatArrivedPerQpAndDirection) {
  const ResultsEvent client = with_crcs({{0xaa, 0x11}, {0xbb, 0x22}});
  const ResultsEvent server = with_crcs({{0x11, 0xaa}, {0x23, 0xbc}});
  const DataCheck one_way = check_data(client, server, false);
  EXPECT_TRUE(one_way.checked);
  EXPECT_EQ(one_way.transfers, 2u);
  EXPECT_EQ(one_way.intact, 1u);
  ASSERT_EQ(one_way.problems.size(), 1u);
  EXPECT_EQ(one_way.problems[0],
            "QP 0x11 -> QP 0x11: the bytes sent have CRC-32 0x000000bb but 0x000000bc arrived");
  const DataCheck both = check_data(client, server, true);
  EXPECT_EQ(both.transfers, 4u);
  EXPECT_EQ(both.intact, 2u);  // 0x11 back to the client's target, 0x23 != 0x22
}

TEST(PointToPointDataCheck, MissingChecksumsMeanNotChecked) {
  ResultsEvent client = with_crcs({{0xaa, 0x11}});
  client.per_qp[0].source_crc32.reset();  // GPU memory
  const DataCheck check = check_data(client, with_crcs({{0x11, 0xaa}}), false);
  EXPECT_FALSE(check.checked);
  EXPECT_EQ(check.transfers, 0u);
}

}  // namespace
}  // namespace rocehil::harness
