#include "rocehil/traffic/ring_plan.hpp"

#include <fmt/format.h>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic {

namespace {

int mod(long long a, int n) {
  const long long m = a % n;
  return static_cast<int>(m < 0 ? m + n : m);
}

}  // namespace

std::string_view to_string(RingCollective c) {
  switch (c) {
    case RingCollective::allreduce: return "allreduce";
    case RingCollective::reduce_scatter: return "reduce_scatter";
    case RingCollective::allgather: return "allgather";
  }
  return "?";
}

std::optional<RingCollective> ring_collective_from_name(std::string_view name) {
  for (const auto c :
       {RingCollective::allreduce, RingCollective::reduce_scatter, RingCollective::allgather})
    if (to_string(c) == name) return c;
  return std::nullopt;
}

double busbw_factor(RingCollective c, int ranks) {
  const double n = ranks;
  return c == RingCollective::allreduce ? 2 * (n - 1) / n : (n - 1) / n;
}

RingPlan::RingPlan(RingCollective collective, int ranks, std::uint64_t bytes)
    : collective_(collective), ranks_(ranks), bytes_(bytes) {
  if (ranks < 2)
    throw input_error(
        fmt::format("a ring {} needs at least 2 ranks, got {}", to_string(collective), ranks));
}

int RingPlan::steps() const {
  return collective_ == RingCollective::allreduce ? 2 * (ranks_ - 1) : ranks_ - 1;
}

Chunk RingPlan::chunk(int index) const {
  const auto n = static_cast<std::uint64_t>(ranks_);
  const auto i = static_cast<std::uint64_t>(index);
  const std::uint64_t base = bytes_ / n;
  const std::uint64_t extra = bytes_ % n;  // the first `extra` chunks carry one byte more
  return {index, i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

RingStep RingPlan::step(int rank, int step) const {
  if (rank < 0 || rank >= ranks_ || step < 0 || step >= steps())
    throw input_error(fmt::format("ring {}: rank {} step {} is outside {} ranks x {} steps",
                                  to_string(collective_), rank, step, ranks_, steps()));
  RingStep s;
  s.send_to = mod(rank + 1, ranks_);
  s.receive_from = mod(rank - 1, ranks_);
  const bool reducing = collective_ == RingCollective::reduce_scatter ||
                        (collective_ == RingCollective::allreduce && step < ranks_ - 1);
  if (reducing) {
    s.send = chunk(mod(static_cast<long long>(rank) - step - 1, ranks_));
    s.receive = chunk(mod(static_cast<long long>(rank) - step - 2, ranks_));
    s.reduce = true;
  } else {
    const int g = collective_ == RingCollective::allreduce ? step - (ranks_ - 1) : step;
    s.send = chunk(mod(static_cast<long long>(rank) - g, ranks_));
    s.receive = chunk(mod(static_cast<long long>(rank) - g - 1, ranks_));
  }
  return s;
}

}  // namespace rocehil::traffic
