// SPDX-License-Identifier: Apache-2.0
// The host backend measures for real: these tests check what it reports beside the times
// (flops, bytes, statistics), that its training step runs one kernel per op of the layer slice,
// and that the kernels it adds compute the right gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <variant>

#include "capplan/calibrate/calibration_run.hpp"
#include "capplan/calibrate/fit.hpp"
#include "capplan/calibrate/host_backend.hpp"
#include "capplan/calibrate/records.hpp"
#include "host_layer.hpp"
#include "step_test_support.hpp"

namespace capplan::calib {
namespace {

RunOptions fast() { return {.warmup = 1, .iterations = 3, .max_seconds_per_case = 0.5}; }

std::unique_ptr<MeasurementBackend> host_backend() {
  auto b = make_host_backend({.use_mpi = false});
  EXPECT_TRUE(b.has_value());
  return std::move(*b);
}

TEST(Summarize, StatisticsMatchHandValues) {
  // samples 1..5 s: min 1, median 3, mean 3, population stddev sqrt(2), cv sqrt(2)/3;
  // p99 by nearest rank = ceil(0.99*5) = 5th smallest = 5.
  const auto s = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.min_s, 1);
  EXPECT_DOUBLE_EQ(s.median_s, 3);
  EXPECT_DOUBLE_EQ(s.mean_s, 3);
  EXPECT_DOUBLE_EQ(s.p99_s, 5);
  EXPECT_NEAR(s.cv, std::sqrt(2.0) / 3.0, 1e-12);
  EXPECT_EQ(s.samples_s.size(), 5u);  // kept in measuring order
  EXPECT_DOUBLE_EQ(s.samples_s[0], 5);
  EXPECT_DOUBLE_EQ(summarize({4, 1, 3, 2}).median_s, 2.5);  // even count: mean of the middle two
}

TEST(BusFactor, FollowsNcclTestsDefinitions) {
  // nccl-tests doc/PERFORMANCE.md: 2(n-1)/n all-reduce, (n-1)/n gather/scatter/all-to-all, 1 send/recv.
  EXPECT_DOUBLE_EQ(bus_factor(sim::CollectiveKind::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(sim::CollectiveKind::all_gather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(sim::CollectiveKind::reduce_scatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(sim::CollectiveKind::all_to_all, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(sim::CollectiveKind::send_recv, 2), 1.0);
}

// Rotating operand copies: twice the cache over the operands, within the budget and the cap.
TEST(RotationSets, SpanTwiceTheCacheWithinTheBudget) {
  const double mib = 1024.0 * 1024.0;
  EXPECT_EQ(rotation_sets(1 * mib, 50 * mib, 2048 * mib), 64);   // 100 copies wanted, capped at 64
  EXPECT_EQ(rotation_sets(10 * mib, 50 * mib, 2048 * mib), 10);  // 2 x 50 / 10
  EXPECT_EQ(rotation_sets(30 * mib, 50 * mib, 2048 * mib), 4);   // ceil(100 / 30)
  EXPECT_EQ(rotation_sets(30 * mib, 50 * mib, 60 * mib), 2);     // the budget holds two
  EXPECT_EQ(rotation_sets(4096 * mib, 50 * mib, 2048 * mib), 1); // past the cache (and the budget): one
  EXPECT_EQ(rotation_sets(1 * mib, 0, 2048 * mib), 1);           // cache unknown: no rotation
}

TEST(HostBackend, GemmRecordCarriesFlopsAndBytesOfTheShape) {
  auto b = host_backend();
  const auto r = b->gemm({64, 32, 16, 2, sim::Precision::fp32}, fast());
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->flops, 2.0 * 64 * 32 * 16 * 2);                     // 2*m*n*k*batch
  EXPECT_DOUBLE_EQ(r->bytes, 4.0 * 2 * (64 * 16 + 16 * 32 + 64 * 32));     // fp32 A + B + C, per batch
  EXPECT_GT(r->time.median_s, 0);
  EXPECT_GE(r->time.samples_s.size(), 1u);
  EXPECT_GT(r->achieved_flops_per_s(), 0);
}

TEST(HostBackend, MeasuresBf16AndFp16ButNotFp8) {
  auto b = host_backend();
  EXPECT_TRUE(b->gemm({32, 32, 32, 1, sim::Precision::bf16}, fast()).has_value());
  const auto h = b->gemm({32, 32, 32, 1, sim::Precision::fp16}, fast());
  ASSERT_TRUE(h.has_value());
  EXPECT_DOUBLE_EQ(h->bytes, 2.0 * 3 * 32 * 32);
  const auto f8 = b->gemm({32, 32, 32, 1, sim::Precision::fp8}, fast());
  ASSERT_FALSE(f8.has_value());
  EXPECT_NE(f8.error()[0].message.find("not available on a CPU"), std::string::npos);
}

TEST(HostBackend, MemoryRecordCountsBytesReadAndWritten) {
  auto b = host_backend();
  const auto copy = b->memory("copy", 1 << 20, fast());
  ASSERT_TRUE(copy.has_value());
  EXPECT_DOUBLE_EQ(copy->bytes, 1 << 20);  // 131072 floats read + written
  EXPECT_GT(copy->bandwidth_Bps(), 0);
  const auto add = b->memory("elementwise", 12 * 1000, fast());
  ASSERT_TRUE(add.has_value());
  EXPECT_DOUBLE_EQ(add->bytes, 12.0 * 1000);  // 1000 floats: two read, one written
  const auto norm = b->memory("norm", 8.0 * 1024 * 3, fast());
  ASSERT_TRUE(norm.has_value());
  EXPECT_DOUBLE_EQ(norm->bytes, 8.0 * 1024 * 3);  // three rows of 1024
  EXPECT_FALSE(b->memory("stream-triad", 1 << 20, fast()).has_value());
}

TEST(HostBackend, CollectivesWithOneRankAreSkippedWithAReason) {
  auto b = host_backend();
  EXPECT_EQ(b->ranks(), 1);
  const auto r = b->collective(sim::CollectiveKind::all_reduce, 1024, fast());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error()[0].message.find("mpirun"), std::string::npos);
}

TEST(HostBackend, TrainingStepReportsEveryComponent) {
  auto b = host_backend();
  StepShape s{.layers = 2, .hidden = 64, .heads = 4, .ffn_hidden = 256, .seq_len = 32, .micro_batch = 2,
              .dtype = sim::Precision::fp32};
  const auto r = b->training_step(s, fast());
  ASSERT_TRUE(r.has_value());
  const double sum = test::expect_positive_components(*r);
  // Components are medians of per-iteration sums, the total a median of the sums: close, not equal.
  EXPECT_NEAR(sum, r->time.median_s, 0.5 * r->time.median_s);
  s.heads = 5;
  const auto bad = b->training_step(s, fast());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error()[0].where, "step/heads");
}

// A Llama-style layer (SwiGLU, GQA, RMSNorm, RoPE) in bf16: GEMMs in bf16, memory kernels on fp32
// buffers moving the op's bytes.
StepShape llama_like() {
  return {.hidden = 64, .heads = 4, .ffn_hidden = 96, .seq_len = 16, .micro_batch = 1, .gated_ffn = true,
          .dtype = sim::Precision::bf16, .kv_heads = 2, .rmsnorm = true, .rope = true};
}

TEST(HostBackend, TrainingStepMeasuresASwigluGqaRmsnormBf16Layer) {
  auto b = host_backend();
  const auto r = b->training_step(llama_like(), fast());
  ASSERT_TRUE(r.has_value()) << r.error()[0].where << ": " << r.error()[0].message;
  test::expect_positive_components(*r);
  EXPECT_EQ(r->shape, llama_like());
}

// Every GEMM of the step's op list is a GEMM case of the plan (calibrate measures exactly them).
void expect_plan_measures_step_gemms(const std::vector<Case>& plan, const StepShape& step) {
  for (const auto& op : sim::layer_step_ops(layer_step_shape(step))) {
    const auto* g = std::get_if<sim::GemmOp>(&op.op.op);
    if (g == nullptr) continue;
    const GemmShape want{g->m, g->n, g->k, g->batch, g->dtype};
    EXPECT_TRUE(std::any_of(plan.begin(), plan.end(),
                            [&](const Case& c) { return c.kind == CaseKind::gemm && c.gemm == want; }))
        << g->name;
  }
}

// The serving decode step (the serving pass's layer, forward only) runs on the
// host through the same op list, and costs less than the training step of as many tokens' layer.
TEST(HostBackend, MeasuresAServingDecodeStep) {
  auto b = host_backend();
  StepShape s = llama_like();
  s.micro_batch = 8;
  s.decode_context = 256;
  const auto r = b->training_step(s, fast());
  ASSERT_TRUE(r.has_value()) << r.error()[0].where << ": " << r.error()[0].message;
  test::expect_positive_components(*r);
  EXPECT_EQ(r->shape.decode_context, 256);
  // The plan of a calibration asked for this step measures exactly its GEMMs (decode_attn_* included).
  PlanOptions o;
  o.quick = true;
  o.steps = {s};
  const auto plan = plan_sweep(*b, o);
  expect_plan_measures_step_gemms(plan, s);
  EXPECT_EQ(plan.back().step, s);
}

TEST(HostBackend, TrainingStepRefusesWhatACpuCannotRunWithTheReason) {
  auto b = host_backend();
  auto s = llama_like();
  s.flash_attention = true;
  auto r = b->training_step(s, fast());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error()[0].where, "step/flash_attention");
  EXPECT_NE(r.error()[0].message.find("cuda backend"), std::string::npos);
  s.flash_attention = false;
  s.dtype = sim::Precision::fp8;
  r = b->training_step(s, fast());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error()[0].where, "step/dtype");
  EXPECT_NE(r.error()[0].message.find("fp8"), std::string::npos);
}

// The runner has one kernel per op of the slice, in its order, with the role's kernel.
TEST(HostLayer, RunsOneKernelPerOpOfTheSliceInItsOrder) {
  const sim::LayerStepShape ls = layer_step_shape(llama_like());
  const auto ops = sim::layer_step_ops(ls);
  const auto runner = host::LayerStepRunner::create(ls);
  ASSERT_TRUE(runner.has_value());
  ASSERT_EQ(runner->kernels().size(), ops.size());
  std::set<std::string> kernels;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& k = runner->kernels()[i];
    EXPECT_EQ(k.phase, ops[i].op.phase);
    EXPECT_EQ(k.component, ops[i].component);
    EXPECT_DOUBLE_EQ(k.runs * k.scale, ops[i].op.count);
    const bool gemm = std::holds_alternative<sim::GemmOp>(ops[i].op.op);
    EXPECT_EQ(k.kernel.rfind("gemm", 0) == 0, gemm) << k.op;
    if (gemm) {
      EXPECT_EQ(k.kernel, "gemm bf16") << k.op;
    }
    kernels.insert(k.kernel);
  }
  for (const char* want : {"rmsnorm_forward", "rmsnorm_backward", "swiglu_forward", "swiglu_backward", "residual_add",
                           "rope_forward", "rope_backward", "softmax_forward", "softmax_backward"}) {
    EXPECT_TRUE(kernels.contains(want)) << want;
  }
  EXPECT_FALSE(kernels.contains("copy"));  // every role of this layer has its own host kernel
}

// ---- the host kernels the runner adds, in double precision, against finite differences ----

using host::Mat;
using host::Vec;

TEST(HostKernels, RmsnormSwigluAndRopeBackwardMatchFiniteDifferences) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  auto random = [&](Eigen::Index r, Eigen::Index c) {
    Mat<double> m(r, c);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
    return m;
  };
  const double eps = 1e-6;
  {  // RMSNorm: loss = sum(w * y)
    const Mat<double> x = random(3, 8), w = random(3, 8);
    Vec<double> gamma(8), rstd(3), dgamma = Vec<double>::Zero(8);
    for (int i = 0; i < 8; ++i) gamma[i] = 0.5 + 0.1 * i;
    auto loss = [&](const Mat<double>& in) {
      Mat<double> y(3, 8);
      Vec<double> rs(3);
      host::rmsnorm_forward(in, gamma, y, rs);
      return (y.array() * w.array()).sum();
    };
    Mat<double> y(3, 8), dx(3, 8);
    host::rmsnorm_forward(x, gamma, y, rstd);
    host::rmsnorm_backward(w, x, rstd, gamma, dx, dgamma);
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      Mat<double> xp = x, xm = x;
      xp.data()[i] += eps;
      xm.data()[i] -= eps;
      EXPECT_NEAR(dx.data()[i], (loss(xp) - loss(xm)) / (2 * eps), 1e-6) << "rmsnorm " << i;
    }
  }
  {  // SwiGLU: loss = sum(w * silu(gate) * up)
    const Mat<double> gate = random(1, 6), up = random(1, 6), w = random(1, 6);
    Mat<double> out(1, 6), dgate(1, 6), dup(1, 6);
    auto loss = [&](const Mat<double>& g, const Mat<double>& v) {
      host::swiglu_forward(g, v, out);
      return (out.array() * w.array()).sum();
    };
    host::swiglu_backward(w, gate, up, dgate, dup);
    for (Eigen::Index i = 0; i < 6; ++i) {
      Mat<double> gp = gate, gm = gate, vp = up, vm = up;
      gp(0, i) += eps;
      gm(0, i) -= eps;
      vp(0, i) += eps;
      vm(0, i) -= eps;
      EXPECT_NEAR(dgate(0, i), (loss(gp, up) - loss(gm, up)) / (2 * eps), 1e-6) << "swiglu gate " << i;
      EXPECT_NEAR(dup(0, i), (loss(gate, vp) - loss(gate, vm)) / (2 * eps), 1e-6) << "swiglu up " << i;
    }
  }
  {  // RoPE: the backward rotation undoes the forward one (a rotation's gradient is its transpose)
    const Mat<double> x = random(4, 6);
    Mat<double> cs(2, 3), sn(2, 3);
    for (Eigen::Index i = 0; i < cs.size(); ++i) {
      cs.data()[i] = std::cos(0.3 * i);
      sn.data()[i] = std::sin(0.3 * i);
    }
    Mat<double> y = x;
    host::rope_apply(y, cs, sn, 2, 1.0);
    EXPECT_GT((y - x).norm(), 0.1);
    host::rope_apply(y, cs, sn, 2, -1.0);
    EXPECT_LT((y - x).norm(), 1e-12);
  }
}

// ---- the sweep plan ----

TEST(CalibrationPlan, QuickHostPlanHasEveryGemmOfTheValidateStep) {
  auto b = host_backend();
  PlanOptions o;
  o.quick = true;
  const auto plan = plan_sweep(*b, o);
  const auto step = default_step_shape("host", true);
  expect_plan_measures_step_gemms(plan, step);
  // One rank: no collective cases; the step is last.
  EXPECT_TRUE(std::none_of(plan.begin(), plan.end(), [](const Case& c) { return c.kind == CaseKind::collective; }));
  EXPECT_EQ(plan.back().kind, CaseKind::step);
  EXPECT_EQ(plan.back().step, step);
  o.collectives_only = true;
  EXPECT_TRUE(plan_sweep(*b, o).empty());
}

// The host plan measures its two launch patterns over four batch sizes, before the step.
TEST(CalibrationPlan, HostPlanMeasuresLaunchesOverFourBatchSizes) {
  auto b = host_backend();
  const auto plan = plan_sweep(*b, PlanOptions{});
  std::vector<std::pair<std::string, int>> launches;
  for (const auto& c : plan) {
    if (c.kind == CaseKind::launch) launches.push_back({c.pattern, c.kernels});
  }
  const std::vector<std::pair<std::string, int>> want = {{"launch", 16},       {"launch", 64},       {"launch", 256},
                                                         {"launch", 1024},     {"back_to_back", 16}, {"back_to_back", 64},
                                                         {"back_to_back", 256}, {"back_to_back", 1024}};
  EXPECT_EQ(launches, want);
  EXPECT_EQ(plan.back().kind, CaseKind::step);
}

// Measured for real: a batch of 1024 costs more than one of 16 (both patterns), a real kernel
// more than an empty call, and the fit of the run's records gives a positive cost per kernel
// below a microsecond-scale bound (a call through std::function on any CPU of the last decade
// takes nanoseconds; a 64-float add tens of nanoseconds).
TEST(HostBackend, MeasuresLaunchBatchesAndTheirFitIsPositive) {
  auto b = host_backend();
  std::vector<Case> plan;
  for (const auto& c : plan_sweep(*b, PlanOptions{.quick = true})) {
    if (c.kind == CaseKind::launch) plan.push_back(c);
  }
  ASSERT_EQ(plan.size(), 6u);  // quick: 16, 128, 1024 kernels of each pattern
  const auto report = run_calibration(*b, plan, {}, fast());
  ASSERT_EQ(report.measured, 6u);
  const auto& l = report.measurements.launches;
  ASSERT_EQ(l.size(), 6u);
  for (const auto& r : l) EXPECT_GT(r.time.median_s, 0.0) << r.pattern << " " << r.kernels;
  EXPECT_GT(l[2].time.median_s, l[0].time.median_s);  // launch 1024 > launch 16
  EXPECT_GT(l[5].time.median_s, l[3].time.median_s);  // back_to_back 1024 > 16
  EXPECT_GT(l[5].time.median_s, l[2].time.median_s);  // a real kernel costs more than an empty call
  auto p = fit_profile(report.measurements);
  ASSERT_TRUE(p.has_value()) << to_string(p.error());
  ASSERT_EQ(p->launch.size(), 2u);
  for (const auto& f : p->launch) {
    EXPECT_GT(f.per_kernel_s.value, 0.0) << f.pattern;
    EXPECT_LT(f.per_kernel_s.value, 1e-5) << f.pattern;
  }
  EXPECT_GT(p->kernel_floor_s(), p->host_issue_s_per_op());
  // Another backend's pattern is refused with a reason, not measured.
  auto refused = b->launch("graph", 16, fast());
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error()[0].message.find("unknown pattern"), std::string::npos);
}

TEST(CalibrationRun, ResumeMeasuresOnlyWhatIsMissing) {
  auto b = host_backend();
  std::vector<Case> plan;
  for (std::int64_t n : {16, 24, 32}) {
    Case c;
    c.gemm = {n, n, n, 1, sim::Precision::fp32};
    plan.push_back(c);
  }
  Case mem;
  mem.kind = CaseKind::memory;
  mem.pattern = "copy";
  mem.bytes = 64 * 1024;
  plan.push_back(mem);
  Case fp8 = plan[0];
  fp8.gemm.dtype = sim::Precision::fp8;
  plan.push_back(fp8);

  int checkpoints = 0;
  std::vector<Progress> seen;
  auto first = run_calibration(*b, {plan[0], plan[3]}, {}, fast(), {}, [&](const Measurements&) { ++checkpoints; });
  EXPECT_EQ(first.measured, 2u);
  EXPECT_EQ(checkpoints, 2);  // after every measured case

  auto second = run_calibration(*b, plan, first.measurements, fast(),
                                [&](const Progress& p) { seen.push_back(p); });
  EXPECT_EQ(second.resumed, 2u);
  EXPECT_EQ(second.measured, 2u);  // 24^3 and 32^3; fp8 is refused
  ASSERT_EQ(second.notes.size(), 1u);
  EXPECT_EQ(second.notes[0].severity, Diagnostic::Severity::warning);
  EXPECT_EQ(second.measurements.gemms.size(), 3u);
  EXPECT_EQ(second.measurements.memory.size(), 1u);
  ASSERT_EQ(seen.size(), 3u);  // progress for each case tried (resumed ones are skipped silently)
  EXPECT_EQ(seen.back().done, plan.size());
  EXPECT_EQ(seen.back().total, plan.size());
  EXPECT_DOUBLE_EQ(seen.back().eta_s, 0);
}

TEST(CalibrationPlan, GemmShapesOfAStepAreDistinctAndNonEmpty) {
  sim::StepOps ops;
  const sim::GemmOp qkv{"qkv", 4096, 3 * 1024, 1024, 1, sim::Precision::bf16};
  ops.ops.push_back({qkv});
  ops.ops.push_back({qkv, sim::Phase::recompute});  // the same kernel again: measured once
  ops.ops.push_back({sim::GemmOp{"empty", 0, 8, 8, 1, sim::Precision::bf16}});
  ops.ops.push_back({sim::GemmOp{"scores", 2048, 2048, 128, 64, sim::Precision::bf16}});
  ops.ops.push_back({sim::MemoryOp{"rmsnorm", units::bytes(1e6)}});
  const auto shapes = gemm_shapes_of(ops);
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0], (GemmShape{4096, 3072, 1024, 1, sim::Precision::bf16}));
  EXPECT_EQ(shapes[1], (GemmShape{2048, 2048, 128, 64, sim::Precision::bf16}));
}

TEST(CalibrationRun, StopsBeforeTheNextCaseWhenAsked) {
  auto b = host_backend();
  std::vector<Case> plan(3);
  for (std::size_t i = 0; i < plan.size(); ++i) plan[i].gemm = {16 + 8 * std::int64_t(i), 16, 16, 1, sim::Precision::fp32};
  int asked = 0;
  const auto r = run_calibration(*b, plan, {}, fast(), {}, {}, [&] { return ++asked > 1; });
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.measured, 1u);
  EXPECT_EQ(r.measurements.gemms.size(), 1u);
}

TEST(CalibrationRun, ResumeMatchesCollectivesRoundedToWholeFloatsPerRank) {
  Measurements m;
  m.context.ranks = 3;
  CollectiveRecord r;
  r.kind = sim::CollectiveKind::all_gather;
  r.ranks = 3;
  r.bytes = 12;  // 8 B asked: one float per rank on 3 ranks
  m.collectives.push_back(r);
  Case c;
  c.kind = CaseKind::collective;
  c.collective = sim::CollectiveKind::all_gather;
  c.bytes = 8;
  EXPECT_TRUE(already_measured(m, c));
  c.bytes = 32;
  EXPECT_FALSE(already_measured(m, c));
  c.bytes = 8;
  c.collective = sim::CollectiveKind::all_reduce;
  EXPECT_FALSE(already_measured(m, c));
}

}  // namespace
}  // namespace capplan::calib
