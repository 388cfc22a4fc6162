#include "rocehil/channel/tls_session.hpp"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "rocehil/common/error.hpp"

namespace rocehil::channel {

namespace {

constexpr std::string_view identity_prefix = "rocehil-run:";
constexpr std::size_t max_shown_identity = 64;
// TLS_AES_128_GCM_SHA256: its hash is SHA-256, whose 32-byte output the run's secret matches.
constexpr unsigned char aes_128_gcm_sha256[] = {0x13, 0x01};

// An identity a peer sent, fit to quote in one line of a log: printable ASCII, bounded.
std::string shown(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, max_shown_identity))
    out += (c >= 0x20 && c < 0x7f && c != '\'') ? c : '?';
  if (text.size() > max_shown_identity) out += "...";
  return out;
}

SSL_SESSION* psk_session(SSL* ssl, const RunSecret& secret) {
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, aes_128_gcm_sha256);
  if (cipher == nullptr) return nullptr;
  SSL_SESSION* session = SSL_SESSION_new();
  if (session == nullptr) return nullptr;
  if (SSL_SESSION_set1_master_key(session, secret.key().data(), secret.key().size()) != 1 ||
      SSL_SESSION_set_cipher(session, cipher) != 1 ||
      SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION) != 1) {
    SSL_SESSION_free(session);
    return nullptr;
  }
  return session;
}

std::string openssl_reason(unsigned long error) {
  const char* reason = ERR_reason_error_string(error);
  return reason != nullptr ? reason : fmt::format("OpenSSL error {:#x}", error);
}

}  // namespace

struct TlsContext::Impl {
  Side side;
  RunSecret secret;
  std::string identity;
  SSL_CTX* ctx = nullptr;

  ~Impl() { SSL_CTX_free(ctx); }
};

// OpenSSL's PSK callbacks, with access to the session they run for (SSL's app data).
struct PskCallbacks {
  // The agent's side: offers the run's key under the run's identity.
  static int use_session(SSL* ssl, const EVP_MD* md, const unsigned char** id, std::size_t* id_len,
                         SSL_SESSION** session) {
    const auto* self = static_cast<const TlsSession*>(SSL_get_app_data(ssl));
    const TlsContext::Impl& impl = self->context_.impl();
    SSL_SESSION* psk = psk_session(ssl, impl.secret);
    if (psk == nullptr) return 0;
    // A second call names the hash the server chose: a key for another hash is no key.
    if (md != nullptr && md != SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(psk))) {
      SSL_SESSION_free(psk);
      *session = nullptr;
      return 1;
    }
    *id = reinterpret_cast<const unsigned char*>(impl.identity.data());
    *id_len = impl.identity.size();
    *session = psk;
    return 1;
  }

  // The controller's side: the run's key for the run's identity, and the handshake ended for
  // any other (so a peer without it never reaches a certificate, which there is none of).
  static int find_session(SSL* ssl, const unsigned char* id, std::size_t id_len,
                          SSL_SESSION** session) {
    auto* self = static_cast<TlsSession*>(SSL_get_app_data(ssl));
    const TlsContext::Impl& impl = self->context_.impl();
    const std::string_view identity(reinterpret_cast<const char*>(id), id_len);
    if (!identity.starts_with(identity_prefix)) {
      self->failure_ = fmt::format(
          "the peer is not an agent of a rocehil run (its key is named '{}')", shown(identity));
      return 0;
    }
    self->peer_run_id_ = shown(identity.substr(identity_prefix.size()));
    if (identity != impl.identity) {
      self->failure_ =
          fmt::format("an agent of run '{}' dialed in; this is run '{}'", self->peer_run_id_,
                      impl.identity.substr(identity_prefix.size()));
      return 0;
    }
    *session = psk_session(ssl, impl.secret);
    return *session != nullptr ? 1 : 0;
  }
};

TlsContext::TlsContext(Side side, const RunSecret& secret, std::string_view run_id)
    : impl_(new Impl{side, secret, fmt::format("{}{}", identity_prefix, run_id), nullptr}) {
  SSL_CTX* ctx = SSL_CTX_new(side == Side::controller ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr)
    throw Error(ExitCode::infrastructure,
                "OpenSSL could not make a TLS context: " + openssl_reason(ERR_get_error()));
  impl_->ctx = ctx;
  const bool configured = SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1 &&
                          SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1 &&
                          SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256") == 1 &&
                          SSL_CTX_set_num_tickets(ctx, 0) == 1;
  if (!configured)
    throw Error(ExitCode::infrastructure,
                "OpenSSL refused TLS 1.3 with AES-128-GCM: " + openssl_reason(ERR_get_error()));
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  // Non-blocking sockets: a write may go out in parts, from a buffer the caller may move.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (side == Side::controller) {
    SSL_CTX_set_psk_find_session_callback(ctx, &PskCallbacks::find_session);
  } else {
    SSL_CTX_set_psk_use_session_callback(ctx, &PskCallbacks::use_session);
    // No certificate is trusted: a server that answers with one instead of the run's key fails.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
}

TlsContext::~TlsContext() = default;
TlsContext::TlsContext(TlsContext&&) noexcept = default;
TlsContext& TlsContext::operator=(TlsContext&&) noexcept = default;

struct TlsSession::Ssl {
  SSL* ssl = nullptr;
  ~Ssl() { SSL_free(ssl); }
};

TlsSession::TlsSession(const TlsContext& context, int fd)
    : context_(context), ssl_(std::make_unique<Ssl>()) {
  ssl_->ssl = SSL_new(context.impl().ctx);
  if (ssl_->ssl == nullptr || SSL_set_fd(ssl_->ssl, fd) != 1)
    throw Error(ExitCode::infrastructure,
                "OpenSSL could not start a TLS session: " + openssl_reason(ERR_get_error()));
  SSL_set_app_data(ssl_->ssl, this);
  if (context.impl().side == Side::controller)
    SSL_set_accept_state(ssl_->ssl);
  else
    SSL_set_connect_state(ssl_->ssl);
}

TlsSession::~TlsSession() = default;

Step TlsSession::fail_from_queue(std::string_view during, int ssl_error) {
  const unsigned long error = ERR_peek_last_error();
  ERR_clear_error();
  if (!failure_.empty()) return Step::failed;  // a callback has said why
  const bool agent = context_.impl().side == Side::agent;
  if (error == 0) {
    failure_ = ssl_error == SSL_ERROR_SYSCALL && errno != 0
                   ? fmt::format("{} failed: {}", during, std::strerror(errno))
                   : fmt::format("the connection closed during {}", during);
    return Step::failed;
  }
  const int reason = ERR_GET_REASON(error);
  if (reason == SSL_R_BINDER_DOES_NOT_VERIFY)
    failure_ = "the agent does not hold this run's secret (its key does not verify)";
  else if (agent && reason == SSL_R_CERTIFICATE_VERIFY_FAILED)
    failure_ =
        "the controller did not prove it holds this run's secret (it offered a "
        "certificate instead of the run's key)";
  else if (agent && (reason == SSL_R_TLSV1_ALERT_DECRYPT_ERROR ||
                     reason == SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER))
    // What a server sends when the client's key binder does not verify (RFC 8446 says
    // decrypt_error; OpenSSL sends illegal_parameter).
    failure_ = fmt::format("the controller refused this agent's secret (TLS alert: {})",
                           openssl_reason(error));
  else
    failure_ = fmt::format("{} failed: {}", during, openssl_reason(error));
  return Step::failed;
}

Step TlsSession::handshake() {
  if (handshake_done_) return Step::done;
  if (!failure_.empty()) return Step::failed;
  ERR_clear_error();
  errno = 0;
  const int r = SSL_do_handshake(ssl_->ssl);
  if (r == 1) {
    // A TLS 1.3 handshake on an external PSK is a "resumption" in OpenSSL's words; one without
    // it authenticated nobody.
    if (SSL_session_reused(ssl_->ssl) != 1) {
      failure_ = "the peer did not prove it holds this run's secret";
      return Step::failed;
    }
    handshake_done_ = true;
    return Step::done;
  }
  const int e = SSL_get_error(ssl_->ssl, r);
  if (e == SSL_ERROR_WANT_READ) return Step::want_read;
  if (e == SSL_ERROR_WANT_WRITE) return Step::want_write;
  return fail_from_queue("the TLS handshake", e);
}

// SSL_read_ex's or SSL_write_ex's return as a Transfer. A read may also find the peer gone:
// cleanly (close_notify) or cut off (end of file without it), both `closed`.
Transfer TlsSession::transfer_result(int r, std::size_t n, std::string_view during) {
  if (r == 1) return {n, Step::done, false};
  const int e = SSL_get_error(ssl_->ssl, r);
  if (e == SSL_ERROR_WANT_READ) return {0, Step::want_read, false};
  if (e == SSL_ERROR_WANT_WRITE) return {0, Step::want_write, false};
  if (e == SSL_ERROR_ZERO_RETURN) return {0, Step::done, true};
  if (e == SSL_ERROR_SSL &&
      ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    ERR_clear_error();
    failure_ = "the connection ended without TLS's close (the peer stopped or was cut off)";
    return {0, Step::done, true};
  }
  return {0, fail_from_queue(during, e), false};
}

Transfer TlsSession::read(std::span<char> out) {
  if (!handshake_done_) return {0, Step::failed, false};
  ERR_clear_error();
  errno = 0;
  std::size_t n = 0;
  const int r = SSL_read_ex(ssl_->ssl, out.data(), out.size(), &n);
  return transfer_result(r, n, "reading");
}

Transfer TlsSession::write(std::span<const char> in) {
  if (!handshake_done_) return {0, Step::failed, false};
  ERR_clear_error();
  errno = 0;
  std::size_t n = 0;
  const int r = SSL_write_ex(ssl_->ssl, in.data(), in.size(), &n);
  return transfer_result(r, n, "writing");
}

}  // namespace rocehil::channel
