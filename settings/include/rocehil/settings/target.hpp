#pragma once

// Where a setting is read and written: a NIC's files (nic_files.hpp), the soft provider's own
// files laid out the same way, or a testbed's switches. JournaledChanges changes any of them the
// one way: checked, journaled, written, read back, put back.

#include <optional>
#include <string>

#include "rocehil/settings/catalogue.hpp"

namespace rocehil::settings {

class Target {
 public:
  virtual ~Target() = default;
  // Whether `s` can be set here; if not, `why_not` says so for an error message.
  virtual bool has(const Setting& s, std::string* why_not = nullptr) const = 0;
  // The value in force, canonical; nullopt where has() is false. Throws rocehil::Error
  // (infrastructure) when it cannot be read.
  virtual std::optional<std::string> read(const Setting& s) const = 0;
  // Writes `canonical`; throws rocehil::Error (infrastructure) when it is refused.
  virtual void write(const Setting& s, const std::string& canonical) const = 0;
  // The file or tool `s` is written through, for messages and journals.
  virtual std::string where(const Setting& s) const = 0;
  // The NIC's netdev ("eth1"); empty for what is not a NIC (a testbed's switches).
  virtual const std::string& netdev() const noexcept = 0;
};

}  // namespace rocehil::settings
