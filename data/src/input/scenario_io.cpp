// SPDX-License-Identifier: Apache-2.0
// Scenario files (CONTRACT.md) -> sim::Scenario, with every problem named by its JSON pointer.
// Layout divisibility (heads % tp, ...) is sim::check_layout's job; here: keys, types, ranges,
// catalog ids, and the GPU-count identity tp*pp*dp*cp == GPUs with ep inside tp*dp*cp (Megatron-Core;
// see check_gpu_count for CONTRACT.md's tp*pp*dp*cp*ep spelling).
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/serve_io.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "capplan/sim/global_batch.hpp"
#include "capplan/data/currency.hpp"
#include "capplan/data/tco_io.hpp"
#include "catalog/hybrid_model.hpp"
#include "reading/json_reader.hpp"
#include "catalog/topology_io.hpp"

namespace capplan::data {

namespace {

using detail::child;
using detail::describe;
using detail::fmt;
using detail::json;
using detail::Reader;

// Absurd-size limits: far beyond any real run, low enough that products stay exact in doubles.
constexpr double kMaxTokens = 1e16;
constexpr double kMaxBatchTokens = 1e12;
constexpr double kMaxBatchSequences = 1e9;
constexpr double kMaxGpus = 1e6;
constexpr double kMaxNodes = 1e5;
constexpr double kMaxGpusPerNode = 1024;
constexpr double kMaxLinkGbps = 1e6;
constexpr double kMinLinkGbps = 1e-3;  // 1 Mbit/s: a slower link is no GPU interconnect (issue 18 point 3)
constexpr double kMaxUsdPerGpuHour = 1e5;
constexpr double kMaxParallel = 1e6;

// DGX H100 reference design: one 400 Gbit/s NDR NIC per GPU (8 per node).
constexpr double kDefaultInterNodeGbpsPerGpu = 400.0;

struct ModelDim {
  const char* key;
  int sim::ModelSpec::*member;
  double max;
  const char* help;
};
constexpr ModelDim kModelDims[] = {
    {"layers", &sim::ModelSpec::layers, 1e4, "transformer layers"},
    {"hidden", &sim::ModelSpec::hidden, 1e6, "hidden size"},
    {"heads", &sim::ModelSpec::heads, 1e5, "attention heads"},
    {"kv_heads", &sim::ModelSpec::kv_heads, 1e5, "key/value heads; default = heads"},
    {"ffn_hidden", &sim::ModelSpec::ffn_hidden, 1e7, "FFN inner size"},
    {"vocab", &sim::ModelSpec::vocab, 1e8, "vocabulary size"},
    {"seq_len", &sim::ModelSpec::seq_len, 1e8, "sequence length"},
    {"head_dim", &sim::ModelSpec::attention_head_dim, 1e5, "per-head dimension when not hidden/heads (optional)"},
};

struct ModelFlag {
  const char* key;
  bool sim::ModelSpec::*member;
  const char* help;
};
constexpr ModelFlag kModelFlags[] = {
    {"gated_ffn", &sim::ModelSpec::gated_ffn, "SwiGLU-style gated FFN (default false)"},
    {"tied_embeddings", &sim::ModelSpec::tied_embeddings, "output layer shares the embedding (default false)"},
    {"dropout", &sim::ModelSpec::dropout, "dropout masks kept for backward (default false)"},
    {"flash_attention", &sim::ModelSpec::flash_attention, "fused attention (default true)"},
    {"rmsnorm", &sim::ModelSpec::rmsnorm, "RMSNorm instead of LayerNorm (default false)"},
    {"rope", &sim::ModelSpec::rope, "rotary position embedding (default false)"},
};

// MoE keys of a scenario's model (CONTRACT.md). `required` ones are needed unless the preset is
// an MoE model (then the object is merged over the preset's).
struct MoeInt {
  const char* key;
  int sim::MoeSpec::*member;
  double lo;
  double hi;
  bool required;
  const char* help;
};
constexpr MoeInt kMoeInts[] = {
    {"experts", &sim::MoeSpec::experts, 1, 1e5, true, "routed experts per MoE layer"},
    {"top_k", &sim::MoeSpec::top_k, 1, 1e5, true, "routed experts each token uses"},
    {"expert_ffn_hidden", &sim::MoeSpec::expert_ffn_hidden, 1, 1e7, true, "inner size of one expert"},
    {"shared_experts", &sim::MoeSpec::shared_experts, 0, 1e5, false, "always-active experts (default 0)"},
    {"dense_layers", &sim::MoeSpec::dense_layers, 0, 1e4, false, "leading dense layers (default 0)"},
    {"every_n_layers", &sim::MoeSpec::every_n_layers, 1, 1e4, false, "every n-th layer is MoE (default 1)"},
    {"max_nodes_per_token", &sim::MoeSpec::max_nodes_per_token, 0, 1e5, false,
     "node-limited routing: nodes a token's experts may span (default 0 = unlimited)"},
};
// Busiest expert rank / mean: beyond 10 the layout, not the router, is the problem.
constexpr double kMaxCapacityFactor = 10.0;

struct MlaInt {
  const char* key;
  int sim::MlaSpec::*member;
  double lo;
  const char* help;
};
constexpr MlaInt kMlaInts[] = {
    {"q_lora_rank", &sim::MlaSpec::q_lora_rank, 0, "query latent rank; 0 = queries projected directly"},
    {"kv_lora_rank", &sim::MlaSpec::kv_lora_rank, 1, "key/value latent rank"},
    {"qk_nope_head_dim", &sim::MlaSpec::qk_nope_head_dim, 1, "per-head query/key dimension without RoPE"},
    {"qk_rope_head_dim", &sim::MlaSpec::qk_rope_head_dim, 1, "per-head decoupled RoPE dimension"},
    {"v_head_dim", &sim::MlaSpec::v_head_dim, 1, "per-head value dimension"},
};

constexpr const char* kAttentionKinds[] = {"mha", "gqa", "mqa", "mla", "sliding_window"};

struct StrategyInt {
  const char* key;
  std::optional<int> sim::StrategyRequest::*member;
  double lo;
  double hi;
};
constexpr StrategyInt kStrategyInts[] = {
    {"tp", &sim::StrategyRequest::tp, 1, kMaxParallel},
    {"pp", &sim::StrategyRequest::pp, 1, kMaxParallel},
    {"dp", &sim::StrategyRequest::dp, 1, kMaxParallel},
    {"cp", &sim::StrategyRequest::cp, 1, kMaxParallel},
    {"ep", &sim::StrategyRequest::ep, 1, kMaxParallel},
    {"etp", &sim::StrategyRequest::etp, 1, kMaxParallel},
    {"micro_batch", &sim::StrategyRequest::micro_batch, 1, kMaxBatchSequences},
    {"virtual_stages", &sim::StrategyRequest::virtual_stages, 1, 1e4},
    {"zero", &sim::StrategyRequest::zero, 0, 3},
    {"first_stage_layers", &sim::StrategyRequest::first_stage_layers, 1, 1e6},
    {"last_stage_layers", &sim::StrategyRequest::last_stage_layers, 1, 1e6},
};


constexpr sim::Precision kPrecisions[] = {sim::Precision::bf16, sim::Precision::fp16, sim::Precision::fp8,
                                          sim::Precision::tf32, sim::Precision::fp32};

std::vector<std::string> precision_names() {
  std::vector<std::string> names;
  for (auto p : kPrecisions) names.emplace_back(sim::to_string(p));
  return names;
}

const json* find(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

bool is_auto(const json& v) { return v.is_string() && v.get<std::string>() == "auto"; }

// --- goodput sections (sim/goodput.hpp): one field table per record --------------------------

double num_of(const json& v) { return v.get<double>(); }

constexpr detail::Field<sim::ReliabilitySpec> kReliabilityFields[] = {
    {"failure_rate_per_gpu_hour", detail::Kind::number, detail::Need::optional, false, {0, 1, false},
     "job interruptions per GPU-hour (default 466/(16384*54*24), Llama 3 405B)",
     [](sim::ReliabilitySpec& r, const json& v, Reader&, const std::string&) {
       r.interruptions_per_gpu_hour = num_of(v);
       r.rate_source = "scenario";
     }},
    {"restart_s", detail::Kind::number, detail::Need::optional, false, {0, 1e7, false},
     "seconds to relaunch and re-initialise before loading the checkpoint (default 600, an assumption)",
     [](sim::ReliabilitySpec& r, const json& v, Reader&, const std::string&) {
       r.restart_overhead = units::seconds(num_of(v));
       r.restart_overhead_given = true;
     }},
    {"node_replacement_s", detail::Kind::number, detail::Need::optional, true, {0, 1e7, false},
     "seconds to get a replacement node when no hot spare is ready (default 0: unknown)",
     [](sim::ReliabilitySpec& r, const json& v, Reader&, const std::string&) {
       r.node_replacement = units::seconds(num_of(v));
     }},
    {"hot_spares", detail::Kind::integer, detail::Need::optional, false, {0, 1e5, false},
     "spare nodes kept ready (paid for the whole run)",
     [](sim::ReliabilitySpec& r, const json& v, Reader&, const std::string&) {
       r.hot_spare_nodes = static_cast<int>(num_of(v));
     }},
    {"checkpoint_interval_s", detail::Kind::number, detail::Need::optional, true, {0, 1e9, true},
     "compute seconds between checkpoints (default: the Daly optimum, at least min_checkpoint_interval_s)",
     [](sim::ReliabilitySpec& r, const json& v, Reader&, const std::string&) {
       r.checkpoint_interval = units::seconds(num_of(v));
     }},
    {"min_checkpoint_interval_s", detail::Kind::number, detail::Need::optional, false, {0, 1e9, false},
     "shortest interval the Daly optimum may give, compute seconds (default 900: 15 min; 0 = none)",
     [](sim::ReliabilitySpec& r, const json& v, Reader&, const std::string&) {
       r.min_checkpoint_interval = units::seconds(num_of(v));
     }},
    {"checkpoint", detail::Kind::string, detail::Need::optional, false, {}, "sync or async",
     [](sim::ReliabilitySpec& r, const json& v, Reader& rd, const std::string& p) {
       if (auto m = rd.one_of(v, p, sim::checkpoint_mode_from_string, {"sync", "async"}, "checkpoint mode")) {
         r.checkpoint_mode = *m;
       }
     }},
    {"checkpoints_kept", detail::Kind::integer, detail::Need::optional, false, {1, 1e4, false},
     "checkpoints retained on storage (default 2)",
     [](sim::ReliabilitySpec& r, const json& v, Reader&, const std::string&) {
       r.checkpoints_kept = static_cast<int>(num_of(v));
     }},
};

struct StorageDraft {
  std::optional<std::string> tier, upload_tier;
  std::optional<double> capacity_tib, write, read, write_node, read_node, usd_per_gb_month;
  std::optional<bool> local;
};
#define CAPPLAN_BW_FIELD(key, member, help)                                                             \
  {key, detail::Kind::number, detail::Need::optional, false, {0, 1e5, true}, help,                      \
   detail::store<&StorageDraft::member>}
constexpr detail::Field<StorageDraft> kStorageFields[] = {
    {"tier", detail::Kind::string, detail::Need::optional, false, {}, "storage tier id (capplan catalog storage)",
     detail::store<&StorageDraft::tier>},
    {"capacity_tib", detail::Kind::number, detail::Need::optional, false, {0, 1e6, true},
     "provisioned capacity, TiB (tiers whose throughput scales with capacity)",
     detail::store<&StorageDraft::capacity_tib>},
    CAPPLAN_BW_FIELD("write_gb_per_s", write, "aggregate write bandwidth, GB/s"),
    CAPPLAN_BW_FIELD("read_gb_per_s", read, "aggregate read bandwidth, GB/s"),
    CAPPLAN_BW_FIELD("write_gb_per_s_per_node", write_node, "write bandwidth of one node, GB/s"),
    CAPPLAN_BW_FIELD("read_gb_per_s_per_node", read_node, "read bandwidth of one node, GB/s"),
    {"local", detail::Kind::boolean, detail::Need::optional, false, {}, "node-local storage (NVMe)",
     detail::store<&StorageDraft::local>},
    {"upload_tier", detail::Kind::string, detail::Need::optional, false, {},
     "tier a node-local checkpoint is uploaded to (asynchronously)",
     detail::store<&StorageDraft::upload_tier>},
    {"usd_per_gb_month", detail::Kind::number, detail::Need::optional, false, {0, 1e3, false},
     "storage price per decimal GB-month, USD",
     detail::store<&StorageDraft::usd_per_gb_month>},
};
#undef CAPPLAN_BW_FIELD

constexpr detail::Field<sim::DataLoadingSpec> kDataFields[] = {
    {"bytes_per_token", detail::Kind::number, detail::Need::optional, false, {0, 1e6, true},
     "bytes read per training token (default 2 or 4: Megatron's pre-tokenised uint16/int32)",
     detail::store<&sim::DataLoadingSpec::bytes_per_token>},
    {"preprocessing_tokens_per_s_per_node", detail::Kind::number, detail::Need::optional, true, {0, 1e12, true},
     "tokens one node's CPUs can load and preprocess per second",
     detail::store<&sim::DataLoadingSpec::cpu_tokens_per_s_per_node>},
    {"dataset_bytes", detail::Kind::number, detail::Need::optional, true, {0, 1e18, true},
     "stored dataset size in bytes (default tokens x bytes_per_token)",
     detail::store<&sim::DataLoadingSpec::dataset_bytes>},
};

constexpr detail::Field<sim::SpotTerms> kSpotFields[] = {
    {"usd_per_gpu_hour", detail::Kind::number, detail::Need::optional, true, {0, kMaxUsdPerGpuHour, false},
     "spot price per GPU-hour, USD",
     detail::store<&sim::SpotTerms::usd_per_gpu_hour>},
    {"preemptions_per_node_hour", detail::Kind::number, detail::Need::optional, true, {0, 1, false},
     "probability that a node is preempted in an hour (0..1)",
     detail::store<&sim::SpotTerms::preemptions_per_node_hour>},
};

constexpr detail::Field<sim::ReservedTerms> kReservedFields[] = {
    {"usd_per_gpu_hour", detail::Kind::number, detail::Need::optional, true, {0, kMaxUsdPerGpuHour, false},
     "committed price per GPU-hour, USD",
     detail::store<&sim::ReservedTerms::usd_per_gpu_hour>},
    {"term_months", detail::Kind::number, detail::Need::optional, true, {0, 240, true},
     "commitment term, months (paid whether used or not)",
     [](sim::ReservedTerms& t, const json& v, Reader&, const std::string&) {
       t.term_hours = num_of(v) * 8760.0 / 12.0;
     }},
    {"idle_usd_per_gpu_hour", detail::Kind::number, detail::Need::optional, true, {0, kMaxUsdPerGpuHour, false},
     "rate for committed but unused GPU-hours, where billed differently (default: the reserved rate)",
     detail::store<&sim::ReservedTerms::idle_usd_per_gpu_hour>},
    {"committed_gpus", detail::Kind::integer, detail::Need::optional, true, {1, kMaxGpus, false},
     "GPUs committed (default: the cluster's GPUs and hot spares)",
     [](sim::ReservedTerms& t, const json& v, Reader&, const std::string&) {
       t.committed_gpus = static_cast<int>(num_of(v));
     }},
    {"utilisation", detail::Kind::number, detail::Need::optional, false, {0, 1, true},
     "share of the committed capacity's term doing useful work; a run pays its share (default 1)",
     detail::store<&sim::ReservedTerms::utilisation>},
};

constexpr detail::Field<sim::OnPremTerms> kOnPremFields[] = {
    {"usd_per_node", detail::Kind::number, detail::Need::optional, true, {0, 1e9, true},
     "purchase price of one node, USD",
     detail::store<&sim::OnPremTerms::usd_per_node>},
    {"amortisation_years", detail::Kind::number, detail::Need::optional, true, {0, 50, true},
     "years over which the purchase is written off",
     detail::store<&sim::OnPremTerms::amortisation_years>},
    {"node_power_w", detail::Kind::number, detail::Need::optional, true, {0, 1e6, true},
     "power of one node under load, W (default: the catalog's system power, else GPU TDP x GPUs per node)",
     detail::store<&sim::OnPremTerms::node_power_w>},
    {"pue", detail::Kind::number, detail::Need::optional, false, {1, 5, false},
     "power usage effectiveness (default 1.58, Uptime Institute 2023 average)",
     detail::store<&sim::OnPremTerms::pue>},
    {"usd_per_kwh", detail::Kind::number, detail::Need::optional, true, {0, 100, false},
     "electricity price, USD per kWh",
     detail::store<&sim::OnPremTerms::usd_per_kwh>},
    {"ops_usd_per_year", detail::Kind::number, detail::Need::optional, true, {0, 1e12, false},
     "operations staff and support for the cluster, USD per year",
     detail::store<&sim::OnPremTerms::ops_usd_per_year>},
    {"utilisation", detail::Kind::number, detail::Need::optional, false, {0, 1, true},
     "share of the owned cluster's time doing useful work (default 1)",
     detail::store<&sim::OnPremTerms::utilisation>},
};

class ScenarioParser {
 public:
  ScenarioParser(const Catalogs& catalogs, std::string_view where)
      : where_(where), r_(std::string(where), diags_), cat_(catalogs) {}

  Result<ParsedScenario> run(const json& j) {
    if (!r_.object(j, "")) return std::unexpected(std::move(diags_));
    r_.unknown_keys(j, "", {"name", "description", "workload", "model", "training", "cluster", "strategy", "pricing",
                           "reliability", "storage", "data", "tco"});
    const json* workload = find(j, "workload");
    if (workload != nullptr) parse_workload(*workload);
    for (const char* key : {"name", "description"}) {
      if (const json* v = find(j, key)) r_.string(*v, child("", key));
    }
    const json* model = required(j, "model", "the model: a preset or explicit dimensions");
    // A serving scenario has no training section (its workload section says what is served).
    const json* training = serve_ ? find(j, "training")
                                  : required(j, "training", "tokens, global batch and precision");
    if (serve_ && training != nullptr) r_.error("/training", "not used by a serve workload (remove it)");
    const json* cluster = required(j, "cluster", "instance + nodes, or gpu + gpus");

    auto m = model ? parse_model(*model) : std::nullopt;
    auto t = training && !serve_ ? parse_training(*training, m) : std::nullopt;
    if (serve_) t = sim::TrainingJob{};
    if (t && workload != nullptr && out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
      parse_finetune(*workload, *t);
    }
    auto c = cluster ? parse_cluster(*cluster) : std::nullopt;
    if (c && t && !serve_) check_precision(*c, t->precision);
    if (c && t && !serve_ && t->precision == sim::Precision::fp8 && t->fp8_recipe == sim::Fp8Recipe::mxfp8) {
      // MXFP8's block-scaled GEMMs run on Blackwell's tensor cores only (Transformer Engine
      // MXFP8BlockScaling needs compute capability 10.0 or newer).
      if (c->gpu.tensor_cores != sim::TensorCoreGeneration::blackwell) {
        const GpuEntry* g = cat_.find_gpu(c->gpu.id);
        const std::string arch = g != nullptr ? g->arch : std::string();
        r_.error("/training/fp8_recipe", "MXFP8 needs Blackwell tensor cores; GPU '" + c->gpu.id + "' is " +
                                             (arch.empty() ? std::string("of unknown architecture") : arch) +
                                             "; got \"mxfp8\"");
      }
    }
    if (c && m && m->is_moe() && m->moe.dispatcher == sim::MoeDispatcher::deepep &&
        !(c->gpu.nvlink_bandwidth.base() > 0)) {
      // DeepEP's and HybridEP's intranode kernels move tokens over NVLink (loads and stores to
      // the peers' buffers, or TMA); a node joined by PCIe only cannot run them.
      r_.error("/model/moe/dispatcher", "deepep needs NVLink between the GPUs of a node; GPU '" + c->gpu.id +
                                            "' has none; got \"deepep\"");
    }
    if (m && recipe_ && model->is_object()) {
      // Attention kernel and dropout: the framework's default unless the model says.
      if (recipe_->flash_attention && !find(*model, "flash_attention")) m->flash_attention = *recipe_->flash_attention;
      if (recipe_->dropout && !find(*model, "dropout")) m->dropout = *recipe_->dropout;
    }
    if (const json* pricing = find(j, "pricing")) {
      parse_pricing(*pricing, c);
    } else if (c) {
      catalog_price(*c);
    }
    if (const json* v = find(j, "reliability")) {
      detail::read_fields<sim::ReliabilitySpec>(*v, "/reliability", kReliabilityFields, out_.scenario.reliability, r_);
    }
    if (const json* v = find(j, "storage")) {
      parse_storage(*v);
    } else {
      default_storage();
    }
    if (const json* v = find(j, "data")) {
      detail::read_fields<sim::DataLoadingSpec>(*v, "/data", kDataFields, out_.scenario.data, r_);
    }
    if (const json* v = find(j, "tco")) check_tco_section(*v, where_, diags_);  // used by capplan tco
    if (c) on_prem_power(*c);
    sim::StrategyRequest s;
    if (const json* strategy = find(j, "strategy"); strategy != nullptr && serve_) {
      r_.error("/strategy", "not used by a serve workload (workload.tp, pp and ep give the replica's layout)");
    } else if (strategy != nullptr) {
      s = parse_strategy(*strategy, c, m);
    } else {
      out_.strategy_all_auto = true;  // no strategy given: search for the best, like "auto"
      if (recipe_) apply_recipe(json::object(), s, m);  // within the recipe's defaults, as for absent keys
    }
    // The ZeRO stage of the recipe's full-parameter fine-tuning script, unless the strategy gives
    // one or asks for a search ("auto").
    const json* given = find(j, "strategy");
    if (recipe_ && recipe_->zero_full_finetune && (given == nullptr || find(*given, "zero") == nullptr) && t &&
        t->finetune.method == sim::TuneMethod::full && out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
      s.zero = recipe_->zero_full_finetune;
    }
    if (has_errors(diags_) || !m || !t || !c) return std::unexpected(std::move(diags_));
    out_.scenario.model = std::move(*m);
    out_.scenario.training = *t;
    out_.scenario.cluster = std::move(*c);
    out_.scenario.strategy = s;
    if (serve_) return std::move(out_);  // the serve section is read by data::serve_request
    // Fine-tuning: the dataset against the model's sequence length (padding needs the
    // micro-batch: the strategy's, or 1 when the search picks it; sim/scenario.hpp).
    sim::resolve_workload(out_.scenario, s.micro_batch.value_or(1));
    // A batch asked in tokens: the sequences this cluster and strategy can use (sim/global_batch.hpp;
    // the estimate carries the finding that says which).
    sim::resolve_global_batch(out_.scenario);
    const sim::TrainingJob& job = out_.scenario.training;
    if (job.global_batch * static_cast<double>(out_.scenario.model.seq_len) > job.tokens) {
      warn(out_.scenario.workload.kind == sim::WorkloadKind::finetune ? "/workload/dataset/tokens" : "/training/tokens", "fewer tokens (" + fmt(job.tokens) + ") than one global batch (" +
                                   fmt(job.global_batch * static_cast<double>(out_.scenario.model.seq_len)) +
                                   "): less than one step");
    }
    return std::move(out_);
  }

 private:
  const json* required(const json& obj, const char* key, const char* help) {
    const json* v = find(obj, key);
    if (v == nullptr) r_.error(child("", key), std::string("required (") + help + ") is missing");
    return v;
  }
  void warn(const std::string& pointer, const std::string& message) {
    out_.warnings.push_back(r_.where(pointer) + ": " + message);
  }

  // A count of tokens given as a number or as a string with an SI suffix ("2T") or a binary one
  // ("4Mi" = 2^22).
  std::optional<double> si_number(const json& v, const std::string& p, double max) {
    std::optional<double> x;
    if (v.is_number()) {
      x = v.get<double>();
    } else if (v.is_string()) {
      x = parse_count(v.get<std::string>());
    }
    if (!x) {
      r_.error(p, "expected a number or a string with an SI suffix such as \"2T\" (k, M, G/B, T, P) or a binary "
                  "one such as \"4Mi\" (Ki, Mi, Gi, Ti, Pi: powers of 1024); got " +
                      describe(v));
      return std::nullopt;
    }
    if (!std::isfinite(*x)) {
      r_.error(p, "must be a finite number; got " + describe(v));
      return std::nullopt;
    }
    if (!(*x > 0)) {
      r_.error(p, "must be > 0; got " + describe(v));
      return std::nullopt;
    }
    if (*x < 1) {  // counts of tokens: 5e-324 passed "> 0" and gave a null time to train (issue 18)
      r_.error(p, "must be at least 1 (a number of tokens); got " + describe(v));
      return std::nullopt;
    }
    if (*x > max) {
      r_.error(p, "must be at most " + fmt(max) + "; got " + describe(v));
      return std::nullopt;
    }
    return x;
  }

  // --- workload ---------------------------------------------------------------------------
  // workload: { kind, ... } (CONTRACT.md). pretrain is the default; finetune adds the method,
  // adapters and dataset (parse_finetune, once the training section's recipe is known); serving is
  // named but not available in this version.
  void parse_workload(const json& w) {
    if (!w.is_object()) {
      r_.error("/workload", std::string("expected an object such as {\"kind\": \"pretrain\"}; got ") + w.type_name());
      return;
    }
    const json* kind = find(w, "kind");
    std::string k = "pretrain";
    if (kind != nullptr) {
      if (!kind->is_string()) {
        r_.error("/workload/kind", std::string("expected a string (pretrain, finetune or serve); got ") + kind->type_name());
        return;
      }
      k = kind->get<std::string>();
    }
    if (auto parsed = sim::workload_kind_from_string(k)) {
      out_.scenario.workload.kind = *parsed;
    } else {
      r_.error("/workload/kind", "unknown workload kind '" + k + "' (known: pretrain, finetune, serve)");
    }
    serve_ = out_.scenario.workload.kind == sim::WorkloadKind::serve;
    if (serve_) {
      check_serve_section(w, where_, diags_);  // its fields: data/serve_io.hpp
      return;
    }
    if (out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
      r_.unknown_keys(w, "/workload", {"kind", "method", "lora", "base_weights", "double_quant", "freeze", "dataset"});
    } else {
      r_.unknown_keys(w, "/workload", {"kind"});
    }
  }

  // workload (finetune): method, lora {rank, targets, alpha, dropout, train_embeddings},
  // base_weights, double_quant, freeze {embeddings, layers}, dataset {tokens, epochs,
  // mean_sample_tokens, p95_sample_tokens, packing, pad_to, document_mask}. The recipe gives the
  // LoRA rank, targets and document masking the scenario leaves out.
  void parse_finetune(const json& w, sim::TrainingJob& t) {
    const std::string p = "/workload";
    sim::FinetuneSpec f;
    if (const json* v = required_in(w, p, "method", "full, lora or qlora")) {
      if (auto s = r_.string(*v, child(p, "method"))) {
        if (auto mth = sim::tune_method_from_string(*s)) {
          f.method = *mth;
        } else {
          r_.error(child(p, "method"), "unknown method '" + *s + "' (" + suggest(*s, {"full", "lora", "qlora"}) + ")");
        }
      }
    }
    if (recipe_ && recipe_->lora_rank) f.lora_rank = *recipe_->lora_rank;
    if (recipe_ && recipe_->lora_targets) f.lora_targets = *recipe_->lora_targets;
    if (const json* lora = find(w, "lora")) {
      const std::string lp = child(p, "lora");
      if (!f.adapters()) r_.error(lp, "LoRA settings need method lora or qlora (method is " + std::string(sim::to_string(f.method)) + ")");
      if (r_.object(*lora, lp)) {
        r_.unknown_keys(*lora, lp, {"rank", "targets", "alpha", "dropout", "train_embeddings"});
        if (const json* v = find(*lora, "rank")) {
          if (auto x = r_.integer(*v, child(lp, "rank"), 1, 65536)) f.lora_rank = static_cast<int>(*x);
        }
        if (const json* v = find(*lora, "targets")) {
          if (auto bits = detail::lora_targets_from_json(*v, r_, child(lp, "targets"))) f.lora_targets = *bits;
        }
        // alpha scales the adapter's output and dropout masks its input: accepted, no cost of their own.
        if (const json* v = find(*lora, "alpha")) r_.number(*v, child(lp, "alpha"), 0.0, 1e6, false);
        if (const json* v = find(*lora, "dropout")) r_.number(*v, child(lp, "dropout"), 0.0, 1.0, false);
        if (const json* v = find(*lora, "train_embeddings")) {
          if (auto b = r_.boolean(*v, child(lp, "train_embeddings"))) f.train_embeddings = *b;
        }
      }
    }
    if (const json* v = find(w, "base_weights")) {
      if (auto s = r_.string(*v, child(p, "base_weights"))) {
        if (auto fmt_ = sim::base_format_from_string(*s)) {
          f.base_format = *fmt_;
          if (f.method != sim::TuneMethod::qlora && *fmt_ != sim::BaseFormat::same) {
            r_.error(child(p, "base_weights"), "a 4-bit base ('" + *s + "') is method qlora");
          } else if (f.method == sim::TuneMethod::qlora && *fmt_ == sim::BaseFormat::same) {
            r_.error(child(p, "base_weights"), "method qlora quantises the base: nf4 or int4, not 'same'");
          }
        } else {
          r_.error(child(p, "base_weights"), "unknown base format '" + *s + "' (" + suggest(*s, {"same", "nf4", "int4"}) + ")");
        }
      }
    }
    if (const json* v = find(w, "double_quant")) {
      if (auto b = r_.boolean(*v, child(p, "double_quant"))) f.double_quant = *b;
    }
    if (const json* fr = find(w, "freeze")) {
      const std::string fp = child(p, "freeze");
      if (f.adapters()) r_.error(fp, "freezing parts of the model is for method full (lora and qlora freeze the whole base)");
      if (r_.object(*fr, fp)) {
        r_.unknown_keys(*fr, fp, {"embeddings", "layers"});
        if (const json* v = find(*fr, "embeddings")) {
          if (auto b = r_.boolean(*v, child(fp, "embeddings"))) f.freeze_embeddings = *b;
        }
        if (const json* v = find(*fr, "layers")) {
          if (auto x = r_.integer(*v, child(fp, "layers"), 0, 1e6)) f.frozen_layers = static_cast<int>(*x);
        }
      }
    }
    sim::FinetuneData& d = out_.scenario.workload.dataset;
    if (recipe_ && recipe_->packed_document_mask) d.document_mask = *recipe_->packed_document_mask;
    if (const json* ds = required_in(w, p, "dataset", "the fine-tuning data: tokens, epochs, sample lengths, packing")) {
      const std::string dp = child(p, "dataset");
      if (r_.object(*ds, dp)) {
        r_.unknown_keys(*ds, dp, {"tokens", "epochs", "mean_sample_tokens", "p95_sample_tokens", "packing", "pad_to",
                                  "document_mask"});
        if (const json* v = required_in(*ds, dp, "tokens", "tokens of one epoch, e.g. \"2B\"")) {
          if (auto x = si_number(*v, child(dp, "tokens"), kMaxTokens)) d.tokens = *x;
        }
        if (const json* v = find(*ds, "epochs")) {
          if (auto x = r_.number(*v, child(dp, "epochs"), 0.0, 1e4, true)) d.epochs = *x;
        }
        for (auto [key, out] : {std::pair{"mean_sample_tokens", &d.mean_sample_tokens},
                                std::pair{"p95_sample_tokens", &d.p95_sample_tokens}}) {
          if (const json* v = find(*ds, key)) {
            if (auto x = r_.number(*v, child(dp, key), 1.0, 1e8, false)) *out = *x;
          }
        }
        if (const json* v = find(*ds, "packing")) {
          if (auto b = r_.boolean(*v, child(dp, "packing"))) d.packing = *b;
        }
        if (const json* v = find(*ds, "pad_to")) {
          if (auto s = r_.string(*v, child(dp, "pad_to"))) {
            if (*s == "longest" || *s == "max") {
              d.pad_to_max = *s == "max";
            } else {
              r_.error(child(dp, "pad_to"), "unknown padding '" + *s + "' (" + suggest(*s, {"longest", "max"}) + ")");
            }
          }
        }
        if (const json* v = find(*ds, "document_mask")) {
          if (auto b = r_.boolean(*v, child(dp, "document_mask"))) d.document_mask = *b;
        }
        if (d.p95_sample_tokens > 0 && d.mean_sample_tokens <= 0) {
          r_.error(child(dp, "mean_sample_tokens"), "required with p95_sample_tokens (the lengths' mean) is missing");
        } else if (d.p95_sample_tokens > 0 && d.p95_sample_tokens < d.mean_sample_tokens) {
          r_.error(child(dp, "p95_sample_tokens"), "must be at least mean_sample_tokens (" + fmt(d.mean_sample_tokens) +
                                                       "); got " + fmt(d.p95_sample_tokens));
        }
        if (!d.packing && d.mean_sample_tokens <= 0 && !d.pad_to_max) {
          r_.error(child(dp, "mean_sample_tokens"),
                   "required when packing is false (unpacked samples are padded to their micro-batch's longest; or "
                   "give pad_to \"max\") is missing");
        }
      }
    }
    t.finetune = f;
  }

  std::optional<sim::ModelSpec> parse_model(const json& j) {
    const std::string p = "/model";
    if (!r_.object(j, p)) return std::nullopt;
    const auto before = r_.count();
    std::vector<std::string> known{"preset", "name", "moe", "attention", "mla", "sliding_window",
                                   "sliding_window_every"};
    for (const auto& d : kModelDims) known.emplace_back(d.key);
    for (const auto& f : kModelFlags) known.emplace_back(f.key);
    known.emplace_back("layer_pattern");  // after "layers": a typo "layer" suggests "layers"
    known.emplace_back("mamba");
    r_.unknown_keys(j, p, known);

    sim::ModelSpec m;
    const ModelEntry* preset = nullptr;
    if (const json* v = find(j, "preset")) {
      if (auto id = r_.string(*v, child(p, "preset"))) {
        preset = cat_.find_model(*id);
        if (preset == nullptr) {
          std::vector<std::string> ids;
          for (const auto& e : cat_.models) ids.push_back(e.id);
          r_.error(child(p, "preset"), "unknown model preset '" + *id + "' (" + suggest(*id, ids) + ")");
        } else {
          m = preset->spec;
          out_.model_id = preset->id;
        }
      }
    }
    if (preset == nullptr) out_.model_id = "custom";
    const bool mha_preset = preset != nullptr && preset->spec.kv_heads == preset->spec.heads;

    for (const auto& d : kModelDims) {
      const json* v = find(j, d.key);
      if (v == nullptr) {
        // kv_heads defaults to heads; an all-MoE model needs no dense ffn_hidden (see parse_moe).
        const bool defaulted = std::string_view(d.key) == "kv_heads" || std::string_view(d.key) == "head_dim" ||
                               (std::string_view(d.key) == "ffn_hidden" && find(j, "moe") != nullptr);
        if (preset == nullptr && !defaulted && find(j, "preset") == nullptr) {
          r_.error(child(p, d.key), std::string("required (") + d.help + ") is missing; or give a preset");
        }
        continue;
      }
      if (auto x = r_.integer(*v, child(p, d.key), 1, d.max)) m.*d.member = static_cast<int>(*x);
    }
    if (find(j, "kv_heads") == nullptr && (preset == nullptr || mha_preset)) m.kv_heads = m.heads;
    for (const auto& f : kModelFlags) {
      if (const json* v = find(j, f.key)) {
        if (auto b = r_.boolean(*v, child(p, f.key))) m.*f.member = *b;
      }
    }
    if (const json* v = find(j, "name")) {
      if (auto s = r_.string(*v, child(p, "name"))) m.name = *s;
    } else if (preset == nullptr) {
      m.name = "custom";
    }

    if (const json* v = find(j, "moe")) {
      // With a preset (even an unknown one, already reported) ffn_hidden is never asked for.
      parse_moe(*v, preset, m, find(j, "ffn_hidden") != nullptr || find(j, "preset") != nullptr);
    }
    parse_attention(j, preset, m);
    detail::read_hybrid(j, p, m, r_);
    detail::check_hybrid(m, p, r_);

    if (m.hidden > 0 && m.heads > 0 && m.hidden % m.heads != 0) {
      r_.error(child(p, "heads"),
               "must divide hidden (" + std::to_string(m.hidden) + "); got " + std::to_string(m.heads));
    }
    if (m.heads > 0 && m.kv_heads > 0 && (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)) {
      r_.error(child(p, "kv_heads"), "must divide heads (" + std::to_string(m.heads) + "); got " +
                                         std::to_string(m.kv_heads));
    }
    if (r_.count() != before) return std::nullopt;
    return m;
  }

  // `moe`: merged over the preset's experts when the preset is an MoE model (so a scenario may
  // change only capacity_factor); otherwise experts, top_k and expert_ffn_hidden are required.
  void parse_moe(const json& j, const ModelEntry* preset, sim::ModelSpec& m, bool ffn_given) {
    const std::string p = "/model/moe";
    if (!r_.object(j, p)) return;
    std::vector<std::string> known;
    for (const auto& f : kMoeInts) known.emplace_back(f.key);
    known.emplace_back("capacity_factor");
    known.emplace_back("activation_clamp");
    known.emplace_back("expert_bias");
    known.emplace_back("pad_to_capacity");
    known.emplace_back("random_routing");
    known.emplace_back("dispatcher");
    r_.unknown_keys(j, p, known);
    const bool moe_preset = preset != nullptr && preset->spec.is_moe();
    sim::MoeSpec moe = moe_preset ? preset->spec.moe : sim::MoeSpec{};
    bool complete = true;
    for (const auto& f : kMoeInts) {
      const json* v = find(j, f.key);
      if (v == nullptr) {
        if (f.required && !moe_preset) {
          r_.error(child(p, f.key), std::string("required (") + f.help + ") is missing");
          complete = false;
        }
        continue;
      }
      if (auto x = r_.integer(*v, child(p, f.key), f.lo, f.hi)) {
        moe.*f.member = static_cast<int>(*x);
      } else {
        complete = false;
      }
    }
    if (const json* v = find(j, "capacity_factor")) {
      if (auto x = r_.number(*v, child(p, "capacity_factor"), 1.0, kMaxCapacityFactor, false)) {
        moe.capacity_factor = *x;
      } else {
        complete = false;
      }
    }
    if (const json* v = find(j, "activation_clamp")) {
      if (auto x = r_.number(*v, child(p, "activation_clamp"), 0.0, 1e6, false)) {
        moe.activation_clamp = *x;
      } else {
        complete = false;
      }
    }
    if (const json* v = find(j, "expert_bias")) {
      if (auto x = r_.boolean(*v, child(p, "expert_bias"))) {
        moe.expert_bias = *x;
      } else {
        complete = false;
      }
    }
    if (const json* v = find(j, "dispatcher")) {
      if (auto name = r_.string(*v, child(p, "dispatcher"))) {
        if (*name == "alltoall" || *name == "deepep") {
          moe.dispatcher = *name == "deepep" ? sim::MoeDispatcher::deepep : sim::MoeDispatcher::alltoall;
        } else {
          r_.error(child(p, "dispatcher"), "must be one of alltoall, deepep; got '" + *name + "'");
          complete = false;
        }
      } else {
        complete = false;
      }
    }
    for (const auto& [key, member] : {std::pair{"pad_to_capacity", &sim::MoeSpec::pad_to_capacity},
                                      std::pair{"random_routing", &sim::MoeSpec::random_routing}}) {
      if (const json* v = find(j, key)) {
        if (auto x = r_.boolean(*v, child(p, key))) {
          moe.*member = *x;
        } else {
          complete = false;
        }
      }
    }
    if (!complete) return;
    if (moe.top_k > moe.experts) {
      r_.error(child(p, "top_k"), "must be at most experts (" + std::to_string(moe.experts) + "); got " +
                                      std::to_string(moe.top_k));
    }
    if (m.layers > 0 && moe.dense_layers >= m.layers) {
      r_.error(child(p, "dense_layers"), "must be less than layers (" + std::to_string(m.layers) + "); got " +
                                             std::to_string(moe.dense_layers));
    }
    m.moe = moe;
    // Every layer MoE: the dense FFN size is never used; a custom model may leave it out.
    const bool all_moe = moe.dense_layers == 0 && moe.every_n_layers == 1;
    if (!ffn_given && preset == nullptr) {
      if (all_moe) {
        m.ffn_hidden = moe.expert_ffn_hidden;
      } else {
        r_.error("/model/ffn_hidden",
                 "required (FFN inner size of the dense layers: dense_layers or every_n_layers > 1) is missing");
      }
    }
  }

  // `attention` names the kind: "mha"/"gqa"/"mqa" (through kv_heads), "mla" (with an `mla`
  // object of latent dimensions) or "sliding_window" (with `sliding_window` tokens). Without it a
  // preset keeps its own attention and window. A named kind replaces the preset's: "gqa" without
  // `sliding_window` is full causal attention even when the preset had a window.
  void parse_attention(const json& j, const ModelEntry* preset, sim::ModelSpec& m) {
    const std::string p = "/model";
    const std::string ap = child(p, "attention");
    std::optional<std::string> kind;
    if (const json* v = find(j, "attention")) {
      if (auto a = r_.string(*v, ap)) {
        if (std::find(std::begin(kAttentionKinds), std::end(kAttentionKinds), *a) == std::end(kAttentionKinds)) {
          std::vector<std::string> names(std::begin(kAttentionKinds), std::end(kAttentionKinds));
          r_.error(ap, "unknown attention '" + *a + "' (" + suggest(*a, names) + ")");
          return;
        }
        kind = *a;
      } else {
        return;
      }
    }
    const bool mla_preset = preset != nullptr && preset->spec.attention == sim::Attention::mla;
    const bool mla = kind ? *kind == "mla" : mla_preset;
    const std::string heads = std::to_string(m.heads);
    const std::string kv = std::to_string(m.kv_heads);
    const bool kv_given = find(j, "kv_heads") != nullptr;

    // Multi-head latent attention.
    const json* mla_j = find(j, "mla");
    if (mla_j != nullptr && !mla) {
      r_.error(child(p, "mla"), "is only used with attention \"mla\"; got attention " +
                                    (kind ? "\"" + *kind + "\"" : std::string("not given")));
    }
    if (mla) {
      m.attention = sim::Attention::mla;
      sim::MlaSpec dims = mla_preset ? preset->spec.mla : sim::MlaSpec{};
      if (mla_j != nullptr) {
        const std::string mp = child(p, "mla");
        if (r_.object(*mla_j, mp)) {
          std::vector<std::string> known;
          for (const auto& f : kMlaInts) known.emplace_back(f.key);
          r_.unknown_keys(*mla_j, mp, known);
          for (const auto& f : kMlaInts) {
            const json* v = find(*mla_j, f.key);
            if (v == nullptr) {
              if (!mla_preset) r_.error(child(mp, f.key), std::string("required (") + f.help + ") is missing");
              continue;
            }
            if (auto x = r_.integer(*v, child(mp, f.key), f.lo, 1e6)) dims.*f.member = static_cast<int>(*x);
          }
        }
      } else if (!mla_preset) {
        r_.error(child(p, "mla"), "required with attention \"mla\" (q_lora_rank, kv_lora_rank, qk_nope_head_dim, "
                                  "qk_rope_head_dim, v_head_dim) is missing");
      }
      m.mla = dims;
      // MLA has no separate key/value heads: kv_heads is not used and is kept equal to heads.
      if (kv_given && m.kv_heads != m.heads) {
        warn(child(p, "kv_heads"), "not used with attention \"mla\" (keys and values come from the latent); "
                                   "kv_heads = heads = " + heads);
      }
      m.kv_heads = m.heads;
    } else {
      m.attention = sim::Attention::standard;
      m.mla = sim::MlaSpec{};
      if (kind == "mha" && m.kv_heads != m.heads) {
        r_.error(ap, "'mha' needs kv_heads == heads; got kv_heads " + kv + ", heads " + heads +
                         " (use 'gqa' or leave attention out)");
      } else if (kind == "gqa" && m.kv_heads >= m.heads) {
        r_.error(ap, "'gqa' needs kv_heads < heads; got kv_heads " + kv + ", heads " + heads);
      } else if (kind == "mqa") {
        if (!kv_given) {
          m.kv_heads = 1;  // "mqa" alone means one key/value head
        } else if (m.kv_heads != 1) {
          r_.error(ap, "'mqa' needs kv_heads == 1; got kv_heads " + kv);
        }
      }
    }

    // Sliding window.
    const std::string wp = child(p, "sliding_window");
    const json* w = find(j, "sliding_window");
    int window = 0;
    bool window_given = false;
    if (w != nullptr) {
      auto x = r_.integer(*w, wp, 1, 1e8);
      if (!x) return;
      window = static_cast<int>(*x);
      window_given = true;
    } else if (!kind && preset != nullptr) {
      window = preset->spec.sliding_window;  // inherited with the preset's attention
    }
    if (kind == "sliding_window" && window == 0) {
      r_.error(wp, "required with attention \"sliding_window\" (tokens each query attends to) is missing");
    }
    if (window > 0 && mla) {
      r_.error(wp, "is not supported with attention \"mla\"; got " + std::to_string(window));
      return;
    }
    if (window > 0 && m.seq_len > 0 && window > m.seq_len) {
      if (window_given) {
        r_.error(wp, "must be at most seq_len (" + std::to_string(m.seq_len) + "); got " + std::to_string(window));
        return;
      }
      warn(wp, "the preset's window (" + std::to_string(window) + " tokens) covers the whole sequence (seq_len " +
                   std::to_string(m.seq_len) + "): full causal attention");
      window = 0;
    }
    m.sliding_window = window;
    if (const json* e = find(j, "sliding_window_every")) {
      // One layer in N uses the window (gpt-oss alternates windowed and full layers: 2).
      if (auto x = r_.integer(*e, child(p, "sliding_window_every"), 1, 1e4)) {
        if (window == 0) {
          r_.error(child(p, "sliding_window_every"), "needs a sliding_window; got " + std::to_string(*x));
        } else {
          m.sliding_window_every = static_cast<int>(*x);
        }
      }
    } else if (window_given || kind) {
      m.sliding_window_every = 1;  // a window given here applies to every layer unless said otherwise
    }
  }

  // --- training ---------------------------------------------------------------------------
  std::optional<sim::TrainingJob> parse_training(const json& j, const std::optional<sim::ModelSpec>& model) {
    const std::string p = "/training";
    if (!r_.object(j, p)) return std::nullopt;
    const auto before = r_.count();
    r_.unknown_keys(j, p,
                    {"tokens", "global_batch_tokens", "global_batch", "precision", "framework", "kernels",
                     "overlap_compute_slowdown", "loss_kernel", "attention_kernel", "grad_reduce_in_fp32", "master_weights", "fp8_recipe", "fp8_params",
                     "host_us_per_op", "zero3_host_us_per_layer", "pp_p2p_batched", "tp_async_dgrad"});
    sim::TrainingJob t;
    if (out_.scenario.workload.kind == sim::WorkloadKind::finetune) {
      // A fine-tuning job's tokens come from its dataset (workload.dataset: tokens x epochs).
      if (find(j, "tokens") != nullptr) {
        r_.error(child(p, "tokens"), "a fine-tuning job's tokens are workload.dataset.tokens (one epoch) x epochs; "
                                     "remove training.tokens");
      }
    } else if (const json* v = required_in(j, p, "tokens", "total training tokens, e.g. \"2T\"")) {
      if (auto x = si_number(*v, child(p, "tokens"), kMaxTokens)) t.tokens = *x;
    }
    const json* gbt = find(j, "global_batch_tokens");
    const json* gb = find(j, "global_batch");
    if (gbt != nullptr && gb != nullptr) {
      r_.error(p, "give either global_batch_tokens or global_batch (sequences), not both");
    } else if (gbt == nullptr && gb == nullptr) {
      r_.error(child(p, "global_batch_tokens"),
               "required (the global batch: global_batch_tokens, or global_batch in sequences) is missing");
    } else if (gb != nullptr) {
      if (auto x = r_.integer(*gb, child(p, "global_batch"), 1, kMaxBatchSequences)) t.global_batch = *x;
    } else if (auto x = si_number(*gbt, child(p, "global_batch_tokens"), kMaxBatchTokens); x && model) {
      // "4M" tokens is how people write a batch of 1024 x 4096 (4Mi) as often as 976.6 x 4096: the
      // sequences are chosen once the cluster and strategy are known (sim/global_batch.hpp).
      t.global_batch_tokens = *x;
      t.global_batch = std::max<std::int64_t>(1, std::llround(*x / model->seq_len));
    }
    if (const json* v = find(j, "precision")) {
      if (auto s = r_.string(*v, child(p, "precision"))) {
        auto prec = sim::precision_from_string(*s);
        if (!prec || std::find(std::begin(kPrecisions), std::end(kPrecisions), *prec) == std::end(kPrecisions)) {
          // fp4 is a serving (weight) format, not a training precision.
          r_.error(child(p, "precision"), "unknown precision '" + *s + "' (" + suggest(*s, precision_names()) + ")");
        } else {
          t.precision = *prec;
        }
      }
    }
    // The framework recipe (data/frameworks.json) gives the defaults of the keys below that the
    // scenario leaves out; "megatron" (fused kernels, capplan's defaults) when none is named.
    recipe_ = cat_.framework_recipe("megatron");
    if (const json* v = find(j, "framework")) {
      if (auto s = r_.string(*v, child(p, "framework"))) {
        recipe_ = cat_.framework_recipe(*s);
        if (!recipe_) {
          const std::string hint = suggest(*s, cat_.framework_ids());
          const auto known = hint.find("known: ");
          r_.error(child(p, "framework"), "unknown framework '" + *s + "'; " + hint.substr(0, known) + "(" +
                                              hint.substr(known) + ")");
        }
      }
    }
    if (recipe_) {
      t.framework = recipe_->kernels;
      t.framework_id = recipe_->id;
    }
    if (const json* v = find(j, "kernels")) {
      // Overrides the recipe's kernel style: fused (Megatron/TE) or eager PyTorch element-wise kernels.
      if (auto s = r_.string(*v, child(p, "kernels"))) {
        if (*s == "fused") {
          t.framework = sim::Framework::megatron;
        } else if (*s == "eager") {
          t.framework = sim::Framework::pytorch;
        } else {
          r_.error(child(p, "kernels"), "unknown kernels '" + *s + "' (" + suggest(*s, {"fused", "eager"}) + ")");
        }
      }
    }
    if (const json* v = find(j, "loss_kernel")) {
      if (auto s = r_.string(*v, child(p, "loss_kernel"))) {
        if (auto k = sim::loss_kernel_from_string(*s)) {
          t.loss_kernel = *k;
        } else {
          r_.error(child(p, "loss_kernel"),
                   "unknown loss kernel '" + *s + "' (" + suggest(*s, {"unfused", "fused", "te", "eager"}) + ")");
        }
      }
    }
    if (const json* v = find(j, "attention_kernel")) {
      if (auto s = r_.string(*v, child(p, "attention_kernel"))) {
        if (auto k = sim::attention_kernel_from_string(*s)) {
          t.attention_kernel = *k;
        } else {
          r_.error(child(p, "attention_kernel"),
                   "unknown attention kernel '" + *s + "' (" + suggest(*s, {"flash2", "flash1"}) + ")");
        }
      }
    }
    if (const json* v = find(j, "fp8_recipe")) {
      if (auto s = r_.string(*v, child(p, "fp8_recipe"))) {
        if (auto k = sim::fp8_recipe_from_string(*s)) {
          t.fp8_recipe = *k;
        } else {
          r_.error(child(p, "fp8_recipe"), "unknown FP8 recipe '" + *s + "' (" + suggest(*s, {"delayed", "current", "mxfp8"}) + ")");
        }
      }
    }
    if (const json* v = find(j, "fp8_params")) {
      if (auto b = r_.boolean(*v, child(p, "fp8_params"))) t.fp8_params = *b;
    }
    if (const json* v = find(j, "grad_reduce_in_fp32")) {
      if (auto b = r_.boolean(*v, child(p, "grad_reduce_in_fp32"))) t.grad_reduce_in_fp32 = *b;
    }
    if (const json* v = find(j, "master_weights")) {
      // false: pure 16-bit training (no fp32 master copy; the optimizer state in the training dtype).
      if (auto b = r_.boolean(*v, child(p, "master_weights"))) t.master_weights = *b;
    }
    if (const json* v = find(j, "overlap_compute_slowdown")) {
      // Fraction by which compute slows while it overlaps communication (0 = ideal overlap).
      if (auto x = r_.number(*v, child(p, "overlap_compute_slowdown"), 0.0, 1.0, false)) {
        t.overlap_compute_slowdown = *x;
      }
    }
    if (const json* v = find(j, "host_us_per_op")) {
      // Host time per op of the op list (launch plus framework dispatch), microseconds.
      if (auto x = r_.number(*v, child(p, "host_us_per_op"), 0.0, 10000.0, false)) t.host_s_per_op = *x * 1e-6;
    }
    if (const json* v = find(j, "zero3_host_us_per_layer")) {
      // DeepSpeed ZeRO-3's hook time per layer and pass, microseconds (TrainingJob::zero3_host_s_per_layer).
      if (auto x = r_.number(*v, child(p, "zero3_host_us_per_layer"), 0.0, 1e6, false)) {
        t.zero3_host_s_per_layer = *x * 1e-6;
      }
    }
    if (const json* v = find(j, "pp_p2p_batched")) {
      // A micro-batch's pipeline send and receive in one batched call (false: blocking calls each).
      if (auto b = r_.boolean(*v, child(p, "pp_p2p_batched"))) t.pp_p2p_batched = *b;
    }
    if (const json* v = find(j, "tp_async_dgrad")) {
      // A column-parallel linear's input-gradient collective overlapped with its wgrad GEMM.
      if (auto b = r_.boolean(*v, child(p, "tp_async_dgrad"))) t.tp_async_dgrad = *b;
    }
    if (recipe_) {  // the recipe's defaults for what the scenario leaves out
      if (!find(j, "host_us_per_op") && recipe_->host_us_per_op) t.host_s_per_op = *recipe_->host_us_per_op * 1e-6;
      if (!find(j, "pp_p2p_batched") && recipe_->pp_p2p_batched) t.pp_p2p_batched = *recipe_->pp_p2p_batched;
      if (!find(j, "tp_async_dgrad") && recipe_->tp_async_dgrad) t.tp_async_dgrad = *recipe_->tp_async_dgrad;
      if (recipe_->zero3_prefetch_params) t.zero3_prefetch_params = *recipe_->zero3_prefetch_params;
      if (recipe_->zero3_regather_recompute) t.zero3_regather_recompute = *recipe_->zero3_regather_recompute;
      if (!find(j, "zero3_host_us_per_layer") && recipe_->zero3_host_us_per_layer) {
        t.zero3_host_s_per_layer = *recipe_->zero3_host_us_per_layer * 1e-6;
      }
      if (!find(j, "loss_kernel") && recipe_->loss_kernel) t.loss_kernel = recipe_->loss_kernel;
      if (!find(j, "attention_kernel") && recipe_->attention_kernel) t.attention_kernel = *recipe_->attention_kernel;
      if (!find(j, "grad_reduce_in_fp32")) {
        if (auto g = recipe_->grad_reduce_in_fp32(t.precision)) t.grad_reduce_in_fp32 = g;
      }
      if (!find(j, "fp8_params") && recipe_->fp8_param_gather) t.fp8_params = *recipe_->fp8_param_gather;
      if (!find(j, "master_weights") && recipe_->master_weights) t.master_weights = *recipe_->master_weights;
      if (!find(j, "fp8_recipe") && recipe_->fp8_recipe) t.fp8_recipe = *recipe_->fp8_recipe;
    }
    if (r_.count() != before || !model) return std::nullopt;
    return t;
  }

  const json* required_in(const json& obj, const std::string& p, const char* key, const char* help) {
    const json* v = find(obj, key);
    if (v == nullptr) r_.error(child(p, key), std::string("required (") + help + ") is missing");
    return v;
  }

  void check_precision(const sim::Cluster& c, sim::Precision prec) {
    if (c.gpu.peak.for_precision(prec).base() > 0) return;
    std::vector<std::string> supported;
    for (auto q : kPrecisions) {
      if (c.gpu.peak.for_precision(q).base() > 0) supported.emplace_back(sim::to_string(q));
    }
    r_.error("/training/precision", "GPU '" + c.gpu.id + "' has no dense " + sim::to_string(prec) +
                                        " peak in gpus.json (supported: " + detail::join(supported) + "); got \"" +
                                        sim::to_string(prec) + "\"");
  }

  // --- cluster ----------------------------------------------------------------------------
  std::optional<sim::Cluster> parse_cluster(const json& j) {
    const std::string p = "/cluster";
    if (!r_.object(j, p)) return std::nullopt;
    const auto before = r_.count();
    r_.unknown_keys(j, p, {"instance", "nodes", "gpu", "gpus", "gpus_per_node", "intra_node_gbps",
                           "inter_node_gbps_per_gpu", "gpu_speed_spread", "topology"});
    std::optional<double> intra, inter, spread;
    if (const json* v = find(j, "gpu_speed_spread")) {
      spread = r_.number(*v, child(p, "gpu_speed_spread"), 0.0, 0.5, false);
    }
    // A link bandwidth: > 0, and at least kMinLinkGbps.
    auto link_gbps = [&](const json& v, const std::string& at) -> std::optional<double> {
      auto x = r_.number(v, at, 0, kMaxLinkGbps, true);
      if (x && *x < kMinLinkGbps) {
        r_.error(at, "must be at least " + fmt(kMinLinkGbps) + " (1 Mbit/s: a slower link is no GPU interconnect); got " +
                         describe(v));
        return std::nullopt;
      }
      return x;
    };
    if (const json* v = find(j, "intra_node_gbps")) intra = link_gbps(*v, child(p, "intra_node_gbps"));
    if (const json* v = find(j, "inter_node_gbps_per_gpu")) inter = link_gbps(*v, child(p, "inter_node_gbps_per_gpu"));
    // Network tiers: the scenario's own, else the instance's (below), else two tiers from the
    // two bandwidths. A scenario topology carries its bandwidths, so the two flat keys are not used.
    std::optional<sim::Topology> topo;
    const json* topo_json = find(j, "topology");
    if (topo_json != nullptr) {
      topo = detail::read_topology(*topo_json, child(p, "topology"), r_, false);
      for (const char* key : {"intra_node_gbps", "inter_node_gbps_per_gpu"}) {
        if (find(j, key) != nullptr) {
          r_.error(child(p, key), "not used with topology (give each tier's gbps_per_gpu)");
        }
      }
    }
    const bool user_inter = inter.has_value();
    auto has_scale_out = [&] {
      if (!topo) return false;
      for (const auto& t : topo->tiers) {
        if (t.kind == sim::TierKind::scale_out) return true;
      }
      return false;
    };
    const json* instance = find(j, "instance");
    const json* gpu = find(j, "gpu");
    if (instance != nullptr && gpu != nullptr) {
      r_.error(p, "give either instance (with nodes) or gpu (with gpus), not both");
      return std::nullopt;
    }
    if (instance == nullptr && gpu == nullptr) {
      r_.error(child(p, "instance"), "required (instance with nodes, or gpu with gpus) is missing");
      return std::nullopt;
    }

    sim::Cluster c;
    const InstanceEntry* inst = nullptr;
    if (instance != nullptr) {
      for (const char* key : {"gpus", "gpus_per_node"}) {
        if (find(j, key) != nullptr) {
          r_.error(child(p, key), "not used with instance (the instance fixes the GPUs per node); give nodes");
        }
      }
      if (auto id = r_.string(*instance, child(p, "instance"))) {
        inst = cat_.find_instance(*id);
        if (inst == nullptr) {
          std::vector<std::string> ids;
          for (const auto& e : cat_.instances) ids.push_back(e.id);
          r_.error(child(p, "instance"), "unknown instance '" + *id + "' (" + suggest(*id, ids) + ")");
        }
      }
      std::optional<std::int64_t> nodes;
      if (serve_ && find(j, "nodes") == nullptr) {
        nodes = 1;  // serving: the plan decides how many instances
      } else if (const json* v = required_in(j, p, "nodes", "number of instances")) {
        nodes = r_.integer(*v, child(p, "nodes"), 1, kMaxNodes);
      }
      if (inst == nullptr || !nodes) return std::nullopt;
      const GpuEntry* g = cat_.find_gpu(inst->gpu);
      if (g == nullptr) {
        r_.error(child(p, "instance"),
                 "instance '" + inst->id + "' names GPU '" + inst->gpu + "', which gpus.json lacks");
        return std::nullopt;
      }
      if (static_cast<double>(*nodes) * inst->gpus_per_node > kMaxGpus) {
        r_.error(child(p, "nodes"), "nodes x gpus_per_node (" + std::to_string(inst->gpus_per_node) +
                                        ") must be at most " + fmt(kMaxGpus) + " GPUs; got " +
                                        describe(*find(j, "nodes")));
        return std::nullopt;
      }
      c.gpu = g->spec;
      c.gpus_per_node = inst->gpus_per_node;
      c.gpus = static_cast<int>(*nodes) * inst->gpus_per_node;
      c.instance_id = inst->id;
      if (!topo && inst->topology) topo = inst->topology;
      if (!inter) {
        if (inst->network_gbps) {
          inter = *inst->network_gbps / inst->gpus_per_node;
        } else if (*nodes > 1 && !has_scale_out()) {
          r_.error(child(p, "instance"), "network bandwidth of '" + inst->id +
                                             "' is unknown in the catalog; give cluster.inter_node_gbps_per_gpu");
          return std::nullopt;
        } else {
          inter = kDefaultInterNodeGbpsPerGpu;  // one node: never used
        }
      }
    } else {
      const GpuEntry* g = nullptr;
      if (auto id = r_.string(*gpu, child(p, "gpu"))) {
        g = cat_.find_gpu(*id);
        if (g == nullptr) {
          std::vector<std::string> ids;
          for (const auto& e : cat_.gpus) ids.push_back(e.spec.id);
          r_.error(child(p, "gpu"), "unknown GPU '" + *id + "' (" + suggest(*id, ids) + ")");
        }
      }
      std::optional<std::int64_t> gpn = 8, gpus, nodes;
      // With a topology, a node defaults to its innermost (NVLink) domain.
      if (topo && topo->tiers[0].kind == sim::TierKind::scale_up && topo->tiers[0].gpus > 0) gpn = topo->tiers[0].gpus;
      if (const json* v = find(j, "gpus_per_node")) gpn = r_.integer(*v, child(p, "gpus_per_node"), 1, kMaxGpusPerNode);
      if (const json* v = find(j, "gpus")) gpus = r_.integer(*v, child(p, "gpus"), 1, kMaxGpus);
      if (const json* v = find(j, "nodes")) nodes = r_.integer(*v, child(p, "nodes"), 1, kMaxNodes);
      if (find(j, "gpus") == nullptr && find(j, "nodes") == nullptr) {
        if (serve_) {
          nodes = 1;  // serving: the plan decides how many GPUs; one node's worth until then
        } else {
          r_.error(child(p, "gpus"), "required (number of GPUs) is missing");
        }
      }
      if (r_.count() != before || g == nullptr || !gpn) return std::nullopt;
      if (nodes && gpus && *gpus != *nodes * *gpn) {
        r_.error(child(p, "gpus"), "must equal nodes x gpus_per_node (" + std::to_string(*nodes * *gpn) + "); got " +
                                       std::to_string(*gpus));
        return std::nullopt;
      }
      if (!gpus) {
        if (static_cast<double>(*nodes) * static_cast<double>(*gpn) > kMaxGpus) {
          r_.error(child(p, "nodes"), "nodes x gpus_per_node must be at most " + fmt(kMaxGpus) + " GPUs; got " +
                                          std::to_string(*nodes) + " x " + std::to_string(*gpn));
          return std::nullopt;
        }
        gpus = *nodes * *gpn;
      }
      if (*gpus < *gpn) {
        gpn = gpus;  // a partial node
      } else if (*gpus % *gpn != 0) {
        r_.error(child(p, "gpus"), "must be a multiple of gpus_per_node (" + std::to_string(*gpn) +
                                       ") or fewer than one node; got " + std::to_string(*gpus));
        return std::nullopt;
      }
      c.gpu = g->spec;
      c.gpus = static_cast<int>(*gpus);
      c.gpus_per_node = static_cast<int>(*gpn);
      if (!inter) {
        inter = kDefaultInterNodeGbpsPerGpu;
        if (c.gpus > c.gpus_per_node && !has_scale_out()) {
          warn(child(p, "inter_node_gbps_per_gpu"),
               "assumed 400 Gbit/s per GPU inter-node (DGX reference); set cluster.inter_node_gbps_per_gpu");
        }
      }
    }
    if (r_.count() != before || !inter) return std::nullopt;
    c.inter_node_bandwidth = units::gbit_per_s(*inter);
    if (spread) c.gpu_speed_spread = *spread;
    if (intra) {
      c.intra_node_bandwidth = units::gbit_per_s(*intra);
    } else {
      c.intra_node_bandwidth = c.gpu.nvlink_bandwidth.base() > 0 ? c.gpu.nvlink_bandwidth : c.gpu.pcie_bandwidth;
    }
    if (topo) {
      // The flat keys override an instance's tiers: intra_node_gbps the innermost scale-up tier,
      // inter_node_gbps_per_gpu every scale-out tier (each keeps its oversubscription).
      if (intra && topo->tiers[0].kind == sim::TierKind::scale_up) topo->tiers[0].bandwidth = c.intra_node_bandwidth;
      for (auto& t : topo->tiers) {
        if (user_inter && t.kind == sim::TierKind::scale_out) t.bandwidth = c.inter_node_bandwidth;
      }
      detail::check_topology_fits(*topo, c.gpus, c.gpus_per_node,
                                  topo_json != nullptr ? child(p, "topology") : child(p, "instance"), r_);
      if (r_.count() != before) return std::nullopt;
      c.set_topology(std::move(*topo));
    }
    return c;
  }

  // --- pricing ----------------------------------------------------------------------------
  void parse_pricing(const json& j, std::optional<sim::Cluster>& c) {
    const std::string p = "/pricing";
    if (!r_.object(j, p)) return;
    r_.unknown_keys(j, p, {"usd_per_gpu_hour", "usd_per_node_hour", "purchase", "spot", "reserved", "on_prem",
                           "currency", "usd_per_unit", "usd_per_unit_date", "sheet"});
    // pricing.sheet: a price sheet (data/price_sheet.hpp) the command merges over the catalog
    // before this is read; here only its type is checked.
    if (const json* sheet = find(j, "sheet")) r_.string(*sheet, child(p, "sheet"));
    sim::PricingTerms& terms = out_.scenario.pricing;
    const double rate = parse_currency(j, p, terms.currency);
    const json* purchase = find(j, "purchase");
    if (purchase != nullptr) {
      if (auto name = r_.string(*purchase, child(p, "purchase"))) {
        if (auto m = sim::purchase_model_from_string(*name)) {
          terms.model = *m;
        } else {
          r_.error(child(p, "purchase"), "unknown purchase model '" + *name + "' (" +
                                             suggest(*name, {"on_demand", "spot", "reserved", "on_prem"}) + ")");
        }
      }
    }
    if (const json* v = find(j, "spot")) detail::read_fields<sim::SpotTerms>(*v, child(p, "spot"), kSpotFields, terms.spot, r_);
    if (const json* v = find(j, "reserved")) {
      detail::read_fields<sim::ReservedTerms>(*v, child(p, "reserved"), kReservedFields, terms.reserved, r_);
    }
    if (const json* v = find(j, "on_prem")) {
      detail::read_fields<sim::OnPremTerms>(*v, child(p, "on_prem"), kOnPremFields, terms.on_prem, r_);
    }
    // Every price of this section is written in its currency; sim/ computes in US dollars.
    for (std::optional<double>* price : {&terms.spot.usd_per_gpu_hour, &terms.reserved.usd_per_gpu_hour,
                                         &terms.reserved.idle_usd_per_gpu_hour, &terms.on_prem.usd_per_node,
                                         &terms.on_prem.usd_per_kwh, &terms.on_prem.ops_usd_per_year}) {
      if (*price) **price *= rate;
    }
    const json* gpu_hour = find(j, "usd_per_gpu_hour");
    const json* node_hour = find(j, "usd_per_node_hour");
    if (gpu_hour != nullptr && node_hour != nullptr) {
      r_.error(p, "give either usd_per_gpu_hour or usd_per_node_hour, not both");
      return;
    }
    if (gpu_hour == nullptr && node_hour == nullptr) {
      const bool other = purchase != nullptr || find(j, "spot") || find(j, "reserved") || find(j, "on_prem") ||
                         find(j, "currency") || find(j, "sheet");
      if (!other) {
        r_.error(child(p, "usd_per_gpu_hour"), "required (usd_per_gpu_hour or usd_per_node_hour) is missing");
      } else if (c) {
        catalog_price(*c);  // the on-demand reference price, when the catalog has one
      }
      return;
    }
    std::optional<double> per_gpu;
    if (gpu_hour != nullptr) {
      per_gpu = r_.number(*gpu_hour, child(p, "usd_per_gpu_hour"), 0, kMaxUsdPerGpuHour, false);
    } else if (auto node = r_.number(*node_hour, child(p, "usd_per_node_hour"), 0, kMaxUsdPerGpuHour * 1024, false);
               node && c) {
      per_gpu = *node / c->gpus_per_node;
    }
    if (per_gpu && c) {
      c->price_per_gpu = units::usd_per_hour(*per_gpu * rate);
      c->price_source = "scenario pricing";
    }
  }

  // pricing.currency (ISO 4217, default USD) and its rate to US dollars, required for any other
  // currency. Returns the rate the section's prices are converted at (1 when unknown: the error
  // is reported and nothing is estimated).
  double parse_currency(const json& j, const std::string& p, sim::Currency& out) {
    const json* code = find(j, "currency");
    const json* rate = find(j, "usd_per_unit");
    const json* date = find(j, "usd_per_unit_date");
    if (code != nullptr) {
      if (auto text = r_.string(*code, child(p, "currency"))) {
        if (is_currency_code(*text)) {
          out.code = *text;
          currency_given_ = true;
        } else {
          r_.error(child(p, "currency"), currency_code_error(*text));
        }
      }
    }
    if (date != nullptr) {
      if (auto text = r_.string(*date, child(p, "usd_per_unit_date"))) {
        if (detail::is_date(*text, false)) {
          out.rate_date = *text;
        } else {
          r_.error(child(p, "usd_per_unit_date"), "must be a date YYYY-MM-DD; got " + describe(*date));
        }
      }
    }
    if (rate != nullptr) {
      if (auto v = r_.number(*rate, child(p, "usd_per_unit"), 0, 1e6, true)) {
        if (out.is_usd() && *v != 1.0) {
          r_.error(child(p, "usd_per_unit"), "must be 1 (or absent) with currency USD; got " + fmt(*v) +
                                                 " (give pricing.currency: the code your prices are in)");
        } else {
          out.usd_per_unit = *v;
        }
      }
    } else if (!out.is_usd()) {
      r_.error(child(p, "usd_per_unit"), "required with currency " + out.code + " (US dollars per " + out.code +
                                             ", e.g. 0.14; with usd_per_unit_date, the day it was read) is missing");
    } else if (date != nullptr) {
      r_.error(child(p, "usd_per_unit_date"), "only used with a non-USD currency and its usd_per_unit");
    }
    return out.usd_per_unit;
  }

  // On-premises node power when not given: the maximum system power of the GPU's server in the
  // catalog (with its source), else the GPUs' TDP (CPUs, NICs and fans not counted), said either way.
  void on_prem_power(const sim::Cluster& c) {
    sim::OnPremTerms& op = out_.scenario.pricing.on_prem;
    if (out_.scenario.pricing.model != sim::PurchaseModel::on_prem || op.node_power_w) return;
    if (auto w = default_node_power(cat_, c)) {
      op.node_power_w = w->w;
      op.node_power_from_tdp = w->from_tdp;
      warn("/pricing/on_prem/node_power_w", "not given: " + w->said);
    }
  }

  // --- storage ----------------------------------------------------------------------------
  // A catalog tier (storage.json) and/or explicit bandwidths; explicit values override the tier's.
  std::optional<sim::StorageTier> storage_tier(const std::string& id, const std::string& p,
                                               const StorageDraft* d) {
    const StorageEntry* e = cat_.find_storage(id);
    if (e == nullptr) {
      std::vector<std::string> ids;
      for (const auto& t : cat_.storage) ids.push_back(t.id);
      r_.error(p, "unknown storage tier '" + id + "' (" + (ids.empty() ? std::string("no storage.json loaded")
                                                                        : suggest(id, ids)) + ")");
      return std::nullopt;
    }
    sim::StorageTier t;
    t.id = e->id;
    t.local = e->kind == "local_nvme";
    // A price in another currency has no rate in storage.json: unknown, never read as dollars.
    if (e->currency == "USD") t.usd_per_gb_month = e->usd_per_gb_month;
    auto set = [](units::BytesPerSecond& bw, std::optional<double> gbs) {
      if (gbs) bw = units::gb_per_s(*gbs);
    };
    set(t.write.aggregate, e->write_gb_per_s);
    set(t.read.aggregate, e->read_gb_per_s);
    set(t.write.per_node, e->write_gb_per_s_per_node);
    set(t.read.per_node, e->read_gb_per_s_per_node);
    // Throughput that scales with the provisioned capacity, per direction, up to the tier's cap.
    const std::optional<double> write_per_tib = e->write_gb_per_s_per_tib ? e->write_gb_per_s_per_tib : e->gb_per_s_per_tib;
    const std::optional<double> read_per_tib = e->read_gb_per_s_per_tib ? e->read_gb_per_s_per_tib : e->gb_per_s_per_tib;
    if (write_per_tib || read_per_tib) {
      if (d != nullptr && d->capacity_tib) {
        auto scaled = [&](units::BytesPerSecond& bw, std::optional<double> per_tib, std::optional<double> cap) {
          if (!per_tib) return;
          const double gbs = *per_tib * *d->capacity_tib;
          bw = units::gb_per_s(cap ? std::min(gbs, *cap) : gbs);
        };
        scaled(t.write.aggregate, write_per_tib, e->max_write_gb_per_s);
        scaled(t.read.aggregate, read_per_tib, e->max_read_gb_per_s);
      } else if (d != nullptr && !(d->write && d->read)) {
        r_.error("/storage/capacity_tib", "required with tier '" + id + "' (its throughput is " +
                                              fmt(write_per_tib.value_or(*read_per_tib)) +
                                              " GB/s per TiB provisioned) is missing");
      }
    }
    return t;
  }

  // Reads default to the write figures when only writes are known (and the other way round).
  static void fill_missing_direction(sim::StorageTier& t) {
    if (!t.read.known()) t.read = t.write;
    if (!t.write.known()) t.write = t.read;
  }

  // No storage section: the catalog's default tier (storage.json, "default": true), marked assumed
  // so the estimate says so; none in the catalog leaves the network stand-in to sim.
  void default_storage() {
    const StorageEntry* e = cat_.default_storage();
    if (e == nullptr) return;
    auto t = storage_tier(e->id, "/storage/tier", nullptr);
    if (!t) return;
    fill_missing_direction(*t);
    out_.scenario.storage.tier = *t;
    out_.scenario.storage.assumed = true;
  }

  void parse_storage(const json& j) {
    const std::string p = "/storage";
    StorageDraft d;
    const auto before = r_.count();
    detail::read_fields<StorageDraft>(j, p, kStorageFields, d, r_);
    if (r_.count() != before) return;
    sim::StorageSpec& spec = out_.scenario.storage;
    spec.given = true;
    if (d.tier) {
      auto t = storage_tier(*d.tier, child(p, "tier"), &d);
      if (!t) return;
      spec.tier = *t;
    } else {
      spec.tier.id = "custom";
      if (!d.write && !d.write_node) {
        r_.error(child(p, "write_gb_per_s"),
                 "required (a tier, or write_gb_per_s / write_gb_per_s_per_node) is missing");
      }
    }
    if (d.write) spec.tier.write.aggregate = units::gb_per_s(*d.write);
    if (d.read) spec.tier.read.aggregate = units::gb_per_s(*d.read);
    if (d.write_node) spec.tier.write.per_node = units::gb_per_s(*d.write_node);
    if (d.read_node) spec.tier.read.per_node = units::gb_per_s(*d.read_node);
    if (d.local) spec.tier.local = *d.local;
    if (d.usd_per_gb_month) spec.tier.usd_per_gb_month = d.usd_per_gb_month;
    fill_missing_direction(spec.tier);
    if (d.upload_tier) {
      if (!spec.tier.local) {
        r_.error(child(p, "upload_tier"), "only used with a node-local tier (local: true or a local_nvme tier); got " +
                                              describe(*find(j, "upload_tier")));
        return;
      }
      if (auto t = storage_tier(*d.upload_tier, child(p, "upload_tier"), nullptr)) {
        if (!t->write.known()) {
          r_.error(child(p, "upload_tier"), "tier '" + t->id + "' has no published bandwidth to upload at");
        } else {
          spec.upload = *t;
        }
      }
    }
  }

  // The catalog's price of the cluster's instance, in US dollars. A price in another currency
  // needs the catalog's usd_per_unit (without it the price is unknown, and said so); with no
  // currency of the user's, costs are shown in the catalog price's currency.
  void catalog_price(sim::Cluster& c) {
    const InstanceEntry* inst = c.instance_id.empty() ? nullptr : cat_.find_instance(c.instance_id);
    if (inst == nullptr) return;
    auto price = inst->price.per_gpu_hour_usd(inst->gpus_per_node);
    if (!price) {
      if (inst->price.per_gpu_hour(inst->gpus_per_node)) {
        warn("/cluster/instance", "the catalog's price of '" + inst->id + "' is in " + inst->price.currency +
                                      " without a rate to US dollars (price.usd_per_unit), so it is not used; give "
                                      "pricing.usd_per_gpu_hour with pricing.currency and pricing.usd_per_unit");
      }
      return;
    }
    if (!currency_given_) out_.scenario.pricing.currency = inst->price.money();
    c.price_per_gpu = units::usd_per_hour(*price);
    std::string source = (inst->price.type == "sheet" ? "price sheet: " : "catalog: ") + inst->id;
    for (const auto* part : {&inst->price.type, &inst->price.region, &inst->price.date}) {
      if (!part->empty()) source += " " + *part;
    }
    c.price_source = source;
  }

  // --- strategy ---------------------------------------------------------------------------
  sim::StrategyRequest parse_strategy(const json& j, const std::optional<sim::Cluster>& c,
                                      const std::optional<sim::ModelSpec>& m) {
    const std::string p = "/strategy";
    sim::StrategyRequest s;
    if (is_auto(j)) {
      out_.strategy_all_auto = true;
      return s;
    }
    if (!j.is_object()) {
      r_.error(p, "must be \"auto\" or an object of tp, pp, dp, ...; got " + describe(j));
      return s;
    }
    std::vector<std::string> known;
    for (const auto& f : kStrategyInts) known.emplace_back(f.key);
    known.emplace_back("recompute");
    for (const auto& f : sim::kStrategyOptions) known.emplace_back(f.key);
    r_.unknown_keys(j, p, known);

    bool any = false;
    for (const auto& f : kStrategyInts) {
      const json* v = find(j, f.key);
      if (v == nullptr || is_auto(*v)) continue;
      if (auto x = r_.integer(*v, child(p, f.key), f.lo, f.hi)) {
        s.*f.member = static_cast<int>(*x);
        any = true;
      }
    }
    if (s.ep && *s.ep > 1 && m && !m->is_moe()) {
      r_.error(child(p, "ep"), "expert parallelism needs an MoE model (model.moe or an MoE preset); got " +
                                   std::to_string(*s.ep));
    }
    if (s.etp && *s.etp > 1 && m && !m->is_moe()) {
      r_.error(child(p, "etp"), "expert tensor parallelism needs an MoE model (model.moe or an MoE preset); got " +
                                    std::to_string(*s.etp));
    }
    if (const json* v = find(j, "recompute"); v != nullptr && !is_auto(*v)) {
      if (auto str = r_.string(*v, child(p, "recompute"))) {
        if (auto rc = sim::recompute_from_string(*str)) {
          s.recompute = *rc;
          any = true;
        } else {
          r_.error(child(p, "recompute"), "unknown recompute '" + *str + "' (" +
                                              suggest(*str, {"none", "selective", "full", "auto"}) + ")");
        }
      }
    }
    for (const auto& f : sim::kStrategyOptions) {
      const json* v = find(j, f.key);
      if (v == nullptr || is_auto(*v)) continue;
      if (!v->is_boolean()) {
        r_.error(child(p, f.key),
                 std::string("expected true, false or \"auto\"; got ") + v->type_name() + " " + describe(*v));
        continue;
      }
      s.*f.request = v->get<bool>();
      any = true;
    }
    out_.strategy_all_auto = !any;
    if (recipe_) apply_recipe(j, s, m);

    if (c) check_gpu_count(s, c->gpus);
    return s;
  }

  // The recipe's strategy defaults for the keys the strategy object leaves out ("auto" stays a
  // search); whether the version has selective recompute at all.
  void apply_recipe(const json& j, sim::StrategyRequest& s, const std::optional<sim::ModelSpec>& m) {
    const auto& r = *recipe_;
    const auto absent = [&](const char* key) { return find(j, key) == nullptr; };
    s.selective_recompute = r.selective_recompute;
    if (!r.selective_recompute && s.recompute == sim::Recompute::selective) {
      r_.error("/strategy/recompute", "framework '" + r.id +
                                          "' has no selective recompute (full-layer checkpointing only); got \"selective\"");
    }
    if (absent("overlap_dp_comm")) {
      if (auto o = r.overlap_dp_comm_for(s.zero)) s.overlap_dp_comm = o;
    }
    if (absent("tp_comm_overlap") && r.tp_comm_overlap) s.tp_comm_overlap = r.tp_comm_overlap;
    if (absent("pp_comm_overlap") && r.pp_comm_overlap) s.pp_comm_overlap = r.pp_comm_overlap;
    if (absent("ep_comm_overlap") && r.ep_comm_overlap) s.ep_comm_overlap = r.ep_comm_overlap;
    if (absent("recompute") && r.recompute) s.recompute = r.recompute;
    if (absent("recompute_norms") && r.recompute_norms) s.recompute_norms = r.recompute_norms;
    if (absent("recompute_moe_act") && r.recompute_moe_act) s.recompute_moe_act = r.recompute_moe_act;
    if (absent("recompute_moe") && r.recompute_moe) s.recompute_moe = r.recompute_moe;
    if (absent("etp") && r.expert_tp_follows_tp.value_or(false) && m && m->is_moe() && s.tp) s.etp = s.tp;
  }

  // The GPU-count identity (other layout divisibility is sim::check_layout's job).
  //
  // Layout convention (Megatron-Core): tp*pp*dp*cp == GPUs, where dp is the data-parallel size of
  // the attention and dense layers; expert parallelism is carved out of the same tp*dp*cp ranks
  // (each expert-parallel group spans ep of them), so ep divides tp*dp*cp and does not multiply the
  // GPU count. CONTRACT.md's spelling "tp*pp*dp (times cp and ep where used) = GPUs" is kept
  // working: when tp, pp, dp and ep are given (cp absent counts as 1, as everywhere here) and only
  // tp*pp*dp*cp*ep matches the GPU count, dp was written as the expert-data-parallel size, and the
  // attention's data-parallel size is dp*ep (with a warning). The Megatron-Core reading wins when
  // both would match.
  void check_gpu_count(sim::StrategyRequest& s, int gpus) {
    const std::string p = "/strategy";
    const double g = gpus;
    const double cp = s.cp.value_or(1);
    if (s.tp && s.pp && s.dp) {
      const double product = static_cast<double>(*s.tp) * *s.pp * *s.dp * cp;
      const std::string spelled = std::to_string(*s.tp) + "*" + std::to_string(*s.pp) + "*" + std::to_string(*s.dp) +
                                  "*" + fmt(cp) + " = " + fmt(product);
      if (product != g) {
        const double ep = s.ep.value_or(1);
        if (ep > 1 && product * ep == g) {
          const int dp = *s.dp * *s.ep;
          warn(child(p, "dp"), "tp*pp*dp*cp = " + spelled + " is not the number of GPUs (" + std::to_string(gpus) +
                                   "); read with CONTRACT's tp*pp*dp*cp*ep = GPUs: data-parallel size for attention "
                                   "is dp*ep = " + std::to_string(dp) +
                                   " (capplan's layout is Megatron-Core's: tp*pp*dp*cp = GPUs, ep within tp*dp*cp)");
          s.dp = dp;
        } else {
          r_.error(p, "tp*pp*dp*cp = " + spelled + " must equal the number of GPUs (" + std::to_string(gpus) + ")" +
                          (ep > 1 ? std::string("; ep is carved out of the tp*dp*cp ranks (Megatron-Core) and does "
                                                "not multiply the GPU count")
                                  : std::string()));
          return;
        }
      }
      if (s.ep) {
        const double ranks = static_cast<double>(*s.tp) * *s.dp * cp;
        if (std::fmod(ranks, *s.ep) != 0) {
          r_.error(child(p, "ep"), "must divide tp*dp*cp = " + fmt(ranks) +
                                       " (experts are spread over the tensor-, data- and context-parallel ranks, as "
                                       "in Megatron-Core); got " + std::to_string(*s.ep));
        }
      }
    } else {
      const double product = static_cast<double>(s.tp.value_or(1)) * s.pp.value_or(1) * s.dp.value_or(1) * cp;
      if (product > g || std::fmod(g, product) != 0) {
        r_.error(p, "the given parallel sizes multiply to " + fmt(product) +
                        ", which does not divide the number of GPUs (" + std::to_string(gpus) + ")");
      }
    }
  }

  std::string where_;
  Diagnostics diags_;
  Reader r_;
  const Catalogs& cat_;
  bool serve_ = false;  // workload.kind serve: no training section, the cluster's size optional
  ParsedScenario out_;
  std::optional<sim::FrameworkRecipe> recipe_;  // training.framework's recipe
  bool currency_given_ = false;                 // pricing.currency was given (else the catalog price's)
};

}  // namespace

Result<ParsedScenario> parse_scenario(const nlohmann::json& j, const Catalogs& catalogs, std::string_view where) {
  return ScenarioParser(catalogs, where).run(j);
}

Result<nlohmann::json> parse_scenario_document(std::string_view text, std::string_view where) {
  return detail::parse_json_text(text, std::string(where));
}

Result<ParsedScenario> parse_scenario_text(std::string_view text, const Catalogs& catalogs, std::string_view where) {
  auto j = parse_scenario_document(text, where);
  if (!j) return std::unexpected(std::move(j.error()));
  return parse_scenario(*j, catalogs, where);
}

nlohmann::json model_to_json(const sim::ModelSpec& m) {
  json model = {{"name", m.name}};
  for (const auto& d : kModelDims) {
    if (m.*d.member > 0) model[d.key] = m.*d.member;  // head_dim: 0 = hidden/heads, left out
  }
  for (const auto& f : kModelFlags) model[f.key] = m.*f.member;
  if (m.is_moe()) {
    json moe = {{"capacity_factor", m.moe.capacity_factor},
                {"activation_clamp", m.moe.activation_clamp},
                {"expert_bias", m.moe.expert_bias},
                {"pad_to_capacity", m.moe.pad_to_capacity},
                {"random_routing", m.moe.random_routing},
                {"dispatcher", m.moe.dispatcher == sim::MoeDispatcher::deepep ? "deepep" : "alltoall"}};
    for (const auto& f : kMoeInts) moe[f.key] = m.moe.*f.member;
    model["moe"] = std::move(moe);
  }
  detail::hybrid_to_json(m, model);
  if (m.attention == sim::Attention::mla) {
    model["attention"] = "mla";
    json mla = json::object();
    for (const auto& f : kMlaInts) mla[f.key] = m.mla.*f.member;
    model["mla"] = std::move(mla);
  } else if (m.sliding_window > 0) {
    model["sliding_window"] = m.sliding_window;
    if (m.sliding_window_every != 1) model["sliding_window_every"] = m.sliding_window_every;
  }
  return model;
}

nlohmann::json strategy_to_json(const sim::Parallelism& p) {
  json s = {{"tp", p.tp},
            {"pp", p.pp},
            {"dp", p.dp},
            {"cp", p.cp},
            {"ep", p.ep},
            {"etp", p.etp},
            {"micro_batch", p.micro_batch},
            {"virtual_stages", p.virtual_stages},
            {"zero", p.zero},
            {"recompute", sim::to_string(p.recompute)}};
  for (const auto& o : sim::kStrategyOptions) s[o.key] = p.*o.value;
  // Uneven pipeline stages only when set (0 = even split).
  if (p.first_stage_layers > 0) s["first_stage_layers"] = p.first_stage_layers;
  if (p.last_stage_layers > 0) s["last_stage_layers"] = p.last_stage_layers;
  return s;
}

nlohmann::json example_scenario() {
  // 4M tokens would not divide by Llama 3's 8192-token sequences: the batch is given in sequences
  // (512 x 8192 = 4.2M tokens, Llama 3's first-stage batch).
  return nlohmann::json{
      {"name", "example: Llama 3 70B, 2T tokens on 64 x AWS p5.48xlarge (512 H100)"},
      {"model", {{"preset", "llama3-70b"}}},
      {"training", {{"tokens", "2T"}, {"global_batch", 512}, {"precision", "bf16"}}},
      {"cluster", {{"instance", "aws-p5.48xlarge"}, {"nodes", 64}}},
      {"strategy", "auto"},
  };
}

}  // namespace capplan::data
