#include "capture/analyze_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cmath>
#include <memory>
#include <optional>

#include "capture/analysis_text.hpp"
#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/file_analysis.hpp"
#include "rocehil/capture/file_link_speed.hpp"
#include "rocehil/capture/mac_address.hpp"
#include "rocehil/common/error.hpp"
#include "shared/progress.hpp"

namespace rocehil::cli {

namespace {

nlohmann::json problems_json(const std::vector<capture::FileProblem>& problems) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : problems)
    out.push_back(
        {{"kind", p.kind == capture::FileProblem::Kind::truncated ? "truncated" : "corrupt"},
         {"offset", p.offset},
         {"record", p.record},
         {"detail", p.detail}});
  return out;
}

// A number from an option's text, or NaN when it is not one (trailing garbage included).
double parse_number(const std::string& text) {
  std::size_t used = 0;
  try {
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nan("");
}

std::optional<capture::MirrorDirection> parse_direction(std::string_view text) {
  for (auto d : {capture::MirrorDirection::leaf_to_spine, capture::MirrorDirection::spine_to_leaf})
    if (text == capture::to_string(d)) return d;
  return std::nullopt;
}

}  // namespace

void PauseOptions::apply_to(capture::AnalyzerOptions& options) const {
  options.storm_ms = storm_ms;
  options.direction = direction;
  options.spine_macs = spine_macs;
}

void add_pause_options(CLI::App& cmd, PauseOptions& options) {
  cmd.add_option("--storm-ms", options.storm_ms,
                 "A continuous pause of one sender on one priority longer than this many "
                 "milliseconds is a storm (XOFFs refreshed before they expire are one pause)")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            const double v = parse_number(text);
            if (std::isfinite(v) && v > 0) return {};
            return "'" + text + "' is not a duration; give milliseconds above 0, e.g. 100 or 2.5";
          },
          "MS", "storm threshold"))
      ->capture_default_str();
  cmd.add_option_function<std::string>(
         "--direction",
         [&options](const std::string& text) { options.direction = *parse_direction(text); },
         "Which way the mirrored link carries frames: spine-to-leaf marks every PFC/PAUSE frame as "
         "sent by a spine, leaf-to-spine marks none")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            if (parse_direction(text)) return {};
            return "'" + text + "' is not a direction; give leaf-to-spine or spine-to-leaf";
          },
          "leaf-to-spine|spine-to-leaf", "mirror direction"));
  cmd.add_option_function<std::vector<std::string>>(
         "--spine-mac",
         [&options](const std::vector<std::string>& texts) {
           for (const std::string& text : texts)
             options.spine_macs.push_back(*capture::parse_mac_address(text));
         },
         "Source MAC of a spine's port (repeat for each): PFC/PAUSE frames it sent are reported "
         "as from spine")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            if (capture::parse_mac_address(text)) return {};
            return "'" + text +
                   "' is not a MAC address; give six hex pairs, e.g. 0c:42:a1:00:00:01";
          },
          "MAC", "MAC address"))
      // One MAC per --spine-mac, so the capture file may follow it; every occurrence counts.
      ->allow_extra_args(false)
      ->take_all();
}

void add_analyze_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Decode a mirror-port capture: RoCEv2 packets, CNPs per QP, PFC per priority (time paused, "
      "storms), ECN marks and per-flow PSN gaps, retransmits and NAKs.");
  cmd->footer(R"(
Reads pcap (us and ns timestamps) and pcapng, from a file or '-' for standard input; Ethernet
with 802.1Q/802.1ad tags; IPv4 and IPv6. A flow is (IP src, IP dst, BTH dest QP) over RoCEv2
packets other than CNPs; flow bytes are wire lengths, so a 128-byte snap length loses nothing.

Examples:
  rocehil analyze spine1-mirror.pcapng                 tables for a person
  rocehil analyze spine1-mirror.pcapng --json | jq .cnp.by_dest_qp
  rocehil analyze cap.pcap --link-gbps 400 --bin-ms 1  PFC pause time on a 400G port, 1 ms bins
  rocehil analyze cap.pcap --storm-ms 20 --spine-mac 0c:42:a1:00:00:01
                                                       storms over 20 ms; which pauses a spine sent
  tcpdump -i mirror0 -s 128 -w - | rocehil analyze -    analyze while capturing

Pauses: an XOFF (quanta > 0) pauses its priority, per sending MAC, for quanta x 512 bit times at
--link-gbps (0xffff quanta = 335.5 us at 100G); an XOFF before that runs out continues the same
pause, an XON (quanta 0) ends it. Per priority the report gives the pause requested (every XOFF's
quanta added up), the time paused, the longest continuous pause and its share of the capture, and
lists each storm: a continuous pause longer than --storm-ms, with its sender, start and length
('ongoing' when the capture ended inside it). 802.3x PAUSE is reported the same way, apart.
With --direction or --spine-mac the report also counts the pauses a spine sent toward a leaf:
a spine pauses a leaf when its own buffers fill, so these point at congestion inside the fabric
rather than at a slow host.

With --workers N, N threads read the file at once: it is cut into N parts at record boundaries
and the parts' results are joined in capture order, so the report is the one a single thread
gives (flows, PSN judgements across the cuts, pauses and storms running over them, timeline).
"file" in the JSON says how many parts were read ("parts") and whether a guessed boundary was
wrong and the part before it read on to the end ("read_on"); standard input is read by one.
Each part keeps its own table of every flow it sees; the tables are joined part after part,
by hash shards on all workers when 4 or more CPUs are usable. More workers pay off most where
frames per flow are many (a 16-core machine read 20 M frames of 4096 QPs about 6x faster with
16 workers than with one), less where flows are many for the length of the capture (200k
flows with 16 workers: 4.65x tcpdump; bench/RESULTS.md). A flow that was resending across a
cut is followed again through the part after it, on a thread of its own; "parts" is 1 when
that showed the joining wrong (a flow's PSNs spread over half the PSN space) and the file was
read again by one thread. The same threads print the flows of --json.

Exit codes: 0 read to the end (a capture cut inside its last record is a warning),
2 bad usage or a corrupt record (frames before it are still reported), 3 I/O failure.)");
  cmd->add_option("file", opts->file, "Capture file (pcap or pcapng), or - for standard input")
      ->required();
  cmd->add_flag("--json", opts->json, "Print JSON (schema_version 1) instead of tables");
  cmd->add_option("--link-gbps", opts->link_gbps,
                  "Speed of the mirrored link in Gb/s, to turn pause quanta into time (one quantum "
                  "is 512 bit times), for every interface of the file. Default: the speed the "
                  "pcapng file records for each interface (if_speed, as `rocehil capture "
                  "--write` writes it; a file merged from links of different speeds is timed "
                  "per interface), else 100; the report says which it used and where from")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            double v = 0;
            try {
              v = std::stod(text);
            } catch (const std::exception&) {
            }
            if (v > 0 && v <= 10'000) return {};
            return "'" + text + "' is not a link speed; give Gb/s above 0, e.g. 100 or 400";
          },
          "GBPS", "link speed"));
  cmd->add_option("--bin-ms", opts->bin_ms, "Width of a timeline bin in milliseconds")
      ->check(CLI::Range(1u, 3'600'000u))
      ->capture_default_str();
  cmd->add_option("--top", opts->top,
                  "Flows and CNP QPs to list, biggest first; 0 lists all (default: 10 in tables, "
                  "all in JSON)");
  cmd->add_option("--workers", opts->workers,
                  "Threads that read and analyse parts of the file at once (standard input is "
                  "read by one); the report is the same whatever the number")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--min-part-bytes", opts->min_part_bytes,
                  "With --workers: the smallest part of the file a thread takes (tests use small "
                  "parts to cut small captures)")
      ->check(CLI::Range(std::uint64_t{64}, std::uint64_t{1} << 40))
      ->capture_default_str();
  add_pause_options(*cmd, opts->pause);
  cmd->add_flag_callback(
      "--no-progress", [opts] { opts->progress = false; },
      "Do not show progress on stderr (shown for reads longer than a second)");
  cmd->callback([opts, &exit_code] { exit_code = run_analyze(*opts); });
}

std::size_t json_flow_limit(std::optional<std::size_t> top) noexcept {
  return !top || *top == 0 ? SIZE_MAX : *top;
}

std::size_t text_flow_limit(std::optional<std::size_t> top) noexcept {
  return !top ? 10 : *top == 0 ? SIZE_MAX : *top;
}

void print_analysis_json(const capture::Analysis& analysis, std::optional<std::size_t> top,
                         const nlohmann::json& extra, unsigned threads) {
  capture::write_json(
      analysis, [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); },
      json_flow_limit(top), extra, threads);
}

// The interfaces a file describes before its first frame: where its link speed is read.
std::vector<capture::FileInterface> leading_interfaces(const std::string& path) {
  auto source = capture::FileSource::open(path);
  capture::Frame first;
  source->next_batch(std::span<capture::Frame>(&first, 1));
  return source->interfaces();
}

int run_analyze(const AnalyzeOptions& o) {
  capture::AnalyzerOptions analyzer_options;
  // Standard input cannot be read twice: only --link-gbps or the default can speak for it.
  const capture::LinkSpeed speed =
      o.file == "-" ? capture::file_link_speed({}, o.link_gbps)
                    : capture::file_link_speed(leading_interfaces(o.file), o.link_gbps);
  analyzer_options.link_gbps = speed.gbps;
  analyzer_options.interface_link_gbps = speed.by_interface;
  analyzer_options.bin_ms = o.bin_ms;
  o.pause.apply_to(analyzer_options);

  std::optional<Progress> progress;
  const auto show_progress = [&](std::uint64_t consumed, std::uint64_t size) {
    if (!progress) {
      progress.emplace("analyze " + (o.file == "-" ? std::string("<stdin>") : o.file), "B", size);
      progress->set_enabled(o.progress);
    }
    progress->update(consumed);
  };
  const capture::FileAnalysis read = capture::analyze_file(
      o.file, analyzer_options, {.workers = o.workers, .min_part_bytes = o.min_part_bytes},
      show_progress);
  if (progress) progress->finish();

  const capture::Analysis& analysis = read.analysis;
  const auto& problems = read.problems;
  bool corrupt = false;
  for (const auto& p : problems) {
    corrupt |= p.kind == capture::FileProblem::Kind::corrupt;
    fmt::print(
        stderr,
        "rocehil: warning: {}: {}; reading stopped there, {} frames before it are reported\n",
        read.name, p.detail, analysis.frames);
  }

  if (o.json) {
    const nlohmann::json file = {{"path", read.name},
                                 {"format", capture::to_string(read.format)},
                                 {"problems", problems_json(problems)},
                                 {"workers", o.workers},
                                 {"parts", read.parts},
                                 {"read_on", read.read_on},
                                 {"link_gbps", speed.gbps},
                                 {"link_gbps_source", speed.source}};
    print_analysis_json(analysis, o.top, {{"file", file}}, o.workers);
  } else {
    CaptureInfo info{read.name, capture::to_string(read.format), {}, speed.source};
    for (const auto& p : problems) info.problems.push_back(p.detail);
    const std::size_t top = text_flow_limit(o.top);
    fmt::print("{}", render_analysis_text(analysis, info, top));
  }
  std::fflush(stdout);
  return corrupt ? static_cast<int>(ExitCode::bad_input) : 0;
}

}  // namespace rocehil::cli
