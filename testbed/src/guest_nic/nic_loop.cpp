#include "guest_nic/nic_loop.hpp"

#include <fmt/format.h>
#include <linux/if_packet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "dataplane/event_loop.hpp"
#include "dataplane/packet.hpp"
#include "dataplane/packet_pool.hpp"
#include "dataplane/shared_counters.hpp"
#include "guest_nic/nic_config.hpp"
#include "guest_nic/nic_queues.hpp"
#include "lossless/ingress_buffers.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::testbed::guest_nic {

namespace {

using dataplane::bump;
using dataplane::EventWait;
using dataplane::fail;
using dataplane::Fd;
using dataplane::now_ns;
using dataplane::PacketPool;
using dataplane::PortCounts;

// As a switch port (switch_loop.cpp): 1 ms of the port's time ahead of its pace at most.
constexpr std::uint64_t pace_window_ns = 1'000'000;
constexpr std::uint32_t wire_overhead_bytes = 24;
constexpr std::uint16_t full_quanta = 0xffff;
constexpr std::uint64_t retry_ns = 200'000;
constexpr int receive_batch = 32;
constexpr int wire_port = 0, guest_port = 1;
// Enough for both buffers in frames of 64 bytes and more: slots cost memory only once used.
constexpr std::uint32_t pool_slots = 8192;

class NicLoop {
 public:
  NicLoop(std::string config_path, const LogLine& log)
      : config_path_(std::move(config_path)), log_(log) {}
  int run();

 private:
  void load_config();
  void apply_config();
  void open_port();
  void open_listener();
  void accept_guest();
  void drop_guest(std::string_view why);

  void receive_from_wire();
  void receive_from_guest();
  void obey_pause(const dataplane::PauseFrame& pause, std::uint64_t now);
  void settle_paused_time(std::uint64_t now);
  void transmit_to_wire(std::uint64_t now);
  void deliver_to_guest();
  void send_pfc(std::uint16_t quanta, std::uint64_t now);
  void watch_receive_buffer(std::uint64_t now);
  void update_guest_interest();
  std::uint64_t next_deadline(std::uint64_t now) const;

  PortCounts& wire() { return counters_->port(wire_port); }
  PortCounts& guest() { return counters_->port(guest_port); }

  std::string config_path_;
  const LogLine& log_;
  NicConfig config_;
  std::uint8_t pfc_mask_ = 0;
  double bits_per_ns_ = 0;  // 0: unpaced

  Fd port_, listener_, guest_;
  std::unique_ptr<EventWait> events_;
  int ifindex_ = 0;
  dataplane::Mac mac_{};
  std::unique_ptr<dataplane::SharedCountersWriter> counters_;
  std::unique_ptr<PacketPool> pool_;

  std::unique_ptr<TransmitQueues> transmit_;
  std::uint64_t wire_free_at_ = 0, retry_at_ = 0;
  std::optional<lossless::PauseState> pause_;
  int pause_mbps_ = 0;
  std::array<std::uint64_t, priorities> paused_since_{}, paused_until_{};

  StreamFramer framer_;
  dataplane::SlotFifo to_guest_;
  std::uint32_t to_guest_bytes_ = 0;
  std::size_t head_written_ = 0;  // of the head frame's header and bytes, after a short write
  bool guest_blocked_ = false;    // the last write would have blocked: wait for EPOLLOUT
  std::uint32_t guest_interest_ = 0;
  std::unique_ptr<ReceiveThreshold> threshold_;
  std::uint64_t xoff_refresh_at_ = 0;
  bool pfc_pending_ = false;  // an XOFF or XON the port would not take yet
  std::uint16_t pending_quanta_ = 0;
};

void NicLoop::load_config() {
  std::ifstream in(config_path_);
  if (!in)
    throw input_error(
        fmt::format("{}: cannot read it; bring the testbed up with --vm --lossless", config_path_));
  std::stringstream text;
  text << in.rdbuf();
  NicConfig next = parse_nic_config(text.str(), config_path_);
  if (!config_.port.empty() &&
      (next.port != config_.port || next.socket_path != config_.socket_path))
    throw input_error(
        fmt::format("{}: port or socket_path changed; bring the testbed up again", config_path_));
  config_ = std::move(next);
}

void NicLoop::apply_config() {
  pfc_mask_ = 0;
  for (const int p : config_.pfc_priorities) pfc_mask_ |= static_cast<std::uint8_t>(1u << p);
  bits_per_ns_ = config_.mbps > 0 ? config_.mbps / 1000.0 : 0;
  // A pause in force stays in force across a reload, unless the port's speed (its quanta's
  // length) changed.
  if (!pause_ || config_.mbps != pause_mbps_)
    pause_.emplace(config_.mbps > 0 ? config_.mbps * 1e6 : 100e9);
  pause_mbps_ = config_.mbps;
  if (!transmit_) transmit_ = std::make_unique<TransmitQueues>(config_.transmit_buffer_bytes);
  transmit_->resize(config_.transmit_buffer_bytes);
  threshold_ =
      std::make_unique<ReceiveThreshold>(config_.receive_xoff_bytes, config_.receive_xon_bytes);
}

void NicLoop::open_port() {
  counters_ = std::make_unique<dataplane::SharedCountersWriter>(
      config_.counters_path, std::vector<std::string>{config_.port, "guest"});
  dataplane::PacketPort opened = dataplane::open_packet_port(config_.port, config_path_);
  port_ = std::move(opened.socket);
  ifindex_ = opened.ifindex;
  mac_ = opened.mac;
  // The writer has named the wire port's ifIndex already (if_nametoindex, in this namespace):
  // adding it again served it doubled, as a lossless switch's once were.
  pool_ = std::make_unique<PacketPool>(pool_slots);
}

void NicLoop::open_listener() {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // Bound and listening under another name first: the socket appears under its own name only
  // once a QEMU can connect (`up` starts QEMU when it sees it).
  const std::string staging = config_.socket_path + ".new";
  if (staging.size() >= sizeof address.sun_path)
    throw input_error(fmt::format("{}: socket_path {} is too long for a unix socket", config_path_,
                                  config_.socket_path));
  std::memcpy(address.sun_path, staging.c_str(), staging.size() + 1);
  ::unlink(staging.c_str());
  listener_ = Fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (listener_.get() < 0) fail("socket(AF_UNIX)");
  if (bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    fail(fmt::format("bind {}", staging));
  // Whoever connects writes frames onto the fabric: root's only.
  if (::chmod(staging.c_str(), 0600) != 0) fail(fmt::format("chmod {}", staging));
  if (listen(listener_.get(), 1) != 0) fail(fmt::format("listen {}", staging));
  if (::rename(staging.c_str(), config_.socket_path.c_str()) != 0)
    fail(fmt::format("rename {} to {}", staging, config_.socket_path));
}

void NicLoop::accept_guest() {
  Fd accepted(accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (accepted.get() < 0) return;
  if (guest_.get() >= 0) drop_guest("a new connection replaces it");
  guest_ = std::move(accepted);
  guest_interest_ = 0;
  events_->watch(guest_.get(), guest_port, 0);
  update_guest_interest();
  log_(fmt::format("{}: QEMU connected", config_.name));
}

// QEMU went (or a new one came): what was on its way to the old guest is lost, as on a link that
// went down; what it sent and the wire has not taken yet still goes.
void NicLoop::drop_guest(std::string_view why) {
  log_(fmt::format("{}: QEMU's connection closed: {}", config_.name, why));
  events_->forget(guest_.get());
  guest_.reset();
  framer_ = StreamFramer{};
  while (!to_guest_.empty()) {
    const std::uint32_t slot = to_guest_.pop();
    bump(guest().queue[0].dropped);
    bump(guest().queue[0].dropped_bytes, pool_->info(slot).length);
    pool_->give(slot);
  }
  to_guest_bytes_ = 0;
  head_written_ = 0;
  guest_blocked_ = false;
}

void NicLoop::receive_from_wire() {
  std::array<std::uint32_t, receive_batch> slots{};
  std::array<iovec, receive_batch> vectors{};
  std::array<sockaddr_ll, receive_batch> from{};
  std::array<mmsghdr, receive_batch> messages{};
  for (int round = 0; round < 4; ++round) {
    int count = 0;
    while (count < receive_batch && pool_->free_slots() > 64) {
      slots[count] = pool_->take();
      vectors[count] = {pool_->bytes(slots[count]), PacketPool::slot_bytes};
      messages[count] = {};
      messages[count].msg_hdr.msg_iov = &vectors[count];
      messages[count].msg_hdr.msg_iovlen = 1;
      messages[count].msg_hdr.msg_name = &from[count];
      messages[count].msg_hdr.msg_namelen = sizeof(sockaddr_ll);
      ++count;
    }
    if (count == 0) return;
    const int got =
        recvmmsg(port_.get(), messages.data(), static_cast<unsigned>(count), MSG_DONTWAIT, nullptr);
    const int received = std::max(got, 0);
    for (int i = count - 1; i >= received; --i) pool_->give(slots[i]);
    const std::uint64_t now = now_ns();
    for (int i = 0; i < received; ++i) {
      const std::uint32_t slot = slots[i];
      const std::uint32_t length = messages[i].msg_len;
      if (from[i].sll_pkttype == PACKET_OUTGOING || length > StreamFramer::max_frame ||
          (messages[i].msg_hdr.msg_flags & MSG_TRUNC)) {
        pool_->give(slot);
        continue;
      }
      pool_->info(slot).length = static_cast<std::uint16_t>(length);
      bump(wire().rx_packets);
      bump(wire().rx_bytes, length);
      const std::span<std::uint8_t> frame = pool_->frame(slot);
      // MAC control frames end at the NIC: a ConnectX obeys PFC, it does not hand it up.
      if (dataplane::ethertype(frame) == dataplane::ethertype_mac_control) {
        if (const auto pause = dataplane::parse_pause(frame)) obey_pause(*pause, now);
        pool_->give(slot);
        continue;
      }
      if (guest_.get() < 0 || to_guest_bytes_ + length > config_.receive_buffer_bytes ||
          to_guest_.full()) {
        bump(guest().queue[0].dropped);
        bump(guest().queue[0].dropped_bytes, length);
        pool_->give(slot);
        continue;
      }
      to_guest_.push(slot);
      to_guest_bytes_ += length;
      bump(wire().forwarded);
      guest().queue[0].depth_bytes.store(to_guest_bytes_, std::memory_order_relaxed);
      if (to_guest_bytes_ > guest().queue[0].peak_depth_bytes.load(std::memory_order_relaxed))
        guest().queue[0].peak_depth_bytes.store(to_guest_bytes_, std::memory_order_relaxed);
    }
    if (received < count) return;
  }
}

void NicLoop::receive_from_guest() {
  // What the queues hold is the NIC's buffer; past it, the guest's frames wait in QEMU.
  while (guest_.get() >= 0 && transmit_->has_room()) {
    framer_.compact();
    // No more than the queues have room for: past it, the guest's frames wait in QEMU.
    const std::span<std::uint8_t> tail =
        framer_.tail().first(std::min<std::size_t>(framer_.space(), transmit_->room()));
    const ssize_t got = ::read(guest_.get(), tail.data(), tail.size());
    if (got == 0) return drop_guest("QEMU closed it");
    if (got < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      return drop_guest(std::strerror(errno));
    }
    framer_.appended(static_cast<std::size_t>(got));
    while (pool_->free_slots() > 64) {
      const std::span<const std::uint8_t> frame = framer_.next();
      if (frame.empty()) break;
      const std::uint32_t slot = pool_->take();
      std::memcpy(pool_->bytes(slot), frame.data(), frame.size());
      pool_->info(slot).length = static_cast<std::uint16_t>(frame.size());
      const auto length = static_cast<std::uint32_t>(frame.size());
      const int priority = priority_of(frame);
      bump(guest().rx_packets);
      bump(guest().rx_bytes, length);
      bump(guest().forwarded);
      transmit_->push(priority, slot, length);
      auto& queue = wire().queue[priority];
      queue.depth_bytes.store(transmit_->held_bytes(priority), std::memory_order_relaxed);
      if (transmit_->held_bytes(priority) > queue.peak_depth_bytes.load(std::memory_order_relaxed))
        queue.peak_depth_bytes.store(transmit_->held_bytes(priority), std::memory_order_relaxed);
    }
    if (framer_.bad()) return drop_guest("a frame length QEMU's stream never sends");
    if (static_cast<std::size_t>(got) < tail.size()) return;
  }
}

void NicLoop::obey_pause(const dataplane::PauseFrame& pause, std::uint64_t now) {
  settle_paused_time(now);
  std::uint8_t obeyed = 0;
  for (int p = 0; p < priorities; ++p) {
    if (!(pause.enable >> p & 1)) continue;
    bump(pause.quanta[p] > 0 ? wire().priority[p].pfc_received : wire().priority[p].xon_received);
    // A NIC obeys PFC on the priorities it has PFC on; on others a pause is counted, not obeyed.
    if (pfc_mask_ >> p & 1) obeyed |= static_cast<std::uint8_t>(1u << p);
  }
  if (obeyed == 0) return;
  pause_->received(obeyed, pause.quanta, now);
  const std::uint8_t held = pause_->paused(now);
  for (int p = 0; p < priorities; ++p) {
    if (!(obeyed >> p & 1)) continue;
    if (held >> p & 1) {
      if (paused_until_[p] == 0) paused_since_[p] = now;
      paused_until_[p] = now + lossless::PauseState::quanta_ns(
                                   pause.quanta[p], bits_per_ns_ > 0 ? bits_per_ns_ * 1e9 : 100e9);
    } else if (paused_until_[p] != 0) {
      bump(wire().priority[p].paused_ns, now - paused_since_[p]);
      paused_until_[p] = 0;
    }
  }
}

void NicLoop::settle_paused_time(std::uint64_t now) {
  for (int p = 0; p < priorities; ++p) {
    if (paused_until_[p] == 0 || paused_until_[p] > now) continue;
    bump(wire().priority[p].paused_ns, paused_until_[p] - paused_since_[p]);
    paused_until_[p] = 0;
  }
}

void NicLoop::transmit_to_wire(std::uint64_t now) {
  settle_paused_time(now);
  if (retry_at_ > now) return;
  retry_at_ = 0;
  const std::uint8_t held = pause_->paused(now) & pfc_mask_;
  for (;;) {
    if (bits_per_ns_ > 0 && wire_free_at_ > now + pace_window_ns) return;
    const auto priority = transmit_->pick(held);
    if (!priority) return;
    const std::uint32_t slot = transmit_->front(*priority);
    const std::span<std::uint8_t> frame = pool_->frame(slot);
    if (send(port_.get(), frame.data(), frame.size(), MSG_DONTWAIT) < 0) {
      if (errno == EAGAIN || errno == ENOBUFS) {
        // The port's queue is full: the frame stays at the head, as a NIC holds a frame its MAC
        // could not put on the wire yet.
        retry_at_ = now + retry_ns;
        return;
      }
      bump(wire().queue[*priority].dropped);  // the port went down under it
      bump(wire().queue[*priority].dropped_bytes, frame.size());
    } else {
      bump(wire().queue[*priority].packets);
      bump(wire().queue[*priority].bytes, frame.size());
    }
    transmit_->pop(*priority, static_cast<std::uint32_t>(frame.size()));
    wire().queue[*priority].depth_bytes.store(transmit_->held_bytes(*priority),
                                              std::memory_order_relaxed);
    if (bits_per_ns_ > 0)
      wire_free_at_ =
          std::max(wire_free_at_, now) +
          static_cast<std::uint64_t>(static_cast<double>(frame.size() + wire_overhead_bytes) * 8 /
                                     bits_per_ns_);
    pool_->give(slot);
  }
}

void NicLoop::deliver_to_guest() {
  while (guest_.get() >= 0 && !to_guest_.empty()) {
    const std::uint32_t slot = to_guest_.front();
    const std::span<std::uint8_t> frame = pool_->frame(slot);
    auto header = stream_header(static_cast<std::uint32_t>(frame.size()));
    std::array<iovec, 2> parts{};
    std::size_t count = 0;
    if (head_written_ < header.size())
      parts[count++] = {header.data() + head_written_, header.size() - head_written_};
    const std::size_t frame_done =
        head_written_ > header.size() ? head_written_ - header.size() : 0;
    parts[count++] = {frame.data() + frame_done, frame.size() - frame_done};
    const ssize_t wrote = ::writev(guest_.get(), parts.data(), static_cast<int>(count));
    if (wrote < 0) {
      if (errno == EAGAIN || errno == EINTR) {
        guest_blocked_ = true;
        return;
      }
      return drop_guest(std::strerror(errno));
    }
    head_written_ += static_cast<std::size_t>(wrote);
    if (head_written_ < header.size() + frame.size()) {
      guest_blocked_ = true;  // QEMU is not reading: its guest's receive ring is full
      return;
    }
    head_written_ = 0;
    to_guest_.pop();
    to_guest_bytes_ -= static_cast<std::uint32_t>(frame.size());
    bump(guest().queue[0].packets);
    bump(guest().queue[0].bytes, frame.size());
    guest().queue[0].depth_bytes.store(to_guest_bytes_, std::memory_order_relaxed);
    pool_->give(slot);
  }
  guest_blocked_ = false;
}

void NicLoop::send_pfc(std::uint16_t quanta, std::uint64_t now) {
  if (pfc_mask_ == 0) return;
  std::array<std::uint8_t, dataplane::min_frame> frame{};
  std::array<std::uint16_t, priorities> all{};
  for (int p = 0; p < priorities; ++p)
    if (pfc_mask_ >> p & 1) all[p] = quanta;
  dataplane::build_pfc(frame, mac_, pfc_mask_, all);
  if (send(port_.get(), frame.data(), frame.size(), MSG_DONTWAIT) < 0) {
    pfc_pending_ = true;
    pending_quanta_ = quanta;
    return;
  }
  pfc_pending_ = false;
  for (int p = 0; p < priorities; ++p)
    if (pfc_mask_ >> p & 1)
      bump(quanta > 0 ? wire().priority[p].pfc_sent : wire().priority[p].xon_sent);
  xoff_refresh_at_ = quanta > 0 ? now + lossless::PauseState::quanta_ns(
                                            quanta, bits_per_ns_ > 0 ? bits_per_ns_ * 1e9 : 100e9) /
                                            2
                                : 0;
}

void NicLoop::watch_receive_buffer(std::uint64_t now) {
  if (pfc_pending_) send_pfc(pending_quanta_, now);
  switch (threshold_->held(to_guest_bytes_)) {
    case ReceiveThreshold::Change::xoff: send_pfc(full_quanta, now); break;
    case ReceiveThreshold::Change::xon: send_pfc(0, now); break;
    case ReceiveThreshold::Change::none:
      // Still over XON: the pause must not run out while the buffer still holds that much.
      if (threshold_->pausing() && xoff_refresh_at_ != 0 && xoff_refresh_at_ <= now)
        send_pfc(full_quanta, now);
      break;
  }
}

void NicLoop::update_guest_interest() {
  if (guest_.get() < 0) return;
  std::uint32_t wanted = 0;
  if (transmit_->has_room()) wanted |= EPOLLIN;
  if (guest_blocked_) wanted |= EPOLLOUT;
  if (wanted == guest_interest_) return;
  events_->change(guest_.get(), guest_port, wanted);
  guest_interest_ = wanted;
}

std::uint64_t NicLoop::next_deadline(std::uint64_t now) const {
  std::uint64_t next = 0;
  const auto consider = [&next](std::uint64_t at) {
    if (at != 0 && (next == 0 || at < next)) next = at;
  };
  bool sendable = false;
  const std::uint8_t held = pause_->paused(now) & pfc_mask_;
  for (int p = 0; p < priorities; ++p) {
    if (transmit_->holds(p) && !(held >> p & 1)) sendable = true;
    consider(paused_until_[p]);
  }
  if (sendable) {
    std::uint64_t due = retry_at_ > now ? retry_at_ : now;
    if (bits_per_ns_ > 0 && wire_free_at_ > due + pace_window_ns)
      due = wire_free_at_ - pace_window_ns;
    consider(due);
  }
  if (!transmit_->empty()) consider(pause_->next_end_ns(now));
  if (pfc_pending_) consider(now + retry_ns);
  if (threshold_->pausing()) consider(xoff_refresh_at_);
  return next;
}

int NicLoop::run() {
  load_config();
  apply_config();
  open_port();
  events_ = std::make_unique<EventWait>();
  open_listener();
  constexpr std::uint64_t tag_listener = 10;
  events_->watch(port_.get(), wire_port);
  events_->watch(listener_.get(), tag_listener);
  log_(fmt::format("{}: NIC on {} at {} Mbit/s, PFC obeyed on mask 0x{:02x}, QEMU's socket {}",
                   config_.name, config_.port, config_.mbps, pfc_mask_, config_.socket_path));

  for (;;) {
    for (const epoll_event& event : events_->wait(next_deadline(now_ns()))) {
      const std::uint64_t tag = event.data.u64;
      if (tag == wire_port) {
        receive_from_wire();
      } else if (tag == guest_port && guest_.get() >= 0) {
        if (event.events & (EPOLLHUP | EPOLLERR)) {
          // What QEMU wrote before it went is read first, as far as the queues have room.
          receive_from_guest();
          if (guest_.get() >= 0) drop_guest("QEMU hung up");
          continue;
        }
        if (event.events & EPOLLIN) receive_from_guest();
        if (event.events & EPOLLOUT) guest_blocked_ = false;
      } else if (tag == tag_listener) {
        accept_guest();
      }
    }
    if (events_->stop_requested()) {
      log_(fmt::format("{}: stopping", config_.name));
      ::unlink(config_.socket_path.c_str());
      return 0;
    }
    if (events_->take_reload()) {
      try {
        load_config();
        apply_config();
        log_(fmt::format("{}: settings read again from {}: {} Mbit/s, PFC mask 0x{:02x}",
                         config_.name, config_path_, config_.mbps, pfc_mask_));
      } catch (const Error& error) {
        log_(fmt::format("{}: keeping the settings in force: {}", config_.name, error.what()));
      }
    }
    const std::uint64_t now = now_ns();
    transmit_to_wire(now);
    // Room again in the queues: what QEMU already wrote is read now, not at its next write.
    if (guest_.get() >= 0 && transmit_->has_room() && !(guest_interest_ & EPOLLIN))
      receive_from_guest();
    if (!guest_blocked_) deliver_to_guest();
    watch_receive_buffer(now);
    update_guest_interest();
  }
}

}  // namespace

int run_nic(const std::string& config_path, const LogLine& log) {
  NicLoop loop(config_path, log);
  return loop.run();
}

}  // namespace rocehil::testbed::guest_nic
