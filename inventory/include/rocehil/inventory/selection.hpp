#pragma once

#include <string_view>
#include <vector>

#include "rocehil/inventory/inventory.hpp"

namespace rocehil::inventory {

// Host selection expressions, used by suites and by every command's --hosts:
//
//   SEL   := TERM ( ',' TERM )*          union, in inventory order, each host once
//   TERM  := ATOM ( '&' ATOM )* LIMIT?   intersection
//   LIMIT := '@' N | '@' N '/rack'       the first N hosts, or the first N of every rack
//   ATOM  := '!'? ( 'all' | GLOB | KEY ':' VALUE )
//   KEY   := name | label | rack | rail | leaf | provider
//   GLOB  := a name with * and ?, or a range such as gpu[001-016]
//
// Examples: "all", "h1,h3", "gpu[001-016]", "label:gpu&rack:r1", "rack:r1@2,rack:r2@2",
// "label:gpu@1/rack", "rail:0&!name:gpu00*".
//
// Returns the selected hosts in inventory order. Throws rocehil::Error (bad input) with a
// message naming the expression and what is wrong: a syntax error, an unknown key, a term that
// matches nothing, or a limit larger than what matches.
// `origin` names where the expression came from in that message: the command line's --hosts,
// or a suite test's `hosts:`.
std::vector<const Host*> select_hosts(const Inventory& inventory, std::string_view expression,
                                      std::string_view origin = "--hosts");

// True when `pattern` (with * and ?) matches `name` entirely.
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace rocehil::inventory
