// SPDX-License-Identifier: Apache-2.0
#include "step_timing.hpp"

#include <algorithm>
#include <string_view>

#include "capplan/sim/memory.hpp"
#include "capplan/sim/step_model.hpp"

namespace capplan::sim {

namespace {

// Seconds per micro-batch spent by one scope, split the way the breakdown reports them.
struct Bucket {
  double compute = 0;    // GEMMs and memory-bound kernels (forward + backward + recompute)
  double recompute = 0;  // part of compute spent recomputing
  double backward = 0;   // backward compute only (the window DP reduction can hide behind)
  double tp = 0;         // tensor-parallel collectives (not overlapped)
  double pp = 0;         // pipeline send/recv
  double fsdp = 0;       // ZeRO-3 parameter/gradient collectives of the scope
  double ep = 0;         // expert-parallel all-to-alls (not overlapped)
  double cp = 0;         // context-parallel K/V exchange (overlaps the attention core)
  double attention = 0;  // attention-core kernels (the window ring attention hides behind)
};

// Megatron-LM's DDP bucket: 40M parameters (or 1M x dp when larger); with overlap, the
// reduction of all but the last bucket hides behind the backward pass.
double bucket_params(int dp) { return std::max(40e6, 1e6 * dp); }

}  // namespace

StepTiming time_step(const Scenario& s, const Parallelism& p, const OpCostModel& cost) {
  StepTiming out;
  const StepOps ops = build_step_ops(s.model, s.training, p, s.cluster);
  out.micro_batches = static_cast<int>(s.training.global_batch / (static_cast<long long>(p.micro_batch) * p.dp));
  const double m = out.micro_batches;

  Bucket layer, dense_ffn, moe_ffn, embedding, output, pipeline;
  double dp_step = 0, dp_grad = 0, optimizer = 0;
  for (const StepOp& so : ops.ops) {
    const double t = cost.cost(so.op).base() * so.count;
    Bucket* bucket = nullptr;
    switch (so.scope) {
      case Scope::layer: bucket = &layer; break;
      case Scope::dense_ffn: bucket = &dense_ffn; break;
      case Scope::moe_ffn: bucket = &moe_ffn; break;
      case Scope::embedding: bucket = &embedding; break;
      case Scope::output: bucket = &output; break;
      case Scope::pipeline: bucket = &pipeline; break;
      case Scope::data_parallel: {
        dp_step += t;
        const auto& c = std::get<CollectiveOp>(so.op);
        if (c.kind != CollectiveKind::all_gather) dp_grad += t;
        continue;
      }
      case Scope::optimizer: optimizer += t; continue;
    }
    if (const auto* c = std::get_if<CollectiveOp>(&so.op)) {
      switch (c->axis) {
        case Axis::dp: bucket->fsdp += t; break;
        case Axis::pp: bucket->pp += t; break;
        case Axis::ep: bucket->ep += t; break;
        case Axis::cp: bucket->cp += t; break;
        case Axis::tp: bucket->tp += t; break;
      }
    } else {
      bucket->compute += t;
      if (so.phase == Phase::recompute) bucket->recompute += t;
      if (so.phase == Phase::backward || so.phase == Phase::recompute) bucket->backward += t;
      if (const auto* g = std::get_if<GemmOp>(&so.op);
          g != nullptr && (std::string_view(g->name) == "attn_score" || std::string_view(g->name) == "attn_context")) {
        bucket->attention += t;
      }
    }
  }

  // Overlapped communication: what does not fit behind the compute it overlaps is exposed, and
  // the compute it does overlap runs slower (TrainingJob::overlap_compute_slowdown, Lee et al.
  // 2025), charged to the communication that caused it.
  const double slowdown = s.training.overlap_compute_slowdown;
  auto exposed = [slowdown](double comm, double window) {
    return std::max(0.0, comm - window) + slowdown * std::min(comm, window);
  };
  // Chunked TP overlap (userbuffers): the collective is split into tp chunks pipelined with the
  // neighbouring GEMM; the first chunk cannot hide.
  auto tp_exposed = [&](double comm, double gemm) {
    if (!p.tp_comm_overlap || p.tp <= 1) return comm;
    const double first = comm / p.tp;
    return first + exposed(comm - first, gemm);
  };
  // ZeRO-3 collectives of a layer overlap that layer's compute (prefetch), and the first layer's
  // gather of each pass is never hidden. Ring attention's K/V exchange overlaps the attention core.
  const double fsdp_layer = exposed(layer.fsdp + dense_ffn.fsdp, layer.compute + dense_ffn.compute);
  const double fsdp_moe_layer = exposed(layer.fsdp + moe_ffn.fsdp, layer.compute + moe_ffn.compute);
  const double fsdp_head = layer.fsdp > 0 ? (layer.fsdp + dense_ffn.fsdp) / 3.0 * 2.0 : 0.0;
  const double cp_layer = exposed(layer.cp, layer.attention);
  struct Stage {
    double total = 0, compute = 0, recompute = 0, backward = 0, tp = 0, pp = 0, fsdp = 0, ep = 0, cp = 0;
  };
  Stage worst;
  double sum_total = 0;
  for (int i = 0; i < p.pp; ++i) {
    const StageLayers sl = stage_layers(s.model, p.pp, i);
    const double L = sl.layers, D = sl.dense(), E = sl.moe;
    Stage st;
    st.compute = L * layer.compute + D * dense_ffn.compute + E * moe_ffn.compute;
    st.recompute = L * layer.recompute + D * dense_ffn.recompute + E * moe_ffn.recompute;
    st.backward = L * layer.backward + D * dense_ffn.backward + E * moe_ffn.backward;
    st.tp = L * tp_exposed(layer.tp, layer.compute - layer.attention) + D * tp_exposed(dense_ffn.tp, dense_ffn.compute) +
            E * tp_exposed(moe_ffn.tp, moe_ffn.compute);
    st.ep = E * moe_ffn.ep;
    st.cp = L * cp_layer;
    st.fsdp = D * fsdp_layer + E * fsdp_moe_layer + fsdp_head;
    if (i == 0) {
      st.compute += embedding.compute;
      st.backward += embedding.backward;
    }
    if (i == p.pp - 1) {
      st.compute += output.compute;
      st.backward += output.backward;
      st.tp += output.tp;
    }
    st.pp = p.pp > 1 ? pipeline.pp * p.virtual_stages : 0.0;
    if (p.pp_comm_overlap) st.pp = exposed(st.pp, st.compute);
    st.total = st.compute + st.tp + st.pp + st.fsdp + st.ep + st.cp;
    sum_total += st.total;
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
  b.bubble = units::seconds((sum_total - worst.total) / p.virtual_stages);

  // Data parallel: with overlap (Megatron/DDP buckets), the gradient reduction runs during the
  // last micro-batch's backward; all but the last bucket can hide there. Parameter all-gather of
  // ZeRO-1/2 overlaps the next step's first forward the same way.
  double dp_exposed = 0;
  if (p.zero < 3) {
    const double dp_gather = dp_step - dp_grad;
    if (p.overlap_dp_comm && dp_step > 0) {
      const double last_bucket = std::min(1.0, bucket_params(p.dp) / std::max(1.0, ops.stage_params));
      const double grad_exposed = std::max(dp_grad - worst.backward, dp_grad * last_bucket);
      const double forward = worst.compute - worst.backward;
      const double gather_exposed = std::max(dp_gather - forward, dp_gather * last_bucket);
      const double overlapped = (dp_grad - grad_exposed) + (dp_gather - gather_exposed);
      dp_exposed = grad_exposed + gather_exposed + slowdown * overlapped;
    } else {
      dp_exposed = dp_step;
    }
  } else {
    dp_exposed = m * worst.fsdp + dp_step;
  }
  b.dp_comm = units::seconds(dp_exposed);
  b.optimizer = units::seconds(optimizer);
  return out;
}

}  // namespace capplan::sim
