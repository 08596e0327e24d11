// SPDX-License-Identifier: Apache-2.0
// The host backend measures for real: these tests check what it reports beside the times
// (flops, bytes, statistics) and that its transformer layer computes the right thing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "capplan/calibrate/calibration_run.hpp"
#include "capplan/calibrate/host_backend.hpp"
#include "capplan/calibrate/records.hpp"
#include "host_layer.hpp"

namespace capplan::calib {
namespace {

RunOptions fast() {
  RunOptions o;
  o.warmup = 1;
  o.iterations = 3;
  o.max_seconds_per_case = 0.5;
  return o;
}

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
  StepShape s;
  s.hidden = 64;
  s.heads = 4;
  s.ffn_hidden = 256;
  s.seq_len = 32;
  s.micro_batch = 2;
  s.layers = 2;
  s.dtype = sim::Precision::fp32;
  const auto r = b->training_step(s, fast());
  ASSERT_TRUE(r.has_value());
  double sum = 0;
  for (const char* c : {"gemm", "attention", "memory"}) {
    ASSERT_TRUE(r->components_s.contains(c)) << c;
    EXPECT_GT(r->components_s.at(c), 0) << c;
    sum += r->components_s.at(c);
  }
  // Components are medians of per-iteration sums, the total a median of whole steps: close, not equal.
  EXPECT_NEAR(sum, r->time.median_s, 0.5 * r->time.median_s);
  s.dtype = sim::Precision::bf16;
  EXPECT_FALSE(b->training_step(s, fast()).has_value());
  s.dtype = sim::Precision::fp32;
  s.heads = 5;
  const auto bad = b->training_step(s, fast());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error()[0].where, "step/heads");
}

// ---- the layer itself, in double precision, against a naive implementation ----

using host::Mat;
using M = Eigen::MatrixXd;

M naive_layernorm(const M& x) {
  M y(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double mean = x.row(r).mean();
    const double var = (x.row(r).array() - mean).square().mean();
    y.row(r) = (x.row(r).array() - mean) / std::sqrt(var + 1e-5);
  }
  return y;
}

double naive_gelu(double u) { return 0.5 * u * (1 + std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u))); }

// The textbook layer, one (batch, head) at a time with explicit loops for the causal softmax.
M naive_forward(const sim::LayerStepShape& s, const host::LayerParams<double>& p, const M& x) {
  const int h = s.hidden, a = s.heads, d = h / a, sq = s.seq_len;
  const M y1 = naive_layernorm(x);
  const M qkv = y1 * M(p.wqkv);
  M ctx = M::Zero(x.rows(), h);
  for (int b = 0; b < s.micro_batch; ++b) {
    for (int j = 0; j < a; ++j) {
      for (int i = 0; i < sq; ++i) {
        std::vector<double> w(static_cast<std::size_t>(i) + 1);
        double mx = -1e300, sum = 0;
        for (int t = 0; t <= i; ++t) {
          double dot = 0;
          for (int c = 0; c < d; ++c) dot += qkv(b * sq + i, j * d + c) * qkv(b * sq + t, h + j * d + c);
          w[t] = dot / std::sqrt(double(d));
          mx = std::max(mx, w[t]);
        }
        for (auto& v : w) sum += (v = std::exp(v - mx));
        for (int t = 0; t <= i; ++t) {
          for (int c = 0; c < d; ++c) ctx(b * sq + i, j * d + c) += w[t] / sum * qkv(b * sq + t, 2 * h + j * d + c);
        }
      }
    }
  }
  const M x2 = x + ctx * M(p.wo);
  M u = naive_layernorm(x2) * M(p.w1);
  for (Eigen::Index i = 0; i < u.size(); ++i) u.data()[i] = naive_gelu(u.data()[i]);
  return x2 + u * M(p.w2);
}

// layers, hidden 8, heads 2 (d_head 4), ffn 16, seq 5, micro-batch 2: small enough for finite differences.
sim::LayerStepShape tiny() { return {1, 8, 2, 16, 5, 2, sim::Precision::fp32}; }

Mat<double> random_matrix(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  Mat<double> m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = d(rng);
  return m;
}

TEST(HostLayer, ForwardMatchesANaiveImplementation) {
  const auto s = tiny();
  host::TransformerLayer<double> layer(s, 3);
  const Mat<double> x = random_matrix(s.micro_batch * s.seq_len, s.hidden, 1);
  Mat<double> out;
  layer.forward(x, out);
  const M expected = naive_forward(s, layer.params(), M(x));
  // Same arithmetic in another order: agreement to double rounding (values are O(1)).
  EXPECT_LT((M(out) - expected).cwiseAbs().maxCoeff(), 1e-12);
}

// Loss = sum(out .* R); its gradient w.r.t. out is R. Central differences with step 1e-6 have
// truncation error O(1e-12) and rounding error O(1e-16/1e-6) = O(1e-10): 1e-7 is a safe bound.
TEST(HostLayer, BackwardMatchesFiniteDifferences) {
  const auto s = tiny();
  host::TransformerLayer<double> layer(s, 5);
  // Non-trivial norm parameters so their gradients are exercised too.
  layer.params().ln1_gamma = host::Vec<double>::Constant(s.hidden, 1.3);
  layer.params().ln2_beta = host::Vec<double>::Constant(s.hidden, 0.1);
  Mat<double> x = random_matrix(s.micro_batch * s.seq_len, s.hidden, 2);
  const Mat<double> r = random_matrix(x.rows(), s.hidden, 4);
  auto loss = [&] {
    Mat<double> out;
    layer.forward(x, out);
    return (out.array() * r.array()).sum();
  };
  Mat<double> out, dx;
  layer.forward(x, out);
  layer.backward(r, dx);
  const auto grads = layer.grads();

  const double eps = 1e-6, tol = 1e-7;
  auto check = [&](double& value, double analytic, const char* what) {
    const double keep = value;
    value = keep + eps;
    const double up = loss();
    value = keep - eps;
    const double down = loss();
    value = keep;
    EXPECT_NEAR(analytic, (up - down) / (2 * eps), tol) << what;
  };
  for (Eigen::Index i = 0; i < x.size(); i += 3) check(x.data()[i], dx.data()[i], "dx");
  auto& p = layer.params();
  for (Eigen::Index i = 0; i < p.wqkv.size(); i += 7) check(p.wqkv.data()[i], grads.wqkv.data()[i], "dWqkv");
  for (Eigen::Index i = 0; i < p.wo.size(); i += 5) check(p.wo.data()[i], grads.wo.data()[i], "dWo");
  for (Eigen::Index i = 0; i < p.w1.size(); i += 5) check(p.w1.data()[i], grads.w1.data()[i], "dW1");
  for (Eigen::Index i = 0; i < p.w2.size(); i += 5) check(p.w2.data()[i], grads.w2.data()[i], "dW2");
  for (Eigen::Index i = 0; i < s.hidden; ++i) {
    check(p.ln1_gamma[i], grads.ln1_gamma[i], "dgamma1");
    check(p.ln1_beta[i], grads.ln1_beta[i], "dbeta1");
    check(p.ln2_gamma[i], grads.ln2_gamma[i], "dgamma2");
    check(p.ln2_beta[i], grads.ln2_beta[i], "dbeta2");
  }
}

// ---- the sweep plan ----

TEST(CalibrationPlan, QuickHostPlanHasEveryGemmOfTheValidateStep) {
  auto b = host_backend();
  PlanOptions o;
  o.quick = true;
  const auto plan = plan_sweep(*b, o);
  const auto step = default_step_shape("host", true);
  const sim::LayerStepShape ls{step.layers, step.hidden, step.heads, step.ffn_hidden, step.seq_len, step.micro_batch,
                               step.dtype};
  for (const auto& op : sim::layer_step_ops(ls)) {
    const auto* g = std::get_if<sim::GemmOp>(&op.op.op);
    if (g == nullptr) continue;
    const GemmShape want{g->m, g->n, g->k, g->batch, g->dtype};
    EXPECT_TRUE(std::any_of(plan.begin(), plan.end(),
                            [&](const Case& c) { return c.kind == CaseKind::gemm && c.gemm == want; }))
        << g->name;
  }
  // One rank: no collective cases; the step is last.
  EXPECT_TRUE(std::none_of(plan.begin(), plan.end(), [](const Case& c) { return c.kind == CaseKind::collective; }));
  EXPECT_EQ(plan.back().kind, CaseKind::step);
  EXPECT_EQ(plan.back().step, step);
  o.collectives_only = true;
  EXPECT_TRUE(plan_sweep(*b, o).empty());
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
