#include "soft/soft_provider.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "rocehil/common/error.hpp"
#include "rocehil/common/roce_wire.hpp"
#include "soft/flow.hpp"
#include "soft/packet.hpp"
#include "soft/soft_qp.hpp"

namespace rocehil::traffic::soft {

std::uint64_t now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

SoftCq::SoftCq(SoftProvider& provider, std::uint32_t depth)
    : provider_(provider), ring_(std::max<std::uint32_t>(depth, 1)) {}

std::size_t SoftCq::poll(std::span<Completion> out) {
  provider_.progress();
  std::size_t n = 0;
  while (n < out.size() && count_ > 0) {
    out[n++] = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  return n;
}

bool SoftCq::wait_for_work(std::chrono::microseconds at_most) {
  // Sleeps and drives the protocol here until a completion arrives: waking for each packet only
  // to hand back an empty poll would keep hundreds of waiting ranks on the CPU.
  const std::uint64_t deadline = now_ns() + static_cast<std::uint64_t>(at_most.count()) * 1000;
  while (count_ == 0 && provider_.wait_for_packets(deadline)) provider_.progress();
  return true;
}

bool SoftCq::push(const Completion& c) noexcept {
  if (count_ == ring_.size()) {
    ++overruns_;
    return false;
  }
  ring_[(head_ + count_) % ring_.size()] = c;
  ++count_;
  return true;
}

namespace {

// A provider leaving a port it passes flows on from stays until none has come for linger_quiet_ns,
// linger_most_ns at most (leave_shared_port).
constexpr std::uint64_t linger_quiet_ns = 20'000'000;
constexpr std::uint64_t linger_most_ns = 1'000'000'000;

// How long the passed-on socket is read every round after a datagram came through it.
constexpr std::uint64_t passed_recently_ns = 100'000'000;

// Socket buffers deep enough for a burst of a few thousand MTU packets.
constexpr int socket_buffer_bytes = 8 << 20;

SoftCongestion congestion_at(const ProviderOptions& options) {
  SoftCongestion c = congestion_from(options.soft_settings);
  if (!std::isfinite(options.port_gbps) || options.port_gbps < 0)
    throw input_error(fmt::format(
        "soft provider: port speed {} Gb/s is not a speed; give a positive number, or 0 when "
        "it is not known",
        options.port_gbps));
  if (options.port_gbps > 0) {
    // DCQCN cuts from, and is released at, the port's speed, as on a NIC.
    c.rate.line_rate_mbps = options.port_gbps * 1000.0;
  }
  return c;
}

// Ethernet (14), IPv4 (20) or IPv6 (40), and UDP (8) headers: what a shaper counts besides
// the RoCEv2 datagram.
std::uint32_t wire_overhead_bytes(const SocketAddress& local) {
  return 14 + (local.ipv6() ? 40 : 20) + 8;
}

}  // namespace

SoftProvider::SoftProvider(const ProviderOptions& options)
    : address_(options.address.empty() ? "127.0.0.1" : options.address),
      congestion_(congestion_at(options)),
      receiver_(roce_socket_for(SocketAddress::parse(address_, wire::roce_v2_udp_port),
                                congestion_.cnp_traffic_class, socket_buffer_bytes)),
      batch_(std::make_unique<ReceiveBatch>()),
      link_(address_),
      pfc_(link_.netdev(), link_.loopback(), options.port_gbps, options.pfc_priorities),
      trust_pcp_(options.trust_pcp),
      dscp_to_priority_(options.dscp_to_priority) {
  for (const std::uint8_t priority : dscp_to_priority_)
    if (priority > 7)
      throw input_error(fmt::format(
          "soft provider: DSCP map names priority {}; priorities are 0 to 7", priority));
  if (options.port_gbps > 0)
    port_ = PortPacer(options.port_gbps, wire_overhead_bytes(receiver_->local()));
  // QPNs (below the provider's id) and keys start at random points so that two runs, or two
  // providers talking to each other, do not reuse each other's numbers.
  std::random_device random;
  next_qpn_ = static_cast<std::uint16_t>(random());
  next_key_ = static_cast<std::uint32_t>(random());
  const auto reading = lock_port_reading();
  register_sibling(shared_.id(), &inbox_);
}

SoftProvider::~SoftProvider() {
  leave_shared_port();
  {
    const auto reading = lock_port_reading();
    register_sibling(shared_.id(), nullptr);
  }
  for (auto& r : regions_) ::munmap(r.data, r.length);
}

void SoftProvider::drain_port(std::uint64_t now) noexcept {
  // One provider of this process reads the port at a time, and what its siblings read for it
  // before comes first (sibling_inbox.hpp).
  const auto reading = lock_port_reading();
  while (const std::size_t n = inbox_.take(*batch_)) {
    for (std::size_t i = 0; i < n; ++i) deliver(*batch_, i, /*from_wire=*/false, now);
    if (n < ReceiveBatch::capacity) break;
  }
  while (const std::size_t n = batch_->receive(*receiver_)) {
    for (std::size_t i = 0; i < n; ++i) deliver(*batch_, i, /*from_wire=*/true, now);
    if (n < ReceiveBatch::capacity) break;
  }
}

void SoftProvider::linger_while_passing_on() noexcept {
  if (passed_on_ == 0) return;
  const std::uint64_t start = now_ns();
  std::uint64_t last_passed = start;
  while (true) {
    const std::uint64_t now = now_ns();
    if (now - last_passed >= linger_quiet_ns || now - start >= linger_most_ns) return;
    const std::uint64_t before = passed_on_;
    drain_port(now);
    if (passed_on_ != before) last_passed = now_ns();
    pollfd readable{receiver_->fd(), POLLIN, 0};
    const timespec tick{0, 1'000'000};
    ::ppoll(&readable, 1, &tick, nullptr);
  }
}

void SoftProvider::leave_shared_port() noexcept {
  // A provider of another process whose flows the kernel gave this socket gets them directly
  // once it leaves; what this one passed on just before, or reads after, may then reach it
  // behind the first of those, and its QP NAKs a flow that lost nothing (the qualification
  // suite's two-part cases, where one part ends a few ms before the other: 1 run in 5). So a
  // provider that passes flows on stays while it does, until they pause or end.
  if (receiver_.use_count() == 1) linger_while_passing_on();
  // Others of this process on the socket read it on: nothing is left behind.
  const auto hold = lock_roce_sockets();
  if (receiver_.use_count() > 1) return;
  forget_roce_socket(receiver_->local());
  // Closing the socket would lose what it holds for other processes' providers of the address.
  // A connected UDP socket matches only datagrams from where it is connected to (the discard
  // port of its own address: nothing), and the kernel's choice among a port's sockets skips
  // connected ones: from here on the others get every flow, and what came before is passed on.
  drain_port(now_ns());
  SocketAddress nowhere = receiver_->local();
  if (nowhere.ipv6())
    reinterpret_cast<sockaddr_in6*>(&nowhere.storage)->sin6_port = htons(9);
  else
    reinterpret_cast<sockaddr_in*>(&nowhere.storage)->sin_port = htons(9);
  if (::connect(receiver_->fd(), reinterpret_cast<const sockaddr*>(&nowhere.storage),
                nowhere.length) == 0)
    drain_port(now_ns());
}

MemoryRegion SoftProvider::register_memory(std::size_t length) {
  if (length == 0) throw input_error("cannot register an empty memory region");
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw system_error(fmt::format("mmap of a {}-byte memory region", length), errno);
  MemoryRegion r;
  r.data = static_cast<std::byte*>(p);
  r.length = length;
  r.remote_address = reinterpret_cast<std::uint64_t>(p);
  r.lkey = next_key_++;
  r.rkey = next_key_++;
  regions_.push_back(r);
  return r;
}

void SoftProvider::deregister_memory(const MemoryRegion& region) {
  const auto it = std::find_if(regions_.begin(), regions_.end(),
                               [&](const MemoryRegion& r) { return r.lkey == region.lkey; });
  if (it == regions_.end()) return;
  ::munmap(it->data, it->length);
  regions_.erase(it);
}

const MemoryRegion* SoftProvider::find_rkey(std::uint32_t rkey) const noexcept {
  for (const auto& r : regions_)
    if (r.rkey == rkey) return &r;
  return nullptr;
}

std::unique_ptr<CompletionQueue> SoftProvider::create_cq(std::uint32_t depth) {
  if (depth > max_cq_depth)
    throw input_error(fmt::format("completion queue depth {} is more than a ConnectX CQ holds ({})",
                                  depth, max_cq_depth));
  return std::make_unique<SoftCq>(*this, depth);
}

std::unique_ptr<QueuePair> SoftProvider::create_qp(CompletionQueue& cq, const QpOptions& options) {
  auto* soft_cq = dynamic_cast<SoftCq*>(&cq);
  if (soft_cq == nullptr) throw input_error("create_qp: the CQ belongs to another provider");
  if (options.type != QpType::rc)
    throw input_error("the soft provider implements RC QPs; UD is not supported yet");
  if (options.sl != 0)
    throw input_error(fmt::format(
        "sl {}: the soft provider sends untagged UDP, with no VLAN priority to set; sl is for "
        "the verbs provider on a VLAN-tagged port",
        options.sl));
  std::random_device random;
  const std::uint32_t qpn = std::uint32_t{shared_.id()} << 16 | next_qpn_++;
  auto qp = std::make_unique<SoftQp>(*this, *soft_cq, options, qpn, random() & 0xffffffu);
  // Kept sorted by QPN: every received packet looks its QP up by binary search.
  const auto at =
      std::lower_bound(qps_.begin(), qps_.end(), qpn,
                       [](const SoftQp* q, std::uint32_t wanted) { return q->qpn() < wanted; });
  qps_.insert(at, qp.get());
  return qp;
}

void SoftProvider::forget(SoftQp* qp) noexcept {
  qps_.erase(std::remove(qps_.begin(), qps_.end(), qp), qps_.end());
}

std::map<std::string, std::uint64_t> SoftProvider::nic_counters() const {
  return pfc_.counters(now_ns());
}

void SoftProvider::progress() noexcept {
  const std::uint64_t now = now_ns();
  link_.poll(now, events_);
  pfc_.poll(now);  // before the QPs send: a pause that arrived stops them in this round
  // What another provider passed on first: when a provider leaves the port, the flows the
  // kernel gave it come here directly, and what it had queued of them, passed on as it left,
  // is older.
  // Looked at every 16th round, or when a wait saw it readable: most hosts have one provider,
  // and an empty read each round would cost a busy poll loop a syscall for nothing. Every round
  // for a while after something was passed on: when the provider passing a flow on leaves, the
  // flow comes here directly, and what it passed on just before should not wait behind that
  // for up to 16 rounds. (This alone did not end the NAKs of the qualification suite's
  // two-part cases; the passer's linger did, leave_shared_port.)
  if (passed_readable_ || now < passed_recently_until_ || (rounds_since_passed_++ & 15) == 0) {
    passed_readable_ = false;
    const sa_family_t family = receiver_->local().storage.ss_family;
    while (const std::size_t n = batch_->receive_passed(shared_.fd(), family)) {
      passed_recently_until_ = now + passed_recently_ns;
      for (std::size_t i = 0; i < n; ++i) deliver(*batch_, i, /*from_wire=*/false, now);
      if (n < ReceiveBatch::capacity) break;
    }
  }
  drain_port(now);
  // Each round another QP goes first, so a paced port is shared among them.
  const std::size_t n = qps_.size();
  if (n == 0) return;
  const std::size_t first = first_to_send_++ % n;
  for (std::size_t i = 0; i < n; ++i) qps_[(first + i) % n]->progress(now);
}

void SoftProvider::deliver(const ReceiveBatch& batch, std::size_t i, bool from_wire,
                           std::uint64_t now) noexcept {
  const auto data = batch.data(i);
  // The top byte of the BTH's destination QP (byte 5) names the provider that gave it out.
  if (from_wire && data.size() >= wire::bth_size && data[5] != shared_.id()) {
    // A provider of this process takes it in-process, in order; another process's over
    // loopback.
    SiblingInbox* sibling = sibling_inbox(data[5]);
    if (sibling != nullptr ? sibling->push(batch.source(i), batch.ecn(i), data)
                           : shared_.forward(data[5], batch.source(i), batch.ecn(i), data))
      ++passed_on_;
    else
      ++dropped_;
    return;
  }
  SocketAddress from;
  from.storage = batch.source(i);
  from.length = from.ipv6() ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  FlowAddress flow = flow_address(from, receiver_->local());
  DecodedPacket packet;
  if (decode_packet(flow, data, packet) != DecodeError::none) {
    ++dropped_;
    return;
  }
  const std::uint32_t dest_qp = packet.headers.bth.dest_qp;
  const auto at =
      std::lower_bound(qps_.begin(), qps_.end(), dest_qp,
                       [](const SoftQp* q, std::uint32_t wanted) { return q->qpn() < wanted; });
  if (at == qps_.end() || (*at)->qpn() != dest_qp) {
    ++dropped_;
    return;
  }
  (*at)->on_packet(packet, data.size(), batch.ecn(i), now);
}

bool SoftProvider::wait_for_packets(std::uint64_t deadline_ns) noexcept {
  const std::uint64_t now = now_ns();
  if (now >= deadline_ns) return false;
  std::uint64_t until = deadline_ns;
  for (const SoftQp* qp : qps_) {
    until = std::min(until, qp->next_due_ns(now));
    if (until <= now) return false;
  }
  const std::uint64_t wait = until - now;
  const timespec timeout{static_cast<time_t>(wait / 1'000'000'000u),
                         static_cast<long>(wait % 1'000'000'000u)};
  // A pause frame (XON above all) wakes the wait too: a paused QP's next due time is when its
  // pause would end.
  std::array<pollfd, 4> readable{{{receiver_->fd(), POLLIN, 0},
                                  {shared_.fd(), POLLIN, 0},
                                  {inbox_.wake_fd(), POLLIN, 0},
                                  {pfc_.fd(), POLLIN, 0}}};
  const nfds_t count = pfc_.fd() >= 0 ? 4 : 3;
  // Woken early or by a signal: polled all the same.
  if (::ppoll(readable.data(), count, &timeout, nullptr) > 0 && (readable[1].revents & POLLIN))
    passed_readable_ = true;
  return true;
}

std::unique_ptr<Provider> make_soft_provider(const ProviderOptions& options) {
  return std::make_unique<SoftProvider>(options);
}

}  // namespace rocehil::traffic::soft
