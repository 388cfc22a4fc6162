// perftest's own words for a failed run. Its messages come from fprintf(stderr, ...) in
// perftest_parameters.c, perftest_resources.c, perftest_communication.c and the six *_bw.c /
// *_lat.c mains; a failure prints its cause first and then each caller's wrapper on the way out
// ("Couldn't connect to 198.18.0.1:18515", then "Unable to open file descriptor for socket
// connection", then "Unable to init the socket connection"). The cause is the telling part, so
// lines are ranked: causes, then other error lines, then the known wrappers.

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/perftest/report.hpp"
#include "text.hpp"

namespace rocehil::perftest {

namespace {

bool contains(std::string_view line, std::string_view what) {
  return line.find(what) != std::string_view::npos;
}

// Not errors: warnings, hints printed after an error, and notices of a setting perftest
// adjusted by itself before running on.
constexpr std::array<std::string_view, 12> not_errors{
    "WARNING",
    "Warning",
    "warning",
    "Conflicting CPU frequency",
    "If device exists, check if driver is up",
    "Please check command line and run again",
    "Please Try to use a different IP version",
    "Changing to",
    "Changing msg size",
    "Will run with the port active mtu",
    "Disabling dynamic polling",
    "Requested mtu is higher than active mtu",
};

// Rank 0: what actually went wrong.
constexpr std::array<std::string_view, 32> causes{
    "No IB devices found",
    "Did not detect devices",
    "No such device",
    "Couldn't connect to",
    "Couldn't listen to port",
    "Unable to connect (retries",
    "Name or service not known",
    "Temporary failure in name resolution",
    "Problem in resolving basic address and port",
    "Failed to bind socket",
    "Completion with error",
    "Failed status",
    "Bad wc status",
    "Poll send CQ error",
    "ERRNO:",
    "Local lid 0x0 detected",
    "Couldn't allocate MR",
    "Couldn't allocate PD",
    "Couldn't create CQ",
    "Failed to create QP",
    "Unable to create QP",
    "Failed to modify QP",
    "Couldn't create rdma",
    "Max msg size",
    "Max message size",
    "Message Size should be",
    "Please choose mtu",
    "Invalid MTU",
    "only possible in",
    "rdma_resolve_addr failed",
    "rdma_resolve_route failed",
    "Found Incompatibility issue with GID types",
};

// Rank 2: a caller reporting that something below it failed.
constexpr std::array<std::string_view, 22> wrappers{
    "Unable to find the Infiniband/RoCE device",
    "Unable to open file descriptor for socket connection",
    "Unable to init the socket connection",
    "Unable to set up socket connection",
    "Couldn't create IB resources",
    "Unable to create the resources needed by comm struct",
    "Unable to create RDMA_CM resources",
    "Unable to create rdma resources",
    "Unable to perform rdma_client function",
    "Unable to perform rdma_server function",
    "Failed to exchange data between server and clients",
    "Unable to Connect the HCA's through the link",
    "Unable to set up my IB connection parameters",
    "Error occurred while running",
    "Failed to complete run_iter_bw function successfully",
    "Test exited with Error",
    "Parser function exited with Error",
    "Failed to close connection between server and client",
    "Failed to destroy resources",
    "Trying to close this side resources",
    "Invalid Command line. Please check command rerun",
    "Couldn't send reports",
};

// Rank 1: any other line in perftest's vocabulary of failure.
constexpr std::array<std::string_view, 20> error_words{
    "Couldn't",        "Could not",    "Unable to",     "Failed",         "failed",
    "Error",           "error",        "Invalid",       "invalid",        "not supported",
    "isn't supported", "not possible", "not available", "only available", "can't",
    "Can't",           "cannot",       "not found",     "aborting",       "exiting",
};

template <std::size_t N>
bool any_of(std::string_view line, const std::array<std::string_view, N>& list) {
  return std::any_of(list.begin(), list.end(),
                     [&](std::string_view w) { return contains(line, w); });
}

int rank(std::string_view message) {
  if (contains(message, "IB device") && contains(message, "not found")) return 0;
  if (any_of(message, causes)) return 0;
  if (any_of(message, wrappers)) return 2;
  if (any_of(message, error_words)) return 1;
  return -1;  // not an error
}

// One printed line can hold two messages: "Unable to open file descriptor for socket
// connection" has no newline in perftest before 2023, so the next wrapper lands on its line.
std::vector<std::string_view> split_glued(std::string_view line) {
  std::vector<std::size_t> cuts;
  for (const std::string_view w : wrappers)
    for (std::size_t pos = line.find(w, 1); pos != std::string_view::npos;
         pos = line.find(w, pos + 1))
      cuts.push_back(pos);
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (const std::size_t cut : cuts) {
    if (cut <= start) continue;
    parts.push_back(trim(line.substr(start, cut - start)));
    start = cut;
  }
  parts.push_back(trim(line.substr(start)));
  return parts;
}

struct Found {
  int rank;
  std::string_view text;
};

}  // namespace

std::string find_error(std::string_view output) {
  std::vector<std::string_view> lines;
  while (!output.empty()) {
    const std::size_t nl = output.find('\n');
    lines.push_back(output.substr(0, nl));
    if (nl == std::string_view::npos) break;
    output.remove_prefix(nl + 1);
  }

  std::vector<Found> found;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = trim(lines[i]);
    if (line.empty() || any_of(line, not_errors)) continue;
    // " Max msg size in UD is MTU 4096" followed by " Changing to this MTU" is a notice: perftest
    // lowered the size and ran on.
    if (i + 1 < lines.size() && trim(lines[i + 1]).starts_with("Changing")) continue;
    for (const std::string_view part : split_glued(line)) {
      const int r = part.empty() ? -1 : rank(part);
      if (r < 0) continue;
      const bool seen =
          std::any_of(found.begin(), found.end(), [&](const Found& f) { return f.text == part; });
      if (!seen) found.push_back({r, part});
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Found& a, const Found& b) { return a.rank < b.rank; });

  std::string out;
  for (const Found& f : found) {
    if (!out.empty()) out += "; ";
    out += f.text;
  }
  return out;
}

}  // namespace rocehil::perftest
