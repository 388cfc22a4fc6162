#include "rocehil/inventory/selection.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"

namespace rocehil::inventory {
namespace {

// 2 racks of 4: gpu001-004 in r1 behind l1, gpu005-008 in r2 behind l2; gpu007 is soft; odd
// hosts carry label "odd"; every host has rail 0, gpu001-004 also rail 1.
Inventory lab() {
  Inventory inv;
  for (int i = 1; i <= 8; ++i) {
    Host h;
    h.name = "gpu00" + std::to_string(i);
    h.rack = i <= 4 ? "r1" : "r2";
    h.labels = {"gpu"};
    if (i % 2 == 1) h.labels.push_back("odd");
    h.provider = i == 7 ? Provider::soft : Provider::verbs;
    Nic n;
    n.rail = 0;
    h.nics.push_back(n);
    if (i <= 4) {
      n.rail = 1;
      h.nics.push_back(n);
    }
    inv.hosts.push_back(h);
  }
  inv.racks = {Rack{"r1", "l1", {}, {}}, Rack{"r2", "l2", {}, {}}};
  return inv;
}

std::string names(const Inventory& inv, std::string_view expr) {
  std::string out;
  for (const Host* h : select_hosts(inv, expr)) {
    if (!out.empty()) out += ' ';
    out += h->name.substr(3);
  }
  return out;
}

std::string error_of(const Inventory& inv, std::string_view expr) {
  try {
    select_hosts(inv, expr);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    return e.what();
  }
  return "no error";
}

TEST(Selection, Atoms) {
  const Inventory inv = lab();
  EXPECT_EQ(names(inv, "all"), "001 002 003 004 005 006 007 008");
  EXPECT_EQ(names(inv, "gpu003"), "003");
  EXPECT_EQ(names(inv, "gpu00[2-3]"), "002 003");
  EXPECT_EQ(names(inv, "gpu00?"), "001 002 003 004 005 006 007 008");
  EXPECT_EQ(names(inv, "name:*8"), "008");
  EXPECT_EQ(names(inv, "label:odd"), "001 003 005 007");
  EXPECT_EQ(names(inv, "rack:r2"), "005 006 007 008");
  EXPECT_EQ(names(inv, "rail:1"), "001 002 003 004");
  EXPECT_EQ(names(inv, "leaf:l2"), "005 006 007 008");
  EXPECT_EQ(names(inv, "provider:soft"), "007");
}

TEST(Selection, UnionIntersectionNegationInInventoryOrder) {
  const Inventory inv = lab();
  EXPECT_EQ(names(inv, "gpu008, gpu001 ,gpu008"), "001 008");
  EXPECT_EQ(names(inv, "label:odd&rack:r1"), "001 003");
  EXPECT_EQ(names(inv, "rack:r2&!provider:soft"), "005 006 008");
  EXPECT_EQ(names(inv, "!label:odd"), "002 004 006 008");
}

TEST(Selection, LimitsPackedAndFragmented) {
  const Inventory inv = lab();
  EXPECT_EQ(names(inv, "rack:r1@2,rack:r2@2"), "001 002 005 006");
  EXPECT_EQ(names(inv, "label:gpu@1/rack"), "001 005");
  EXPECT_EQ(names(inv, "label:odd@2/rack"), "001 003 005 007");
  EXPECT_EQ(names(inv, "all@3"), "001 002 003");
}

TEST(Selection, ErrorsNameTheProblemAndTheFix) {
  const Inventory inv = lab();
  EXPECT_EQ(error_of(inv, "label:gpu&rak:r1"),
            "--hosts 'label:gpu&rak:r1': unknown key 'rak' at column 11; use name, label, rack, "
            "rail, leaf or provider");
  EXPECT_EQ(error_of(inv, "h9"),
            "--hosts 'h9': 'h9' matches no host; 'rocehil inventory show FILE --hosts all' lists "
            "them");
  EXPECT_EQ(error_of(inv, "rack:r1@8"),
            "--hosts 'rack:r1@8': 'rack:r1' wants 8 hosts but 4 match; lower the count or widen "
            "the selection");
  EXPECT_EQ(error_of(inv, "gpu001,,gpu002"),
            "--hosts 'gpu001,,gpu002': empty term at column 8; remove the extra ','");
  EXPECT_NE(error_of(inv, "").find("is empty"), std::string::npos);
  EXPECT_NE(error_of(inv, "rack:r1@x").find("is not a count"), std::string::npos);
  EXPECT_NE(error_of(inv, "rail:one").find("is not a number"), std::string::npos);
  EXPECT_NE(error_of(inv, "provider:rdma").find("use provider:soft or provider:verbs"),
            std::string::npos);
  EXPECT_NE(error_of(inv, "gpu00[8-9]").find("host 'gpu009'"), std::string::npos);
  EXPECT_NE(error_of(inv, "gpu[1-").find("without ']'"), std::string::npos);
  EXPECT_NE(error_of(inv, "label:gpu@5/rack").find("rack 'r1' has 4"), std::string::npos);
  EXPECT_NE(error_of(inv, "label:odd&rack:r9").find("'rack:r9' matches no host"),
            std::string::npos);
}

TEST(Glob, StarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("gpu*", "gpu001"));
  EXPECT_TRUE(glob_match("*01", "gpu001"));
  EXPECT_TRUE(glob_match("g?u*1", "gpu001"));
  EXPECT_FALSE(glob_match("gpu", "gpu001"));
  EXPECT_FALSE(glob_match("gpu?", "gpu"));
  // No exponential backtracking: this returns at once.
  EXPECT_FALSE(glob_match("a*a*a*a*a*a*a*a*b", std::string(5000, 'a')));
}

TEST(Selection, ScalesToAWholeSite) {
  Inventory inv;
  inv.hosts.resize(32768);
  for (std::size_t i = 0; i < inv.hosts.size(); ++i) {
    inv.hosts[i].name = fmt::format("gpu{}", 100000 + i);
    inv.hosts[i].rack = fmt::format("r{}", i / 32);
    inv.hosts[i].labels = {"gpu"};
  }
  EXPECT_EQ(select_hosts(inv, "all").size(), 32768u);
  const auto one_per_rack = select_hosts(inv, "label:gpu@1/rack");
  ASSERT_EQ(one_per_rack.size(), 1024u);
  EXPECT_EQ(one_per_rack[1]->name, "gpu100032");
  EXPECT_EQ(select_hosts(inv, "gpu[100000-100999]").size(), 1000u);
}

}  // namespace
}  // namespace rocehil::inventory
