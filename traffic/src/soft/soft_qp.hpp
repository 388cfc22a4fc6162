#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "rocehil/traffic/provider.hpp"
#include "soft/cnp_limiter.hpp"
#include "soft/dcqcn.hpp"
#include "soft/packet.hpp"
#include "soft/send_batch.hpp"
#include "soft/udp_socket.hpp"

namespace rocehil::traffic::soft {

class SoftProvider;
class SoftCq;

// Tunables of the soft transport that a real RNIC fixes in firmware.
struct SoftTransportLimits {
  std::uint32_t ack_every_packets = 16;          // the responder ACKs at least this often
  std::uint32_t ack_request_every = 64;          // the requester sets AckReq at least this often
  std::uint32_t max_outstanding_packets = 1024;  // PSNs in flight before the requester waits
  // READ responses arrive as a burst the requester does not pace: all of them from many QPs
  // at once overrun the shared receive socket, losing the same responses round after round.
  // RNICs bound this too (max_rd_atomic); here it is the response PSNs a QP may await.
  std::uint32_t max_outstanding_read_packets = 256;
};

// A reliable-connected QP in user space: the requester side (segmentation, PSNs, go-back-N on
// NAK and on ACK timeout, retry limit, the DCQCN reaction point) and the responder side (PSN
// checks, R_Key and bounds checks, coalesced ACKs, NAKs, CNPs on CE) of IBTA RC over UDP 4791.
// Everything is preallocated at creation; the per-packet paths allocate nothing.
class SoftQp final : public QueuePair {
 public:
  SoftQp(SoftProvider& provider, SoftCq& cq, const QpOptions& options, std::uint32_t qpn,
         std::uint32_t initial_psn);

  ~SoftQp() override;

  std::uint32_t qpn() const override { return qpn_; }
  Endpoint local_endpoint() const override;
  void connect(const Endpoint& remote) override;
  PostResult post_send(std::span<const SendRequest> requests) override;
  PostResult post_recv(std::span<const RecvRequest> requests) override;
  QpCounters counters() const override;
  // The soft NIC's packet pacer, as a ConnectX's (ibv_modify_qp_rate_limit): each request packet
  // leaves at the rate's spacing for its payload, retransmissions too; 0 lifts it.
  std::string limit_rate(double bits_per_s) override;

  // Driven by the provider: a packet for this QP, and time passing.
  // `datagram_bytes`: the UDP payload as received (BTH .. ICRC).
  void on_packet(const DecodedPacket& packet, std::size_t datagram_bytes, std::uint8_t ecn,
                 std::uint64_t now_ns) noexcept;
  void progress(std::uint64_t now_ns) noexcept;
  // When progress() next has something to do without a packet arriving: `now_ns` while there
  // is an ACK to send or a request to transmit, the ACK timer's expiry while packets are in
  // flight, never (UINT64_MAX) otherwise.
  std::uint64_t next_due_ns(std::uint64_t now_ns) const noexcept;

 private:
  struct SendWqe {
    SendRequest wr;
    std::uint32_t first_psn = 0;
    std::uint32_t packets = 1;        // PSNs the request consumes (READ: its response packets)
    std::uint32_t read_received = 0;  // READ: response packets placed, in order
  };

  // Requester.
  std::uint32_t packets_for(const SendRequest& wr) const;
  SendWqe& wqe_at(std::uint32_t index_from_head) {
    return sq_[(sq_head_ + index_from_head) % sq_.size()];
  }
  const SendWqe& wqe_at(std::uint32_t index_from_head) const {
    return sq_[(sq_head_ + index_from_head) % sq_.size()];
  }
  void transmit(std::uint64_t now_ns) noexcept;
  void send_request_packet(SendWqe& w, std::uint32_t packet_index, std::uint64_t now_ns) noexcept;
  std::uint32_t oldest_unacked() const noexcept;
  std::uint32_t cursor_psn() const noexcept;
  // PFC: whether the port is paused for this QP's priority. A ConnectX pauses the priority's
  // whole traffic class, and every packet of a QP carries the QP's DSCP, so its requests and
  // retransmissions wait, and so do its coalesced ACKs (cumulative: one after the pause covers
  // all). NAKs and READ responses, answered at once into the send batch, still leave: holding
  // them would need a queue per QP deeper than the batch (a difference from a ConnectX,
  // docs/rehearsal.md).
  bool paused(std::uint64_t now_ns) const noexcept;
  void go_back_to(std::uint32_t psn) noexcept;
  void on_ack(const DecodedPacket& p, std::uint64_t now_ns) noexcept;
  void on_read_response(const DecodedPacket& p, std::uint64_t now_ns) noexcept;
  void acknowledge_through(std::uint32_t psn, std::uint64_t now_ns) noexcept;
  void complete_head(WcStatus status) noexcept;
  void fail(WcStatus first_status) noexcept;  // the QP enters the error state
  void check_timeout(std::uint64_t now_ns) noexcept;

  // Responder.
  void on_request(const DecodedPacket& p, std::uint64_t now_ns) noexcept;
  bool place_write(const DecodedPacket& p) noexcept;
  bool place_send(const DecodedPacket& p) noexcept;
  void answer_read(const DecodedPacket& p, std::uint32_t psn) noexcept;
  void send_ack() noexcept;
  void send_nak(std::uint8_t syndrome, std::uint32_t psn) noexcept;
  void send_cnp(std::uint64_t now_ns) noexcept;

  // Queues a packet for this QP's socket (its UDP source port); flush_sends() hands the batch
  // to the kernel, as does a full batch.
  void send_packet(const PacketHeaders& headers, std::span<const std::uint8_t> payload) noexcept;
  void flush_sends() noexcept;
  // CNPs leave from the provider's port-4791 socket, which marks them DSCP 48.
  bool send_cnp_packet(const PacketHeaders& headers,
                       std::span<const std::uint8_t> payload) noexcept;
  bool transmit_packet(UdpSocket& socket, const FlowAddress& flow, const PacketHeaders& headers,
                       std::span<const std::uint8_t> payload) noexcept;
  void push_completion(const Completion& c) noexcept;

  SoftProvider& provider_;
  SoftCq& cq_;
  QpOptions options_;
  SoftTransportLimits limits_;
  std::uint32_t qpn_;
  std::uint32_t initial_psn_;
  UdpSocket socket_;  // this QP's UDP source port: its ECMP entropy
  bool connected_ = false;
  bool error_ = false;
  SocketAddress remote_;
  FlowAddress flow_{};      // for the ICRC of what we send
  FlowAddress cnp_flow_{};  // the same for CNPs, sent from the provider's socket
  std::uint32_t remote_qpn_ = 0;
  std::uint32_t mtu_ = 1024;
  std::uint8_t priority_;  // the PFC priority of its packets

  // Send queue: a ring of WQEs, oldest unfinished first.
  std::vector<SendWqe> sq_;
  std::size_t sq_head_ = 0, sq_count_ = 0;
  std::uint32_t next_psn_;        // the PSN the next posted request starts at
  std::uint32_t acked_until_;     // the first PSN no ACK has covered yet
  std::uint32_t cursor_wqe_ = 0;  // next to transmit: WQE index from head and packet within
  std::uint32_t cursor_packet_ = 0;
  std::uint32_t highest_sent_psn_;  // to tell retransmissions from first transmissions
  bool sent_any_ = false;
  std::uint32_t retries_left_;
  std::uint64_t last_progress_ns_ = 0;
  std::uint64_t next_send_ns_ = 0;  // the DCQCN pacer
  // The rate limiter: picoseconds per payload byte (0: none), and when the next packet is due
  // by its schedule.
  std::uint64_t limit_ps_per_byte_ = 0;
  std::uint64_t limit_due_ns_ = 0;
  std::uint32_t last_read_retry_psn_ = 0xffffffffu;
  DcqcnReactionPoint rate_;

  // Receive queue and responder state.
  std::vector<RecvRequest> rq_;
  std::size_t rq_head_ = 0, rq_count_ = 0;
  std::uint32_t epsn_ = 0;  // expected PSN of the next request
  std::uint32_t msn_ = 0;
  bool nak_sent_ = false;  // one sequence-error NAK per expected PSN
  std::uint32_t unacked_ = 0;
  bool in_message_ = false;  // a multi-packet SEND or WRITE is being placed
  bool message_is_send_ = false;
  RecvRequest current_recv_{};
  std::byte* write_cursor_ = nullptr;
  std::uint64_t write_remaining_ = 0;
  std::uint32_t message_bytes_ = 0;
  CnpLimiter cnp_limiter_;

  std::array<std::uint8_t, 64> header_buffer_{};  // CNPs
  SendBatch outgoing_;
  QpCounters counters_;
};

}  // namespace rocehil::traffic::soft
