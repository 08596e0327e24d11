// SPDX-License-Identifier: Apache-2.0
// CUDA backend tests. Suites named CudaBackendOnGpu carry the CTest label "gpu" and skip (with
// the backend's own message) when no CUDA device is present; CudaBackendWithoutDevice runs in the
// default suite and checks that a machine with the toolkit but no GPU gets a Diagnostic, not a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "capplan/sim/workload/result.hpp"
#include "capplan/calibrate/fit.hpp"
#include "cuda_backend.hpp"
#include "step_test_support.hpp"

namespace capplan::calib {
namespace {

// The backend, or a skip carrying the reason ("no CUDA device found (...)").
#define CAPPLAN_CUDA_BACKEND_OR_SKIP(var)                                         \
  auto var##_made = CudaBackend::create(0);                                      \
  if (!var##_made) GTEST_SKIP() << "skipped: " << to_string(var##_made.error()); \
  CudaBackend& var = **var##_made

RunOptions quick() { return {.warmup = 2, .iterations = 5, .max_seconds_per_case = 1.0}; }

TEST(CudaBackendWithoutDevice, FactoryReportsNoCudaDeviceFoundInsteadOfCrashing) {
  auto backend = make_cuda_backend(0);
  if (backend) GTEST_SKIP() << "a CUDA device is present: " << (*backend)->context().device;
  ASSERT_FALSE(backend.error().empty());
  EXPECT_NE(backend.error().front().message.find("no CUDA device found ("), std::string::npos)
      << to_string(backend.error());
}

TEST(CudaBackendOnGpu, ContextNamesTheDeviceAndLibraryVersions) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  const Context c = cuda.context();
  EXPECT_EQ(c.backend, "cuda");
  EXPECT_FALSE(c.device.empty());
  EXPECT_FALSE(c.date_utc.empty());
  EXPECT_TRUE(c.versions.contains("cuda_runtime"));
  EXPECT_TRUE(c.versions.contains("cublaslt"));
  EXPECT_TRUE(c.versions.contains("compute_capability"));
  // The device properties the fit's wave term and the HBM rotation use.
  ASSERT_TRUE(c.properties.contains("sm_count"));
  EXPECT_GT(std::stoi(c.properties.at("sm_count")), 0);
  ASSERT_TRUE(c.properties.contains("l2_bytes"));
  EXPECT_GT(std::stoll(c.properties.at("l2_bytes")), 0);
  EXPECT_TRUE(c.properties.contains("memory_bytes"));
  EXPECT_EQ(c.versions.at("fp8_fast_accum"), "off");
  EXPECT_TRUE(c.clocks.contains("warm_up_ms"));
#ifdef CAPPLAN_HAVE_NCCL
  EXPECT_TRUE(c.versions.contains("nccl_alltoall"));
#endif
  // With NVML the state has the current SM clock and throttle reasons; without it, nothing, and
  // the context says why.
  const auto state = cuda.device_state();
  if (c.versions.contains("nvml")) {
    EXPECT_TRUE(state.empty());
  } else {
    EXPECT_TRUE(state.contains("sm_mhz"));
    EXPECT_TRUE(state.contains("throttle_reasons"));
  }
}

// ||C - C_ref|| / ||C_ref|| against a float64 host product of the same (random) inputs. Tolerances
// (METHOD.md's bands): fp32 accumulates in fp32 (sums of 144 terms: ~1e-7, allow 1e-5); tf32 rounds
// operands to a 10-bit mantissa (~3e-4, allow 3e-3); fp16 rounds C to an 11-bit mantissa (~3e-4,
// allow 5e-3); bf16 rounds C to an 8-bit mantissa (~2e-3) and fp8 gives a bf16 C from exactly
// representable e4m3 inputs (~2e-3): allow 1e-2 for both. Sizes are multiples of 16 (fp8's rule),
// not of 64, so tile edges are exercised.
TEST(CudaBackendOnGpu, GemmMatchesFloat64ReferenceWithinDtypeTolerance) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  const struct {
    sim::Precision dtype;
    double tolerance;
  } cases[] = {{sim::Precision::fp32, 1e-5}, {sim::Precision::tf32, 3e-3}, {sim::Precision::fp16, 5e-3},
               {sim::Precision::bf16, 1e-2}, {sim::Precision::fp8, 1e-2}};
  for (const auto& c : cases) {
    if (!cuda.supports(c.dtype)) continue;
    auto err = cuda.gemm_relative_error({.m = 96, .n = 80, .k = 144, .batch = 2, .dtype = c.dtype});
    ASSERT_TRUE(err.has_value()) << sim::to_string(c.dtype) << ": " << to_string(err.error());
    EXPECT_LT(*err, c.tolerance) << sim::to_string(c.dtype);
  }
}

TEST(CudaBackendOnGpu, GemmRecordCarriesTwoMnkFlopsAndPositiveTimes) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  GemmShape shape;
  shape.m = shape.n = shape.k = 2048;
  shape.dtype = sim::Precision::bf16;
  auto rec = cuda.gemm(shape, quick());
  ASSERT_TRUE(rec.has_value()) << to_string(rec.error());
  EXPECT_DOUBLE_EQ(rec->flops, 2.0 * 2048.0 * 2048.0 * 2048.0);
  EXPECT_DOUBLE_EQ(rec->bytes, 3.0 * 2048.0 * 2048.0 * 2.0);  // A, B read and C written once, 2 bytes each
  EXPECT_GT(rec->time.median_s, 0.0);
  EXPECT_LE(rec->time.min_s, rec->time.median_s);
  EXPECT_LT(rec->achieved_flops_per_s(), 5e15);  // above any GPU's dense bf16 peak: a broken timer
}

TEST(CudaBackendOnGpu, MemoryPatternsReportPlausibleBandwidth) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  for (const char* pattern : {"copy", "norm", "elementwise"}) {
    auto rec = cuda.memory(pattern, 512.0 * 1024 * 1024, quick());
    ASSERT_TRUE(rec.has_value()) << pattern << ": " << to_string(rec.error());
    // Between 50 GB/s (any datacenter GPU does more) and 20 TB/s (above any HBM).
    EXPECT_GT(rec->bandwidth_Bps(), 5e10) << pattern;
    EXPECT_LT(rec->bandwidth_Bps(), 2e13) << pattern;
  }
  // The smallest size of the sweep (64 KiB, read from HBM through rotated copies) is measured too.
  for (const char* pattern : {"copy", "norm", "elementwise"}) {
    auto rec = cuda.memory(pattern, 64.0 * 1024, quick());
    ASSERT_TRUE(rec.has_value()) << pattern << ": " << to_string(rec.error());
    EXPECT_GT(rec->time.median_s, 0.0) << pattern;
    EXPECT_LT(rec->bandwidth_Bps(), 2e13) << pattern;
  }
  auto bad = cuda.memory("strided", 1e6, quick());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().front().message.find("known: copy, norm, elementwise"), std::string::npos);
}

// bf16 output: one rounding to an 8-bit mantissa, relative error ~2e-3; allow 1e-2.
// Launch and dispatch on a real GPU: every pattern's batch of 1024 takes longer than its batch of
// 16, and the fitted cost per kernel lies between 0.1 us and 50 us (CUDA launches cost a few
// microseconds on any host of the last decade; graph nodes and back-to-back empty kernels about one).
TEST(CudaBackendOnGpu, LaunchPatternsFitAPlausibleCostPerKernel) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  std::vector<LaunchRecord> recs;
  for (const auto& pattern : cuda.launch_patterns()) {
    for (int k : {16, 128, 1024}) {
      auto rec = cuda.launch(pattern, k, quick());
      ASSERT_TRUE(rec.has_value()) << pattern << ": " << to_string(rec.error());
      recs.push_back(*rec);
    }
    EXPECT_GT(recs.back().time.median_s, recs[recs.size() - 3].time.median_s) << pattern;
    auto fit = fit_launch(recs, pattern);
    ASSERT_TRUE(fit.has_value()) << pattern << ": " << to_string(fit.error());
    EXPECT_GT(fit->per_kernel_s.value, 1e-7) << pattern;
    EXPECT_LT(fit->per_kernel_s.value, 5e-5) << pattern;
  }
  EXPECT_FALSE(cuda.launch("warp", 16, quick()).has_value());
}

TEST(CudaBackendOnGpu, NormKernelMatchesFloat64Reference) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  auto err = cuda.norm_relative_error(64, 8192);
  ASSERT_TRUE(err.has_value()) << to_string(err.error());
  EXPECT_LT(*err, 1e-2);
}

TEST(CudaBackendOnGpu, TrainingStepComponentsAddUpToTheStep) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  const StepShape shape{.layers = 2, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .seq_len = 256, .micro_batch = 2,
                        .dtype = sim::Precision::bf16};
  auto rec = cuda.training_step(shape, quick());
  ASSERT_TRUE(rec.has_value()) << to_string(rec.error());
  EXPECT_GT(rec->time.median_s, 0.0);
  const double sum = test::expect_positive_components(*rec);
  // Components are medians of per-op event intervals that tile the step; the sum of medians and the
  // median of sums differ only by run-to-run spread: allow 15%.
  EXPECT_NEAR(sum, rec->time.median_s, 0.15 * rec->time.median_s);
}

// The Llama-style slice (GQA, SwiGLU, RMSNorm, RoPE, fused attention) in bf16 and fp8 (fp8 only
// where the device has e4m3 tensor cores).
TEST(CudaBackendOnGpu, TrainingStepRunsLlamaStyleLayersInBf16AndFp8) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  for (const auto dt : {sim::Precision::bf16, sim::Precision::fp8}) {
    if (!cuda.supports(dt)) continue;
    const StepShape shape{.hidden = 1024, .heads = 8, .ffn_hidden = 2816, .seq_len = 512, .gated_ffn = true,
                          .dtype = dt, .kv_heads = 2, .rmsnorm = true, .rope = true, .flash_attention = true};
    auto rec = cuda.training_step(shape, quick());
    ASSERT_TRUE(rec.has_value()) << sim::to_string(dt) << ": " << to_string(rec.error());
    test::expect_positive_components(*rec);
    // Fused attention runs as batched GEMMs: their share of "attention" is reported beside it.
    ASSERT_TRUE(rec->components_s.contains("attention_batched_gemm")) << sim::to_string(dt);
    EXPECT_GT(rec->components_s.at("attention_batched_gemm"), 0.0);
    EXPECT_LE(rec->components_s.at("attention_batched_gemm"), rec->components_s.at("attention") * (1 + 1e-9));
  }
}

// A serving decode step (every GEMM reading its own weights and KV cache from HBM) runs, and an
// unfused layer reports no batched-GEMM stand-in.
TEST(CudaBackendOnGpu, DecodeStepRunsWithItsOwnWeightsPerGemm) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  const StepShape shape{.layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 2816, .seq_len = 1, .micro_batch = 8,
                        .gated_ffn = true, .dtype = sim::Precision::bf16, .kv_heads = 2, .rmsnorm = true,
                        .rope = true, .decode_context = 1024};
  auto rec = cuda.training_step(shape, quick());
  ASSERT_TRUE(rec.has_value()) << to_string(rec.error());
  EXPECT_GT(rec->time.median_s, 0.0);
  EXPECT_GT(rec->components_s.at("gemm"), 0.0);
  EXPECT_FALSE(rec->components_s.contains("attention_batched_gemm"));
}

TEST(CudaBackendOnGpu, TrainingStepRejectsFp32WithAMessage) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  auto rec = cuda.training_step({.hidden = 256, .heads = 4, .ffn_hidden = 1024, .seq_len = 128,
                                 .dtype = sim::Precision::fp32},
                                quick());
  ASSERT_FALSE(rec.has_value());
  EXPECT_NE(rec.error().front().where.find("dtype"), std::string::npos);
}

// With one GPU in the process the backend says collectives need two; with more, all-reduce busbw
// follows nccl-tests: busbw = algbw * 2(n-1)/n.
TEST(CudaBackendOnGpu, CollectivesNeedTwoGpusOrFollowNcclTestsDefinitions) {
  CAPPLAN_CUDA_BACKEND_OR_SKIP(cuda);
  auto rec = cuda.collective(sim::CollectiveKind::all_reduce, 64.0 * 1024 * 1024, quick());
#ifndef CAPPLAN_HAVE_NCCL
  ASSERT_FALSE(rec.has_value());
  EXPECT_NE(rec.error().front().message.find("no NCCL"), std::string::npos);
#else
  if (cuda.local_device_count() < 2 && cuda.ranks() < 2) {
    ASSERT_FALSE(rec.has_value());
    EXPECT_NE(rec.error().front().message.find("at least 2 GPUs"), std::string::npos) << to_string(rec.error());
    return;
  }
  ASSERT_TRUE(rec.has_value()) << to_string(rec.error());
  const double n = rec->ranks;
  EXPECT_GE(rec->ranks, 2);
  EXPECT_NEAR(rec->algbw_Bps, rec->bytes / rec->time.median_s, 1e-9 * rec->algbw_Bps);
  EXPECT_NEAR(rec->busbw_Bps, rec->algbw_Bps * 2.0 * (n - 1) / n, 1e-9 * rec->busbw_Bps);
#endif
}

}  // namespace
}  // namespace capplan::calib
