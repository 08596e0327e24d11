// SPDX-License-Identifier: Apache-2.0
#include "validation/inference_runs.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "capplan/data/findings.hpp"
#include "capplan/data/format.hpp"
#include "validation/inference_names.hpp"

namespace capplan::data::detail {

namespace {

using namespace serving_names;

constexpr const char* kColumns[] = {
    "row_id", "source_group", "framework", "framework_version", "scenario", "model", "gpu", "num_gpus", "tp", "pp",
    "parallel_note", "weight_precision", "kv_cache_precision", "input_len", "output_len", "num_requests",
    "concurrency_or_batch", "request_rate_qps", "throughput_output_tok_s_total", "throughput_output_tok_s_per_gpu",
    "throughput_total_tok_s", "requests_per_s", "ttft_ms_mean", "tpot_or_itl_ms_mean", "e2e_latency_ms_mean",
    "prefill_latency_ms", "decode_latency_ms_per_token", "metric_definition", "verification", "notes"};

// --- the row's own engine settings ----------------------------------------------------------

// The number after `key` and a separator (" ", "=", ":") in `text`; nullopt when absent.
std::optional<double> setting(const std::string& text, std::string_view key) {
  const std::string s = lower(text);
  const auto at = s.find(key);
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + key.size();
  while (i < s.size() && (s[i] == ' ' || s[i] == '=' || s[i] == ':')) ++i;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data() + i || !std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

// The vLLM settings the Qwen2.5 speed benchmark names in its Note column (QwenLM/Qwen2.5
// docs/source/benchmark/speed_benchmark.rst, the footnotes under each vLLM table); the default
// (gpu_memory_utilization=0.9 max_model_len=32768 enforce_eager=False) is vLLM's own.
struct QwenSetting {
  const char* preset;
  const char* note;  // the Note cell, lower case, spaces removed
  const char* text;
};
constexpr QwenSetting kQwenSettings[] = {
    {"qwen2.5-32b", "setting1", "gpu_memory_utilization=1.0 max_model_len=32768 enforce_eager=True"},
    {"qwen2.5-72b", "setting1", "gpu_memory_utilization=0.98 max_model_len=4096 enforce_eager=True"},
    {"qwen2.5-72b", "setting2", "gpu_memory_utilization=1.0 max_model_len=4096 enforce_eager=True"},
    {"qwen2.5-72b", "setting3", "gpu_memory_utilization=1.0 max_model_len=8192 enforce_eager=True"},
    {"qwen2.5-72b", "setting4", "gpu_memory_utilization=0.9 max_model_len=65536 enforce_eager=False"},
    {"qwen2.5-72b", "setting5", "gpu_memory_utilization=0.9 max_model_len=131072 enforce_eager=False"},
    {"", "setting-64k", "gpu_memory_utilization=0.9 max_model_len=65536 enforce_eager=False"},
};
const char* qwen_setting(const std::string& preset, const std::string& notes) {
  std::string n = lower(notes);
  erase_all(n, " ");
  for (const auto& q : kQwenSettings) {
    if ((*q.preset == '\0' || preset == q.preset) && n.find(q.note) != std::string::npos) return q.text;
  }
  return nullptr;
}

// Applies what `text` (the row's notes, scenario, version) sets on the engine and says so. The
// memory fractions are the engine's KV / static-memory fraction whatever the engine calls it.
void apply_settings(const std::string& text, const std::string& said, sim::EngineSpec& e,
                    std::vector<std::string>& assumptions) {
  for (const char* key : {"kv_cache_free_gpu_mem_fraction", "mem_fraction_static", "gpu_memory_utilization"}) {
    if (const auto v = setting(text, key); v && *v <= 1.0) {
      e.kv_memory_fraction = *v;
      assumptions.push_back(std::string(key) + " " + format::in_sentence(*v, 2) + " (" + said +
                            "): the engine's memory fraction");
    }
  }
  for (const char* key : {"max_batch_size", "max_num_seqs"}) {
    if (const auto v = setting(text, key)) {
      e.max_num_seqs = static_cast<int>(std::min(*v, 1e6));
      assumptions.push_back(std::string(key) + " " + format::in_sentence(*v, -1) + " (" + said + ")");
    }
  }
  for (const char* key : {"max_num_tokens", "max_num_batched_tokens"}) {
    if (const auto v = setting(text, key)) {
      e.max_num_batched_tokens = static_cast<std::int64_t>(std::min(*v, 1e9));
      assumptions.push_back(std::string(key) + " " + format::in_sentence(*v, -1) + " (" + said + ")");
    }
  }
  if (has(text, "enforce_eager=true")) {
    e.cuda_graphs = false;
    assumptions.push_back("enforce_eager=True (" + said + "): no CUDA graphs");
  }
}

// "DEP2", "DEP4 = attention-DP + EP 4": TensorRT-LLM's attention-DP + expert-parallel layouts.
bool dep_layout(const std::string& note) {
  const std::string n = lower(note);
  for (auto at = n.find("dep"); at != std::string::npos; at = n.find("dep", at + 1)) {
    const bool starts = at == 0 || !std::isalpha(static_cast<unsigned char>(n[at - 1]));
    if (starts && at + 3 < n.size() && std::isdigit(static_cast<unsigned char>(n[at + 3]))) return true;
  }
  return false;
}

// --- numbers ----------------------------------------------------------------------------------

// A cell whose source says the figure has no single value or is not known ("variable",
// "benchmark dataset (variable); ...", "unknown", "n/a", "not stated"): the row cannot be scored
// and is skipped with that reason, as validate-published does. Any other text in a number column
// ("128k", "fast") is an error of the table.
bool declared_unknown(const std::string& cell) {
  const std::string l = lower(cell);
  for (const char* w : {"unknown", "n/a", "not stated", "variable", "varies"}) {
    if (l.starts_with(w)) return true;
  }
  return has(l, "(variable)");
}

struct Cells {
  const CsvRow& row;
  const std::map<std::string, std::size_t>& col;
  const std::string& file;
  std::string row_id;
  Diagnostics& diags;
  std::vector<std::string> unknown = {};  // skip reasons: columns the source gives no figure for

  std::string text(const char* name) const { return trim(row.cells[col.at(name)]); }
  // The cell says its figure is not known: a reason to skip the row, not an error.
  bool not_known(const char* name) {
    const std::string t = text(name);
    if (!declared_unknown(t)) return false;
    if (std::string_view(name) == "tp" || std::string_view(name) == "pp") return true;  // derived below where it can be
    unknown.push_back(std::string("column ") + name + " gives no single figure ('" + t + "')");
    return true;
  }
  void bad(const char* name, const std::string& expected) const {
    diags.push_back({Diagnostic::Severity::error, file + ":" + std::to_string(row.line),
                     "row " + row_id + ", column " + name + ": expected " + expected + "; got '" + text(name) + "'"});
  }
  // Empty: not given. Anything else must be a positive whole number.
  std::optional<long long> whole(const char* name, long long most = 1LL << 40, std::string_view why = {}) {
    const std::string t = text(name);
    if (t.empty() || not_known(name)) return std::nullopt;
    const auto v = positive_whole(t, most);
    if (!v) {
      bad(name, why.empty() ? std::string("a positive whole number")
                            : "a positive whole number up to " + std::to_string(most) + " (" + std::string(why) + ")");
    }
    return v;
  }
  std::optional<double> number(const char* name) {
    const std::string t = text(name);
    if (t.empty() || not_known(name)) return std::nullopt;
    const auto v = positive_number(t, 1e15);
    if (!v) bad(name, "a positive number");
    return v;
  }
};

}  // namespace

Result<std::vector<ServingRun>> inference_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                               const std::string& file) {
  auto columns = table_columns(rows, kColumns, file);
  if (!columns) return std::unexpected(std::move(columns.error()));
  const std::map<std::string, std::size_t>& col = *columns;
  Diagnostics diags;
  std::vector<ServingRun> runs;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const CsvRow& row = rows[i];
    Cells c{row, col, file, trim(row.cells[col.at("row_id")]), diags};
    ServingRun run;
    run.row_id = c.row_id;
    run.source_group = c.text("source_group");
    run.model_name = c.text("model");
    run.gpu_model = c.text("gpu");
    run.weight_text = c.text("weight_precision");
    std::vector<std::string> bad;
    auto assume = [&](std::string a) { run.assumptions.push_back(std::move(a)); };

    // Numbers first: a cell that is not one is an error of the table, not a reason to skip,
    // unless it says the figure is not known (declared_unknown).
    const auto gpus = c.whole("num_gpus", 1 << 20);
    const auto tp = c.whole("tp", 1 << 20);
    const auto pp = c.whole("pp", 1 << 20);
    const auto in = c.whole("input_len");
    const auto out = c.whole("output_len");
    const auto requests = c.whole("num_requests", kMaxServingRequests, "the cap of serve's traffic.requests");
    const auto batch = c.whole("concurrency_or_batch", 1 << 30);
    std::optional<double> rate;
    bool rate_infinite = false;
    if (const std::string r = c.text("request_rate_qps"); lower(r) == "inf") {
      rate_infinite = true;
    } else {
      rate = c.number("request_rate_qps");
    }
    struct MetricColumn {
      const char* column;
      ServingMetricKind kind;  // in the column's unit, which is unit(kind)
    };
    constexpr MetricColumn kMetricColumns[] = {
        {"throughput_output_tok_s_total", ServingMetricKind::output_tokens_per_s},
        {"throughput_output_tok_s_per_gpu", ServingMetricKind::output_tokens_per_s_per_gpu},
        {"throughput_total_tok_s", ServingMetricKind::total_tokens_per_s},
        {"requests_per_s", ServingMetricKind::requests_per_s},
        {"ttft_ms_mean", ServingMetricKind::ttft_mean},
        {"tpot_or_itl_ms_mean", ServingMetricKind::itl_mean},
        {"e2e_latency_ms_mean", ServingMetricKind::e2e_mean},
        // A single request's prefill is its time to first token; its per-token decode its ITL.
        {"prefill_latency_ms", ServingMetricKind::ttft_mean},
        {"decode_latency_ms_per_token", ServingMetricKind::itl_mean},
    };
    // Columns the table derived from another (its verification / metric_definition says which):
    // compared once, as measured.
    const std::string how = c.text("verification") + " " + c.text("metric_definition");
    const bool per_gpu_derived = has(how, "per-gpu column derived") || has(how, "per-gpu derived");
    const bool total_derived = has(how, "total derived") || has(how, "total column derived");
    const bool e2e_derived = has(how, "e2e latency derived");
    for (const auto& m : kMetricColumns) {
      const auto v = c.number(m.column);
      if (!v) continue;
      const std::string name = m.column;
      if ((per_gpu_derived && name == "throughput_output_tok_s_per_gpu") ||
          (total_derived && name == "throughput_output_tok_s_total") || (e2e_derived && name == "e2e_latency_ms_mean")) {
        continue;
      }
      run.metrics.push_back({m.kind, *v, m.column});
    }
    if (run.metrics.empty()) bad.push_back("no measured figure");
    bad.insert(bad.begin(), c.unknown.begin(), c.unknown.end());

    run.num_gpus = static_cast<int>(gpus.value_or(0));
    run.input_len = in.value_or(0);
    run.output_len = out.value_or(0);
    run.num_requests = requests.value_or(0);
    if (!gpus) bad.push_back("num_gpus not given");
    if (!in || !out) bad.push_back("input_len and output_len are needed");

    // Model, GPU, engine.
    sim::ServeJob& job = run.job;
    const ModelName model = preset_for(run.model_name);
    const ModelEntry* preset = catalogs.find_model(model.preset);
    if (preset == nullptr) {
      bad.push_back("model '" + run.model_name + "' has no catalog preset");
    } else {
      job.model = preset->spec;
      if (!model.note.empty()) assume(model.note);
    }
    const GpuName gpu = gpu_for(run.gpu_model);
    const GpuEntry* gpu_entry = gpu.id != nullptr ? catalogs.find_gpu(gpu.id) : nullptr;
    if (gpu_entry == nullptr) {
      bad.push_back("GPU '" + run.gpu_model + "' is not in the catalog");
    } else {
      if (gpu.note != nullptr) assume(gpu.note);
      sim::Cluster& cl = run.cluster;
      cl.gpu = gpu_entry->spec;
      cl.gpus = std::max(1, run.num_gpus);
      // A node is an HGX/DGX board of 8, or the NVL72 rack's NVLink domain.
      cl.gpus_per_node = has(gpu.id, "nvl72") ? 72 : 8;
      cl.intra_node_bandwidth = cl.gpu.nvlink_bandwidth.base() > 0 ? cl.gpu.nvlink_bandwidth : cl.gpu.pcie_bandwidth;
      cl.inter_node_bandwidth = units::gbit_per_s(400.0);  // one node: never used
    }
    const std::string framework = c.text("framework"), version = c.text("framework_version");
    const EngineName engine = engine_for(framework, version);
    run.engine_id = engine.id;
    const EngineEntry* recipe = engine.id.empty() ? nullptr : catalogs.find_engine(engine.id);
    if (engine.id.empty()) {
      bad.push_back("framework '" + framework + "' has no engine recipe");
    } else if (recipe == nullptr) {
      bad.push_back("engine recipe '" + engine.id + "' is not in the catalog (data/engines.json)");
    } else {
      job.engine = recipe->spec;
      if (!engine.note.empty()) assume(engine.note);
    }

    // Formats.
    if (const auto w = weights_for(run.weight_text)) {
      job.weights = *w;
    } else {
      bad.push_back("weight precision '" + run.weight_text + "' is not a format capplan serves (bf16, fp16, fp8, int8, "
                    "int4, fp4)");
    }
    const std::string kv_text = c.text("kv_cache_precision");
    const std::string gpu_id = gpu.id != nullptr ? gpu.id : "";
    const bool blackwell = gpu_id.rfind("b", 0) == 0 || gpu_id.rfind("gb", 0) == 0;  // b200-hgx, gb200-nvl72, ...
    const bool per_model_kv = has(kv_text, "hopper: auto");  // "fp8 (... GPT-OSS/DeepSeek on Blackwell); Hopper: auto"
    const bool kv_fp8 = per_model_kv ? blackwell && (has(run.model_name, "gpt-oss") || has(run.model_name, "deepseek"))
                                     : has(kv_text, "fp8");
    if (kv_fp8) {
      job.kv = sim::Precision::fp8;
    } else if (has(kv_text, "fp16") && !has(kv_text, "bf16")) {
      job.kv = sim::Precision::fp16;
    } else if (has(kv_text, "bf16") && !per_model_kv) {
      job.kv = sim::Precision::bf16;
    } else {
      // "auto" / not stated: the model's own 16-bit dtype.
      job.kv = job.weights == sim::WeightFormat::fp16 ? sim::Precision::fp16 : sim::Precision::bf16;
      assume("KV cache '" + (kv_text.empty() ? std::string("not given") : kv_text) + "' taken as " +
             sim::to_string(job.kv) + " (the engine's 'auto': the model's 16-bit dtype)");
    }

    // The row's engine settings on its copy of the recipe.
    if (recipe != nullptr) {
      apply_settings(c.text("notes"), "notes", job.engine, run.assumptions);
      apply_settings(c.text("scenario"), "scenario", job.engine, run.assumptions);
      apply_settings(version, "framework_version", job.engine, run.assumptions);
      if (const char* q = qwen_setting(model.preset, c.text("notes"))) {
        apply_settings(q, "the Qwen2.5 speed benchmark's '" + c.text("notes") + "'", job.engine, run.assumptions);
        assume("max_model_len of that setting not modelled (it caps the context, which the row's lengths fit)");
      }
    }

    // Layout. Attention data parallelism (TensorRT-LLM's enable_attention_dp, "DEPn": every rank
    // runs its own batch through attention, experts split over the ranks) is not capplan's
    // replica, whose attention is tensor-parallel over all its GPUs with one batch.
    const std::string note = c.text("parallel_note");
    const bool attention_dp = has(note, "attention_dp") || has(note, "attention-dp") || dep_layout(note);
    if (attention_dp && gpus.value_or(1) > 1) {
      bad.push_back("attention data parallelism (enable_attention_dp / DEP) over several GPUs is not modelled: a "
                    "capplan replica runs tensor-parallel attention with one batch");
    } else if (attention_dp) {
      assume("enable_attention_dp on one GPU: nothing to split");
    }
    job.tp = static_cast<int>(tp.value_or(0));
    job.pp = static_cast<int>(pp.value_or(0));
    if (!attention_dp || gpus.value_or(1) == 1) {
      if (!tp && gpus == 1) job.tp = 1;
      if (!pp && job.tp > 0 && gpus && job.tp == *gpus) {
        job.pp = 1;
        assume("pp not given: 1 (tp = num_gpus)");
      }
      if (job.tp < 1) bad.push_back("tp not given" + (c.text("tp").empty() ? std::string() : " ('" + c.text("tp") + "')"));
      if (job.pp < 1) bad.push_back("pp not given" + (c.text("pp").empty() ? std::string() : " ('" + c.text("pp") + "')"));
      if (job.tp >= 1 && job.pp >= 1 && gpus && job.tp * job.pp != *gpus) {
        bad.push_back("tp x pp (" + std::to_string(job.tp * job.pp) + ") differs from num_gpus (" +
                      std::to_string(*gpus) + ")");
      }
    }
    job.ep = 1;
    if (preset != nullptr && preset->spec.is_moe() && job.tp > 1) {
      assume("experts split over the " + std::to_string(job.tp) + " TP ranks (ep 1: no expert parallelism given)");
    }

    // Traffic: lengths as the row gives them (one length each, so fixed; the benchmarks' synthetic
    // requests are uniform); all at once (offline), one request at a time (batch 1), or a
    // Poisson arrival rate.
    sim::Traffic& t = job.traffic;
    t.input = {static_cast<double>(run.input_len), 0};
    t.output = {static_cast<double>(run.output_len), 0};
    const std::string scenario = lower(c.text("scenario"));
    const std::string notes = lower(c.text("notes"));
    const bool uniform = has(notes, "uniform") || has(notes, "stdev 0") || has(notes, "fixed");
    if (batch == 1 || has(scenario, "single request")) {
      // Every request the same: a few in turn give the single request's latency exactly.
      t.arrival = sim::Arrival::closed_loop;
      t.concurrency = 1;
      t.requests = 3;
    } else if (has(scenario, "online") && (rate || rate_infinite)) {
      if (rate_infinite) {
        t.arrival = sim::Arrival::offline;  // "QPS=INF means all at once"
      } else {
        t.arrival = sim::Arrival::poisson;
        t.rate = *rate;
        assume("arrivals Poisson at " + format::in_sentence(*rate, 2) + " requests/s (the process is not stated)");
      }
      t.requests = requests.value_or(0);
      if (!requests) assume("num_requests not given: capplan's default count");
      if (!uniform) assume("request lengths taken as fixed (one length each)");
    } else if (has(scenario, "offline")) {
      t.arrival = sim::Arrival::offline;
      // Every request the row ran is simulated (num_requests is capped like serve's requests).
      if (requests) {
        t.requests = *requests;
      } else {
        assume("num_requests not given: capplan's default count (at least 1,000, 4x the batch that fits)");
      }
      if (!uniform) assume("request lengths taken as fixed (one length each)");
    } else {
      bad.push_back("scenario '" + c.text("scenario") + "' is not offline, batch 1 or an online rate");
    }

    if (has(c.text("verification"), "unverified") || has(c.text("verification"), "user-reported")) {
      assume("the row's own verification: " + c.text("verification"));
    }
    if (bad.empty() && preset != nullptr && gpu_entry != nullptr && recipe != nullptr) {
      if (const auto problem = sim::check_serve_job(job, run.cluster)) {
        std::string why = render(*problem);
        if (problem->code == sim::FindingCode::serve_prompt_exceeds_batch ||
            problem->code == sim::FindingCode::serve_engine_limits) {
          why += " (engine recipe '" + run.engine_id + "'; the row states no max_num_tokens)";
        }
        bad.push_back(std::move(why));
      }
    }
    run.usable = bad.empty();
    for (const auto& b : bad) run.skip_reason += (run.skip_reason.empty() ? "" : "; ") + b;
    runs.push_back(std::move(run));
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return runs;
}

}  // namespace capplan::data::detail
