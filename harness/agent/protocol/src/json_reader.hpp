#pragma once

// Reading one received JSON message: every value is checked where it is read, and the first
// problem rejects the line with a message that names the field, what it must be and what came.
// protocol.cpp describes the messages; this is how a description is held to a line.

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace rocehil::agent::wire {

using nlohmann::json;

// Thrown by the readers below and caught in parse_request/parse_reply, never beyond: a message
// stops at its first problem, and unwinding spares threading a status through every nested
// reader. Not a std::exception, so no catch-all elsewhere can mistake it for a library error.
struct Rejected {
  std::string message;
};

[[noreturn]] void reject(std::string message);

bool contains(std::span<const std::string_view> names, std::string_view name);
std::string join(std::span<const std::string_view> names);
// `"a" or "b"`, `one of "a", "b" or "c"`.
std::string one_of(std::span<const std::string_view> names);
// A received text in quotes, cut short and escaped: a hostile line cannot break the message.
std::string quote_text(std::string_view text, char quote);
// A received value as an error repeats it after "got".
std::string echo(const json& value);
// A JSON integer as uint64, or nothing (a float, a negative, not a number).
std::optional<std::uint64_t> as_u64(const json& value);

// The line as a JSON object, or a rejection: over-long lines, NUL bytes and deep nesting are
// refused before nlohmann parses anything.
json parse_object(std::string_view line);

class Object;

// One received value and its name in messages: "field 'qps'" at the top level, else its path
// ("peers[2].gid"). The readers return the value or reject the line naming the field.
class Value {
 public:
  Value(const json& value, std::string_view op, std::string path)
      : value_(value), op_(op), path_(std::move(path)) {}

  const json& raw() const { return value_; }
  std::string_view op() const { return op_; }
  std::string label() const {
    if (path_.find_first_of(".[") == std::string::npos) return fmt::format("field '{}'", path_);
    return path_;
  }
  [[noreturn]] void fail(std::string_view requirement) const {
    reject(fmt::format("{}: {} {}, got {}", op_, label(), requirement, echo(value_)));
  }

  // An integer in [lo, hi]; a float is refused even when whole, so a sender's bug that turns
  // counts into doubles shows here rather than as a silently rounded value.
  template <class T>
  T integer(std::int64_t lo, std::uint64_t hi, std::string_view requirement = {}) const {
    bool ok = false;
    if (value_.is_number_unsigned()) {
      const auto u = value_.get<std::uint64_t>();
      ok = u <= hi && (lo <= 0 || u >= static_cast<std::uint64_t>(lo));
    } else if (value_.is_number_integer()) {
      const auto s = value_.get<std::int64_t>();
      ok = s >= lo && (s < 0 || static_cast<std::uint64_t>(s) <= hi);
    }
    if (!ok) {
      if (requirement.empty()) fail(fmt::format("must be an integer from {} to {}", lo, hi));
      fail(requirement);
    }
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(value_.get<std::int64_t>());
    } else {
      return static_cast<T>(value_.get<std::uint64_t>());
    }
  }

  // A number in [lo, hi], or (lo, hi] when `above_lo`.
  double number(double lo, bool above_lo, double hi) const {
    const double d = value_.is_number() ? value_.get<double>() : 0;
    if (!value_.is_number() || !std::isfinite(d) || (above_lo ? d <= lo : d < lo) || d > hi) {
      fail(above_lo ? fmt::format("must be a number above {} and at most {}", lo, hi)
                    : fmt::format("must be a number from {} to {}", lo, hi));
    }
    return d;
  }

  // Any finite number. A sender's NaN or infinity reaches us as null (JSON has neither).
  double finite() const {
    const double d = value_.is_number() ? value_.get<double>() : 0;
    if (!value_.is_number() || !std::isfinite(d)) fail("must be a finite number");
    return d;
  }

  bool boolean() const {
    if (!value_.is_boolean()) fail("must be true or false");
    return value_.get<bool>();
  }

  const std::string& string() const {
    if (!value_.is_string()) fail("must be a string");
    return value_.get_ref<const std::string&>();
  }

  // The index of the value in `names`.
  std::size_t choice(std::span<const std::string_view> names) const {
    if (value_.is_string()) {
      const auto& s = value_.get_ref<const std::string&>();
      for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == s) return i;
    }
    fail(fmt::format("must be {}", one_of(names)));
  }

  // An array's length, checked against [lo, hi] before its entries are read, so a huge hostile
  // array costs one comparison.
  std::size_t array(std::size_t lo = 0, std::size_t hi = std::numeric_limits<std::size_t>::max(),
                    std::string_view why = {}) const {
    if (!value_.is_array()) fail("must be an array");
    const std::size_t n = value_.size();
    if (n < lo || n > hi)
      reject(
          fmt::format("{}: {} must have {} to {} entries{}, got {}", op_, label(), lo, hi, why, n));
    return n;
  }
  Value at(std::size_t i) const { return {value_[i], op_, fmt::format("{}[{}]", path_, i)}; }

  Object object(bool all_required) const;

 private:
  const json& value_;
  std::string_view op_;
  std::string path_;
};

// A JSON object being read: refuses unknown keys and, for replies (`all_required`), missing ones.
class Object {
 public:
  Object(const json& object, std::string_view op, std::string path, bool all_required)
      : object_(object), op_(op), path_(std::move(path)), all_required_(all_required) {}

  // Refuses any key outside `known` (and, at the top level, the envelope's v, op, id and session).
  // A typo must not pass as "field absent, default used".
  void only(std::span<const std::string_view> known) const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      const std::string& key = it.key();
      if ((path_.empty() && is_envelope(key)) || contains(known, key)) continue;
      reject(fmt::format("{}: {}unknown field {} ({})", op_, where(), quote_text(key, '\''),
                         known.empty()
                             ? fmt::format("{} takes no fields besides v, op, id and session", op_)
                             : fmt::format("known: {}", join(known))));
    }
  }

  // The field if present; absent is an error when every field is required.
  std::optional<Value> get(std::string_view key) const {
    auto v = optional(key);
    if (!v && all_required_) missing(key);
    return v;
  }
  // The field if present, whatever all_required says.
  std::optional<Value> optional(std::string_view key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) return std::nullopt;
    return Value(*it, op_, path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key));
  }
  Value need(std::string_view key) const {
    auto v = optional(key);
    if (!v) missing(key);
    return *v;
  }

  // Readers that leave `out` (its default) alone when the field is absent and allowed to be.
  template <class T>
  void integer(std::string_view key, T& out, std::int64_t lo, std::uint64_t hi) const {
    if (auto v = get(key)) out = v->integer<T>(lo, hi);
  }
  void finite(std::string_view key, double& out) const {
    if (auto v = get(key)) out = v->finite();
  }
  void boolean(std::string_view key, bool& out) const {
    if (auto v = get(key)) out = v->boolean();
  }
  void string(std::string_view key, std::string& out) const {
    if (auto v = get(key)) out = v->string();
  }

  bool all_required() const { return all_required_; }

 private:
  static bool is_envelope(std::string_view key) {
    return key == "v" || key == "op" || key == "id" || key == "session";
  }
  std::string where() const { return path_.empty() ? std::string() : path_ + ": "; }
  [[noreturn]] void missing(std::string_view key) const {
    reject(fmt::format("{}: {}missing required field '{}'", op_, where(), key));
  }

  const json& object_;
  std::string_view op_;
  std::string path_;
  bool all_required_;
};

inline Object Value::object(bool all_required) const {
  if (!value_.is_object()) fail("must be an object");
  return {value_, op_, path_, all_required};
}

}  // namespace rocehil::agent::wire
