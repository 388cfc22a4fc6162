#pragma once

// The pcapng files of a run's captures (the suite's capture.keep, run --keep-captures). While
// captures run, each capture point writes the attempt's frames on its own host, as a ring of two
// files of keep_mb/2 (so at most keep_mb, the newest frames). Once the attempt is graded its
// files are brought into the run directory, captures/<case>/, when the run keeps them (always,
// or failed: an attempt that did not pass), and are deleted on the capture host either way.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/reports/run_record.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run {

struct CaptureKeeping {
  std::string mode = "never";  // never | failed | always
  std::uint32_t mb_per_capture = 64;
  std::uint64_t total_limit_bytes = 0;
  std::string run_id;
  std::string run_dir;
  std::uint64_t kept_bytes = 0;  // kept by the run so far
  bool writes() const { return mode != "never"; }
};

// `mode` over the suite's keep when not empty (--keep-captures).
CaptureKeeping capture_keeping(const suites::CaptureDefaults& suite, const std::string& mode,
                               const std::string& run_id, const std::string& run_dir);

// Where a capture point writes an attempt on its host:
// /var/tmp/rocehil-<run-id>-c<case>-a<attempt>-<point>.pcapng, every part reduced to
// [A-Za-z0-9._=-] (the run id carries the suite's name, the point the inventory's).
std::string capture_write_path(const CaptureKeeping& keeping, std::size_t case_index,
                               std::size_t attempt_index, std::string_view point);

// The directory, relative to the run directory, that a case's kept files go to:
// captures/<case id with '/' as '_'>.
std::string kept_capture_dir(std::string_view case_id);

// Whether an attempt's captures are kept: always, or failed and the attempt's own outcome is
// not a pass (fail, warn, error, an unexpected pass).
bool keeps_attempt(const CaptureKeeping& keeping, const reports::Attempt& attempt,
                   bool expect_fail);

// For each capture point of the attempt that wrote files (raw.captures[].written_on_host): brings
// them to kept_capture_dir(case)/a<attempt>-<point>[-<part>].pcapng when keeps_attempt, within the
// run's total, and records them in attempt.captures_kept (a failure to, with its reason); then
// deletes them on the capture host. Never throws for a host's failure.
void settle_captures(CaptureKeeping& keeping, const inventory::Inventory& inventory,
                     const remote::SshMultiplex* multiplex, const reports::CaseRecord& c,
                     std::size_t attempt_index, reports::Attempt& attempt,
                     std::chrono::seconds timeout);

}  // namespace rocehil::run
