// SPDX-License-Identifier: Apache-2.0
// The serving accuracy harness: measured serving runs (data/benchmarks/inference_runs_dev.csv:
// TensorRT-LLM's perf-overview throughput and online-serving tables, Qwen's vLLM and SGLang speed
// benchmarks, ...) read into serving jobs on catalog hardware, each simulated (sim/serve.hpp) and
// its measured figures compared with the same quantities of the simulation.
// `capplan validate-serving` and the tests render it; nothing here prints.
//
// Contract: a run's metrics are in the units the table gives them (ServingMetric::unit: tok/s,
// tok/s/GPU, req/s, ms); the prediction of each is the same quantity in the same unit. A record
// capplan cannot take is kept, unusable, with the reason; a malformed table or a cell that is not
// a number where the layout wants one is an error naming the file's line, the row and the column.
#pragma once
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/serve/serve.hpp"

namespace capplan::data {

// What a table measured. Throughputs are over the whole replica (the TP group) unless per GPU.
enum class ServingMetricKind {
  output_tokens_per_s,          // generated tokens / wall time, the replica
  output_tokens_per_s_per_gpu,  // the same / GPUs of the replica
  total_tokens_per_s,           // (prompt + generated) tokens / wall time
  requests_per_s,               // completed requests / wall time
  ttft_mean,                    // mean time to first token, ms
  itl_mean,                     // mean inter-token latency (time per output token after the first), ms
  e2e_mean,                     // mean request latency, ms
};
const char* to_string(ServingMetricKind k);
const char* unit(ServingMetricKind k);  // "tok/s", "tok/s/GPU", "req/s", "ms"

struct ServingMetric {
  ServingMetricKind kind = ServingMetricKind::output_tokens_per_s;
  double value = 0;    // in unit(kind)
  std::string column;  // the CSV column it came from
};

// One record of the table.
struct ServingRun {
  std::string row_id;
  std::string source_group;
  std::string model_name;  // as written
  std::string gpu_model;   // as written
  std::string engine_id;   // engine recipe (data/engines.json), empty when none matches
  std::string weight_text;  // the weight_precision cell
  int num_gpus = 0;
  std::int64_t input_len = 0;
  std::int64_t output_len = 0;
  std::int64_t num_requests = 0;  // as the row gives it (0: not given)
  sim::ServeJob job;      // model preset, formats, the engine recipe with the row's settings, layout, traffic
  sim::Cluster cluster;   // the catalog GPU, num_gpus of them
  std::vector<ServingMetric> metrics;  // the row's measured figures (derived columns left out)
  bool usable = false;
  std::string skip_reason;               // why not usable (reasons joined by "; ")
  std::vector<std::string> assumptions;  // what the row does not say and capplan took, stated
};

// Reads every record (the header names the columns; see data/benchmarks/inference_runs_dev.md).
Result<std::vector<ServingRun>> load_serving_runs(const std::filesystem::path& csv, const Catalogs& catalogs);
// The same for the text of a CSV file named `file` in messages.
Result<std::vector<ServingRun>> parse_serving_runs(std::string_view text, const std::string& file,
                                                   const Catalogs& catalogs);

// One measured figure of a usable run against the simulation.
struct ServingComparison {
  const ServingRun* run = nullptr;
  const ServingMetric* metric = nullptr;
  bool predicted = false;
  std::string error;      // why there is no prediction (the weights do not fit, ...)
  double predicted_value = NAN;  // in unit(metric->kind)
  double error_frac = NAN;       // (predicted - measured) / measured
  bool saturated = false;        // the simulated replica could not keep up with the offered rate
  // What the simulation did (to read a miss by): decoding sequences per step, recompute
  // preemptions, what capped the batch ("max_num_seqs", "kv_cache" or ""), the cache's tokens.
  double mean_batch = 0;
  std::int64_t preemptions = 0;
  std::string limit;
  std::int64_t kv_tokens = 0;
};

struct ServingAccuracy {
  int predicted = 0;
  double mape = NAN;          // percent
  double median_ape = NAN;    // percent
  double within_10pct = NAN;  // fraction of comparisons with |error| <= 10%
  double within_25pct = NAN;
};
ServingAccuracy serving_accuracy(const std::vector<const ServingComparison*>& comparisons);

struct ServingReport {
  int rows = 0;
  int usable = 0;
  std::vector<ServingComparison> comparisons;  // every metric of every usable run, in table order
  std::vector<const ServingRun*> skipped;
  ServingAccuracy overall;
  std::map<std::string, ServingAccuracy> by_metric;  // to_string(kind)
  std::map<std::string, ServingAccuracy> by_source;  // source_group
  std::map<std::string, ServingAccuracy> by_engine;  // engine id
};

// Every usable run simulated with the datasheet cost model under its engine's assumptions
// (sim::serving_assumptions), one simulation per run, each measured figure compared.
ServingReport validate_serving(const std::vector<ServingRun>& runs);

// Usable rows / all rows.
double serving_coverage(const ServingReport& rep);

}  // namespace capplan::data
