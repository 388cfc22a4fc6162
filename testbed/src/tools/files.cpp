#include "tools/files.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <iterator>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {

void make_directory(const std::string& path, std::filesystem::perms mode) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (!ec) std::filesystem::permissions(path, mode, ec);
  if (ec)
    throw Error(ExitCode::infrastructure,
                fmt::format("cannot create {}: {}; check the file system's space and permissions",
                            path, ec.message()));
}

void write_file(const std::string& path, std::string_view text, std::filesystem::perms mode) {
  {
    std::ofstream out(path, std::ios::trunc | std::ios::binary);
    out << text;
    if (!out) throw system_error(fmt::format("cannot write {}", path), errno);
  }
  std::filesystem::permissions(path, mode);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw system_error(fmt::format("cannot read {}", path), errno);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_file_or_empty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace rocehil::testbed
