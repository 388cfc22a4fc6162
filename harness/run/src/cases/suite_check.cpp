#include "rocehil/run/suite_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <tuple>

#include "cases/case_pacing.hpp"
#include "cases/trust_check.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/selection.hpp"
#include "rocehil/run/fabric_actions.hpp"
#include "rocehil/suites/measurable.hpp"

namespace rocehil::run {

namespace {

std::string where(const suites::Suite& suite, const suites::SuiteTest& test) {
  return fmt::format("{}:{}:{}: test '{}'", suite.file, test.where.line, test.where.column,
                     test.name);
}

// A problem of the test's host selection is pointed at its `hosts:`, where it is fixed.
std::string where_hosts(const suites::Suite& suite, const suites::SuiteTest& test) {
  const suites::SourceLocation at =
      test.settings.hosts_where.line > 0 ? test.settings.hosts_where : test.where;
  return fmt::format("{}:{}:{}: test '{}'", suite.file, at.line, at.column, test.name);
}

std::string join_priorities(const std::vector<int>& priorities) {
  std::string text;
  for (const int p : priorities) {
    if (!text.empty()) text += ',';
    text += std::to_string(p);
  }
  return text;
}

// A threshold on a metric the test's provider can never give (nic_* on a soft host, per-QP
// counters on a verbs NIC) is refused before the run, at the threshold's line.
void check_providers_measure(const suites::Suite& suite, const suites::SuiteTest& test,
                             const std::vector<const inventory::Host*>& hosts,
                             std::vector<std::string>& problems) {
  std::set<std::string> providers;
  if (!test.settings.provider.empty())
    providers.insert(test.settings.provider);
  else
    for (const auto* h : hosts) providers.insert(std::string(inventory::to_string(h->provider)));
  for (const auto& t : test.thresholds) {
    // The first metric it names (the left side's, then its limit's) that a provider never gives.
    std::optional<std::string> why;
    std::string provider;
    for (const auto& p : providers) {
      for (const std::string& name : suites::metrics_named(t))
        if ((why = suites::never_measured_on(p, name))) break;
      if (why) {
        provider = p;
        break;
      }
    }
    if (!why) continue;
    std::vector<std::string> on;
    for (const auto* h : hosts)
      if (test.settings.provider.empty() && inventory::to_string(h->provider) == provider)
        on.push_back(h->name);
    problems.push_back(fmt::format("{}:{}:{}: test '{}': threshold '{}': {}{}", suite.file, t.line,
                                   t.column, test.name, t.text, *why,
                                   on.empty()
                                       ? fmt::format(" (the test's provider: {})", provider)
                                       : fmt::format(" (hosts {} use it)", fmt::join(on, ", "))));
  }
}

void check_traffic(const suites::Suite& suite, const suites::SuiteTest& test,
                   const inventory::Inventory& inventory, std::vector<std::string>& problems) {
  const std::string at = where(suite, test);
  try {
    const auto hosts = traffic_hosts(inventory, test);
    std::size_t nics = 0;
    for (const auto* h : hosts) nics += h->nics.size();
    const bool p2p = suites::is_point_to_point(test);
    if (p2p && hosts.size() < 2)
      problems.push_back(
          fmt::format("{}: hosts '{}' select {} host(s) with NICs; {} runs between the first two",
                      where_hosts(suite, test), test.settings.hosts, hosts.size(), test.workload));
    if (!p2p && nics < 2)
      problems.push_back(
          fmt::format("{}: hosts '{}' give {} NIC(s); a collective needs at least 2 ranks",
                      where_hosts(suite, test), test.settings.hosts, nics));
    // A point-to-point test's sender is its first host (the client).
    if (p2p && !hosts.empty())
      case_traffic::check_rate(suite.file, test, {hosts.front()}, problems);
    // GPU memory is the GPU the inventory pairs with each side's NIC (the first two hosts).
    if (p2p && test.settings.memory == "gpu")
      for (std::size_t i = 0; i < hosts.size() && i < 2; ++i)
        if (hosts[i]->nics.front().gpu < 0)
          problems.push_back(fmt::format(
              "{}: memory gpu, but {} pairs no GPU with {}'s NIC {} (add 'gpu: N' to it, or "
              "leave the test out on hosts without GPUs)",
              at, inventory.file, hosts[i]->name,
              hosts[i]->nics.front().device.empty() ? hosts[i]->nics.front().netdev
                                                    : hosts[i]->nics.front().device));
    const auto used =
        p2p && hosts.size() > 2 ? std::vector(hosts.begin(), hosts.begin() + 2) : hosts;
    check_providers_measure(suite, test, used, problems);
    case_traffic::check_trust(suite, test, used, problems);  // DSCP classes on a PCP-trusting NIC
  } catch (const Error& e) {
    problems.push_back(fmt::format("{}: {}", where_hosts(suite, test), e.what()));
  }
}

// Each of `events:` at its own line: what it names must be in the inventory (the test's
// `inject:` was checked above, as it always was).
void check_events(const suites::Suite& suite, const suites::SuiteTest& test,
                  const inventory::Inventory& inventory, std::vector<std::string>& problems) {
  for (const suites::Event& e : test.events) {
    if (e.from_inject) continue;
    if (e.action == suites::EventAction::pfc) {
      try {
        injection_command(e.pfc, inventory, suite.file, "rocehil", nullptr);
      } catch (const Error& err) {
        problems.push_back(err.what());
      }
      continue;
    }
    if (const std::string why = event_problem(e, inventory); !why.empty())
      problems.push_back(fmt::format("{}:{}:{}: test '{}': event {}: {}", suite.file, e.where.line,
                                     e.where.column, test.name, suites::to_string(e.action), why));
  }
}

}  // namespace

std::vector<const inventory::Host*> traffic_hosts(const inventory::Inventory& inventory,
                                                  const suites::SuiteTest& test) {
  std::vector<const inventory::Host*> out;
  for (const auto* h : inventory::select_hosts(inventory, test.settings.hosts, "hosts"))
    if (!h->nics.empty()) out.push_back(h);
  return out;
}

InjectionCommand injection_command(const suites::Injection& in,
                                   const inventory::Inventory& inventory,
                                   const std::string& suite_file, const std::string& self,
                                   const remote::SshMultiplex* multiplex) {
  const std::string at =
      fmt::format("{}:{}:{}: inject", suite_file, in.where.line, in.where.column);
  const inventory::Link* link = nullptr;
  for (const auto& l : inventory.links)
    if (l.name == in.link) link = &l;
  if (link == nullptr)
    throw input_error(
        fmt::format("{}: link '{}' is not in {}'s links", at, in.link, inventory.file));
  const inventory::LinkEnd* end = link->a.node == in.from   ? &link->a
                                  : link->b.node == in.from ? &link->b
                                                            : nullptr;
  if (end == nullptr)
    throw input_error(fmt::format("{}: '{}' is not an end of link '{}' ({} and {})", at, in.from,
                                  in.link, link->a.node, link->b.node));
  std::vector<std::string> words = {"inject", in.kind, "--iface", end->port};
  if (in.kind == "pfc") words.insert(words.end(), {"--priority", join_priorities(in.priorities)});
  words.insert(
      words.end(),
      {"--quanta", std::to_string(in.quanta), "--pps", fmt::format("{}", in.pps), "--duration",
       fmt::format("{}", in.duration_s), "--xon-at-end", "--no-progress", "--json"});
  InjectionCommand out{.command = {}, .from = in.from, .iface = end->port};
  if (const auto* host = inventory.find_host(in.from)) {
    words.insert(words.begin(), host->agent);
    out.command = remote::host_command(*host, words, multiplex);
    return out;
  }
  const auto* sw = inventory.find_switch(in.from);
  if (sw == nullptr || sw->netns.empty())
    throw input_error(fmt::format(
        "{}: '{}' is a switch rocehil cannot run on; send from a host wired to the link "
        "instead (a switch only in a testbed's network namespace)",
        at, in.from));
  words.insert(words.begin(), {"ip", "netns", "exec", sw->netns, self});
  out.command = {.name = in.from, .argv = words};
  return out;
}

std::vector<inventory::Diagnostic> suite_problems(const suites::SuiteLoadResult& loaded,
                                                  const inventory::Inventory* inventory) {
  std::vector<inventory::Diagnostic> out = loaded.diagnostics;
  const suites::Suite* suite = loaded.suite     ? &*loaded.suite
                               : loaded.partial ? &*loaded.partial
                                                : nullptr;
  if (inventory == nullptr || suite == nullptr) return out;
  for (const std::string& problem : check_suite_against_inventory(*suite, *inventory)) {
    // "FILE:LINE:COL: message", as the loader's own diagnostics read.
    inventory::Diagnostic d;
    d.file = suite->file;
    d.message = problem;
    if (problem.starts_with(suite->file + ":")) {
      int line = 0, column = 0, used = 0;
      const std::string rest = problem.substr(suite->file.size() + 1);
      if (std::sscanf(rest.c_str(), "%d:%d: %n", &line, &column, &used) == 2 && used > 0) {
        d.line = line;
        d.column = column;
        d.message = rest.substr(static_cast<std::size_t>(used));
      }
    }
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const inventory::Diagnostic& a, const inventory::Diagnostic& b) {
                     return std::tie(a.line, a.column) < std::tie(b.line, b.column);
                   });
  return out;
}

std::vector<std::string> check_suite_against_inventory(const suites::Suite& suite,
                                                       const inventory::Inventory& inventory) {
  std::vector<std::string> problems;
  for (const auto& test : suite.tests) {
    // A test with parts is its parts' traffic, each checked as a test of its own (with the
    // thresholds that name it).
    if (test.parts.empty()) check_traffic(suite, test, inventory, problems);
    for (const suites::Part& part : test.parts) {
      suites::SuiteTest one = suites::test_of_part(test, part);
      for (const suites::Threshold& t : test.thresholds)
        if (t.metric.part == part.name) one.thresholds.push_back(t);
      check_traffic(suite, one, inventory, problems);
    }
    for (std::size_t i = 0; i < test.settings.captures.size(); ++i) {
      const std::string& name = test.settings.captures[i];
      // At the name in `captures:`, where it is fixed.
      const std::string at_name =
          i < test.settings.captures_where.size() && test.settings.captures_where[i].line > 0
              ? fmt::format("{}:{}:{}: test '{}'", suite.file, test.settings.captures_where[i].line,
                            test.settings.captures_where[i].column, test.name)
              : where(suite, test);
      const auto* point = inventory.find_capture(name);
      if (point == nullptr) {
        std::string known;
        for (const auto& c : inventory.captures) {
          if (!known.empty()) known += ", ";
          known += c.name;
        }
        problems.push_back(fmt::format("{}: capture point '{}' is not in {} (it has: {})", at_name,
                                       name, inventory.file, known.empty() ? "none" : known));
      } else if (inventory.find_host(point->host) == nullptr) {
        problems.push_back(
            fmt::format("{}: capture point '{}' is on host '{}', which {} does "
                        "not list under hosts (rocehil reaches it over ssh)",
                        at_name, name, point->host, inventory.file));
      }
    }
    if (test.inject) try {
        injection_command(*test.inject, inventory, suite.file, "rocehil", nullptr);
      } catch (const Error& e) {
        problems.push_back(e.what());
      }
    check_events(suite, test, inventory, problems);
  }
  return problems;
}

}  // namespace rocehil::run
