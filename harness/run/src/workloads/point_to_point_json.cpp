#include "rocehil/run/result_json.hpp"

namespace rocehil::run {

namespace {

// The results as the agent protocol writes them, minus the envelope: one definition of the
// field names for the wire and for --json.
nlohmann::json results_json(const agent::ResultsEvent& results) {
  nlohmann::json j =
      nlohmann::json::parse(agent::to_json_line(agent::Reply{std::nullopt, results}));
  j.erase("v");
  j.erase("op");
  return j;
}

}  // namespace

nlohmann::json point_to_point_json(const PointToPointConfig& config,
                                   const PointToPointResult& result) {
  const auto side = [](const SideReport& r, const agent::SetupRequest& setup) {
    return nlohmann::json{{"name", r.name},
                          {"address", setup.address},
                          {"provider", setup.provider},
                          {"agent_version", r.hello.version},
                          {"host", r.hello.host},
                          {"results", results_json(r.results)}};
  };
  nlohmann::json data{{"checked", result.data.checked},
                      {"transfers", result.data.transfers},
                      {"intact", result.data.intact},
                      {"problems", result.data.problems}};
  const agent::SetupRequest& c = config.client;
  return {{"schema_version", 1},
          {"test",
           {{"workload", to_string(c.workload)},
            {"opcode", to_string(c.opcode)},
            {"bidirectional", c.bidirectional},
            {"qps", c.qps},
            {"message_bytes", c.message_bytes},
            {"tx_depth", c.tx_depth},
            {"mtu", c.mtu},
            {"ack_timeout_us", c.ack_timeout_us},
            {"traffic_class", c.traffic_class},
            {"seconds", config.start.seconds},
            {"iterations", config.start.iterations},
            {"warmup_seconds", config.start.warmup_seconds},
            {"warmup_iterations", config.start.warmup_iterations}}},
          {"interrupted", result.interrupted},
          {"client", side(result.client, config.client)},
          {"server", side(result.server, config.server)},
          {"data", data}};
}

}  // namespace rocehil::run
