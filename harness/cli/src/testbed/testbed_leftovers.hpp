#pragma once

// What a testbed leaves outside its namespaces when a run that changed its settings was killed:
// the settings journals naming its switches or its hosts' soft NICs, and the soft provider's
// setting files of those NICs. Once `testbed down` has removed the namespaces there is nothing
// left for them to put back, and a journal left in /run/rocehil/settings would stop the next
// run on that machine ("settings left changed by run ...") for a fabric that no longer exists.

#include <string>
#include <string_view>

namespace rocehil::cli {

struct DiscardedSettings {
  int journals = 0;      // journal files removed
  int soft_netdevs = 0;  // SOFT_DIR/ADDRESS/sys/class/net/NETDEV trees removed
};

// Removes JOURNAL_DIR/testbed-ID/ (the journals of the testbed's fabric, run::fabric_id of its
// inventory), and of the layout older rocehils wrote JOURNAL_DIR/testbed-ID.json (the switches'
// journal) and every other journal all of whose entries name a netdev of the testbed
// ("ID-nic0"), and SOFT_DIR/*/sys/class/net/ID-*. A journal that cannot be read is left for
// `rocehil settings restore` to name.
DiscardedSettings discard_testbed_settings(std::string_view id, const std::string& journal_dir,
                                           const std::string& soft_dir);

}  // namespace rocehil::cli
