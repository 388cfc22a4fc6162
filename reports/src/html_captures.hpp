#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rocehil::reports {

// report.html's list of the pcapng files an attempt kept (run.json's captures_kept), each a link
// relative to the run directory, where report.html is written, with its size; a capture point
// whose files were to be kept and are not, with the reason. Nothing when none were kept.
std::string kept_captures_list(const nlohmann::json& attempt);

}  // namespace rocehil::reports
