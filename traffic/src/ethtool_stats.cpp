#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/traffic/nic_counters.hpp"

namespace rocehil::traffic {

namespace {

// The three-step reading `ethtool -S` does (ethtool.c do_gnicstats): the number of statistics
// (ETHTOOL_GSSET_INFO), their names (ETHTOOL_GSTRINGS), their values (ETHTOOL_GSTATS).
class EthtoolSocket {
 public:
  explicit EthtoolSocket(const std::string& netdev) : netdev_(netdev) {
    if (netdev.empty() || netdev.size() >= IFNAMSIZ)
      throw Error(ExitCode::bad_input, fmt::format("'{}' is not a netdev name", netdev));
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw system_error(fmt::format("ethtool {}: socket", netdev), errno);
  }
  ~EthtoolSocket() { close(fd_); }
  EthtoolSocket(const EthtoolSocket&) = delete;
  EthtoolSocket& operator=(const EthtoolSocket&) = delete;

  void call(void* request, const char* what) const {
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, netdev_.c_str(), netdev_.size());
    ifr.ifr_data = static_cast<char*>(request);
    if (ioctl(fd_, SIOCETHTOOL, &ifr) != 0)
      throw system_error(fmt::format("ethtool statistics of {}: {}", netdev_, what), errno);
  }

 private:
  std::string netdev_;
  int fd_ = -1;
};

std::uint32_t stats_count(const EthtoolSocket& socket) {
  // ethtool_sset_info ends in a flexible array: one u32 follows it for the one set asked.
  alignas(ethtool_sset_info)
      std::uint8_t buffer[sizeof(ethtool_sset_info) + sizeof(std::uint32_t)]{};
  auto* info = reinterpret_cast<ethtool_sset_info*>(buffer);
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = std::uint64_t{1} << ETH_SS_STATS;
  socket.call(info, "ETHTOOL_GSSET_INFO");
  if (info->sset_mask == 0) return 0;  // the driver has no statistics set
  std::uint32_t count = 0;
  std::memcpy(&count, buffer + sizeof(ethtool_sset_info), sizeof count);
  return count;
}

}  // namespace

std::map<std::string, std::uint64_t> read_ethtool_stats(const std::string& netdev) {
  const EthtoolSocket socket(netdev);
  const std::uint32_t n = stats_count(socket);
  std::map<std::string, std::uint64_t> out;
  if (n == 0) return out;
  std::vector<std::uint8_t> names(sizeof(ethtool_gstrings) + std::size_t{n} * ETH_GSTRING_LEN);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(names.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = n;
  socket.call(strings, "ETHTOOL_GSTRINGS");
  std::vector<std::uint8_t> values(sizeof(ethtool_stats) + std::size_t{n} * sizeof(std::uint64_t));
  auto* stats = reinterpret_cast<ethtool_stats*>(values.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = n;
  socket.call(stats, "ETHTOOL_GSTATS");
  // A driver whose count changed between the calls reports fewer: read what both calls cover.
  const std::uint32_t count = std::min({n, strings->len, stats->n_stats});
  for (std::uint32_t i = 0; i < count; ++i) {
    const char* name =
        reinterpret_cast<const char*>(strings->data) + std::size_t{i} * ETH_GSTRING_LEN;
    std::string key(name, strnlen(name, ETH_GSTRING_LEN));
    std::uint64_t value = 0;
    std::memcpy(&value, values.data() + sizeof(ethtool_stats) + std::size_t{i} * sizeof value,
                sizeof value);
    out.emplace(std::move(key), value);
  }
  return out;
}

}  // namespace rocehil::traffic
