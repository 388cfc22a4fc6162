// The point-to-point test's data check: what left one side against what arrived at the other.
#include "rocehil/run/point_to_point.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace rocehil::run {
namespace {

agent::ResultsEvent with_crcs(std::vector<std::pair<std::uint32_t, std::uint32_t>> source_target) {
  agent::ResultsEvent r;
  std::uint32_t qpn = 0x10;
  for (const auto& [source, target] : source_target) {
    agent::QpResult q;
    q.qpn = qpn++;
    q.source_crc32 = source;
    q.target_crc32 = target;
    r.per_qp.push_back(q);
  }
  return r;
}

TEST(PointToPointDataCheck, ComparesWhatLeftWithWhatArrivedPerQpAndDirection) {
  const agent::ResultsEvent client = with_crcs({{0xaa, 0x11}, {0xbb, 0x22}});
  const agent::ResultsEvent server = with_crcs({{0x11, 0xaa}, {0x23, 0xbc}});
  const DataCheck one_way = check_data(client, server, false);
  EXPECT_TRUE(one_way.checked);
  EXPECT_EQ(one_way.transfers, 2u);
  EXPECT_EQ(one_way.intact, 1u);
  ASSERT_EQ(one_way.problems.size(), 1u);
  EXPECT_EQ(one_way.problems[0],
            "QP 0x11 -> QP 0x11: the bytes sent have CRC-32 0x000000bb but 0x000000bc arrived");
  const DataCheck both = check_data(client, server, true);
  EXPECT_EQ(both.transfers, 4u);
  EXPECT_EQ(both.intact, 2u);  // 0x11 back to the client's target, 0x23 != 0x22
}

TEST(PointToPointDataCheck, MissingChecksumsMeanNotChecked) {
  agent::ResultsEvent client = with_crcs({{0xaa, 0x11}});
  client.per_qp[0].source_crc32.reset();  // GPU memory
  const DataCheck check = check_data(client, with_crcs({{0x11, 0xaa}}), false);
  EXPECT_FALSE(check.checked);
  EXPECT_EQ(check.transfers, 0u);
}

}  // namespace
}  // namespace rocehil::run
