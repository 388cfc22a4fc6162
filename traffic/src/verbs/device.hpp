#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rocehil/traffic/provider.hpp"
#include "verbs/gid.hpp"
#include "verbs/handles.hpp"
#include "verbs/qp_attributes.hpp"

namespace rocehil::traffic::verbs {

// One opened device and port with the protection domain everything is created in. The provider,
// its CQs and its QPs share it, so it is closed after the last of them whatever order the caller
// drops them in (the member order below then closes the PD before the device).
struct DeviceContext {
  std::string name;
  std::uint8_t port = 1;
  ibv_device_attr device_attr{};
  ibv_port_attr port_attr{};
  int gid_index = 0;
  ibv_gid gid{};
  std::string address;  // the IP the GID carries (or ProviderOptions::address)
  DeviceLimits limits;  // what QP attributes are built from

  Context context;
  ProtectionDomain pd;
};

// Opens `options.device` (or the first device), checks that the port is an ACTIVE Ethernet port,
// and picks the source GID (select_gid_index). Throws rocehil::Error: infrastructure when there is
// no device or the port is down, bad input for a wrong name, port or GID choice.
std::shared_ptr<DeviceContext> open_device(const ProviderOptions& options);

// The valid entries of a port's GID table (empty slots skipped).
std::vector<GidEntry> read_gid_table(ibv_context* context, std::uint8_t port, int table_length);

// Every RDMA device with its ports, states, GIDs and firmware, for 'inventory discover'. Devices
// that cannot be opened are listed with the reason in `detail`; no devices: an empty vector.
std::vector<DeviceInfo> list_devices();

// "no RDMA device found: ..." with the reason ibv_get_device_list gave.
std::string no_device_message(int error);

}  // namespace rocehil::traffic::verbs
