#include <string>

#include "rocehil/run/iperf3_pair.hpp"

namespace rocehil::run {

namespace {

// Requests and results as the agent protocol writes them, minus the envelope: one definition of
// the field names for the wire and for run.json.
nlohmann::json iperf3_body_json(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line);
  j.erase("v");
  j.erase("op");
  return j;
}

}  // namespace

nlohmann::json iperf3_pair_json(const Iperf3PairConfig& config, const Iperf3PairResult& result) {
  const auto side = [](const Iperf3Side& s, const agent::Iperf3Request& request) {
    nlohmann::json j{
        {"name", s.name},
        {"agent_version", s.hello.version},
        {"host", s.hello.host},
        {"request", iperf3_body_json(agent::to_json_line(agent::Request{std::nullopt, request}))}};
    j["results"] =
        s.results ? iperf3_body_json(agent::to_json_line(agent::Reply{std::nullopt, *s.results}))
                  : nlohmann::json(nullptr);
    return j;
  };
  const auto failure = iperf3_failure(result);
  return {
      {"schema_version", 1},
      {"engine", "iperf3"},
      {"interrupted", result.interrupted},
      {"client", side(result.client, config.client)},
      {"server", side(result.server, config.server)},
      {"failure", failure ? nlohmann::json{{"side", failure->side}, {"message", failure->message}}
                          : nlohmann::json(nullptr)}};
}

}  // namespace rocehil::run
