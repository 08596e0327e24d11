// SPDX-License-Identifier: Apache-2.0
// Words for the model's findings (sim/finding.hpp). Each code has one English template; the CLI
// fills it with its number format, the GUI translates the template (tr) and fills it with its own.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/workload/finding.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::data {

// The template of `f`: "{name}" is a value of f (a number: whole, or one decimal), "{name:N}" a
// number rounded to N decimals, "{name:SPEC}" one in a spec_number format, "{field}" the scenario
// field f is about.
std::string finding_template(const sim::Finding& f);

// The formats every surface shares (units and fixed digits): "fN" exactly N decimals ("0.90"),
// "B" decimal bytes ("1.5 GB"), "s3" three significant figures ("31.4"), "usd" dollars with a
// k/M/B suffix ("$3.34M"), "pct" a fraction in percent, whole or one decimal below 10% ("41%",
// "0.4%"). "?" for a number that is not finite.
std::string spec_number(double v, std::string_view spec);

// A number as a surface writes it: `decimals` < 0 for the default (whole, or one decimal).
using NumberText = std::function<std::string(double value, int decimals)>;

// `tmpl` with its placeholders replaced by f's values (an unknown name stays as it is written).
std::string fill(std::string_view tmpl, const sim::Finding& f, const NumberText& number);

// The English sentence of `f`, numbers as format::in_sentence writes them (what `capplan estimate` prints and writes under "warnings").
std::string render(const sim::Finding& f);
std::vector<std::string> render(const std::vector<sim::Finding>& findings);

// A diagnostic's message: its own, or (sim/'s, which carry a coded finding and no message) its
// finding's sentence. word() writes that into each diagnostic's message, before a front end adds
// to it or prints it.
std::string message(const Diagnostic& d);
void word(Diagnostics& diags);

// How an error band was derived, in words: "p10-p90 of measured/predicted tokens/s over 12
// validated dense runs (too few validated dense/pytorch runs for their own band); widened ...".
std::string error_band_basis(const sim::ErrorBand& band);

}  // namespace capplan::data
