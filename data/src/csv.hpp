// SPDX-License-Identifier: Apache-2.0
// RFC 4180 CSV records, for the loaders of measured-run tables (published_runs.cpp,
// vtrain_runs.cpp). Private to capplan_data.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/sim/result.hpp"

namespace capplan::data::detail {

struct CsvRow {
  std::vector<std::string> cells;
  int line = 0;  // line where the record starts
};

// `s` without leading and trailing white space (a cell as the table means it).
std::string trim(std::string s);

// The longest cell a measured-run table may hold: the shipped tables' longest is 270 characters.
// The cell interpreters match a few std::regex patterns, which recurse per character in
// libstdc++ (a 50,000-character cell overflowed the stack, issue 18 point 14): bounded here.
inline constexpr std::size_t kMaxCsvCell = 1024;

// Records of `text` (quoted fields, doubled quotes, CRLF or LF; blank lines skipped); a malformed
// record or a cell longer than kMaxCsvCell is an error naming `file` and its line.
Result<std::vector<CsvRow>> parse_csv(std::string_view text, const std::string& file);

// The header's columns by name (trimmed), after checking that every one of `required` is there
// and that every record has the header's number of fields; an error names the file and line.
Result<std::map<std::string, std::size_t>> table_columns(const std::vector<CsvRow>& rows,
                                                         const std::vector<std::string>& required,
                                                         const std::string& file);

}  // namespace capplan::data::detail
