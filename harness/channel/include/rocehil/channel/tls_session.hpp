#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "rocehil/channel/run_secret.hpp"

namespace rocehil::channel {

// The control channel between a run's controller and the agents that dial in to it: TLS 1.3
// with an external pre-shared key (RFC 8446 section 2.2, psk_dhe_ke) drawn from the run's secret,
// and no certificates. Each side proves it holds the secret (the client with the PSK binder in
// its first message, the server with its Finished), every record is authenticated and encrypted
// (AES-128-GCM), and each connection's keys come from a fresh ECDHE exchange, so a recorded
// handshake replayed to the controller fails at the client's Finished. No session tickets and
// no early data: nothing a connection sends can be replayed into another.
//
// The PSK's identity names the run ("rocehil-run:<run id>"), so an agent left over from another
// run is told apart from one with the wrong secret. The identity is sent in the clear; the
// secret never is.

enum class Side { controller, agent };

// One side's TLS settings for one run; shared by all of that side's sessions.
class TlsContext {
 public:
  TlsContext(Side side, const RunSecret& secret, std::string_view run_id);
  ~TlsContext();
  TlsContext(TlsContext&&) noexcept;
  TlsContext& operator=(TlsContext&&) noexcept;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// What a session needs before it can go on: done, or the socket readable or writable first (it
// is non-blocking; the caller's event loop waits), or failed (`TlsSession::failure()` says why).
enum class Step { done, want_read, want_write, failed };

// Bytes moved by read() or write(), and what the session needs next. `closed`: the peer ended
// the connection cleanly (close_notify) or the socket reached end of file.
struct Transfer {
  std::size_t bytes = 0;
  Step step = Step::done;
  bool closed = false;
};

// One TLS connection over a connected, non-blocking stream socket the caller owns and closes.
class TlsSession {
 public:
  TlsSession(const TlsContext& context, int fd);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Advances the handshake as far as the socket allows; call again when it is ready as asked.
  // Once done, each side has proven to the other that it holds the run's secret.
  Step handshake();

  // After the handshake: application data. A short or zero transfer with want_read/want_write
  // means the socket must be ready first.
  Transfer read(std::span<char> out);
  Transfer write(std::span<const char> in);

  // One line: why the handshake or a transfer failed, in the peer's or OpenSSL's words and
  // ours ("the peer does not hold this run's secret"). Empty while nothing failed.
  const std::string& failure() const { return failure_; }

  // The run id the peer named (the PSK identity's), once the controller's side has read it.
  const std::string& peer_run_id() const { return peer_run_id_; }

 private:
  struct Ssl;
  friend struct PskCallbacks;
  Step fail_from_queue(std::string_view during, int ssl_error);
  Transfer transfer_result(int ssl_return, std::size_t bytes, std::string_view during);

  const TlsContext& context_;
  std::unique_ptr<Ssl> ssl_;
  std::string failure_;
  std::string peer_run_id_;
  bool handshake_done_ = false;
};

}  // namespace rocehil::channel
