// libFuzzer target: any bytes as an inventory file. parse_inventory must never crash or throw;
// it either returns an inventory or diagnostics, never both; every diagnostic is one printable
// line of bounded length pointing inside the input; and whatever loads selects with "all".
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_checks.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/inventory/selection.hpp"

namespace inv = rocehil::inventory;

namespace {

constexpr const char* target = "fuzz_inventory_loader";

[[noreturn]] void fail(const char* what, std::string_view detail) {
  rocehil::fuzz::fail(target, what, detail);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  int lines = 1;
  for (const char c : text) lines += c == '\n' ? 1 : 0;
  const inv::LoadResult r = inv::parse_inventory(text, "fuzz.yaml");
  if (r.inventory.has_value() == !r.diagnostics.empty()) fail("inventory and diagnostics", "");
  for (const auto& d : r.diagnostics) {
    rocehil::fuzz::check_diagnostic(target, d, 600);
    if (d.line < 1 || d.line > lines + 1 || d.column < 1)
      fail("diagnostic outside the input", inv::to_string(d));
  }
  if (r.inventory) {
    try {
      if (inv::select_hosts(*r.inventory, "all").size() != r.inventory->hosts.size())
        fail("'all' does not select every host", "");
    } catch (const std::exception& e) {
      fail("'all' threw", e.what());
    }
  }
  return 0;
}
