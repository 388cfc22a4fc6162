// The second layer of defence: even a hostile word that got past the inventory's validation must
// reach the remote command as data. sshd hands the remote command line to the user's shell as
// `$SHELL -c LINE`, so these tests run the exact line rocehil builds through a real /bin/sh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/remote/run_command.hpp"
#include "rocehil/remote/ssh_key_exchange.hpp"

namespace rocehil::remote {
namespace {

std::string marker(const std::string& tag) {
  return "/tmp/rocehil-quote-" + std::to_string(getpid()) + "-" + tag;
}

std::vector<std::string> hostile_words() {
  return {"h1;touch " + marker("semicolon"),
          "$(touch " + marker("dollar") + ")",
          "`touch " + marker("backtick") + "`",
          "a' ; touch " + marker("quote") + " ; '",
          "line1\ntouch " + marker("newline"),
          "\"double\" \\ back\\slash",
          "| touch " + marker("pipe"),
          "&& touch " + marker("and"),
          "> " + marker("redirect"),
          "*",
          "~",
          "--option",
          "",
          "$HOME ${IFS} !1"};
}

TEST(ShellQuote, HostileWordsReachTheRemoteCommandAsData) {
  std::vector<std::string> remote = {"printf", "%s\\0"};
  const auto words = hostile_words();
  remote.insert(remote.end(), words.begin(), words.end());
  const CommandResult r = run_command({"/bin/sh", "-c", remote_command_line(remote)}, {});
  ASSERT_TRUE(r.succeeded()) << r.reason();
  std::vector<std::string> got;
  std::size_t start = 0;
  for (std::size_t i = 0; i < r.out.size(); ++i)
    if (r.out[i] == '\0') {
      got.push_back(r.out.substr(start, i - start));
      start = i + 1;
    }
  EXPECT_EQ(got, words);
  for (const char* tag :
       {"semicolon", "dollar", "backtick", "quote", "newline", "pipe", "and", "redirect"})
    EXPECT_FALSE(std::filesystem::exists(marker(tag))) << tag;
}

inventory::Host host_at(std::string address) {
  inventory::Host h;
  h.name = "h1";
  h.address = std::move(address);
  h.ssh.user = "root";
  h.ssh.port = 2222;
  h.ssh.identity = "/keys/id";
  h.ssh.known_hosts = "/keys/known_hosts";
  h.ssh.jump = "bastion.example.com";
  h.ssh.options = {"IdentitiesOnly=yes"};
  h.ssh.connect_timeout_s = 7;
  return h;
}

TEST(HostSsh, CommandLineCarriesTheInventorySettings) {
  const AgentCommand c = host_command(host_at("10.0.0.1"), {"rocehil", "agent"});
  std::vector<std::string> want = {"ssh",
                                   "-T",
                                   "-o",
                                   "BatchMode=yes",
                                   "-o",
                                   "ConnectTimeout=7",
                                   "-o",
                                   "ServerAliveInterval=5",
                                   "-l",
                                   "root",
                                   "-p",
                                   "2222",
                                   "-i",
                                   "/keys/id",
                                   "-o",
                                   "UserKnownHostsFile=/keys/known_hosts",
                                   "-J",
                                   "bastion.example.com",
                                   "-o",
                                   "IdentitiesOnly=yes",
                                   "10.0.0.1",
                                   "--",
                                   "'rocehil' 'agent'"};
  // The key exchange order comes from this machine's ssh (ssh_key_exchange_test.cpp).
  if (!ssh_key_exchange_option().empty())
    want.insert(want.end() - 3, {"-o", ssh_key_exchange_option()});
  EXPECT_EQ(c.argv, want);
  EXPECT_EQ(c.name, "h1");
}

TEST(HostSsh, SharedConnectionsAndTheirExit) {
  const SshMultiplex mux{.control_dir = "/tmp/rocehil-ssh-x", .persist_s = 60};
  const AgentCommand c = host_command(host_at("10.0.0.1"), {"rocehil", "agent"}, &mux);
  const auto has = [&](const std::vector<std::string>& argv, const std::string& option) {
    return std::find(argv.begin(), argv.end(), option) != argv.end();
  };
  EXPECT_TRUE(has(c.argv, "ControlMaster=auto"));
  EXPECT_TRUE(has(c.argv, "ControlPath=/tmp/rocehil-ssh-x/%C"));
  EXPECT_TRUE(has(c.argv, "ControlPersist=60"));
  const auto exit = ssh_multiplex_exit(host_at("10.0.0.1"), mux);
  EXPECT_TRUE(has(exit, "ControlPath=/tmp/rocehil-ssh-x/%C"));
  EXPECT_EQ(std::vector<std::string>(exit.end() - 3, exit.end()),
            (std::vector<std::string>{"-O", "exit", "10.0.0.1"}));
}

TEST(HostSsh, ALocalHostRunsTheWordsAsTheyAreInItsNamespace) {
  inventory::Host h = host_at("10.0.0.1");
  h.launcher = inventory::Launcher::local;
  EXPECT_EQ(host_command(h, {"/opt/rocehil", "agent"}).argv,
            (std::vector<std::string>{"/opt/rocehil", "agent"}));
  h.netns = "tb-h1";
  const AgentCommand c = host_command(h, {"/opt/rocehil", "it's"});
  EXPECT_EQ(c.argv, (std::vector<std::string>{"ip", "netns", "exec", "tb-h1", "/opt/rocehil",
                                              "it's"}));  // no shell: no quoting
  EXPECT_EQ(c.name, "h1");
}

TEST(HostSsh, RefusesAnAddressThatIsNotOne) {
  for (const char* bad : {"-oProxyCommand=touch /tmp/x", "h1;id", "$(id)", "a b", ""})
    EXPECT_THROW(host_command(host_at(bad), {"true"}), Error) << bad;
}

TEST(RemoteRun, ReportsTimeoutExitAndReason) {
  RunOptions quick;
  quick.timeout = std::chrono::milliseconds(200);
  const CommandResult slow = run_command({"sleep", "5"}, quick);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_FALSE(slow.succeeded());
  const CommandResult failed =
      run_command({"/bin/sh", "-c", "echo first >&2; echo why >&2; exit 4"}, {});
  EXPECT_EQ(failed.exit_code, 4);
  EXPECT_EQ(failed.reason(), "why");
  const CommandResult missing = run_command({"no-such-command-rocehil"}, {});
  EXPECT_FALSE(missing.started);
  EXPECT_NE(missing.reason().find("not on PATH"), std::string::npos);
}

TEST(RemoteRun, SendsAFileToStdin) {
  RunOptions o;
  const std::string path = std::filesystem::temp_directory_path() / "rocehil-remote-run-in";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("hello over stdin\n", f);
    std::fclose(f);
  }
  o.stdin_file = path;
  const CommandResult r = run_command({"cat"}, o);
  EXPECT_EQ(r.out, "hello over stdin\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rocehil::remote
