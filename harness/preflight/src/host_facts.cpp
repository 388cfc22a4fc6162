#include "rocehil/preflight/host_facts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rocehil::preflight {

namespace {

// POSIX sh (dash, bash, busybox). Arguments are data: every expansion is quoted, names are
// checked against the interface-name characters before use, nothing is eval'd, nothing written,
// nothing reads the controller's stdin. Every tool's output is cut short (lines and line length)
// so a broken one cannot flood the controller, and every tool runs under `timeout 5` when the
// host has it.
constexpr std::string_view script = R"SH(exec </dev/null
agent=${1-}; [ "$#" -gt 0 ] && shift
t=""; command -v timeout >/dev/null 2>&1 && t="timeout 5"
nl='
'
cap() { head -n "$1" 2>/dev/null | cut -c1-1000 2>/dev/null; }
# One line of a small file (sysfs, procfs) as "KEY VALUE", through the shell's own read: a
# process per value made the probe cost twice the CPU of its ssh connection.
val() { v=""; { read -r v <"$2"; } 2>/dev/null; printf '%s %.200s\n' "$1" "$v"; }
echo "@@ host"
val hostname /proc/sys/kernel/hostname
val kernel /proc/sys/kernel/osrelease
echo "@@ agent"
a=""
case "$agent" in
  "") echo "problem not found" ;;
  */*) if [ ! -e "$agent" ]; then echo "problem not found"; elif [ -d "$agent" ] || [ ! -x "$agent" ]; then echo "problem not executable"; else a=$agent; fi ;;
  *) a=$(command -v -- "$agent" 2>/dev/null) || a=""; [ -n "$a" ] || echo "problem not found" ;;
esac
if [ -n "$a" ]; then
  case "$a" in -*) a=./$a ;; esac
  # Once, its first line and its exit status together (the version's own line cannot start
  # with '@rc'); only a failure runs it again for stderr.
  r=$({ $t "$a" --version 2>/dev/null; echo "@rc $?"; } | sed -n -e '1s/^/1 /p' -e '$p' | cut -c1-200)
  rc=${r##*@rc }
  v=${r%%"@rc "*}; v=${v#1 }; v=${v%"$nl"}; v=${v%%"$nl"*}
  if [ "$rc" -eq 0 ] 2>/dev/null; then
    printf 'version %s\n' "$v"
  elif [ "$rc" -eq 124 ] && [ -n "$t" ]; then
    echo "problem timed out after 5 s"
  else
    printf 'problem exit %s: %s\n' "$rc" "$($t "$a" --version 2>&1 >/dev/null | head -n 1 | cut -c1-200)"
  fi
fi
echo "@@ packages"
command -v apt-get >/dev/null 2>&1 && echo "apt-get yes"
# dpkg-query reads dpkg's whole database (a sixth of the probe's CPU): asked only where a folder
# rocehil's packages install is there (rocehil's suites, rocehil-dpdk's module folder).
k=""
for l in /usr/share/rocehil /usr/lib/rocehil /usr/lib/*/rocehil; do [ -e "$l" ] && k=1; done
[ -n "$k" ] && command -v dpkg-query >/dev/null 2>&1 && $t dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' rocehil rocehil-dpdk 2>/dev/null | cap 4
rdma_netdevs=""
for d in /sys/class/infiniband/*; do
  [ -e "$d" ] || continue
  echo "@@ rdma ${d##*/}"
  val fw_ver "$d/fw_ver"
  nd=""
  for x in "$d"/device/net/*; do [ -e "$x" ] && { nd=${x##*/}; break; }; done
  printf 'netdev %s\n' "$nd"
  rdma_netdevs="$rdma_netdevs $nd"
  for p in "$d"/ports/*; do
    [ -e "$p" ] || continue
    echo "port ${p##*/}"
    val state "$p/state"
    val phys_state "$p/phys_state"
    val link_layer "$p/link_layer"
    c=0
    for g in "$p"/gids/*; do [ -e "$g" ] && c=$((c+1)); done
    echo "gid_table_len $c"
    # read, not $(cat): a port has hundreds of GID entries (rxe 1024), and a process each took
    # 49 s on an emulated host.
    for g in "$p"/gids/*; do
      [ -e "$g" ] || continue
      i=${g##*/}; v=""; ty=""; gn=""
      { read -r v <"$g"; } 2>/dev/null
      case "$v" in ""|0000:0000:0000:0000:0000:0000:0000:0000|fe80:0000:0000:0000:0000:0000:0000:0000) continue ;; esac
      { read -r ty <"$p/gid_attrs/types/$i"; } 2>/dev/null; { read -r gn <"$p/gid_attrs/ndevs/$i"; } 2>/dev/null
      printf 'gid %s %s %s %s\n' "$i" "$v" "${gn:--}" "$ty"
    done
  done
done
if [ -n "$rdma_netdevs" ] && command -v ibv_devinfo >/dev/null 2>&1; then
  # -v for the device's limits; its GID tables and capability flags are left out here.
  echo "@@ ibv_devinfo"; $t ibv_devinfo -v 2>/dev/null | grep -E '^hca_id:|^[[:space:]]+(port|active_mtu|max_qp|max_qp_wr|max_cqe):' | cap 400
fi
probe_netdev() {
  n=$1
  case "$n" in ""|.|..|-*|*[!A-Za-z0-9._@-]*) echo "@@ netdev invalid"; echo "missing"; return ;; esac
  echo "@@ netdev $n"
  s=/sys/class/net/$n
  if [ ! -e "$s" ]; then echo "missing"; return; fi
  val mtu "$s/mtu"
  val operstate "$s/operstate"
  val address "$s/address"
  val speed "$s/speed"
  val numa "$s/device/numa_node"
  $t ip -o addr show dev "$n" 2>/dev/null | cap 64 | while read -r _ _ _ addr _; do printf 'inet %s\n' "$addr"; done
  if command -v ethtool >/dev/null 2>&1; then echo "@@ ethtool $n"; $t ethtool -i "$n" 2>/dev/null | cap 20; fi
  if [ -d "$s/ecn/roce_np" ] || [ -d "$s/ecn/roce_rp" ]; then
    echo "@@ ecn $n"
    for k in 0 1 2 3 4 5 6 7; do
      val "np $k" "$s/ecn/roce_np/enable/$k"
      val "rp $k" "$s/ecn/roce_rp/enable/$k"
    done
    for d in roce_np roce_rp; do
      for f in "$s/ecn/$d"/*; do
        [ -f "$f" ] || continue
        v=""; { read -r v <"$f"; } 2>/dev/null
        printf 'param %s/%s %.64s\n' "$d" "${f##*/}" "$v"
      done
    done
  fi
  bus=""; [ -d /sys/kernel/debug/mlx5 ] && { bus=$(readlink -f "$s/device" 2>/dev/null); bus=${bus##*/}; }
  if [ -n "$bus" ] && [ -d "/sys/kernel/debug/mlx5/$bus/cc_params" ]; then
    echo "@@ cc_params $n"
    for f in "/sys/kernel/debug/mlx5/$bus/cc_params"/*; do
      [ -f "$f" ] || continue
      printf '%s %s\n' "${f##*/}" "$($t cat "$f" 2>/dev/null | head -n 1 | cut -c1-64)"
    done
  fi
  if command -v mlnx_qos >/dev/null 2>&1; then echo "@@ mlnx_qos $n"; $t mlnx_qos -i "$n" 2>/dev/null | cap 80
  elif command -v dcb >/dev/null 2>&1; then echo "@@ dcb $n"; $t dcb pfc show dev "$n" 2>/dev/null | cap 20; $t dcb buffer show dev "$n" 2>/dev/null | cap 10; fi
}
for n in "$@"; do probe_netdev "$n"; done
set -f
for n in $rdma_netdevs; do probe_netdev "$n"; done
set +f
if command -v nvidia-smi >/dev/null 2>&1; then echo "@@ nvidia_smi"; $t nvidia-smi topo -m 2>/dev/null | cap 200; fi
echo "@@ settings_journals"
for j in /run/rocehil/settings/*.json /run/rocehil/settings/*/*.json; do [ -e "$j" ] && echo "${j#/run/rocehil/settings/}"; done | cap 100
exit 0
)SH";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

int to_int(std::string_view s, int fallback) {
  s = trim(s);
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() ? v : fallback;
}

// "4: ACTIVE" -> "ACTIVE"
std::string after_colon(std::string_view s) {
  if (const auto c = s.find(':'); c != std::string_view::npos) s = s.substr(c + 1);
  return std::string(trim(s));
}

std::string without_ansi(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !(s[i] >= '@' && s[i] <= '~')) ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

class Parser {
 public:
  explicit Parser(HostFacts& f) : f_(f) {}

  void line(std::string_view raw) {
    const std::string_view l = trim(raw);
    if (raw.starts_with("@@ ")) {
      const std::string_view header = raw.substr(3);
      const auto space = header.find(' ');
      section_ = std::string(trim(header.substr(0, space)));
      arg_ = space == std::string_view::npos ? "" : std::string(trim(header.substr(space + 1)));
      start_section();
      return;
    }
    if (l.empty()) return;
    if (section_ == "host") {
      key_value(l, [&](std::string_view k, std::string_view v) {
        if (k == "hostname")
          f_.hostname = v;
        else if (k == "kernel")
          f_.kernel = v;
        else
          note(l);
      });
    } else if (section_ == "agent") {
      if (l.starts_with("version "))
        f_.agent_version = l.substr(8);
      else if (l.starts_with("problem "))
        f_.agent_problem = l.substr(8);
      else
        note(l);
    } else if (section_ == "packages") {
      package_line(l);
    } else if (section_ == "rdma") {
      rdma_line(l);
    } else if (section_ == "ibv_devinfo") {
      ibv_devinfo_line(l);
    } else if (section_ == "netdev") {
      netdev_line(l);
    } else if (section_ == "ethtool") {
      ethtool_line(l);
    } else if (section_ == "ecn") {
      ecn_line(l);
    } else if (section_ == "cc_params") {
      cc_params_line(l);
    } else if (section_ == "mlnx_qos") {
      mlnx_qos_line(l);
    } else if (section_ == "dcb") {
      dcb_line(l);
    } else if (section_ == "nvidia_smi") {
      nvidia_line(raw);
    } else if (section_ == "settings_journals") {
      f_.settings_journals.emplace_back(l);
    } else {
      note(l);
    }
  }

  void finish() {
    // The shell lists gids/ in name order (0, 1, 10, 100, ..., 2): put them in index order.
    for (auto& d : f_.rdma)
      for (auto& p : d.ports)
        std::stable_sort(p.gids.begin(), p.gids.end(),
                         [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
    for (auto& a : f_.gpu_nic)
      if (const auto it = nic_legend_.find(a.nic); it != nic_legend_.end()) a.nic = it->second;
  }

 private:
  template <typename F>
  void key_value(std::string_view l, F f) {
    const auto space = l.find(' ');
    f(l.substr(0, space), space == std::string_view::npos ? "" : trim(l.substr(space + 1)));
  }

  void note(std::string_view l) {
    if (f_.notes.size() < 20) f_.notes.emplace_back(l.substr(0, 200));
  }

  // "apt-get yes", or dpkg-query's "rocehil 0.1.0 ii " (installed; "rc" is removed, config
  // kept, which is not installed).
  void package_line(std::string_view l) {
    if (l == "apt-get yes") {
      f_.apt = true;
      return;
    }
    const auto first = l.find(' ');
    const auto second = first == std::string_view::npos ? first : l.find(' ', first + 1);
    if (second == std::string_view::npos) return note(l);
    const std::string_view status = trim(l.substr(second + 1));
    if (status.starts_with("ii"))
      f_.packages[std::string(l.substr(0, first))] =
          std::string(l.substr(first + 1, second - first - 1));
  }

  void start_section() {
    netdev_ = nullptr;
    if (section_ == "rdma") {
      f_.rdma.push_back({});
      f_.rdma.back().name = arg_;
    } else if (section_ == "netdev") {
      for (const auto& n : f_.netdevs)
        if (n.name == arg_) {
          duplicate_ = true;
          return;
        }
      duplicate_ = false;
      f_.netdevs.push_back({});
      f_.netdevs.back().name = arg_;
      netdev_ = &f_.netdevs.back();
    } else if (section_ == "ethtool" || section_ == "ecn" || section_ == "cc_params" ||
               section_ == "mlnx_qos" || section_ == "dcb") {
      netdev_ = find_netdev(arg_);
      if (duplicate_) netdev_ = nullptr;
    } else if (section_ == "nvidia_smi") {
      f_.nvidia_smi = true;
    }
  }

  NetdevFacts* find_netdev(std::string_view name) {
    for (auto& n : f_.netdevs)
      if (n.name == name) return &n;
    return nullptr;
  }

  void rdma_line(std::string_view l) {
    if (f_.rdma.empty()) return note(l);
    RdmaDeviceFacts& d = f_.rdma.back();
    key_value(l, [&](std::string_view k, std::string_view v) {
      if (k == "fw_ver") {
        d.fw_ver = v;
      } else if (k == "netdev") {
        d.netdev = v;
      } else if (k == "port") {
        d.ports.push_back({});
        d.ports.back().port = to_int(v, 0);
      } else if (d.ports.empty()) {
        note(l);
      } else if (k == "state") {
        d.ports.back().state = after_colon(v);
      } else if (k == "phys_state") {
        d.ports.back().phys_state = after_colon(v);
      } else if (k == "link_layer") {
        d.ports.back().link_layer = v;
      } else if (k == "gid_table_len") {
        d.ports.back().gid_table_len = to_int(v, 0);
      } else if (k == "gid") {
        // "gid 3 0000:...:0a0a:0001 ens1f0np0 RoCE v2"
        const auto w = words(v);
        if (w.size() < 3) return note(l);
        GidEntry g;
        g.index = to_int(w[0], -1);
        g.gid = w[1];
        g.netdev = w[2] == "-" ? "" : w[2];
        for (std::size_t i = 3; i < w.size(); ++i) {
          if (i > 3) g.type += ' ';
          g.type += w[i];
        }
        d.ports.back().gids.push_back(std::move(g));
      } else {
        note(l);
      }
    });
  }

  void ibv_devinfo_line(std::string_view l) {
    // hca_id:	mlx5_0 / port:	1 / active_mtu:		4096 (5)
    const auto colon = l.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view key = trim(l.substr(0, colon));
    const std::string_view value = trim(l.substr(colon + 1));
    if (key == "hca_id") {
      ibv_device_ = std::string(value);
    } else if (key == "port") {
      ibv_port_ = to_int(value, 0);
    } else if (key == "max_qp" || key == "max_qp_wr" || key == "max_cqe") {
      for (auto& d : f_.rdma)
        if (d.name == ibv_device_)
          (key == "max_qp"      ? d.max_qp
           : key == "max_qp_wr" ? d.max_qp_wr
                                : d.max_cqe) = to_int(value, 0);
    } else if (key == "active_mtu") {
      const int mtu = to_int(value.substr(0, value.find(' ')), 0);
      for (auto& d : f_.rdma)
        if (d.name == ibv_device_)
          for (auto& p : d.ports)
            if (p.port == ibv_port_) p.active_mtu = mtu;
    }
  }

  void netdev_line(std::string_view l) {
    if (!netdev_) return;
    key_value(l, [&](std::string_view k, std::string_view v) {
      if (k == "missing")
        netdev_->operstate = "missing";
      else if (k == "mtu")
        netdev_->mtu = to_int(v, 0);
      else if (k == "operstate")
        netdev_->operstate = v;
      else if (k == "address")
        netdev_->mac = v;
      else if (k == "speed")
        netdev_->speed_mbps = to_int(v, -1) > 0 ? to_int(v, -1) : -1;
      else if (k == "numa")
        netdev_->numa_node = to_int(v, -1) >= 0 ? to_int(v, -1) : -1;
      else if (k == "inet" && !v.empty())
        netdev_->addresses.emplace_back(v);
      else
        note(l);
    });
  }

  void ethtool_line(std::string_view l) {
    if (!netdev_) return;
    const auto colon = l.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view key = trim(l.substr(0, colon));
    const std::string value(trim(l.substr(colon + 1)));
    if (key == "driver")
      netdev_->driver = value;
    else if (key == "version")
      netdev_->driver_version = value;
    else if (key == "firmware-version")
      netdev_->firmware = value;
    else if (key == "bus-info")
      netdev_->bus_info = value;
  }

  void ecn_line(std::string_view l) {
    if (!netdev_) return;
    const auto w = words(l);
    if (w.size() == 3 && w[0] == "param") {  // "param roce_rp/rpg_time_reset 300"
      netdev_->congestion[w[1]] = w[2];
      return;
    }
    if (w.size() == 2 && w[0] == "param") return;  // a write-only or unreadable parameter
    if (w.size() != 3) return;  // "np 3" with nothing after: not exposed for that priority
    const int prio = to_int(w[1], -1);
    if (prio < 0 || prio > 7) return note(l);
    auto& target = w[0] == "np" ? netdev_->ecn_np : netdev_->ecn_rp;
    if (!target) target = std::array<bool, 8>{};
    (*target)[static_cast<std::size_t>(prio)] = w[2] == "1";
  }

  // "rp_time_reset 300": a DCQCN parameter of the upstream driver's debugfs.
  void cc_params_line(std::string_view l) {
    if (!netdev_) return;
    const auto w = words(l);
    if (w.size() == 2) netdev_->congestion["cc_params/" + w[0]] = w[1];
  }

  static std::string without_trailing_comma(std::string s) {
    while (!s.empty() && s.back() == ',') s.pop_back();
    return s;
  }

  void mlnx_qos_line(std::string_view l) {
    if (!netdev_) return;
    if (l.starts_with("Priority trust state:")) {
      netdev_->trust = after_colon(l);
    } else if (l.starts_with("Receive buffer size (bytes):")) {
      netdev_->buffer_sizes = without_trailing_comma(after_colon(l));
      netdev_->buffer_source = "mlnx_qos";
    } else if (l.starts_with("PFC configuration")) {
      in_pfc_ = true;
    } else if (in_pfc_ && l.starts_with("enabled")) {
      const auto w = words(l);
      std::array<bool, 8> pfc{};
      for (std::size_t i = 1; i < w.size() && i <= 8; ++i) pfc[i - 1] = w[i] == "1";
      netdev_->pfc = pfc;
      netdev_->pfc_source = "mlnx_qos";
    } else if (in_pfc_ && l.starts_with("buffer")) {  // the priority -> buffer row
      const auto w = words(l);
      std::string map;
      for (std::size_t i = 1; i < w.size() && i <= 8; ++i) map += (i > 1 ? "," : "") + w[i];
      netdev_->prio_buffer = map;
      netdev_->buffer_source = "mlnx_qos";
      in_pfc_ = false;
    } else if (in_pfc_ && !l.starts_with("priority")) {
      in_pfc_ = false;
    }
  }

  // "prio-buffer 0:0 1:0 ..." or "buffer-size 0:130944 1:... total-size N" (dcb buffer show).
  bool dcb_buffer_line(const std::vector<std::string>& w) {
    if (w.empty() || (w[0] != "prio-buffer" && w[0] != "buffer-size")) return false;
    std::string values;
    for (std::size_t i = 1; i < w.size() && w[i].find(':') != std::string::npos; ++i)
      values += (values.empty() ? "" : ",") + w[i].substr(w[i].find(':') + 1);
    (w[0] == "prio-buffer" ? netdev_->prio_buffer : netdev_->buffer_sizes) = values;
    netdev_->buffer_source = "dcb";
    return true;
  }

  void dcb_line(std::string_view l) {
    if (!netdev_) return;
    const auto w = words(l);
    if (dcb_buffer_line(w)) return;
    for (std::size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] != "prio-pfc") continue;
      std::array<bool, 8> pfc{};
      for (std::size_t j = i + 1; j < w.size(); ++j) {
        const auto colon = w[j].find(':');
        if (colon == std::string::npos) break;
        const int prio = to_int(std::string_view(w[j]).substr(0, colon), -1);
        if (prio >= 0 && prio < 8)
          pfc[static_cast<std::size_t>(prio)] = w[j].substr(colon + 1) == "on";
      }
      netdev_->pfc = pfc;
      netdev_->pfc_source = "dcb";
      return;
    }
  }

  void nvidia_line(std::string_view raw) {
    const std::string line = without_ansi(raw);
    std::vector<std::string> cells;
    {
      std::string cell;
      for (char c : line) {
        if (c == '\t') {
          cells.emplace_back(trim(cell));
          cell.clear();
        } else {
          cell += c;
        }
      }
      cells.emplace_back(trim(cell));
    }
    const std::string_view first = trim(line);
    if (first.starts_with("NIC Legend")) {
      in_legend_ = true;
      return;
    }
    if (in_legend_) {
      // "  NIC0: mlx5_0"
      const auto colon = first.find(':');
      if (colon != std::string_view::npos)
        nic_legend_[std::string(trim(first.substr(0, colon)))] =
            std::string(trim(first.substr(colon + 1)));
      return;
    }
    if (columns_.empty() && !cells.empty() && cells[0].empty()) {
      columns_.assign(cells.begin() + 1, cells.end());
      return;
    }
    if (cells.size() < 2 || !cells[0].starts_with("GPU")) return;
    const int gpu = to_int(std::string_view(cells[0]).substr(3), -1);
    if (gpu < 0) return;
    for (std::size_t c = 1; c < cells.size() && c - 1 < columns_.size(); ++c) {
      const std::string& column = columns_[c - 1];
      if (column.starts_with("GPU") || column.find("Affinity") != std::string::npos ||
          column.find("NUMA") != std::string::npos)
        continue;
      f_.gpu_nic.push_back({gpu, column, cells[c]});
    }
  }

  HostFacts& f_;
  std::string section_, arg_;
  NetdevFacts* netdev_ = nullptr;
  bool duplicate_ = false;
  bool in_pfc_ = false;
  bool in_legend_ = false;
  std::string ibv_device_;
  int ibv_port_ = 0;
  std::vector<std::string> columns_;
  std::map<std::string, std::string> nic_legend_;
};

nlohmann::json priorities(const std::optional<std::array<bool, 8>>& p) {
  if (!p) return nullptr;
  nlohmann::json j = nlohmann::json::array();
  for (std::size_t i = 0; i < 8; ++i)
    if ((*p)[i]) j.push_back(i);
  return j;
}

}  // namespace

std::string_view probe_script() {
  return script;
}

std::vector<std::string> probe_command(const std::string& agent,
                                       const std::vector<std::string>& netdevs) {
  std::vector<std::string> argv = {"sh", "-c", std::string(script), "rocehil-probe", agent};
  argv.insert(argv.end(), netdevs.begin(), netdevs.end());
  return argv;
}

HostFacts parse_probe_output(std::string_view text) {
  HostFacts facts;
  Parser parser(facts);
  std::size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    parser.line(text.substr(start, nl - start));
    start = nl + 1;
  }
  parser.finish();
  return facts;
}

nlohmann::json to_json(const HostFacts& f) {
  nlohmann::json j{{"hostname", f.hostname},
                   {"kernel", f.kernel},
                   {"agent_version", f.agent_version},
                   {"agent_problem", f.agent_problem},
                   {"nvidia_smi", f.nvidia_smi},
                   {"settings_journals", f.settings_journals},
                   {"notes", f.notes},
                   {"apt", f.apt},
                   {"packages", f.packages}};
  j["rdma"] = nlohmann::json::array();
  for (const auto& d : f.rdma) {
    nlohmann::json dj{{"name", d.name}, {"fw_ver", d.fw_ver}, {"netdev", d.netdev}};
    // A limit ibv_devinfo did not give is absent, never 0.
    if (d.max_qp > 0) dj["max_qp"] = d.max_qp;
    if (d.max_qp_wr > 0) dj["max_qp_wr"] = d.max_qp_wr;
    if (d.max_cqe > 0) dj["max_cqe"] = d.max_cqe;
    dj["ports"] = nlohmann::json::array();
    for (const auto& p : d.ports) {
      nlohmann::json pj{{"port", p.port},
                        {"state", p.state},
                        {"phys_state", p.phys_state},
                        {"link_layer", p.link_layer},
                        {"active_mtu", p.active_mtu},
                        {"gid_table_len", p.gid_table_len}};
      pj["gids"] = nlohmann::json::array();
      for (const auto& g : p.gids)
        pj["gids"].push_back(
            {{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", g.netdev}});
      dj["ports"].push_back(pj);
    }
    j["rdma"].push_back(dj);
  }
  j["netdevs"] = nlohmann::json::array();
  for (const auto& n : f.netdevs)
    j["netdevs"].push_back({{"name", n.name},
                            {"mtu", n.mtu},
                            {"operstate", n.operstate},
                            {"mac", n.mac},
                            {"addresses", n.addresses},
                            {"speed_mbps", n.speed_mbps},
                            {"numa_node", n.numa_node},
                            {"driver", n.driver},
                            {"driver_version", n.driver_version},
                            {"firmware", n.firmware},
                            {"bus_info", n.bus_info},
                            {"ecn_np", priorities(n.ecn_np)},
                            {"ecn_rp", priorities(n.ecn_rp)},
                            {"pfc", priorities(n.pfc)},
                            {"pfc_source", n.pfc_source},
                            {"trust", n.trust},
                            {"congestion", n.congestion},
                            {"prio_buffer", n.prio_buffer},
                            {"buffer_sizes", n.buffer_sizes},
                            {"buffer_source", n.buffer_source}});
  j["gpu_nic"] = nlohmann::json::array();
  for (const auto& a : f.gpu_nic)
    j["gpu_nic"].push_back({{"gpu", a.gpu}, {"nic", a.nic}, {"relation", a.relation}});
  return j;
}

const NetdevFacts* HostFacts::netdev_named(std::string_view name) const {
  for (const auto& n : netdevs)
    if (n.name == name) return &n;
  return nullptr;
}

}  // namespace rocehil::preflight
