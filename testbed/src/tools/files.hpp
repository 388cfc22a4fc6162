#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace rocehil::testbed {

// The small files the testbed writes (configs, keys) and reads (keys, pid files, /proc).

// Writes `text` to `path` (replacing it) with `mode`; throws rocehil::Error when it cannot.
void write_file(const std::string& path, std::string_view text, std::filesystem::perms mode);

// Creates `path` (and what is above it) with `mode`; throws rocehil::Error when it cannot.
void make_directory(const std::string& path, std::filesystem::perms mode);

// The whole file; throws rocehil::Error when it cannot be read.
std::string read_file(const std::string& path);

// The whole file, or empty when it is not there: a pid file already removed, a process gone.
std::string read_file_or_empty(const std::string& path);

}  // namespace rocehil::testbed
