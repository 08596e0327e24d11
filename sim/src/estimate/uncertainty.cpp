// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/estimate/uncertainty.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/goodput/goodput.hpp"

namespace capplan::sim {

namespace {

constexpr double kP10 = 0.10;
constexpr double kP90 = 0.90;

bool positive_finite(double v) { return std::isfinite(v) && v > 0; }
bool non_negative_finite(double v) { return std::isfinite(v) && v >= 0; }

bool is_scale_bucket(std::string_view part) {
  for (const char* b : kScaleBuckets) {
    if (part == b) return true;
  }
  return false;
}

// Throughput of the estimate's own layout with the GPU's unknown efficiencies set to `gemm` and
// `attention`, and the framework's host time per op to `host_s` (0 = leave as the scenario has
// it). Same layout: the question is how wrong this estimate may be, not which layout the other
// figures would pick.
double throughput_with(const Scenario& s, const Parallelism& p, double gemm, double attention, double host_s = 0) {
  Scenario t = s;
  if (gemm > 0) t.cluster.gpu.gemm_efficiency = gemm;
  if (attention > 0) t.cluster.gpu.attention_efficiency = attention;
  if (host_s > 0) t.training.host_s_per_op = host_s;
  const DatasheetCost cost(t.cluster);
  return evaluate(t, p, cost).step.tokens_per_s;
}

// Interval of a quantity inversely proportional to throughput (time, money).
Interval inverse(double value, double ratio_p10, double ratio_p90) { return {value / ratio_p90, value / ratio_p10}; }

std::optional<Interval> finite(Interval i) {
  if (!std::isfinite(i.low) || !std::isfinite(i.high)) return std::nullopt;
  if (i.low > i.high) std::swap(i.low, i.high);
  return i;
}

}  // namespace

const ResidualQuantiles* ResidualTable::find(std::string_view category) const {
  for (const auto& c : categories) {
    if (c.category == category) return &c;
  }
  return nullptr;
}

const ResidualQuantiles* ResidualTable::lookup(std::string_view category) const {
  for (const auto& key : category_fallbacks(category)) {
    if (const ResidualQuantiles* q = find(key)) return q;
  }
  return nullptr;
}

std::string scale_bucket(int gpus) {
  if (gpus <= 8) return kScaleBuckets[0];
  if (gpus <= 512) return kScaleBuckets[1];
  return kScaleBuckets[2];
}

std::string error_category(const Scenario& s) {
  return std::string(s.model.is_moe() ? "moe" : "dense") + "/" + to_string(s.training.framework) + "/" +
         scale_bucket(s.cluster.gpus);
}

CategoryParts category_parts(std::string_view category) {
  CategoryParts parts;
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const auto slash = category.find('/', start);
    fields.push_back(category.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  parts.arch = std::string(fields[0]);
  if (fields.size() >= 2) (is_scale_bucket(fields[1]) ? parts.scale : parts.framework) = std::string(fields[1]);
  if (fields.size() >= 3) parts.scale = std::string(fields[2]);
  return parts;
}

std::vector<std::string> category_fallbacks(std::string_view category) {
  if (category.empty() || category == kAllCategory) return {kAllCategory};
  const CategoryParts c = category_parts(category);
  std::vector<std::string> chain;
  if (!c.framework.empty() && !c.scale.empty()) chain.push_back(c.arch + "/" + c.framework + "/" + c.scale);
  if (!c.framework.empty()) chain.push_back(c.arch + "/" + c.framework);
  if (!c.scale.empty()) chain.push_back(c.arch + "/" + c.scale);
  chain.push_back(c.arch);
  chain.emplace_back(kAllCategory);
  return chain;
}

double empirical_quantile(std::span<const double> sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  const double h = (n + 1.0) * p;  // 1-based position
  if (h <= 1.0) return sorted.front();
  if (h >= n) return sorted.back();
  const double lower = std::floor(h);
  const size_t i = static_cast<size_t>(lower) - 1;  // 0-based index of the order statistic below
  return sorted[i] + (h - lower) * (sorted[i + 1] - sorted[i]);
}

std::pair<double, double> band_quantiles(std::span<const double> sorted) {
  constexpr double kWidth = kP90 - kP10;  // 0.8
  auto q = [&](double p) { return empirical_quantile(sorted, p); };
  double a = kP10;
  // empirical_quantile is continuous and non-decreasing in p, so the crossing is bisected.
  auto bisect = [](double lo, double hi, auto&& below) {  // below(lo) true, below(hi) false
    for (int i = 0; i < 60; ++i) {
      const double mid = 0.5 * (lo + hi);
      (below(mid) ? lo : hi) = mid;
    }
    return hi;
  };
  if (q(kP90) < 0) {
    const double top = 1.0 - kWidth;  // 0.2: the high end at the sample maximum
    a = q(top + kWidth) < 0 ? top : bisect(kP10, top, [&](double x) { return q(x + kWidth) < 0; });
  } else if (q(kP10) > 0) {
    a = q(0.0) > 0 ? 0.0 : bisect(0.0, kP10, [&](double x) { return q(x) <= 0; });
    // bisect returns the first a with q(a) > 0 within 1e-18; the band's low end is then 0 to
    // rounding, and the extension in apply_error_band makes it exact.
  }
  return {q(a), q(a + kWidth)};
}

ResidualTable fit_residuals(const std::vector<ResidualSample>& samples, int min_samples) {
  // Every sample counts in its exact category, its arch and "all".
  std::map<std::string, std::vector<double>> groups;
  for (const auto& sample : samples) {
    if (!positive_finite(sample.measured) || !positive_finite(sample.predicted)) continue;
    const double r = std::log(sample.measured / sample.predicted);
    if (!std::isfinite(r)) continue;
    for (const auto& key : category_fallbacks(sample.category)) groups[key].push_back(r);
  }
  ResidualTable table;
  for (auto& [category, residuals] : groups) {
    if (static_cast<int>(residuals.size()) < std::max(min_samples, 1)) continue;
    std::sort(residuals.begin(), residuals.end());
    const auto [low, high] = band_quantiles(residuals);
    table.categories.push_back({category, static_cast<int>(residuals.size()), empirical_quantile(residuals, kP10),
                                empirical_quantile(residuals, kP90), low, high});
  }
  return table;
}

const ResidualQuantiles* optimistic_regime(const ResidualTable& t, const Scenario& s) {
  const ResidualQuantiles* q = t.lookup(error_category(s));
  return q != nullptr && q->n > 0 && std::isfinite(q->log_ratio_p90) && q->log_ratio_p90 < 0 ? q : nullptr;
}

void apply_error_band(Estimate& e, const Scenario& s, const ResidualTable& t, const InputSpread& spread) {
  e.uncertainty.band.reset();
  e.uncertainty.step_time_s.reset();
  e.uncertainty.tokens_per_s.reset();
  e.uncertainty.time_to_train_days.reset();
  e.uncertainty.cost_usd.reset();
  e.uncertainty.wall_days.reset();
  e.uncertainty.total_cost_usd.reset();
  std::erase_if(e.findings, [](const Finding& f) { return f.code == FindingCode::band_extended_to_estimate; });

  const std::string category = error_category(s);
  const ResidualQuantiles* q = t.lookup(category);
  if (q == nullptr) return;

  ErrorBand band;
  band.category = q->category;
  band.ratio_p10 = std::exp(std::min(q->log_ratio_low, q->log_ratio_high));
  band.ratio_p90 = std::exp(std::max(q->log_ratio_low, q->log_ratio_high));
  // The runs' own p10-p90, for the finding where it lies on one side of the estimate.
  Interval runs{std::exp(std::min(q->log_ratio_p10, q->log_ratio_p90)),
                std::exp(std::max(q->log_ratio_p10, q->log_ratio_p90))};
  band.asked = category;
  band.runs = q->n;

  // Input uncertainty: a GPU without a published GEMM (or attention) efficiency is priced at the
  // datasheet model's default; the published figures of other GPUs spread around it. The
  // estimate's layout is re-evaluated at the low and the high end of that spread and the band
  // stretched by the throughput ratios: fully correlated with the residuals (the ranges add in
  // log space), so it errs wide.
  const GpuSpec& gpu = s.cluster.gpu;
  const bool gemm_unknown = !(gpu.gemm_efficiency > 0);
  const bool attention_unknown = !(gpu.attention_efficiency > 0);
  BandWidening widening;
  // The layout's throughput as the scenario has it, evaluated once for both widenings.
  std::optional<double> base_throughput;
  const auto base_of = [&] {
    if (!base_throughput) base_throughput = throughput_with(s, e.layout.strategy, 0, 0);
    return *base_throughput;
  };
  if ((gemm_unknown || attention_unknown) && positive_finite(e.step.tokens_per_s)) {
    const double base = base_of();
    const double low = throughput_with(s, e.layout.strategy, gemm_unknown ? spread.gemm_low : 0,
                                       attention_unknown ? spread.attention_low : 0);
    const double high = throughput_with(s, e.layout.strategy, gemm_unknown ? spread.gemm_high : 0,
                                        attention_unknown ? spread.attention_high : 0);
    if (positive_finite(base) && positive_finite(low) && positive_finite(high)) {
      widening = BandWidening{std::min(1.0, std::min(low, high) / base), std::max(1.0, std::max(low, high) / base),
                              gemm_unknown, attention_unknown, spread.gemm_low, spread.gemm_high,
                              spread.attention_low, spread.attention_high};
    }
  }
  // Unknown host time: the step was priced at the launch floor; at an eager framework's host time
  // per op a host-bound step is slower (a GPU-bound one is not: the ratio is then exactly 1).
  // Fully correlated with the rest, like the efficiencies: the factors multiply.
  if (!s.training.host_time_known && spread.host_us_per_op_high * 1e-6 > s.training.host_s_per_op &&
      positive_finite(e.step.tokens_per_s)) {
    const double base = base_of();
    const double slow = throughput_with(s, e.layout.strategy, 0, 0, spread.host_us_per_op_high * 1e-6);
    if (positive_finite(base) && positive_finite(slow) && slow < base) {
      widening.down *= slow / base;
      widening.host = true;
      widening.host_us_per_op = spread.host_us_per_op_high;
    }
  }
  if (widening.gemm || widening.attention || widening.host) {
    band.ratio_p10 *= widening.down;
    band.ratio_p90 *= widening.up;
    runs.low *= widening.down;
    runs.high *= widening.up;
    band.widened = widening;
  }
  if (!positive_finite(band.ratio_p10) || !positive_finite(band.ratio_p90)) return;
  // The point estimate inside its band. Where the runs' p10-p90 lies on one side of 1 (all but
  // a tenth of the category's runs slower, or faster, than predicted), the table's band is
  // already the 80% of them nearest the estimate (band_quantiles) and a finding says so. Where
  // even that stops short of 1 (all but a fifth on one side; or a table without a band of its
  // own, schema 1-2), the near end moves to 1 (docs/accuracy.md, "Error bars", step 4).
  if (runs.low > 1.0 || runs.high < 1.0) band.unextended = runs;
  band.ratio_p10 = std::min(band.ratio_p10, 1.0);
  band.ratio_p90 = std::max(band.ratio_p90, 1.0);
  e.uncertainty.band = band;

  const double r10 = band.ratio_p10;
  const double r90 = band.ratio_p90;
  if (positive_finite(e.step.tokens_per_s)) {
    e.uncertainty.tokens_per_s = finite({e.step.tokens_per_s * r10, e.step.tokens_per_s * r90});
  }
  if (positive_finite(e.step.time.base())) {
    e.uncertainty.step_time_s = finite(inverse(e.step.time.base(), r10, r90));
  }
  if (non_negative_finite(e.totals.time_to_train.base())) {
    e.uncertainty.time_to_train_days = finite(inverse(units::to_days(e.totals.time_to_train), r10, r90));
  }
  if (e.totals.cost && non_negative_finite(e.totals.cost->base())) {
    e.uncertainty.cost_usd = finite(inverse(e.totals.cost->base(), r10, r90));
  }
  // With interruptions and checkpoints: not proportional to throughput (a longer run meets more
  // failures, checkpoints cost the same), so the goodput model runs again at each end.
  if (e.goodput.modelled && positive_finite(e.step.time.base()) && positive_finite(e.step.tokens_per_s)) {
    const GoodputInputs in{&s.model, &s.training, &s.cluster, &s.reliability, &s.storage, &s.data, &s.pricing};
    std::vector<Finding> scratch;
    auto at = [&](double ratio) {
      return compute_goodput(in, e.layout.strategy, e.totals.time_to_train / ratio, e.step.time / ratio,
                             e.step.tokens_per_s * ratio, scratch);
    };
    const Goodput fast = at(r90);
    const Goodput slow = at(r10);
    if (fast.finite && slow.finite) {
      e.uncertainty.wall_days = finite({units::to_days(fast.wall), units::to_days(slow.wall)});
    }
    if (fast.cost.total && slow.cost.total) {
      e.uncertainty.total_cost_usd = finite({fast.cost.total->base(), slow.cost.total->base()});
    }
  }
  // Said where the band had to be extended: the runs of the category lay on one side of the model.
  if (const auto& u = band.unextended) {
    Finding f = finding(FindingCode::band_extended_to_estimate, "",
                        {{"ratio_p10", u->low}, {"ratio_p90", u->high}, {"runs", static_cast<double>(band.runs)}});
    f.values.push_back({"category", 0, band.category, true});
    e.findings.push_back(std::move(f));
  }
}

}  // namespace capplan::sim
