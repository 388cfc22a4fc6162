#pragma once

// A setting given a value: by `--set KEY=VALUE` on the command line, or by a suite's
// `settings:` map. Checked against the catalogue when read, so that a typo or a value out of
// range stops the run before anything on the fabric is changed.

#include <string>
#include <string_view>
#include <vector>

#include "rocehil/settings/catalogue.hpp"

namespace rocehil::settings {

struct Assignment {
  const Setting* setting = nullptr;
  std::string value;   // canonical_value()
  std::string origin;  // where it was given: "--set", "suite.yaml:12:5"
};

// The setting named `key` given `value`, from `origin`. Throws rocehil::Error (bad input)
// starting with `origin`: an unknown key (with the nearest known name), a value it does not take.
Assignment assign(std::string_view key, std::string_view value, std::string_view origin);

// `text` as given to --set: KEY=VALUE.
Assignment parse_assignment(std::string_view text);

// `later` over `earlier`: a suite's settings, then the command line's, the later winning for a
// key given twice (as --set overrides a suite). A key given twice within one list is an error
// naming both origins.
std::vector<Assignment> merge(std::vector<Assignment> earlier,
                              const std::vector<Assignment>& later);

}  // namespace rocehil::settings
