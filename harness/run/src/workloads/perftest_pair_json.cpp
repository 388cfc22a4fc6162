#include "basics/pair_json.hpp"
#include "rocehil/run/result_json.hpp"

namespace rocehil::run {

nlohmann::json perftest_pair_json(const PerftestPairConfig& config,
                                  const PerftestPairResult& result) {
  return pair_json("perftest", result.interrupted, result.client, config.client, result.server,
                   config.server, perftest_failure(result));
}

}  // namespace rocehil::run
