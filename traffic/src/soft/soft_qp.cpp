// Setup, posting and the packet paths shared by both sides of a soft RC QP. The requester is in
// soft_qp_requester.cpp, the responder in soft_qp_responder.cpp.
#include "soft/soft_qp.hpp"

#include <fmt/format.h>
#include <sys/uio.h>

#include <limits>

#include "rocehil/common/error.hpp"
#include "rocehil/common/roce_wire.hpp"
#include "soft/flow.hpp"
#include "soft/soft_provider.hpp"

namespace rocehil::traffic::soft {

namespace {

constexpr int qp_socket_buffer_bytes = 8 << 20;

bool valid_mtu(std::uint32_t mtu) {
  return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

}  // namespace

SoftQp::SoftQp(SoftProvider& provider, SoftCq& cq, const QpOptions& options, std::uint32_t qpn,
               std::uint32_t initial_psn)
    : provider_(provider),
      cq_(cq),
      options_(options),
      qpn_(qpn),
      initial_psn_(initial_psn),
      // A chosen source port may be another process's choice too (two collectives on one
      // host pick theirs alike), as on a NIC, where it is only a header field: the socket only
      // sends, so sharing it takes nothing from either.
      socket_(SocketAddress::parse(provider.address(), options.udp_sport), options.traffic_class,
              qp_socket_buffer_bytes, /*shared=*/options.udp_sport != 0),
      priority_(provider.priority_of(options.traffic_class, options.sl)),
      sq_(std::max<std::uint32_t>(options.max_send_wr, 1)),
      next_psn_(initial_psn),
      acked_until_(initial_psn),
      highest_sent_psn_(initial_psn),
      retries_left_(options.retry_count),
      rate_(provider.congestion().rate),
      rq_(std::max<std::uint32_t>(options.max_recv_wr, 1)),
      cnp_limiter_(provider.congestion().cnp_interval_ns) {
  if (!valid_mtu(options.mtu))
    throw input_error(
        fmt::format("MTU {} is not a RoCE MTU; use 256, 512, 1024, 2048 or 4096", options.mtu));
  mtu_ = options.mtu;
}

SoftQp::~SoftQp() {
  provider_.forget(this);
}

Endpoint SoftQp::local_endpoint() const {
  Endpoint e;
  e.address = provider_.address();
  e.qpn = qpn_;
  e.psn = initial_psn_;
  e.udp_sport = socket_.local().port();
  e.mtu = mtu_;
  return e;
}

void SoftQp::connect(const Endpoint& remote) {
  if (connected_) throw input_error(fmt::format("QP {:#x} is already connected", qpn_));
  remote_ = SocketAddress::parse(remote.address, wire::roce_v2_udp_port);
  if (remote_.ipv6() != socket_.local().ipv6())
    throw input_error(fmt::format("QP {:#x} on {} cannot reach {}: address families differ", qpn_,
                                  provider_.address(), remote.address));
  remote_qpn_ = remote.qpn & 0xffffffu;
  epsn_ = remote.psn & 0xffffffu;
  // Both sides must agree on the MTU, as an RNIC's path MTU is the smaller of the two.
  mtu_ = std::min(mtu_, remote.mtu);
  flow_ = flow_address(socket_.local(), remote_);
  cnp_flow_ = flow_address(provider_.control_socket().local(), remote_);
  connected_ = true;
}

PostResult SoftQp::post_send(std::span<const SendRequest> requests) {
  if (!connected_) return PostResult::not_connected;
  if (error_) return PostResult::invalid;
  if (sq_count_ + requests.size() > sq_.size()) return PostResult::queue_full;
  for (const auto& wr : requests) {
    const bool needs_buffer = wr.length > 0;
    if (wr.opcode == Opcode::recv ||
        (needs_buffer && (wr.local == nullptr || wr.local_offset + wr.length > wr.local->length)))
      return PostResult::invalid;
  }
  for (const auto& wr : requests) {
    SendWqe& w = sq_[(sq_head_ + sq_count_) % sq_.size()];
    w.wr = wr;
    w.first_psn = next_psn_;
    w.packets = packets_for(wr);
    w.read_received = 0;
    next_psn_ = (next_psn_ + w.packets) & 0xffffffu;
    ++sq_count_;
  }
  return PostResult::ok;
}

PostResult SoftQp::post_recv(std::span<const RecvRequest> requests) {
  if (error_) return PostResult::invalid;
  if (rq_count_ + requests.size() > rq_.size()) return PostResult::queue_full;
  for (const auto& r : requests)
    if (r.length > 0 && (r.local == nullptr || r.local_offset + r.length > r.local->length))
      return PostResult::invalid;
  for (const auto& r : requests) {
    rq_[(rq_head_ + rq_count_) % rq_.size()] = r;
    ++rq_count_;
  }
  return PostResult::ok;
}

QpCounters SoftQp::counters() const {
  QpCounters c = counters_;
  c.cnps_handled = rate_.cnps_handled();
  c.rate_cuts = rate_.rate_cuts();
  c.rate_gbps = rate_.limited() ? rate_.current_rate_mbps() / 1000.0 : 0.0;
  return c;
}

std::uint32_t SoftQp::packets_for(const SendRequest& wr) const {
  return wire::packets_for_length(wr.length, mtu_);
}

void SoftQp::on_packet(const DecodedPacket& p, std::size_t datagram_bytes, std::uint8_t ecn,
                       std::uint64_t now) noexcept {
  ++counters_.packets_received;
  counters_.bytes_received += datagram_bytes;
  const std::uint8_t op = p.headers.bth.opcode;
  // DCQCN by priority: the QP's own, which its peer's packets share on a ConnectX fabric.
  const auto on = [&](std::uint8_t priorities) { return (priorities >> priority_ & 1) != 0; };
  if (op == wire::opcode::cnp) {
    if (on(provider_.congestion().rp_priorities)) rate_.on_cnp(now);
    return;
  }
  if (ecn == wire::ecn_ce) {
    ++counters_.ce_received;
    if (on(provider_.congestion().np_priorities)) send_cnp(now);
  }
  if (!connected_ || error_) return;
  if (op == wire::opcode::rc_acknowledge)
    on_ack(p, now);
  else if (op >= wire::opcode::rc_read_response_first && op <= wire::opcode::rc_read_response_only)
    on_read_response(p, now);
  else if (op <= wire::opcode::rc_read_request)
    on_request(p, now);
}

bool SoftQp::paused(std::uint64_t now) const noexcept {
  return provider_.pfc().paused(priority_, now);
}

void SoftQp::progress(std::uint64_t now) noexcept {
  if (!connected_) return;
  // Coalesced: one ACK for what arrived in this batch (or, after a pause, during it).
  if (unacked_ > 0 && !paused(now)) send_ack();
  if (error_) {
    flush_sends();  // the NAK that put us there
    return;
  }
  rate_.advance(now);
  check_timeout(now);
  transmit(now);
  flush_sends();
}

std::uint64_t SoftQp::next_due_ns(std::uint64_t now) const noexcept {
  if (!connected_ || error_) return std::numeric_limits<std::uint64_t>::max();
  std::uint64_t due = std::numeric_limits<std::uint64_t>::max();
  if (unacked_ > 0 || cursor_wqe_ < sq_count_) {
    if (paused(now))
      due = provider_.pfc().resumes_at(priority_);  // a wait, not a spin, while PFC holds it
    else if (unacked_ == 0 && now < limit_due_ns_)
      due = limit_due_ns_;  // and while its rate limit holds it
    else
      return now;
  }
  // Some sent, not yet acknowledged (or a READ's responses not all in): the ACK timer.
  if (sq_count_ > 0 && wire::psn_distance(oldest_unacked(), cursor_psn()) > 0)
    due = std::min(due,
                   last_progress_ns_ + static_cast<std::uint64_t>(options_.ack_timeout_us) * 1000);
  return due;
}

void SoftQp::send_packet(const PacketHeaders& headers,
                         std::span<const std::uint8_t> payload) noexcept {
  if (outgoing_.full()) flush_sends();
  outgoing_.add(flow_, headers, payload);
}

void SoftQp::flush_sends() noexcept {
  const SendBatch::Sent sent = outgoing_.flush(socket_, remote_);
  counters_.packets_sent += sent.packets;
  counters_.bytes_sent += sent.bytes;
}

bool SoftQp::send_cnp_packet(const PacketHeaders& headers,
                             std::span<const std::uint8_t> payload) noexcept {
  return transmit_packet(provider_.control_socket(), cnp_flow_, headers, payload);
}

bool SoftQp::transmit_packet(UdpSocket& socket, const FlowAddress& flow,
                             const PacketHeaders& headers,
                             std::span<const std::uint8_t> payload) noexcept {
  // Header, payload straight from the memory region, then pad and ICRC: one datagram, no copy.
  const std::size_t header_bytes = encode_headers(headers, header_buffer_);
  std::array<std::uint8_t, max_trailer_size> trailer{};
  const std::size_t trailer_bytes =
      encode_trailer(flow, {header_buffer_.data(), header_bytes}, payload, trailer);
  if (header_bytes == 0 || trailer_bytes == 0) return false;
  const std::array<iovec, 3> pieces{{
      {header_buffer_.data(), header_bytes},
      {const_cast<std::uint8_t*>(payload.data()), payload.size()},
      {trailer.data(), trailer_bytes},
  }};
  if (!socket.send(remote_, pieces)) return false;  // a full socket buffer: a loss on the wire
  ++counters_.packets_sent;
  counters_.bytes_sent += header_bytes + payload.size() + trailer_bytes;
  return true;
}

void SoftQp::push_completion(const Completion& c) noexcept {
  cq_.push(c);
}

}  // namespace rocehil::traffic::soft
