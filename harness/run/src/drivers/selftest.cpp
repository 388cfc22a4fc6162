#include "rocehil/run/selftest.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "basics/json_member.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::run {

namespace {

using nlohmann::json;

bool plain_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '@';
  });
}

// The words with `separator` between them.
std::string join(const std::vector<std::string>& words, std::string_view separator) {
  return fmt::format("{}", fmt::join(words, separator));
}

std::string replace_all(std::string text, std::string_view token, const std::string& value) {
  auto at = text.find(token);
  if (at == std::string::npos)
    throw input_error(fmt::format("the acceptance suite has no {} to fill in", token));
  for (; at != std::string::npos; at = text.find(token, at + value.size()))
    text.replace(at, token.size(), value);
  return text;
}

const json* find_case(const json& run, std::string_view test) {
  if (!run.contains("cases") || !run["cases"].is_array()) return nullptr;
  for (const auto& c : run["cases"])
    if (c.value("test", "") == test) return &c;
  return nullptr;
}

const json* last_attempt(const json& c) {
  if (!c.contains("attempts") || !c["attempts"].is_array() || c["attempts"].empty()) return nullptr;
  return &c["attempts"].back();
}

// The metric as measured, or nullopt (absent or null).
std::optional<double> metric(const json& attempt, std::string_view name) {
  if (!attempt.contains("metrics")) return std::nullopt;
  const json& m = attempt["metrics"];
  const auto it = m.find(std::string(name));
  if (it == m.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string number(double v) {
  return fmt::format("{:.4g}", v);
}

// The thresholds of the attempt whose verdict is not pass/warn, as "text (measured X; detail)".
std::string unmet_thresholds(const json& attempt, std::string_view verdict) {
  std::vector<std::string> lines;
  if (!attempt.contains("grade") || !attempt["grade"].is_object()) return {};
  for (const auto& t : attempt["grade"].value("thresholds", json::array())) {
    if (t.value("verdict", "") != verdict) continue;
    std::string line = t.value("threshold", "?");
    if (t.contains("measured") && t["measured"].is_number())
      line += fmt::format(" (measured {})", number(t["measured"].get<double>()));
    if (const std::string d = t.value("detail", ""); !d.empty()) line += ": " + d;
    lines.push_back(line);
  }
  return join(lines, "; ");
}

const json* threshold(const json& attempt, std::string_view text) {
  if (!attempt.contains("grade") || !attempt["grade"].is_object() ||
      !attempt["grade"].contains("thresholds") || !attempt["grade"]["thresholds"].is_array())
    return nullptr;
  for (const auto& t : attempt["grade"]["thresholds"])
    if (t.value("threshold", "") == text) return &t;
  return nullptr;
}

SelftestCheck make(std::string name, std::string what, std::string test = {}) {
  SelftestCheck c;
  c.name = std::move(name);
  c.what = std::move(what);
  c.test = std::move(test);
  return c;
}

// A check that is the outcome of one test's case; `numbers` says what a pass measured.
SelftestCheck from_case(const json& run, SelftestCheck check,
                        const std::function<std::string(const json&)>& numbers) {
  const json* c = find_case(run, check.test);
  if (c == nullptr) {
    check.verdict = CheckVerdict::error;
    check.detail = fmt::format("the run has no case of test '{}'", check.test);
    return check;
  }
  const std::string outcome = c->value("outcome", "");
  if (outcome == "skipped") {
    check.verdict = CheckVerdict::skip;
    check.detail = c->value("skip_reason", std::string("skipped by the run"));
    return check;
  }
  const json* attempt = last_attempt(*c);
  if (outcome == "not_run" || attempt == nullptr) {
    check.verdict = CheckVerdict::skip;
    check.detail = "not run (the preflight failed or the run was interrupted)";
    return check;
  }
  if (attempt->contains("error") && attempt->at("error").is_object()) {
    const json& e = attempt->at("error");
    check.verdict = CheckVerdict::error;
    check.detail = fmt::format("host {}, phase {}: {}", e.value("host", "?"), e.value("phase", "?"),
                               e.value("message", "?"));
    return check;
  }
  if (outcome == "pass" || outcome == "warn") {
    check.verdict = CheckVerdict::pass;
    check.detail = numbers(*attempt);
  } else if (outcome == "fail") {
    check.verdict = CheckVerdict::fail;
    check.detail = unmet_thresholds(*attempt, "fail");
  } else {
    check.verdict = CheckVerdict::error;
    check.detail = unmet_thresholds(*attempt, "error");
  }
  return check;
}

std::string bandwidth_numbers(const json& attempt) {
  const auto gbps = metric(attempt, "busbw_gbps");
  const auto data_errors = metric(attempt, "data_errors");
  return fmt::format("{} Gbit/s, {} data errors (every byte compared with what was sent)",
                     gbps ? number(*gbps) : "?", data_errors ? number(*data_errors) : "?");
}

// Which registration served each side's GPU memory, as its agent reported it: "through dma-buf
// on both hosts", or each side's where they differ.
std::string gpu_registrations(const json& attempt) {
  const json& traffic = json_member(json_member(attempt, "raw"), "traffic");
  const auto of = [&](const char* side) {
    const json& results = json_member(json_member(traffic, side), "results");
    return results.is_object() ? results.value("gpu_registration", std::string("not reported"))
                               : std::string("not reported");
  };
  const std::string client = of("client"), server = of("server");
  if (client == server && client == "not reported") return "registration not reported";
  if (client == server) return fmt::format("through {} on both hosts", client);
  return fmt::format("client through {}, server through {}", client, server);
}

std::string gpu_numbers(const json& attempt) {
  return bandwidth_numbers(attempt) + ", " + gpu_registrations(attempt);
}

std::string soft_hosts(const SelftestSetup& s) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < s.hosts.size() && i < s.providers.size(); ++i)
    if (s.providers[i] == "soft") names.push_back(s.hosts[i]);
  return join(names, " and ");
}

bool any_soft(const SelftestSetup& s) {
  return !soft_hosts(s).empty();
}

SelftestCheck preflight_check(const json& run) {
  SelftestCheck check = make("preflight", "both hosts answer over ssh and match the inventory");
  const json* preflight = nullptr;
  if (run.contains("inventory") && run["inventory"].is_object() &&
      run["inventory"].contains("preflight") && run["inventory"]["preflight"].is_object())
    preflight = &run["inventory"]["preflight"];
  if (preflight == nullptr) {
    check.verdict = CheckVerdict::error;
    check.detail = "the run ended before its preflight";
    return check;
  }
  std::vector<std::string> ok, bad;
  for (const auto& h : preflight->value("hosts", json::array())) {
    const std::string verdict = h.value("verdict", "");
    const std::string name = h.value("name", "?");
    if (verdict == "ok" || verdict == "soft only") {
      ok.push_back(fmt::format("{} {} ({} ms)", name, verdict, number(h.value("ssh_ms", 0.0))));
    } else {
      std::string why = verdict;
      if (h.contains("unreachable")) why += ": " + h.value("unreachable", "");
      for (const auto& i : h.value("checks", json::array()))
        if (i.value("status", "") == "fail")
          why += fmt::format("; {}: {}", i.value("name", "?"), i.value("detail", ""));
      bad.push_back(fmt::format("{} {}", name, why));
    }
  }
  // A host that did not answer or is not what the inventory says stops the run with exit status
  // 3, not a fabric failure: the check says the same.
  check.verdict = bad.empty() && !ok.empty() ? CheckVerdict::pass : CheckVerdict::error;
  check.detail = bad.empty() ? join(ok, ", ") : join(bad, "; ");
  return check;
}

SelftestCheck ud_check(const json& run) {
  return from_case(
      run,
      make("ud_send", "UD SEND of one packet per message, GRH stripped, data checked", "ud_send"),
      bandwidth_numbers);
}

// The UDP source ports the ranks' QPs were pinned to, as they reported them.
std::set<std::uint64_t> pinned_ports(const json& attempt) {
  std::set<std::uint64_t> ports;
  const json& traffic = json_member(json_member(attempt, "raw"), "traffic");
  for (const auto& c : json_member(traffic, "cases"))
    for (const auto& rank : json_member(c, "per_rank"))
      for (const auto& qp : json_member(rank, "per_qp"))
        if (const auto port = qp.value("udp_sport", std::uint64_t{0}); port != 0)
          ports.insert(port);
  return ports;
}

// What the mirrors saw of the QPs: every flow's source port must be one the QPs were pinned to,
// and at least `qps` of them must show (both ranks send, so each side's QPs are flows).
SelftestCheck qp_flow_evidence(SelftestCheck check, const json& attempt, double qps) {
  const std::set<std::uint64_t> pinned = pinned_ports(attempt);
  std::set<std::uint64_t> seen, stray;
  std::vector<std::string> per_point;
  for (const auto& point : json_member(json_member(attempt, "raw"), "captures")) {
    const json& analysis = json_member(point, "analysis");
    std::size_t flows = 0;
    for (const auto& f : json_member(analysis, "flows")) {
      if (f.value("packets", 0.0) <= 0) continue;
      ++flows;
      const auto port = f.value("udp_sport", std::uint64_t{0});
      (pinned.count(port) != 0 ? seen : stray).insert(port);
    }
    per_point.push_back(fmt::format("{} {}", point.value("point", "?"), flows));
  }
  const std::string where = fmt::format("flows per mirror: {}", join(per_point, ", "));
  if (pinned.empty()) {
    check.verdict = CheckVerdict::error;
    // A NIC that cannot pin them chose its own (the agent only pins where it can): nothing ties
    // the mirrors' flows to the QPs, so what the check asks cannot be told.
    check.detail =
        "the ranks reported no pinned source ports, so the mirrors' flows cannot be matched to "
        "the QPs: the NIC chose the ports (pinning them needs mlx5 direct verbs; rxe derives each "
        "from the QP number); " +
        where;
  } else if (!stray.empty()) {
    std::vector<std::string> ports;
    for (const auto p : stray) ports.push_back(std::to_string(p));
    check.verdict = CheckVerdict::fail;
    check.detail = fmt::format(
        "the mirrors saw flows from source ports the QPs were not pinned to ({}): the NIC did not "
        "keep the pinned ports; {}",
        join(ports, ", "), where);
  } else if (static_cast<double>(seen.size()) < qps) {
    check.verdict = CheckVerdict::fail;
    check.detail = fmt::format(
        "{} QPs ran but the mirrors saw {} of their {} pinned source ports: the flows did not "
        "all cross the mirrored links; {}",
        number(qps), seen.size(), pinned.size(), where);
  } else {
    check.detail +=
        fmt::format("; the mirrors saw {} of the {} pinned source ports and no other; {}",
                    seen.size(), pinned.size(), where);
  }
  return check;
}

SelftestCheck qp_scaling_check(const json& run, const SelftestSetup& setup) {
  SelftestCheck check = from_case(
      run,
      make("qp_scaling",
           "8 QPs per connection, each with its own pinned UDP source port, spread over ECMP "
           "paths",
           "qp_scaling"),
      [](const json& attempt) { return bandwidth_numbers(attempt); });
  if (check.verdict != CheckVerdict::pass) return check;
  if (setup.captures.empty()) {
    check.detail +=
        "; the source ports were not observed: give --captures with the mirror ports of the "
        "pair's paths";
    return check;
  }
  const json* c = find_case(run, "qp_scaling");
  const double qps = c->contains("parameters") ? c->at("parameters").value("qps", 8.0) : 8.0;
  return qp_flow_evidence(std::move(check), *last_attempt(*c), qps);
}

SelftestCheck cnp_check(const json& run) {
  SelftestCheck check =
      make("ecn_cnp", "ECN marked under load and the receiving NICs sent CNPs", "ecn_cnp");
  const json* c = find_case(run, check.test);
  const json* attempt = c != nullptr ? last_attempt(*c) : nullptr;
  const json* t = attempt != nullptr ? threshold(*attempt, "nic_cnps_sent > 0") : nullptr;
  if (t == nullptr || c->value("outcome", "") == "skipped") {
    // No grade: the case did not run or failed before its numbers; say why as any case would.
    return from_case(run, check, [](const json&) { return std::string(); });
  }
  const std::string verdict = t->value("verdict", "");
  if (verdict == "pass") {
    check.verdict = CheckVerdict::pass;
    check.detail =
        fmt::format("the NICs sent {} CNPs (np_cnp_sent)", number(t->value("measured", 0.0)));
  } else if (verdict == "fail") {
    check.verdict = CheckVerdict::fail;
    check.detail =
        "the NICs sent no CNP: the switches did not mark ECN under this load (their ECN/WRED "
        "thresholds) or the NICs' notification point is off (/sys/class/net/DEV/ecn/roce_np/"
        "enable/P)";
  } else {
    check.verdict = CheckVerdict::error;
    check.detail = t->value("detail", "nic_cnps_sent was not measured");
  }
  return check;
}

SelftestCheck gpu_check(const json& run) {
  SelftestCheck check =
      from_case(run,
                make("gpu_memory", "RDMA WRITE between GPU memories: dma-buf, else peer memory",
                     "gpu_memory"),
                gpu_numbers);
  // Neither dma-buf nor peer memory could register the GPU's memory: the inventory pairs a GPU
  // with the NIC, so the check stays undecided, as the run's error says; the words name the cause
  // (the host's kernel, driver or module), not the fabric.
  if (check.verdict == CheckVerdict::error &&
      check.detail.find("cannot register") != std::string::npos &&
      check.detail.find("GPU") != std::string::npos)
    check.detail = "no way to register GPU memory on this host: " + check.detail;
  return check;
}

// Both calibration tests (bandwidth, then latency) as one check: the worse of their verdicts,
// and each one's numbers or reason.
SelftestCheck calibration_check(const json& run) {
  SelftestCheck check =
      make("calibration", "rocehil's bandwidth and latency agree with perftest on the same pair",
           "calibration_bw");
  const auto ratio_numbers = [](std::string_view unit) {
    return [unit](const json& attempt) {
      const auto ours = metric(attempt, "calibration_rocehil");
      const auto theirs = metric(attempt, "calibration_perftest");
      const auto ratio = metric(attempt, "calibration_ratio");
      return fmt::format("rocehil {} {}, perftest {} (ratio {})", ours ? number(*ours) : "?", unit,
                         theirs ? number(*theirs) : "?", ratio ? number(*ratio) : "?");
    };
  };
  const SelftestCheck bw = from_case(run, make("", "", "calibration_bw"), ratio_numbers("Gbit/s"));
  const SelftestCheck lat =
      from_case(run, make("", "", "calibration_lat"), ratio_numbers("us p50"));
  const auto rank = [](CheckVerdict v) {
    return v == CheckVerdict::fail    ? 3
           : v == CheckVerdict::error ? 2
           : v == CheckVerdict::pass  ? 1
                                      : 0;
  };
  check.verdict = rank(bw.verdict) >= rank(lat.verdict) ? bw.verdict : lat.verdict;
  check.detail = bw.verdict == CheckVerdict::skip && lat.verdict == CheckVerdict::skip &&
                         bw.detail == lat.detail
                     ? bw.detail
                     : fmt::format("bw: {}; lat: {}", bw.detail, lat.detail);
  return check;
}

}  // namespace

bool pair_has_gpus(const SelftestSetup& setup) {
  return !setup.gpus.empty() &&
         std::all_of(setup.gpus.begin(), setup.gpus.end(), [](bool g) { return g; });
}

std::vector<PairLimit> tests_the_pair_cannot_take(const SelftestSetup& setup) {
  std::vector<PairLimit> out;
  if (any_soft(setup)) {
    const std::string soft = soft_hosts(setup);
    out.push_back({"ud_send", fmt::format("hardware check: {} use the soft provider, which "
                                          "implements RC only",
                                          soft)});
    out.push_back({"ecn_cnp", fmt::format("hardware check: {} use the soft provider, which has no "
                                          "NIC counter hw_counters/np_cnp_sent to count the CNPs "
                                          "its NIC sent",
                                          soft)});
  }
  if (!pair_has_gpus(setup))
    out.push_back(
        {"gpu_memory", "the inventory does not pair a GPU with both hosts' NICs (a NIC's 'gpu:')"});
  else if (any_soft(setup))
    out.push_back({"gpu_memory", fmt::format("hardware check: {} use the soft provider, which has "
                                             "no GPU memory",
                                             soft_hosts(setup))});
  if (any_soft(setup)) {
    // perftest needs an RDMA device: on soft hosts it could only fail to start.
    const std::string reason = fmt::format(
        "hardware check: perftest needs an RDMA device, and {} have none", soft_hosts(setup));
    out.push_back({"calibration_bw", reason});
    out.push_back({"calibration_lat", reason});
  }
  return out;
}

std::string_view to_string(CheckVerdict verdict) {
  switch (verdict) {
    case CheckVerdict::pass: return "pass";
    case CheckVerdict::fail: return "fail";
    case CheckVerdict::error: return "error";
    case CheckVerdict::skip: return "skip";
  }
  return "?";
}

int SelftestReport::exit_code() const {
  switch (verdict) {
    case CheckVerdict::pass:
    case CheckVerdict::skip: return 0;
    case CheckVerdict::fail: return 1;
    case CheckVerdict::error: return 3;
  }
  return 3;
}

std::string instantiate_acceptance_suite(std::string_view text,
                                         const std::vector<std::string>& hosts,
                                         const std::vector<std::string>& captures) {
  for (const auto& name : hosts)
    if (!plain_name(name))
      throw input_error(
          fmt::format("host name '{}' is not letters, digits, '.', '_', '-', '@'", name));
  for (const auto& name : captures)
    if (!plain_name(name))
      throw input_error(
          fmt::format("capture point '{}' is not letters, digits, '.', '_', '-', '@'", name));
  std::string suite = replace_all(std::string(text), "$HOSTS", join(hosts, ","));
  // The list stays valid YAML with nothing in it, so the file validates as it is.
  return replace_all(std::move(suite), "[]  # $CAPTURES",
                     "[" + join(captures, ", ") + "]  # --captures");
}

SelftestReport evaluate_selftest(const json& run, const SelftestSetup& setup) {
  SelftestReport report;
  auto& checks = report.checks;
  checks.push_back(preflight_check(run));
  checks.push_back(from_case(run, make("rc_write", "RC RDMA WRITE, data checked", "rc_write"),
                             bandwidth_numbers));
  checks.push_back(
      from_case(run, make("rc_read", "RC RDMA READ, data checked", "rc_read"), bandwidth_numbers));
  checks.push_back(
      from_case(run, make("rc_send", "RC SEND into posted receives, data checked", "rc_send"),
                bandwidth_numbers));
  checks.push_back(ud_check(run));
  checks.push_back(from_case(run,
                             make("latency", "RC ping-pong latency of 8-byte messages", "latency"),
                             [](const json& attempt) {
                               const auto p50 = metric(attempt, "lat_p50_us");
                               const auto p99 = metric(attempt, "lat_p99_us");
                               return fmt::format("p50 {} us, p99 {} us", p50 ? number(*p50) : "?",
                                                  p99 ? number(*p99) : "?");
                             }));
  checks.push_back(qp_scaling_check(run, setup));
  checks.push_back(cnp_check(run));
  checks.push_back(gpu_check(run));
  checks.push_back(calibration_check(run));

  const auto any = [&](CheckVerdict v) {
    return std::any_of(checks.begin(), checks.end(),
                       [&](const SelftestCheck& c) { return c.verdict == v; });
  };
  report.verdict = any(CheckVerdict::fail)    ? CheckVerdict::fail
                   : any(CheckVerdict::error) ? CheckVerdict::error
                                              : CheckVerdict::pass;
  // The checklist never reads better than the run's own files (run.json, junit.xml, the
  // history): where the run exited worse, that is a check of its own, said.
  const json& code = json_member(run, "exit_code");
  const CheckVerdict of_run = !code.is_number_integer() ? report.verdict
                              : code.get<int>() == 1    ? CheckVerdict::fail
                              : code.get<int>() == 0    ? CheckVerdict::pass
                                                        : CheckVerdict::error;
  const auto worse = [](CheckVerdict a, CheckVerdict b) {
    const auto rank = [](CheckVerdict v) {
      return v == CheckVerdict::fail ? 2 : v == CheckVerdict::error ? 1 : 0;
    };
    return rank(a) > rank(b);
  };
  if (worse(of_run, report.verdict)) {
    SelftestCheck c =
        make("run", "the acceptance suite's run, as run.json and junit.xml record it");
    c.verdict = of_run;
    c.detail = fmt::format("the run exited {} ({}): see run.json", code.get<int>(),
                           json_member(run, "summary").value("text", std::string("no summary")));
    checks.push_back(std::move(c));
    report.verdict = of_run;
  }
  return report;
}

json selftest_json(const SelftestReport& report, const SelftestSetup& setup, const json& run) {
  json checks = json::array();
  for (const auto& c : report.checks)
    checks.push_back({{"name", c.name},
                      {"what", c.what},
                      {"verdict", std::string(to_string(c.verdict))},
                      {"detail", c.detail},
                      {"test", c.test.empty() ? json(nullptr) : json(c.test)}});
  json hosts = json::array();
  for (std::size_t i = 0; i < setup.hosts.size(); ++i)
    hosts.push_back({{"name", setup.hosts[i]},
                     {"provider", i < setup.providers.size() ? setup.providers[i] : ""},
                     {"gpu", i < setup.gpus.size() && setup.gpus[i]}});
  return {{"schema_version", 1},
          {"verdict", std::string(to_string(report.verdict))},
          {"hosts", hosts},
          {"captures", setup.captures},
          {"checks", checks},
          {"skipped",
           std::count_if(report.checks.begin(), report.checks.end(),
                         [](const SelftestCheck& c) { return c.verdict == CheckVerdict::skip; })},
          {"run", run}};
}

}  // namespace rocehil::run
