#include "shared/text_table.hpp"

#include <gtest/gtest.h>

namespace rocehil::cli {
namespace {

TEST(TextTable, AlignsColumns) {
  TextTable t({{"name", TextTable::Align::left}, {"count"}});
  t.add_row({"a", "1"});
  t.add_row({"longer", "12345"});
  EXPECT_EQ(t.render(""),
            "name    count\n"
            "------  -----\n"
            "a           1\n"
            "longer  12345\n");
}

TEST(TextTable, RowOfTheWrongWidthIsAProgrammingError) {
  TextTable t({{"a"}, {"b"}});
  EXPECT_THROW(t.add_row({"1"}), std::logic_error);
}

}  // namespace
}  // namespace rocehil::cli
