// SPDX-License-Identifier: Apache-2.0
#include "schedule/step_timing.hpp"

#include <algorithm>
#include <vector>

#include "capplan/sim/folds/memory.hpp"
#include "capplan/sim/lowering/step_model.hpp"
#include "capplan/sim/workload/variability.hpp"

namespace capplan::sim {

namespace {

// Megatron-LM's DDP bucket: 40M parameters (or 1M x dp when larger); with overlap, the
// reduction of all but the last bucket hides behind the backward pass.
double bucket_params(int dp) { return std::max(40e6, 1e6 * dp); }

// One parameter tensor of a layer as ZeRO-3 gathers it: its gather time, the compute of its
// submodule in the pass, and its elements on this rank.
struct Gathered {
  double gather = 0, compute = 0, params = 0;
};

// Time a pass over `layers` repetitions of `subs` spends beyond its compute, per layer in steady
// state, when each submodule waits for its own parameters and, once they are there, issues the
// gathers of the tensors after it until `prefetch` elements are in flight (at least one tensor:
// DeepSpeed's PartitionedParameterCoordinator.fetch_sub_module). Gathers run one after another on
// the communication stream.
double prefetch_pass_exposed(const std::vector<Gathered>& subs, double prefetch) {
  constexpr int kLayers = 4;  // layers 0-1 warm up; layers 2-3 are the steady state
  const std::size_t n = subs.size();
  const std::size_t total = n * kLayers;
  std::vector<double> done(total, -1.0);
  double t = 0, comm = 0, steady_start = 0;
  const auto issue = [&](std::size_t j) {
    const double start = std::max(t, comm);
    done[j] = start + subs[j % n].gather;
    comm = done[j];
  };
  for (std::size_t i = 0; i < total; ++i) {
    if (i == 2 * n) steady_start = t;
    if (done[i] < 0) issue(i);
    t = std::max(t, done[i]);
    double in_flight = 0;
    for (std::size_t j = i + 1; j < total && in_flight < prefetch; ++j) {
      if (done[j] >= 0) continue;
      issue(j);
      in_flight += subs[j % n].params;
    }
    t += subs[i % n].compute;
  }
  double compute = 0;
  for (const Gathered& g : subs) compute += g.compute;
  return std::max(0.0, (t - steady_start) / 2.0 - compute);
}

// ZeRO-3 gathers of a dense layer with a bounded prefetch (TrainingJob::zero3_prefetch_params):
// the layer's four weight tensors (QKV, output projection, FFN in, FFN out) in the order the
// forward runs them and reversed in backward, each gather and compute the layer's share by
// elements, the attention core between QKV and the projection. Forward: the gathers of the
// forward pass; backward: those of the backward pass (with recompute, the recomputed forward's)
// over the recompute and backward compute, plus the gradient reduce-scatters, which overlap
// backward but share the link (so never less than what does not fit in it). Where the framework
// gathers once more for the recomputed forward (Bucket::fsdp_regather), that gather is a pass
// of its own over the recompute compute, in forward order, and backward keeps its own gathers.
double bounded_prefetch_exposed(const ModelSpec& m, int tp, double prefetch, const Bucket& layer, const Bucket& ffn,
                                double slowdown) {
  const double h = static_cast<double>(m.hidden), d = static_cast<double>(m.head_dim());
  const double qkv = h * (m.heads + 2.0 * m.kv_heads) * d / tp, proj = m.heads * d * h / tp;
  const double f = static_cast<double>(m.ffn_hidden);
  const double ffn_in = (m.gated_ffn ? 2.0 : 1.0) * f * h / tp, ffn_out = f * h / tp;
  const double attn_params = qkv + proj, ffn_params = ffn_in + ffn_out;
  const double gathers = layer.fsdp_gather + ffn.fsdp_gather;
  const double regather = layer.fsdp_regather + ffn.fsdp_regather;
  const double reduce = layer.fsdp + ffn.fsdp - gathers;
  const double all_params = attn_params + ffn_params;
  // Per pass: half the other gathers (one forward, one backward); compute split forward / backward.
  const double half = (gathers - regather) / 2;
  const double attn_fwd = layer.compute - layer.backward, ffn_fwd = ffn.compute - ffn.backward;
  const double core_fwd = layer.compute > 0 ? layer.attention * attn_fwd / layer.compute : 0.0;
  const double core_bwd = layer.attention - core_fwd;
  const auto pass = [&](double g, double attn_c, double core_c, double ffn_c, bool reverse) {
    const double linear_c = std::max(0.0, attn_c - core_c);
    std::vector<Gathered> subs = {
        {g * qkv / all_params, linear_c * qkv / attn_params + core_c, qkv},
        {g * proj / all_params, linear_c * proj / attn_params, proj},
        {g * ffn_in / all_params, ffn_c * ffn_in / ffn_params, ffn_in},
        {g * ffn_out / all_params, ffn_c * ffn_out / ffn_params, ffn_out}};
    if (reverse) std::reverse(subs.begin(), subs.end());
    return prefetch_pass_exposed(subs, prefetch);
  };
  const double fwd = std::max(pass(half, attn_fwd, core_fwd, ffn_fwd, false), half - attn_fwd - ffn_fwd);
  double re = 0, bwd_layer = layer.backward, bwd_ffn = ffn.backward, bwd_core = core_bwd;
  if (regather > 0) {
    // The recomputed forward: its compute is the layer's recompute part, its core the forward's share.
    const double core_re = layer.compute > 0 ? layer.attention * layer.recompute / layer.compute : 0.0;
    re = std::max(pass(regather, layer.recompute, core_re, ffn.recompute, false),
                  regather - layer.recompute - ffn.recompute);
    bwd_layer -= layer.recompute;
    bwd_ffn -= ffn.recompute;
    bwd_core = std::max(0.0, core_bwd - core_re);
  }
  const double bwd_compute = bwd_layer + bwd_ffn;
  const double bwd = std::max(pass(half, bwd_layer, bwd_core, bwd_ffn, true), half + reduce - bwd_compute);
  const double comm = gathers + reduce;
  return fwd + re + bwd + slowdown * std::max(0.0, comm - fwd - re - bwd);
}

// The once-per-step scopes: the gradient reduction (and ZeRO-1/2 gathers) and the optimizer step.
void add_step_cost(OpBuckets& into, const StepOp& so, double t) {
  if (so.scope == Scope::optimizer) {
    into.optimizer += t;
    return;
  }
  const auto& c = std::get<CollectiveOp>(so.op);
  if (c.axis == Axis::pp) {
    into.dp_sync += t;  // the tied embedding's sync across stages: serial, never overlapped
    return;
  }
  into.dp_step += t;
  if (c.kind != CollectiveKind::all_gather) into.dp_grad += t;
}

// An op of a per-micro-batch scope, into its scope's bucket.
void add_bucket_cost(Bucket& bucket, const StepOp& so, double t) {
  bucket.launches += so.count;
  if (so.role == OpRole::host_copy) {
    // An offloaded shard's copy runs on the gathers' stream (FSDP's copy-in before its
    // all-gather, the gradient shard out after its reduce-scatter): it overlaps compute as they do.
    bucket.fsdp += t;
    if (const auto* mo = std::get_if<MemoryOp>(&so.op); mo != nullptr && mo->link == MemoryLink::host_to_device) {
      bucket.fsdp_gather += t;
      if (so.phase == Phase::recompute) bucket.fsdp_regather += t;
    }
    return;
  }
  if (const auto* c = std::get_if<CollectiveOp>(&so.op)) {
    switch (c->axis) {
      case Axis::dp:
        bucket.fsdp += t;
        if (c->kind == CollectiveKind::all_gather) bucket.fsdp_gather += t;
        if (c->kind == CollectiveKind::all_gather && so.phase == Phase::recompute) bucket.fsdp_regather += t;
        break;
      case Axis::pp: bucket.pp += t; break;
      case Axis::ep: bucket.ep += t; break;
      case Axis::cp: bucket.cp += t; break;
      case Axis::tp: (so.tp_async ? bucket.tp_async : bucket.tp) += t; break;
    }
  } else {
    bucket.compute += t;
    if (so.phase == Phase::recompute) bucket.recompute += t;
    if (so.phase == Phase::backward || so.phase == Phase::recompute) bucket.backward += t;
    if (so.role == OpRole::attention_core) bucket.attention += t;
    if (so.tp_window) bucket.tp_window += t;
  }
}

// One stage's time per micro-batch, by kind.
struct StageTime {
  double total = 0, compute = 0, recompute = 0, backward = 0, tp = 0, pp = 0, fsdp = 0, ep = 0, cp = 0, host = 0,
         hooks = 0;
};

// What every stage of the step reads: the priced scopes, the overlap rules and the per-layer
// terms that do not depend on the stage.
struct ScheduleTerms {
  const Parallelism& p;
  const OpBuckets& buckets;
  // Overlapped communication: what does not fit behind the compute it overlaps is exposed, and
  // the compute it does overlap runs slower (TrainingJob::overlap_compute_slowdown, Lee et al.
  // 2025), charged to the communication that caused it.
  double slowdown = 0;
  // ZeRO-3 collectives of a non-hybrid layer (attention block and its FFN) left exposed, the
  // first layer's gathers of each pass (never hidden).
  double fsdp_dense_layer = 0, fsdp_moe_layer = 0, fsdp_head = 0;
  // Host issue time per op and DeepSpeed's ZeRO-3 hook time per layer.
  double host_per_op = 0, hook_s_per_layer = 0;
  // Expected slowdown of the job's slowest GPU (variability.hpp).
  double slow = 0;

  double exposed(double comm, double window) const {
    return std::max(0.0, comm - window) + slowdown * std::min(comm, window);
  }
  // Chunked TP overlap (userbuffers): the collective is split into tp chunks pipelined with the
  // neighbouring GEMM; the first chunk cannot hide.
  double tp_chunked(double comm, double gemm) const {
    if (!p.tp_comm_overlap || p.tp <= 1) return comm;
    const double first = comm / p.tp;
    return first + exposed(comm - first, gemm);
  }
  // A scope's TP time: its synchronous collectives beside its GEMMs (the attention core is not
  // one), and what of the asynchronous input-gradient collectives does not fit behind the
  // backward GEMMs they overlap (TrainingJob::tp_async_dgrad).
  double tp_exposed(const Bucket& bk) const {
    return tp_chunked(bk.tp, bk.compute - bk.attention) + exposed(bk.tp_async, bk.tp_window);
  }
};

ScheduleTerms schedule_terms(const Scenario& s, const Parallelism& p, const OpBuckets& buckets) {
  ScheduleTerms x{p, buckets};
  x.slowdown = s.training.overlap_compute_slowdown;
  // ZeRO-3 collectives of a layer overlap that layer's compute (prefetch).
  const Bucket& layer = buckets[Scope::layer];
  const Bucket& dense_ffn = buckets[Scope::dense_ffn];
  const Bucket& moe_ffn = buckets[Scope::moe_ffn];
  x.fsdp_dense_layer = s.training.zero3_prefetch_params > 0 && layer.fsdp + dense_ffn.fsdp > 0
                           ? bounded_prefetch_exposed(s.model, p.tp, s.training.zero3_prefetch_params, layer,
                                                      dense_ffn, x.slowdown)
                           : x.exposed(layer.fsdp + dense_ffn.fsdp, layer.compute + dense_ffn.compute);
  x.fsdp_moe_layer = x.exposed(layer.fsdp + moe_ffn.fsdp, layer.compute + moe_ffn.compute);
  x.fsdp_head = layer.fsdp > 0 ? (layer.fsdp + dense_ffn.fsdp) / 3.0 * 2.0 : 0.0;
  // Host issue time per op (kernel launch plus the framework's dispatch): the CPU runs ahead of
  // the GPU, so a micro-batch takes the longer of its GPU time and its host time. The framework's
  // figure, never below what the cost model knows one op's launch to take on the host.
  x.host_per_op = std::max(s.training.host_s_per_op, buckets.host_issue_s_per_op);
  // DeepSpeed's ZeRO-3 hooks (TrainingJob::zero3_host_s_per_layer): each layer's submodules run
  // them in the forward, in the backward and, when DeepSpeed releases the parameters after the
  // recomputed forward, in that forward too.
  const double hook_passes =
      2.0 + (p.recompute == Recompute::full && s.training.zero3_regather_recompute ? 1.0 : 0.0);
  x.hook_s_per_layer = p.zero == 3 ? s.training.zero3_host_s_per_layer * hook_passes : 0.0;
  // The step waits for its slowest GPU (variability.hpp): every stage's compute is stretched by
  // the expected slowdown of the slowest of the job's GPUs; so are the fill and drain.
  x.slow = slowest_gpu_slowdown(s.cluster.gpus, s.cluster.gpu_speed_spread);
  return x;
}

// The stage's layers, each kind's scope once per layer of that kind (kScopeTraits), then the
// embedding and output on the first and last stages. Returns the kernels the host issues.
double add_scope_times(StageTime& st, const ScheduleTerms& x, const StageLayers& sl) {
  double launches = 0;
  for_each_scope(Repeat::per_layer, [&](const ScopeTraits& t) {
    const Bucket& bk = x.buckets[t.scope];
    const double n = t.on_stage(sl);
    st.compute += n * bk.compute;
    st.recompute += n * bk.recompute;
    st.backward += n * bk.backward;
    st.tp += n * x.tp_exposed(bk);
    // Context-parallel exchanges hide behind the scope's attention core (ring attention); a
    // scope without one (Mamba's all-to-alls, which the scan waits for) exposes them.
    st.cp += n * x.exposed(bk.cp, bk.attention);
    // A layer that stands alone (a hybrid's, or a scope outside the transformer layer) has its
    // own ZeRO-3 gathers overlapping its own compute; a transformer layer's are stage_time's.
    if (sl.hybrid || !t.transformer_layer) st.fsdp += n * x.exposed(bk.fsdp, bk.compute);
    launches += n * bk.launches;
  });
  for (const Repeat edge : {Repeat::first_stage, Repeat::last_stage}) {
    for_each_scope(edge, [&](const ScopeTraits& t) {
      if (t.on_stage(sl) == 0) return;
      const Bucket& bk = x.buckets[t.scope];
      st.compute += bk.compute;
      st.backward += bk.backward;
      st.tp += bk.tp;
      launches += bk.launches;
    });
  }
  return launches;
}

// Layers of every kind on the stage (each runs its own ZeRO-3 hooks in a hybrid).
int stage_layer_total(const StageLayers& sl) {
  int n = 0;
  for_each_scope(Repeat::per_layer, [&](const ScopeTraits& t) { n += t.on_stage(sl); });
  return n;
}

// One micro-batch's time on a stage.
StageTime stage_time(const ScheduleTerms& x, const StageLayers& sl) {
  const Parallelism& p = x.p;
  const Bucket& layer = x.buckets[Scope::layer];
  const Bucket& moe_ffn = x.buckets[Scope::moe_ffn];
  const Bucket& pipeline = x.buckets[Scope::pipeline];
  StageTime st;
  const double launches = add_scope_times(st, x, sl);
  // EP overlap (Megatron-Core's combined 1F1B, DualPipe): one micro-batch's dispatch and combine
  // run while another micro-batch computes the same layer (attention and experts).
  const double E = sl.moe;
  st.ep = E * (p.ep_comm_overlap ? x.exposed(moe_ffn.ep, layer.compute + moe_ffn.compute) : moe_ffn.ep);
  // ZeRO-3: a transformer layer's gathers (attention block and FFN together) and the first
  // layer's of each pass, never hidden.
  st.fsdp += sl.hybrid ? x.fsdp_head : sl.dense() * x.fsdp_dense_layer + E * x.fsdp_moe_layer + x.fsdp_head;
  st.pp = p.pp > 1 ? pipeline.pp * p.virtual_stages : 0.0;
  // Megatron-LM overlaps p2p only in the interleaved schedule: arguments.py sets
  // overlap_p2p_comm = False when virtual_pipeline_model_parallel_size is None ("non-interleaved
  // schedule does not support overlapping p2p communication").
  if (p.pp_comm_overlap && p.virtual_stages > 1) st.pp = x.exposed(st.pp, st.compute);
  st.total = st.compute * (1.0 + x.slow) + st.tp + st.pp + st.fsdp + st.ep + st.cp;
  if (x.host_per_op > 0 || x.hook_s_per_layer > 0) {
    st.hooks = (sl.hybrid ? stage_layer_total(sl) : sl.layers) * x.hook_s_per_layer;
    const double host =
        (launches + (p.pp > 1 ? pipeline.launches * p.virtual_stages : 0.0)) * x.host_per_op + st.hooks;
    st.host = std::max(0.0, host - st.total);
    st.total += st.host;
  }
  return st;
}

// Data-parallel time left exposed. With overlap (Megatron/DDP buckets), the gradient reduction
// runs during the last micro-batch's backward; all but the last bucket can hide there. Parameter
// all-gather of ZeRO-1/2 overlaps the next step's first forward the same way. ZeRO-3's
// collectives are the slowest stage's, per micro-batch.
double dp_exposed(const ScheduleTerms& x, const StageTime& worst, double m, double stage_params) {
  const Parallelism& p = x.p;
  const OpBuckets& b = x.buckets;
  double exposed = 0;
  if (p.zero < 3) {
    const double dp_gather = b.dp_step - b.dp_grad;
    if (p.overlap_dp_comm && b.dp_step > 0) {
      const double last_bucket = std::min(1.0, bucket_params(p.dp) / std::max(1.0, stage_params));
      const double grad_exposed = std::max(b.dp_grad - worst.backward, b.dp_grad * last_bucket);
      const double forward = worst.compute - worst.backward;
      const double gather_exposed = std::max(dp_gather - forward, dp_gather * last_bucket);
      const double overlapped = (b.dp_grad - grad_exposed) + (dp_gather - gather_exposed);
      exposed = grad_exposed + gather_exposed + x.slowdown * overlapped;
    } else {
      exposed = b.dp_step;
    }
  } else {
    exposed = m * worst.fsdp + b.dp_step;
  }
  // The tied embedding's gradient sync runs serially with the replicas' reduction.
  return exposed + b.dp_sync;
}

}  // namespace

void add_op_costs(OpBuckets& into, const std::vector<StepOp>& ops, const OpCostModel& cost) {
  into.host_issue_s_per_op = std::max(into.host_issue_s_per_op, cost.host_issue_s_per_op());
  for (const StepOp& so : ops) {
    if (so.role == OpRole::checkpoint) continue;  // no kernel
    const double t = cost.cost(so.op).base() * so.count;
    if (traits(so.scope).repeat == Repeat::per_step) {
      add_step_cost(into, so, t);
    } else {
      add_bucket_cost(into[so.scope], so, t);
    }
  }
}

StepTiming schedule_step(const Scenario& s, const Parallelism& p, const OpBuckets& buckets, double stage_params) {
  return schedule_step(s, p, buckets, stage_params, stage_runs(s.model, p));
}

StepTiming schedule_step(const Scenario& s, const Parallelism& p, const OpBuckets& buckets, double stage_params,
                         const std::vector<StageRun>& runs) {
  StepTiming out;
  out.micro_batches = static_cast<int>(s.training.global_batch / (static_cast<long long>(p.micro_batch) * p.dp));
  const double m = out.micro_batches;
  const ScheduleTerms x = schedule_terms(s, p, buckets);
  StageTime worst;
  double sum_total = 0;
  for (const StageRun& run : runs) {
    const StageTime st = stage_time(x, run.layers);
    sum_total += st.total * run.count;
    if (st.total > worst.total) worst = st;
  }

  // 1F1B with heterogeneous stages: the slowest stage runs all m micro-batches back to back;
  // fill and drain add the other stages' time once, divided by v for the interleaved schedule
  // (Narayanan et al. 2021, Sec. 2.2: bubble (p-1)/v of a micro-batch's time).
  StepBreakdown& b = out.breakdown;
  b.compute = units::seconds(m * worst.compute);
  b.recompute = units::seconds(m * worst.recompute);
  b.tp_comm = units::seconds(m * worst.tp);
  b.pp_comm = units::seconds(m * worst.pp);
  b.ep_comm = units::seconds(m * worst.ep);
  b.cp_comm = units::seconds(m * worst.cp);
  b.host = units::seconds(m * worst.host);
  out.zero3_hooks_s = m * worst.hooks;
  b.bubble = units::seconds((sum_total - worst.total) / p.virtual_stages);
  b.dp_comm = units::seconds(dp_exposed(x, worst, m, stage_params));
  b.optimizer = units::seconds(buckets.optimizer);
  b.variability = units::seconds(x.slow * (m * worst.compute + buckets.optimizer));
  return out;
}

}  // namespace capplan::sim
