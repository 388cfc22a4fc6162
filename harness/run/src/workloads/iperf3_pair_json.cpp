#include "basics/pair_json.hpp"
#include "rocehil/run/iperf3_pair.hpp"

namespace rocehil::run {

nlohmann::json iperf3_pair_json(const Iperf3PairConfig& config, const Iperf3PairResult& result) {
  return pair_json("iperf3", result.interrupted, result.client, config.client, result.server,
                   config.server, iperf3_failure(result));
}

}  // namespace rocehil::run
