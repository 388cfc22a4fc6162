#include "rocehil/testbed/options.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {

std::string_view to_string(MirrorDirection direction) {
  switch (direction) {
    case MirrorDirection::spine_to_leaf: return "spine-to-leaf";
    case MirrorDirection::leaf_to_spine: return "leaf-to-spine";
    case MirrorDirection::both: return "both";
  }
  return "?";
}

std::string_view to_string(MirrorMode mode) {
  switch (mode) {
    case MirrorMode::local: return "local";
    case MirrorMode::erspan3: return "erspan";
    case MirrorMode::erspan2: return "erspan2";
    case MirrorMode::gre: return "gre";
  }
  return "?";
}

MirrorMode parse_mirror_mode(std::string_view text) {
  for (auto m : {MirrorMode::local, MirrorMode::erspan3, MirrorMode::erspan2, MirrorMode::gre})
    if (to_string(m) == text) return m;
  throw input_error(fmt::format(
      "--mirror-mode '{}': give local (a veth into the capture namespace), erspan (ERSPAN type "
      "III), erspan2 (ERSPAN type II) or gre (GRE transparent Ethernet bridging)",
      text));
}

std::string_view to_string(Routing routing) {
  switch (routing) {
    case Routing::static_routes: return "static";
    case Routing::bgp: return "bgp";
  }
  return "?";
}

Routing parse_routing(std::string_view text) {
  for (auto r : {Routing::static_routes, Routing::bgp})
    if (to_string(r) == text) return r;
  throw input_error(fmt::format(
      "--routing '{}': give static (routes written once by up) or bgp (FRR's eBGP with BFD in "
      "every switch)",
      text));
}

std::uint32_t stable_hash(std::string_view text) {
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

std::string derive_id(std::string_view absolute_dir) {
  const std::uint32_t hash = stable_hash(absolute_dir);
  return fmt::format("t{:04x}", (hash ^ (hash >> 16)) & 0xffffu);
}

namespace {

bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > max_id_length) return false;
  if (id[0] < 'a' || id[0] > 'z') return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

void check_range(std::string_view option, int value, int low, int high, std::string_view why) {
  if (value < low || value > high)
    throw input_error(fmt::format("{} {}: give {} to {} ({})", option, value, low, high, why));
}

}  // namespace

std::string_view to_string(GuestAccel accel) {
  switch (accel) {
    case GuestAccel::automatic: return "auto";
    case GuestAccel::kvm: return "kvm";
    case GuestAccel::tcg: return "tcg";
  }
  return "?";
}

GuestAccel parse_guest_accel(std::string_view text) {
  for (auto a : {GuestAccel::automatic, GuestAccel::kvm, GuestAccel::tcg})
    if (to_string(a) == text) return a;
  throw input_error(fmt::format(
      "--vm-accel '{}': give auto, kvm (hardware virtualisation) or tcg (full emulation)", text));
}

void validate(const TestbedOptions& o) {
  if (o.dir.empty())
    throw input_error("--dir is empty: name the directory for the testbed's files");
  if (o.dir.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+@,=:") !=
      std::string::npos)
    throw input_error(fmt::format(
        "--dir '{}': use letters, digits and / . _ - + @ , = : only (the path goes into sshd and "
        "ssh configuration files, which split on spaces and quotes)",
        o.dir));
  if (!valid_id(o.id))
    throw input_error(fmt::format(
        "--id '{}': use 1 to {} lowercase letters and digits, starting with a letter (it prefixes "
        "interface names, which Linux limits to 15 characters)",
        o.id, max_id_length));
  check_range("--hosts", o.hosts, 1, max_hosts, "one host namespace each");
  check_range("--racks", o.racks, 1, max_racks, "one leaf each");
  if (o.racks > o.hosts)
    throw input_error(
        fmt::format("--racks {} is more than --hosts {}: every rack needs a host; lower --racks",
                    o.racks, o.hosts));
  if ((o.hosts + o.racks - 1) / o.racks > max_hosts_per_rack)
    throw input_error(fmt::format(
        "--hosts {} in --racks {} puts more than {} hosts in a rack (each rack's hosts share "
        "one /24); raise --racks",
        o.hosts, o.racks, max_hosts_per_rack));
  check_range("--spines", o.spines, 1, max_spines, "one spine router namespace each");
  check_range("--host-mbps", o.host_mbps, 0, 100'000, "0 leaves host links unshaped");
  check_range("--uplink-mbps", o.uplink_mbps, 0, 100'000, "0 leaves spine links unshaped");
  if (o.ecn) check_range("--ecn-mark-mbps", o.ecn_mark_mbps, 1, 100'000, "or --no-ecn");
  check_range("--mtu", o.mtu, 1280, 9000, "bytes on fabric links; RoCE MTU 4096 needs 4200");
  if (o.vm.enabled) {
    check_range("--vm-memory", o.vm.memory_mb, 256, 16384,
                "MiB per guest; its root file system is this machine's, only writes use memory");
  }
  // FRR's own limits for a BFD profile's intervals and detect multiplier.
  check_range("--bfd-interval-ms", o.bfd.interval_ms, 10, 60000,
              "ms between BFD packets on each BGP session");
  check_range("--bfd-multiplier", o.bfd.multiplier, 2, 255,
              "BFD packets missed in a row before a session is down");
  if (o.mirror_truncate != 0) {
    if (o.mirror_mode == MirrorMode::local)
      throw input_error(fmt::format(
          "--mirror-truncate {} needs --mirror-mode erspan, erspan2 or gre: a local mirror copies "
          "whole frames",
          o.mirror_truncate));
    check_range("--mirror-truncate", o.mirror_truncate, min_mirror_truncate, 65535,
                "bytes of each frame kept, at least its Ethernet header; 0 keeps whole frames");
  }
}

}  // namespace rocehil::testbed
