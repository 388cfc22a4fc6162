#include "capture/inject_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "rocehil/capture/pause_injector.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/units.hpp"
#include "shared/interrupt.hpp"
#include "shared/progress.hpp"

namespace rocehil::cli {

namespace {

// The link speeds whose pause time the summary states: a quantum is 512 bit times, so the same
// frame holds a faster port for less time.
constexpr std::array<int, 3> summary_link_gbps = {100, 200, 400};

struct InjectCliOptions {
  bool pause_8023x = false;
  std::string iface;
  std::vector<std::string> priorities;
  std::int64_t quanta = 0xffff;
  double pps = 1000;
  double duration_s = 1;
  std::optional<std::uint64_t> count;
  std::string src_mac;
  bool xon_at_end = false;
  bool json = false;
  bool progress = true;
};

std::vector<unsigned> parse_priorities(const std::vector<std::string>& texts) {
  std::vector<unsigned> out;
  for (const auto& text : texts) {
    unsigned value = 0;
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || stop != end)
      throw input_error(fmt::format(
          "--priority '{}': give PFC priorities 0-7, e.g. --priority 3 or --priority 3,4", text));
    out.push_back(value);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

capture::MacAddress parse_mac(const std::string& text) {
  capture::MacAddress mac{};
  const auto refuse = [&] {
    return input_error(
        fmt::format("--src-mac '{}': give a MAC address like 02:00:00:00:00:10", text));
  };
  if (text.size() != 17) throw refuse();
  for (std::size_t i = 0; i < mac.size(); ++i) {
    const char* first = text.data() + 3 * i;
    if (i > 0 && first[-1] != ':' && first[-1] != '-') throw refuse();
    const auto [stop, ec] = std::from_chars(first, first + 2, mac[i], 16);
    if (ec != std::errc() || stop != first + 2) throw refuse();
  }
  return mac;
}

std::string mac_text(const capture::MacAddress& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

capture::InjectOptions to_inject_options(const InjectCliOptions& o) {
  if (o.quanta < 0 || o.quanta > 0xffff)
    throw input_error(fmt::format(
        "--quanta {}: quanta are 0-65535 (one quantum is 512 bit times; 65535 holds a 100G port "
        "for 335.5 us; 0 releases it)",
        o.quanta));
  capture::InjectOptions options;
  options.iface = o.iface;
  options.pause_8023x = o.pause_8023x;
  if (!o.pause_8023x) options.priorities = parse_priorities(o.priorities);
  options.quanta = static_cast<std::uint16_t>(o.quanta);
  options.pps = o.pps;
  options.duration_s = o.duration_s;
  options.count = o.count;
  if (!o.src_mac.empty()) options.src_mac = parse_mac(o.src_mac);
  options.end_with_xon = o.xon_at_end;
  capture::validate(options);
  return options;
}

std::string priorities_text(const std::vector<unsigned>& priorities) {
  return fmt::format("{}", fmt::join(priorities, ","));
}

// "335.5 us": four figures, as the pause times in the design guide are written.
std::string pause_time_text(double ns) {
  return ns < 1000 ? fmt::format("{:.4g} ns", ns) : fmt::format("{:.4g} us", ns / 1000);
}

std::string what_is_sent(const capture::InjectOptions& o) {
  std::string pause_time;
  for (const int gbps : summary_link_gbps)
    pause_time += fmt::format("{}{} at {}G", pause_time.empty() ? "" : ", ",
                              pause_time_text(pause_quanta_to_ns(o.quanta, gbps)), gbps);
  if (o.pause_8023x) return fmt::format("PAUSE (802.3x), quanta {} ({})", o.quanta, pause_time);
  return fmt::format("PFC priorities {}, quanta {} ({})", priorities_text(o.priorities), o.quanta,
                     pause_time);
}

nlohmann::json summary_json(const capture::InjectOptions& o, const capture::InjectResult& r,
                            std::uint64_t planned, bool was_interrupted) {
  nlohmann::json pause_ns = nlohmann::json::object();
  for (const int gbps : summary_link_gbps)
    pause_ns[fmt::format("{}G", gbps)] = pause_quanta_to_ns(o.quanta, gbps);
  return {{"schema_version", 1},
          {"iface", o.iface},
          {"kind", o.pause_8023x ? "pause" : "pfc"},
          {"priorities", o.pause_8023x ? std::vector<unsigned>{} : o.priorities},
          {"quanta", o.quanta},
          {"pps", o.pps},
          {"duration_s", o.count ? nlohmann::json() : nlohmann::json(o.duration_s)},
          {"count", o.count ? nlohmann::json(*o.count) : nlohmann::json()},
          {"frames_planned", planned},
          {"frames_sent", r.frames_sent},
          {"xon_requested", o.end_with_xon},
          {"xon_sent", r.xon_sent},
          {"first_ns", r.first_ns},
          {"last_ns", r.last_ns},
          {"frame_bytes", r.frame_bytes},
          {"src_mac", mac_text(r.src_mac)},
          {"late_frames", r.late_frames},
          {"pause_ns_per_frame", pause_ns},
          {"interrupted", was_interrupted},
          {"error", r.send_error.empty() ? nlohmann::json() : nlohmann::json(r.send_error)}};
}

std::string summary_text(const capture::InjectOptions& o, const capture::InjectResult& r,
                         std::uint64_t planned, bool was_interrupted) {
  std::string out =
      fmt::format("inject on {} from {}: {}\n", o.iface, mac_text(r.src_mac), what_is_sent(o));
  const double span_ns = static_cast<double>(r.last_ns - r.first_ns);
  out += fmt::format("sent {} of {} frames ({} B each, {:.10g} per second) in {}", r.frames_sent,
                     planned, r.frame_bytes, o.pps,
                     format_duration_ns(r.frames_sent > 0 ? span_ns : 0));
  out += fmt::format("; {} late by more than a period", r.late_frames);
  if (o.end_with_xon) out += r.xon_sent > 0 ? "; XON sent" : "; XON NOT sent";
  out += "\n";
  if (was_interrupted) out += "interrupted: stopped before the end\n";
  return out;
}

int run_inject(const InjectCliOptions& cli) {
  const capture::InjectOptions options = to_inject_options(cli);
  const std::uint64_t planned = capture::frames_to_send(options);
  const char* kind = options.pause_8023x ? "pause" : "pfc";

  const bool announce = !cli.json || ::isatty(STDERR_FILENO) != 0;
  bool announced = false;
  Progress progress(fmt::format("inject {} {}", kind, options.iface), "frames", planned);
  progress.set_enabled(cli.progress);

  const auto on_progress = [&](std::uint64_t sent) {
    // Said once the interface is open, so that a refused one gets one line: its error.
    if (announce && !announced) {
      fmt::print(stderr, "inject: {} on {}, {} frames at {:.10g}/s; Ctrl-C to stop\n",
                 what_is_sent(options), options.iface, planned, options.pps);
      announced = true;
    }
    progress.update(sent);
  };
  capture::InjectResult result;
  bool was_interrupted = false;
  {
    // Ctrl-C and SIGTERM stop the injector at the next frame; the summary is still printed.
    const InterruptScope interrupts;
    result = capture::inject_pause_frames(options, interrupts.flag(), on_progress);
    was_interrupted = interrupts.flag().load();
  }
  progress.finish();

  if (cli.json)
    fmt::print("{}\n", summary_json(options, result, planned, was_interrupted).dump(2));
  else
    fmt::print("{}", summary_text(options, result, planned, was_interrupted));
  std::fflush(stdout);
  if (!result.send_error.empty()) {
    fmt::print(stderr, "rocehil: error: {}\n", result.send_error);
    return static_cast<int>(ExitCode::infrastructure);
  }
  return was_interrupted ? static_cast<int>(ExitCode::infrastructure) : 0;
}

constexpr const char* frames_help = R"(
What goes out:
  PFC (802.1Qbb)  MAC control frame to 01:80:c2:00:00:01, EtherType 0x8808, opcode 0x0101: a
                  class-enable vector naming priorities 0-7 and a pause time for each. The port
                  that receives it stops sending those priorities for that long (XOFF); quanta 0
                  lets them go at once (XON). 60 bytes, 64 on the wire with the FCS.
  PAUSE (802.3x)  Same address and EtherType, opcode 0x0001, one pause time: the whole link stops.
                  Not PFC.

Quanta in time: one quantum is 512 bit times, 5.12 ns at 100G (2.56 ns at 200G, 1.28 ns at 400G).
The default 65535 holds a 100G port for 335.5 us; a new frame restarts the timer, so frames every
300 us or less (--pps 3334 or more) keep it paused; slower, and it resumes between frames.

Frames leave on an absolute schedule, frame i at start + i/pps, so late frames never shift the
rest; at high rates the frames that are due go out together in one system call. 'late_frames'
counts frames sent more than one period after their time.

Who obeys them: a NIC (a ConnectX stops the priority's traffic class), a switch port, and a
soft-provider host, whose NIC pauses the QPs whose DSCP maps to the priority (DSCP >> 3) and
counts rx_prioP_pause, as 'ethtool -S' names it (docs/rehearsal.md, "PFC on the soft NIC").
A veth pair, the soft host's address on one end, the frames into the other:
  rocehil inject pfc --iface veth-b --priority 3 --pps 100 --duration 2 --xon-at-end
)";

constexpr const char* common_footer = R"(
Needs root (or CAP_NET_RAW): frames go out through an AF_PACKET socket on --iface, which must
exist, be up and have a link. The source address is the interface's unless --src-mac says.
--json prints one object (schema_version 1): iface, kind (pfc|pause), priorities, quanta, pps,
duration_s or count, frames_planned, frames_sent, xon_sent, first_ns and last_ns (wall clock of
the first and last send, XON included), frame_bytes, src_mac, late_frames, pause_ns_per_frame
(the pause one frame asks for at 100G, 200G, 400G), interrupted, error.
Ctrl-C (or SIGTERM) stops early: the XON of --xon-at-end still goes out and the summary is printed.
Exit codes: 0 every frame sent, 2 bad usage (no such interface, interface down, not root),
3 interrupted or a send failed (what was sent is still reported).)";

void add_options(CLI::App* cmd, const std::shared_ptr<InjectCliOptions>& o) {
  cmd->add_option("--iface", o->iface, "Interface to send the frames out of")->required();
  if (!o->pause_8023x)
    cmd->add_option("--priority", o->priorities,
                    "PFC priorities to pause, 0-7: '3', '3,4', or the option repeated")
        ->required()
        ->delimiter(',');
  cmd->add_option("--quanta", o->quanta,
                  "Pause time in quanta of 512 bit times, 0-65535 (0: XON, release)")
      ->capture_default_str();
  cmd->add_option("--pps", o->pps, "Frames per second, above 0, at most 10,000,000")
      ->capture_default_str();
  CLI::Option* duration =
      cmd->add_option("--duration", o->duration_s, "Seconds to send for: round(pps x S) frames")
          ->capture_default_str();
  cmd->add_option("--count", o->count, "Send exactly N frames (instead of --duration)")
      ->excludes(duration);
  cmd->add_option("--src-mac", o->src_mac,
                  "Source MAC of the frames (default: the interface's address)");
  cmd->add_flag("--xon-at-end", o->xon_at_end,
                "Then send one frame with quanta 0 (XON), also after Ctrl-C; not in frames_sent");
  cmd->add_flag("--json", o->json, "Print the summary as JSON (schema_version 1)");
  cmd->add_flag_callback(
      "--no-progress", [o] { o->progress = false; }, "Do not show progress on stderr");
}

}  // namespace

void add_inject_command(CLI::App& app, int& exit_code) {
  CLI::App* inject = app.add_subcommand(
      "inject",
      "Send PFC or 802.3x PAUSE frames out of an interface at a set rate: exercise a switch "
      "port's PFC watchdog, or make PFC in the testbed, where Linux never sends it.");
  inject->require_subcommand(1);
  inject->footer(std::string(frames_help) + "\nRun 'rocehil inject pfc --help' for the options.");

  auto pfc = std::make_shared<InjectCliOptions>();
  CLI::App* pfc_cmd = inject->add_subcommand(
      "pfc", "Send 802.1Qbb PFC frames that pause the given priorities for --quanta");
  add_options(pfc_cmd, pfc);
  pfc_cmd->footer(std::string(frames_help) + R"(
Examples:
  sudo rocehil inject pfc --iface ens3f1 --priority 3 --pps 10000 --duration 30 --xon-at-end
      holds priority 3 of the switch port behind ens3f1 for 30 s: its PFC watchdog should act
  sudo rocehil inject pfc --iface ens3f1 --priority 3,4 --quanta 0 --count 1
      one XON for priorities 3 and 4
Against a testbed (rocehil testbed up --dir /tmp/tb --id tb1): spine s1 pauses priority 3 on its
link to leaf l1; the default mirror (spine-to-leaf) copies it to the capture namespace:
  sudo ip netns exec rocehil-tb1-cap rocehil capture --iface tb1-m1 --filter cnp-pfc --duration 3 &
  sudo ip netns exec rocehil-tb1-s1 rocehil inject pfc --iface tb1-l1 --priority 3 --pps 5000 \
      --duration 2 --xon-at-end --json
)" + common_footer);
  pfc_cmd->callback([pfc, &exit_code] { exit_code = run_inject(*pfc); });

  auto pause = std::make_shared<InjectCliOptions>();
  pause->pause_8023x = true;
  CLI::App* pause_cmd = inject->add_subcommand(
      "pause", "Send 802.3x PAUSE frames that stop the whole link for --quanta");
  add_options(pause_cmd, pause);
  pause_cmd->footer(std::string(frames_help) + R"(
Examples:
  sudo rocehil inject pause --iface ens3f1 --quanta 1000 --pps 100 --duration 5
  sudo ip netns exec rocehil-tb1-s1 rocehil inject pause --iface tb1-l1 --count 100 --xon-at-end
)" + common_footer);
  pause_cmd->callback([pause, &exit_code] { exit_code = run_inject(*pause); });
}

}  // namespace rocehil::cli
