#include "rocehil/common/file_safe_name.hpp"

#include <gtest/gtest.h>

namespace rocehil {
namespace {

TEST(FileSafeName, KeepsLettersDigitsDotsUnderscoresAndDashes) {
  EXPECT_EQ(file_safe_name("smoke"), "smoke");
  EXPECT_EQ(file_safe_name("Lab-01_a.b"), "Lab-01_a.b");
  EXPECT_EQ(file_safe_name("20261121T184501Z-smoke"), "20261121T184501Z-smoke");
}

TEST(FileSafeName, ReplacesEverythingElseOneForOne) {
  EXPECT_EQ(file_safe_name("s1 mirror;rm -rf /"), "s1_mirror_rm_-rf__");
  EXPECT_EQ(file_safe_name("a/b\\c$(id)`x`"), "a_b_c__id__x_");
  EXPECT_EQ(file_safe_name("size=1M,qps=2"), "size_1M_qps_2");
  EXPECT_EQ(file_safe_name("caf\xc3\xa9\n"), "caf___") << "each byte of UTF-8, and a newline";
  EXPECT_EQ(file_safe_name("lab fabric/2", '-'), "lab-fabric-2");
}

TEST(FileSafeName, KeepsWhatTheCallerAlsoAllows) {
  EXPECT_EQ(file_safe_name("size=1M,qps=2", '_', "="), "size=1M_qps=2");
  EXPECT_EQ(file_safe_name("a=b", '-'), "a-b");
}

TEST(FileSafeName, NeverEmptyNeverDotsNeverAnOption) {
  EXPECT_EQ(file_safe_name(""), "_");
  EXPECT_EQ(file_safe_name("."), "_");
  EXPECT_EQ(file_safe_name(".."), "_.");
  EXPECT_EQ(file_safe_name("../lab fabric", '-'), "_.-lab-fabric");
  EXPECT_EQ(file_safe_name("-rf"), "_rf");
  EXPECT_EQ(file_safe_name("/x", '-'), "_x") << "a replacement that would lead as an option";
  EXPECT_EQ(file_safe_name(".hidden"), "_hidden");
}

}  // namespace
}  // namespace rocehil
