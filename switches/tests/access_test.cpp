#include "rocehil/switches/access.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "rocehil/common/error.hpp"

namespace rocehil::switches {
namespace {

namespace fs = std::filesystem;

EnvLookup env_with(std::string name, std::string value) {
  return [=](const std::string& n) -> std::optional<std::string> {
    if (n == name) return value;
    return std::nullopt;
  };
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Credentials, CommunityFromAFileFirstLineOnly) {
  const fs::path file =
      fs::temp_directory_path() / ("rocehil-community-" + std::to_string(getpid()));
  std::ofstream(file) << "s3cret-c0mmunity\r\nignored second line\n";
  inventory::SnmpSettings s;
  s.community_file = file.string();
  EXPECT_EQ(read_credentials("l1", s).community, "s3cret-c0mmunity");
  fs::remove(file);
  const std::string e = error_of([&] { read_credentials("l1", s); });
  EXPECT_NE(e.find("switch 'l1': snmp community_file " + file.string()), std::string::npos) << e;
  EXPECT_NE(e.find("No such file"), std::string::npos) << e;
}

TEST(Credentials, V3KeysFromTheEnvironment) {
  inventory::SnmpSettings s;
  s.version = inventory::SnmpSettings::Version::v3;
  s.user = "rocehil";
  s.auth = "sha";
  s.auth_key_env = "AUTH";
  const auto c = read_credentials("s1", s, env_with("AUTH", "authpass123"));
  EXPECT_EQ(c.auth_key, "authpass123");
  EXPECT_EQ(c.priv_key, "");
  const std::string unset = error_of([&] { read_credentials("s1", s, env_with("OTHER", "x")); });
  EXPECT_NE(unset.find("environment variable AUTH is not set"), std::string::npos) << unset;
  const std::string short_key =
      error_of([&] { read_credentials("s1", s, env_with("AUTH", "short")); });
  EXPECT_NE(short_key.find("shorter than 8"), std::string::npos) << short_key;
}

TEST(Credentials, TheWriteCommunityIsItsOwnSecretReadOnlyForASet) {
  inventory::SnmpSettings s;
  s.community_env = "READ";
  const auto env = env_with("READ", "read-community");
  // No write credential: polling still works, a SET says what to add.
  EXPECT_EQ(read_credentials("l1", s, env).community, "read-community");
  const std::string none = error_of([&] { read_write_credentials("l1", s, env); });
  EXPECT_NE(none.find("switch 'l1': its snmp settings give no write credential; add "
                      "write_community_file: PATH"),
            std::string::npos)
      << none;
  s.write_community_env = "WRITE";
  const std::string unset = error_of([&] { read_write_credentials("l1", s, env); });
  EXPECT_NE(unset.find("switch 'l1': snmp write_community_env: the environment variable WRITE is "
                       "not set"),
            std::string::npos)
      << unset;
  EXPECT_EQ(read_write_credentials("l1", s, env_with("WRITE", "write-community")).community,
            "write-community");
  const fs::path file = fs::temp_directory_path() / ("rocehil-write-" + std::to_string(getpid()));
  s.write_community_env.clear();
  s.write_community_file = file.string();
  const std::string missing = error_of([&] { read_write_credentials("l1", s, env); });
  EXPECT_NE(
      missing.find("switch 'l1': snmp write_community_file " + file.string() + ": cannot read it"),
      std::string::npos)
      << missing;
  std::ofstream(file) << "from-the-file\n";
  EXPECT_EQ(read_write_credentials("l1", s, env).community, "from-the-file");
  fs::remove(file);
}

TEST(Credentials, V3WritesWithItsOwnUserOnlyWhereWritable) {
  inventory::SnmpSettings s;
  s.version = inventory::SnmpSettings::Version::v3;
  s.user = "rocehil";
  s.auth = "sha";
  s.auth_key_env = "AUTH";
  const auto env = env_with("AUTH", "authpass123");
  const std::string refused = error_of([&] { read_write_credentials("s1", s, env); });
  EXPECT_NE(refused.find("add writable: true"), std::string::npos) << refused;
  s.writable = true;
  EXPECT_EQ(read_write_credentials("s1", s, env).auth_key, "authpass123");
}

}  // namespace
}  // namespace rocehil::switches
