#include "rocehil/perftest/report.hpp"

namespace rocehil::perftest {

namespace {

struct ToolName {
  Tool tool;
  std::string_view name, program;
};
constexpr ToolName tool_names[] = {
    {Tool::write_bw, "write_bw", "ib_write_bw"}, {Tool::read_bw, "read_bw", "ib_read_bw"},
    {Tool::send_bw, "send_bw", "ib_send_bw"},    {Tool::write_lat, "write_lat", "ib_write_lat"},
    {Tool::read_lat, "read_lat", "ib_read_lat"}, {Tool::send_lat, "send_lat", "ib_send_lat"},
};

}  // namespace

std::string_view to_string(Tool tool) {
  for (const ToolName& t : tool_names)
    if (t.tool == tool) return t.name;
  return "?";
}

std::string_view program(Tool tool) {
  for (const ToolName& t : tool_names)
    if (t.tool == tool) return t.program;
  return "?";
}

std::optional<Tool> tool_named(std::string_view name) {
  for (const ToolName& t : tool_names)
    if (name == t.name || name == t.program) return t.tool;
  return std::nullopt;
}

bool is_bandwidth(Tool tool) {
  return tool == Tool::write_bw || tool == Tool::read_bw || tool == Tool::send_bw;
}

}  // namespace rocehil::perftest
