#pragma once

#include <array>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::preflight {

// What one probe of a host found: RDMA devices, netdevs and their QoS settings, firmware, GPU-NIC
// affinity. Gathered by a fixed shell script over ssh (probe_command) and parsed here, so the
// parsing is a pure function tested on real tools' output.

struct GidEntry {
  int index = 0;
  std::string gid;     // as sysfs writes it: fe80:0000:...
  std::string type;    // "RoCE v2", "IB/RoCE v1"
  std::string netdev;  // gid_attrs/ndevs
};

struct RdmaPortFacts {
  int port = 0;
  std::string state;           // "ACTIVE", "DOWN" (sysfs "4: ACTIVE" without the number)
  std::string phys_state;      // "LinkUp"
  std::string link_layer;      // "Ethernet", "InfiniBand"
  int active_mtu = 0;          // bytes, from ibv_devinfo when installed; 0: unknown
  int gid_table_len = 0;       // entries in gids/
  std::vector<GidEntry> gids;  // the non-zero ones
};

struct RdmaDeviceFacts {
  std::string name;
  std::string fw_ver;
  std::string netdev;  // the netdev behind it (device/net/*), empty if none
  std::vector<RdmaPortFacts> ports;
  // What the device holds, from `ibv_devinfo -v` (ibv_query_device): QPs in all, work requests
  // per queue, completions per CQ. 0: unknown (no ibv_devinfo, or it did not print them).
  int max_qp = 0;
  int max_qp_wr = 0;
  int max_cqe = 0;
};

struct NetdevFacts {
  std::string name;
  int mtu = 0;
  std::string operstate;  // up, down, unknown
  std::string mac;
  std::vector<std::string> addresses;  // "198.18.1.11/24", "fe80::1/64"
  int speed_mbps = -1;                 // -1: unknown (virtual interfaces)
  int numa_node = -1;
  std::string driver, driver_version, firmware, bus_info;  // ethtool -i
  // Per priority 0-7, when the host exposes them.
  std::optional<std::array<bool, 8>> ecn_np;  // sysfs ecn/roce_np/enable/N (notification point)
  std::optional<std::array<bool, 8>> ecn_rp;  // sysfs ecn/roce_rp/enable/N (reaction point)
  std::optional<std::array<bool, 8>> pfc;     // PFC enabled priorities
  std::string pfc_source;                     // "mlnx_qos" or "dcb"
  std::string trust;                          // "dscp" or "pcp" (mlnx_qos), empty: unknown
  // DCQCN parameters, keyed by where each was read: "roce_rp/rpg_time_reset" and
  // "roce_np/min_time_between_cnps" from sysfs ecn/ (MLNX_OFED's mlx5), "cc_params/rp_time_reset"
  // from debugfs mlx5/<bus>/cc_params (the upstream mlx5_ib driver).
  std::map<std::string, std::string> congestion;
  std::string prio_buffer;    // receive buffer of each priority 0-7: "0,0,0,1,0,0,0,0"
  std::string buffer_sizes;   // bytes of each receive buffer: "130944,130944,0,0,0,0,0,0"
  std::string buffer_source;  // "mlnx_qos" or "dcb"
};

struct GpuNicAffinity {
  int gpu = 0;
  std::string nic;       // RDMA device name from the NIC legend, e.g. mlx5_0
  std::string relation;  // nvidia-smi topo -m: X, PIX, PXB, PHB, NODE, SYS, NV#
};

struct HostFacts {
  std::string hostname;
  std::string kernel;
  std::string agent_version;  // "rocehil 0.1.0" as --version printed it; empty if it did not run
  std::string agent_problem;  // why not: "not found", "not executable", its stderr
  bool apt = false;           // apt-get is there: --deploy can install the package
  std::map<std::string, std::string> packages;  // rocehil's packages installed: name -> version
  std::vector<RdmaDeviceFacts> rdma;
  std::vector<NetdevFacts> netdevs;
  bool nvidia_smi = false;  // nvidia-smi is installed
  std::vector<GpuNicAffinity> gpu_nic;
  // The journals of fabric settings a run changed and did not put back (settings/journal.hpp)
  // in /run/rocehil/settings on the host, relative to it: "FABRIC/h1.json",
  // "FABRIC/h1.soft-198.18.1.11.json", and older rocehils' "h1.json". A run, selftest or
  // inventory check puts back the ones named for the host in its fabric (and the older ones)
  // whose runs are gone.
  std::vector<std::string> settings_journals;
  std::vector<std::string> notes;  // output the parser did not understand, for the report

  // The netdev called `name`; null when the host has none.
  const NetdevFacts* netdev_named(std::string_view name) const;
};

// The fixed probe script. It takes the agent path and then netdev names as its positional
// arguments; those netdevs are probed in detail (ethtool, ECN, PFC), and every RDMA device's
// netdev too. It prints sections "@@ NAME ARG" followed by their lines.
std::string_view probe_script();
// The remote argv: {"sh", "-c", SCRIPT, "rocehil-probe", agent, netdev...}. The ssh launcher
// quotes each word, so the names reach the script as data.
std::vector<std::string> probe_command(const std::string& agent,
                                       const std::vector<std::string>& netdevs);
// Never throws on odd output: what it cannot read goes to notes.
HostFacts parse_probe_output(std::string_view text);

nlohmann::json to_json(const HostFacts& facts);

}  // namespace rocehil::preflight
