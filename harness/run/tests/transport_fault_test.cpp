#include "rocehil/run/transport_fault.hpp"

#include <gtest/gtest.h>

namespace rocehil::run {
namespace {

using traffic::WcStatus;

agent::ResultsEvent failed(std::uint64_t errors, std::string first,
                           std::optional<WcStatus> status) {
  agent::ResultsEvent r;
  r.workload = agent::Workload::collective;
  r.errors = errors;
  r.first_error = std::move(first);
  r.first_error_status = status;
  return r;
}

// An uplink cut under a collective: the ranks whose QPs cross it run out of retries, the others
// wait and are stopped without errors.
TEST(FabricFault, RetriesThatRanOutFailTheFabric) {
  const agent::ResultsEvent quiet;
  const auto r3 = failed(4, "QP 0x11: retry_exceeded", WcStatus::retry_exceeded);
  const auto r4 = failed(3, "QP 0x22: retry_exceeded", WcStatus::retry_exceeded);
  const auto fault = fabric_fault({{"rank 0 (h1)", "", &quiet},
                                   {"rank 3 (h3)", "rank 4 (h4)", &r3},
                                   {"rank 4 (h4)", "rank 3 (h3)", &r4},
                                   {"rank 5 (h5)", "", &quiet}},
                                  "h4");
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->fault, reports::Fault::fabric);
  EXPECT_EQ(fault->host, "h4");
  EXPECT_EQ(fault->phase, "traffic");
  EXPECT_EQ(fault->message,
            "the fabric: QP 0x11: retry_exceeded (rank 3 (h3) -> rank 4 (h4)); 7 transport "
            "errors on 2 of 4 sides");
}

// A QP that failed at one end leaves its peer's requests unanswered: the peer's retries run out,
// and the fabric is not to blame for it.
TEST(FabricFault, AHostsErrorAnywhereKeepsItOffTheFabric) {
  const auto local = failed(1, "QP 0x11: local_protection_error", WcStatus::local_protection_error);
  const auto peer = failed(2, "QP 0x22: retry_exceeded", WcStatus::retry_exceeded);
  EXPECT_FALSE(fabric_fault({{"rank 0 (h1)", "", &peer}, {"rank 1 (h2)", "", &local}}, ""));
  for (const WcStatus s :
       {WcStatus::flushed, WcStatus::rnr_retry_exceeded, WcStatus::remote_access_error,
        WcStatus::remote_invalid_request, WcStatus::local_length_error}) {
    const auto other = failed(1, "QP 0x11: x", s);
    EXPECT_FALSE(fabric_fault({{"client (h1)", "", &other}}, "")) << traffic::to_string(s);
  }
}

// The side that waited on a peer whose retries ran out only saw silence: that tells neither way.
TEST(FabricFault, AnErrorWithoutAStatusTellsNeitherWay) {
  const auto silence = failed(1, "QP 0x5: no answer within 10 s", std::nullopt);
  const auto retried = failed(1, "QP 0x6: retry_exceeded", WcStatus::retry_exceeded);
  const auto fault =
      fabric_fault({{"client (h1)", "server (h2)", &retried}, {"server (h2)", "", &silence}}, "h2");
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->message,
            "the fabric: QP 0x6: retry_exceeded (client (h1) -> server (h2)); 2 transport errors "
            "on 2 of 2 sides");
  // Alone, or from agents that send no status, it is not the fabric's.
  EXPECT_FALSE(fabric_fault({{"server (h2)", "", &silence}}, ""));
  const auto old_agent = failed(1, "QP 0x6: retry_exceeded", std::nullopt);
  EXPECT_FALSE(fabric_fault({{"client (h1)", "", &old_agent}}, ""));
}

TEST(FabricFault, NoErrorsNoFault) {
  const agent::ResultsEvent quiet;
  EXPECT_FALSE(fabric_fault({{"client (h1)", "", &quiet}, {"server (h2)", "", &quiet}}, ""));
  EXPECT_FALSE(fabric_fault({}, ""));
}

}  // namespace
}  // namespace rocehil::run
