#pragma once

// The controller's side of a conversation with one agent, shared by the point-to-point test and
// the collective runner: wait for a given reply, and check that an agent can do the work.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace rocehil::run::conversation {

// Waits for a reply of type T from `link`; stats on the way go to `on_stats`. An error reply is
// bad input (the agent refused what was asked), silence or another reply is infrastructure.
template <typename T>
T expect(remote::AgentLink& link, std::string_view step, std::chrono::seconds timeout,
         const std::function<void(const agent::StatsEvent&)>& on_stats = {}) {
  const auto deadline = remote::AgentLink::Clock::now() + timeout;
  while (true) {
    std::optional<agent::Reply> reply = link.receive(deadline);
    if (!reply)
      throw Error(ExitCode::infrastructure, fmt::format("agent on {}: no answer to {} within {} s",
                                                        link.name(), step, timeout.count()));
    if (auto* error = std::get_if<agent::ErrorReply>(&reply->body))
      throw input_error(
          fmt::format("agent on {} refused {}: {}", link.name(), step, error->message));
    if (auto* stats = std::get_if<agent::StatsEvent>(&reply->body)) {
      if (on_stats) on_stats(*stats);
      continue;
    }
    if (auto* wanted = std::get_if<T>(&reply->body)) return std::move(*wanted);
    throw Error(ExitCode::infrastructure,
                fmt::format("agent on {}: unexpected reply {} while waiting for {}", link.name(),
                            reply->body.index(), step));
  }
}

// The agent speaks this controller's protocol.
inline void check_protocol(const remote::AgentLink& link, const agent::HelloReply& hello) {
  if (hello.protocol != agent::agent_protocol_version)
    throw Error(
        ExitCode::infrastructure,
        fmt::format("agent on {} speaks protocol {} (rocehil {}), this controller {}: "
                    "install the same rocehil on both (rocehil inventory check --deploy)",
                    link.name(), hello.protocol, hello.version, agent::agent_protocol_version));
}

// The agent speaks this protocol and has `provider`.
inline void check_hello(const remote::AgentLink& link, const agent::HelloReply& hello,
                        const std::string& provider) {
  check_protocol(link, hello);
  if (std::find(hello.providers.begin(), hello.providers.end(), provider) == hello.providers.end())
    throw input_error(fmt::format("agent on {} (rocehil {}) has no '{}' provider; it has: {}",
                                  link.name(), hello.version, provider,
                                  fmt::join(hello.providers, ", ")));
}

}  // namespace rocehil::run::conversation
