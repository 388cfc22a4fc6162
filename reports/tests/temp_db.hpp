#pragma once

// A history file in a directory of its own, removed with it.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace rocehil::reports::testing {

struct TempDb {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rocehil-history-" + std::to_string(getpid()));
  std::string path = (dir / "history.db").string();
  TempDb() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~TempDb() { std::filesystem::remove_all(dir); }
  TempDb(const TempDb&) = delete;
  TempDb& operator=(const TempDb&) = delete;
};

}  // namespace rocehil::reports::testing
