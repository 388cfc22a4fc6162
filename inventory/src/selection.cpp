#include "rocehil/inventory/selection.hpp"

#include <fmt/format.h>

#include <charconv>
#include <map>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/range.hpp"
#include "rocehil/inventory/yaml_reader.hpp"

namespace rocehil::inventory {

namespace {

std::string shown_term(std::string_view s) {
  return shown(s, 60);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// One piece of the expression with where it starts (0-based), for messages.
struct Piece {
  std::string_view text;
  std::size_t at = 0;
};

std::vector<Piece> split(Piece whole, char separator) {
  std::vector<Piece> pieces;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= whole.text.size(); ++i) {
    const char c = i < whole.text.size() ? whole.text[i] : separator;
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == separator && (depth <= 0 || i == whole.text.size())) {
      pieces.push_back({whole.text.substr(start, i - start), whole.at + start});
      start = i + 1;
    }
  }
  return pieces;
}

class Selector {
 public:
  Selector(const Inventory& inv, std::string_view expression, std::string_view origin)
      : inv_(inv), expression_(expression), origin_(origin) {}

  std::vector<const Host*> run() {
    if (trim(expression_).empty()) fail("is empty", "give a selection such as 'all' or 'h1,h2'");
    std::vector<bool> chosen(inv_.hosts.size(), false);
    for (const Piece& term : split({expression_, 0}, ',')) {
      const std::vector<bool> picked = select_term(term);
      for (std::size_t i = 0; i < picked.size(); ++i) chosen[i] = chosen[i] || picked[i];
    }
    std::vector<const Host*> hosts;
    for (std::size_t i = 0; i < chosen.size(); ++i)
      if (chosen[i]) hosts.push_back(&inv_.hosts[i]);
    return hosts;
  }

 private:
  [[noreturn]] void fail(std::string_view what, std::string_view fix) const {
    throw input_error(fmt::format("{} '{}': {}; {}", origin_, shown_term(expression_), what, fix));
  }

  std::vector<bool> select_term(Piece term) {
    if (trim(term.text).empty())
      fail(fmt::format("empty term at column {}", term.at + 1), "remove the extra ','");
    // The limit: @N or @N/rack, after the last '@'.
    std::size_t limit = 0;
    bool per_rack = false;
    if (const auto at = term.text.rfind('@'); at != std::string_view::npos) {
      std::string_view spec = trim(term.text.substr(at + 1));
      if (spec.ends_with("/rack")) {
        per_rack = true;
        spec.remove_suffix(5);
      }
      const auto [end, ec] = std::from_chars(spec.data(), spec.data() + spec.size(), limit);
      if (ec != std::errc() || end != spec.data() + spec.size() || limit == 0)
        fail(fmt::format("'@{}' at column {} is not a count", shown_term(term.text.substr(at + 1)),
                         term.at + at + 1),
             "write @N or @N/rack with N >= 1");
      term.text = term.text.substr(0, at);
    }
    std::vector<bool> picked(inv_.hosts.size(), true);
    bool any_positive = false;
    for (const Piece& atom : split(term, '&')) {
      const std::vector<bool> matched = select_atom(atom, any_positive);
      for (std::size_t i = 0; i < picked.size(); ++i) picked[i] = picked[i] && matched[i];
    }
    std::size_t count = 0;
    for (const bool p : picked) count += p ? 1 : 0;
    if (count == 0)
      fail(fmt::format("'{}' matches no host", shown_term(trim(term.text))),
           "'rocehil inventory show FILE --hosts all' lists them");
    if (limit == 0) return picked;
    if (!per_rack) {
      if (count < limit)
        fail(fmt::format("'{}' wants {} hosts but {} match", shown_term(trim(term.text)), limit,
                         count),
             "lower the count or widen the selection");
      std::size_t kept = 0;
      for (std::size_t i = 0; i < picked.size(); ++i)
        if (picked[i] && ++kept > limit) picked[i] = false;
      return picked;
    }
    std::map<std::string_view, std::size_t> per;
    for (std::size_t i = 0; i < picked.size(); ++i)
      if (picked[i] && ++per[inv_.hosts[i].rack] > limit) picked[i] = false;
    for (const auto& [rack, n] : per)
      if (n < limit)
        fail(fmt::format("'{}' wants {} hosts of every rack but rack '{}' has {}",
                         shown_term(trim(term.text)), limit, shown_term(rack), n),
             "lower the count or leave that rack out");
    return picked;
  }

  std::vector<bool> select_atom(Piece atom, bool& any_positive) {
    std::string_view text = trim(atom.text);
    const std::size_t column = atom.at + (atom.text.find_first_not_of(' ')) + 1;
    bool negate = false;
    if (!text.empty() && text.front() == '!') {
      negate = true;
      text = trim(text.substr(1));
    }
    if (text.empty())
      fail(fmt::format("empty selection at column {}", column), "name hosts, or remove the '&'");
    std::vector<bool> matched(inv_.hosts.size(), false);
    const auto colon = text.find(':');
    if (text == "all") {
      matched.assign(matched.size(), true);
    } else if (colon == std::string_view::npos) {
      match_names(text, matched);
    } else {
      const std::string_view key = text.substr(0, colon);
      const std::string_view value = text.substr(colon + 1);
      if (value.empty())
        fail(fmt::format("'{}' at column {} has no value", shown_term(key), column),
             "write KEY:VALUE, e.g. rack:r1");
      if (key == "name") {
        match_names(value, matched);
      } else if (key == "label") {
        for (std::size_t i = 0; i < matched.size(); ++i)
          for (const auto& l : inv_.hosts[i].labels)
            matched[i] = matched[i] || glob_match(value, l);
      } else if (key == "rack") {
        for (std::size_t i = 0; i < matched.size(); ++i)
          matched[i] = !inv_.hosts[i].rack.empty() && glob_match(value, inv_.hosts[i].rack);
      } else if (key == "rail") {
        int rail = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), rail);
        if (ec != std::errc() || end != value.data() + value.size())
          fail(fmt::format("rail '{}' at column {} is not a number", shown_term(value), column),
               "write rail:0");
        for (std::size_t i = 0; i < matched.size(); ++i)
          for (const auto& nic : inv_.hosts[i].nics) matched[i] = matched[i] || nic.rail == rail;
      } else if (key == "leaf") {
        std::map<std::string_view, std::string_view> leaf_of;
        for (const auto& r : inv_.racks) leaf_of.emplace(r.name, r.leaf);
        for (std::size_t i = 0; i < matched.size(); ++i) {
          const auto it = leaf_of.find(inv_.hosts[i].rack);
          matched[i] = it != leaf_of.end() && !it->second.empty() && glob_match(value, it->second);
        }
      } else if (key == "provider") {
        if (value != "soft" && value != "verbs")
          fail(fmt::format("provider '{}' at column {} is unknown", shown_term(value), column),
               "use provider:soft or provider:verbs");
        for (std::size_t i = 0; i < matched.size(); ++i)
          matched[i] = to_string(inv_.hosts[i].provider) == value;
      } else {
        fail(fmt::format("unknown key '{}' at column {}", shown_term(key), column),
             "use name, label, rack, rail, leaf or provider");
      }
    }
    if (!negate) {
      any_positive = true;
      bool any = false;
      for (const bool m : matched) any = any || m;
      if (!any)
        fail(fmt::format("'{}' matches no host", shown_term(text)),
             "'rocehil inventory show FILE --hosts all' lists them");
      return matched;
    }
    for (std::size_t i = 0; i < matched.size(); ++i) matched[i] = !matched[i];
    return matched;
  }

  // A glob, or a range such as gpu[001-016] naming hosts that must all exist.
  void match_names(std::string_view pattern, std::vector<bool>& matched) {
    if (pattern.find('[') != std::string_view::npos ||
        pattern.find(']') != std::string_view::npos) {
      const RangeExpansion e = expand_range(pattern, inv_.hosts.size() + 1);
      if (!e.error.empty()) fail(e.error, "see 'rocehil inventory show --help'");
      index_names();
      for (const auto& name : e.values) {
        const auto it = by_name_.find(name);
        if (it == by_name_.end())
          fail(fmt::format("host '{}' (from '{}') matches no host", shown_term(name),
                           shown_term(pattern)),
               "'rocehil inventory show FILE --hosts all' lists them");
        matched[it->second] = true;
      }
      return;
    }
    for (std::size_t i = 0; i < matched.size(); ++i)
      matched[i] = glob_match(pattern, inv_.hosts[i].name);
  }

  void index_names() {
    if (!by_name_.empty()) return;
    for (std::size_t i = 0; i < inv_.hosts.size(); ++i) by_name_.emplace(inv_.hosts[i].name, i);
  }

  const Inventory& inv_;
  std::string_view expression_;
  std::string_view origin_;
  std::map<std::string_view, std::size_t> by_name_;
};

}  // namespace

bool glob_match(std::string_view pattern, std::string_view name) {
  // Iterative with one backtrack point: linear in practice, never exponential.
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<const Host*> select_hosts(const Inventory& inventory, std::string_view expression,
                                      std::string_view origin) {
  return Selector(inventory, expression, origin).run();
}

}  // namespace rocehil::inventory
