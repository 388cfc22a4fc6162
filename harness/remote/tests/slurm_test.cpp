// The Slurm launcher's pure parts: hostlist expansion checked against Slurm's own (the expected
// lists are what `scontrol show hostnames EXPR` printed, Slurm 22.05.8, Debian 12), the srun and
// scontrol command lines, and the allocation taken from the environment.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

#include <string>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/remote/slurm.hpp"

namespace rocehil::remote {
namespace {

using Names = std::vector<std::string>;

TEST(Hostlist, ExpandsAsScontrolShowHostnamesDoes) {
  EXPECT_EQ(expand_hostlist("n[01-03,7],gpu-a[1-2]-r[08-9],x"),
            (Names{"n01", "n02", "n03", "n7", "gpu-a1-r08", "gpu-a1-r09", "gpu-a2-r08",
                   "gpu-a2-r09", "x"}));
  EXPECT_EQ(expand_hostlist("h[1-4],cap"), (Names{"h1", "h2", "h3", "h4", "cap"}));
  EXPECT_EQ(expand_hostlist("node[009-011]"), (Names{"node009", "node010", "node011"}));
  EXPECT_EQ(expand_hostlist("a[1],b"), (Names{"a1", "b"}));
  EXPECT_EQ(expand_hostlist("rack[1-2]-n[1-2]"),
            (Names{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}));
  EXPECT_EQ(expand_hostlist("login1"), (Names{"login1"}));
}

TEST(Hostlist, RefusesWhatSlurmWouldNotWriteNamingTheCharacter) {
  // scontrol refuses n[3-1] and n[a] too; for n[1- and x,,y it guesses (n], x y), and a run on
  // guessed nodes is not one to trust, so these are refused as well.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"n[3-1]", "range '3-1' runs backwards at character 3"},
      {"n[a]", "'a' is not a number or a range at character 3"},
      {"n[1-", "'[' without ']' at character 2"},
      {"n]1", "']' without '['"},
      {"x,,y", "an empty name at character 3"},
      {"", "an empty name at character 1"},
      {"n[1-200000]", "more than 100000 names"},
      {"n[1];id", "'n1;id' is not a host name"},
  };
  for (const auto& [expression, why] : bad) {
    try {
      expand_hostlist(expression);
      ADD_FAILURE() << expression;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("hostlist '" + expression + "'"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(Srun, StartsTheWordsAsOneTaskOnTheNodeWithoutAShell) {
  const auto argv = srun_argv("42", "h2", {"/usr/bin/rocehil", "agent", "it's"});
  EXPECT_EQ(argv.front(), "srun");
  const Names tail(argv.end() - 4, argv.end());
  EXPECT_EQ(tail, (Names{"--", "/usr/bin/rocehil", "agent", "it's"}));
  for (const char* option :
       {"--jobid=42", "--nodelist=h2", "--nodes=1", "--ntasks=1", "--overlap", "--unbuffered"})
    EXPECT_NE(std::find(argv.begin(), argv.end(), option), argv.end()) << option;
  EXPECT_THROW(srun_argv("42", "h1,h2", {"true"}), Error);  // one node, never a list
  EXPECT_THROW(srun_argv("42", "-h", {"true"}), Error);
}

TEST(Srun, OneStepStartsATaskOnEveryNodeWithStdinForEach) {
  const auto argv = srun_step_on_nodes_argv("42", {"h1", "h3", "cap"},
                                            {"/usr/bin/rocehil", "agent", "--connect", "x"});
  EXPECT_EQ(argv.front(), "srun");
  const Names tail(argv.end() - 5, argv.end());
  EXPECT_EQ(tail, (Names{"--", "/usr/bin/rocehil", "agent", "--connect", "x"}));
  for (const char* option : {"--jobid=42", "--nodelist=h1,h3,cap", "--nodes=3",
                             "--ntasks-per-node=1", "--overlap", "--input=all"})
    EXPECT_NE(std::find(argv.begin(), argv.end(), option), argv.end()) << option;
  EXPECT_THROW(srun_step_on_nodes_argv("42", {"h1", "-x"}, {"true"}), Error);
  EXPECT_THROW(srun_step_on_nodes_argv("42", {"h[1-2]"}, {"true"}), Error);
}

TEST(Scontrol, DrainsOneNodeWithTheReasonAsOneWord) {
  EXPECT_EQ(scontrol_drain_argv("h3", "rocehil: nightly: allreduce/qps=8: busbw_gbps > 40"),
            (Names{"scontrol", "update", "NodeName=h3", "State=DRAIN",
                   "Reason=rocehil: nightly: allreduce/qps=8: busbw_gbps > 40"}));
  EXPECT_EQ(scontrol_drain_argv("h3", std::string(300, 'x')).back().size(), 7u + 200u);
  EXPECT_EQ(scontrol_drain_argv("h3", "two\nlines").back(), "Reason=two lines");
  EXPECT_THROW(scontrol_drain_argv("h[1-2]", "x"), Error);
}

class Allocation : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"SLURM_JOB_ID", "SLURM_JOB_NODELIST"})
      if (const char* v = getenv(name)) saved_.emplace_back(name, v);
    unsetenv("SLURM_JOB_ID");
    unsetenv("SLURM_JOB_NODELIST");
  }
  void TearDown() override {
    unsetenv("SLURM_JOB_ID");
    unsetenv("SLURM_JOB_NODELIST");
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_F(Allocation, OutsideOneTheErrorSaysHowToGetOne) {
  EXPECT_FALSE(slurm_allocation());
  try {
    require_slurm_allocation("--hosts slurm");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--hosts slurm needs a Slurm allocation"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("salloc -N 4 rocehil run"), std::string::npos);
  }
  inventory::Host h;
  h.name = "h1";
  h.address = "10.0.0.1";
  h.launcher = inventory::Launcher::slurm;
  EXPECT_THROW(host_command(h, {"rocehil", "agent"}), Error);
  EXPECT_THROW(selection_with_slurm_nodes("slurm,cap"), Error);
  EXPECT_EQ(selection_with_slurm_nodes("h1,cap"), "h1,cap");  // no allocation needed
}

TEST_F(Allocation, InsideOneTheHostRunsAsAStepOnItsNode) {
  setenv("SLURM_JOB_ID", "1234", 1);
  setenv("SLURM_JOB_NODELIST", "h[1-4]", 1);
  const auto a = slurm_allocation();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->job_id, "1234");
  EXPECT_EQ(expand_hostlist(a->nodelist), (Names{"h1", "h2", "h3", "h4"}));
  inventory::Host h;
  h.name = "h3";
  h.address = "10.0.0.3";
  h.launcher = inventory::Launcher::slurm;
  const AgentCommand c = host_command(h, {"/usr/bin/rocehil", "agent"});
  EXPECT_EQ(c.name, "h3");
  EXPECT_EQ(c.argv, srun_argv("1234", "h3", {"/usr/bin/rocehil", "agent"}));
  EXPECT_EQ(selection_with_slurm_nodes("slurm"), "h1,h2,h3,h4");
  EXPECT_EQ(selection_with_slurm_nodes("slurm,cap"), "h1,h2,h3,h4,cap");
  EXPECT_EQ(selection_with_slurm_nodes("label:gpu&rack:r1"), "label:gpu&rack:r1");
  EXPECT_EQ(selection_with_slurm_nodes("slurmnode1"), "slurmnode1");
  setenv("SLURM_JOB_ID", "12;id", 1);
  EXPECT_THROW(require_slurm_allocation("x"), Error);
}

}  // namespace
}  // namespace rocehil::remote
