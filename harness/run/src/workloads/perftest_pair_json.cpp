#include "rocehil/run/result_json.hpp"

namespace rocehil::run {

namespace {

// Requests and results as the agent protocol writes them, minus the envelope: one definition of
// the field names for the wire and for run.json.
nlohmann::json body_json(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line);
  j.erase("v");
  j.erase("op");
  return j;
}

}  // namespace

nlohmann::json perftest_pair_json(const PerftestPairConfig& config,
                                  const PerftestPairResult& result) {
  const auto side = [](const PerftestSide& s, const agent::PerftestRequest& request) {
    nlohmann::json j{
        {"name", s.name},
        {"agent_version", s.hello.version},
        {"host", s.hello.host},
        {"request", body_json(agent::to_json_line(agent::Request{std::nullopt, request}))}};
    j["results"] = s.results
                       ? body_json(agent::to_json_line(agent::Reply{std::nullopt, *s.results}))
                       : nlohmann::json(nullptr);
    return j;
  };
  const auto failure = perftest_failure(result);
  return {
      {"schema_version", 1},
      {"engine", "perftest"},
      {"interrupted", result.interrupted},
      {"client", side(result.client, config.client)},
      {"server", side(result.server, config.server)},
      {"failure", failure ? nlohmann::json{{"side", failure->side}, {"message", failure->message}}
                          : nlohmann::json(nullptr)}};
}

}  // namespace rocehil::run
