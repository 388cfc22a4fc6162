#include "tools/live.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <thread>

#include "rocehil/common/error.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

nlohmann::json ip_json(std::string_view netns, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  if (!netns.empty()) argv.insert(argv.end(), {"-n", std::string(netns)});
  argv.push_back("-j");
  argv.insert(argv.end(), args.begin(), args.end());
  return command_json("reading the network configuration", argv);
}

namespace {

nlohmann::json parsed(const std::string& out, const std::vector<std::string>& argv) {
  if (out.find_first_not_of(" \n") == std::string::npos) return nlohmann::json::array();
  try {
    return nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ExitCode::infrastructure, fmt::format("'{}' printed JSON that does not parse: {}",
                                                      shell_words(argv), e.what()));
  }
}

}  // namespace

nlohmann::json command_json(std::string_view what, const std::vector<std::string>& argv) {
  return parsed(run_checked(what, argv), argv);
}

nlohmann::json command_json_in(std::string_view what, const std::string& netns,
                               const std::vector<std::string>& argv) {
  std::string out;
  std::exception_ptr failed;
  // Namespaces belong to threads: this one enters it, spawns the tool there (the child inherits
  // the thread's namespace) and ends; the rest of the process never leaves its own.
  std::thread inside([&] {
    try {
      const std::string path = "/run/netns/" + netns;
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw system_error(fmt::format("{}: cannot open {}", what, path), errno);
      const int entered = ::setns(fd, CLONE_NEWNET);
      const int why = errno;
      ::close(fd);
      if (entered != 0)
        throw system_error(fmt::format("{}: cannot enter network namespace {}", what, netns), why);
      out = run_checked(what, argv);
    } catch (...) {
      failed = std::current_exception();
    }
  });
  inside.join();
  if (failed) std::rethrow_exception(failed);
  return parsed(out, argv);
}

namespace {

// The `key` of every object in `objects` that starts with `prefix`.
std::vector<std::string> names_starting_with(const nlohmann::json& objects, const char* key,
                                             const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& object : objects) {
    std::string name = object.value(key, "");
    if (name.starts_with(prefix)) out.push_back(std::move(name));
  }
  return out;
}

}  // namespace

std::vector<std::string> testbed_namespaces(std::string_view id) {
  return names_starting_with(ip_json({}, {"netns", "list"}), "name",
                             fmt::format("rocehil-{}-", id));
}

std::vector<std::string> root_links(std::string_view id) {
  return names_starting_with(ip_json({}, {"link", "show"}), "ifname", fmt::format("{}-", id));
}

std::vector<std::string> root_route_prefixes() {
  std::vector<std::string> out;
  for (const auto& route : ip_json({}, {"-4", "route", "show", "table", "all"})) {
    const std::string dst = route.value("dst", "");
    if (!dst.empty() && dst != "default") out.push_back(dst);
  }
  return out;
}

std::string absolute_dir(const std::string& dir) {
  return std::filesystem::absolute(dir).lexically_normal().string();
}

bool ssh_banner(const std::string& address, int timeout_ms, std::string& detail) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(22);
  if (::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1) {
    detail = "no address";
    return false;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    detail = std::strerror(errno);
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto remaining_ms = [&] {
    return static_cast<int>(std::max<long long>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now())
               .count()));
  };
  bool ok = false;
  std::string line;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    detail = std::strerror(errno);
  } else {
    // Wait for the connection, then for the identification line, within one deadline.
    while (true) {
      pollfd p{fd, POLLIN, 0};
      const int n = ::poll(&p, 1, remaining_ms());
      if (n <= 0) {
        detail = n == 0 ? "no answer within the timeout" : std::strerror(errno);
        break;
      }
      char buffer[256];
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got <= 0) {
        int so_error = 0;
        socklen_t len = sizeof so_error;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
        detail = got == 0 ? "connection closed" : std::strerror(so_error != 0 ? so_error : errno);
        break;
      }
      line.append(buffer, static_cast<std::size_t>(got));
      const auto nl = line.find('\n');
      if (nl != std::string::npos) {
        line.resize(nl);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        ok = line.starts_with("SSH-2.0-");
        detail = ok ? line : "not an ssh server: " + line.substr(0, 40);
        break;
      }
    }
  }
  ::close(fd);
  return ok;
}

}  // namespace rocehil::testbed
