#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rocehil::channel {

// The per-run secret an agent proves it belongs to the run with, and the controller proves it is
// the run's controller with (tls_session.hpp: the key of a TLS 1.3 external PSK). Drawn by the
// controller for each run, handed to each agent through its launcher's environment or stdin, and
// never on a command line, in run.json, a log or a report: nothing here formats it except
// `for_launcher()`, whose one caller writes it where only the agent reads it.
class RunSecret {
 public:
  static constexpr std::size_t bytes = 32;  // the key length of TLS_AES_128_GCM_SHA256's hash

  // 32 bytes from the kernel's CSPRNG (getrandom). Throws rocehil::Error if it has none.
  static RunSecret generate();

  // The secret from `for_launcher()`'s text: 64 hex digits. nullopt for anything else (the
  // caller says where the text came from; the text itself is never echoed).
  static std::optional<RunSecret> parse(std::string_view text);

  // The text an agent's launcher hands over (64 lowercase hex digits).
  std::string for_launcher() const;

  const std::array<std::uint8_t, bytes>& key() const noexcept { return key_; }

  // Constant time: how long a comparison takes says nothing of where the first difference is.
  bool operator==(const RunSecret& other) const noexcept;

  // Wipes the key (the copy a moved-from or destroyed secret leaves in memory).
  ~RunSecret();
  RunSecret(const RunSecret&) = default;
  RunSecret& operator=(const RunSecret&) = default;

 private:
  RunSecret() = default;
  std::array<std::uint8_t, bytes> key_{};
};

// The environment variable a launcher sets for `rocehil agent --connect`.
inline constexpr std::string_view secret_environment_variable = "ROCEHIL_RUN_SECRET";

// The secret from the environment variable, which is then wiped and removed from this
// process's environment (so no child it starts carries it, and /proc/PID/environ no longer
// shows it).
// nullopt when the variable is unset; throws rocehil::Error (bad input) when it is set to
// something that is not a secret.
std::optional<RunSecret> take_secret_from_environment();

// A fleet's secret from a file, for agents started by others (pdsh, clush, systemd, a
// Kubernetes Secret) and the controller they dial: its first line, 64 hex digits (`openssl rand
// -hex 32`). Like an ssh key, the file must be a regular file that no one but its owner may read
// or write (mode 0600 or 0400). Throws rocehil::Error (bad input) naming the file and the fix.
RunSecret read_secret_file(const std::string& path);

}  // namespace rocehil::channel
