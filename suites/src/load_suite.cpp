// Reading a suite file: every problem reported with its place, all at once, as the inventory's
// loader does (the two share inventory's located YAML reader).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "iperf3_test.hpp"
#include "load_events.hpp"
#include "per_qp_traffic_class.hpp"
#include "qp_limits.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/names.hpp"
#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/suites/measurable.hpp"
#include "rocehil/suites/metrics.hpp"
#include "rocehil/suites/pacing.hpp"
#include "rocehil/suites/suite.hpp"
#include "rocehil/traffic/collective.hpp"
#include "unused_keys.hpp"
#include "volume.hpp"

namespace rocehil::suites {

namespace {

using inventory::LoadContext;
using inventory::MapReader;
using inventory::shown;

// Settings a test and `defaults` may both give.
#define ROCEHIL_SETTING_KEYS                                                              \
  "hosts", "provider", "size", "qps", "strategy", "placement", "traffic_class", "opcode", \
      "transport", "memory", "duration_s", "iterations", "warmup", "repeats", "pipeline", \
      "captures", "engine", "rounds", "mtu", "tx_depth", "sl", "rate", "bytes", "ack_timeout"

// What a part may give of a test's settings: not its captures (they capture the whole case),
// repeats (the case's) or rounds (a calibration's).
#define ROCEHIL_PART_KEYS                                                                       \
  "hosts", "provider", "size", "qps", "strategy", "placement", "traffic_class", "opcode",       \
      "transport", "memory", "duration_s", "iterations", "warmup", "pipeline", "engine", "mtu", \
      "tx_depth", "sl", "rate", "bytes", "ack_timeout"

// A part's name prefixes its metrics in thresholds (roce.busbw_gbps): an identifier.
bool is_part_name(std::string_view name) {
  if (name.empty() || name.size() > 32 || !std::isalpha(static_cast<unsigned char>(name[0])))
    return false;
  return name != "baseline" && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

// A typo in a sweep must not turn into a run of a month.
constexpr std::size_t max_cases_per_test = 10000;

std::vector<std::string_view> workload_names() {
  std::vector<std::string_view> names{"bw", "lat", "calibrate_bw", "calibrate_lat", "iperf3"};
  for (const auto p : traffic::all_patterns()) names.push_back(traffic::to_string(p));
  return names;
}

bool is_workload(std::string_view w) {
  const auto names = workload_names();
  return std::find(names.begin(), names.end(), w) != names.end();
}

// A scalar or a list of them: each item read by `one`, which reports its own problems. A value
// listed twice would make two cases with one id, so it is refused (`repeats` runs a case again).
template <typename T, typename ReadOne>
void read_sweep(LoadContext& ctx, const YAML::Node& n, const std::string& what, std::vector<T>& out,
                ReadOne one) {
  if (!n.IsDefined()) return;
  std::vector<T> values;
  bool ok = true;
  const auto take = [&](const YAML::Node& item) {
    auto v = one(item);
    if (!v) {
      ok = false;
    } else if (std::find(values.begin(), values.end(), *v) != values.end()) {
      ctx.error(item, fmt::format("{} lists '{}' twice; drop one (use 'repeats' to run a case "
                                  "more than once)",
                                  what, shown(item.Scalar())));
      ok = false;
    } else {
      values.push_back(*v);
    }
  };
  if (n.IsSequence()) {
    if (n.size() == 0) {
      ctx.error(n, "an empty list sweeps over nothing; give at least one value");
      return;
    }
    for (const auto& item : n) take(item);
  } else {
    take(n);
  }
  if (ok) out = std::move(values);
}

class SuiteReader {
 public:
  explicit SuiteReader(LoadContext& ctx) : ctx_(ctx) {}

  std::optional<Suite> read(const YAML::Node& root) {
    MapReader top(ctx_, root, "the suite",
                  {"schema_version", "name", "description", "defaults", "capture", "settings",
                   "baseline", "tests"});
    if (!top.ok()) return std::nullopt;
    Suite suite;
    // require() has said so when a key is missing; reading the missing node would say it again,
    // as "a single value" at line 0.
    if (const auto version = top.require("schema_version", "1"); version.IsDefined())
      if (const auto v = inventory::read_int(ctx_, version, "schema_version", 1, 1, "1"))
        suite.schema_version = static_cast<int>(*v);
    const auto name_node = top.require("name", "smoke");
    if (const auto v = name_node.IsDefined() ? inventory::read_string(ctx_, name_node, "name")
                                             : std::nullopt) {
      suite.name = *v;
      if (!inventory::is_valid_name(*v))
        ctx_.error(top.get("name"), fmt::format("suite name '{}' may hold letters, digits and "
                                                ". _ - only",
                                                shown(*v)));
    }
    if (const auto d = top.get("description"); d.IsDefined())
      if (const auto v = inventory::read_string(ctx_, d, "description")) suite.description = *v;
    TestSettings defaults;
    if (const auto d = top.get("defaults"); d.IsDefined()) {
      MapReader m(ctx_, d, "defaults", {ROCEHIL_SETTING_KEYS});
      if (m.ok()) read_settings(m, "defaults", defaults);
    }
    if (const auto c = top.get("capture"); c.IsDefined()) read_capture(c, suite.capture);
    // The fabric settings the run applies before its first case.
    if (const auto f = top.get("settings"); f.IsDefined())
      suite.settings = inventory::read_settings_map(ctx_, f, "settings");
    if (const auto b = top.get("baseline"); b.IsDefined())
      if (const auto v = inventory::read_string(ctx_, b, "baseline")) {
        if (*v == last_qualified_baseline || inventory::is_valid_name(*v))
          suite.baseline = *v;
        else
          ctx_.error(b, fmt::format("baseline '{}' is neither 'last-qualified' nor a run id "
                                    "(rocehil history lists them)",
                                    shown(*v)));
      }
    const YAML::Node tests = top.require("tests", "a list of tests");
    if (tests.IsDefined() && !tests.IsSequence()) {
      ctx_.error(tests, "tests must be a list: one '- name: ...' entry per test");
    } else if (tests.IsDefined()) {
      if (tests.size() == 0) ctx_.error(tests, "tests is empty; a suite needs at least one test");
      std::set<std::string> names;
      for (const auto& t : tests) {
        auto test = read_test(t, defaults);
        if (!test) continue;
        if (!names.insert(test->name).second)
          ctx_.error(t["name"], fmt::format("test '{}' is defined twice; give each test its own "
                                            "name",
                                            test->name));
        suite.tests.push_back(std::move(*test));
      }
    }
    return suite;
  }

 private:
  void read_capture(const YAML::Node& n, CaptureDefaults& out) {
    MapReader m(ctx_, n, "capture", {"filter", "snaplen", "keep", "keep_mb", "keep_total_mb"});
    if (!m.ok()) return;
    if (const auto f = m.get("filter"); f.IsDefined())
      if (const auto v =
              inventory::read_choice(ctx_, f, "capture: filter", {"all", "roce", "cnp-pfc"}))
        out.filter = *v;
    if (const auto s = m.get("snaplen"); s.IsDefined())
      if (const auto v = inventory::read_int(ctx_, s, "capture: snaplen", 64, 262144, "128"))
        out.snaplen = static_cast<std::uint32_t>(*v);
    if (const auto k = m.get("keep"); k.IsDefined())
      if (const auto v =
              inventory::read_choice(ctx_, k, "capture: keep", {"never", "failed", "always"}))
        out.keep = *v;
    if (const auto mb = m.get("keep_mb"); mb.IsDefined())
      if (const auto v = inventory::read_int(ctx_, mb, "capture: keep_mb", 2, 65536, "64"))
        out.keep_mb = static_cast<std::uint32_t>(*v);
    if (const auto mb = m.get("keep_total_mb"); mb.IsDefined())
      if (const auto v =
              inventory::read_int(ctx_, mb, "capture: keep_total_mb", 1, 1 << 24, "4096"))
        out.keep_total_mb = static_cast<std::uint32_t>(*v);
  }

  void read_settings(const MapReader& m, const std::string& owner, TestSettings& s) {
    auto field = [&](std::string_view key) { return fmt::format("{}: {}", owner, key); };
    if (const auto n = m.get("hosts"); n.IsDefined())
      if (const auto v = inventory::read_string(ctx_, n, field("hosts"))) {
        if (v->empty())
          ctx_.error(n,
                     fmt::format("{} is empty; write a selection such as 'all'", field("hosts")));
        else {
          s.hosts = *v;
          s.hosts_where = inventory::location_of(n);
        }
      }
    if (const auto n = m.get("provider"); n.IsDefined())
      if (const auto v = inventory::read_choice(ctx_, n, field("provider"), {"soft", "verbs"}))
        s.provider = *v;
    read_sweep(ctx_, m.get("size"), field("size"), s.sizes, [&](const YAML::Node& item) {
      std::optional<std::uint64_t> bytes;
      if (item.IsScalar()) bytes = parse_size(item.Scalar());
      if (!bytes || *bytes == 0 || *bytes > (std::uint64_t{1} << 30)) {
        ctx_.error(item,
                   fmt::format("{} must be a size from 1 byte to 1G such as 65536, 64K or "
                               "1M, got '{}'",
                               field("size"), item.IsScalar() ? shown(item.Scalar()) : "a list"));
        return std::optional<std::uint64_t>{};
      }
      return bytes;
    });
    read_sweep(ctx_, m.get("qps"), field("qps"), s.qps, [&](const YAML::Node& item) {
      const auto v =
          inventory::read_int(ctx_, item, field("qps"), 1, detail::max_qps_per_connection, "8");
      return v ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v)) : std::nullopt;
    });
    read_sweep(
        ctx_, m.get("strategy"), field("strategy"), s.strategies, [&](const YAML::Node& item) {
          return inventory::read_choice(ctx_, item, field("strategy"), {"split", "round_robin"});
        });
    read_sweep(
        ctx_, m.get("placement"), field("placement"), s.placements, [&](const YAML::Node& item) {
          return inventory::read_choice(ctx_, item, field("placement"), {"packed", "fragmented"});
        });
    if (m.has("traffic_class"))
      s.traffic_class_where = inventory::location_of(m.get("traffic_class"));
    if (m.get("traffic_class").IsMap()) {
      read_per_qp_traffic_class(ctx_, m.get("traffic_class"), field("traffic_class"), s);
    } else {
      if (m.has("traffic_class")) s.per_qp_traffic_classes.clear();  // over a defaults' per_qp
      read_sweep(ctx_, m.get("traffic_class"), field("traffic_class"), s.traffic_classes,
                 [&](const YAML::Node& item) {
                   const auto v =
                       inventory::read_int(ctx_, item, field("traffic_class"), 0, 255, "106");
                   return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
                 });
    }
    if (const auto n = m.get("opcode"); n.IsDefined())
      if (const auto v = inventory::read_choice(ctx_, n, field("opcode"),
                                                {"write", "write_with_imm", "send", "read"}))
        s.opcode = *v;
    if (const auto n = m.get("transport"); n.IsDefined())
      if (const auto v = inventory::read_choice(ctx_, n, field("transport"), {"rc", "ud"}))
        s.transport = *v;
    if (const auto n = m.get("memory"); n.IsDefined())
      if (const auto v = inventory::read_choice(ctx_, n, field("memory"), {"host", "gpu"}))
        s.memory = *v;
    if (const auto n = m.get("engine"); n.IsDefined())
      if (const auto v = inventory::read_choice(ctx_, n, field("engine"), {"rocehil", "perftest"}))
        s.engine = *v;
    if (const auto n = m.get("duration_s"); n.IsDefined())
      if (const auto v = inventory::read_number(ctx_, n, field("duration_s"), 0.1, 86400))
        s.duration_s = *v;
    detail::read_bytes(ctx_, m, field("bytes"), s);
    const auto integer = [&](std::string_view key, auto& out, long lo, long hi, const char* ex) {
      if (const auto n = m.get(key); n.IsDefined())
        if (const auto v = inventory::read_int(ctx_, n, field(key), lo, hi, ex))
          out = static_cast<std::remove_reference_t<decltype(out)>>(*v);
    };
    integer("iterations", s.iterations, 1, 40000, "20");
    integer("warmup", s.warmup, 0, 100000, "5");
    integer("repeats", s.repeats, 1, 100, "3");
    integer("pipeline", s.pipeline, 1, 1024, "8");
    integer("rounds", s.rounds, 1, 20, "3");
    integer("tx_depth", s.tx_depth, 1, 4096, "128");
    integer("sl", s.sl, 0, 7, "3");
    // verbs' timeout exponent, as NCCL_IB_TIMEOUT: 0 (wait for ever) is no test's choice, and
    // past 23 (34 s) no agent waits.
    integer("ack_timeout", s.ack_timeout, 1, 23, "18");
    if (const auto n = m.get("mtu"); n.IsDefined())
      if (const auto v = inventory::read_int(ctx_, n, field("mtu"), 256, 4096, "4096")) {
        if (*v != 256 && *v != 512 && *v != 1024 && *v != 2048 && *v != 4096)
          ctx_.error(n, fmt::format("{} must be a RoCE path MTU: 256, 512, 1024, 2048 or 4096, "
                                    "got {}",
                                    field("mtu"), *v));
        else
          s.mtu = static_cast<std::uint32_t>(*v);
      }
    if (const auto n = m.get("rate"); n.IsDefined())
      if (const auto v = inventory::read_string(ctx_, n, field("rate"))) {
        std::string why;
        if (auto rate = parse_rate(*v, why)) {
          s.rate = std::move(rate);
          s.rate_where = inventory::location_of(n);
        } else {
          ctx_.error(n, fmt::format("{}: {}", field("rate"), why));
        }
      }
    if (const auto n = m.get("captures"); n.IsDefined())
      if (const auto v = inventory::read_string_list(ctx_, n, field("captures"))) {
        for (std::size_t i = 0; i < v->size(); ++i)
          if (!inventory::is_valid_name((*v)[i]))
            ctx_.error(n[i], fmt::format("{} entry '{}' is not a capture point's name",
                                         field("captures"), shown((*v)[i])));
        s.captures = *v;
        s.captures_where.clear();
        for (std::size_t i = 0; i < v->size(); ++i)
          s.captures_where.push_back(inventory::location_of(n[i]));
      }
  }

  // UD moves one packet per message with SEND, on QPs whose source ports the NIC picks.
  void check_ud(const MapReader& m, const YAML::Node& n, const std::string& owner,
                const SuiteTest& t) {
    const YAML::Node at = m.get("transport").IsDefined() ? m.get("transport") : n;
    if (measured_workload(t) != "bw")
      ctx_.error(at, fmt::format("{}: transport ud needs workload bw, not {}", owner, t.workload));
    if (t.settings.opcode != "send")
      ctx_.error(at, fmt::format("{}: transport ud sends with opcode send, not {}", owner,
                                 t.settings.opcode));
    for (const auto size : t.settings.sizes)
      if (size > t.settings.mtu)
        ctx_.error(m.get("size").IsDefined() ? m.get("size") : at,
                   fmt::format("{}: a UD message is one packet: size must be at most {} (the "
                               "test's path mtu), got {}",
                               owner, t.settings.mtu, size));
  }

  // perftest runs bw and lat with the tools Debian ships: WRITE, READ or SEND, host memory.
  void check_perftest(const MapReader& m, const YAML::Node& n, const std::string& owner,
                      const SuiteTest& t) {
    const YAML::Node at = m.get("engine").IsDefined() ? m.get("engine") : n;
    if (is_calibration(t)) {
      // Only when the test names an engine: a calibration's runs take both in turn.
      if (m.get("engine").IsDefined())
        ctx_.error(at,
                   fmt::format("{}: {} runs both engines in turn; drop engine", owner, t.workload));
    } else if (t.workload != "bw" && t.workload != "lat") {
      ctx_.error(at, fmt::format("{}: engine perftest runs workload bw or lat, not {} (perftest "
                                 "has no collectives)",
                                 owner, t.workload));
      return;
    }
    if (measured_workload(t) == "bw" && t.settings.opcode == "write_with_imm")
      ctx_.error(m.get("opcode").IsDefined() ? m.get("opcode") : at,
                 fmt::format("{}: perftest has no WRITE_WITH_IMM bandwidth test; use opcode "
                             "write, read or send, or engine rocehil",
                             owner));
    if (t.settings.memory == "gpu")
      ctx_.error(m.get("memory").IsDefined() ? m.get("memory") : at,
                 fmt::format("{}: memory gpu with engine perftest needs a perftest built with "
                             "CUDA (--use_cuda), which Debian's is not; use engine rocehil",
                             owner));
    if (m.get("ack_timeout").IsDefined())
      ctx_.error(m.get("ack_timeout"),
                 fmt::format("{}: ack_timeout sets rocehil's own QPs; perftest keeps its own "
                             "(its -u, not passed yet): drop ack_timeout or use engine rocehil",
                             owner));
    if (measured_workload(t) == "lat" && t.settings.iterations < 5)
      ctx_.error(m.get("iterations").IsDefined() ? m.get("iterations") : at,
                 fmt::format("{}: perftest runs at least 5 iterations, got {}", owner,
                             t.settings.iterations));
  }

  // `parts:` of a test: each part a workload with the test's settings under its own. A test
  // with parts runs one case (its parts' values are one each); a sweep is a test per value.
  void read_parts(const YAML::Node& n, const MapReader& test_map, const std::string& owner,
                  SuiteTest& t) {
    if (!n.IsSequence() || n.size() == 0) {
      ctx_.error(n, fmt::format("{}: parts must be a list of parts, each as "
                                "'- {{name: roce, workload: incast, hosts: ...}}'",
                                owner));
      return;
    }
    refuse_sweeps(test_map, owner, t.settings,
                  "a test with parts runs one case; give it one value (a test per value sweeps)");
    std::set<std::string> names;
    for (const YAML::Node& item : n) {
      MapReader pm(ctx_, item, owner + ": a part",
                   {"name", "workload", "start_after_s", "stagger_s", ROCEHIL_IPERF3_KEYS,
                    ROCEHIL_PART_KEYS});
      if (!pm.ok()) continue;
      Part part;
      part.where = inventory::location_of(item);
      part.settings = t.settings;
      const YAML::Node name_node = pm.require("name", "roce");
      const auto name = name_node.IsDefined()
                            ? inventory::read_string(ctx_, name_node, owner + ": part name")
                            : std::nullopt;
      if (!name) continue;
      if (!is_part_name(*name)) {
        ctx_.error(name_node, fmt::format("{}: part name '{}' may hold letters, digits and _ "
                                          "only, a letter first (it names the part's metrics: "
                                          "{}.busbw_gbps)",
                                          owner, shown(*name), "roce"));
        continue;
      }
      if (!names.insert(*name).second) {
        ctx_.error(name_node, fmt::format("{}: part '{}' is defined twice; give each part its "
                                          "own name",
                                          owner, *name));
        continue;
      }
      part.name = *name;
      const std::string part_owner = fmt::format("{}: part '{}'", owner, part.name);
      if (const YAML::Node w = pm.require("workload", "incast"); w.IsDefined()) {
        const auto v = inventory::read_string(ctx_, w, part_owner + ": workload");
        if (v && is_workload(*v) && !v->starts_with("calibrate_")) {
          part.workload = *v;
        } else if (v) {
          ctx_.error(w, fmt::format("{}: workload '{}' cannot be a part; use bw, lat, iperf3 or "
                                    "a collective pattern (a calibration runs alone)",
                                    part_owner, shown(*v)));
          continue;
        }
      }
      if (part.workload.empty()) continue;
      read_settings(pm, part_owner, part.settings);
      refuse_sweeps(pm, part_owner, part.settings,
                    "a part takes one value (a test per value sweeps)");
      const auto seconds = [&](std::string_view key, double& out) {
        if (const YAML::Node v = pm.get(key); v.IsDefined())
          if (const auto x =
                  inventory::read_number(ctx_, v, fmt::format("{}: {}", part_owner, key), 0, 86400))
            out = *x;
      };
      seconds("start_after_s", part.start_after_s);
      seconds("stagger_s", part.stagger_s);
      SuiteTest as_test = test_of_part(t, part);
      check_workload(pm, item, part_owner, as_test, &test_map);
      part.settings = std::move(as_test.settings);
      t.parts.push_back(std::move(part));
    }
  }

  // A sweep where one value is wanted: each swept key given more than one, at its place.
  void refuse_sweeps(const MapReader& m, const std::string& owner, const TestSettings& s,
                     std::string_view why) {
    const std::pair<std::string_view, std::size_t> swept[] = {
        {"size", s.sizes.size()},
        {"qps", s.qps.size()},
        {"strategy", s.strategies.size()},
        {"placement", s.placements.size()},
        {"traffic_class", s.traffic_classes.size()}};
    for (const auto& [key, values] : swept)
      if (values > 1 && m.get(key).IsDefined())
        ctx_.error(m.get(key), fmt::format("{}: {} sweeps {} values; {}", owner, key, values, why));
  }

  // What the test's (or a part's) workload cannot take of what `m` gives.
  void check_workload(const MapReader& m, const YAML::Node& n, const std::string& owner,
                      SuiteTest& t, const MapReader* outer = nullptr) {
    check_iperf3_test(ctx_, m, n, owner, t);
    check_per_qp_traffic_class(ctx_, m, n, owner, t);
    detail::check_keys_used(ctx_, m, outer, owner, t);
    detail::check_volume(ctx_, m, owner, t);
    if (measured_workload(t) == "lat" && (t.settings.qps.size() != 1 || t.settings.qps[0] != 1))
      ctx_.error(m.get("qps").IsDefined() ? m.get("qps") : n,
                 fmt::format("{}: lat pings over one QP; drop qps", owner));
    // Only bw and iperf3 pace their sender (pacing.hpp); the others are refused rather than
    // run at line rate unsaid.
    if (t.settings.rate)
      if (const auto why = why_rate_is_refused(t))
        ctx_.error(t.settings.rate_where,
                   fmt::format("{}: workload {} does not take rate ({}); drop rate", owner,
                               t.workload, *why));
    if (t.settings.transport == "ud") check_ud(m, n, owner, t);
    if (t.settings.engine == "perftest" || is_calibration(t)) check_perftest(m, n, owner, t);
    if (t.settings.memory == "gpu" && t.workload != "bw" && t.workload != "lat" &&
        !is_calibration(t))
      ctx_.error(m.get("memory").IsDefined() ? m.get("memory") : n,
                 fmt::format("{}: memory gpu needs workload bw or lat (a collective checks its "
                             "data in host memory)",
                             owner));
  }

  std::optional<SuiteTest> read_test(const YAML::Node& n, const TestSettings& defaults) {
    MapReader m(ctx_, n, "a test",
                {"name", "workload", "thresholds", "expect", "inject", "events", "settings",
                 "parts", ROCEHIL_IPERF3_KEYS, ROCEHIL_SETTING_KEYS});
    if (!m.ok()) return std::nullopt;
    SuiteTest t;
    t.where = inventory::location_of(n);
    t.settings = defaults;
    const YAML::Node name_node = m.require("name", "allreduce");
    if (!name_node.IsDefined()) return std::nullopt;
    const auto name = inventory::read_string(ctx_, name_node, "test name");
    if (!name) return std::nullopt;
    t.name = *name;
    if (!inventory::is_valid_name(t.name)) {
      ctx_.error(m.get("name"), fmt::format("test name '{}' may hold letters, digits and . _ - "
                                            "only (it names reports and JUnit cases)",
                                            shown(t.name)));
      return std::nullopt;
    }
    const std::string owner = fmt::format("test '{}'", t.name);
    const YAML::Node parts = m.get("parts");
    if (parts.IsDefined()) {
      if (const auto w = m.get("workload"); w.IsDefined())
        ctx_.error(w, fmt::format("{}: a test with parts gives each part its workload; drop the "
                                  "test's workload",
                                  owner));
      t.workload = std::string(parts_workload);
    } else if (const auto w = m.require("workload", "allreduce"); w.IsDefined()) {
      const auto v = inventory::read_string(ctx_, w, owner + ": workload");
      if (v && is_workload(*v)) {
        t.workload = *v;
      } else if (v) {
        std::string known;
        for (const auto k : workload_names()) {
          if (!known.empty()) known += ", ";
          known += k;
        }
        ctx_.error(
            w, fmt::format("{}: workload '{}' is unknown; use one of {}", owner, shown(*v), known));
      }
    }
    read_settings(m, owner, t.settings);
    if (parts.IsDefined())
      read_parts(parts, m, owner, t);
    else
      check_workload(m, n, owner, t);
    const TestSettings& s = t.settings;
    const double cases = static_cast<double>(s.sizes.size()) * static_cast<double>(s.qps.size()) *
                         static_cast<double>(s.strategies.size()) *
                         static_cast<double>(s.placements.size()) *
                         static_cast<double>(s.traffic_classes.size());
    if (cases > static_cast<double>(max_cases_per_test))
      ctx_.error(n, fmt::format("{}: its sweeps make {:.0f} cases, more than {}; sweep fewer "
                                "values or split the test",
                                owner, cases, max_cases_per_test));
    if (const auto e = m.get("expect"); e.IsDefined())
      if (const auto v = inventory::read_choice(ctx_, e, owner + ": expect", {"pass", "fail"}))
        t.expect_fail = *v == "fail";
    if (const auto i = m.get("inject"); i.IsDefined()) t.inject = read_injection(i, owner);
    read_test_events(m, owner, t);
    if (const auto f = m.get("settings"); f.IsDefined())
      t.fabric_settings = inventory::read_settings_map(ctx_, f, owner + ": settings");
    if (const auto th = m.get("thresholds"); th.IsDefined()) {
      if (!th.IsSequence()) {
        ctx_.error(th, fmt::format("{}: thresholds must be a list of 'metric op expression' "
                                   "lines",
                                   owner));
      } else {
        for (const auto& item : th) {
          auto threshold = read_threshold(item, owner);
          if (!threshold) continue;
          // Refused now, not after the case has run its seconds and found nothing to grade.
          // The provider the file names (the test's or the defaults') is known without the
          // inventory: what it never measures is refused here too, as `rocehil run` would.
          // Every metric it names: the left side's and those its limit compares with.
          bool measurable = true;
          for (const std::string& name : metrics_named(*threshold)) {
            MetricRef named = threshold->metric;
            if (name != named.name) named = MetricRef{.name = name};
            const auto why = parts.IsDefined() ? never_measured_in_parts(t, named)
                                               : never_measured_by_test(t, name);
            const auto not_on = why || t.settings.provider.empty()
                                    ? std::nullopt
                                    : never_measured_on(t.settings.provider, name);
            if (why)
              ctx_.error(
                  SourceLocation{threshold->line, threshold->column},
                  fmt::format("{}: threshold '{}': {}", owner, shown(threshold->text, 60), *why));
            else if (not_on)
              ctx_.error(SourceLocation{threshold->line, threshold->column},
                         fmt::format("{}: threshold '{}': {} (the test's provider: {})", owner,
                                     shown(threshold->text, 60), *not_on, t.settings.provider));
            if (why || not_on) {
              measurable = false;
              break;
            }
          }
          if (measurable) t.thresholds.push_back(*threshold);
        }
      }
    }
    return t;
  }

  // `events:`, and `inject:` as one pfc event at its after_s: both run and grade alike.
  void read_test_events(const MapReader& m, const std::string& owner, SuiteTest& t) {
    if (const auto e = m.get("events"); e.IsDefined())
      t.events = detail::read_events(ctx_, e, owner);
    if (t.inject) {
      Event e;
      e.at_s = t.inject->after_s;
      e.pfc = *t.inject;
      e.from_inject = true;
      e.where = t.inject->where;
      t.events.push_back(std::move(e));
    }
    std::stable_sort(t.events.begin(), t.events.end(),
                     [](const Event& a, const Event& b) { return a.at_s < b.at_s; });
    detail::check_events(ctx_, t);
  }

  std::optional<Injection> read_injection(const YAML::Node& n, const std::string& owner) {
    const std::string what = owner + ": inject";
    MapReader m(ctx_, n, what,
                {"kind", "from", "link", "priority", "quanta", "pps", "duration_s", "after_s"});
    if (!m.ok()) return std::nullopt;
    Injection in;
    in.where = inventory::location_of(n);
    bool ok = detail::read_pfc_keys(ctx_, m, what, in);
    if (const auto v = m.get("after_s"); v.IsDefined()) {
      if (const auto x = inventory::read_number(ctx_, v, what + ": after_s", 0, 3600))
        in.after_s = *x;
      else
        ok = false;
    }
    if (!ok) return std::nullopt;
    return in;
  }

  // The map form: check (the line), level and retry. Returns the check's node.
  YAML::Node read_threshold_map(const YAML::Node& n, const std::string& owner, Level& level,
                                int& retry) {
    MapReader m(ctx_, n, owner + ": a threshold", {"check", "level", "retry"});
    if (!m.ok()) return YAML::Node(YAML::NodeType::Undefined);
    if (const auto l = m.get("level"); l.IsDefined())
      if (const auto v = inventory::read_choice(ctx_, l, owner + ": level", {"fail", "warn"}))
        level = *v == "fail" ? Level::fail : Level::warn;
    if (const auto r = m.get("retry"); r.IsDefined())
      if (const auto v = inventory::read_int(ctx_, r, owner + ": retry", 0, 10, "2"))
        retry = static_cast<int>(*v);
    return m.require("check", "busbw_gbps >= 0.9 * link_gbps");
  }

  std::optional<Threshold> read_threshold(const YAML::Node& n, const std::string& owner) {
    Level level = Level::fail;
    int retry = 0;
    // (A YAML::Node is never reassigned here: yaml-cpp's operator= writes into the document.)
    const YAML::Node text = n.IsMap() ? read_threshold_map(n, owner, level, retry) : n;
    if (!text.IsDefined()) return std::nullopt;
    if (!text.IsScalar()) {
      ctx_.error(text, fmt::format("{}: a threshold is a line such as 'busbw_gbps >= 0.9 * "
                                   "link_gbps', or a map with check, level and retry",
                                   owner));
      return std::nullopt;
    }
    ParsedThreshold p = parse_threshold(text.Scalar());
    if (!p.threshold) {
      // Point at the column inside the line; a quoted scalar starts one column later.
      SourceLocation at = inventory::location_of(text);
      const bool quoted = text.Tag() == "!";
      if (at.line > 0 && text.Scalar().find('\n') == std::string::npos)
        at.column += p.column - 1 + (quoted ? 1 : 0);
      const std::string message = p.error.substr(p.error.find(": ") + 2);
      ctx_.error(at,
                 fmt::format("{}: threshold '{}': {}", owner, shown(text.Scalar(), 60), message));
      return std::nullopt;
    }
    p.threshold->level = level;
    p.threshold->retry = retry;
    const SourceLocation at = inventory::location_of(text);
    p.threshold->line = at.line;
    p.threshold->column = at.column + (text.Tag() == "!" ? 1 : 0);
    return p.threshold;
  }

  LoadContext& ctx_;
};

#undef ROCEHIL_SETTING_KEYS
#undef ROCEHIL_PART_KEYS

}  // namespace

SuiteLoadResult parse_suite(std::string_view text, const std::string& file) {
  SuiteLoadResult result;
  LoadContext ctx(file);
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsDefined() || root.IsNull()) {
      ctx.error(SourceLocation{}, "the file is empty; a suite starts with 'schema_version: 1'");
    } else {
      auto suite = SuiteReader(ctx).read(root);
      if (suite) suite->file = file;
      result.suite = std::move(suite);
    }
  } catch (const YAML::Exception& e) {
    ctx.error(SourceLocation{e.mark.line + 1, e.mark.column + 1},
              fmt::format("not valid YAML: {}", shown(e.msg)));
  }
  result.diagnostics = ctx.take();
  if (!result.diagnostics.empty()) {
    result.partial = std::move(result.suite);
    result.suite.reset();
  }
  return result;
}

SuiteLoadResult parse_suite_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw input_error(fmt::format("cannot read suite {}: {}", file, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), file);
}

Suite load_suite(const std::string& file) {
  SuiteLoadResult r = parse_suite_file(file);
  if (r.suite) return std::move(*r.suite);
  std::string message;
  for (const auto& d : r.diagnostics) {
    if (!message.empty()) message += '\n';
    message += inventory::to_string(d);
  }
  throw input_error(message);
}

}  // namespace rocehil::suites
