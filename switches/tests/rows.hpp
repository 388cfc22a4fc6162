#pragma once

// Builders of agent rows for the tests: an OID as a column plus its index, and a typed value.

#include <string>

#include "rocehil/switches/varbind.hpp"

namespace rocehil::switches::test {

inline Oid at(const Oid& column, std::initializer_list<std::uint32_t> index) {
  Oid o = column;
  o.insert(o.end(), index);
  return o;
}
inline Varbind c64(const Oid& column, std::initializer_list<std::uint32_t> index, std::uint64_t v) {
  return {at(column, index), {Value::Type::counter64, v, {}}};
}
inline Varbind c32(const Oid& column, std::initializer_list<std::uint32_t> index, std::uint64_t v) {
  return {at(column, index), {Value::Type::counter32, v, {}}};
}
inline Varbind text(const Oid& column, std::initializer_list<std::uint32_t> index, std::string v) {
  return {at(column, index), {Value::Type::octets, 0, std::move(v)}};
}
inline Varbind integer(const Oid& column, std::initializer_list<std::uint32_t> index, long v) {
  return {at(column, index), {Value::Type::integer, static_cast<std::uint64_t>(v), {}}};
}
inline Varbind ticks(std::uint64_t v) {
  return {at(mib::sys_uptime, {0}), {Value::Type::timeticks, v, {}}};
}

}  // namespace rocehil::switches::test
