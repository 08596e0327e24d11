// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/cost_model.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "validation/tally.hpp"

namespace capplan::data {

namespace {

Accuracy accuracy_of(std::vector<double> abs_errors, int with_interval, int inside) {
  Accuracy a;
  a.with_interval = with_interval;
  if (with_interval > 0) a.interval_coverage = static_cast<double>(inside) / with_interval;
  a.predicted = static_cast<int>(abs_errors.size());
  if (abs_errors.empty()) return a;
  std::sort(abs_errors.begin(), abs_errors.end());
  double sum = 0;
  int within = 0;
  for (double e : abs_errors) {
    sum += e;
    within += e <= 0.10 ? 1 : 0;
  }
  const size_t n = abs_errors.size();
  a.mape = 100.0 * sum / static_cast<double>(n);
  a.median_ape = 100.0 * (n % 2 == 1 ? abs_errors[n / 2] : 0.5 * (abs_errors[n / 2 - 1] + abs_errors[n / 2]));
  a.within_10pct = static_cast<double>(within) / static_cast<double>(n);
  return a;
}

}  // namespace

Accuracy accuracy(const std::vector<const ValidationRow*>& rows) {
  std::vector<double> abs_errors;
  int with_interval = 0, inside = 0, with_group = 0, inside_group = 0;
  for (const auto* r : rows) {
    abs_errors.push_back(std::fabs(r->error_frac));
    if (r->has_interval) {
      ++with_interval;
      inside += r->inside ? 1 : 0;
    }
    if (r->has_group_interval) {
      ++with_group;
      inside_group += r->inside_group ? 1 : 0;
    }
  }
  Accuracy a = accuracy_of(std::move(abs_errors), with_interval, inside);
  a.with_group_interval = with_group;
  if (with_group > 0) a.group_interval_coverage = static_cast<double>(inside_group) / with_group;
  return a;
}

Accuracy memory_accuracy(const std::vector<const ValidationRow*>& rows) {
  std::vector<double> abs_errors;
  for (const auto* r : rows) {
    if (r->memory_predicted) abs_errors.push_back(std::fabs(r->memory_error_frac));
  }
  return accuracy_of(std::move(abs_errors), 0, 0);
}

std::string one_line(const Diagnostics& diags) {
  std::string text;
  for (const auto& d : diags) {
    if (d.severity != Diagnostic::Severity::error) continue;
    text += (text.empty() ? "" : "; ") + (d.where.empty() ? "" : d.where + ": ") + message(d);
  }
  return text.empty() ? "unknown error" : text;
}

ValidationRow evaluate_row(const PublishedRun& run, const Catalogs& catalogs, const sim::Profile* profile) {
  ValidationRow r;
  r.run = &run;
  r.gpu = run.gpu_model;
  r.gpus = run.num_gpus;
  r.measured = run.measured_tokens_per_s_per_gpu;
  auto parsed = parse_scenario(run.scenario, catalogs, run.row_id);
  if (!parsed) {
    r.error = one_line(parsed.error());
    return r;
  }
  r.gpu = parsed->scenario.cluster.gpu.id;
  r.gpus = parsed->scenario.cluster.gpus;
  r.category = sim::error_category(parsed->scenario);
  const sim::CategoryParts parts = sim::category_parts(r.category);
  r.arch = parts.arch;
  r.framework = parts.framework;
  r.scenario = parsed->scenario;
  const auto cost = make_cost_model(parsed->scenario.cluster, profile);
  auto e = sim::estimate(parsed->scenario, *cost);
  if (!e) {
    r.error = one_line(e.error());
    return r;
  }
  r.layout = e->layout.strategy;
  r.micro_batches = e->layout.micro_batches;
  r.fits = e->memory.fits();
  if (run.measured_peak_memory_gib > 0) {
    r.memory_predicted = true;
    r.measured_memory_gib = run.measured_peak_memory_gib;
    r.memory_estimate_gib = e->memory.total().base() / (1024.0 * 1024.0 * 1024.0);
    r.memory_error_frac = (r.memory_estimate_gib - r.measured_memory_gib) / r.measured_memory_gib;
  }
  r.estimate = r.gpus > 0 ? e->step.tokens_per_s / r.gpus : NAN;
  if (!(r.measured > 0) || !std::isfinite(r.measured)) {
    r.error = "no measured throughput to compare with";
    return r;
  }
  if (!std::isfinite(r.estimate)) {
    r.error = "the estimate is not a finite number";
    return r;
  }
  r.error_frac = (r.estimate - r.measured) / r.measured;
  r.full = std::move(*e);
  r.predicted = true;
  return r;
}

namespace {

std::vector<sim::ResidualSample> residual_samples(const std::vector<ValidationRow>& results, const ValidationRow* except,
                                                  const std::vector<ValidationRow>* pool) {
  std::vector<sim::ResidualSample> samples;
  for (const auto* rows : {&results, pool}) {
    if (rows == nullptr) continue;
    for (const auto& r : *rows) {
      if (r.predicted && &r != except) samples.push_back({r.category, r.measured, r.estimate});
    }
  }
  return samples;
}

// sim::fit_residuals of the samples with one left out, for every sample in turn, without refitting
// the whole table per row (quadratic in the rows: 8,960 rows took 30 s): the groups of the fallback
// chains are sorted once, and leaving a sample out recomputes only the groups of its own chain,
// with its value removed from a sorted copy. without(s) equals fit_residuals(samples minus one
// sample equal to s) exactly, built as fit_residuals builds it.
class LeaveOneOutResiduals {
 public:
  explicit LeaveOneOutResiduals(const std::vector<sim::ResidualSample>& samples) {
    std::map<std::string, std::vector<double>> groups;
    for (const auto& sample : samples) {
      const auto r = log_residual(sample);
      if (!r) continue;
      for (const auto& key : sim::category_fallbacks(sample.category)) groups[key].push_back(*r);
    }
    for (auto& [category, residuals] : groups) {
      std::sort(residuals.begin(), residuals.end());
      Group g{category, std::move(residuals), std::nullopt};
      g.entry = entry(g.category, g.sorted);
      if (g.entry) all_.categories.push_back(*g.entry);
      groups_.push_back(std::move(g));
    }
  }

  const sim::ResidualTable& all() const { return all_; }

  sim::ResidualTable without(const sim::ResidualSample& left_out) const {
    const auto r = log_residual(left_out);
    if (!r) return all_;
    const std::vector<std::string> chain = sim::category_fallbacks(left_out.category);
    sim::ResidualTable table;
    std::vector<double> rest;
    for (const auto& g : groups_) {
      // The sample joined the group once per time its chain names it.
      const auto copies = std::count(chain.begin(), chain.end(), g.category);
      const auto at = std::lower_bound(g.sorted.begin(), g.sorted.end(), *r);
      if (copies == 0 || g.sorted.end() - at < copies || *(at + copies - 1) != *r) {
        if (g.entry) table.categories.push_back(*g.entry);
        continue;
      }
      rest.assign(g.sorted.begin(), at);
      rest.insert(rest.end(), at + copies, g.sorted.end());
      if (auto e = entry(g.category, rest)) table.categories.push_back(*e);
    }
    return table;
  }

 private:
  struct Group {
    std::string category;
    std::vector<double> sorted;
    std::optional<sim::ResidualQuantiles> entry;  // the whole table's, when the group is large enough
  };

  // fit_residuals' log residual of a usable sample.
  static std::optional<double> log_residual(const sim::ResidualSample& s) {
    const auto ok = [](double v) { return std::isfinite(v) && v > 0; };
    if (!ok(s.measured) || !ok(s.predicted)) return std::nullopt;
    const double r = std::log(s.measured / s.predicted);
    return std::isfinite(r) ? std::optional<double>(r) : std::nullopt;
  }
  // fit_residuals' entry of a sorted group (p10 and p90 as its kP10 and kP90), or nullopt below
  // kMinResidualSamples.
  static std::optional<sim::ResidualQuantiles> entry(const std::string& category, std::span<const double> sorted) {
    if (static_cast<int>(sorted.size()) < std::max(sim::kMinResidualSamples, 1)) return std::nullopt;
    const auto [low, high] = sim::band_quantiles(sorted);
    return sim::ResidualQuantiles{category, static_cast<int>(sorted.size()), sim::empirical_quantile(sorted, 0.10),
                                  sim::empirical_quantile(sorted, 0.90), low, high};
  }

  std::vector<Group> groups_;  // in fit_residuals' order (by category)
  sim::ResidualTable all_;
};

// The row's interval as `capplan estimate` would report it with a table that never saw the row
// (`residuals` holds every row's sample; the row's own is left out, linear in the rows rather than
// a refit of the whole table per row).
void leave_one_out_interval(ValidationRow& r, const LeaveOneOutResiduals& residuals) {
  const sim::ResidualTable table = residuals.without({r.category, r.measured, r.estimate});
  sim::Estimate e = r.full;
  sim::apply_error_band(e, r.scenario, table);
  if (!e.uncertainty.band || !e.uncertainty.tokens_per_s || r.gpus <= 0) return;
  r.has_interval = true;
  r.band_category = e.uncertainty.band->category;
  r.p10 = e.uncertainty.tokens_per_s->low / r.gpus;
  r.p90 = e.uncertainty.tokens_per_s->high / r.gpus;
  r.inside = r.p10 <= r.measured && r.measured <= r.p90;
}

// The source group a row leaves out with it: its run's group, or the row alone when none is named.
std::string group_key(const ValidationRow& r) {
  return r.run == nullptr || r.run->source_group.empty() ? "row " + (r.run ? r.run->row_id : std::string())
                                                         : r.run->source_group;
}

// Every row's interval from a residual table fitted without its whole source group (pooled rows
// of that group too): one refit per group, of the samples the other groups give. A group whose
// absence leaves a category too thin falls back along the category chain, as `estimate` does.
void leave_one_group_out_intervals(std::vector<ValidationRow>& results, const std::vector<ValidationRow>* pool) {
  std::map<std::string, std::vector<ValidationRow*>> groups;
  for (auto& r : results) {
    if (r.predicted) groups[group_key(r)].push_back(&r);
  }
  for (const auto& [key, members] : groups) {
    std::vector<sim::ResidualSample> samples;
    for (const std::vector<ValidationRow>* rows : {static_cast<const std::vector<ValidationRow>*>(&results), pool}) {
      if (rows == nullptr) continue;
      for (const auto& r : *rows) {
        if (r.predicted && group_key(r) != key) samples.push_back(sim::ResidualSample{r.category, r.measured, r.estimate});
      }
    }
    const sim::ResidualTable table = sim::fit_residuals(samples);
    for (ValidationRow* r : members) {
      sim::Estimate e = r->full;
      sim::apply_error_band(e, r->scenario, table);
      if (!e.uncertainty.band || !e.uncertainty.tokens_per_s || r->gpus <= 0) continue;
      r->has_group_interval = true;
      const double p10 = e.uncertainty.tokens_per_s->low / r->gpus, p90 = e.uncertainty.tokens_per_s->high / r->gpus;
      r->inside_group = p10 <= r->measured && r->measured <= p90;
    }
  }
}

}  // namespace

ValidationReport validate_published(const std::vector<PublishedRun>& runs, const Catalogs& catalogs,
                                    const sim::Profile* profile, const std::vector<ValidationRow>* pool) {
  ValidationReport rep;
  validation_detail::tally_runs(
      rep, runs, [&](const PublishedRun& run) { rep.results.push_back(evaluate_row(run, catalogs, profile)); });
  const LeaveOneOutResiduals residuals(residual_samples(rep.results, nullptr, pool));
  for (auto& r : rep.results) {
    if (r.predicted) leave_one_out_interval(r, residuals);
  }
  rep.table = residuals.all();
  leave_one_group_out_intervals(rep.results, pool);

  std::vector<const ValidationRow*> all;
  using Groups = std::map<std::string, std::vector<const ValidationRow*>>;
  Groups arch_rows, framework_rows, gpu_rows, scale_rows, source_rows;
  std::vector<const ValidationRow*> memory_rows;
  Groups memory_source_rows;
  for (const auto& r : rep.results) {
    if (r.memory_predicted) {
      memory_rows.push_back(&r);
      if (!r.run->source_group.empty()) memory_source_rows[r.run->source_group].push_back(&r);
    }
    if (!r.predicted) continue;
    if (!r.run->source_group.empty()) source_rows[r.run->source_group].push_back(&r);
    all.push_back(&r);
    arch_rows[r.arch].push_back(&r);
    framework_rows[r.framework].push_back(&r);
    gpu_rows[r.gpu].push_back(&r);
    scale_rows[sim::scale_bucket(r.gpus)].push_back(&r);
  }
  rep.overall = accuracy(all);
  for (auto [groups, into] : {std::pair{&arch_rows, &rep.by_arch}, std::pair{&framework_rows, &rep.by_framework},
                              std::pair{&gpu_rows, &rep.by_gpu}, std::pair{&scale_rows, &rep.by_scale}}) {
    for (const auto& [name, rows] : *groups) (*into)[name] = accuracy(rows);
  }
  for (const auto& [name, rows] : source_rows) rep.by_source[name] = accuracy(rows);
  rep.memory = memory_accuracy(memory_rows);
  for (const auto& [name, rows] : memory_source_rows) rep.memory_by_source[name] = memory_accuracy(rows);
  return rep;
}

double coverage(const ValidationReport& rep) {
  return rep.usable > 0 ? static_cast<double>(rep.overall.predicted) / rep.usable : NAN;
}

}  // namespace capplan::data
