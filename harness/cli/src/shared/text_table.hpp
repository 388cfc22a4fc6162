#pragma once

#include <string>
#include <vector>

namespace rocehil::cli {

// A plain-text table with aligned columns: left-aligned text, right-aligned numbers (a column is
// right-aligned when it was declared so). Rendered with a header rule, no borders, so it reads well
// in a terminal and pastes cleanly into a ticket.
class TextTable {
 public:
  enum class Align { left, right };
  struct Column {
    std::string title;
    Align align = Align::right;
  };

  explicit TextTable(std::vector<Column> columns);
  void add_row(std::vector<std::string> cells);
  bool empty() const noexcept { return rows_.empty(); }
  std::string render(const std::string& indent = "  ") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace rocehil::cli
