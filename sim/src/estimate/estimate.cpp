// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/estimate/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "capplan/sim/estimate/global_batch.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "schedule/step_timing.hpp"

namespace capplan::sim {

namespace {

// The layout checks, written once. `sink.fail(reason, field, finding)` receives each failed rule;
// `finding` is a callable that builds its coded finding (data/findings.hpp words it), called only
// by a sink that keeps one (the planner's precheck never builds one). An empty field names the
// strategy as a whole. The rules run in groups, in the order their failures are reported.
using R = LayoutReason;
using C = FindingCode;

// The finding of a rule on strategy field `field`, with its numbers.
Finding coded(C code, const char* field, std::initializer_list<std::pair<std::string_view, double>> numbers) {
  return finding(code, *field ? std::string("strategy.") + field : std::string("strategy"), numbers);
}

// Every degree at least one and ZeRO a stage that exists; false when a degree is not positive
// (the other rules divide by them).
template <class Sink>
bool check_degrees(const Parallelism& p, Sink& sink) {
  bool ok = true;
  auto positive = [&](const char* field, int v) {
    if (v < 1) {
      sink.fail(R::not_positive, field, [&] { return coded(C::layout_not_positive, field, {{"got", v}}); });
      ok = false;
    }
  };
  positive("tp", p.tp);
  positive("pp", p.pp);
  positive("dp", p.dp);
  positive("cp", p.cp);
  positive("ep", p.ep);
  positive("etp", p.etp);
  positive("micro_batch", p.micro_batch);
  positive("virtual_stages", p.virtual_stages);
  if (p.zero < 0 || p.zero > 3) {
    sink.fail(R::zero_out_of_range, "zero", [&] { return coded(C::layout_zero_out_of_range, "zero", {{"got", p.zero}}); });
  }
  return ok;
}

// Expert parallelism: only for MoE models, dividing the experts and the ranks they spread over.
template <class Sink>
void check_experts(const ModelSpec& m, const Parallelism& p, Sink& sink) {
  if (p.etp > 1 && !m.is_moe()) {
    sink.fail(R::experts_need_moe, "etp", [&] { return coded(C::layout_etp_needs_moe, "etp", {{"got", p.etp}}); });
  }
  if (p.etp > 1 && m.is_moe() && m.moe.expert_ffn_hidden % p.etp != 0) {
    sink.fail(R::etp_divides_expert_ffn, "etp", [&] {
      return coded(C::layout_etp_divides_expert_ffn, "etp", {{"expert_ffn_hidden", m.moe.expert_ffn_hidden}, {"got", p.etp}});
    });
  }
  if (p.ep > 1 && !m.is_moe()) {
    sink.fail(R::experts_need_moe, "ep", [&] { return coded(C::layout_ep_needs_moe, "ep", {{"got", p.ep}}); });
  }
  if (m.is_moe()) {
    const long long ranks = 1LL * p.tp * p.dp * p.cp;
    if (m.moe.experts % p.ep != 0) {
      sink.fail(R::ep_divides_experts, "ep", [&] {
        return coded(C::layout_ep_divides_experts, "ep", {{"experts", m.moe.experts}, {"got", p.ep}});
      });
    }
    if (ranks % (1LL * p.ep * p.etp) != 0) {
      // Megatron-Core spreads the experts over the same ranks as tp*dp*cp.
      sink.fail(R::ep_divides_ranks, "ep", [&] {
        return coded(C::layout_ep_divides_ranks, "ep",
                     {{"ranks", static_cast<double>(ranks)}, {"ep", p.ep}, {"etp", p.etp}});
      });
    }
    if (p.tp > 1 && !p.sequence_parallel) {
      sink.fail(R::moe_tp_needs_sequence_parallel, "sequence_parallel",
                [&] { return coded(C::layout_moe_tp_needs_sequence_parallel, "sequence_parallel", {}); });
    }
  }
}

// Module recompute and parameter offload: the combinations Megatron-Core and DeepSpeed accept.
template <class Sink>
void check_recompute_and_offload(const ModelSpec& m, const Parallelism& p, Sink& sink) {
  if ((p.recompute_norms || p.recompute_moe_act || p.recompute_moe) && p.recompute != Recompute::selective) {
    // Megatron-Core takes --recompute-modules only with --recompute-granularity selective.
    const char* field = p.recompute_norms ? "recompute_norms" : p.recompute_moe_act ? "recompute_moe_act" : "recompute_moe";
    sink.fail(R::module_recompute_needs_selective, field, [&] {
      Finding f = coded(C::layout_module_recompute_needs_selective, field, {});
      return with_text(f, "recompute", std::string(to_string(p.recompute)));
    });
  }
  if (p.offload_params && p.zero != 3) {
    // ZeRO-Infinity's offload_param and FSDP's CPU offload move parameter shards: ZeRO-3 only.
    sink.fail(R::offload_params_needs_zero3, "offload_params", [&] {
      return coded(C::layout_offload_params_needs_zero3, "offload_params", {{"zero", p.zero}});
    });
  }
  if ((p.recompute_moe_act || p.recompute_moe) && !m.is_moe()) {
    const char* field = p.recompute_moe_act ? "recompute_moe_act" : "recompute_moe";
    sink.fail(R::experts_need_moe, field, [&] { return coded(C::layout_moe_act_recompute_needs_moe, field, {}); });
  }
}

// The model's dimensions divided by the degrees that split them, and the degrees' product the GPUs.
template <class Sink>
void check_splits(const Scenario& s, const Parallelism& p, Sink& sink) {
  const ModelSpec& m = s.model;
  if (p.cp > 1 && m.seq_len % (2 * p.cp) != 0) {
    // Megatron-Core splits each sequence into 2*cp chunks to balance the causal work.
    sink.fail(R::cp_divides_sequence, "cp",
              [&] { return coded(C::layout_cp_divides_sequence, "cp", {{"seq_len", m.seq_len}, {"cp", p.cp}}); });
  }
  if (m.heads % p.tp != 0) {
    sink.fail(R::tp_divides_heads, "tp",
              [&] { return coded(C::layout_tp_divides_heads, "tp", {{"heads", m.heads}, {"got", p.tp}}); });
  }
  if (m.ffn_hidden % p.tp != 0) {
    sink.fail(R::tp_divides_ffn, "tp",
              [&] { return coded(C::layout_tp_divides_ffn, "tp", {{"ffn_hidden", m.ffn_hidden}, {"got", p.tp}}); });
  }
  // Megatron-Core's layout: tp*pp*dp*cp ranks; experts are spread over the tp*dp*cp ranks.
  const long long product = 1LL * p.tp * p.pp * p.dp * p.cp;
  if (product != s.cluster.gpus) {
    sink.fail(R::product_is_not_the_gpus, "", [&] {
      return coded(C::layout_product_is_not_the_gpus, "",
                   {{"gpus", s.cluster.gpus},
                    {"tp", p.tp},
                    {"pp", p.pp},
                    {"dp", p.dp},
                    {"cp", p.cp},
                    {"product", static_cast<double>(product)}});
    });
  }
}

// Megatron-Core's --decoder-first/last-pipeline-num-layers: the other stages share the rest.
template <class Sink>
void check_stage_layers(const ModelSpec& m, const Parallelism& p, Sink& sink) {
  const char* field = p.first_stage_layers != 0 ? "first_stage_layers" : "last_stage_layers";
  const int first = std::max(0, p.first_stage_layers), last = std::max(0, p.last_stage_layers);
  const int middle = p.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  const int rest = m.layers - first - last;
  if (p.first_stage_layers < 0 || p.last_stage_layers < 0) {
    const char* negative = p.first_stage_layers < 0 ? "first_stage_layers" : "last_stage_layers";
    sink.fail(R::stage_layers_invalid, negative, [&] {
      return coded(C::layout_stage_layers_negative, negative,
                   {{"got", std::min(p.first_stage_layers, p.last_stage_layers)}});
    });
  } else if (p.pp < 2) {
    sink.fail(R::stage_layers_invalid, field,
              [&] { return coded(C::layout_stage_layers_need_pipeline, field, {{"pp", p.pp}}); });
  } else if (middle == 0 ? rest != 0 : rest < middle * std::max(1, p.virtual_stages)) {
    sink.fail(R::stage_layers_invalid, field, [&] {
      return coded(middle == 0 ? C::layout_stage_layers_leave_none : C::layout_stage_layers_leave_too_few, field,
                   {{"first", first}, {"last", last}, {"layers", m.layers}, {"middle", middle}});
    });
  } else if ((first > 0 && first < p.virtual_stages) || (last > 0 && last < p.virtual_stages)) {
    sink.fail(R::stage_layers_invalid, field, [&] {
      return coded(C::layout_stage_layers_below_virtual, field, {{"virtual_stages", p.virtual_stages}});
    });
  }
}

// The pipeline: stages (and their virtual chunks) no more than the layers, uneven stages set
// consistently, interleaving only with a pipeline.
template <class Sink>
void check_pipeline(const ModelSpec& m, const Parallelism& p, Sink& sink) {
  if (p.pp > m.layers) {
    sink.fail(R::pipeline_exceeds_layers, "pp",
              [&] { return coded(C::layout_pp_exceeds_layers, "pp", {{"layers", m.layers}, {"got", p.pp}}); });
  } else if (1LL * p.pp * p.virtual_stages > m.layers) {
    sink.fail(R::pipeline_exceeds_layers, "virtual_stages", [&] {
      return coded(C::layout_stages_exceed_layers, "virtual_stages",
                   {{"layers", m.layers}, {"pp", p.pp}, {"virtual_stages", p.virtual_stages}});
    });
  }
  if (p.first_stage_layers != 0 || p.last_stage_layers != 0) check_stage_layers(m, p, sink);
  if (p.virtual_stages > 1 && p.pp == 1) {
    sink.fail(R::interleaving_needs_pipeline, "virtual_stages", [&] {
      return coded(C::layout_interleaving_needs_pipeline, "virtual_stages", {{"got", p.virtual_stages}});
    });
  }
}

// The global batch splits into whole micro-batches on every data-parallel rank.
template <class Sink>
void check_batch(const Scenario& s, const Parallelism& p, Sink& sink) {
  const long long per_step = 1LL * p.micro_batch * p.dp;
  if (s.training.global_batch % per_step != 0) {
    sink.fail(R::batch_not_divisible, "micro_batch", [&] {
      return coded(C::layout_batch_not_divisible, "micro_batch",
                   {{"global_batch", static_cast<double>(s.training.global_batch)},
                    {"micro_batch", p.micro_batch},
                    {"dp", p.dp},
                    {"per_step", static_cast<double>(per_step)}});
    });
  }
}

template <class Sink>
void run_layout_checks(const Scenario& s, const Parallelism& p, Sink& sink) {
  if (!check_degrees(p, sink)) return;
  check_experts(s.model, p, sink);
  check_recompute_and_offload(s.model, p, sink);
  check_splits(s, p, sink);
  check_pipeline(s.model, p, sink);
  check_batch(s, p, sink);
}

struct CodeSink {
  LayoutCheck check;
  template <class Coded>
  void fail(LayoutReason r, const char*, Coded&&) {
    check.reasons |= 1u << static_cast<unsigned>(r);
  }
};

struct DiagnosticSink {
  Diagnostics d;
  template <class Coded>
  void fail(LayoutReason, const char* field, Coded&& coded) {
    const std::string where = *field ? std::string("scenario#/strategy/") + field : std::string("scenario#/strategy");
    d.push_back({Diagnostic::Severity::error, where, {}, coded()});
  }
};

}  // namespace

LayoutCheck precheck_layout(const Scenario& s, const Parallelism& p) {
  CodeSink sink;
  run_layout_checks(s, p, sink);
  return sink.check;
}

Diagnostics check_layout(const Scenario& s, const Parallelism& p) {
  DiagnosticSink sink;
  run_layout_checks(s, p, sink);
  return std::move(sink.d);
}

Estimate evaluate(const Scenario& s, const Parallelism& p, const OpCostModel& cost) {
  // One op list: time, memory and FLOPs are folds over it.
  const StepOps ops = build_step_ops(s.model, s.training, p, s.cluster);
  OpBuckets buckets;
  add_op_costs(buckets, ops.ops, cost);
  const std::vector<StageRun> runs = stage_runs(s.model, p);  // one per layout: time and memory visit them
  const StepTiming timing = schedule_step(s, p, buckets, ops.stage_params, runs);
  Estimate e;
  e.layout.strategy = p;
  e.layout.micro_batches = timing.micro_batches;
  e.step.breakdown = timing.breakdown;
  e.step.time = e.step.breakdown.total();
  e.memory = memory_per_gpu(activation_footprint(ops.ops), runs, s.model, s.training, p, s.cluster.gpu,
                            timing.micro_batches);
  e.step.cost_model = cost.source();
  e.step.flops = step_flops(ops, s.model, p, s.training.global_batch);

  const double gpus = s.cluster.gpus;
  const double step = e.step.time.base();
  const double tokens_per_step = static_cast<double>(s.training.global_batch) * s.model.seq_len;
  e.step.tokens_per_s = tokens_per_step / step;
  e.step.model_flops_per_gpu = e.step.flops.model / e.step.time / gpus;
  const units::FlopsPerSecond peak = s.cluster.gpu.peak.for_precision(s.training.precision);
  e.step.mfu = peak.base() > 0 ? e.step.model_flops_per_gpu / peak : 0.0;
  const units::FlopsPerSecond bf16 =
      s.cluster.gpu.peak.bf16.base() > 0 ? s.cluster.gpu.peak.bf16 : s.cluster.gpu.peak.fp16;
  e.step.mfu_bf16_peak = bf16.base() > 0 ? e.step.model_flops_per_gpu / bf16 : 0.0;
  e.step.hfu = peak.base() > 0 ? (e.step.flops.hardware / e.step.time / gpus) / peak : 0.0;
  e.totals.steps = training_steps(s);
  e.totals.time_to_train = e.step.time * e.totals.steps;
  e.totals.gpu_hours = gpus * units::to_hours(e.totals.time_to_train);
  e.totals.price_per_gpu = s.cluster.price_per_gpu;
  if (s.cluster.price_per_gpu) e.totals.cost = *s.cluster.price_per_gpu * e.totals.time_to_train * gpus;

  // Findings: things that are allowed but that a user should know (worded by the front ends).
  using F = FindingCode;
  auto warn = [&](FindingCode code, const char* field, std::initializer_list<std::pair<std::string_view, double>> v = {}) {
    e.findings.push_back(finding(code, field, v));
  };
  if (auto one_replica = batch_forces_one_replica(s)) e.findings.push_back(std::move(*one_replica));
  if (p.first_stage_layers == 0 && p.last_stage_layers == 0 && s.model.layers % (p.pp * p.virtual_stages) != 0) {
    warn(F::uneven_stages, "strategy.pp", {{"layers", s.model.layers}, {"stages", p.pp * p.virtual_stages}});
  }
  if (p.tp > s.cluster.gpus_per_node) {
    warn(F::tp_wider_than_node, "strategy.tp", {{"tp", p.tp}, {"gpus_per_node", s.cluster.gpus_per_node}});
  }
  if (p.sequence_parallel && p.tp == 1) warn(F::sequence_parallel_without_tp, "strategy.sequence_parallel");
  if (p.virtual_stages > 1 && timing.micro_batches % p.pp != 0) {
    warn(F::interleave_micro_batches, "strategy.virtual_stages", {{"micro_batches", timing.micro_batches}, {"pp", p.pp}});
  }
  if (p.zero >= 2 && p.pp > 1) warn(F::zero_with_pipeline, "strategy.zero", {{"zero", p.zero}, {"pp", p.pp}});
  if (p.pp > 1 && timing.micro_batches < p.pp) {
    warn(F::pipeline_never_fills, "strategy.pp", {{"micro_batches", timing.micro_batches}, {"pp", p.pp}});
  }
  if (p.host_optimizer()) {
    // The op list's CPU step: its bytes give the rank's shard (TrainingJob::adam_step_bytes per
    // parameter); the host holds the optimizer state and gradients of that shard, and the 16-bit
    // parameters too when they are offloaded. The host rate is the one the cost model priced it at.
    double host_step_bytes = 0, host_step_s = 0;
    for (const StepOp& so : ops.ops) {
      if (const auto* mo = std::get_if<MemoryOp>(&so.op); mo != nullptr && mo->link == MemoryLink::host) {
        host_step_bytes += mo->bytes.base() * so.count;
        host_step_s += cost.cost(so.op).base() * so.count;
      }
    }
    const TrainingJob& job = s.training;
    const double shard = host_step_bytes / job.adam_step_bytes();
    const double per_gpu = shard * (job.optimizer_state_bytes() + job.gradient_bytes() +
                                    (p.offload_params ? job.gathered_param_bytes() : 0.0));
    const int ranks_on_host = std::max(1, std::min(s.cluster.gpus, s.cluster.gpus_per_node));
    warn(F::offload_host_step, "strategy.offload_optimizer",
         {{"optimizer_s", timing.breakdown.optimizer.base()},
          {"step_s", e.step.time.base()},
          {"host_gbps", host_step_s > 0 ? host_step_bytes * ranks_on_host / host_step_s / 1e9 : 0.0},
          {"host_gib", per_gpu * ranks_on_host / (1024.0 * 1024 * 1024)}});
  }
  if (timing.zero3_hooks_s > 0 && timing.breakdown.host.base() > 0) {
    // DeepSpeed's ZeRO-3 hooks on a step that waits for its host (schedule/step_timing.cpp).
    warn(F::zero3_hooks_host_bound, "strategy.zero",
         {{"hooks_s", timing.zero3_hooks_s},
          {"host_s", timing.breakdown.host.base()},
          {"step_s", e.step.time.base()},
          {"ms_per_layer", s.training.zero3_host_s_per_layer * 1e3}});
  }
  if (s.model.mamba.version == 1 && s.model.mamba_layer_count() > 0) {
    warn(F::mamba1_priced_as_mamba2, "model.mamba.version", {{"mamba_layers", s.model.mamba_layer_count()}});
  }
  if (!e.memory.fits()) {
    warn(F::does_not_fit, "", {{"need_gib", units::to_gib(e.memory.total())}, {"have_gib", units::to_gib(e.memory.capacity)}});
  }
  {
    const GoodputInputs in{&s.model, &s.training, &s.cluster, &s.reliability, &s.storage, &s.data, &s.pricing};
    e.goodput = compute_goodput(in, p, e.totals.time_to_train, e.step.time, e.step.tokens_per_s, e.findings);
  }
  if (!s.cluster.price_per_gpu && s.pricing.model == PurchaseModel::on_demand) warn(F::no_price, "pricing.usd_per_gpu_hour");
  return e;
}

}  // namespace capplan::sim

namespace capplan::sim {

namespace {

// Seconds one micro-batch's ops of the busiest stage (`sl`) spend in ops `pick` selects.
template <class Pick>
double stage_seconds(const std::vector<StepOp>& ops, const StageLayers& sl, const OpCostModel& cost, Pick pick) {
  double s = 0;
  for (const StepOp& o : ops) {
    if (!pick(o)) continue;
    s += cost.cost(o.op).base() * o.count * traits(o.scope).on_stage(sl);
  }
  return s;
}

// LoRA trades the frozen weights' gradient GEMMs for its adapters' ops. The adapters' GEMMs are
// rank r wide, so they are memory-bound passes over whole activations: the column-parallel
// linears' adapters read the sequence-gathered input and add their input gradient into the base's
// over it, the row-parallel ones write and add the full hidden width (Megatron-Core's
// ParallelLinearAdapter: linear_in a ColumnParallelLinear with gather_output, the sequence
// gathered before the adapters of linear_qkv and linear_fc1; S-LoRA, Sheng et al. 2023, Sec. 5:
// the low-rank GEMMs are memory-bound). Tensor parallelism splits the base GEMMs but not these
// passes, so on a wide TP layout the adapters can cost more than the weight gradients they skip.
// The figures compared are two evaluations of the same layout; the busiest stage's ops say why.
void note_lora_against_full(const Scenario& s, const Parallelism& p, const OpCostModel& cost, Estimate& e) {
  if (s.training.finetune.method != TuneMethod::lora) return;
  Scenario full = s;
  full.training.finetune.method = TuneMethod::full;
  const Estimate f = evaluate(full, p, cost);
  if (!(e.step.time.base() > f.step.time.base())) return;
  const StepOps lora_ops = build_step_ops(s.model, s.training, p, s.cluster);
  const StepOps full_ops = build_step_ops(full.model, full.training, p, full.cluster);
  StageLayers busiest;
  double adapter = -1;
  for (const StageRun& run : stage_runs(s.model, p)) {
    const double a = stage_seconds(lora_ops.ops, run.layers, cost, [](const StepOp& o) { return o.role == OpRole::adapter; });
    if (a > adapter) adapter = a, busiest = run.layers;
  }
  auto backward_linear = [](const StepOp& o) {
    return o.role == OpRole::linear && o.phase == Phase::backward && std::holds_alternative<GemmOp>(o.op);
  };
  // The dgrad GEMMs are the same in both lists: what is left is the weight gradients LoRA skips.
  const double skipped = stage_seconds(full_ops.ops, busiest, cost, backward_linear) -
                         stage_seconds(lora_ops.ops, busiest, cost, backward_linear);
  const double micro_batches = e.layout.micro_batches;
  e.findings.push_back(finding(FindingCode::lora_adapters_cost_more_than_skipped_gradients, "workload.method",
                               {{"lora_step_s", e.step.time.base()},
                                {"full_step_s", f.step.time.base()},
                                {"adapter_s", adapter * micro_batches},
                                {"skipped_s", std::max(0.0, skipped) * micro_batches},
                                {"rank", static_cast<double>(s.training.finetune.lora_rank)},
                                {"tp", p.tp}}));
}

}  // namespace

Estimate evaluate_and_explain(const Scenario& s, const Parallelism& p, const OpCostModel& cost) {
  Estimate e = evaluate(s, p, cost);
  note_lora_against_full(s, p, cost, e);
  return e;
}

}  // namespace capplan::sim
