#include "rocehil/channel/run_secret.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "rocehil/common/error.hpp"
#include "rocehil/common/hex.hpp"

namespace rocehil::channel {

RunSecret RunSecret::generate() {
  RunSecret s;
  std::size_t filled = 0;
  while (filled < bytes) {
    const ssize_t n = ::getrandom(s.key_.data() + filled, bytes - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw system_error("drawing the run's secret (getrandom)", errno);
    }
    filled += static_cast<std::size_t>(n);
  }
  return s;
}

std::optional<RunSecret> RunSecret::parse(std::string_view text) {
  if (text.size() != 2 * bytes) return std::nullopt;
  RunSecret s;
  for (std::size_t i = 0; i < bytes; ++i) {
    const int high = hex_digit_value(text[2 * i]);
    const int low = hex_digit_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    s.key_[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return s;
}

std::string RunSecret::for_launcher() const {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (const std::uint8_t b : key_) {
    out += digits[b >> 4];
    out += digits[b & 0x0f];
  }
  return out;
}

bool RunSecret::operator==(const RunSecret& other) const noexcept {
  return CRYPTO_memcmp(key_.data(), other.key_.data(), bytes) == 0;
}

RunSecret::~RunSecret() {
  OPENSSL_cleanse(key_.data(), bytes);
}

std::optional<RunSecret> take_secret_from_environment() {
  const std::string name(secret_environment_variable);
  char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  std::string text(value);
  // Wiped where it lies before it is unset: unsetenv only drops the pointer, and the string
  // the process started with stays readable in /proc/PID/environ.
  OPENSSL_cleanse(value, text.size());
  ::unsetenv(name.c_str());
  auto secret = RunSecret::parse(text);
  OPENSSL_cleanse(text.data(), text.size());
  if (!secret)
    throw input_error(name +
                      " is set but is not a run secret (64 hex digits, as the controller that "
                      "launched this agent hands it over); start the agent from 'rocehil run'");
  return secret;
}

RunSecret read_secret_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw input_error(fmt::format("secret file {}: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw input_error(fmt::format("secret file {}: not a regular file", path));
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    throw input_error(
        fmt::format("secret file {}: others may read or write it (mode {:04o}); chmod 600 {}", path,
                    st.st_mode & 07777, path));
  }
  std::array<char, 2 * RunSecret::bytes + 2> text{};
  const ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  const std::size_t got = n > 0 ? static_cast<std::size_t>(n) : 0;
  std::size_t length = 0;  // the first line
  while (length < got && text[length] != '\n' && text[length] != '\r') ++length;
  auto secret = RunSecret::parse(std::string_view(text.data(), length));
  OPENSSL_cleanse(text.data(), text.size());
  if (!secret)
    throw input_error(fmt::format(
        "secret file {}: its first line is not a secret (64 hex digits: openssl rand -hex 32 > {})",
        path, path));
  return *secret;
}

}  // namespace rocehil::channel
