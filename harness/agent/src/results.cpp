#include "results.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "rocehil/common/crc32.hpp"

namespace rocehil::agent {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

void fill_pattern(std::byte* data, std::uint64_t length, std::uint64_t seed) {
  for (std::uint64_t at = 0; at < length; at += 8) {
    const std::uint64_t word = splitmix64(seed);
    std::memcpy(data + at, &word, std::min<std::uint64_t>(8, length - at));
  }
}

double us(std::uint64_t ns) {
  return static_cast<double>(ns) / 1000;
}

}  // namespace

void fill_buffer(traffic::Provider& provider, const traffic::MemoryRegion& region, Role role,
                 std::uint32_t qp_index) {
  const std::uint64_t half = region.length / 2;
  const std::uint64_t seed = (role == Role::client ? 0x100000000u : 0x200000000u) + qp_index;
  if (region.data != nullptr) {
    fill_pattern(region.data, half, seed * 2);
    fill_pattern(region.data + half, region.length - half, seed * 2 + 1);
    return;
  }
  // GPU memory: the same patterns, staged in host memory and copied in.
  std::vector<std::byte> staged(region.length);
  fill_pattern(staged.data(), half, seed * 2);
  fill_pattern(staged.data() + half, region.length - half, seed * 2 + 1);
  provider.write_region(region, 0, staged);
}

void add_bw(ResultsEvent& results, const traffic::BwResult& bw) {
  results.seconds = bw.seconds;
  results.messages = bw.messages;
  results.bytes = bw.bytes;
  results.gbps = bw.gbps;
  results.messages_per_s = bw.messages_per_s;
  results.errors = bw.errors;
  results.first_error = bw.first_error;
  results.first_error_status = bw.first_error_status;
  add_qp_results(results, bw.per_qp);
}

void add_qp_results(ResultsEvent& results, const std::vector<traffic::QpBwResult>& per_qp) {
  for (const traffic::QpBwResult& q : per_qp) {
    results.per_qp.push_back({.qpn = q.qpn,
                              .udp_sport = q.udp_sport,
                              .messages = q.messages,
                              .bytes = q.bytes,
                              .gbps = q.gbps,
                              .counters = q.counters,
                              .source_crc32 = {},
                              .target_crc32 = {}});
    if (q.longest_stall) {
      results.per_qp.back().stall_us = q.longest_stall->ns / 1000;
      results.per_qp.back().stall_from_us = q.longest_stall->from_ns / 1000;
    }
  }
}

void add_latency(ResultsEvent& results, const traffic::LatResult& lat,
                 std::chrono::steady_clock::duration elapsed) {
  const traffic::LatencyHistogram& h = lat.one_way;
  results.seconds = std::chrono::duration<double>(elapsed).count();
  results.messages = h.count();
  results.errors = lat.errors;
  results.first_error = lat.first_error;
  results.first_error_status = lat.first_error_status;
  LatencySummary summary{.samples = h.count(),
                         .min_us = us(h.min()),
                         .mean_us = h.mean() / 1000,
                         .p50_us = us(h.percentile(0.5)),
                         .p99_us = us(h.percentile(0.99)),
                         .p999_us = us(h.percentile(0.999)),
                         .max_us = us(h.max()),
                         .histogram = {}};
  for (const auto& b : h.nonempty_buckets())
    summary.histogram.push_back({.upper_us = us(b.upper_ns), .count = b.count});
  results.latency = std::move(summary);
}

void add_served(ResultsEvent& results, const traffic::LiveProgress& progress,
                std::chrono::steady_clock::duration elapsed) {
  results.seconds = std::chrono::duration<double>(elapsed).count();
  results.messages = progress.messages.load();
  results.bytes = progress.bytes.load();
  if (results.seconds > 0) {
    results.gbps = static_cast<double>(results.bytes) * 8 / results.seconds / 1e9;
    results.messages_per_s = static_cast<double>(results.messages) / results.seconds;
  }
}

void add_qp_state(ResultsEvent& results, const traffic::Provider& provider,
                  const std::vector<std::unique_ptr<traffic::QueuePair>>& qps,
                  const std::vector<traffic::MemoryRegion>& memory, std::uint32_t message_bytes) {
  std::vector<std::byte> staged;  // GPU memory is read back through the host
  for (std::size_t i = 0; i < qps.size(); ++i) {
    const std::uint32_t qpn = qps[i]->qpn();
    auto it = std::find_if(results.per_qp.begin(), results.per_qp.end(),
                           [&](const QpResult& q) { return q.qpn == qpn; });
    if (it == results.per_qp.end()) {
      QpResult fresh;
      fresh.qpn = qpn;
      fresh.udp_sport = qps[i]->local_endpoint().udp_sport;
      results.per_qp.push_back(fresh);
      it = results.per_qp.end() - 1;
    }
    it->counters = qps[i]->counters();
    const traffic::MemoryRegion& region = memory[i];
    const std::byte* data = region.data;
    if (data == nullptr) {
      staged.resize(std::size_t{message_bytes} * 2);
      provider.read_region(region, 0, staged);
      data = staged.data();
    }
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(data);
    it->source_crc32 = crc32({bytes, message_bytes});
    it->target_crc32 = crc32({bytes + message_bytes, message_bytes});
  }
}

void add_qp_classes(ResultsEvent& results,
                    const std::vector<std::unique_ptr<traffic::QueuePair>>& qps,
                    const SetupRequest& setup) {
  for (std::size_t i = 0; i < qps.size(); ++i) {
    const std::uint32_t qpn = qps[i]->qpn();
    for (QpResult& q : results.per_qp)
      if (q.qpn == qpn) q.traffic_class = traffic_class_of_qp(setup, i % setup.qps);
  }
}

}  // namespace rocehil::agent
