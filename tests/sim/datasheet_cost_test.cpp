// SPDX-License-Identifier: Apache-2.0
// The datasheet cost model: GEMM roofline with shape efficiency, memory-bound kernels, and
// collectives against the nccl-tests bus-bandwidth formulas (docs/model.md Sec. 3).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;

// The cost model evaluates the same closed forms as these tests, but in a different order of
// operations; 1e-12 relative is far above double round-off and far below a 1 ns difference on
// any of these (microsecond-to-second) times.
constexpr double kSumOrder = 1e-12;
constexpr double kUs = 1e-6;

// An H100 with 128 SMs, so that a 16384 x 16384 output (64 x 128 = 8192 tiles of 128 x 256, or
// 16384 tiles of 128 x 128) fills whole waves: 8192 / 128 = 64 waves exactly.
GpuSpec h100_with_128_sms() {
  GpuSpec g = test::h100_sxm();
  g.sm_count = 128;
  return g;
}

GemmOp gemm(std::int64_t m, std::int64_t n, std::int64_t k, Precision dt = Precision::bf16, std::int64_t batch = 1) {
  GemmOp op;
  op.name = "test";
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = batch;
  op.dtype = dt;
  return op;
}

// ---------------------------------------------------------------------------------------------
// GEMMs
// ---------------------------------------------------------------------------------------------

TEST(DatasheetGemm, FlopsAreTwoMnkAndMinBytesReadAandBWriteC) {
  const GemmOp op = gemm(4, 5, 6, Precision::bf16, 3);
  EXPECT_EQ(op.flops().base(), 2.0 * 4 * 5 * 6 * 3);
  EXPECT_EQ(op.min_bytes().base(), 3.0 * (4 * 6 + 6 * 5 + 4 * 5) * 2.0);
  // FP8 inputs are one byte, the output is written in bf16 (Transformer Engine).
  EXPECT_EQ(gemm(4, 5, 6, Precision::fp8).min_bytes().base(), (4 * 6 + 6 * 5) * 1.0 + 4 * 5 * 2.0);
  EXPECT_EQ(gemm(4, 5, 6, Precision::fp32).min_bytes().base(), (4 * 6 + 6 * 5 + 4 * 5) * 4.0);
}

TEST(DatasheetGemm, LargeSquareGemmWithFullTilesAndWavesRunsAtTheCeiling) {
  // m = n = k = 16384: 128 x 256 tiles divide the output exactly (tile utilisation 1), 8192 tiles
  // fill 64 waves of 128 SMs (wave utilisation 1), and K = 16384 >= 4096 saturates the K ramp.
  // So shape efficiency is exactly 1 and time = FLOPs / (ceiling * peak) + 4 us launch.
  const DatasheetCost cost(cluster_of(h100_with_128_sms(), 8));
  const GemmOp op = gemm(16384, 16384, 16384);
  EXPECT_DOUBLE_EQ(cost.shape_efficiency(op), 1.0);
  EXPECT_EQ(cost.gemm_ceiling(), 0.75);  // no measured MAMF: the stated default
  const double flops = 2.0 * 16384.0 * 16384.0 * 16384.0;
  const double roofline = flops / (0.75 * 989.4e12);
  const double t = cost.gemm(op).base();
  EXPECT_NEAR(t, roofline + 4.0 * kUs, kSumOrder * roofline);
  // The brief's rule: within 1% of ceiling * peak (the launch cost is 0.03% of 11.9 ms).
  EXPECT_NEAR(t, roofline, 0.01 * roofline);
}

TEST(DatasheetGemm, MeasuredGemmEfficiencyReplacesTheDefaultCeiling) {
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 8));
  EXPECT_EQ(cost.gemm_ceiling(), 0.869);
}

TEST(DatasheetGemm, SkinnyGemmIsMemoryBound) {
  // m = 1 (a GEMV): 2*n*k FLOPs over (k + k*n + n)*2 bytes, about 1 FLOP per byte, far below the
  // H100's ridge of 989.4e12 * 0.75 / 3.35e12 = 221 FLOP/B at the GEMM ceiling.
  // Time = minimum bytes / the copy bandwidth + 4 us: the test H100 has no measured copy rate,
  // so the datasheet's 3.35 TB/s at the default 0.75 (DatasheetAssumptions::hbm_efficiency).
  const DatasheetCost cost(cluster_of(test::h100_sxm(), 8));
  const GemmOp op = gemm(1, 8192, 8192);
  const double bytes = (1.0 * 8192 + 8192.0 * 8192.0) * 2.0 + 1.0 * 8192 * 2.0;
  const double memory = bytes / (3350e9 * 0.75);
  EXPECT_NEAR(cost.gemm(op).base(), memory + 4.0 * kUs, kSumOrder * memory);
  // And the compute roof at this shape's efficiency is indeed below it.
  const double compute = op.flops().base() / (989.4e12 * 0.75 * cost.shape_efficiency(op));
  EXPECT_LT(compute, memory);
}

TEST(DatasheetGemm, ShapeEfficiencyDropsWhenNIsOnePastATile) {
  // m = 16384, k = 8192, 128 SMs. n = 128 fits a 128 x 128 tile exactly: 128 tiles, one full
  // wave, intrinsic 0.95. n = 129 needs two 128-wide tile columns (half empty) or one 256-wide
  // column: best is 128 x 256 with 129/256 utilisation and 128 tiles in one full wave.
  const DatasheetCost cost(cluster_of(h100_with_128_sms(), 8));
  EXPECT_NEAR(cost.shape_efficiency(gemm(16384, 128, 8192)), 0.95, kSumOrder);
  EXPECT_NEAR(cost.shape_efficiency(gemm(16384, 129, 8192)), 129.0 / 256.0, kSumOrder);
  EXPECT_GT(cost.gemm(gemm(16384, 129, 8192)).base(), cost.gemm(gemm(16384, 128, 8192)).base());
}

TEST(DatasheetGemm, WavesThatDoNotFillTheGpuLowerEfficiency) {
  // 16384 x 16384 on 132 SMs: 8192 tiles of 128 x 256 take ceil(8192/132) = 63 waves of which the
  // last is partly empty: 8192 / (63*132) = 0.9851. 128 x 128: 16384 tiles, 125 waves,
  // 0.95 * 16384 / (125*132) = 0.9433. So the 128 x 256 tile wins at 8192/8316.
  const DatasheetCost cost(cluster_of(test::h100_sxm(), 8));
  EXPECT_NEAR(cost.shape_efficiency(gemm(16384, 16384, 16384)), 8192.0 / (63.0 * 132.0), kSumOrder);
}

TEST(DatasheetGemm, ShortKIsSlowerPerFlopThanLongK) {
  // K ramp K/(K + 128) normalised to K = 4096: K = 64 gives (64/192)/(4096/4224) = 0.34375,
  // K = 8192 saturates at 1 (Sec. 3: prologue/epilogue amortised over K).
  const DatasheetCost cost(cluster_of(h100_with_128_sms(), 8));
  const GemmOp shallow = gemm(16384, 16384, 64), deep = gemm(16384, 16384, 8192);
  EXPECT_NEAR(cost.shape_efficiency(shallow), (64.0 / 192.0) / (4096.0 / 4224.0), kSumOrder);
  EXPECT_NEAR(cost.shape_efficiency(deep), 1.0, kSumOrder);
  const double per_flop_shallow = cost.gemm(shallow).base() / shallow.flops().base();
  const double per_flop_deep = cost.gemm(deep).base() / deep.flops().base();
  // The ramp alone makes K = 64 1/0.34375 = 2.9x slower per FLOP; here it is even HBM-bound
  // (541 MB in 161 us vs 134 us of compute), so it is at least 2x slower.
  EXPECT_GT(per_flop_shallow, 2.0 * per_flop_deep);
}

TEST(DatasheetGemm, Fp8UsesTheFp8PeakAtSevenOhNineOverEightOhThreeOfTheCeiling) {
  // MAMF on H100: 70.9% of FP8 peak vs 80.3% of BF16 peak; the model scales its ceiling by that.
  const DatasheetCost cost(cluster_of(h100_with_128_sms(), 8));
  const GemmOp op = gemm(16384, 16384, 16384, Precision::fp8);
  const double roofline = op.flops().base() / (1978.9e12 * 0.75 * (0.709 / 0.803));
  EXPECT_NEAR(cost.gemm(op).base(), roofline + 4.0 * kUs, kSumOrder * roofline);
  // Faster than bf16, but less than the 2x of the peaks.
  const double bf16 = cost.gemm(gemm(16384, 16384, 16384)).base();
  EXPECT_LT(cost.gemm(op).base(), bf16);
  EXPECT_GT(cost.gemm(op).base(), bf16 / 2.0);
}

TEST(DatasheetGemm, Fp8UsesTheGpusOwnFp8MamfWhenItHasOne) {
  // B200 SXM: FP8 MAMF 3432.5 of 4500 (76.3%) against BF16 1745 of 2250 (77.6%); with its own
  // FP8 figure the FP8 ceiling is that, not BF16's x H100's 0.883 (0.685), so the same large GEMM
  // runs 0.763 / 0.685 = 1.11x faster. Without it, the ratio as before.
  GpuSpec gpu = test::h100_sxm();
  gpu.peak.fp8 = units::tflop_per_s(4500);
  gpu.peak.bf16 = units::tflop_per_s(2250);
  gpu.gemm_efficiency = 0.776;
  const GemmOp op = gemm(16384, 16384, 16384, Precision::fp8);
  const double ratio_only = DatasheetCost(cluster_of(gpu, 8)).gemm(op).base();
  gpu.gemm_fp8_efficiency = 0.763;
  const double own = DatasheetCost(cluster_of(gpu, 8)).gemm(op).base();
  const double shape = DatasheetCost(cluster_of(gpu, 8)).shape_efficiency(op);
  EXPECT_NEAR(own, op.flops().base() / (4500e12 * 0.763 * shape) + 4.0 * kUs, 1e-9 * own);
  EXPECT_NEAR(ratio_only, op.flops().base() / (4500e12 * 0.776 * (0.709 / 0.803) * shape) + 4.0 * kUs,
              1e-9 * ratio_only);
  // BF16 GEMMs do not use it.
  const GemmOp bf16 = gemm(16384, 16384, 16384);
  GpuSpec without = gpu;
  without.gemm_fp8_efficiency = 0;
  EXPECT_DOUBLE_EQ(DatasheetCost(cluster_of(gpu, 8)).gemm(bf16).base(),
                   DatasheetCost(cluster_of(without, 8)).gemm(bf16).base());
}

TEST(DatasheetGemm, Fp8DefaultRatioIsTheLowestMeasuredOnTheSameTensorCoreGeneration) {
  // A GPU without its own FP8 MAMF: its BF16 ceiling times the FP8/BF16 ratio of its generation.
  // Blackwell's lowest (B300: 74.5% of the FP8 peak vs 78.6% of BF16, 0.948) against Hopper's
  // (H100: 0.709 / 0.803 = 0.883), which every other architecture also takes. A GB300-like part:
  // peaks 2500 / 5000 TFLOP/s, no MAMF of its own, so the 0.75 default ceiling.
  GpuSpec gpu = test::h100_sxm();
  gpu.peak.bf16 = units::tflop_per_s(2500);
  gpu.peak.fp8 = units::tflop_per_s(5000);
  gpu.gemm_efficiency = 0;
  gpu.gemm_fp8_efficiency = 0;
  const GemmOp op = gemm(16384, 16384, 16384, Precision::fp8);
  const auto time_for = [&](TensorCoreGeneration g) {
    GpuSpec x = gpu;
    x.tensor_cores = g;
    return DatasheetCost(cluster_of(x, 8)).gemm(op).base();
  };
  const double shape = DatasheetCost(cluster_of(gpu, 8)).shape_efficiency(op);
  const double blackwell = time_for(TensorCoreGeneration::blackwell);
  EXPECT_NEAR(blackwell, op.flops().base() / (5000e12 * 0.75 * (0.745 / 0.786) * shape) + 4.0 * kUs, 1e-9 * blackwell);
  const double hopper = time_for(TensorCoreGeneration::hopper);
  EXPECT_NEAR(hopper, op.flops().base() / (5000e12 * 0.75 * (0.709 / 0.803) * shape) + 4.0 * kUs, 1e-9 * hopper);
  EXPECT_DOUBLE_EQ(time_for(TensorCoreGeneration::other), hopper);
  // The Blackwell default runs the same GEMM 0.948 / 0.883 = 1.07x faster.
  EXPECT_NEAR(hopper / blackwell, (0.745 / 0.786) / (0.709 / 0.803), 1e-3);
  // A GPU's own FP8 figure wins over either default.
  gpu.gemm_fp8_efficiency = 0.70;
  gpu.tensor_cores = TensorCoreGeneration::blackwell;
  const double own = DatasheetCost(cluster_of(gpu, 8)).gemm(op).base();
  EXPECT_NEAR(own, op.flops().base() / (5000e12 * 0.70 * shape) + 4.0 * kUs, 1e-9 * own);
}

TEST(DatasheetGemm, UnsupportedPrecisionFallsBackToFp32Peak) {
  // A100 has no FP8: priced at its FP32 peak rather than dividing by zero.
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 8));
  const double t = cost.gemm(gemm(8192, 8192, 8192, Precision::fp8)).base();
  EXPECT_TRUE(std::isfinite(t));
  EXPECT_GT(t, cost.gemm(gemm(8192, 8192, 8192, Precision::bf16)).base());
}

// ---------------------------------------------------------------------------------------------
// Memory-bound kernels
// ---------------------------------------------------------------------------------------------

TEST(DatasheetMemory, ElementwiseTimeIsBytesOverHbmTimesCopyEfficiencyTimes085PlusThreeUs) {
  // A100 80GB: measured copy 1519.8 GB/s; element-wise kernels reach 0.85 of a copy.
  const DatasheetCost a100(cluster_of(test::a100_80gb(), 8));
  const double bytes = 1e9;
  const double a100_expected = bytes / (2039e9 * (1519.8 / 2039.0) * 0.85) + 3.0 * kUs;
  EXPECT_NEAR(a100.memory(MemoryOp{"x", units::bytes(bytes)}).base(), a100_expected, kSumOrder * a100_expected);
  // H100 without a measurement: default copy efficiency 0.75.
  const DatasheetCost h100(cluster_of(test::h100_sxm(), 8));
  const double h100_expected = bytes / (3350e9 * 0.75 * 0.85) + 3.0 * kUs;
  EXPECT_NEAR(h100.memory(MemoryOp{"x", units::bytes(bytes)}).base(), h100_expected, kSumOrder * h100_expected);
  EXPECT_NEAR(h100.elementwise_bandwidth().base(), 3350e9 * 0.75 * 0.85, kSumOrder * 3350e9);
}

// ---------------------------------------------------------------------------------------------
// Collectives
// ---------------------------------------------------------------------------------------------

CollectiveOp coll(CollectiveKind kind, double bytes, int size, int ranks_per_node, int nodes) {
  CollectiveOp c;
  c.name = "test";
  c.kind = kind;
  c.bytes = units::bytes(bytes);
  c.group = GroupPlacement{size, ranks_per_node, nodes};
  return c;
}

// alpha = base + 3 us * log2(n), base 8 us inside a node, 15 us across nodes.
double alpha(bool inter, int n) { return ((inter ? 15.0 : 8.0) + 3.0 * std::log2(double(n))) * kUs; }

const double kGiB = 1073741824.0;
const double kA100Busbw = 233e9;               // measured 8-GPU NCCL all-reduce busbw
const double kNetBusbw = 200e9 / 8.0 * 0.85;   // 200 Gbit/s per GPU at 85% of line rate

TEST(RingAllReduce, BusBandwidthFactorIsTwoNMinusOneOverN) {
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 8));
  for (int n : {2, 4, 8}) {
    const double S = kGiB;
    const double expected = 2.0 * (n - 1) / n * S / kA100Busbw + alpha(false, n);
    EXPECT_NEAR(cost.collective(coll(CollectiveKind::all_reduce, S, n, n, 1)).base(), expected, kSumOrder * expected)
        << "n=" << n;
  }
}

TEST(RingAllGather, BusBandwidthFactorIsNMinusOneOverN) {
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 8));
  const double S = kGiB;
  const double expected = 7.0 / 8.0 * S / kA100Busbw + alpha(false, 8);
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::all_gather, S, 8, 8, 1)).base(), expected, kSumOrder * expected);
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::reduce_scatter, S, 8, 8, 1)).base(), expected,
              kSumOrder * expected);
}

TEST(HierarchicalAllReduce, IsIntraNodeRingPlusInterNodeRingOnAOneGthShard) {
  // g = 8 ranks per node on N = 4 nodes (n = 32): reduce-scatter + all-gather inside the node,
  // 2(g-1)/g*S over NVLink, and the inter-node all-reduce of S/g per GPU, 2(N-1)/N*(S/g), over the
  // NICs in parallel. alpha = 15 us + 3 us * log2(32).
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 32));
  const double S = kGiB, g = 8, N = 4;
  const double expected =
      2.0 * (g - 1) / g * S / kA100Busbw + 2.0 * (N - 1) / N * (S / g) / kNetBusbw + alpha(true, 32);
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::all_reduce, S, 32, 8, 4)).base(), expected, kSumOrder * expected);
  // One rank per node: the whole buffer crosses the network.
  const double one = 2.0 * 15.0 / 16.0 * S / kNetBusbw + alpha(true, 16);
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::all_reduce, S, 16, 1, 16)).base(), one, kSumOrder * one);
}

TEST(HierarchicalAllGather, IsIntraNodeNMinusOneOverNPlusInterNodeOnAOneGthShard) {
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 32));
  const double S = kGiB, g = 4, N = 8;
  // Across nodes an all-gather is a ring with NCCL's per-step latency instead of alpha: for 1 GiB
  // the Simple protocol wins (full bandwidth), 8.4 us + (32 - 8) intra-node steps x 3.4 us +
  // (8 - 1) network steps x 14 us = 188 us (NCCL src/graph/tuning.cc).
  const double ring_us = 8.4 + 24 * 3.4 + 7 * 14.0;
  const double expected = (g - 1) / g * S / kA100Busbw + (N - 1) / N * (S / g) / kNetBusbw + ring_us * 1e-6;
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::all_gather, S, 32, 4, 8)).base(), expected, kSumOrder * expected);
}

TEST(RingAcrossNodes, LatencyGrowsLinearlyWithRanksAndSmallMessagesUseLl) {
  // A 64 KiB reduce-scatter is latency-bound: LL (a quarter of the bandwidth, 6.6 us base, 1 us per
  // intra-node step, 2.7 us per network step) is the fastest protocol, so each extra node of
  // 8 GPUs adds 7 x 1 + 2.7 = 9.7 us plus its share of bandwidth; tree-style alpha would add
  // 3 us x log2 growth only. 48 and 96 nodes: the ring term alone is 6.6 + 336 + 126.9 us and
  // 6.6 + 672 + 256.5 us.
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 768));
  const double S = 64.0 * 1024;
  const double t384 = cost.collective(coll(CollectiveKind::reduce_scatter, S, 384, 8, 48)).base();
  const double t768 = cost.collective(coll(CollectiveKind::reduce_scatter, S, 768, 8, 96)).base();
  EXPECT_GT(t384, (6.6 + 336 + 47 * 2.7) * 1e-6);
  EXPECT_GT(t768, (6.6 + 672 + 95 * 2.7) * 1e-6);
  // Doubling the ranks nearly doubles the (latency-dominated) time: at least 1.8x.
  EXPECT_GT(t768 / t384, 1.8);
  // All-reduce keeps the tree-like alpha: it grows by far less.
  const double a384 = cost.collective(coll(CollectiveKind::all_reduce, S, 384, 8, 48)).base();
  const double a768 = cost.collective(coll(CollectiveKind::all_reduce, S, 768, 8, 96)).base();
  EXPECT_LT(a768 / a384, 1.3);
  // Inside one node the ring model does not apply (NVLS / ring with the tier's alpha).
  const double in_node = cost.collective(coll(CollectiveKind::all_gather, S, 8, 8, 1)).base();
  EXPECT_LT(in_node, 60e-6);
}

TEST(SendRecv, IsBytesOverLinkBusbwPlusAlpha) {
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 16));
  const double S = 50e6;
  const double intra = S / kA100Busbw + alpha(false, 2);
  const double inter = S / kNetBusbw + alpha(true, 2);
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::send_recv, S, 2, 2, 1)).base(), intra, kSumOrder * intra);
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::send_recv, S, 2, 1, 2)).base(), inter, kSumOrder * inter);
}

TEST(AllToAll, InsideANodeMovesNMinusOneOverNOfTheBuffer) {
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 8));
  const double S = kGiB;
  const double expected = 7.0 / 8.0 * S / kA100Busbw + alpha(false, 8);
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::all_to_all, S, 8, 8, 1)).base(), expected, kSumOrder * expected);
}

TEST(FusedEpCollective, InsideANodeMovesItsBytesAtTheMeasuredRateElseAShareOfNvlink) {
  // A DeepEP / HybridEP kernel: the bytes its rank receives over the GPU's measured algorithm
  // bandwidth, plus the NVLink tier's 8 us latency (no log2 term: one kernel, no NCCL protocol).
  Cluster c = cluster_of(test::a100_80gb(), 8);
  const double S = kGiB;
  CollectiveOp op = coll(CollectiveKind::all_to_all, S, 8, 8, 1);
  op.fused_ep = true;
  c.gpu.ep_fused_bandwidth = units::gb_per_s(200);
  const double measured = S / 200e9 + 8.0 * kUs;
  EXPECT_NEAR(DatasheetCost(c).collective(op).base(), measured, kSumOrder * measured);
  // Unknown: 0.590 of the GPU's one-way NVLink (the lowest measured share, datasheet_cost.hpp).
  c.gpu.ep_fused_bandwidth = {};
  const double share = S / (0.590 * c.gpu.nvlink_bandwidth.base()) + 8.0 * kUs;
  EXPECT_NEAR(DatasheetCost(c).collective(op).base(), share, kSumOrder * share);
  // Half the NVLink bandwidth (an intra-node override) halves a measured rate too.
  c.gpu.ep_fused_bandwidth = units::gb_per_s(200);
  c.intra_node_bandwidth = c.gpu.nvlink_bandwidth * 0.5;
  const double halved = S / 100e9 + 8.0 * kUs;
  EXPECT_NEAR(DatasheetCost(c).collective(op).base(), halved, 1e-9 * halved);
  // Across nodes the kernel's network leg is priced as an NCCL all-to-all of the same bytes.
  const DatasheetCost two(cluster_of(test::a100_80gb(), 16));
  CollectiveOp wide = coll(CollectiveKind::all_to_all, S, 16, 8, 2);
  const double nccl = two.collective(wide).base();
  wide.fused_ep = true;
  EXPECT_DOUBLE_EQ(two.collective(wide).base(), nccl);
}

TEST(DatasheetCollective, SingleRankOrEmptyBufferCostsNothing) {
  const DatasheetCost cost(cluster_of(test::a100_80gb(), 8));
  EXPECT_EQ(cost.collective(coll(CollectiveKind::all_reduce, kGiB, 1, 1, 1)).base(), 0.0);
  for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                           CollectiveKind::all_to_all, CollectiveKind::send_recv}) {
    EXPECT_EQ(cost.collective(coll(k, 0.0, 8, 8, 1)).base(), 0.0) << to_string(k);
  }
}

TEST(DatasheetCollective, MeasuredNvlinkBusbwScalesWithAnIntraNodeBandwidthOverride) {
  // 233 GB/s was measured with NVLink at 300 GB/s one way; at 150 GB/s it becomes 116.5 GB/s.
  Cluster c = cluster_of(test::a100_80gb(), 8);
  c.intra_node_bandwidth = units::gb_per_s(150);
  const DatasheetCost cost(c);
  EXPECT_NEAR(cost.intra_busbw().base(), 233e9 * 150.0 / 300.0, kSumOrder * 233e9);
  const double S = kGiB;
  const double expected = 2.0 * 7.0 / 8.0 * S / (233e9 * 0.5) + alpha(false, 8);
  EXPECT_NEAR(cost.collective(coll(CollectiveKind::all_reduce, S, 8, 8, 1)).base(), expected, kSumOrder * expected);
}

TEST(DatasheetCollective, WithoutMeasurementsBusbwIsEightyPercentOfNvlinkAndEightyFivePercentOfTheNic) {
  const DatasheetCost cost(cluster_of(test::h100_sxm(), 16, 8, units::gbit_per_s(400)));
  EXPECT_NEAR(cost.intra_busbw().base(), 450e9 * 0.80, kSumOrder * 450e9);
  EXPECT_NEAR(cost.inter_busbw().base(), 400e9 / 8.0 * 0.85, kSumOrder * 50e9);
}

// ---------------------------------------------------------------------------------------------
// Contract: finite, non-negative, zero for zero-sized ops
// ---------------------------------------------------------------------------------------------

TEST(DatasheetCost, ZeroSizedOpsCostZero) {
  const DatasheetCost cost(cluster_of(test::h100_sxm(), 8));
  EXPECT_EQ(cost.gemm(gemm(0, 4096, 4096)).base(), 0.0);
  EXPECT_EQ(cost.gemm(gemm(4096, 0, 4096)).base(), 0.0);
  EXPECT_EQ(cost.gemm(gemm(4096, 4096, 0)).base(), 0.0);
  EXPECT_EQ(cost.gemm(gemm(4096, 4096, 4096, Precision::bf16, 0)).base(), 0.0);
  EXPECT_EQ(cost.memory(MemoryOp{"x", units::bytes(0)}).base(), 0.0);
  EXPECT_EQ(cost.cost(Op{MemoryOp{"x", units::bytes(0)}}).base(), 0.0);
  EXPECT_EQ(cost.shape_efficiency(gemm(0, 1, 1)), 1.0);
}

TEST(DatasheetCost, TimesAreFiniteAndPositiveAcrossShapes) {
  const DatasheetCost cost(cluster_of(test::h100_sxm(), 64));
  for (std::int64_t m : {1, 7, 128, 4097}) {
    for (std::int64_t k : {1, 64, 8192}) {
      const double t = cost.gemm(gemm(m, 3 * m + 1, k)).base();
      EXPECT_TRUE(std::isfinite(t));
      EXPECT_GT(t, 0.0);
      const double e = cost.shape_efficiency(gemm(m, 3 * m + 1, k));
      EXPECT_GT(e, 0.0);
      EXPECT_LE(e, 1.0);
    }
  }
  for (double b : {1.0, 1e3, 1e12}) {
    for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::all_to_all, CollectiveKind::send_recv}) {
      const double t = cost.collective(coll(k, b, 64, 8, 8)).base();
      EXPECT_TRUE(std::isfinite(t));
      EXPECT_GT(t, 0.0);
    }
  }
}

TEST(DatasheetCost, DispatchesEachOpKindToItsPrice) {
  const DatasheetCost cost(cluster_of(test::h100_sxm(), 8));
  const GemmOp g = gemm(4096, 4096, 4096);
  const MemoryOp mem{"x", units::gb(1)};
  const CollectiveOp c = coll(CollectiveKind::all_reduce, kGiB, 8, 8, 1);
  EXPECT_EQ(cost.cost(Op{g}), cost.gemm(g));
  EXPECT_EQ(cost.cost(Op{mem}), cost.memory(mem));
  EXPECT_EQ(cost.cost(Op{c}), cost.collective(c));
  EXPECT_EQ(cost.source(), "datasheet");
}

TEST(DatasheetCost, ARunsFitScalesEachPartAndAddsItsOverheadToEveryOp) {
  // calibrate --from-runs parameters (with_runs_fit): each acts on its own part only.
  const Cluster c = cluster_of(test::h100_sxm(), 16);  // two nodes: a scale-up and a scale-out tier
  const DatasheetCost base(c);
  DatasheetAssumptions a;
  a.per_op_overhead_us = 20.0;
  const DatasheetCost overhead(c, a);
  const GemmOp g = gemm(4096, 4096, 4096);
  const MemoryOp mem{"x", units::gb(1)};
  const CollectiveOp in = coll(CollectiveKind::all_reduce, kGiB, 8, 8, 1);
  const CollectiveOp across = coll(CollectiveKind::all_reduce, kGiB, 16, 8, 2);
  EXPECT_NEAR(overhead.gemm(g).base() - base.gemm(g).base(), 20 * kUs, 1e-12);
  EXPECT_NEAR(overhead.memory(mem).base() - base.memory(mem).base(), 20 * kUs, 1e-12);
  EXPECT_NEAR(overhead.collective(in).base() - base.collective(in).base(), 20 * kUs, 1e-12);
  EXPECT_EQ(overhead.collective(coll(CollectiveKind::all_reduce, kGiB, 1, 1, 1)).base(), 0.0);  // no op, no cost

  DatasheetAssumptions s;
  s.scale_out_busbw_scale = 0.5;
  const DatasheetCost slow_net(c, s, "calibrated from 2 runs: test");
  EXPECT_EQ(slow_net.source(), "calibrated from 2 runs: test");
  EXPECT_DOUBLE_EQ(slow_net.inter_busbw().base(), 0.5 * base.inter_busbw().base());
  EXPECT_DOUBLE_EQ(slow_net.intra_busbw().base(), base.intra_busbw().base());
  EXPECT_EQ(slow_net.collective(in), base.collective(in));      // inside a node: unchanged
  EXPECT_GT(slow_net.collective(across), base.collective(across));
  EXPECT_EQ(slow_net.gemm(g), base.gemm(g));

  // GEMM scale: 0.8 of the ceiling; 1.3 would lift a measured 0.803 ceiling (H100 MAMF) to 1.04,
  // so it is capped at the dense peak (1.0) and no GEMM runs faster than the peak.
  GpuSpec mamf = test::h100_sxm();
  mamf.gemm_efficiency = 0.803;
  const Cluster m = cluster_of(mamf, 8);
  DatasheetAssumptions slow, fast;
  slow.gemm_efficiency_scale = 0.8;
  fast.gemm_efficiency_scale = 1.3;
  EXPECT_NEAR(DatasheetCost(m, slow).gemm_ceiling(), 0.8 * 0.803, 1e-15);
  EXPECT_DOUBLE_EQ(DatasheetCost(m, fast).gemm_ceiling(), 1.0);
  EXPECT_GE(DatasheetCost(m, fast).gemm(g).base(), g.flops().base() / m.gpu.peak.bf16.base());
}

TEST(DatasheetCost, FusedAttentionRunsAtTheKernelsPublishedRateNotTheGemmModel) {
  // A fused-attention op: time = FLOPs / (peak * attention_efficiency) + launch (4 us), with the
  // GPU's own figure when it has one, else DatasheetAssumptions::attention_efficiency (0.268,
  // FlashAttention-2 on H100 at the reference shape). An op without its shape is priced at the
  // reference shape.
  GpuSpec gpu = test::h100_sxm();
  GemmOp attn{"attn_score", 8192, 8192, 128, 32, Precision::bf16, true};
  const double flops = 2.0 * 8192 * 8192 * 128 * 32;
  const double peak = gpu.peak.bf16.base();
  gpu.attention_efficiency = 0.0;
  EXPECT_NEAR(DatasheetCost(cluster_of(gpu, 8)).gemm(attn).base(), flops / (peak * 0.268) + 4e-6, 1e-12);
  gpu.attention_efficiency = 0.72;
  EXPECT_NEAR(DatasheetCost(cluster_of(gpu, 8)).gemm(attn).base(), flops / (peak * 0.72) + 4e-6, 1e-12);
  // The same shape as a plain batched GEMM goes through the tile/wave/K model instead.
  attn.fused_attention = false;
  EXPECT_NE(DatasheetCost(cluster_of(gpu, 8)).gemm(attn).base(), flops / (peak * 0.72) + 4e-6);
}

TEST(DatasheetCost, FusedAttentionRateFollowsThePublishedSequenceAndHeadDimensionCurves) {
  // The GPU's figure is FlashAttention-2's rate at 2k tokens, causal, head dimension 128; other
  // shapes scale by s / (s + 530) and d / (d + 20), normalised there. Checked against the
  // FlashAttention-2 README charts (Dao-AILab/flash-attention @4f285b35) that the curve was read
  // from. H100 SXM5, panel (d), causal, head dimension 128: 163, 221, 265, 294, 308, 328 TFLOP/s at
  // 512 .. 16k tokens; panel (c), head dimension 64, at 2k: 232. The two-parameter curve is within
  // 6% of every bar from 512 to 16k (the bars' own run-to-run noise is a few percent).
  GpuSpec gpu = test::h100_sxm();
  gpu.attention_efficiency = 265.0 / 989.0;
  const double peak = gpu.peak.bf16.base();
  const DatasheetCost cost(cluster_of(gpu, 8));
  const std::pair<std::int64_t, double> chart[] = {{512, 163}, {1024, 221}, {2048, 265},
                                                    {4096, 294}, {8192, 308}, {16384, 328}};
  for (const auto& [tokens, tflops] : chart) {
    GemmOp attn{"attn_score", tokens, tokens, 128, 64, Precision::bf16, true};
    attn.attention_tokens = tokens;
    attn.attention_head_dim = 128;
    const double rate = attn.flops().base() / (cost.gemm(attn).base() - 4e-6);
    EXPECT_NEAR(rate / (tflops * 1e12 / 989e12 * peak), 1.0, 0.06) << tokens << " tokens";
  }
  GemmOp hd64{"attn_score", 2048, 2048, 64, 64, Precision::bf16, true};
  hd64.attention_tokens = 2048;
  hd64.attention_head_dim = 64;
  const double rate64 = hd64.flops().base() / (cost.gemm(hd64).base() - 4e-6);
  EXPECT_NEAR(rate64 / (232e12 / 989e12 * peak), 1.0, 0.03);
  // At the reference shape the figure is the rate; a shorter sweep is slower; FlashAttention-1
  // kernels keep their one figure (their charts do not follow the curve).
  GemmOp ref{"attn_score", 2048, 2048, 128, 64, Precision::bf16, true};
  ref.attention_tokens = 2048;
  ref.attention_head_dim = 128;
  GemmOp none = ref;
  none.attention_tokens = none.attention_head_dim = 0;
  EXPECT_DOUBLE_EQ(cost.gemm(ref).base(), cost.gemm(none).base());
  GemmOp window = ref;
  window.attention_tokens = 256;
  EXPECT_GT(cost.gemm(window).base(), 2.0 * cost.gemm(ref).base());
  GemmOp v1 = window;
  v1.attention_v1 = true;
  GemmOp v1_ref = ref;
  v1_ref.attention_v1 = true;
  EXPECT_DOUBLE_EQ(cost.gemm(v1).base(), cost.gemm(v1_ref).base());
}

TEST(DatasheetCost, AFlashAttentionOneKernelRunsAtItsOwnPublishedRate) {
  // A FlashAttention-1-class kernel (flash-attn 1.x, the 2023 Triton FlashAttention): time =
  // FLOPs / (peak * attention_v1_efficiency) + launch, with the GPU's figure (H100: FlashAttention
  // 1.x at 108 TFLOP/s of 989, FlashAttention-2 README chart), else 0.41 of the GPU's
  // FlashAttention-2 efficiency (the same charts: H100 108 / 265, A100 69 / 155); never faster than
  // FlashAttention-2 on the same GPU.
  GpuSpec gpu = test::h100_sxm();
  GemmOp attn{"attn_score", 2048, 2048, 128, 192, Precision::bf16, true};
  attn.attention_v1 = true;
  const double flops = 2.0 * 2048 * 2048 * 128 * 192;
  const double peak = gpu.peak.bf16.base();
  gpu.attention_efficiency = 0.35;
  gpu.attention_v1_efficiency = 108.0 / 989.0;
  EXPECT_NEAR(DatasheetCost(cluster_of(gpu, 8)).gemm(attn).base(), flops / (peak * 108.0 / 989.0) + 4e-6, 1e-12);
  gpu.attention_v1_efficiency = 0.0;
  EXPECT_NEAR(DatasheetCost(cluster_of(gpu, 8)).gemm(attn).base(), flops / (peak * 0.35 * 0.41) + 4e-6, 1e-12);
  gpu.attention_v1_efficiency = 0.9;  // a figure above FlashAttention-2's is capped at it
  EXPECT_NEAR(DatasheetCost(cluster_of(gpu, 8)).gemm(attn).base(), flops / (peak * 0.35) + 4e-6, 1e-12);
  // The flag means nothing on a GEMM that is not a fused attention kernel.
  GemmOp plain = attn;
  plain.fused_attention = false;
  GemmOp plain2 = plain;
  plain2.attention_v1 = false;
  EXPECT_DOUBLE_EQ(DatasheetCost(cluster_of(gpu, 8)).gemm(plain).base(),
                   DatasheetCost(cluster_of(gpu, 8)).gemm(plain2).base());
}

}  // namespace
}  // namespace capplan::sim
