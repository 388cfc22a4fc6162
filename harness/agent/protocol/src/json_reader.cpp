#include "json_reader.hpp"

#include <fmt/format.h>

#include <string>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent::wire {

namespace {

// Deeper than any message needs (results nest 4 levels), shallow enough that a hostile `[[[[...`
// is refused by a linear pre-scan before the parser builds anything.
constexpr int max_json_depth = 16;
// How much of a received value an error message repeats: enough to recognise it, not enough to
// let a hostile line fill the controller's terminal.
constexpr std::size_t max_echo_bytes = 40;

// Appends bytes as printable ASCII: what a hostile line makes us repeat must not break the error
// onto a second line, move a terminal's cursor or carry broken UTF-8 into the reply. `also`
// names printable characters that get a backslash too (the surrounding quote).
void append_escaped(std::string& out, std::string_view bytes, std::string_view also) {
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      if (also.find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
}

// Rejects what no message can be, before nlohmann sees it: an over-long line (the agent must
// not buffer without bound), NUL bytes (nlohmann stops at one as if the input ended, so
// `{...}\0junk` would pass) and nesting beyond max_json_depth.
void prescan(std::string_view line) {
  if (line.size() > max_agent_line_bytes)
    reject(fmt::format(
        "line of {} bytes is over the limit of {}: each message is one JSON object on one line",
        line.size(), max_agent_line_bytes));
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\0')
      reject(fmt::format("not valid JSON at column {}: a NUL byte (JSON text has none)", i + 1));
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_json_depth)
        reject(fmt::format(
            "JSON nested deeper than {} levels at column {}: no agent protocol message nests "
            "that deep",
            max_json_depth, i + 1));
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced input goes negative; the parser refuses it
    }
  }
}

// Collects nlohmann's description of a syntax error: json::parse without exceptions only says
// that it failed. Runs on the failure path only.
class SyntaxError : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    position_ = position;
    token_ = last_token;
    what_ = ex.what();
    return false;
  }

  // "not valid JSON at column 7: syntax error while parsing value - invalid literal; last read:
  // 'abc'", with the token (which can be the rest of the line) cut and escaped.
  std::string message() const {
    std::string text = what_;
    // Drop "[json.exception.parse_error.101] " and "parse error at line 1, column 7: ": the
    // column comes from position_, and the line is always 1.
    if (const auto p = text.find("] "); p != std::string::npos) text.erase(0, p + 2);
    if (text.starts_with("parse error at ")) {
      if (const auto p = text.find(": "); p != std::string::npos) text.erase(0, p + 2);
    }
    std::string out = fmt::format("not valid JSON at column {}: ", position_);
    const std::string token = "'" + token_ + "'";
    const auto t = text.find(token);
    if (t == std::string::npos) {
      append_escaped(out, text, "");
    } else {
      append_escaped(out, std::string_view(text).substr(0, t), "");
      out += quote_text(token_, '\'');
      append_escaped(out, std::string_view(text).substr(t + token.size()), "");
    }
    return out;
  }

 private:
  std::size_t position_ = 0;
  std::string token_;
  std::string what_ = "not valid JSON";
};

}  // namespace

[[noreturn]] void reject(std::string message) {
  throw Rejected{std::move(message)};
}

bool contains(std::span<const std::string_view> names, std::string_view name) {
  for (auto n : names)
    if (n == name) return true;
  return false;
}

std::string join(std::span<const std::string_view> names) {
  std::string out;
  for (auto n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// `"a" or "b"`, `one of "a", "b" or "c"`.
std::string one_of(std::span<const std::string_view> names) {
  std::string out = names.size() > 2 ? "one of " : "";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += fmt::format("\"{}\"", names[i]);
  }
  return out;
}

// A received text in quotes, cut to max_echo_bytes and escaped.
std::string quote_text(std::string_view text, char quote) {
  std::string out(1, quote);
  append_escaped(out, text.substr(0, max_echo_bytes), quote == '"' ? "\"\\" : "'\\");
  if (text.size() > max_echo_bytes) out += "...";
  out += quote;
  return out;
}

// A received value as an error repeats it after "got".
std::string echo(const json& value) {
  switch (value.type()) {
    case json::value_t::string: return quote_text(value.get_ref<const std::string&>(), '"');
    case json::value_t::array:
      return fmt::format("an array of {} entr{}", value.size(), value.size() == 1 ? "y" : "ies");
    case json::value_t::object: return "an object";
    default: return value.dump();  // a number, true, false or null: short, one line
  }
}

// A JSON integer as uint64, or nothing (a float, a negative, not a number). "-0" is an integer
// that nlohmann stores signed.
std::optional<std::uint64_t> as_u64(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  return std::nullopt;
}

json parse_object(std::string_view line) {
  prescan(line);
  json doc = json::parse(line.data(), line.data() + line.size(), nullptr,
                         /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    if (line.find_first_not_of(" \t\r\n") == std::string_view::npos)
      reject("empty line: expected one JSON object");
    SyntaxError sax;
    json::sax_parse(line.data(), line.data() + line.size(), &sax);
    reject(sax.message());
  }
  if (!doc.is_object()) reject(fmt::format("expected a JSON object, got {}", echo(doc)));
  return doc;
}

}  // namespace rocehil::agent::wire
