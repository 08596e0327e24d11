// SPDX-License-Identifier: Apache-2.0
// A finding worded: its template (findings.cpp) filled with its field and values, each number in
// the format its placeholder asks for; and the words of an error band's basis.
#include "capplan/data/findings.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

#include "capplan/data/format.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"

namespace capplan::data {

namespace {

// Fixed decimals ("0.90"), "?" when not finite.
std::string fixed_or_unknown(double v, int decimals) { return std::isfinite(v) ? format::fixed(v, decimals) : "?"; }

// A number by its placeholder's spec: "" the surface's default, "N" the surface's N decimals, else
// one of spec_number's formats.
std::string number_with_spec(double v, std::string_view spec, const NumberText& number) {
  if (spec.empty()) return number(v, -1);
  if (spec.front() >= '0' && spec.front() <= '9') return number(v, std::atoi(std::string(spec).c_str()));
  return spec_number(v, spec);
}

// Three significant figures for ordinary magnitudes ("142", "31.4", "2.50").
std::string sig3(double v) {
  const double a = std::fabs(v);
  return fixed_or_unknown(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

// "1.5 GB", "64 kB": decimal units, three significant figures, trailing zeros dropped.
std::string decimal_bytes(double b) {
  static constexpr const char* kUnit[] = {"B", "kB", "MB", "GB", "TB"};
  int i = 0;
  while (b >= 1000.0 && i < 4) {
    b /= 1000.0;
    ++i;
  }
  std::string s = fixed_or_unknown(b, b >= 100 ? 0 : (b >= 10 ? 1 : 2));
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + " " + kUnit[i];
}

}  // namespace

std::string spec_number(double v, std::string_view spec) {
  if (spec == "B") return decimal_bytes(v);
  if (spec == "s3") return sig3(v);
  if (spec == "usd" || spec == "money") {
    // $3.34M (appended piecewise: g++ 12 warns falsely on "$" + std::string&&); "money" without
    // the "$", after a {unit} text ("CNY ") in the amount's own currency.
    const double a = std::fabs(v);
    std::string s = spec == "usd" ? "$" : "";
    if (a >= 1e9) return s.append(sig3(v / 1e9)).append("B");
    if (a >= 1e6) return s.append(sig3(v / 1e6)).append("M");
    if (a >= 1e3) return s.append(sig3(v / 1e3)).append("k");
    return s.append(fixed_or_unknown(v, 2));
  }
  if (spec == "pct") {
    // Whole percent, or one decimal below 10% (so a 0.4% change does not read as 0%).
    const double p = v * 100.0;
    return fixed_or_unknown(p, std::fabs(p) < 9.95 ? 1 : 0) + "%";
  }
  if (!spec.empty() && spec.front() == 'f') return fixed_or_unknown(v, std::atoi(std::string(spec.substr(1)).c_str()));
  return fixed_or_unknown(v, 2);
}

std::string fill(std::string_view tmpl, const sim::Finding& f, const NumberText& number) {
  std::string out;
  out.reserve(tmpl.size() + 32);
  std::size_t i = 0;
  while (i < tmpl.size()) {
    const std::size_t open = tmpl.find('{', i);
    const std::size_t close = open == std::string_view::npos ? open : tmpl.find('}', open);
    if (close == std::string_view::npos) {
      out.append(tmpl.substr(i));
      break;
    }
    out.append(tmpl.substr(i, open - i));
    std::string_view key = tmpl.substr(open + 1, close - open - 1);
    std::string_view spec;
    if (const std::size_t colon = key.find(':'); colon != std::string_view::npos) {
      spec = key.substr(colon + 1);
      key = key.substr(0, colon);
    }
    const sim::FindingValue* value = nullptr;
    for (const auto& v : f.values) {
      if (v.name == key) value = &v;
    }
    if (key == "field") {
      out += f.field;
    } else if (value) {
      out += value->is_text ? value->text : number_with_spec(value->number, spec, number);
    } else {
      out.append(tmpl.substr(open, close - open + 1));
    }
    i = close + 1;
  }
  return out;
}

std::string render(const sim::Finding& f) { return fill(finding_template(f), f, format::in_sentence); }

std::string message(const Diagnostic& d) { return d.message.empty() && d.finding ? render(*d.finding) : d.message; }

void word(Diagnostics& diags) {
  for (auto& d : diags) d.message = message(d);
}

std::vector<std::string> render(const std::vector<sim::Finding>& findings) {
  std::vector<std::string> out;
  out.reserve(findings.size());
  for (const auto& f : findings) out.push_back(render(f));
  return out;
}

std::string error_band_basis(const sim::ErrorBand& b) {
  using format::fixed;
  // Where the runs' p10-p90 lay on one side of the estimate the band is the 80% of them nearest it.
  std::string s = (b.unextended ? "the 80% of measured/predicted tokens/s nearest the estimate over "
                                : "p10-p90 of measured/predicted tokens/s over ") +
                  std::to_string(b.runs) + " validated ";
  s += b.category == sim::kAllCategory ? std::string("runs") : b.category + " runs";
  if (!b.asked.empty() && b.asked != b.category) s += " (too few validated " + b.asked + " runs for their own band)";
  if (const auto& w = b.widened) {
    s += "; widened x" + fixed(w->down, 2) + " / x" + fixed(w->up, 2) + ": ";
    if (w->gemm || w->attention) {
      std::string what;
      if (w->gemm) what = "GEMM " + fixed(w->gemm_low, 2) + "-" + fixed(w->gemm_high, 2);
      if (w->attention) {
        what += what.empty() ? "" : ", ";
        what += "attention " + fixed(w->attention_low, 2) + "-" + fixed(w->attention_high, 2);
      }
      s += "no published ";
      s += w->gemm && w->attention ? "GEMM or attention" : (w->gemm ? "GEMM" : "attention");
      s += " efficiency for this GPU (other GPUs' published range: " + what + " of peak)";
    }
    if (w->host) {
      s += w->gemm || w->attention ? "; " : "";
      s += "no host time per op for this framework (priced at the kernel launch alone; the step is host-bound at " +
           fixed(w->host_us_per_op, 0) + " us per op, the most a catalog recipe carries)";
    }
  }
  if (const auto& u = b.unextended) {
    s += "; their p10-p90 (" + fixed(u->low, 2) + "-" + fixed(u->high, 2) + ") lay on one side of it";
  }
  return s;
}

}  // namespace capplan::data
