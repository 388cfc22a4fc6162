#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rocehil/common/whole_file.hpp"

namespace rocehil::reports {

// "20261122T184501Z-smoke": when the run started (UTC) and the suite's name, with anything a
// file name should not hold replaced by '_'. Sorting run ids sorts runs by time.
std::string make_run_id(std::int64_t unix_s, std::string_view suite_name);

// "2026-11-22T18:45:01Z"
std::string iso_utc(std::int64_t unix_s);

// reports/<run-id>/: made when the run starts. Every file is written whole, to a temporary name
// then renamed over the old one, so a reader (or a run killed mid-write) never leaves half a
// run.json behind.
// `content` into `path` whole (common/whole_file.hpp): a reader (a browser, node_exporter's
// textfile collector) sees the old file or the new one, never half.
using rocehil::write_file_whole;

class RunDirectory {
 public:
  // Makes `reports_dir` (and parents) and a new directory for the run inside it; when that name
  // is taken (two runs in one second) a suffix "-2", "-3", ... is added to the run id. Throws
  // rocehil::Error naming the path.
  static RunDirectory create(const std::string& reports_dir, const std::string& run_id);

  const std::string& path() const { return path_; }
  const std::string& run_id() const { return run_id_; }
  std::string file(std::string_view name) const;  // path/name

  // Throws rocehil::Error naming the file and the reason.
  void write(std::string_view name, std::string_view content) const;

 private:
  RunDirectory(std::string path, std::string run_id)
      : path_(std::move(path)), run_id_(std::move(run_id)) {}
  std::string path_;
  std::string run_id_;
};

}  // namespace rocehil::reports
