// libFuzzer target: any byte string as one line of the agent protocol, read both as a request
// (the agent's side) and as a reply (the controller's side). Neither parser may crash or throw;
// an error must be one line of printable text; and whatever a parser accepts must survive being
// written and read again, unchanged from the second round on.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "rocehil/agent/protocol.hpp"

namespace rh = rocehil::agent;

namespace {

[[noreturn]] void fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_agent_protocol: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void check_error(const std::string& error) {
  if (error.empty()) fail("a refused line has no error message", "");
  // Messages repeat at most ~40 bytes of the input; the longest fixed text is the list of setup's
  // fields. Anything much longer means input is leaking into the message unbounded.
  if (error.size() > 512) fail("error message too long", error);
  for (char c : error)
    if (c < 0x20 || c > 0x7e) fail("error message is not one line of printable ASCII", error);
}

// A line one parser accepted, written again: `second` must parse and write back identically.
// The written line may be longer than the input (an integer read into a double comes back as
// "1.0"), so beyond the line limit the second parse is allowed to refuse it.
template <class Parsed, class Parse, class Get>
void check_round_trip(const std::string& first, Parse parse, Get get) {
  const Parsed again = parse(first);
  const auto* message = get(again);
  if (message == nullptr) {
    if (first.size() > rh::max_agent_line_bytes) return;
    fail("a written line does not parse", first + "\n" + again.error);
  }
  if (!again.error.empty()) fail("an accepted line has an error", again.error);
  const std::string second = rh::to_json_line(*message);
  if (second != first) fail("the round trip is not stable", first + "\n" + second);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);

  const rh::ParsedRequest request = rh::parse_request(line);
  if (request.request) {
    if (!request.error.empty()) fail("an accepted request has an error", request.error);
    if (request.id != request.request->id) fail("ParsedRequest::id differs from the request's", "");
    check_round_trip<rh::ParsedRequest>(
        rh::to_json_line(*request.request), rh::parse_request,
        [](const rh::ParsedRequest& p) { return p.request ? &*p.request : nullptr; });
  } else {
    check_error(request.error);
  }

  const rh::ParsedReply reply = rh::parse_reply(line);
  if (reply.reply) {
    if (!reply.error.empty()) fail("an accepted reply has an error", reply.error);
    check_round_trip<rh::ParsedReply>(
        rh::to_json_line(*reply.reply), rh::parse_reply,
        [](const rh::ParsedReply& p) { return p.reply ? &*p.reply : nullptr; });
  } else {
    check_error(reply.error);
  }
  return 0;
}
