// SPDX-License-Identifier: Apache-2.0
#include "reading/csv.hpp"

#include <algorithm>

#include "reading/json_reader.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace capplan::data::detail {

bool has_columns(const CsvRow& header, std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    const bool found = std::any_of(header.cells.begin(), header.cells.end(),
                                   [name](const std::string& c) { return trim(c) == name; });
    if (!found) return false;
  }
  return true;
}

std::string trim(std::string s) {
  auto sp = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!s.empty() && sp(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && sp(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

namespace {

// The offset of the first byte of `s` that is not part of well-formed UTF-8 (Unicode 15, table
// 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), or npos when all of it is.
std::size_t invalid_utf8_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
      n = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + n >= s.size()) return i;  // cut short
    for (std::size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

std::string hex_byte(unsigned char b) {
  static constexpr char digits[] = "0123456789ABCDEF";
  return std::string("0x") + digits[b >> 4] + digits[b & 0xF];
}

}  // namespace

// Every cell of a measured-run table is UTF-8 text (the reports are JSON, which holds nothing
// else): a cell that is not is an error naming the file, the record's line and the column, found
// here once for every table rather than when a report is written.
static Diagnostics invalid_utf8_cells(const std::vector<CsvRow>& rows, const std::string& file) {
  Diagnostics diags;
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.cells.size(); ++c) {
      const std::size_t at = invalid_utf8_at(row.cells[c]);
      if (at == std::string_view::npos) continue;
      std::string column = "column " + std::to_string(c + 1);
      if (&row != &rows.front() && c < rows.front().cells.size() &&
          invalid_utf8_at(rows.front().cells[c]) == std::string_view::npos) {
        column += " (" + trim(rows.front().cells[c]) + ")";
      }
      diags.push_back({Diagnostic::Severity::error, file + ":" + std::to_string(row.line),
                       column + ": not UTF-8 text (byte " + hex_byte(static_cast<unsigned char>(row.cells[c][at])) +
                           " at byte " + std::to_string(at + 1) + " of the cell); save the file as UTF-8"});
    }
  }
  return diags;
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
  if (auto bad = invalid_utf8_cells(rows, file); !bad.empty()) return std::unexpected(std::move(bad));
  return rows;
}

Result<std::map<std::string, std::size_t>> table_columns(const std::vector<CsvRow>& rows,
                                                         std::span<const char* const> required,
                                                         const std::string& file) {
  std::map<std::string, std::size_t> col;
  if (rows.empty()) return fail(file, "malformed CSV: no header line");
  for (std::size_t i = 0; i < rows.front().cells.size(); ++i) col.emplace(trim(rows.front().cells[i]), i);
  Diagnostics diags;
  for (const char* c : required) {
    if (!col.contains(c)) diags.push_back({Diagnostic::Severity::error, file + ":1", "missing column '" + std::string(c) + "'"});
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

std::optional<long long> positive_whole(const std::string& cell, long long most) {
  long long v = 0;
  const std::string t = trim(cell);
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || v <= 0 || v > most) return std::nullopt;
  return v;
}

std::optional<double> positive_number(const std::string& cell, double most) {
  double v = 0;
  const std::string t = trim(cell);
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  // At least kMinPositive (1e-15): a denormal time gave an Inf throughput.
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v) || v < kMinPositive || v > most) {
    return std::nullopt;
  }
  return v;
}

}  // namespace capplan::data::detail
