#include "verbs/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rocehil/common/error.hpp"
#include "verbs/mapping.hpp"

namespace rocehil::traffic::verbs {

namespace {

ibv_port_attr query_port(ibv_context* context, std::uint8_t port, std::string_view device) {
  ibv_port_attr attributes{};
  const int error = ibv_query_port(context, port, &attributes);
  if (error != 0) {
    throw system_error(fmt::format("ibv_query_port({} port {})", device, port), error);
  }
  return attributes;
}

ibv_device_attr query_device(ibv_context* context, std::string_view device) {
  ibv_device_attr attributes{};
  const int error = ibv_query_device(context, &attributes);
  if (error != 0) throw system_error(fmt::format("ibv_query_device({})", device), error);
  return attributes;
}

ibv_device* find_device(const DeviceList& list, const std::string& name) {
  const auto devices = list.devices();
  if (name.empty()) return devices.front();
  for (ibv_device* device : devices) {
    if (name == ibv_get_device_name(device)) return device;
  }
  std::string names;
  for (ibv_device* device : devices) {
    names += names.empty() ? "" : ", ";
    names += ibv_get_device_name(device);
  }
  throw input_error(fmt::format("no RDMA device named '{}' on this host; it has: {}", name, names));
}

std::string_view link_layer_name(std::uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    default: return "unknown";
  }
}

}  // namespace

std::string no_device_message(int error) {
  std::string reason;
  if (error == ENOSYS) {
    reason = " (the kernel has no RDMA support loaded: load the NIC's RDMA driver, e.g. mlx5_ib)";
  } else if (error != 0) {
    reason = fmt::format(" ({})", std::strerror(error));
  }
  return fmt::format(
      "no RDMA device found: ibv_get_device_list found 0 devices{}; use the 'soft' "
      "provider on hosts without an RNIC",
      reason);
}

std::vector<GidEntry> read_gid_table(ibv_context* context, std::uint8_t port, int table_length) {
  std::vector<GidEntry> entries;
  for (int index = 0; index < table_length; ++index) {
    ibv_gid_entry entry{};
    // ENODATA marks an empty slot; other failures (a slot changing under us) are skipped too:
    // a listing should show what is there, and selection only needs the valid entries.
    if (ibv_query_gid_ex(context, port, static_cast<std::uint32_t>(index), &entry, 0) != 0) {
      continue;
    }
    static constexpr ibv_gid zero{};
    if (std::memcmp(entry.gid.raw, zero.raw, sizeof zero.raw) == 0) continue;
    entries.push_back(GidEntry{index, entry.gid, entry.gid_type});
  }
  return entries;
}

std::shared_ptr<DeviceContext> open_device(const ProviderOptions& options) {
  const DeviceList list = DeviceList::get();
  if (list.devices().empty()) {
    throw Error(ExitCode::infrastructure, no_device_message(list.error()), list.error());
  }
  ibv_device* device = find_device(list, options.device);

  auto opened = std::make_shared<DeviceContext>();
  opened->name = ibv_get_device_name(device);
  opened->port = options.port;
  opened->context = open_context(device);
  const std::string& name = opened->name;
  ibv_context* context = opened->context.get();

  opened->device_attr = query_device(context, name);
  if (options.port == 0 || options.port > opened->device_attr.phys_port_cnt) {
    throw input_error(fmt::format("RDMA device {} has no port {} (it has ports 1..{})", name,
                                  options.port, opened->device_attr.phys_port_cnt));
  }
  opened->port_attr = query_port(context, options.port, name);
  const ibv_port_attr& port = opened->port_attr;
  if (port.state != IBV_PORT_ACTIVE) {
    throw Error(
        ExitCode::infrastructure,
        fmt::format("RDMA device {} port {} is {}, not ACTIVE: check the link ('ibv_devinfo "
                    "-d {}', 'ip link' on its netdev)",
                    name, options.port, ibv_port_state_str(port.state), name),
        ENETDOWN);
  }
  if (port.link_layer != IBV_LINK_LAYER_ETHERNET) {
    throw input_error(
        fmt::format("RDMA device {} port {} has link layer {}; RoCEv2 needs an "
                    "Ethernet port",
                    name, options.port, link_layer_name(port.link_layer)));
  }

  const std::vector<GidEntry> gids = read_gid_table(context, options.port, port.gid_tbl_len);
  opened->gid_index =
      select_gid_index(gids, options.gid_index, options.address, name, options.port);
  const auto chosen = std::find_if(gids.begin(), gids.end(),
                                   [&](const GidEntry& e) { return e.index == opened->gid_index; });
  opened->gid = chosen->gid;
  opened->address = options.address.empty() ? gid_address_text(opened->gid) : options.address;
  opened->limits =
      device_limits(name, options.port, opened->gid_index, opened->device_attr, opened->port_attr);

  opened->pd = allocate_pd(context, name);
  return opened;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> result;
  const DeviceList list = DeviceList::get();
  for (ibv_device* device : list.devices()) {
    DeviceInfo info;
    info.name = ibv_get_device_name(device);
    info.provider = "verbs";
    try {
      const Context context = open_context(device);
      const ibv_device_attr attributes = query_device(context.get(), info.name);
      info.detail = fmt::format("firmware {}", attributes.fw_ver);
      for (std::uint8_t port = 1; port <= attributes.phys_port_cnt; ++port) {
        const ibv_port_attr port_attr = query_port(context.get(), port, info.name);
        const std::vector<GidEntry> gids =
            read_gid_table(context.get(), port, port_attr.gid_tbl_len);
        info.detail +=
            fmt::format("; port {} {} {} active_mtu {} gids: {}", port,
                        ibv_port_state_str(port_attr.state), link_layer_name(port_attr.link_layer),
                        mtu_bytes(port_attr.active_mtu), describe_gids(gids));
        for (const GidEntry& gid : gids) {
          if (gid.type != IBV_GID_TYPE_ROCE_V2) continue;
          std::string address = gid_address_text(gid.gid);
          if (std::find(info.addresses.begin(), info.addresses.end(), address) ==
              info.addresses.end()) {
            info.addresses.push_back(std::move(address));
          }
        }
      }
    } catch (const Error& error) {
      info.detail = fmt::format("cannot query: {}", error.what());
    }
    result.push_back(std::move(info));
  }
  return result;
}

}  // namespace rocehil::traffic::verbs
