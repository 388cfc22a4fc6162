#include "rocehil/preflight/deploy.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rocehil/common/error.hpp"

namespace rocehil::preflight {
namespace {

namespace fs = std::filesystem;

// Real .deb files, made by dpkg-deb from a control file, in a folder removed afterwards.
class Debs : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rocehil-deploy-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string deb(const std::string& name, const std::string& version) {
    const fs::path root = fs::path(dir_) / (name + "-" + version);
    fs::create_directories(root / "DEBIAN");
    std::ofstream(root / "DEBIAN/control")
        << "Package: " << name << "\nVersion: " << version
        << "\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: test\n";
    const std::string out = dir_ + "/" + name + "_" + version + "_all.deb";
    const remote::CommandResult r =
        remote::run_command({"dpkg-deb", "--root-owner-group", "--build", root.string(), out}, {});
    EXPECT_TRUE(r.succeeded()) << r.reason();
    return out;
  }
  std::string refusal(const std::vector<std::string>& files) {
    try {
      read_deb_packages(files, "0.1.0");
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      return e.what();
    }
    return "(accepted)";
  }
  std::string dir_;
};

TEST_F(Debs, ReadsNameAndVersionOfEachPackage) {
  const std::string main = deb("rocehil", "0.1.0");
  const std::string dpdk = deb("rocehil-dpdk", "0.1.0");
  const auto packages = read_deb_packages({main, dpdk}, "0.1.0");
  ASSERT_EQ(packages.size(), 2u);
  EXPECT_EQ(packages[0].path, main);
  EXPECT_EQ(packages[0].name, "rocehil");
  EXPECT_EQ(packages[0].version, "0.1.0");
  EXPECT_EQ(packages[1].name, "rocehil-dpdk");
}

TEST_F(Debs, RefusesWhatWouldLeaveAgentsUnlikeTheController) {
  const std::string old = deb("rocehil", "0.0.9");
  std::string what = refusal({old});
  EXPECT_NE(what.find(old), std::string::npos) << what;
  EXPECT_NE(what.find("rocehil 0.0.9"), std::string::npos) << what;
  EXPECT_NE(what.find("controller is rocehil 0.1.0"), std::string::npos) << what;

  what = refusal({deb("rocehil-dpdk", "0.1.0")});
  EXPECT_NE(what.find("none of"), std::string::npos) << what;

  what = refusal({deb("perftest", "0.1.0")});
  EXPECT_NE(what.find("package 'perftest'"), std::string::npos) << what;

  const std::string main = deb("rocehil", "0.1.0");
  what = refusal({main, main});
  EXPECT_NE(what.find("already given"), std::string::npos) << what;

  const std::string text = dir_ + "/notes.deb";
  std::ofstream(text) << "not a package\n";
  what = refusal({text});
  EXPECT_NE(what.find("not a Debian package"), std::string::npos) << what;

  what = refusal({});
  EXPECT_NE(what.find("--package"), std::string::npos) << what;
  EXPECT_NE(what.find("--deploy=binary"), std::string::npos) << what;
}

TEST(DeployMode, PackageAndBinaryOnly) {
  EXPECT_EQ(parse_deploy_mode("package"), DeployMode::package);
  EXPECT_EQ(parse_deploy_mode("binary"), DeployMode::binary);
  EXPECT_THROW(parse_deploy_mode("rsync"), Error);
}

const std::vector<DebPackage> both = {
    {.path = "a.deb", .name = "rocehil", .version = "0.1.0"},
    {.path = "b.deb", .name = "rocehil-dpdk", .version = "0.1.0"}};

TEST(NeedsDeploy, TheAgentAndEveryPackageAtTheControllersVersion) {
  HostFacts f;
  f.agent_version = "rocehil 0.1.0";
  f.packages = {{"rocehil", "0.1.0"}, {"rocehil-dpdk", "0.1.0"}};
  EXPECT_FALSE(needs_deploy(f, DeployMode::package, "rocehil 0.1.0", both));
  EXPECT_FALSE(needs_deploy(f, DeployMode::none, "rocehil 0.2.0", both));
  f.packages.erase("rocehil-dpdk");
  EXPECT_TRUE(needs_deploy(f, DeployMode::package, "rocehil 0.1.0", both));
  // A binary deploy looks at the agent only.
  EXPECT_FALSE(needs_deploy(f, DeployMode::binary, "rocehil 0.1.0", {}));
  f.packages["rocehil-dpdk"] = "0.1.0";
  f.agent_version = "rocehil 0.0.9";  // the agent path is another copy than the package's
  EXPECT_TRUE(needs_deploy(f, DeployMode::package, "rocehil 0.1.0", both));
  EXPECT_TRUE(needs_deploy(f, DeployMode::binary, "rocehil 0.1.0", {}));
}

inventory::Host host(const std::string& agent, const std::string& user = "") {
  inventory::Host h;
  h.name = "h1";
  h.agent = agent;
  h.ssh.user = user;
  return h;
}

remote::CommandResult ran(std::string out) {
  remote::CommandResult r;
  r.started = true;
  r.exit_code = 0;
  r.seconds = 2.5;
  r.out = std::move(out);
  return r;
}

// The lines are the install script's (deploy.cpp); the apt line is apt-get's summary as Debian
// 12's apt 2.6 prints it.
TEST(PackageInstallItem, SaysWhatWasThereBeforeAndWhatAptDid) {
  const CheckItem item = package_install_item(
      host("/usr/bin/rocehil"),
      ran("before rocehil 0.0.9 ii \napt 1 upgraded, 1 newly installed, 0 to remove and 0 not "
          "upgraded.\nafter rocehil 0.1.0 ii \nafter rocehil-dpdk 0.1.0 ii \n"),
      both);
  EXPECT_EQ(item.name, "deploy");
  EXPECT_EQ(item.status, CheckStatus::info);
  EXPECT_EQ(item.detail,
            "installed rocehil 0.1.0, rocehil-dpdk 0.1.0 with apt-get in 2.5 s (before: rocehil "
            "0.0.9; apt: 1 upgraded, 1 newly installed, 0 to remove and 0 not upgraded.)");
}

// Hosts sharing one dpkg database (the testbed's): the first installs, the others' apt-get finds
// the packages there, and they say so rather than claim the install.
TEST(PackageInstallItem, AnInstallByAnotherHostOnTheSameDpkgIsSaidSo) {
  const CheckItem item = package_install_item(
      host("/usr/bin/rocehil"),
      ran("apt 0 upgraded, 0 newly installed, 0 to remove and 122 not upgraded.\n"
          "after rocehil 0.1.0 ii \nafter rocehil-dpdk 0.1.0 ii \n"),
      both);
  EXPECT_EQ(item.status, CheckStatus::info);
  EXPECT_EQ(item.detail,
            "rocehil 0.1.0, rocehil-dpdk 0.1.0 there when apt-get ran, in 2.5 s: another host "
            "sharing this dpkg database installed it (before: none; apt: 0 upgraded, 0 newly "
            "installed, 0 to remove and 122 not upgraded.)");
  // A downgrade (bisecting) changed something.
  const CheckItem down = package_install_item(
      host("/usr/bin/rocehil"),
      ran("before rocehil 0.2.0 ii \napt 0 upgraded, 0 newly installed, 1 downgraded, 0 to "
          "remove and 0 not upgraded.\nafter rocehil 0.1.0 ii \nafter rocehil-dpdk 0.1.0 ii \n"),
      both);
  EXPECT_TRUE(down.detail.starts_with("installed rocehil 0.1.0")) << down.detail;
}

TEST(PackageInstallItem, AnAgentElsewhereThanThePackagesIsAWarning) {
  const CheckItem item = package_install_item(
      host("/opt/rocehil/bin/rocehil"),
      ran("apt 0 upgraded, 1 newly installed, 0 to remove and 0 not upgraded.\n"
          "after rocehil 0.1.0 ii \nafter rocehil-dpdk 0.1.0 ii \n"),
      both);
  EXPECT_EQ(item.status, CheckStatus::warn);
  EXPECT_NE(item.detail.find("before: none"), std::string::npos) << item.detail;
  EXPECT_NE(item.detail.find("set 'agent: /usr/bin/rocehil'"), std::string::npos) << item.detail;
}

TEST(PackageInstallItem, FailuresSayWhatToDo) {
  auto detail = [](const std::string& out, const std::string& user = "") {
    const CheckItem item = package_install_item(host("rocehil", user), ran(out), both);
    EXPECT_EQ(item.status, CheckStatus::fail) << item.detail;
    return item.detail;
  };
  EXPECT_NE(detail("failed no-apt\n").find("--deploy=binary"), std::string::npos);
  EXPECT_NE(detail("failed not-root\n", "ops").find("'ops' is not root"), std::string::npos);
  EXPECT_EQ(detail("failed unpacking the packages: tar: short read\n"),
            "unpacking the packages: tar: short read");
  EXPECT_EQ(detail("before rocehil 0.0.9 ii \nerror E: Unable to locate package libpcap0.8\n"
                   "exit 100\nafter rocehil 0.0.9 ii \n"),
            "apt-get install rocehil 0.1.0, rocehil-dpdk 0.1.0 failed (exit 100): E: Unable to "
            "locate package libpcap0.8");
  // apt-get said nothing wrong, yet dpkg does not list the version: not called installed.
  EXPECT_EQ(detail("after rocehil 0.1.0 ii \nafter rocehil-dpdk 0.1.0 rc \n"),
            "apt-get succeeded but dpkg lists rocehil-dpdk as not installed");
  remote::CommandResult lost;
  lost.started = true;
  lost.exit_code = 255;
  lost.err = "ssh: connect to host h1 port 22: Connection refused\n";
  const CheckItem item = package_install_item(host("rocehil"), lost, both);
  EXPECT_EQ(item.status, CheckStatus::fail);
  EXPECT_NE(item.detail.find("Connection refused"), std::string::npos) << item.detail;
}

}  // namespace
}  // namespace rocehil::preflight
