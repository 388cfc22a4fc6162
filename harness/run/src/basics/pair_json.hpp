#pragma once

// A pair of processes two agents ran for a case (perftest's, iperf3's) as run.json keeps it: each
// side's agent, request and results as the agent protocol writes them, and the failure.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::run {

// A request or reply as the protocol writes it, minus the envelope: one definition of the field
// names for the wire and for run.json.
inline nlohmann::json protocol_body_json(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line);
  j.erase("v");
  j.erase("op");
  return j;
}

// `Side` has name, hello and an optional results event; `Failure` side and message.
template <typename Side, typename Request, typename Failure>
nlohmann::json pair_json(std::string_view engine, bool interrupted, const Side& client,
                         const Request& client_request, const Side& server,
                         const Request& server_request, const std::optional<Failure>& failure) {
  const auto side = [](const Side& s, const Request& request) {
    nlohmann::json j{{"name", s.name},
                     {"agent_version", s.hello.version},
                     {"host", s.hello.host},
                     {"request", protocol_body_json(
                                     agent::to_json_line(agent::Request{std::nullopt, request}))}};
    j["results"] =
        s.results ? protocol_body_json(agent::to_json_line(agent::Reply{std::nullopt, *s.results}))
                  : nlohmann::json(nullptr);
    return j;
  };
  return {
      {"schema_version", 1},
      {"engine", engine},
      {"interrupted", interrupted},
      {"client", side(client, client_request)},
      {"server", side(server, server_request)},
      {"failure", failure ? nlohmann::json{{"side", failure->side}, {"message", failure->message}}
                          : nlohmann::json(nullptr)}};
}

}  // namespace rocehil::run
