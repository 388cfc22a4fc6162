#include "rocehil/settings/journal.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "rocehil/common/error.hpp"
#include "rocehil/common/whole_file.hpp"

namespace rocehil::settings {

namespace {

constexpr int schema_version = 1;

std::string text_field(const nlohmann::json& j, const char* key, std::string_view source) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    throw Error(ExitCode::infrastructure,
                fmt::format("{}: '{}' is missing or not text: not a settings journal rocehil "
                            "wrote; look at it, put the values back by hand, then remove it",
                            source, key));
  return it->get<std::string>();
}

}  // namespace

std::string journal_path(std::string_view dir, std::string_view fabric, std::string_view name) {
  if (fabric.empty()) return fmt::format("{}/{}.json", dir, name);
  return fmt::format("{}/{}/{}.json", dir, fabric, name);
}

bool is_journal_of(std::string_view relative_path, std::string_view host, std::string_view fabric) {
  std::string_view file_name = relative_path;
  if (const auto slash = relative_path.find('/'); slash != std::string_view::npos) {
    // Another fabric's journals are none of this one's business.
    if (relative_path.substr(0, slash) != fabric) return false;
    file_name = relative_path.substr(slash + 1);
  }
  if (!file_name.ends_with(".json") || !file_name.starts_with(host)) return false;
  const std::string_view rest = file_name.substr(host.size());
  return rest == ".json" || rest.starts_with(".soft-");
}

nlohmann::json to_json(const Journal& journal) {
  nlohmann::json entries = nlohmann::json::array();
  for (const JournalEntry& e : journal.entries)
    entries.push_back({{"setting", e.setting},
                       {"netdev", e.netdev},
                       {"where", e.where},
                       {"before", e.before},
                       {"wanted", e.wanted}});
  nlohmann::json j{
      {"schema_version", schema_version}, {"host", journal.host},     {"run", journal.run},
      {"started_at", journal.started_at}, {"fabric", journal.fabric}, {"entries", entries}};
  if (journal.owner)
    j["owner"] = {{"machine", journal.owner->machine},
                  {"machine_id", journal.owner->machine_id},
                  {"boot_id", journal.owner->boot_id},
                  {"pid", journal.owner->pid},
                  {"start_ticks", journal.owner->start_ticks}};
  return j;
}

Journal journal_from_json(const nlohmann::json& j, std::string_view source) {
  if (!j.is_object() || j.value("schema_version", 0) != schema_version)
    throw Error(ExitCode::infrastructure,
                fmt::format("{}: not a settings journal of schema {}; look at it, put the "
                            "values back by hand, then remove it",
                            source, schema_version));
  Journal out;
  out.host = text_field(j, "host", source);
  out.run = text_field(j, "run", source);
  out.started_at = text_field(j, "started_at", source);
  // fabric and owner came with this schema's later writers; without them the journal is one an
  // older rocehil left: no fabric, owner unknown (journal_owner.hpp puts it back).
  if (j.contains("fabric")) out.fabric = text_field(j, "fabric", source);
  if (const auto owner = j.find("owner"); owner != j.end()) {
    const auto pid = owner->find("pid");
    const auto ticks = owner->find("start_ticks");
    if (!owner->is_object() || pid == owner->end() || !pid->is_number_integer() ||
        ticks == owner->end() || !ticks->is_number_unsigned())
      throw Error(ExitCode::infrastructure,
                  fmt::format("{}: 'owner' has no pid or start_ticks: not a settings journal "
                              "rocehil wrote; look at it, put the values back by hand, then "
                              "remove it",
                              source));
    out.owner = JournalOwner{text_field(*owner, "machine", source),
                             text_field(*owner, "machine_id", source),
                             text_field(*owner, "boot_id", source), pid->get<std::int64_t>(),
                             ticks->get<std::uint64_t>()};
  }
  const auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_array())
    throw Error(ExitCode::infrastructure, fmt::format("{}: 'entries' is missing", source));
  for (const nlohmann::json& e : *entries) {
    if (!e.is_object())
      throw Error(ExitCode::infrastructure, fmt::format("{}: an entry is not an object", source));
    out.entries.push_back({text_field(e, "setting", source), text_field(e, "netdev", source),
                           text_field(e, "where", source), text_field(e, "before", source),
                           text_field(e, "wanted", source)});
  }
  return out;
}

void save(const Journal& journal, const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec)
    throw system_error(fmt::format("cannot make the journal directory of {}", path), ec.value());
  write_file_whole(path, to_json(journal).dump(2) + "\n");
}

std::optional<Journal> load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path);
  if (!in) throw system_error(fmt::format("cannot read the settings journal {}", path), errno);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw Error(ExitCode::infrastructure,
                fmt::format("{}: not JSON ({}); look at it, put the values back by hand, then "
                            "remove it",
                            path, e.what()));
  }
  return journal_from_json(j, path);
}

}  // namespace rocehil::settings
