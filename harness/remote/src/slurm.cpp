#include "rocehil/remote/slurm.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/names.hpp"

namespace rocehil::remote {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

[[noreturn]] void bad_hostlist(std::string_view expression, std::size_t at, std::string_view why) {
  throw input_error(
      fmt::format("hostlist '{}': {} at character {}; write it as Slurm does, e.g. "
                  "gpu[01-04,7],login1",
                  expression, why, at + 1));
}

// One bracketed list, "01-03,7": its numbers as text, zero padding kept.
std::vector<std::string> expand_ranges(std::string_view expression, std::size_t at,
                                       std::string_view list) {
  constexpr unsigned long max_range = 100000;  // a typo like [1-1000000000] is not a cluster
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string_view item = list.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t dash = item.find('-');
    const std::string_view lo = item.substr(0, dash);
    const std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    const auto digits = [](std::string_view s) {
      return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == s.npos;
    };
    if (!digits(lo) || !digits(hi))
      bad_hostlist(expression, at + start, fmt::format("'{}' is not a number or a range", item));
    const unsigned long a = std::stoul(std::string(lo)), b = std::stoul(std::string(hi));
    if (b < a) bad_hostlist(expression, at + start, fmt::format("range '{}' runs backwards", item));
    if (b - a >= max_range)
      bad_hostlist(expression, at + start,
                   fmt::format("range '{}' has more than {} names", item, max_range));
    // Slurm pads every number of a range to the width of its lower bound as written.
    const std::size_t width = lo.size();
    for (unsigned long n = a; n <= b; ++n) out.push_back(fmt::format("{:0{}}", n, width));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// One name of the list ("rack[1-2]-n[01-02]"): the product of its bracketed lists.
void expand_name(std::string_view expression, std::size_t at, std::string_view name,
                 std::vector<std::string>& out) {
  std::vector<std::string> prefixes = {""};
  std::size_t i = 0;
  while (i < name.size()) {
    const std::size_t open = name.find('[', i);
    const std::string_view text = name.substr(i, open == name.npos ? name.npos : open - i);
    if (text.find(']') != text.npos) bad_hostlist(expression, at + i, "']' without '['");
    for (auto& p : prefixes) p += text;
    if (open == name.npos) break;
    const std::size_t close = name.find(']', open);
    if (close == name.npos) bad_hostlist(expression, at + open, "'[' without ']'");
    const auto numbers =
        expand_ranges(expression, at + open + 1, name.substr(open + 1, close - open - 1));
    std::vector<std::string> next;
    next.reserve(prefixes.size() * numbers.size());
    for (const auto& p : prefixes)
      for (const auto& n : numbers) next.push_back(p + n);
    prefixes = std::move(next);
    i = close + 1;
  }
  for (auto& p : prefixes) {
    if (!inventory::is_valid_name(p))
      bad_hostlist(expression, at, fmt::format("'{}' is not a host name", p));
    out.push_back(std::move(p));
  }
}

}  // namespace

std::optional<SlurmAllocation> slurm_allocation() {
  SlurmAllocation a{env("SLURM_JOB_ID"), env("SLURM_JOB_NODELIST")};
  if (a.job_id.empty()) return std::nullopt;
  return a;
}

SlurmAllocation require_slurm_allocation(std::string_view what) {
  if (auto a = slurm_allocation()) {
    if (a->job_id.find_first_not_of("0123456789_") != std::string::npos)
      throw input_error(
          fmt::format("{}: SLURM_JOB_ID '{}' is not a Slurm job id", what, a->job_id));
    return *a;
  }
  throw input_error(fmt::format(
      "{} needs a Slurm allocation, and SLURM_JOB_ID is not set: run rocehil inside one, e.g. "
      "'salloc -N 4 rocehil run SUITE --launcher slurm --hosts slurm', or from an sbatch script "
      "(docs/slurm.md)",
      what));
}

std::vector<std::string> expand_hostlist(std::string_view expression) {
  std::vector<std::string> out;
  std::size_t start = 0, depth = 0;
  for (std::size_t i = 0; i <= expression.size(); ++i) {
    const char c = i < expression.size() ? expression[i] : ',';
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c != ',' || (depth > 0 && i < expression.size())) continue;  // the end ends a name
    if (i == start) bad_hostlist(expression, i, "an empty name");
    expand_name(expression, start, expression.substr(start, i - start), out);
    start = i + 1;
  }
  return out;
}

std::string selection_with_slurm_nodes(std::string_view selection) {
  std::string out;
  bool replaced = false;
  std::size_t start = 0;
  while (start <= selection.size()) {
    const std::size_t comma = selection.find(',', start);
    const std::string_view term = selection.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (!out.empty()) out += ',';
    if (term == "slurm") {
      const SlurmAllocation a = require_slurm_allocation("--hosts slurm");
      if (a.nodelist.empty())
        throw input_error(
            fmt::format("--hosts slurm: SLURM_JOB_NODELIST is not set in job {}", a.job_id));
      std::string nodes;
      for (const auto& n : expand_hostlist(a.nodelist)) nodes += (nodes.empty() ? "" : ",") + n;
      out += nodes;
      replaced = true;
    } else {
      out += term;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return replaced ? out : std::string(selection);
}

std::vector<std::string> srun_argv(const std::string& job_id, const std::string& node,
                                   const std::vector<std::string>& remote_argv) {
  if (!inventory::is_valid_name(node))
    throw input_error(fmt::format("Slurm node '{}': not a host name", node));
  std::vector<std::string> argv = {"srun", "--jobid=" + job_id, "--nodelist=" + node, "--nodes=1",
                                   "--ntasks=1",
                                   // Several agents share a node (a rank and a capture), and
                                   // every step shares the allocation's CPUs.
                                   "--overlap",
                                   // The agent's replies reach rocehil as it writes them.
                                   "--unbuffered", "--quiet", "--job-name=rocehil-agent", "--"};
  argv.insert(argv.end(), remote_argv.begin(), remote_argv.end());
  return argv;
}

std::vector<std::string> srun_step_on_nodes_argv(const std::string& job_id,
                                                 const std::vector<std::string>& nodes,
                                                 const std::vector<std::string>& remote_argv) {
  std::string list;
  for (const std::string& node : nodes) {
    if (!inventory::is_valid_name(node))
      throw input_error(fmt::format("Slurm node '{}': not a host name", node));
    if (!list.empty()) list += ',';
    list += node;
  }
  std::vector<std::string> argv = {"srun", "--jobid=" + job_id, "--nodelist=" + list,
                                   fmt::format("--nodes={}", nodes.size()), "--ntasks-per-node=1",
                                   // Captures, extra ranks and the run's other steps share the
                                   // allocation with this one.
                                   "--overlap", "--input=all", "--quiet",
                                   "--job-name=rocehil-agents", "--"};
  argv.insert(argv.end(), remote_argv.begin(), remote_argv.end());
  return argv;
}

std::vector<std::string> scontrol_drain_argv(const std::string& node, std::string_view reason) {
  if (!inventory::is_valid_name(node))
    throw input_error(fmt::format("Slurm node '{}': not a host name", node));
  std::string r(reason.substr(0, 200));
  for (char& c : r)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return {"scontrol", "update", "NodeName=" + node, "State=DRAIN", "Reason=" + r};
}

}  // namespace rocehil::remote
