#include "rocehil/traffic/provider.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <cerrno>
#include <cstring>
#include <thread>

#include "rocehil/common/error.hpp"
#include "soft/soft_provider.hpp"
#if ROCEHIL_HAVE_VERBS
#include "verbs/device.hpp"
#include "verbs/verbs_provider.hpp"
#endif

namespace rocehil::traffic {

namespace {

void check_range(const MemoryRegion& region, std::uint64_t offset, std::size_t bytes) {
  if (offset > region.length || bytes > region.length - offset)
    throw input_error(fmt::format("{} bytes at offset {} are outside a memory region of {} bytes",
                                  bytes, offset, region.length));
}

}  // namespace

MemoryRegion Provider::register_gpu_memory(int gpu, std::size_t) {
  throw input_error(
      fmt::format("the {} provider has no GPU memory (GPU {} asked for): GPU "
                  "memory needs the verbs provider on an RDMA NIC",
                  name(), gpu));
}

void Provider::write_region(const MemoryRegion& region, std::uint64_t offset,
                            std::span<const std::byte> bytes) {
  check_range(region, offset, bytes.size());
  if (region.data == nullptr) throw input_error("write_region: the region has no host memory");
  std::memcpy(region.data + offset, bytes.data(), bytes.size());
}

void Provider::read_region(const MemoryRegion& region, std::uint64_t offset,
                           std::span<std::byte> bytes) const {
  check_range(region, offset, bytes.size());
  if (region.data == nullptr) throw input_error("read_region: the region has no host memory");
  std::memcpy(bytes.data(), region.data + offset, bytes.size());
}

std::string_view to_string(RegionKind kind) {
  switch (kind) {
    case RegionKind::gpu_dmabuf: return "dma-buf";
    case RegionKind::gpu_peer_memory: return "peer memory";
    default: return "host";
  }
}

std::string_view to_string(Opcode op) {
  switch (op) {
    case Opcode::send: return "send";
    case Opcode::send_with_imm: return "send_with_imm";
    case Opcode::write: return "write";
    case Opcode::write_with_imm: return "write_with_imm";
    case Opcode::read: return "read";
    case Opcode::recv: return "recv";
  }
  return "?";
}

std::string_view to_string(WcStatus status) {
  switch (status) {
    case WcStatus::success: return "success";
    case WcStatus::local_length_error: return "local_length_error";
    case WcStatus::local_protection_error: return "local_protection_error";
    case WcStatus::remote_access_error: return "remote_access_error";
    case WcStatus::remote_invalid_request: return "remote_invalid_request";
    case WcStatus::retry_exceeded: return "retry_exceeded";
    case WcStatus::flushed: return "flushed";
    case WcStatus::rnr_retry_exceeded: return "rnr_retry_exceeded";
  }
  return "?";
}

std::optional<WcStatus> wc_status_from_name(std::string_view name) {
  for (const WcStatus s :
       {WcStatus::success, WcStatus::local_length_error, WcStatus::local_protection_error,
        WcStatus::remote_access_error, WcStatus::remote_invalid_request, WcStatus::retry_exceeded,
        WcStatus::flushed, WcStatus::rnr_retry_exceeded})
    if (to_string(s) == name) return s;
  return std::nullopt;
}

bool caused_by_fabric(WcStatus status) {
  switch (status) {
    case WcStatus::retry_exceeded: return true;
    case WcStatus::success:
    case WcStatus::local_length_error:
    case WcStatus::local_protection_error:
    case WcStatus::remote_access_error:
    case WcStatus::remote_invalid_request:
    case WcStatus::flushed:
    case WcStatus::rnr_retry_exceeded: return false;
  }
  return false;
}

std::string describe_failure(const Completion& completion) {
  std::string out = fmt::format("QP {:#x}: {}", completion.qpn, to_string(completion.status));
  if (completion.device_status != nullptr) {
    out += fmt::format(" (the NIC: {}", completion.device_status);
    if (completion.vendor_error != 0)
      out += fmt::format(", vendor error {:#x}", completion.vendor_error);
    out += ')';
  }
  return out;
}

std::string_view to_string(QpCounter counter) {
  switch (counter) {
    case QpCounter::packets_sent: return "packets_sent";
    case QpCounter::bytes_sent: return "bytes_sent";
    case QpCounter::packets_received: return "packets_received";
    case QpCounter::bytes_received: return "bytes_received";
    case QpCounter::retransmitted_packets: return "retransmitted_packets";
    case QpCounter::timeouts: return "timeouts";
    case QpCounter::naks_sent: return "naks_sent";
    case QpCounter::naks_received: return "naks_received";
    case QpCounter::cnps_sent: return "cnps_sent";
    case QpCounter::cnps_handled: return "cnps_handled";
    case QpCounter::ce_received: return "ce_received";
    case QpCounter::out_of_sequence: return "out_of_sequence";
    case QpCounter::rate_cuts: return "rate_cuts";
    case QpCounter::rate_gbps: return "rate_gbps";
  }
  return "?";
}

std::optional<QpCounter> qp_counter_named(std::string_view name) {
  for (int i = 0; i < qp_counter_kinds; ++i)
    if (to_string(static_cast<QpCounter>(i)) == name) return static_cast<QpCounter>(i);
  return std::nullopt;
}

std::uint64_t QpCounters::value(QpCounter c) const {
  if (!has(c)) return 0;
  switch (c) {
    case QpCounter::packets_sent: return packets_sent;
    case QpCounter::bytes_sent: return bytes_sent;
    case QpCounter::packets_received: return packets_received;
    case QpCounter::bytes_received: return bytes_received;
    case QpCounter::retransmitted_packets: return retransmitted_packets;
    case QpCounter::timeouts: return timeouts;
    case QpCounter::naks_sent: return naks_sent;
    case QpCounter::naks_received: return naks_received;
    case QpCounter::cnps_sent: return cnps_sent;
    case QpCounter::cnps_handled: return cnps_handled;
    case QpCounter::ce_received: return ce_received;
    case QpCounter::out_of_sequence: return out_of_sequence;
    case QpCounter::rate_cuts: return rate_cuts;
    case QpCounter::rate_gbps: return static_cast<std::uint64_t>(rate_gbps);
  }
  return 0;
}

QpCounters& QpCounters::operator+=(const QpCounters& more) {
  measured &= more.measured;
  packets_sent += more.packets_sent;
  bytes_sent += more.bytes_sent;
  packets_received += more.packets_received;
  bytes_received += more.bytes_received;
  retransmitted_packets += more.retransmitted_packets;
  timeouts += more.timeouts;
  naks_sent += more.naks_sent;
  naks_received += more.naks_received;
  cnps_sent += more.cnps_sent;
  cnps_handled += more.cnps_handled;
  ce_received += more.ce_received;
  out_of_sequence += more.out_of_sequence;
  rate_cuts += more.rate_cuts;
  rate_gbps += more.rate_gbps;
  return *this;
}

std::vector<std::string> built_providers() {
#if ROCEHIL_HAVE_VERBS
  return {"soft", "verbs"};
#else
  return {"soft"};
#endif
}

namespace {

// The addresses of interfaces that are up, IPv4 first as getifaddrs lists them.
std::vector<std::string> local_addresses(std::string& problem) {
  std::vector<std::string> result;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    problem = fmt::format("getifaddrs failed: errno {}", errno);
    return result;
  }
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || (a->ifa_flags & IFF_UP) == 0) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const int family = a->ifa_addr->sa_family;
    const void* raw = nullptr;
    if (family == AF_INET)
      raw = &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr;
    else if (family == AF_INET6)
      raw = &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr;
    if (raw != nullptr && inet_ntop(family, raw, text, sizeof text) != nullptr)
      result.emplace_back(text);
  }
  freeifaddrs(list);
  return result;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> devices;
  DeviceInfo soft{.name = "soft", .provider = "soft", .addresses = {}, .detail = {}};
  soft.addresses = local_addresses(soft.detail);
  if (soft.detail.empty()) soft.detail = "RoCEv2 over UDP sockets";
  devices.push_back(std::move(soft));
#if ROCEHIL_HAVE_VERBS
  try {
    for (DeviceInfo& d : verbs::list_devices()) devices.push_back(std::move(d));
  } catch (const std::exception& e) {
    devices.push_back({.name = "verbs", .provider = "verbs", .addresses = {}, .detail = e.what()});
  }
#endif
  return devices;
}

std::string QueuePair::limit_rate(double) {
  return "this provider's QPs have no NIC rate limiter";
}

bool CompletionQueue::wait_for_work(std::chrono::microseconds) {
  std::this_thread::yield();
  return false;
}

const std::string& CompletionQueue::failure() const noexcept {
  static const std::string none;
  return none;
}

std::unique_ptr<Provider> make_provider(std::string_view name, const ProviderOptions& options) {
  if (name == "soft") return soft::make_soft_provider(options);
  if (name == "verbs") {
    // A NIC's congestion settings are its own files, set before the run; taking them here too
    // would let two values for one setting meet.
    if (!options.soft_settings.empty())
      throw input_error(fmt::format(
          "the verbs provider takes no congestion settings at setup ({} given): they are the "
          "NIC's, set through rocehil run --set",
          options.soft_settings.front().name));
#if ROCEHIL_HAVE_VERBS
    return verbs::make_verbs_provider(options);
#else
    throw Error(ExitCode::infrastructure,
                "the verbs provider was not built: libibverbs-dev was missing when rocehil was "
                "configured (apt-get install libibverbs-dev, then rebuild)");
#endif
  }
  throw input_error(fmt::format("provider '{}' is unknown; use 'soft' or 'verbs'", name));
}

}  // namespace rocehil::traffic
