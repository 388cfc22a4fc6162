#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "rocehil/traffic/provider.hpp"
#include "verbs/completion_queue.hpp"
#include "verbs/device.hpp"
#include "verbs/handles.hpp"
#include "verbs/qp_attributes.hpp"

namespace rocehil::traffic::verbs {

// An RC or UD queue pair. RC: INIT at creation (receives can be posted at once), RTR and RTS in
// connect(). UD: ready to send at creation; connect() adds the remote's address handle and makes
// it the destination of the following sends (SendRequest has no destination field).
class VerbsQueuePair final : public QueuePair {
 public:
  // Throws rocehil::Error: bad input for options the device cannot take, infrastructure when a
  // verbs call fails.
  VerbsQueuePair(std::shared_ptr<CqCore> cq, const QpOptions& options, std::uint32_t psn);
  ~VerbsQueuePair() override;
  VerbsQueuePair(const VerbsQueuePair&) = delete;
  VerbsQueuePair& operator=(const VerbsQueuePair&) = delete;

  std::uint32_t qpn() const override { return qp_->qp_num; }
  Endpoint local_endpoint() const override;
  void connect(const Endpoint& remote) override;
  PostResult post_send(std::span<const SendRequest> requests) override;
  PostResult post_recv(std::span<const RecvRequest> requests) override;
  // Verbs exposes no per-QP packet counters (the NIC counts per port: nic_counters.hpp). What
  // this returns is what the provider sees itself: message payload bytes of the send-queue WRs
  // that completed successfully (bytes_sent: SEND and WRITE; bytes_received: READ responses) and
  // of successful receives (bytes_received). A WR counts when a later completion retires it, so
  // unsignaled WRs count too. These are payload bytes, not the BTH..ICRC bytes `soft` counts;
  // every other field is marked not measured (QpCounters::measured), never reported as 0.
  QpCounters counters() const override { return counters_; }
  // ibv_modify_qp_rate_limit after checking the device's packet pacing (queue_pair_rate.cpp).
  std::string limit_rate(double bits_per_s) override;

  // For the CQ's poll: translates one work completion of this QP into `out`. False when it
  // belongs to no outstanding WR (a stale entry), so `out` was not written.
  bool complete(const ibv_wc& wc, Completion& out) noexcept;

 private:
  struct SendSlot {
    std::uint64_t wr_id = 0;
    std::uint32_t length = 0;
    Opcode opcode = Opcode::send;
  };
  struct RecvSlot {
    std::uint64_t wr_id = 0;
  };
  struct UdRemote {
    ibv_gid gid{};
    AddressHandle ah;
  };

  void connect_rc(const Endpoint& remote, const ibv_gid& gid);
  void connect_ud(const Endpoint& remote, const ibv_gid& gid);
  void modify(Transition transition, std::string_view toward = {});
  // Throws when the source GID is no longer the one the device was opened with.
  void check_source_gid() const;

  bool fill_send(const SendRequest& request, std::uint64_t position, ibv_send_wr& wr,
                 ibv_sge& sge) noexcept;
  bool fill_recv(const RecvRequest& request, std::uint64_t position, ibv_recv_wr& wr,
                 ibv_sge* sges) noexcept;
  bool complete_send(const ibv_wc& wc, Completion& out) noexcept;
  bool complete_recv(const ibv_wc& wc, Completion& out) noexcept;
  void count_completed_send(const SendSlot& slot) noexcept;

  // Creation order is teardown order reversed: the QP goes before the CQ and device it uses.
  std::shared_ptr<DeviceContext> device_;
  std::shared_ptr<CqCore> cq_;
  QpOptions options_;
  std::uint32_t psn_;
  std::uint32_t ud_max_message_ = 0;
  HostBuffer grh_scratch_;  // UD only
  MemoryRegistration grh_scratch_mr_;
  QueuePairHandle qp_;
  std::vector<UdRemote> ud_remotes_;
  std::uint32_t qp_index_ = 0;  // in cq_->queue_pairs

  bool ready_to_send_ = false;  // RC: in RTS; UD: has a destination
  ibv_ah* ud_ah_ = nullptr;
  std::uint32_t ud_remote_qpn_ = 0;
  std::uint16_t udp_sport_ = 0;  // applied once in RTS

  // Post lists and slot tables, sized at creation: the hot path allocates nothing.
  std::vector<ibv_send_wr> send_wrs_;
  std::vector<ibv_sge> send_sges_;
  std::vector<SendSlot> send_slots_;  // ring, power-of-two size, indexed by position & mask
  std::uint64_t send_posted_ = 0, send_retired_ = 0;
  std::vector<ibv_recv_wr> recv_wrs_;
  std::vector<ibv_sge> recv_sges_;  // sges_per_recv_ per WR
  std::vector<RecvSlot> recv_slots_;
  std::uint64_t recv_posted_ = 0, recv_retired_ = 0;
  std::uint32_t sges_per_recv_ = 1;
  bool send_error_seen_ = false;  // after one, implicitly retired WRs are not counted as sent
  QpCounters counters_{.measured = QpCounters::bit(QpCounter::bytes_sent) |
                                   QpCounters::bit(QpCounter::bytes_received)};
};

}  // namespace rocehil::traffic::verbs
