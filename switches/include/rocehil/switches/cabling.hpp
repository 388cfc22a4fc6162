#pragma once

#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/switches/lldp.hpp"

namespace rocehil::switches {

// What LLDP says of one cable against the inventory's `links`.
struct CablingFinding {
  enum class Kind {
    ok,          // both ends as the design says
    miscabled,   // the port's neighbour is another port than the design's (a swap shows as two)
    missing,     // the design's port hears no neighbour
    extra,       // a neighbour on a port no link names
    unverified,  // neither end's switch answered LLDP
  };
  Kind kind = Kind::ok;
  std::string link;      // the inventory link, empty for `extra`
  std::string expected;  // "leaf01:Ethernet1/1 - spine01:Ethernet1/1" as the design says it
  std::string seen;      // as LLDP sees it
  std::string message;   // one line for a person
  // Switch ends of the link whose LLDP-MIB did not answer: the finding was seen from the other
  // end alone (a cable LLDP confirms from one side, the silent side unread).
  std::vector<std::string> unread;
};
std::string_view to_string(CablingFinding::Kind kind);

// Compares each link whose end is a switch in `views` with what that switch's LLDP hears. A link
// is checked from every switch end that answered; both views of a swap name both links.
std::vector<CablingFinding> check_cabling(const inventory::Inventory& inventory,
                                          const std::vector<LldpView>& views);

// `links` for an inventory, written from LLDP: one per neighbour pair seen (each cable once, both
// directions merged), named "a-b" after its nodes. Ends on nodes the inventory does not know are
// kept, so `inventory discover` shows them.
std::vector<inventory::Link> links_from_lldp(const std::vector<LldpView>& views);

}  // namespace rocehil::switches
