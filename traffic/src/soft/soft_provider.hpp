#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device_events.hpp"
#include "rocehil/traffic/provider.hpp"
#include "soft/link_watch.hpp"
#include "soft/pfc_receiver.hpp"
#include "soft/port_pacer.hpp"
#include "soft/shared_port.hpp"
#include "soft/sibling_inbox.hpp"
#include "soft/soft_congestion.hpp"
#include "soft/udp_socket.hpp"

namespace rocehil::traffic::soft {

class SoftQp;

// The completion queue of the soft provider: a fixed ring. Polling it runs the provider's
// protocol engine first, so a loop that polls is all the "NIC" the soft provider needs.
class SoftCq final : public CompletionQueue {
 public:
  SoftCq(class SoftProvider& provider, std::uint32_t depth);
  std::size_t poll(std::span<Completion> out) override;
  bool wait_for_work(std::chrono::microseconds at_most) override;
  // False when the ring is full: the completion is lost and counted, as a CQ overrun.
  bool push(const Completion& c) noexcept;
  std::uint64_t overruns() const { return overruns_; }

 private:
  SoftProvider& provider_;
  std::vector<Completion> ring_;
  std::size_t head_ = 0, count_ = 0;
  std::uint64_t overruns_ = 0;
};

// RoCEv2 in user space over UDP sockets. All RoCEv2 packets go to UDP port 4791 of the peer's
// address, so one socket per provider receives for every QP (demultiplexed by BTH destination
// QP), while each QP sends from its own socket: its own UDP source port, the ECMP entropy. The
// providers of one host share port 4791 as processes share a NIC (SharedPort).
// CNPs leave from the receiving socket with the CNP DSCP (48 unless set, as ConnectX's default).
class SoftProvider final : public Provider {
 public:
  explicit SoftProvider(const ProviderOptions& options);
  ~SoftProvider() override;

  std::string_view name() const override { return "soft"; }
  MemoryRegion register_memory(std::size_t length) override;
  void deregister_memory(const MemoryRegion& region) override;
  std::unique_ptr<CompletionQueue> create_cq(std::uint32_t depth) override;
  std::unique_ptr<QueuePair> create_qp(CompletionQueue& cq, const QpOptions& options) override;
  // Carrier changes of the netdev its address is on, seen from the poll loop.
  std::vector<DeviceEvent> take_events() override { return events_.take(); }
  // The pause frames its NIC obeyed (PfcReceiver::counters); none without a pause socket.
  std::map<std::string, std::uint64_t> nic_counters() const override;
  // Receives, passes on and runs its QPs, as a poll does. Every 5 ms: well within any QP's ACK
  // timeout, so a peer never retries for what waited here.
  void serve_idle() override { progress(); }
  std::chrono::milliseconds idle_period() const override { return std::chrono::milliseconds(5); }

  // Used by QPs.
  const std::string& address() const { return address_; }
  const SoftCongestion& congestion() const noexcept { return congestion_; }
  const MemoryRegion* find_rkey(std::uint32_t rkey) const noexcept;
  UdpSocket& control_socket() { return *receiver_; }
  PortPacer& port() noexcept { return port_; }
  // PFC: the priority a QP's packets are in, by the provider's trust mode and DSCP map, and
  // whether the port is paused for it.
  std::uint8_t priority_of(std::uint8_t traffic_class, std::uint8_t sl) const noexcept {
    return trust_pcp_ ? sl : dscp_to_priority_[traffic_class >> 2];
  }
  std::uint8_t cnp_priority() const noexcept {
    return priority_of(congestion_.cnp_traffic_class, 0);
  }
  const PfcReceiver& pfc() const noexcept { return pfc_; }
  void forget(SoftQp* qp) noexcept;
  std::uint64_t dropped_datagrams() const { return dropped_; }
  // Datagrams that arrived here for another provider of the host and were passed on to it.
  std::uint64_t passed_on() const { return passed_on_; }

  // Receives and dispatches what arrived, then lets every QP send and run its timers.
  void progress() noexcept;
  // Sleeps until a packet arrives, a QP's timer is due or `deadline_ns` (monotonic) passes.
  // False, at once, while a QP has something to send or once the deadline has passed: there is
  // nothing to wait for.
  bool wait_for_packets(std::uint64_t deadline_ns) noexcept;

 private:
  // One datagram of `batch`: passed on when it is for another provider's QPN (only when it came
  // from the wire), else handed to its QP.
  void deliver(const ReceiveBatch& batch, std::size_t i, bool from_wire,
               std::uint64_t now) noexcept;
  // Everything waiting on the RoCEv2 port, delivered or passed on.
  void drain_port(std::uint64_t now) noexcept;
  // Takes this provider out of the port's sharing without losing what it holds for others.
  void leave_shared_port() noexcept;
  // Passes on what comes for other processes' providers until it stops coming (a pause, or
  // their traffic's end), a second at most: their flows move to them only then.
  void linger_while_passing_on() noexcept;

  std::string address_;
  SharedPort shared_;                    // its id is the top byte of this provider's QPNs
  SoftCongestion congestion_;            // before receiver_: its DSCP is the CNPs'
  std::shared_ptr<UdpSocket> receiver_;  // address:4791, shared (roce_socket_for)
  std::unique_ptr<ReceiveBatch> batch_;
  SiblingInbox inbox_;  // what other providers of this process read for this one
  std::vector<MemoryRegion> regions_;
  std::vector<SoftQp*> qps_;  // sorted by QPN
  PortPacer port_;
  LinkWatch link_;
  PfcReceiver pfc_;  // after link_: on the netdev link_ found
  bool trust_pcp_;
  std::array<std::uint8_t, 64> dscp_to_priority_;
  DeviceEventLog events_;
  std::size_t first_to_send_ = 0;  // turns at the port go round the QPs
  std::uint16_t next_qpn_;         // the low 16 bits of the next QPN
  std::uint32_t next_key_;
  std::uint64_t dropped_ = 0;  // not RoCEv2, bad ICRC, or for no QP here or could not pass on
  std::uint64_t passed_on_ = 0;
  bool passed_readable_ = false;  // a wait saw the SharedPort's socket readable
  std::uint32_t rounds_since_passed_ = 0;
  std::uint64_t passed_recently_until_ = 0;  // read the passed-on socket every round until then
};

std::unique_ptr<Provider> make_soft_provider(const ProviderOptions& options);

// CLOCK_MONOTONIC in nanoseconds.
std::uint64_t now_ns() noexcept;

}  // namespace rocehil::traffic::soft
