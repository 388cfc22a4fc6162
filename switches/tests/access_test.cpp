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

}  // namespace
}  // namespace rocehil::switches
