#include "rocehil/reports/run_kind.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <utility>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {

namespace {

constexpr std::array<std::pair<RunKind, std::string_view>, 7> kind_names = {{
    {RunKind::full, "full"},
    {RunKind::only, "only"},
    {RunKind::set, "set"},
    {RunKind::bisect, "bisect"},
    {RunKind::selftest, "selftest"},
    {RunKind::calibrate, "calibrate"},
    {RunKind::unknown, "unknown"},
}};

// The words of a command line as sh would split them: single quotes keep everything, double
// quotes keep everything but \" \\ \$ \`, a backslash outside quotes keeps the next character.
std::vector<std::string> shell_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const auto end = line.find('\'', i + 1);
      word += line.substr(i + 1, end == std::string_view::npos ? end : end - i - 1);
      if (end == std::string_view::npos) break;
      i = end;
    } else if (c == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size() &&
            std::string_view("\"\\$`").find(line[i + 1]) != std::string_view::npos)
          ++i;
        word += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace

std::string_view to_string(RunKind k) {
  for (const auto& [kind, name] : kind_names)
    if (kind == k) return name;
  return "unknown";
}

std::optional<RunKind> parse_run_kind(std::string_view name) {
  for (const auto& [kind, n] : kind_names)
    if (n == name) return kind;
  return std::nullopt;
}

std::vector<RunKind> RunKinds::list() const {
  std::vector<RunKind> out;
  for (const auto& [kind, name] : kind_names)
    if (contains(kind)) out.push_back(kind);
  return out;
}

RunKinds parse_run_kinds(std::string_view text, std::string_view option) {
  if (text == "all") return RunKinds::all();
  RunKinds out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const auto comma = text.find(',', from);
    const std::string_view name =
        text.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from);
    const auto kind = parse_run_kind(name);
    if (!kind) {
      std::vector<std::string_view> known;
      for (const auto& [k, n] : kind_names) known.push_back(n);
      throw input_error(
          fmt::format("{} '{}': '{}' is not a kind of run (give 'all' or some of {} "
                      "separated by commas)",
                      option, text, name, fmt::join(known, ", ")));
    }
    out.insert(*kind);
    if (*kind == RunKind::full) out.insert(RunKind::unknown);  // counted as full
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  return out;
}

std::string describe(const RunKindInfo& k) {
  switch (k.kind) {
    case RunKind::full: return "a full run";
    case RunKind::only: return fmt::format("an --only '{}' run", k.only);
    case RunKind::set: return fmt::format("a --set run ({})", fmt::join(k.set, ", "));
    case RunKind::bisect: return "a bisect step";
    case RunKind::selftest: return "a selftest run";
    case RunKind::calibrate: return "a calibrate run";
    case RunKind::unknown: break;
  }
  return "a run of unknown kind";
}

RunKindInfo kind_of_run(RunKind started_as, std::string only, std::vector<std::string> set) {
  RunKindInfo info{.kind = started_as, .only = std::move(only), .set = std::move(set)};
  if (started_as == RunKind::full)
    info.kind = !info.only.empty()  ? RunKind::only
                : !info.set.empty() ? RunKind::set
                                    : RunKind::full;
  return info;
}

RunKindInfo kind_from_command_line(std::string_view command_line) {
  const std::vector<std::string> words = shell_words(command_line);
  const auto is_rocehil = [](const std::string& w) {
    return w == "rocehil" || w.ends_with("/rocehil");
  };
  const auto just = [](RunKind k) { return RunKindInfo{.kind = k, .only = {}, .set = {}}; };
  if (words.size() < 2 || !is_rocehil(words[0])) return just(RunKind::unknown);
  const std::string& command = words[1];
  if (command == "bisect") return just(RunKind::bisect);
  if (command == "selftest") return just(RunKind::selftest);
  if (command == "calibrate") return just(RunKind::calibrate);
  if (command != "run") return just(RunKind::unknown);
  std::string only;
  std::vector<std::string> set;
  for (std::size_t i = 2; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool has_next = i + 1 < words.size();
    if (w == "--only" && has_next)
      only = words[++i];
    else if (w.starts_with("--only="))
      only = w.substr(7);
    else if (w == "--set" && has_next)
      set.push_back(words[++i]);
    else if (w.starts_with("--set="))
      set.push_back(w.substr(6));
  }
  return kind_of_run(RunKind::full, std::move(only), std::move(set));
}

}  // namespace rocehil::reports
