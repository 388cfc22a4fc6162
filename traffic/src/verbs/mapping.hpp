#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>

#include "rocehil/traffic/provider.hpp"

// Pure translations between the provider interface and libibverbs values. They are the tables the
// tests pin down, so they live apart from any code that needs a device.
namespace rocehil::traffic::verbs {

// Every ibv_wc_status maps to the WcStatus that names the same cause; see the table in the .cpp
// for the statuses that have no exact counterpart.
WcStatus to_wc_status(ibv_wc_status status) noexcept;

// Copies a failed completion's own words (ibv_wc_status_str: static text) and vendor syndrome
// into `out`, for the error a workload reports.
void note_device_status(const ibv_wc& wc, Completion& out) noexcept;

// The work-request opcode for a send-queue operation; nullopt for Opcode::recv.
std::optional<ibv_wr_opcode> to_wr_opcode(Opcode op) noexcept;

// Path MTU in bytes (256 .. 4096, powers of two) <-> ibv_mtu; nullopt / 0 for anything else.
std::optional<ibv_mtu> to_ibv_mtu(std::uint32_t bytes) noexcept;
std::uint32_t mtu_bytes(ibv_mtu mtu) noexcept;

// The local ACK timeout is 4.096 us * 2^t for t in 1..31 (t = 0 means "wait forever", which a test
// harness never wants). Returns the smallest t whose timeout is at least `microseconds`, capped at
// 31 (2.4 hours); 0 us asks for the shortest timeout, t = 1.
std::uint8_t ack_timeout_exponent(std::uint32_t microseconds) noexcept;
double ack_timeout_microseconds(std::uint8_t exponent) noexcept;

}  // namespace rocehil::traffic::verbs
