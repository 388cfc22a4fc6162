#pragma once

#include <string>
#include <string_view>

namespace rocehil::cli {

// Help text, written for an 80-column terminal and up to ~100 columns wide, turned into roff
// that man fills to the reader's width: the manual is the same words as --help, not a copy of
// its line breaks.

// One line of text as roff reads it: backslashes and minus signs escaped, and a line that would
// start a request (. or ') made plain text.
std::string roff_text(std::string_view line);

// A command's description or footer. Lines at the margin are prose: joined into paragraphs that
// man fills (a line ending a sentence or a heading keeps its break). Indented lines are examples
// and definitions: "TERM  text" (two spaces or more apart, text continued on deeper-indented
// lines) becomes a tagged paragraph, TERM above its filled text; anything else stays as it is,
// cut at a space (or a comma) to fit `preformatted_width` columns, a cut command line ending in
// a backslash so that it still pastes into a shell.
std::string roff_from_help(std::string_view text, std::size_t preformatted_width = 72);

}  // namespace rocehil::cli
