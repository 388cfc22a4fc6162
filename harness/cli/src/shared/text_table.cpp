#include "shared/text_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace rocehil::cli {

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  // A programming error, not user input: every caller builds rows from its own column list.
  if (cells.size() != columns_.size()) throw std::logic_error("TextTable row has the wrong width");
  rows_.push_back(std::move(cells));
}

std::string TextTable::render(const std::string& indent) const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    width[c] = columns_[c].title.size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      const bool last = c + 1 == cells.size();
      if (columns_[c].align == Align::right) {
        s += pad + cells[c];
      } else {
        s += cells[c];
        if (!last) s += pad;
      }
      if (!last) s += "  ";
    }
    return s + "\n";
  };
  std::vector<std::string> titles;
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    titles.push_back(columns_[c].title);
    rule.emplace_back(width[c], '-');
  }
  std::string out = line(titles) + line(rule);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace rocehil::cli
