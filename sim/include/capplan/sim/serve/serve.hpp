// SPDX-License-Identifier: Apache-2.0
// Serving: one model replica under an engine's continuous batching, priced from the same op list
// as training (build_pass_ops), and the capacity plan for a request rate at a latency target.
//
// What a replica is: tp x pp GPUs holding one copy of the weights (experts split over the TP
// ranks, or whole experts per rank with ep > 1), one engine scheduler, one KV cache.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/workload/finding.hpp"
#include "capplan/sim/workload/hardware.hpp"
#include "capplan/sim/workload/model.hpp"
#include "capplan/sim/workload/pricing.hpp"
#include "capplan/sim/cost/op_cost.hpp"
#include "capplan/sim/lowering/scope.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/units.hpp"

namespace capplan::sim {

// How the layers' linear weights are stored and multiplied (embeddings, norms and lm_head stay
// in 16 bits, as vLLM's and TensorRT-LLM's quantisation recipes leave them).
enum class WeightFormat {
  bf16,
  fp16,
  fp8,   // W8A8 FP8 (E4M3) with per-channel or per-tensor scales; FP8 tensor cores (Hopper, Ada, Blackwell)
  int8,  // W8A16 weight-only INT8 (per-channel scales), 16-bit math
  int4,  // W4A16 AWQ / GPTQ, a 16-bit scale and zero per group of 128 weights, 16-bit math
  fp4,   // NVFP4 W4A4: E2M1 with an E4M3 scale per 16 elements; FP4 tensor cores (Blackwell)
};
inline constexpr int kWeightFormats = 6;
const char* to_string(WeightFormat f);
std::optional<WeightFormat> weight_format_from_string(const std::string& s);
struct WeightFormatTraits {
  Precision compute = Precision::bf16;  // the GEMMs' math precision
  double bytes = 2.0;                   // stored bytes per weight with its scales
};
WeightFormatTraits traits(WeightFormat f);
int index(WeightFormat f);

// An engine's scheduler and memory recipe (data/engines.json, with sources).
enum class KvBudget {
  total_memory,  // vLLM / SGLang: the engine may hold `kv_memory_fraction` of the GPU's memory in all
  free_memory,   // TensorRT-LLM: the KV cache takes `kv_memory_fraction` of what is free after the rest
};
struct EngineSpec {
  std::string id = "vllm";
  std::string name = "vLLM";
  std::string version;
  int max_num_seqs = 256;                     // sequences in one batch
  std::int64_t max_num_batched_tokens = 8192; // tokens (prefill chunks + decodes) in one step
  bool chunked_prefill = true;                // prompts split into chunks that share steps with decodes
  // Admission reserves the cache for the whole sequence (prompt + its output budget) and never
  // preempts (TensorRT-LLM's GUARANTEED_NO_EVICT); false: blocks as sequences grow, the newest
  // preempted when the cache is full (vLLM).
  bool reserve_full_sequence = false;
  KvBudget kv_budget = KvBudget::total_memory;
  double kv_memory_fraction = 0.9;
  int kv_block_tokens = 16;                   // paged-KV block: a sequence's last block is partly empty
  units::Bytes runtime_reserve;               // per GPU: CUDA context, CUDA graphs, NCCL and allocator slack
  units::Seconds step_overhead;               // host time per engine step the GPU waits for (schedule, inputs, sampling)
  bool cuda_graphs = true;                    // decode steps replayed from CUDA graphs
  units::Seconds kernel_gap;                  // per kernel inside a CUDA graph (launch latency replaced)
  // Speed of the engine's GEMM kernels for each weight format relative to the roofline of that
  // format (1: as fast as the bytes and FLOPs allow at cuBLAS efficiency), dense and MoE layers.
  std::array<double, kWeightFormats> quant_efficiency{1, 1, 1, 1, 1, 1};
  std::array<double, kWeightFormats> quant_moe_efficiency{1, 1, 1, 1, 1, 1};
  std::string source;
};

// The datasheet model's assumptions as an engine runs: with CUDA graphs a kernel costs its gap,
// not a host launch.
DatasheetAssumptions serving_assumptions(const EngineSpec& e, DatasheetAssumptions base = {});

// Request lengths in tokens: log-normal with the given mean and 95th percentile (p95 <= mean:
// every request has the mean).
struct LengthDistribution {
  double mean = 0;
  double p95 = 0;
  double sigma() const;             // of the underlying normal; 0 when fixed
  double quantile(double q) const;  // q in (0, 1)
  bool fixed() const { return sigma() <= 0; }
};

enum class Arrival {
  poisson,      // open loop at `rate` requests/s
  closed_loop,  // `concurrency` clients, each sending its next request when the last one ends
  offline,      // every request queued at time 0 (max-throughput benchmarks)
};
struct Traffic {
  Arrival arrival = Arrival::poisson;
  double rate = 0;         // requests/s (poisson)
  int concurrency = 0;     // clients (closed_loop)
  std::int64_t requests = 0;  // requests to simulate (0: enough for stable percentiles)
  LengthDistribution input, output;
  double prefix_hit = 0;   // share of prompt tokens served from the prefix cache, [0, 1)
  // Share of the peak rate per hour of the day (24 values, the peak is 1); empty: flat.
  std::vector<double> hourly_load;
};

// Targets at `percentile` (zero: no target).
struct Slo {
  units::Seconds ttft;  // time to first token
  units::Seconds tpot;  // time per output token after the first (inter-token latency)
  units::Seconds e2e;   // end-to-end request latency
  double percentile = 0.95;
  bool any() const { return ttft.base() > 0 || tpot.base() > 0 || e2e.base() > 0; }
};

struct ServeJob {
  ModelSpec model;
  WeightFormat weights = WeightFormat::bf16;
  Precision kv = Precision::bf16;  // bf16, fp16 or fp8
  EngineSpec engine;
  int tp = 1;
  int pp = 1;
  int ep = 1;  // 1: every expert split over the TP ranks; tp: whole experts per rank
  Traffic traffic;
  Slo slo;
  double headroom = 0.2;  // replicas planned so the peak rate is at most (1 - headroom) of one's limit
  // How the GPUs are bought (price_plan): on demand, billed per instance-hour used, so an hourly
  // load profile's troughs are saved; reserved or owned capacity is held at the peak all month.
  // Spot is not offered to a latency-bound service (serve_purchase_unsupported).
  PricingTerms pricing;
  int gpus() const { return tp * pp; }
};

// Why the job's purchase terms cannot price a serving plan (serve_purchase_unsupported), if so.
std::optional<Finding> check_serve_purchase(const PricingTerms& pricing);
// The inputs a serving plan's monthly cost needs under `pricing` that are not given (scenario
// fields, such as "pricing.reserved.usd_per_gpu_hour"); "pricing.usd_per_gpu_hour" when on demand
// without a price on `c`. Empty: the cost is known.
std::vector<std::string> serve_cost_missing(const PricingTerms& pricing, const Cluster& c);

// Why a job cannot be served as asked (a serve_* finding; empty: it can).
std::optional<Finding> check_serve_job(const ServeJob& job, const Cluster& c);

// Per GPU of the replica (the most loaded pipeline stage).
struct ReplicaMemory {
  units::Bytes capacity;     // HBM
  units::Bytes weights;
  units::Bytes activations;  // the engine's profiled peak forward at max_num_batched_tokens
  units::Bytes reserve;
  units::Bytes kv_budget;    // what is left for the KV cache (0 when the weights do not fit)
  double kv_bytes_per_token = 0;  // per GPU, all the stage's attention layers
  std::int64_t kv_tokens = 0;     // tokens the cache holds
  int max_sequences = 0;          // concurrent sequences of the mean length that fit (<= max_num_seqs)
  bool fits() const { return kv_tokens > 0; }
};
// KV-cache bytes per token that a serving pass's ops (build_pass_ops of `tokens` tokens) leave
// on one GPU running `layers` of each scope: the fold of their cache writes (MemoryOp::kept) over
// those layers. The op list's cache write is the one formula of the KV cache: 2 x the rank's KV
// heads (ceil(kv_heads / tp): replicated when tp exceeds them) x d per attention layer for
// GQA/MHA, MLA's latent plus its RoPE key whole on every rank.
double kept_bytes_per_token(const StepOps& ops, const PerScope<int>& layers, double tokens);
// The whole model on one GPU (all attention layers, tp 1); Llama 3.1 8B in bf16: 128 KiB.
double kv_bytes_per_token(const ModelSpec& m, double element_bytes);
ReplicaMemory replica_memory(const ServeJob& job, const Cluster& c);

// One engine step's time on a replica, from the pass op list priced by `cost`, tabulated so a
// simulation prices a step in O(1): the non-attention ops over the step's tokens, prefill
// attention over its query-key work, decode attention over its sequences and cached tokens,
// logits over the sampled rows, and the engine's step overhead.
struct StepLoad {
  std::int64_t prefill_tokens = 0;
  double prefill_work = 0;  // sum over prefill tokens of the keys each attends to
  int decode_sequences = 0;
  double decode_context = 0;  // sum over decoding sequences of their cached tokens
  int logits_rows = 0;
};
class PassModel {
 public:
  PassModel(const ServeJob& job, const Cluster& c, const OpCostModel& cost);
  double step(const StepLoad& load) const;  // seconds
  // One prompt of `tokens` alone (no cache hit), its first token included.
  double prefill(std::int64_t tokens) const;
  // One decode step of `batch` sequences at mean context `context`.
  double decode(int batch, double context) const;
  // Steps that only decode `sequences` sequences, as a line in their cached tokens: at(context)
  // is step() of that load, with the lookups done once. A run of k such steps from `context`, the
  // cache growing by `growth` tokens a step, takes time(context, growth, k) (an arithmetic series);
  // steps_to() is the fewest such steps that take at least `span` seconds, at most `cap`.
  struct DecodeLine {
    double fixed = 0, per_seq = 0, per_token = 0;
    double at(double context) const { return fixed + (per_seq + per_token * context); }
    double time(double context, double growth, std::int64_t k) const;
    std::int64_t steps_to(double context, double growth, double span, std::int64_t cap) const;
  };
  DecodeLine decode_line(int sequences) const;
  std::int64_t max_tokens() const { return max_tokens_; }
  // The parts of one step (tests and the explanation): FLOPs and the HBM bytes of its ops.
  double overhead() const { return overhead_; }

 private:
  double base(double tokens) const;
  double logits(double rows) const;
  // y interpolated on grid_ at v; `at`: y at each whole count.
  double table(const std::vector<double>& y, const std::vector<double>& at, double v) const;
  std::vector<double> grid_, base_, logits_;
  std::vector<double> base_at_, logits_at_;  // base_ and logits_ at every whole count to the grid's end
  double prefill_fixed_ = 0, prefill_per_work_ = 0;
  double decode_fixed_ = 0, decode_per_seq_ = 0, decode_per_token_ = 0;
  double overhead_ = 0;
  std::int64_t max_tokens_ = 1;
};

// The passes a replica of `job` runs, as op lists (calibration measures their GEMMs: `capplan
// calibrate --for-scenario` on a serve scenario): decode steps of 1, 8, 32, 128 and max_num_seqs
// sequences at the traffic's mean context (prompt plus half the output), and one prefill chunk of
// the engine's token budget (max_num_batched_tokens) with its first token's logits.
std::vector<StepOps> serving_passes(const ServeJob& job, const Cluster& c);

struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  double at(double percentile) const;  // p50/p90/p95/p99 or interpolated between them
};
LatencyStats latency_stats(std::vector<double> samples);

// What a replica does under the traffic (both paths fill the same fields).
struct ServeLoad {
  LatencyStats ttft, tpot, e2e;   // seconds
  double output_tokens_per_s = 0; // generated tokens per second, the whole replica
  double total_tokens_per_s = 0;  // prompt + generated
  double requests_per_s = 0;
  double mean_batch = 0;          // decoding sequences per step
  double mean_step_s = 0;
  double prefill_share = 0;       // share of GPU time spent on prompt tokens
  std::int64_t requests = 0;      // measured (after warm-up)
  std::int64_t preemptions = 0;
  bool saturated = false;         // the replica cannot keep up: the queue grows without bound
  std::string limit;              // what caps the batch: "max_num_seqs", "kv_cache" or "" (the rate)
};

// Discrete-event simulation of the engine's continuous batching: arrivals, a scheduler that runs
// every decoding sequence and fills the rest of the token budget with prompt chunks (first come,
// first served), KV blocks allocated as sequences grow, the newest sequence preempted (and
// recomputed later) when the cache is full. O(log n) per request plus O(1) per step.
ServeLoad simulate(const ServeJob& job, const PassModel& pass, const ReplicaMemory& memory, std::uint64_t seed = 1);
// The same run, stopped as soon as its measured requests make a miss of the job's SLO certain
// (some target's percentile is over it whatever the rest do): nothing then, else simulate()'s
// load. For a planner that needs only the verdict of a load that misses, not its figures.
std::optional<ServeLoad> simulate_unless_missed(const ServeJob& job, const PassModel& pass, const ReplicaMemory& memory,
                                                std::uint64_t seed = 1);
// Closed form for search: the decode batch B and step time tau at the fixed point B = rate *
// output * tau(B) (Little's law), the prompt tokens each step carries, latency percentiles from
// the length distributions' quantiles. Checked against simulate() in tests.
ServeLoad steady_state(const ServeJob& job, const PassModel& pass, const ReplicaMemory& memory);

// The capacity plan for the job's rate at its SLO.
struct ServePlan {
  ReplicaMemory memory;
  double max_rate = 0;          // requests/s one replica serves within the SLO
  std::string binding;          // what sets max_rate: "ttft", "tpot", "e2e", "kv_cache", "max_num_seqs", "throughput"
  ServeLoad at_rate;            // one replica at its share of the peak rate (simulated)
  int replicas = 0;             // at the peak rate, with headroom
  int gpus = 0;
  int instances = 0;            // nodes of gpus_per_node GPUs (replicas packed, none split across nodes)
  double gpu_hours_per_month = 0;  // used, under the hourly load profile
  // GPU-hours a month the purchase pays for: the used ones on demand; reserved and owned capacity
  // is held at the peak instances every hour (troughs of a reserved pool billed at its idle rate).
  double billed_gpu_hours_per_month = 0;
  std::optional<double> usd_per_gpu_hour;  // the rate the used GPU-hours are billed at
  // Under an hourly load profile (Traffic::hourly_load, Poisson arrivals): the replicas and
  // instances each hour of the day needs (0 to 23; empty without a profile), and the month's cost
  // with the peak's instances held every hour, which scaling saves the difference to.
  std::vector<int> replicas_by_hour;
  std::vector<int> instances_by_hour;
  std::optional<double> usd_per_month_without_scaling;
  std::optional<double> usd_per_month;
  std::optional<double> usd_per_million_input;
  std::optional<double> usd_per_million_output;
  bool feasible = false;
  std::optional<Finding> reason;  // why not, when not feasible (a serve_* finding)
};
// `confirm` false: the closed form alone (no simulation), for a search over many layouts and
// offerings that confirms only the ones it keeps (the at_rate load is then steady_state's).
ServePlan plan_serving(const ServeJob& job, const Cluster& c, const OpCostModel& cost, bool confirm = true);
// The plan's instances, GPU-hours per month and costs for `c` (its GPUs per node and price): what
// plan_serving does last, apart so that one replica plan can be priced on several offerings of
// the same GPU. Leaves an infeasible plan as it is.
void price_plan(ServePlan& plan, const ServeJob& job, const Cluster& c);

// The latency-throughput curve of one replica: the simulation at Poisson rates from a tenth of the
// replica's offline ceiling (its full-batch throughput) up to `beyond` times it, `points` of them
// evenly spaced, plus the plan's max_rate when it has one, in increasing order. Past the ceiling the
// points are saturated (the queue grows: their latencies are those of a finite simulation, a lower
// bound). Empty when the replica holds no KV cache or `points` < 2.
struct CurvePoint {
  double rate = 0;  // requests/s offered
  ServeLoad load;
};
std::vector<CurvePoint> latency_curve(const ServeJob& job, const Cluster& c, const OpCostModel& cost,
                                      const ServePlan& plan, int points = 12, double beyond = 1.1);

}  // namespace capplan::sim
