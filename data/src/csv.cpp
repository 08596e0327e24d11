// SPDX-License-Identifier: Apache-2.0
#include "csv.hpp"

#include <cctype>

namespace capplan::data::detail {

std::string trim(std::string s) {
  auto sp = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && sp(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && sp(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

Result<std::vector<CsvRow>> parse_csv(std::string_view text, const std::string& file) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool in_quotes = false, quoted = false, after_quote = false;
  int line = 1;
  row.line = 1;
  auto end_field = [&] {
    row.cells.push_back(std::move(field));
    field.clear();
    quoted = after_quote = false;
  };
  auto end_row = [&] {
    end_field();
    const bool blank = row.cells.size() == 1 && row.cells[0].empty();
    if (!blank) rows.push_back(std::move(row));
    row = CsvRow{};
    row.line = line + 1;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (field.size() > kMaxCsvCell) {
      return fail(file + ":" + std::to_string(row.line),
                  "field " + std::to_string(row.cells.size() + 1) + " is longer than " + std::to_string(kMaxCsvCell) +
                      " characters (the limit for a cell)");
    }
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
          after_quote = true;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == ',') {
      end_field();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      continue;  // CRLF: the '\n' ends the record
    } else if (c == '\n' || c == '\r') {
      end_row();
      ++line;
    } else if (c == '"') {
      if (!field.empty() || quoted) {
        return fail(file + ":" + std::to_string(line),
                    "malformed CSV: quote inside an unquoted field (RFC 4180: quote the whole field and double "
                    "inner quotes)");
      }
      in_quotes = quoted = true;
    } else {
      if (after_quote) {
        return fail(file + ":" + std::to_string(line), "malformed CSV: text after the closing quote of a field");
      }
      field += c;
    }
  }
  if (in_quotes) return fail(file + ":" + std::to_string(row.line), "malformed CSV: unterminated quoted field");
  if (!field.empty() || !row.cells.empty() || quoted) end_row();
  return rows;
}

Result<std::map<std::string, std::size_t>> table_columns(const std::vector<CsvRow>& rows,
                                                         const std::vector<std::string>& required,
                                                         const std::string& file) {
  std::map<std::string, std::size_t> col;
  if (rows.empty()) return fail(file, "malformed CSV: no header line");
  for (std::size_t i = 0; i < rows.front().cells.size(); ++i) col.emplace(trim(rows.front().cells[i]), i);
  Diagnostics diags;
  for (const std::string& c : required) {
    if (!col.contains(c)) diags.push_back({Diagnostic::Severity::error, file + ":1", "missing column '" + c + "'"});
  }
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].cells.size() != rows.front().cells.size()) {
      diags.push_back({Diagnostic::Severity::error, file + ":" + std::to_string(rows[i].line),
                       "malformed CSV: expected " + std::to_string(rows.front().cells.size()) +
                           " fields (as the header); got " + std::to_string(rows[i].cells.size())});
    }
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return col;
}

}  // namespace capplan::data::detail
