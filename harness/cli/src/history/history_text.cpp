#include "history/history_text.hpp"

#include <fmt/format.h>

#include "rocehil/common/units.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

nlohmann::ordered_json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

std::string optional_text(const std::optional<double>& v) {
  return v ? format_number(*v) : "-";
}

}  // namespace

std::string kind_cell(const reports::RunKindInfo& k) {
  std::string cell(reports::to_string(k.kind));
  // The detail that made it partial; a bisect step's candidate is its --set.
  if (k.kind == reports::RunKind::only) cell += " " + k.only;
  if ((k.kind == reports::RunKind::set || k.kind == reports::RunKind::bisect) && !k.set.empty())
    cell += " " + k.set.front() + (k.set.size() > 1 ? fmt::format(" +{}", k.set.size() - 1) : "");
  return cell;
}

std::string render_history(const std::vector<reports::History::RunRow>& rows,
                           const std::string& db) {
  TextTable t({{"run", TextTable::Align::left},
               {"started", TextTable::Align::left},
               {"suite", TextTable::Align::left},
               {"kind", TextTable::Align::left},
               {"exit"},
               {"cases"},
               {"passed"},
               {"failed"},
               {"errors"},
               {"not run"},
               {"skipped"},
               {"busbw Gb/s"},
               {"p99 us"},
               {"CNPs"},
               {"PFC storms"}});
  for (const auto& r : rows)
    t.add_row({r.run_id, r.started_at, r.suite, kind_cell(r.kind),
               r.exit_code ? std::to_string(*r.exit_code) : "-", std::to_string(r.cases),
               std::to_string(r.passed), std::to_string(r.failed), std::to_string(r.errors),
               std::to_string(r.not_run) + (r.interrupted ? " (interrupted)" : ""),
               std::to_string(r.skipped), optional_text(r.headline.busbw_gbps),
               optional_text(r.headline.lat_p99_us), optional_text(r.headline.cnps),
               optional_text(r.headline.pfc_storms)});
  return fmt::format("{}{} run(s) in {}\n", t.render(), rows.size(), db);
}

nlohmann::ordered_json history_json(const std::vector<reports::History::RunRow>& rows,
                                    const std::string& db) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    runs.push_back({{"run_id", r.run_id},
                    {"started_at", r.started_at},
                    {"suite", r.suite},
                    {"kind", std::string(reports::to_string(r.kind.kind))},
                    {"only", r.kind.only.empty() ? nlohmann::ordered_json(nullptr)
                                                 : nlohmann::ordered_json(r.kind.only)},
                    {"set", r.kind.set},
                    {"exit_code", r.exit_code ? nlohmann::ordered_json(*r.exit_code)
                                              : nlohmann::ordered_json(nullptr)},
                    {"interrupted", r.interrupted},
                    {"cases", r.cases},
                    {"passed", r.passed},
                    {"failed", r.failed},
                    {"errors", r.errors},
                    {"not_run", r.not_run},
                    {"skipped", r.skipped},
                    {"headline",
                     {{"busbw_gbps_lowest", optional_json(r.headline.busbw_gbps)},
                      {"lat_p99_us_highest", optional_json(r.headline.lat_p99_us)},
                      {"cnps", optional_json(r.headline.cnps)},
                      {"pfc_storms", optional_json(r.headline.pfc_storms)}}}});
  return {{"schema_version", 1}, {"history", db}, {"runs", runs}};
}

}  // namespace rocehil::cli
