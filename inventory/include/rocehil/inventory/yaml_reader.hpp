#pragma once

// Reading YAML with every problem located: a context collecting "FILE:LINE:COL: message"
// diagnostics, a map reader that reports unknown keys (with the nearest known one) and keys
// given twice, and typed scalar readers. The inventory's loader is built on it, and so is the
// suite loader, so both files read and complain alike.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/common/edit_distance.hpp"
#include "rocehil/inventory/inventory.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/settings/assignment.hpp"

namespace rocehil::inventory {

using rocehil::edit_distance;

// A user's value as it may appear in a message: at most `limit` characters, control characters
// escaped and other bytes outside ASCII as '?', so every message stays one printable line.
std::string shown(std::string_view value, std::size_t limit = 40);

SourceLocation location_of(const YAML::Node& node);

// Collects diagnostics while one file is read.
class LoadContext {
 public:
  explicit LoadContext(std::string file) : file_(std::move(file)) {}
  void error(const YAML::Node& at, std::string message);
  void error(SourceLocation at, std::string message);
  std::vector<Diagnostic> take();
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<Diagnostic> diagnostics_;
};

// A YAML map read key by key: every key not in `known` is reported (with the nearest known one
// as a suggestion), and so is a key given twice.
class MapReader {
 public:
  MapReader(LoadContext& ctx, const YAML::Node& node, std::string what,
            std::initializer_list<std::string_view> known);
  bool ok() const { return ok_; }
  // The value, or an undefined node when the key is absent.
  YAML::Node get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key).IsDefined(); }
  // Reports a missing required key at the map; returns the value.
  YAML::Node require(std::string_view key, std::string_view example) const;
  const YAML::Node& node() const { return node_; }

 private:
  LoadContext& ctx_;
  YAML::Node node_;
  std::string what_;
  bool ok_ = false;
};

// Typed scalars: each reports a wrong type or a value out of range at the value and returns
// nothing; `what` names the field in the message ("host 'h1': port").
std::optional<std::string> read_string(LoadContext& ctx, const YAML::Node& n,
                                       std::string_view what);
std::optional<long> read_int(LoadContext& ctx, const YAML::Node& n, std::string_view what, long lo,
                             long hi, std::string_view example);
std::optional<double> read_number(LoadContext& ctx, const YAML::Node& n, std::string_view what,
                                  double lo, double hi);
std::optional<std::vector<std::string>> read_string_list(LoadContext& ctx, const YAML::Node& n,
                                                         std::string_view what);
// One of `choices`.
std::optional<std::string> read_choice(LoadContext& ctx, const YAML::Node& n, std::string_view what,
                                       std::initializer_list<std::string_view> choices);

// A map of fabric settings by the settings catalogue's names (`roce_rp.rpg_time_reset: 55`,
// priorities also as a list: `roce_np.enable: [3, 4]`), each checked (name, value) and kept with
// where it was given ("FILE:LINE:COLUMN"). Problems are reported to `ctx` as `WHAT: ...`.
std::vector<settings::Assignment> read_settings_map(LoadContext& ctx, const YAML::Node& n,
                                                    std::string_view what);

}  // namespace rocehil::inventory
