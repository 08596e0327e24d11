// SPDX-License-Identifier: Apache-2.0
// Numbers with SI suffixes, as the scenario contract allows for sizes ("2T" tokens, "4M"), and for
// counts of tokens the binary (IEC) ones too ("4Mi" = 2^22).
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "capplan/data/scenario_io.hpp"

namespace capplan::data {
namespace {

// Decimal exponent of each accepted suffix. Case matters (M is mega, m would be milli), except
// that both k and K mean 1e3; G and B (billions, as in "7B" parameters) both mean 1e9.
std::optional<int> suffix_exponent(char c) {
  switch (c) {
    case 'k':
    case 'K': return 3;
    case 'M': return 6;
    case 'G':
    case 'B': return 9;
    case 'T': return 12;
    case 'P': return 15;
    default: return std::nullopt;
  }
}

// Power of 1024 of each binary (IEC) suffix: Ki = 2^10, Mi = 2^20, Gi = 2^30, Ti = 2^40, Pi = 2^50.
std::optional<int> binary_power(char c) {
  switch (c) {
    case 'K': return 1;
    case 'M': return 2;
    case 'G': return 3;
    case 'T': return 4;
    case 'P': return 5;
    default: return std::nullopt;
  }
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<double> parse_scaled(std::string_view text, bool binary);

}  // namespace

std::optional<double> parse_si(std::string_view text) { return parse_scaled(text, false); }

std::optional<double> parse_count(std::string_view text) { return parse_scaled(text, true); }

namespace {

std::optional<double> parse_scaled(std::string_view text, bool binary) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);

  // [sign] digits [. digits] [e [sign] digits] [spaces] [suffix]
  std::size_t i = 0;
  std::string mantissa;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    if (text[i] == '-') mantissa += '-';
    ++i;
  }
  int digits = 0;
  while (i < text.size() && is_digit(text[i])) {
    mantissa += text[i++];
    ++digits;
  }
  if (i < text.size() && text[i] == '.') {
    mantissa += text[i++];
    while (i < text.size() && is_digit(text[i])) {
      mantissa += text[i++];
      ++digits;
    }
  }
  if (digits == 0) return std::nullopt;

  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    if (i >= text.size() || !is_digit(text[i])) return std::nullopt;
    while (i < text.size() && is_digit(text[i])) {
      if (exponent < 100000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (negative) exponent = -exponent;
  }
  while (i < text.size() && is_space(text[i])) ++i;
  int powers_of_1024 = 0;
  if (binary && i + 2 == text.size() && text[i + 1] == 'i') {
    auto k = binary_power(text[i]);
    if (!k) return std::nullopt;
    powers_of_1024 = *k;
  } else if (i < text.size()) {
    auto e = suffix_exponent(text[i]);
    if (!e || i + 1 != text.size()) return std::nullopt;
    exponent += *e;
  }

  // Re-assemble with one exponent so that "4.1M" rounds once, exactly as 4.1e6 would.
  const std::string normal = mantissa + "e" + std::to_string(exponent);
  double value = 0;
  auto [end, ec] = std::from_chars(normal.data(), normal.data() + normal.size(), value);
  if (ec != std::errc() || end != normal.data() + normal.size() || !std::isfinite(value)) return std::nullopt;
  value = std::ldexp(value, 10 * powers_of_1024);  // exact: a power of two
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace
}  // namespace capplan::data
