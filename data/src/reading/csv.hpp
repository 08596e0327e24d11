// SPDX-License-Identifier: Apache-2.0
// RFC 4180 CSV records, for the loaders of measured-run tables (published_runs.cpp,
// vtrain_runs.cpp). Private to capplan_data.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/sim/workload/result.hpp"

namespace capplan::data::detail {

struct CsvRow {
  std::vector<std::string> cells;
  int line = 0;  // line where the record starts
};

// `s` without leading and trailing white space (a cell as the table means it).
std::string trim(std::string s);

// The longest cell a measured-run table may hold: the shipped tables' longest is 270 characters.
// The cell interpreters match a few std::regex patterns, which recurse per character in
// libstdc++ (a 50,000-character cell overflowed the stack): bounded here.
inline constexpr std::size_t kMaxCsvCell = 1024;

// Records of `text` (quoted fields, doubled quotes, CRLF or LF; blank lines skipped); a malformed
// record or a cell longer than kMaxCsvCell is an error naming `file` and its line.
Result<std::vector<CsvRow>> parse_csv(std::string_view text, const std::string& file);

// Whether the header row names every one of `names` (trimmed): how a loader knows its table.
bool has_columns(const CsvRow& header, std::initializer_list<std::string_view> names);

// A table's column index by (trimmed) header name, once every one of `required` is there and every
// record has the header's field count; otherwise errors naming `file` and the line.
Result<std::map<std::string, std::size_t>> table_columns(const std::vector<CsvRow>& rows,
                                                         std::span<const char* const> required,
                                                         const std::string& file);

// A whole cell that is a positive integer up to `most`, or a finite number of at least 1e-15
// (json_reader.hpp's kMinPositive) up to `most`; nullopt otherwise.
std::optional<long long> positive_whole(const std::string& cell, long long most = (1LL << 62));
std::optional<double> positive_number(const std::string& cell, double most = 1e300);

}  // namespace capplan::data::detail
