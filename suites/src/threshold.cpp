#include "rocehil/suites/threshold.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "rocehil/common/units.hpp"
#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/suites/metrics.hpp"

namespace rocehil::suites {

namespace {

using inventory::shown;

// A recursive-descent parser over one line; the first problem stops it, with its column.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  ParsedThreshold parse() {
    ParsedThreshold out;
    Threshold t;
    t.text = std::string(text_);
    if (!metric(t.metric) || !comparison(t.op)) return failure();
    auto limit = sum();
    if (!limit) return failure();
    skip_spaces();
    if (at_ < text_.size()) {
      fail(fmt::format("unexpected '{}' after the expression", shown(text_.substr(at_))));
      return failure();
    }
    t.limit = std::move(*limit);
    out.threshold = std::move(t);
    return out;
  }

 private:
  using Node = std::shared_ptr<const Expression>;

  ParsedThreshold failure() const {
    ParsedThreshold out;
    out.error = fmt::format("column {}: {}", error_column_, error_);
    out.column = error_column_;
    return out;
  }
  void fail(std::string message) {
    if (!error_.empty()) return;
    error_ = std::move(message);
    error_column_ = static_cast<int>(at_) + 1;
  }
  void skip_spaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }
  static bool identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }
  std::string_view identifier() {
    const std::size_t start = at_;
    if (at_ < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
      while (at_ < text_.size() && identifier_char(text_[at_])) ++at_;
    return text_.substr(start, at_ - start);
  }

  bool metric(MetricRef& m) {
    skip_spaces();
    std::size_t start = at_;
    std::string_view name = identifier();
    if (name.empty()) {
      fail("a threshold starts with a metric, as in 'busbw_gbps >= 0.9 * link_gbps'");
      return false;
    }
    // part.metric: a metric of one part of a test with parts (the suite checks the part).
    if (at_ < text_.size() && text_[at_] == '.') {
      if (name == "baseline") {
        fail(
            "a threshold's left side is this run's metric; baseline.<metric> belongs in the "
            "expression, as in 'busbw_gbps >= 0.95 * baseline.busbw_gbps'");
        return false;
      }
      m.part = std::string(name);
      ++at_;
      start = at_;
      name = identifier();
      if (name.empty()) {
        fail(fmt::format("'{}.' names a part; a metric follows, as in {}.busbw_gbps", m.part,
                         m.part));
        return false;
      }
    }
    const MetricInfo* info = find_metric(name);
    if (info == nullptr) {
      at_ = start;
      const std::string_view near = nearest_metric(name);
      fail(near.empty()
               ? fmt::format("unknown metric '{}' (see docs/metrics.md)", shown(name))
               : fmt::format("unknown metric '{}' (did you mean '{}'?)", shown(name), near));
      return false;
    }
    m.name = std::string(name);
    return index(*info, start, m);
  }

  // The [index] after a metric's name, if its kind of index allows or needs one: [3] and
  // [prio=3] a priority, [dscp=26] a DSCP. `start` is where the name began, for the column.
  bool index(const MetricInfo& info, std::size_t start, MetricRef& m) {
    const std::string& name = m.name;
    if (at_ >= text_.size() || text_[at_] != '[') {
      if (info.index == Index::priority) {
        fail(fmt::format("'{}' needs a priority, as in {}[3]", name, name));
        return false;
      }
      return true;
    }
    if (info.index == Index::none) {
      at_ = start;
      fail(fmt::format("'{}' takes no [index]", name));
      return false;
    }
    ++at_;
    bool dscp = false;
    if (text_.substr(at_).starts_with("prio=")) {
      at_ += 5;
    } else if (text_.substr(at_).starts_with("dscp=")) {
      at_ += 5;
      dscp = true;
    }
    const std::size_t digits = at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    int value = -1;
    std::from_chars(text_.data() + digits, text_.data() + at_, value);
    const int most = dscp ? 63 : 7;
    if (at_ == digits || value < 0 || value > most || at_ >= text_.size() || text_[at_] != ']') {
      at_ = digits;
      fail(dscp || info.index == Index::total_or_dscp
               ? fmt::format("'{}[dscp=...]' takes a DSCP from 0 to 63, as in {}[dscp=26]", name,
                             name)
               : fmt::format("'{}[...]' takes a priority from 0 to 7, as in {}[3]", name, name));
      return false;
    }
    ++at_;
    switch (info.index) {
      case Index::none: break;  // refused above
      case Index::priority:
      case Index::total_or_priority:
        if (dscp) {
          at_ = start;
          fail(fmt::format("'{}' is counted by priority, not by DSCP: {}[prio=3]", name, name));
          return false;
        }
        break;
      case Index::total_or_dscp:
        if (!dscp) {
          at_ = start;
          fail(fmt::format(
              "'{}' is counted by the DSCP a mirror port sees, not by priority: {}[dscp=26]", name,
              name));
          return false;
        }
        break;
    }
    m.index = value;
    m.by_dscp = dscp;
    return true;
  }

  bool comparison(Comparison& op) {
    skip_spaces();
    static constexpr std::pair<std::string_view, Comparison> ops[] = {
        {"<=", Comparison::le}, {">=", Comparison::ge}, {"==", Comparison::eq},
        {"!=", Comparison::ne}, {"<", Comparison::lt},  {">", Comparison::gt}};
    for (const auto& [text, value] : ops)
      if (text_.substr(at_).starts_with(text)) {
        op = value;
        at_ += text.size();
        return true;
      }
    fail("expected a comparison: <, <=, >, >=, == or !=");
    return false;
  }

  // One precedence level: operands from `operand`, joined left to right by the two operators
  // given (+ and -, or * and /).
  template <typename Operand>
  std::optional<Expression> level(Operand operand, char first_op, Expression::Kind first_kind,
                                  char second_op, Expression::Kind second_kind) {
    auto left = (this->*operand)();
    while (left) {
      skip_spaces();
      if (at_ >= text_.size() || (text_[at_] != first_op && text_[at_] != second_op)) break;
      const auto kind = text_[at_++] == first_op ? first_kind : second_kind;
      auto right = (this->*operand)();
      if (!right) return std::nullopt;
      left = binary(kind, std::move(*left), std::move(*right));
    }
    return left;
  }

  std::optional<Expression> sum() {
    return level(&Parser::product, '+', Expression::Kind::add, '-', Expression::Kind::subtract);
  }

  std::optional<Expression> product() {
    return level(&Parser::factor, '*', Expression::Kind::multiply, '/', Expression::Kind::divide);
  }

  std::optional<Expression> factor() {
    skip_spaces();
    if (++depth_ > 32) {
      fail("the expression nests too deep");
      return std::nullopt;
    }
    std::optional<Expression> out = atom();
    --depth_;
    return out;
  }

  std::optional<Expression> atom() {
    if (at_ >= text_.size()) {
      fail("the expression ends too early");
      return std::nullopt;
    }
    const char c = text_[at_];
    if (c == '-') {
      ++at_;
      auto inner = factor();
      if (!inner) return std::nullopt;
      Expression e;
      e.kind = Expression::Kind::negate;
      e.left = std::make_shared<const Expression>(std::move(*inner));
      return e;
    }
    if (c == '(') {
      ++at_;
      auto inner = sum();
      if (!inner) return std::nullopt;
      skip_spaces();
      if (at_ >= text_.size() || text_[at_] != ')') {
        fail("missing ')'");
        return std::nullopt;
      }
      ++at_;
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      Expression e;
      const auto [end, ec] =
          std::from_chars(text_.data() + at_, text_.data() + text_.size(), e.number);
      if (ec != std::errc() || !std::isfinite(e.number)) {
        fail("not a number");
        return std::nullopt;
      }
      at_ = static_cast<std::size_t>(end - text_.data());
      return e;
    }
    const std::size_t start = at_;
    std::string name(identifier());
    const bool baseline = name == "baseline" && at_ < text_.size() && text_[at_] == '.';
    if (baseline) {
      ++at_;
      name = identifier();
    }
    if (name.empty()) {
      fail(fmt::format("unexpected '{}'", shown(std::string_view(&c, 1))));
      return std::nullopt;
    }
    // A metric: this run's (another metric of the same case, as in pfc_frames <= 0.1 *
    // mirror_cnps) or the baseline run's; indexed as on a threshold's left side.
    if (const MetricInfo* info = find_metric(name)) {
      MetricRef ref;
      ref.name = name;
      if (!index(*info, start, ref)) return std::nullopt;
      Expression e;
      e.kind = Expression::Kind::name;
      e.name = baseline ? "baseline." + ref.key() : ref.key();
      return e;
    }
    if (baseline) name = "baseline." + name;
    if (!is_known_name(name)) {
      at_ = start;
      if (baseline) {
        const std::string_view near = nearest_metric(std::string_view(name).substr(9));
        fail(near.empty() ? fmt::format("'{}' names no metric", shown(name))
                          : fmt::format("'{}' names no metric (did you mean 'baseline.{}'?)",
                                        shown(name), near));
      } else {
        const std::string_view near = nearest_name(name);
        const std::string_view near_metric = nearest_metric(name);
        fail(!near.empty()
                 ? fmt::format("unknown name '{}' (did you mean '{}'?)", shown(name), near)
             : !near_metric.empty()
                 ? fmt::format("unknown name '{}' (did you mean '{}'?)", shown(name), near_metric)
                 : fmt::format("unknown name '{}' (names: link_gbps, n, hosts, "
                               "qps, size, a metric, baseline.<metric>)",
                               shown(name)));
      }
      return std::nullopt;
    }
    Expression e;
    e.kind = Expression::Kind::name;
    e.name = std::move(name);
    return e;
  }

  static Expression binary(Expression::Kind kind, Expression left, Expression right) {
    Expression e;
    e.kind = kind;
    e.left = std::make_shared<const Expression>(std::move(left));
    e.right = std::make_shared<const Expression>(std::move(right));
    return e;
  }

  std::string_view text_;
  std::size_t at_ = 0;
  int depth_ = 0;
  std::string error_;
  int error_column_ = 0;
};

bool holds(double measured, Comparison op, double limit) {
  switch (op) {
    case Comparison::lt: return measured < limit;
    case Comparison::le: return measured <= limit;
    case Comparison::gt: return measured > limit;
    case Comparison::ge: return measured >= limit;
    case Comparison::eq: return measured == limit;
    case Comparison::ne: return measured != limit;
  }
  return false;
}

}  // namespace

std::string_view to_string(Comparison c) {
  switch (c) {
    case Comparison::lt: return "<";
    case Comparison::le: return "<=";
    case Comparison::gt: return ">";
    case Comparison::ge: return ">=";
    case Comparison::eq: return "==";
    case Comparison::ne: return "!=";
  }
  return "?";
}

std::string_view to_string(Level level) {
  return level == Level::fail ? "fail" : "warn";
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::warn: return "warn";
    case Verdict::fail: return "fail";
    case Verdict::error: return "error";
  }
  return "?";
}

std::string MetricRef::key() const {
  if (!index) return name_key();
  return by_dscp ? fmt::format("{}[dscp={}]", name_key(), *index)
                 : fmt::format("{}[{}]", name_key(), *index);
}

std::string MetricRef::name_key() const {
  return part.empty() ? name : fmt::format("{}.{}", part, name);
}

ParsedThreshold parse_threshold(std::string_view text) {
  return Parser(text).parse();
}

namespace {
bool names_baseline(const Expression& e) {
  if (e.kind == Expression::Kind::name) return e.name.starts_with("baseline.");
  return (e.left && names_baseline(*e.left)) || (e.right && names_baseline(*e.right));
}
}  // namespace

bool uses_baseline(const Threshold& t) {
  return names_baseline(t.limit);
}

namespace {
void collect_metrics(const Expression& e, std::vector<std::string>& out) {
  if (e.kind == Expression::Kind::name && !e.name.starts_with("baseline.")) {
    std::string name = e.name.substr(0, e.name.find('['));
    if (find_metric(name) != nullptr && std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(std::move(name));
  }
  if (e.left) collect_metrics(*e.left, out);
  if (e.right) collect_metrics(*e.right, out);
}
}  // namespace

std::vector<std::string> metrics_named(const Threshold& t) {
  std::vector<std::string> out{t.metric.name};
  collect_metrics(t.limit, out);
  return out;
}

namespace {

// A measured metric by key. A DSCP a capture saw nothing of is 0 where the capture counted that
// metric at all (it counts every class); anything else missing is not measured, with the reason.
std::optional<double> find_measured(const Values& measured, const Unmeasured& unmeasured,
                                    std::string_view key, std::string& why) {
  if (const auto it = measured.find(key); it != measured.end()) return it->second;
  const std::string_view name_key = key.substr(0, key.find('['));
  if (key.find("[dscp=") != std::string_view::npos && measured.contains(name_key)) return 0.0;
  auto reason = unmeasured.find(key);
  if (reason == unmeasured.end()) reason = unmeasured.find(name_key);
  why = reason != unmeasured.end() ? fmt::format("{} was not measured: {}", key, reason->second)
                                   : fmt::format("{} was not measured by this test", key);
  return std::nullopt;
}

// Names take the case's facts and the baseline's metrics; a metric of this run comes from
// `measured` when one is given.
struct Lookup {
  const Values& names;
  const Values* measured = nullptr;
  const Unmeasured* unmeasured = nullptr;
};

std::optional<double> evaluate_with(const Expression& e, const Lookup& lookup, std::string& why) {
  using Kind = Expression::Kind;
  switch (e.kind) {
    case Kind::number: return e.number;
    case Kind::name: {
      if (const auto it = lookup.names.find(e.name); it != lookup.names.end()) return it->second;
      if (e.name.starts_with("baseline.")) {
        why = fmt::format(
            "no baseline value for {} (the baseline run did not measure it in this case)",
            e.name.substr(9));
        return std::nullopt;
      }
      if (lookup.measured != nullptr)
        return find_measured(*lookup.measured, *lookup.unmeasured, e.name, why);
      why = fmt::format("no value for {}", e.name);
      return std::nullopt;
    }
    case Kind::negate: {
      const auto v = evaluate_with(*e.left, lookup, why);
      if (!v) return std::nullopt;
      return -*v;
    }
    default: break;
  }
  const auto a = evaluate_with(*e.left, lookup, why);
  if (!a) return std::nullopt;
  const auto b = evaluate_with(*e.right, lookup, why);
  if (!b) return std::nullopt;
  switch (e.kind) {
    case Kind::add: return *a + *b;
    case Kind::subtract: return *a - *b;
    case Kind::multiply: return *a * *b;
    case Kind::divide:
      if (*b == 0) {
        why = "division by zero";
        return std::nullopt;
      }
      return *a / *b;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<double> evaluate(const Expression& e, const Values& names, std::string& why) {
  return evaluate_with(e, Lookup{names}, why);
}

void Measured::merge(const Measured& other) {
  for (const auto& [key, why] : other.unmeasured) absent(key, why);
  for (const auto& [key, value] : other.values) {
    values[key] = value;
    unmeasured.erase(key);
  }
  for (const auto& [key, text] : other.where) where[key] = text;
}

void Measured::absent(const std::string& key, std::string why) {
  values.erase(key);
  where.erase(key);
  unmeasured[key] = std::move(why);
}

Evaluation evaluate(const Threshold& t, const Values& measured, const Values& names,
                    const Unmeasured& unmeasured, const Attribution& where) {
  Evaluation out;
  const std::string key = t.metric.key();
  std::string why;
  out.measured = find_measured(measured, unmeasured, key, why);
  if (!out.measured) {
    out.verdict = Verdict::error;
    out.detail = std::move(why);
    return out;
  }
  out.limit = evaluate_with(t.limit, Lookup{names, &measured, &unmeasured}, why);
  if (!out.limit) {
    out.verdict = Verdict::error;
    out.detail = fmt::format("{}: {}", t.text, why);
    return out;
  }
  const bool ok = holds(*out.measured, t.op, *out.limit);
  out.verdict = ok ? Verdict::pass : (t.level == Level::fail ? Verdict::fail : Verdict::warn);
  // Four significant digits (a latency histogram's bucket edge is not known to a thousandth of
  // a microsecond), more where four would show a failing value equal to its limit.
  std::string value_text = format_number(*out.measured), limit_text = format_number(*out.limit);
  if (value_text == limit_text && *out.measured != *out.limit) {
    value_text = fmt::format("{:.10g}", *out.measured);
    limit_text = fmt::format("{:.10g}", *out.limit);
  }
  out.detail = fmt::format("{} = {}, needs {} {}", key, value_text, to_string(t.op), limit_text);
  if (!ok)
    if (const auto at = where.find(key); at != where.end()) out.detail += "; at " + at->second;
  return out;
}

}  // namespace rocehil::suites
