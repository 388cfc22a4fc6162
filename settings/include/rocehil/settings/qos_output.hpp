#pragma once

// PFC and the trust mode as the QoS tools print them, in the catalogue's canonical values:
// `mlnx_qos -i DEV` (MLNX_OFED) and `dcb pfc show dev DEV` (iproute2). The preflight's probe
// parser reads the same lines on its own; a test holds the two to the same answers.

#include <optional>
#include <string>
#include <string_view>

namespace rocehil::settings {

// The "enabled" row under "PFC configuration:": "3", "3,4" or "none"; nullopt if absent.
std::optional<std::string> pfc_in_mlnx_qos(std::string_view output);
// "Priority trust state: dscp": "dscp" or "pcp"; nullopt if absent or another word.
std::optional<std::string> trust_in_mlnx_qos(std::string_view output);
// "prio-pfc 0:off 1:off 2:off 3:on ...": "3"; nullopt if absent.
std::optional<std::string> pfc_in_dcb(std::string_view output);

}  // namespace rocehil::settings
