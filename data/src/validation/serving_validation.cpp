// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/serving_validation.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "capplan/data/format.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "reading/csv.hpp"
#include "validation/inference_runs.hpp"
#include "reading/json_reader.hpp"
#include "validation/tally.hpp"

namespace capplan::data {

const char* to_string(ServingMetricKind k) {
  switch (k) {
    case ServingMetricKind::output_tokens_per_s: return "output_tok_s";
    case ServingMetricKind::output_tokens_per_s_per_gpu: return "output_tok_s_per_gpu";
    case ServingMetricKind::total_tokens_per_s: return "total_tok_s";
    case ServingMetricKind::requests_per_s: return "requests_per_s";
    case ServingMetricKind::ttft_mean: return "ttft_mean";
    case ServingMetricKind::itl_mean: return "itl_mean";
    case ServingMetricKind::e2e_mean: return "e2e_mean";
  }
  return "?";
}

const char* unit(ServingMetricKind k) {
  switch (k) {
    case ServingMetricKind::output_tokens_per_s: return "tok/s";
    case ServingMetricKind::output_tokens_per_s_per_gpu: return "tok/s/GPU";
    case ServingMetricKind::total_tokens_per_s: return "tok/s";
    case ServingMetricKind::requests_per_s: return "req/s";
    case ServingMetricKind::ttft_mean:
    case ServingMetricKind::itl_mean:
    case ServingMetricKind::e2e_mean: return "ms";
  }
  return "?";
}

Result<std::vector<ServingRun>> load_serving_runs(const std::filesystem::path& csv, const Catalogs& catalogs) {
  const std::string file = csv.filename().string();
  auto text = detail::read_text_file(csv, file);
  if (!text) return std::unexpected(std::move(text.error()));
  return parse_serving_runs(*text, file, catalogs);
}

Result<std::vector<ServingRun>> parse_serving_runs(std::string_view text, const std::string& file,
                                                   const Catalogs& catalogs) {
  auto rows = detail::parse_csv(text, file);
  if (!rows) return std::unexpected(std::move(rows.error()));
  return detail::inference_runs(*rows, catalogs, file);
}

ServingAccuracy serving_accuracy(const std::vector<const ServingComparison*>& comparisons) {
  std::vector<double> abs_errors;
  for (const auto* c : comparisons) {
    if (c->predicted) abs_errors.push_back(std::fabs(c->error_frac));
  }
  ServingAccuracy a;
  a.predicted = static_cast<int>(abs_errors.size());
  if (abs_errors.empty()) return a;
  std::sort(abs_errors.begin(), abs_errors.end());
  double sum = 0;
  int within10 = 0, within25 = 0;
  for (double e : abs_errors) {
    sum += e;
    within10 += e <= 0.10 ? 1 : 0;
    within25 += e <= 0.25 ? 1 : 0;
  }
  const std::size_t n = abs_errors.size();
  a.mape = 100.0 * sum / static_cast<double>(n);
  a.median_ape = 100.0 * (n % 2 == 1 ? abs_errors[n / 2] : 0.5 * (abs_errors[n / 2 - 1] + abs_errors[n / 2]));
  a.within_10pct = static_cast<double>(within10) / static_cast<double>(n);
  a.within_25pct = static_cast<double>(within25) / static_cast<double>(n);
  return a;
}

namespace {

// The quantity `kind` of the simulated replica, in unit(kind).
double predicted(ServingMetricKind kind, const sim::ServeLoad& load, const sim::ServeJob& job) {
  switch (kind) {
    case ServingMetricKind::output_tokens_per_s: return load.output_tokens_per_s;
    case ServingMetricKind::output_tokens_per_s_per_gpu: return load.output_tokens_per_s / job.gpus();
    case ServingMetricKind::total_tokens_per_s: return load.total_tokens_per_s;
    case ServingMetricKind::requests_per_s:
      // Under Poisson arrivals the simulation reports the offered rate; what completes is its
      // generated tokens per second over the steady window / the (fixed) output length.
      return job.traffic.arrival == sim::Arrival::poisson ? load.output_tokens_per_s / job.traffic.output.mean
                                                          : load.requests_per_s;
    case ServingMetricKind::ttft_mean: return 1e3 * load.ttft.mean;
    case ServingMetricKind::itl_mean: return 1e3 * load.tpot.mean;
    case ServingMetricKind::e2e_mean: return 1e3 * load.e2e.mean;
  }
  return NAN;
}

// Simulates one run; the comparisons of its metrics, or the reason there are none.
void evaluate(const ServingRun& run, std::vector<ServingComparison>& out) {
  const sim::ServeJob& job = run.job;
  const sim::DatasheetCost cost(run.cluster, sim::serving_assumptions(job.engine));
  const sim::ReplicaMemory memory = sim::replica_memory(job, run.cluster);
  std::string why;
  sim::ServeLoad load;
  const double sequence = job.traffic.input.mean + job.traffic.output.mean + job.engine.kv_block_tokens;
  if (!memory.fits()) {
    why = "does not fit: " + format::fixed(memory.weights.base() / 1073741824.0, 1) + " GiB of weights per GPU leave no "
          "KV cache in " + format::fixed(memory.capacity.base() / 1073741824.0, 1) + " GiB";
  } else if (static_cast<double>(memory.kv_tokens) < sequence) {
    why = "does not fit: the KV cache holds " + std::to_string(memory.kv_tokens) + " tokens, fewer than one request's " +
          format::fixed(sequence, 0);
  } else {
    const sim::PassModel pass(job, run.cluster, cost);
    load = sim::simulate(job, pass, memory, 1);
    if (load.requests == 0) why = "no simulated request completed";
  }
  for (const ServingMetric& m : run.metrics) {
    ServingComparison c;
    c.run = &run;
    c.metric = &m;
    c.saturated = load.saturated;
    c.mean_batch = load.mean_batch;
    c.preemptions = load.preemptions;
    c.limit = load.limit;
    c.kv_tokens = memory.kv_tokens;
    if (why.empty()) {
      const double v = predicted(m.kind, load, job);
      if (std::isfinite(v) && v > 0) {
        c.predicted = true;
        c.predicted_value = v;
        c.error_frac = (v - m.value) / m.value;
      } else {
        c.error = "the simulation gave no " + std::string(to_string(m.kind));
      }
    } else {
      c.error = why;
    }
    out.push_back(std::move(c));
  }
}

}  // namespace

ServingReport validate_serving(const std::vector<ServingRun>& runs) {
  ServingReport rep;
  validation_detail::tally_runs(rep, runs, [&rep](const ServingRun& run) { evaluate(run, rep.comparisons); });
  std::vector<const ServingComparison*> all;
  std::map<std::string, std::vector<const ServingComparison*>> metric, source, engine;
  for (const auto& c : rep.comparisons) {
    all.push_back(&c);
    metric[to_string(c.metric->kind)].push_back(&c);
    source[c.run->source_group].push_back(&c);
    engine[c.run->engine_id].push_back(&c);
  }
  rep.overall = serving_accuracy(all);
  for (auto [groups, into] : {std::pair{&metric, &rep.by_metric}, std::pair{&source, &rep.by_source},
                              std::pair{&engine, &rep.by_engine}}) {
    for (const auto& [name, list] : *groups) (*into)[name] = serving_accuracy(list);
  }
  return rep;
}

double serving_coverage(const ServingReport& rep) {
  return rep.rows > 0 ? static_cast<double>(rep.usable) / rep.rows : NAN;
}

}  // namespace capplan::data
