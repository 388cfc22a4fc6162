#include "rocehil/switches/oid.hpp"

#include <gtest/gtest.h>

#include "rocehil/switches/varbind.hpp"

namespace rocehil::switches {
namespace {

TEST(Oid, ParsesAndPrintsDottedForms) {
  EXPECT_EQ(parse_oid(".1.3.6.1.2.1.1.5.0"), (Oid{1, 3, 6, 1, 2, 1, 1, 5, 0}));
  EXPECT_EQ(parse_oid("1.0.8802"), (Oid{1, 0, 8802}));
  EXPECT_EQ(to_string(Oid{1, 3, 6, 4294967295u}), "1.3.6.4294967295");
  for (const char* bad : {"", ".", "1..3", "1.3.", "1.x", "1.3.4294967296", " 1.3"})
    EXPECT_FALSE(parse_oid(bad).has_value()) << bad;
}

TEST(Oid, PrefixAndIndex) {
  Oid full = mib::pfc_priority_indications;
  full.push_back(17);
  full.push_back(3);
  EXPECT_TRUE(starts_with(full, mib::pfc_priority_indications));
  EXPECT_FALSE(starts_with(full, mib::pfc_priority_requests));
  EXPECT_FALSE(starts_with(mib::pfc_priority_indications, full));
  EXPECT_EQ(index_after(full, mib::pfc_priority_indications), (Oid{17, 3}));
}

TEST(Value, OnlyCounterTypesCount) {
  EXPECT_TRUE(is_count({Value::Type::counter64, 1, {}}));
  EXPECT_TRUE(is_count({Value::Type::gauge32, 1, {}}));
  EXPECT_FALSE(is_count({Value::Type::integer, 1, {}}));
  EXPECT_FALSE(is_count({Value::Type::octets, 0, "12"}));
  EXPECT_EQ(width_bits({Value::Type::counter32, 0, {}}), 32);
  EXPECT_EQ(width_bits({Value::Type::counter64, 0, {}}), 64);
}

}  // namespace
}  // namespace rocehil::switches
