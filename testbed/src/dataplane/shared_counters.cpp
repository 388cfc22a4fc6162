#include "dataplane/shared_counters.hpp"

#include "dataplane/fd.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/paths.hpp"

namespace rocehil::testbed::dataplane {

std::string shared_counters_path(std::string_view netns) {
  return fmt::format("{}/{}.counters", TestbedPaths::public_run_dir(), netns);
}

namespace {

Error infrastructure(const std::string& message) {
  return Error(ExitCode::infrastructure, message);
}

// A read-only mapping unmapped on every way out.
class ReadMapping {
 public:
  ReadMapping(int fd, std::size_t size, const std::string& path) : size_(size) {
    base_ = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (base_ == MAP_FAILED)
      throw system_error(fmt::format("{}: cannot map the switch's counters", path), errno);
  }
  ReadMapping(const ReadMapping&) = delete;
  ReadMapping& operator=(const ReadMapping&) = delete;
  ~ReadMapping() { ::munmap(base_, size_); }
  const unsigned char* bytes() const { return static_cast<const unsigned char*>(base_); }

 private:
  void* base_ = nullptr;
  std::size_t size_;
};

QueueSnapshot copy(const QueueCounts& q) {
  constexpr auto r = std::memory_order_relaxed;
  return {q.packets.load(r),         q.bytes.load(r),      q.dropped.load(r),
          q.dropped_bytes.load(r),   q.ecn_marked.load(r), q.depth_bytes.load(r),
          q.peak_depth_bytes.load(r)};
}

PrioritySnapshot copy(const PriorityCounts& p) {
  constexpr auto r = std::memory_order_relaxed;
  return {p.pfc_sent.load(r),           p.pfc_received.load(r),   p.xon_sent.load(r),
          p.xon_received.load(r),       p.paused_ns.load(r),      p.ingress_bytes.load(r),
          p.peak_ingress_bytes.load(r), p.lossless_drops.load(r), p.storms_detected.load(r),
          p.storms_restored.load(r),    p.storm_drops.load(r)};
}

PortSnapshot copy(const PortCounts& p) {
  constexpr auto r = std::memory_order_relaxed;
  PortSnapshot out;
  out.ifname.assign(p.ifname, ::strnlen(p.ifname, sizeof p.ifname));
  out.ifindex = p.ifindex.load(r);
  out.rx_packets = p.rx_packets.load(r);
  out.rx_bytes = p.rx_bytes.load(r);
  out.forwarded = p.forwarded.load(r);
  out.no_route = p.no_route.load(r);
  out.unresolved = p.unresolved.load(r);
  out.ttl_expired = p.ttl_expired.load(r);
  out.socket_drops = p.socket_drops.load(r);
  for (std::size_t i = 0; i < 8; ++i) {
    out.queue[i] = copy(p.queue[i]);
    out.priority[i] = copy(p.priority[i]);
    for (int b = 0; b < wred_buckets; ++b) {
      out.wred[i].seen[b] = p.wred[i].seen[b].load(r);
      out.wred[i].marked[b] = p.wred[i].marked[b].load(r);
    }
  }
  return out;
}

}  // namespace

SwitchTotals totals(const std::vector<PortSnapshot>& ports) {
  SwitchTotals t;
  for (const auto& p : ports) {
    t.forwarded += p.forwarded;
    t.forwarding_drops += p.no_route + p.unresolved + p.ttl_expired;
    t.socket_drops += p.socket_drops;
    for (const auto& q : p.queue) {
      t.ecn_marked += q.ecn_marked;
      t.queue_drops += q.dropped;
    }
    for (const auto& r : p.priority) {
      t.pfc_sent += r.pfc_sent;
      t.pfc_received += r.pfc_received;
      t.lossless_drops += r.lossless_drops;
      t.storms_detected += r.storms_detected;
      t.storm_drops += r.storm_drops;
    }
  }
  return t;
}

SharedCountersWriter::SharedCountersWriter(const std::string& path,
                                           const std::vector<std::string>& ifnames)
    : path_(path), port_count_(static_cast<int>(ifnames.size())) {
  for (const auto& name : ifnames)
    if (name.empty() || name.size() >= sizeof(PortCounts::ifname))
      throw input_error(fmt::format(
          "{}: interface name '{}' does not fit the counters file (1 to {} characters, as the "
          "kernel's)",
          path, name, sizeof(PortCounts::ifname) - 1));
  size_ = shared_counters_size(ifnames.size());
  // Made under another name and renamed into place: a reader sees the old file or the whole new
  // one, never a header without its ports.
  const std::string temporary = fmt::format("{}.{}.new", path, ::getpid());
  const Fd fd(::open(temporary.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0)
    throw system_error(fmt::format("{}: cannot create the switch's counters file", temporary),
                       errno);
  auto fail = [&](const char* what) {
    const int err = errno;
    ::unlink(temporary.c_str());
    return system_error(fmt::format("{}: {}", temporary, what), err);
  };
  if (::ftruncate(fd.get(), static_cast<off_t>(size_)) != 0)
    throw fail("cannot size the switch's counters file");
  mapping_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw fail("cannot map the switch's counters file");
  }
  auto* header = new (mapping_) SharedCountersHeader{};
  std::memcpy(header->magic, shared_counters_magic, sizeof header->magic);
  header->version = shared_counters_version;
  header->header_size = sizeof(SharedCountersHeader);
  header->port_size = sizeof(PortCounts);
  header->port_count = static_cast<std::uint32_t>(ifnames.size());
  ports_ = reinterpret_cast<PortCounts*>(static_cast<unsigned char*>(mapping_) +
                                         sizeof(SharedCountersHeader));
  for (std::size_t i = 0; i < ifnames.size(); ++i) {
    // Constructed in the mapping: every counter starts at 0 as an atomic object.
    PortCounts* port = new (&ports_[i]) PortCounts{};
    std::memcpy(port->ifname, ifnames[i].data(), ifnames[i].size());
    port->ifindex.store(::if_nametoindex(ifnames[i].c_str()), std::memory_order_relaxed);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const auto error = fail("cannot move the switch's counters file into place");
    release();
    throw error;
  }
}

SharedCountersWriter::SharedCountersWriter(SharedCountersWriter&& other) noexcept
    : path_(std::move(other.path_)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      ports_(std::exchange(other.ports_, nullptr)),
      port_count_(std::exchange(other.port_count_, 0)) {}

SharedCountersWriter& SharedCountersWriter::operator=(SharedCountersWriter&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    size_ = std::exchange(other.size_, 0);
    ports_ = std::exchange(other.ports_, nullptr);
    port_count_ = std::exchange(other.port_count_, 0);
  }
  return *this;
}

SharedCountersWriter::~SharedCountersWriter() {
  release();
}

void SharedCountersWriter::release() noexcept {
  if (mapping_) ::munmap(mapping_, size_);
  mapping_ = nullptr;
  ports_ = nullptr;
  port_count_ = 0;
}

std::vector<PortSnapshot> read_shared_counters(const std::string& path) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw system_error(fmt::format("{}: cannot open the lossless switch's counters (its "
                                   "forwarding process makes them as it starts)",
                                   path),
                       errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw system_error(fmt::format("{}: cannot read the switch's counters", path), errno);
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < sizeof(SharedCountersHeader))
    throw infrastructure(fmt::format(
        "{}: {} bytes, shorter than the switch counters' {}-byte header: not a counters file, "
        "or cut short",
        path, size, sizeof(SharedCountersHeader)));
  const ReadMapping mapping(fd.get(), size, path);
  SharedCountersHeader header;
  std::memcpy(&header, mapping.bytes(), sizeof header);
  if (std::memcmp(header.magic, shared_counters_magic, sizeof header.magic) != 0)
    throw infrastructure(
        fmt::format("{}: not a lossless switch's counters file (its magic is wrong)", path));
  if (header.version != shared_counters_version || header.header_size != sizeof header ||
      header.port_size != sizeof(PortCounts))
    throw infrastructure(fmt::format(
        "{}: counters layout {} ({}-byte header, {}-byte ports), but this rocehil reads layout "
        "{} ({}, {}): the switch runs another rocehil build; bring the testbed up again with "
        "this one",
        path, header.version, header.header_size, header.port_size, shared_counters_version,
        sizeof header, sizeof(PortCounts)));
  if (size < shared_counters_size(header.port_count))
    throw infrastructure(
        fmt::format("{}: {} bytes, shorter than the {} its header's {} ports need: cut short", path,
                    size, shared_counters_size(header.port_count), header.port_count));
  // The objects were made in the writer's mapping of the same file; these are views of them.
  const auto* ports =
      std::launder(reinterpret_cast<const PortCounts*>(mapping.bytes() + sizeof header));
  std::vector<PortSnapshot> out;
  out.reserve(header.port_count);
  for (std::uint32_t i = 0; i < header.port_count; ++i) out.push_back(copy(ports[i]));
  return out;
}

}  // namespace rocehil::testbed::dataplane
