// SPDX-License-Identifier: Apache-2.0
// Error bars of an estimate: how far measured throughput has been from predicted throughput on
// validated runs of the same kind (a residual table), widened for inputs the model had to guess.
//
// Contract:
//  * A residual is r = ln(measured / predicted) of tokens/s. A table entry holds the p10 and p90
//    of r over the validated runs of one category, so exp(p10)..exp(p90) is the multiplicative
//    band measured/predicted that held for 80% of them.
//  * A scenario's category is "<arch>/<framework>/<scale>" (arch: dense | moe; framework: the
//    sim::Framework family, megatron | pytorch; scale: the GPU-count bucket of kScaleBuckets).
//    It takes the first of category_fallbacks() the table has:
//      <arch>/<framework>/<scale> -> <arch>/<framework> -> <arch>/<scale> -> <arch> -> all
//    fit_residuals leaves out categories with fewer than `min_samples` rows, so thin ones fall
//    back. Framework before scale: the framework family changes the kernel sequence (eager
//    PyTorch against fused Megatron kernels), the largest shift of the residuals measured on the
//    development set (docs/accuracy.md, "Error bars"); scale is the finer cut.
//  * The band holds the point estimate: a table entry's band is the 80% of its runs nearest the
//    model where p10-p90 lies on one side of it (band_quantiles), and a finding says so; where
//    even that cannot reach the estimate (all but a fifth of the runs on one side), the near end
//    is moved to 1. The estimate is
//    the model's own figure, never shifted by the residuals, and an interval that
//    excludes its own point reads as a contradiction.
//  * apply_error_band never produces NaN or Inf, and every interval has low <= high. With an
//    empty table it leaves the estimate unchanged (no band).
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capplan/sim/estimate/estimate.hpp"

namespace capplan::sim {

// p10/p90 of ln(measured/predicted) over the `n` validated runs of one category, and the 80%
// band that holds the point estimate (band_quantiles): equal to p10/p90 unless those lie on one
// side of 0.
struct ResidualQuantiles {
  std::string category;  // "dense/megatron/9-512", "dense/megatron", "dense/<=8", "dense", "all", ...
  int n = 0;
  double log_ratio_p10 = 0;
  double log_ratio_p90 = 0;
  double log_ratio_low = 0;   // the band's ends (band_quantiles); low <= high
  double log_ratio_high = 0;
};

struct ResidualTable {
  std::vector<ResidualQuantiles> categories;

  const ResidualQuantiles* find(std::string_view category) const;
  // The first entry of category_fallbacks(category) the table has, or null.
  const ResidualQuantiles* lookup(std::string_view category) const;
  bool empty() const { return categories.empty(); }
};

// One validated run: its category (error_category of its scenario) and throughput measured and
// predicted (any consistent unit, e.g. tokens/s per GPU).
struct ResidualSample {
  std::string category;
  double measured = 0;
  double predicted = 0;
};

// The fewest runs a category needs for its own band: 9, the smallest n at which the p10 and p90
// of empirical_quantile fall inside the sample ((n+1) 0.1 >= 1 and (n+1) 0.9 <= n). Below it
// both are clamped to the sample's minimum and maximum, and the band covers only (n-1)/(n+1) of
// new runs (67% at n = 5, 78% at n = 8), not the 80% it states; such a category falls back.
inline constexpr int kMinResidualSamples = 9;
inline constexpr const char* kAllCategory = "all";

// Scale buckets (GPUs): one node, up to 512, beyond. The error band's scale cut and the
// validation report's by-scale summary.
inline constexpr const char* kScaleBuckets[] = {"<=8", "9-512", ">512"};
std::string scale_bucket(int gpus);

// "dense/megatron/<=8", "moe/pytorch/>512", ...
std::string error_category(const Scenario& s);

// A category's parts ("" where absent): "dense/<=8" -> {dense, "", <=8}. A second part that is
// a scale bucket is the scale, any other the framework.
struct CategoryParts {
  std::string arch;
  std::string framework;
  std::string scale;
};
CategoryParts category_parts(std::string_view category);

// The lookup order for a category, most specific first:
// "dense/megatron/<=8" -> {"dense/megatron/<=8", "dense/megatron", "dense/<=8", "dense", "all"};
// a shorter category takes the tail that applies ("dense/<=8" -> {"dense/<=8", "dense", "all"}).
std::vector<std::string> category_fallbacks(std::string_view category);

// Quantile `p` (0..1) of ascending `sorted` values with the (n+1)p plotting position and linear
// interpolation between order statistics (Hyndman & Fan 1996, definition 6), clamped to the
// sample range. For exchangeable samples, a new value falls between the p and q quantiles so
// defined with probability q - p on average: an honest prediction interval even at small n
// (the more common definition 7 covers only 0.8 (n-1)/(n+1) of new values for p10..p90).
// Contract: `sorted` is non-empty and ascending.
double empirical_quantile(std::span<const double> sorted, double p);

// The 80% prediction band of ascending `sorted` log residuals that holds 0 (the point estimate)
// where it can: the quantiles (a, a + 0.8) of empirical_quantile, a = 0.1 (p10-p90) when those
// straddle 0. When both lie below 0 (the model optimistic for nine in ten runs), a slides up to
// the smallest value at which the high end reaches 0, at most 0.2 (then max); when both lie
// above 0, a slides down to the largest value at which the low end reaches 0, at least 0 (then
// min). Any such pair covers 80% of new exchangeable values on average, like p10-p90; sliding it
// towards 0 keeps that share, where stretching p10-p90 to 0 (what apply_error_band still does
// when the slide cannot reach 0) covers more than it says: 87% of the development rows left out
// one at a time, against 80% stated (docs/accuracy.md, "Honest coverage").
// Returns {low, high}. Contract: `sorted` is non-empty and ascending.
std::pair<double, double> band_quantiles(std::span<const double> sorted);
// p10/p90 and band_quantiles of the log residuals for every category of every sample's fallback
// chain that has at least `min_samples` usable samples (measured and predicted finite and > 0;
// others are ignored).
ResidualTable fit_residuals(const std::vector<ResidualSample>& samples, int min_samples = kMinResidualSamples);

// The table's entry for `s` (category with fallback) when the model is known to be optimistic
// there: its p90 of ln(measured/predicted) is below 0, i.e. at least nine in ten validated runs of
// the category measured less throughput than the model predicted. Null otherwise (or no entry).
// The planner says so for a plan it would choose there (docs/planner.md "Optimistic regimes").
const ResidualQuantiles* optimistic_regime(const ResidualTable& t, const Scenario& s);

// Input uncertainty: the spread of published efficiencies used when a GPU has none of its own
// (the datasheet model then assumes DatasheetAssumptions' defaults, 0.75 GEMM and 0.268 attention).
struct InputSpread {
  // Published large-GEMM efficiencies (MAMF, BF16, best achieved / dense peak) in the GPU
  // catalog range from 0.511 (MI300X, ROCm 6.3) to 0.869 (A100 SXM) (data/gpus.json,
  // ml-engineering MAMF tables; the L20's 0.92 is a third-party FP16 HGEMM figure and is left out).
  double gemm_low = 0.511;
  double gemm_high = 0.869;
  // Published fused-attention efficiencies at the catalog's reference shape (FlashAttention-2,
  // forward + backward, causal, head dimension 128, 2k tokens; its README charts): 0.268 of peak
  // on H100 to 0.497 on A100. The default is the low end, so the band widens upwards only.
  double attention_low = 0.268;
  double attention_high = 0.497;
  // Host time per op where the framework recipe gives none (TrainingJob::host_time_known): the
  // step is priced at the launch floor, and the band reaches down to this figure, the largest
  // a recipe in the catalog carries (data/frameworks.json, megatron-deepspeed: 80 us per op,
  // fitted to the launch-bound iterations of vTrain's measured Megatron-DeepSpeed runs on eager
  // PyTorch; Qwen's fine-tuning scripts: 35 us). A small model on many GPUs is host-bound there.
  double host_us_per_op_high = 80.0;
};

// Sets e.band from the table (category with fallback), widens it where the GPU has no published
// GEMM or attention efficiency (by re-evaluating the estimate's layout with the spread's low and
// high efficiencies) and where the framework has no host time per op (the same layout at the
// spread's host time: only the low end moves), extends it to hold 1 (the point estimate) where it lies on one side, then
// fills the p10/p90 intervals of tokens/s, step time, time to train and
// cost (cost only when known). Time and cost are inversely proportional to throughput, so their
// low end comes from ratio_p90. Contract: `e` came from estimate()/evaluate() for `s`.
void apply_error_band(Estimate& e, const Scenario& s, const ResidualTable& t, const InputSpread& spread = {});

}  // namespace capplan::sim
