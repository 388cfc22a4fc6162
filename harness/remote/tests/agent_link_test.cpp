// The ssh command line an agent is started with, and the data check of point-to-point tests.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace rocehil::remote {
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

}  // namespace
}  // namespace rocehil::remote
