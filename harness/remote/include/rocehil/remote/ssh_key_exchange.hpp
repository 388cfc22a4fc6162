#pragma once

#include <string>
#include <string_view>

namespace rocehil::remote {

// Why rocehil reorders ssh's key exchanges: OpenSSH 9.0-9.8 put sntrup761x25519 first, and its
// key generation costs the ssh client about 150 ms of CPU per connection (measured here: 225 ms
// of this machine's CPU per `ssh host true` against 49 ms with curve25519-sha256). A run opens one
// connection per host, so at thousands of hosts that one choice decides how long a launch takes
// on the controller. OpenSSH 9.9+ already prefers mlkem768x25519, which is post-quantum and
// cheap; nothing changes there.

// `configured` is the comma-separated KexAlgorithms list ssh would offer (`ssh -G`'s
// `kexalgorithms`). Returns the same algorithms with the cheap ones it holds moved to the front
// (mlkem768x25519-sha256, then curve25519-sha256 and its libssh.org name), the others in their
// order; empty when the list already starts with one of them or holds none. Never adds an
// algorithm the configuration left out: a site's policy keeps deciding what may be used.
std::string cheap_key_exchange_first(std::string_view configured);

// "KexAlgorithms=..." for `ssh -o`, from the ssh configuration in force here (`ssh -G`, run once
// per process and remembered), or empty when nothing is to change or ssh could not say. Host
// blocks of an ssh_config that set KexAlgorithms for particular hosts are not looked at: an
// inventory's `ssh.options` entry `KexAlgorithms=...` takes precedence over this one.
const std::string& ssh_key_exchange_option();

}  // namespace rocehil::remote
