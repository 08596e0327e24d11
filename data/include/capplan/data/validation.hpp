// SPDX-License-Identifier: Apache-2.0
// The accuracy harness: every usable published run estimated, its error against the measured
// throughput, the leave-one-out p10-p90 interval, and the accuracy per regime: architecture,
// framework family, GPU and scale.
// `capplan validate-published`, the tests and the GUI render it; nothing here prints.
#pragma once
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/published_runs.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/estimate/uncertainty.hpp"

namespace capplan::data {

// One usable row after estimating it.
struct ValidationRow {
  const PublishedRun* run = nullptr;
  bool predicted = false;
  std::string error;  // why it could not be estimated
  std::string gpu;    // catalog id once parsed, else the CSV's name
  int gpus = 0;
  sim::Parallelism layout;
  int micro_batches = 1;
  bool fits = true;
  double measured = 0;    // tokens/s per GPU
  double estimate = 0;    // tokens/s per GPU
  double error_frac = 0;  // (estimate - measured) / measured
  std::string category;   // sim::error_category of the scenario ("dense/megatron/9-512")
  std::string arch;       // dense / moe (the category's first part)
  std::string framework;  // megatron / pytorch (the category's framework family)
  sim::Scenario scenario;
  sim::Estimate full;     // the whole estimate, for its error band
  // Leave-one-out p10-p90 of tokens/s per GPU (the band fitted without this row).
  bool has_interval = false;
  double p10 = NAN;
  double p90 = NAN;
  std::string band_category;  // the table entry used ("dense/megatron", "all", ...)
  bool inside = false;        // p10 <= measured <= p90
  // The same from a band fitted without any row of this row's source group (its own row where
  // the run names no group): how the band holds on a source it never saw.
  bool has_group_interval = false;
  bool inside_group = false;
  // Peak memory per GPU where the run measures it (PublishedRun::measured_peak_memory_gib).
  bool memory_predicted = false;
  double measured_memory_gib = 0;
  double memory_estimate_gib = 0;
  double memory_error_frac = 0;  // (estimate - measured) / measured
};

struct Accuracy {
  int predicted = 0;
  double mape = NAN;          // percent
  double median_ape = NAN;    // percent
  double within_10pct = NAN;  // fraction of rows with |error| <= 10%
  int with_interval = 0;               // rows that got a leave-one-out interval
  double interval_coverage = NAN;      // fraction of those whose measured value is inside p10-p90
  int with_group_interval = 0;         // rows that got a leave-one-source-group-out interval
  double group_interval_coverage = NAN;  // fraction of those inside it
};

// MAPE, median absolute error, share within 10%, interval coverage of `rows`.
Accuracy accuracy(const std::vector<const ValidationRow*>& rows);
// The same of the peak-memory errors of the rows that measure memory (no intervals).
Accuracy memory_accuracy(const std::vector<const ValidationRow*>& rows);

// The errors of `diags` on one line ("where: message; ...").
std::string one_line(const Diagnostics& diags);

// One run estimated with the datasheet model, or with `profile` (data::make_cost_model) when given.
ValidationRow evaluate_row(const PublishedRun& run, const Catalogs& catalogs, const sim::Profile* profile = nullptr);

struct ValidationReport {
  int rows = 0;
  int usable = 0;
  std::vector<ValidationRow> results;  // usable rows
  std::vector<const PublishedRun*> skipped;
  Accuracy overall;
  std::map<std::string, Accuracy> by_arch;
  std::map<std::string, Accuracy> by_framework;  // framework family (sim::Framework)
  std::map<std::string, Accuracy> by_gpu;
  std::map<std::string, Accuracy> by_scale;      // sim::kScaleBuckets
  // By the table's source group (fine-tuning and hybrid tables), throughput and peak memory.
  std::map<std::string, Accuracy> by_source;
  Accuracy memory;
  std::map<std::string, Accuracy> memory_by_source;
  sim::ResidualTable table;  // fitted on every predicted row (what --write-error-bands writes)
};

// Every usable run estimated, with leave-one-out intervals and the residual table of all rows.
// With `profile`, every row is priced with it (capplan validate-published --profile). `pool`:
// predicted rows of other validated tables (validate_published of those) whose residuals join
// every leave-one-out interval and the residual table; they are not reported here.
ValidationReport validate_published(const std::vector<PublishedRun>& runs, const Catalogs& catalogs,
                                    const sim::Profile* profile = nullptr,
                                    const std::vector<ValidationRow>* pool = nullptr);

// Predicted rows / usable rows.
double coverage(const ValidationReport& rep);

}  // namespace capplan::data
