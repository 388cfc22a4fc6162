#pragma once

// What the loader fuzz targets (inventory, suites) hold every result to, shared by both.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "rocehil/inventory/load.hpp"

namespace rocehil::fuzz {

// Stops the run with what went wrong; libFuzzer keeps the input as a crash.
[[noreturn]] inline void fail(const char* target, const char* what, std::string_view detail) {
  std::fprintf(stderr, "%s: %s\n%.*s\n", target, what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// A diagnostic is one printable ASCII line of at most `max_length` characters.
inline void check_diagnostic(const char* target, const inventory::Diagnostic& d,
                             std::size_t max_length) {
  const std::string line = inventory::to_string(d);
  if (line.size() > max_length) fail(target, "diagnostic too long", line);
  for (const char c : line)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
      fail(target, "diagnostic not printable", line);
}

}  // namespace rocehil::fuzz
