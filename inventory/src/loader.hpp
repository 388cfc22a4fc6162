#pragma once

// The loader's parts, shared by the files that read each section of an inventory.

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/inventory/yaml_reader.hpp"

namespace rocehil::inventory::detail {

inline constexpr std::size_t max_hosts = 65536;

inline constexpr std::string_view name_rule =
    "use letters, digits, '.', '_' and '-' (at most 63), starting with a letter or digit";

// A value of a range entry: the values it stands for, one per host of the entry.
struct Zipped {
  std::vector<std::string> values;
  bool ok = true;
};

// Expands `node` (absent: empty strings) to `count` values: no range means the same value for
// every host; a range must have exactly `count` values.
Zipped zip(LoadContext& ctx, const YAML::Node& node, std::string_view what, std::size_t count,
           std::string_view count_source);
// Checks every expanded value with `valid`; reports the first bad one only, so one typo in a
// 128-host entry is one message.
bool all_valid(LoadContext& ctx, const YAML::Node& node, const Zipped& z,
               bool (*valid)(std::string_view), std::string_view what, std::string_view rule);
void read_ssh(LoadContext& ctx, const YAML::Node& node, const std::string& owner, SshSettings& ssh);
// An entry's name (a link, rack or capture): reported and nothing when absent or not a valid name.
std::optional<std::string> read_entry_name(LoadContext& ctx, const YAML::Node& name_node,
                                           std::string_view kind);
std::optional<Provider> read_provider(LoadContext& ctx, const YAML::Node& n, std::string_view what);
std::optional<std::string> read_agent(LoadContext& ctx, const YAML::Node& n, std::string_view what);
// `snmp:` of defaults or a switch; `owner` names it in messages ("switch 'leaf01'").
std::optional<SnmpSettings> read_snmp(LoadContext& ctx, const YAML::Node& node,
                                      const std::string& owner);

// `commands:` of a host or switch: a map of names to command lines (load_commands.cpp).
std::vector<NamedCommand> read_commands(LoadContext& ctx, const YAML::Node& node,
                                        const std::string& owner);
// A switch's `link_down` / `link_up`: a command line holding {port} and no other placeholder.
std::optional<std::string> read_port_command(LoadContext& ctx, const YAML::Node& node,
                                             const std::string& what);

// Reads the sections in dependency order (hosts and switches, then links, racks and captures
// that refer to them) whatever their order in the file.
class Loader {
 public:
  explicit Loader(LoadContext& ctx) : ctx_(ctx) {}
  std::optional<Inventory> load(const YAML::Node& root);

 private:
  template <typename ReadOne>
  void read_list(const YAML::Node& n, std::string_view what, ReadOne read_one) {
    if (n.IsNull()) return;
    if (!n.IsSequence()) {
      ctx_.error(n, fmt::format("{} must be a list of entries ('- name: ...'), not a single value "
                                "or a map",
                                what));
      return;
    }
    for (const auto& entry : n) read_one(entry);
  }
  void read_defaults(const YAML::Node& n);
  void read_controller(const YAML::Node& n);
  // `host` names the host in the hint; a default has none yet.
  std::optional<int> gid_index(const YAML::Node& n, const std::string& owner,
                               std::string_view host = "HOST");
  // A name of a host or a switch, which share one namespace because link ends name either.
  void claim_node_name(const std::string& name, const YAML::Node& at, std::string_view kind);
  void read_host(const YAML::Node& entry);
  void check_host_duplicates(const Host& h, const YAML::Node& name_node,
                             const YAML::Node& address_node);
  void read_nic(const YAML::Node& entry, const std::string& owner, std::string_view host_hint,
                Provider provider, std::size_t count, const std::string& count_source,
                std::vector<std::vector<Nic>>& out);
  void read_switch(const YAML::Node& entry);
  // A switch's ssh, link_down, link_up and commands (load_commands.cpp).
  void read_switch_control(const MapReader& m, const std::string& owner, Switch& s);
  std::optional<LinkEnd> link_end(const YAML::Node& n, const std::string& what);
  void read_link(const YAML::Node& entry);
  void read_rack(const YAML::Node& entry);
  void add_to_rack(Rack& rack, const std::string& host_name, const YAML::Node& at,
                   const std::string& owner);
  void check_host_racks();
  Rack* find_rack(const std::string& name);
  void check_nic_links();
  void read_capture(const YAML::Node& entry);
  void read_remote(const YAML::Node& n, const std::string& owner, CapturePoint& c);
  void read_mirrors(const YAML::Node& n, const std::string& owner, Mirror& mirror);

  struct Claim {
    int line = 0;
    std::string kind;
  };
  static Claim location_of_str(const YAML::Node& at, std::string_view kind) {
    return {location_of(at).line, std::string(kind)};
  }

  LoadContext& ctx_;
  Inventory inv_;
  std::map<std::string, Claim> node_names_;
  std::map<std::string, std::pair<std::string, int>> addresses_;
  std::map<std::string, std::pair<std::string, int>> nic_ips_;
  std::map<std::string, int> link_names_;
  std::map<std::string, int> rack_names_;
  std::map<std::string, std::string> host_rack_;
  // Indexes into inv_.hosts and inv_.racks: a site of thousands must not load in N^2.
  std::map<std::string, std::size_t> host_index_;
  std::map<std::string, std::size_t> rack_index_;
  struct NicLink {
    YAML::Node at;
    std::string what;
  };
  std::vector<NicLink> nic_links_;
  struct SwitchRack {
    YAML::Node at;
    std::string switch_name;
    std::string rack;
  };
  std::vector<SwitchRack> switch_racks_;
};

}  // namespace rocehil::inventory::detail
