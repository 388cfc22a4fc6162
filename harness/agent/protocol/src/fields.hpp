#pragma once

// A message is described once, as a list of fields: its name on the wire, where it lives in the
// struct, the rule its value follows, and whether it may be absent. Reading (with every check
// and its message) and writing (in the listed order) are both driven from that list, so a field
// cannot be added to one side and forgotten on the other.
//
//   template <> struct Describe<StartRequest> {
//     static const auto& fields() {
//       static const auto f = std::tuple{field("at_ns", Member<&StartRequest::at_ns>{},
//                                              Int<std::int64_t>{0, max_i64}), ...};
//       return f;
//     }
//     static void check(const Object& o, StartRequest& s);  // optional: rules across fields
//   };

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "json_reader.hpp"

namespace rocehil::agent::wire {

// Written with the keys in the listed order (v, op, id first) rather than std::map's
// alphabetical one; the order carries no meaning and reading ignores it.
using ordered = nlohmann::ordered_json;

// When a field may be absent.
enum class Presence {
  usual,     // absent keeps the default in requests; a reply must carry it
  required,  // never absent
  extra,     // may be absent in requests and replies alike; written only when set
  checked,   // read by the message's check(), after the other fields (its rule depends on them)
};

template <class Message>
struct Describe;  // specialised for every message and nested object

// Where a field lives: s.*M, or s.*M1.*M2 for a field of a member.
template <auto M>
struct Member {
  template <class S>
  constexpr auto& operator()(S& s) const {
    return s.*M;
  }
};
template <auto M1, auto M2>
struct MemberOf {
  template <class S>
  constexpr auto& operator()(S& s) const {
    return (s.*M1).*M2;
  }
};

struct Always {
  template <class S>
  constexpr bool operator()(const S&) const {
    return true;
  }
};

template <class Get, class Rule, class When = Always>
struct Field {
  std::string_view name;
  Get get;
  Rule rule;
  Presence presence = Presence::usual;
  When write_when{};  // written only when this holds for the message
};

template <class Get, class Rule>
constexpr Field<Get, Rule> field(std::string_view name, Get get, Rule rule,
                                 Presence presence = Presence::usual) {
  return {name, get, rule, presence, {}};
}
template <class Get, class Rule, class When>
constexpr Field<Get, Rule, When> field_when(std::string_view name, Get get, Rule rule, When when,
                                            Presence presence = Presence::usual) {
  return {name, get, rule, presence, when};
}

// ---- rules: read(value, strict) checks and returns; write(x) gives the JSON ----
// `strict` is the enclosing object's: replies must carry every usual field, requests need not.

template <class T>
struct Int {
  std::int64_t lo;
  std::uint64_t hi;
  T read(const Value& v, bool) const { return v.integer<T>(lo, hi); }
  ordered write(T x) const { return x; }
};

// A number in [lo, hi], or (lo, hi] when `above_lo`.
struct Number {
  double lo;
  bool above_lo;
  double hi;
  double read(const Value& v, bool) const { return v.number(lo, above_lo, hi); }
  ordered write(double x) const { return x; }
};

struct Finite {
  double read(const Value& v, bool) const { return v.finite(); }
  ordered write(double x) const { return x; }
};

struct Bool {
  bool read(const Value& v, bool) const { return v.boolean(); }
  ordered write(bool x) const { return x; }
};

struct Text {
  std::string read(const Value& v, bool) const { return v.string(); }
  ordered write(const std::string& x) const { return x; }
};

// One of `names`, kept as its text.
struct Choice {
  std::span<const std::string_view> names;
  std::string read(const Value& v, bool) const { return std::string(names[v.choice(names)]); }
  ordered write(const std::string& x) const { return x; }
};

// One of `names`, kept as the enum whose values are their indexes.
template <class E>
struct EnumChoice {
  std::span<const std::string_view> names;
  E read(const Value& v, bool) const { return static_cast<E>(v.choice(names)); }
  ordered write(E x) const {
    const auto i = static_cast<std::size_t>(x);
    return std::string(i < names.size() ? names[i] : "?");
  }
};

// A value with a format of its own: a reader that checks it, and a writer (plain when null).
template <class T>
struct Custom {
  T (*read_value)(const Value&);
  ordered (*write_value)(const T&) = nullptr;
  T read(const Value& v, bool) const { return read_value(v); }
  // A type JSON cannot hold as it is must come with its writer.
  ordered write(const T& x) const {
    if constexpr (std::is_constructible_v<ordered, const T&>) {
      if (write_value == nullptr) return ordered(x);
    }
    return write_value(x);
  }
};

// An array whose length is checked before its entries are read.
template <class Rule>
struct List {
  Rule entry;
  std::size_t lo = 0;
  std::size_t hi = std::numeric_limits<std::size_t>::max();
  std::string_view why = {};  // said after the bounds: " (one per QP)"

  auto read(const Value& v, bool strict) const {
    const std::size_t n = v.array(lo, hi, why);
    std::vector<decltype(entry.read(v, strict))> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(entry.read(v.at(i), strict));
    return out;
  }
  template <class T>
  ordered write(const std::vector<T>& xs) const {
    ordered out = ordered::array();
    for (const auto& x : xs) out.push_back(entry.write(x));
    return out;
  }
};

// An object described by Describe<S>.
enum class Strictness { inherit, lenient, strict };

template <class S>
S read_message(const Object& o);
template <class S>
void write_fields(ordered& j, const S& s);

template <class S>
struct Nested {
  Strictness strictness = Strictness::inherit;
  S read(const Value& v, bool strict) const {
    return read_message<S>(
        v.object(strictness == Strictness::inherit ? strict : strictness == Strictness::strict));
  }
  ordered write(const S& s) const {
    ordered j = ordered::object();
    write_fields(j, s);
    return j;
  }
};

// ---- driving them ----

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class... F>
constexpr auto names_of(const std::tuple<F...>& fields) {
  return std::apply(
      [](const auto&... f) { return std::array<std::string_view, sizeof...(F)>{f.name...}; },
      fields);
}

template <class S, class F>
void read_field(const Object& o, S& s, const F& f) {
  if (f.presence == Presence::checked) return;
  const std::optional<Value> v = f.presence == Presence::usual      ? o.get(f.name)
                                 : f.presence == Presence::required ? o.need(f.name)
                                                                    : o.optional(f.name);
  if (v) f.get(s) = f.rule.read(*v, o.all_required());
}

// Refuses unknown fields, reads every described one in order, then the cross-field checks.
template <class S>
S read_message(const Object& o) {
  const auto& fields = Describe<S>::fields();
  static const auto names = names_of(fields);
  o.only(names);
  S s{};
  std::apply([&](const auto&... f) { (read_field(o, s, f), ...); }, fields);
  if constexpr (requires { Describe<S>::check(o, s); }) Describe<S>::check(o, s);
  return s;
}

template <class S, class F>
void write_field(ordered& j, const S& s, const F& f) {
  if (!f.write_when(s)) return;
  const auto& value = f.get(s);
  if constexpr (is_optional<std::decay_t<decltype(value)>>::value) {
    if (value) j[std::string(f.name)] = f.rule.write(*value);
  } else {
    j[std::string(f.name)] = f.rule.write(value);
  }
}

template <class S>
void write_fields(ordered& j, const S& s) {
  std::apply([&](const auto&... f) { (write_field(j, s, f), ...); }, Describe<S>::fields());
}

}  // namespace rocehil::agent::wire
