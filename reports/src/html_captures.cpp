#include "html_captures.hpp"

#include <fmt/format.h>

#include "json_view.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/junit.hpp"

namespace rocehil::reports {

std::string kept_captures_list(const nlohmann::json& attempt) {
  const nlohmann::json& kept = list(attempt, "captures_kept");
  if (kept.empty()) return {};
  std::string out = "<p>Captures kept (open them with Wireshark or rocehil analyze):</p>\n<ul>\n";
  for (const auto& k : kept) {
    const std::string point = xml_escape(text(k, "point"));
    if (const std::string why = text(k, "not_kept"); !why.empty()) {
      out += fmt::format("<li>{}: not kept: {}</li>\n", point, xml_escape(why));
      continue;
    }
    std::string links;
    for (const auto& f : list(k, "files")) {
      if (!f.is_string()) continue;
      const std::string file = xml_escape(f.get<std::string>());
      links += fmt::format("{}<a href=\"{}\">{}</a>", links.empty() ? "" : ", ", file, file);
    }
    out += fmt::format("<li>{} (on {}, {}): {}</li>\n", point, xml_escape(text(k, "host")),
                       format_bytes(number(k, "bytes").value_or(0)), links);
  }
  return out + "</ul>\n";
}

}  // namespace rocehil::reports
