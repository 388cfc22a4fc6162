#include "switches/snmp_secrets.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <random>

#include "rocehil/common/error.hpp"
#include "tools/files.hpp"

namespace rocehil::testbed {

namespace {

namespace fs = std::filesystem;

// Letters and digits only: the value goes into snmpd.conf and onto command lines unquoted.
// 24 of them: net-snmp wants v3 keys of 8 characters at least.
std::string random_word() {
  static constexpr std::string_view alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device random;
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string out(24, ' ');
  for (char& c : out) c = alphabet[pick(random)];
  return out;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  return text;
}

// The file's value (at least `min_size` characters), written first (without a newline, as `$(cat
// FILE)` and the inventory's
// *_file settings read it) when it is missing or empty.
std::string ensure(const std::string& path, const std::string& fresh, std::size_t min_size = 1) {
  std::string value = trimmed(read_file_or_empty(path));
  if (value.empty()) {
    value = fresh;
    write_file(path, value, fs::perms::owner_read | fs::perms::owner_write);
  }
  if (value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                              "._-+=@:,") != std::string::npos ||
      value.size() < min_size)
    throw input_error(fmt::format(
        "{}: use {} or more letters, digits and . _ - + = @ : , (it goes into snmpd.conf "
        "unquoted); or remove the file and 'up' writes a new one",
        path, min_size));
  return value;
}

}  // namespace

SnmpSecrets ensure_snmp_secrets(const TestbedPaths& paths) {
  return {ensure(paths.snmp_community(), random_word()), ensure(paths.snmp_v3_user(), "rocehil"),
          ensure(paths.snmp_v3_auth_key(), random_word(), 8),
          ensure(paths.snmp_v3_priv_key(), random_word(), 8),
          ensure(paths.snmp_write_community(), random_word())};
}

std::string read_snmp_community(const TestbedPaths& paths) {
  return trimmed(read_file_or_empty(paths.snmp_community()));
}

}  // namespace rocehil::testbed
