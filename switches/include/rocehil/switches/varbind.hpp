#pragma once

#include <cstdint>
#include <string>

#include "rocehil/switches/oid.hpp"

namespace rocehil::switches {

// One value an agent returned, reduced to what rocehil reads: numbers and octet strings.
struct Value {
  enum class Type {
    integer,
    counter32,
    gauge32,
    timeticks,
    counter64,
    octets,
    object_id,
    ip_address,
    null,
    other,
  };
  Type type = Type::null;
  std::uint64_t number = 0;  // integer (as its two's complement), counters, gauges, ticks
  std::string text;          // octets; object_id and ip_address in dotted form
};

struct Varbind {
  Oid oid;
  Value value;
};

// True for the types a counter may have: Counter32, Counter64, Gauge32 and TimeTicks (several
// agents serve counters as Gauge32; an octet string or an integer is never read as a count).
bool is_count(const Value& v);
// The counter's width in bits: 64 for Counter64, 32 for the others.
int width_bits(const Value& v);

}  // namespace rocehil::switches
