#include "help/help_roff.hpp"

#include <algorithm>
#include <vector>

namespace rocehil::cli {

namespace {

std::size_t indent_of(std::string_view line) {
  const auto first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? line.size() : first;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// An indented line's parts: the term, and where the text after a gap of two spaces or more
// begins (none when the line is one piece).
struct Columns {
  std::string_view term;
  std::string_view text;
  std::size_t text_column = 0;
};

Columns columns_of(std::string_view line) {
  const std::size_t indent = indent_of(line);
  const auto gap = line.find("  ", indent);
  if (gap == std::string_view::npos) return {line.substr(indent), {}, 0};
  const auto text_at = line.find_first_not_of(' ', gap);
  if (text_at == std::string_view::npos) return {line.substr(indent, gap - indent), {}, 0};
  return {line.substr(indent, gap - indent), line.substr(text_at), text_at};
}

// One entry of an indented block: lines kept as they are (a command, possibly continued with
// backslashes) and, when it has one, the text that explains it.
struct Entry {
  std::size_t indent = 0;
  std::size_t term_end = 0;     // the column after the term
  std::size_t text_column = 0;  // 0: no text yet
  std::vector<std::string> kept;
  std::string text;
};

// A line reads as a shell command when it starts with a lower-case word (examples do; tables
// and JSON do not): a cut then ends in a backslash.
bool reads_as_command(std::string_view content) {
  const std::string_view first_word = content.substr(0, content.find(' '));
  return !content.empty() && content.front() >= 'a' && content.front() <= 'z' &&
         first_word.find(':') == std::string_view::npos;
}

// Cuts a kept line to `width` columns (a line of a `command` ends in a backslash where cut): at the
// last space outside single quotes (inside them a backslash would be literal), else after the last
// comma, else at a space inside quotes (the command no longer pastes, but it reads); continuation
// lines are indented 4 more. A piece that cannot be cut stays long.
std::vector<std::string> cut_to_width(const std::string& line, std::size_t width, bool command) {
  std::vector<std::string> out;
  const std::size_t indent = indent_of(line);
  std::string rest = line;
  bool in_quote = false;  // carried over cuts
  while (rest.size() > width) {
    const std::size_t limit = width - (command ? 2 : 0);
    std::size_t space = std::string::npos, comma = std::string::npos,
                quoted_space = std::string::npos;
    bool quoted = in_quote;
    for (std::size_t i = indent_of(rest); i < rest.size() && i <= limit; ++i) {
      if (rest[i] == '\'') quoted = !quoted;
      const bool gap = rest[i] == ' ' && rest[i - 1] != ' ';
      if (gap && quoted) quoted_space = i;
      if (quoted) continue;
      if (gap) space = i;
      if (rest[i] == ',' && i < limit) comma = i + 1;
    }
    const std::size_t cut = space != std::string::npos   ? space
                            : comma != std::string::npos ? comma
                                                         : quoted_space;
    if (cut == std::string::npos) break;
    for (std::size_t i = indent_of(rest); i < cut; ++i)
      if (rest[i] == '\'') in_quote = !in_quote;
    std::string piece = rest.substr(0, cut);
    if (command && cut == space) piece += " \\";
    out.push_back(piece);
    std::string_view tail = std::string_view(rest).substr(cut);
    tail.remove_prefix(std::min(tail.size(), tail.find_first_not_of(' ')));
    rest = std::string(indent + 4, ' ') + std::string(tail);
  }
  out.push_back(rest);
  return out;
}

// "Examples:", "What goes out:": a short line ending in a colon.
bool is_heading(std::string_view line) {
  return ends_with(line, ":") && line.size() < 40;
}

class HelpToRoff {
 public:
  explicit HelpToRoff(std::size_t width) : width_(width) {}

  void line(std::string_view raw) {
    while (!raw.empty() && raw.back() == ' ') raw.remove_suffix(1);
    if (raw.empty()) {
      end_prose();
      end_block();
      blank_before_ = true;
      return;
    }
    if (raw.front() != ' ') {
      end_block();
      prose(raw);
    } else {
      end_prose();
      indented(raw);
    }
  }

  std::string finish() {
    end_prose();
    end_block();
    return std::move(out_);
  }

 private:
  void paragraph_start() {
    out_ += blank_before_ || out_.empty() ? ".PP\n" : ".PD 0\n.PP\n.PD\n";
    blank_before_ = false;
  }

  void prose(std::string_view line) {
    if (!in_prose_) {
      paragraph_start();
    } else if (ends_with(last_prose_, ".") || is_heading(last_prose_)) {
      out_ += ".br\n";  // a sentence or a heading that ended its line keeps the break
    }
    in_prose_ = true;
    last_prose_ = line;
    out_ += roff_text(line) + "\n";
  }

  void end_prose() { in_prose_ = false; }

  void indented(std::string_view line) {
    const std::size_t indent = indent_of(line);
    if (!entries_.empty()) {
      Entry& last = entries_.back();
      // A command goes on after a backslash, or inside a double-quoted argument.
      std::size_t quotes = 0;
      for (const std::string& kept : last.kept) quotes += std::count(kept.begin(), kept.end(), '"');
      const bool continued_command =
          !last.kept.empty() && (ends_with(last.kept.back(), "\\") || quotes % 2 == 1);
      if (continued_command && last.text_column == 0) {
        last.kept.emplace_back(line);
        return;
      }
      if (last.text_column != 0 && indent > last.indent && indent + 2 >= last.text_column) {
        last.text += " ";
        last.text += line.substr(indent);
        return;
      }
      if (last.text_column == 0 && indent > last.indent) {  // text under a term
        last.text = std::string(line.substr(indent));
        last.text_column = indent;
        return;
      }
    }
    const Columns c = columns_of(line);
    Entry e;
    e.indent = indent;
    e.term_end = indent + c.term.size();
    if (c.text.empty()) {
      e.kept.emplace_back(line);
    } else {
      e.kept.push_back(std::string(indent, ' ') + std::string(c.term));
      e.text = std::string(c.text);
      e.text_column = c.text_column;
    }
    entries_.push_back(std::move(e));
  }

  // The block: each entry's kept lines as they are (cut to the width), its text filled below
  // them, or beside a short term as man's tagged paragraphs put it; no space between entries.
  void end_block() {
    if (entries_.empty()) return;
    out_ += blank_before_ || out_.empty() ? ".PP\n.PD 0\n" : ".PD 0\n.PP\n";
    blank_before_ = false;
    for (const Entry& e : entries_) {
      const std::size_t tag_width = std::min<std::size_t>(e.text_column - e.indent, 18);
      const bool short_term = e.kept.size() == 1 && e.term_end - e.indent + 1 < tag_width;
      if (!e.text.empty() && short_term) {
        out_ += ".TP " + std::to_string(tag_width) + "\n" +
                roff_text(std::string_view(e.kept.front()).substr(e.indent)) + "\n" +
                roff_text(e.text) + "\n";
        continue;
      }
      out_ += ".PP\n.nf\n";
      const bool command = reads_as_command(std::string_view(e.kept.front()).substr(e.indent));
      for (const std::string& kept : e.kept)
        for (const std::string& piece : cut_to_width(kept, width_, command))
          out_ += roff_text(piece) + "\n";
      out_ += ".fi\n";
      if (!e.text.empty())
        out_ += ".RS " + std::to_string(e.indent + 6) + "\n" + roff_text(e.text) + "\n.RE\n";
    }
    out_ += ".PD\n";
    entries_.clear();
  }

  std::size_t width_;
  std::string out_;
  bool in_prose_ = false;
  std::string last_prose_;  // the paragraph's last line
  std::vector<Entry> entries_;
  bool blank_before_ = false;
};

}  // namespace

std::string roff_text(std::string_view line) {
  std::string out;
  if (!line.empty() && (line.front() == '.' || line.front() == '\'')) out += "\\&";
  for (const char c : line) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  return out;
}

std::string roff_from_help(std::string_view text, std::size_t preformatted_width) {
  HelpToRoff converter(preformatted_width);
  while (!text.empty()) {
    const auto nl = text.find('\n');
    converter.line(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  }
  return converter.finish();
}

}  // namespace rocehil::cli
