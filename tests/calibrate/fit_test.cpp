// SPDX-License-Identifier: Apache-2.0
// The fitter recovers known parameters from synthetic measurements (generated from the model
// itself with seeded 2% lognormal noise, the run-to-run spread of a quiet GPU or CPU), and makes
// sane fits of real host records kept in tests/fixtures/calibrate/.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "capplan/calibrate/fit.hpp"

namespace capplan::calib {
namespace {

constexpr double kNoise = 0.02;  // lognormal sigma of the synthetic samples

// Median of `n` lognormal samples around `t` with the stats a backend would report.
SampleStats noisy(double t, std::mt19937& rng, int n = 1) {
  std::normal_distribution<double> z(0.0, kNoise);
  SampleStats s;
  for (int i = 0; i < n; ++i) s.samples_s.push_back(t * std::exp(z(rng)));
  std::vector<double> sorted = s.samples_s;
  std::sort(sorted.begin(), sorted.end());
  s.min_s = sorted.front();
  s.median_s = sorted[sorted.size() / 2];
  s.p99_s = sorted.back();
  double sum = 0;
  for (double x : sorted) sum += x;
  s.mean_s = sum / static_cast<double>(n);
  return s;
}

sim::GemmFit truth_gemm(int wave_units) {
  sim::GemmFit f;
  f.dtype = sim::Precision::bf16;
  f.launch_s.value = 5e-6;                // 5 us launch + tail
  f.peak_flops_per_s.value = 700e12;      // 700 TFLOP/s asymptote (H100-class BF16)
  f.m_half.value = 48;
  f.n_half.value = 96;
  f.k_half.value = 160;
  f.wave_units = wave_units;
  return f;
}

std::vector<GemmRecord> synthetic_gemms(const sim::GemmFit& truth, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<GemmRecord> out;
  const std::int64_t dims[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192};
  for (auto m : dims) {
    for (auto n : dims) {
      for (auto k : dims) {
        GemmRecord r;
        r.shape = {m, n, k, 1, truth.dtype};
        r.flops = 2.0 * double(m) * double(n) * double(k);
        r.bytes = 2.0 * double(m * k + k * n + m * n);  // bf16 A, B read, C written
        r.time = noisy(sim::gemm_model_time_s(truth, m, n, k, 1), rng);
        out.push_back(r);
      }
    }
  }
  return out;
}

// 512 shapes (64..8192 in each dimension), one median each with 2% noise. Over seeds 1-8, with and
// without wave quantisation, the worst recovered errors were: peak 0.46%, launch 0.4%, halves
// 3.6% (the halves rest only on the small end of their own dimension, where the noise is a larger
// share of their effect). Tolerances are about three times those: peak 1.5%, launch 5%, halves 10%.
TEST(GemmFit, RecoversLaunchPeakAndHalvesFromNoisySyntheticShapes) {
  const sim::GemmFit truth = truth_gemm(0);
  auto fit = fit_gemm(synthetic_gemms(truth, 42), sim::Precision::bf16);
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  EXPECT_NEAR(fit->peak_flops_per_s.value / truth.peak_flops_per_s.value, 1.0, 0.015);
  EXPECT_NEAR(fit->launch_s.value / truth.launch_s.value, 1.0, 0.05);
  EXPECT_NEAR(fit->m_half.value / truth.m_half.value, 1.0, 0.10);
  EXPECT_NEAR(fit->n_half.value / truth.n_half.value, 1.0, 0.10);
  EXPECT_NEAR(fit->k_half.value / truth.k_half.value, 1.0, 0.10);
  // The residual is the noise itself: RMS of 2% lognormal ~ 2%; the fit cannot beat it by much
  // nor should it be worse.
  EXPECT_NEAR(fit->quality.rms_relative_residual, kNoise, 0.005);
  EXPECT_GT(fit->quality.r2, 0.999);
  EXPECT_EQ(fit->quality.samples, 512);
  EXPECT_EQ(fit->peak_flops_per_s.source, sim::ParamSource::fitted);
  EXPECT_EQ(fit->peak_flops_per_s.samples, 512);
  EXPECT_EQ(fit->min_m, 64);
  EXPECT_EQ(fit->max_k, 8192);
}

// Same, on a GPU with 132 SMs: the wave-quantisation term is applied, not fitted, so the other
// parameters come back within the same tolerances (same worst cases over seeds 1-8).
TEST(GemmFit, RecoversParametersWithWaveQuantisationOn132Sms) {
  const sim::GemmFit truth = truth_gemm(132);
  auto fit = fit_gemm(synthetic_gemms(truth, 7), sim::Precision::bf16, 132);
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  EXPECT_NEAR(fit->peak_flops_per_s.value / truth.peak_flops_per_s.value, 1.0, 0.015);
  EXPECT_NEAR(fit->launch_s.value / truth.launch_s.value, 1.0, 0.05);
  EXPECT_NEAR(fit->m_half.value / truth.m_half.value, 1.0, 0.10);
  EXPECT_NEAR(fit->k_half.value / truth.k_half.value, 1.0, 0.10);
  EXPECT_EQ(fit->wave_units, 132);
}

TEST(GemmFit, TooFewShapesIsADiagnosticNamingTheFit) {
  std::vector<GemmRecord> recs = synthetic_gemms(truth_gemm(0), 1);
  recs.resize(3);
  auto fit = fit_gemm(recs, sim::Precision::bf16);
  ASSERT_FALSE(fit.has_value());
  EXPECT_EQ(fit.error()[0].where, "gemm/bf16");
  EXPECT_NE(fit.error()[0].message.find("3 distinct shapes"), std::string::npos);
}

TEST(GemmFit, ADimensionThatNeverVariedHasItsHalfHeldAtZero) {
  std::vector<GemmRecord> recs;
  for (const auto& r : synthetic_gemms(truth_gemm(0), 3)) {
    if (r.shape.m == 1024) recs.push_back(r);
  }
  auto fit = fit_gemm(recs, sim::Precision::bf16);
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->m_half.value, 0.0);
  EXPECT_EQ(fit->m_half.samples, 0);
  EXPECT_NEAR(fit->quality.rms_relative_residual, kNoise, 0.01);
}

// 12 sizes from 4 KiB to 8 GiB, 2% noise: bandwidth is set by the large sizes (2%), latency by
// the small ones, where it is most of the time (10%).
TEST(MemoryFit, RecoversLatencyAndBandwidth) {
  std::mt19937 rng(11);
  std::vector<MemoryRecord> recs;
  const double latency = 3e-6, bw = 2.8e12;
  for (int e = 12; e <= 33; e += 2) {
    MemoryRecord r;
    r.pattern = "copy";
    r.bytes = std::ldexp(1.0, e);
    r.time = noisy(latency + r.bytes / bw, rng, 5);
    recs.push_back(r);
  }
  auto fit = fit_memory(recs, "copy");
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  EXPECT_NEAR(fit->bandwidth_Bps.value / bw, 1.0, 0.02);
  EXPECT_NEAR(fit->latency_s.value / latency, 1.0, 0.10);
  EXPECT_EQ(fit->min_bytes, 4096.0);
  EXPECT_EQ(fit->max_bytes, std::ldexp(1.0, 32));
  EXPECT_GT(fit->quality.r2, 0.99);
}

// nccl-tests: time = alpha + bytes * busfactor / busbw. Sizes 8 B..1 GiB (every 4x), 2% noise;
// alpha is most of the time below ~64 KiB, busbw above ~64 MiB: both within 5%.
TEST(CollectiveFit, RecoversAlphaAndBusBandwidthPerKind) {
  std::mt19937 rng(5);
  const double alpha = 12e-6, busbw = 360e9;
  const int ranks = 8;
  for (auto kind : {sim::CollectiveKind::all_reduce, sim::CollectiveKind::all_gather, sim::CollectiveKind::send_recv}) {
    std::vector<CollectiveRecord> recs;
    for (int e = 3; e <= 30; e += 2) {
      CollectiveRecord r;
      r.kind = kind;
      r.bytes = std::ldexp(1.0, e);
      r.ranks = ranks;
      r.ranks_per_node = ranks;
      r.tier = "nvlink";
      r.time = noisy(alpha + r.bytes * sim::nccl_bus_factor(kind, ranks) / busbw, rng, 5);
      recs.push_back(r);
    }
    auto fit = fit_collective(recs, kind, ranks, "nvlink");
    ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
    EXPECT_NEAR(fit->busbw_Bps.value / busbw, 1.0, 0.05) << sim::to_string(kind);
    EXPECT_NEAR(fit->latency_s.value / alpha, 1.0, 0.05) << sim::to_string(kind);
    EXPECT_GT(fit->quality.r2, 0.99);
    EXPECT_EQ(fit->busbw_Bps.samples, 14);
  }
}

TEST(CollectiveFit, BusFactorsAreNcclTestsDefinitions) {
  EXPECT_DOUBLE_EQ(sim::nccl_bus_factor(sim::CollectiveKind::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(sim::nccl_bus_factor(sim::CollectiveKind::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(sim::nccl_bus_factor(sim::CollectiveKind::reduce_scatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(sim::nccl_bus_factor(sim::CollectiveKind::all_to_all, 2), 0.5);
  EXPECT_DOUBLE_EQ(sim::nccl_bus_factor(sim::CollectiveKind::send_recv, 2), 1.0);
}

Measurements small_measurements() {
  Measurements m;
  m.context.backend = "host";
  m.context.device = "Test CPU";
  m.context.host = "ci";
  m.context.date_utc = "2026-11-30T17:00:00Z";
  m.context.capplan_version = "0.1.0";
  m.context.versions["eigen"] = "3.4.0";
  m.context.threads = 2;
  m.gemms = synthetic_gemms(truth_gemm(0), 9);
  std::mt19937 rng(1);
  for (double b : {1e4, 1e6, 1e8}) {
    MemoryRecord r;
    r.pattern = "copy";
    r.bytes = b;
    r.time = noisy(2e-6 + b / 1e10, rng, 3);
    m.memory.push_back(r);
  }
  MemoryRecord lone;  // one size only: no fit, a note
  lone.pattern = "norm";
  lone.bytes = 1e6;
  lone.time = noisy(1e-4, rng, 3);
  m.memory.push_back(lone);
  return m;
}

TEST(FitProfile, FitsWhatItCanAndNotesWhatItCannot) {
  auto p = fit_profile(small_measurements());
  ASSERT_TRUE(p.has_value()) << to_string(p.error());
  EXPECT_EQ(p->context_value("device"), "Test CPU");
  EXPECT_EQ(p->context_value("version.eigen"), "3.4.0");
  EXPECT_EQ(p->context_value("threads"), "2");
  ASSERT_EQ(p->gemm.size(), 1u);
  EXPECT_EQ(p->gemm_points.size(), 512u);
  ASSERT_EQ(p->memory.size(), 1u);
  EXPECT_EQ(p->memory[0].pattern, "copy");
  EXPECT_EQ(p->memory_points.size(), 4u);  // every record, also the lone "norm" one
  ASSERT_EQ(p->notes.size(), 1u);
  EXPECT_EQ(p->notes[0], "memory/norm: 1 distinct sizes measured; a fit needs 3");
}

TEST(FitProfile, ANegativeTimeIsAnErrorNamingTheRecord) {
  Measurements m = small_measurements();
  m.gemms[4].time.median_s = -1e-6;
  auto p = fit_profile(m);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error()[0].where, "records#/gemms/4/time/median_s");
}

// A kernel below the timer's resolution (median 0 s) cannot be fitted, but must not cost the
// whole calibration: it is left out with a note.
TEST(FitProfile, AZeroTimeRecordIsLeftOutWithANote) {
  Measurements m = small_measurements();
  m.gemms[4].time.median_s = 0;
  auto p = fit_profile(m);
  ASSERT_TRUE(p.has_value()) << to_string(p.error());
  EXPECT_EQ(p->gemm_points.size(), 511u);
  EXPECT_EQ(p->gemm[0].quality.samples, 511);
  ASSERT_FALSE(p->notes.empty());
  EXPECT_EQ(p->notes[0], "records#/gemms/4: median time 0 s (below the timer's resolution); record left out");
}

TEST(RecordsFile, RoundTripsEveryRecord) {
  Measurements m = small_measurements();
  CollectiveRecord c;
  c.kind = sim::CollectiveKind::all_gather;
  c.bytes = 1 << 20;
  c.ranks = 2;
  c.tier = "host-shm";
  c.algbw_Bps = 1e9;
  c.busbw_Bps = 5e8;
  std::mt19937 rng(2);
  c.time = noisy(1e-3, rng, 3);
  m.collectives.push_back(c);
  StepRecord s;
  s.shape = {2, 256, 4, 1024, 128, 2, false, sim::Precision::fp32};
  s.time = noisy(0.05, rng, 3);
  s.components_s["gemm"] = 0.03;
  m.steps.push_back(s);
  StepRecord decode = s;  // a serving decode step: its context round-trips too
  decode.shape.micro_batch = 16;
  decode.shape.decode_context = 1024;
  m.steps.push_back(decode);

  const std::string text = measurements_to_json(m);
  auto back = parse_measurements(text, "records.json");
  ASSERT_TRUE(back.has_value()) << to_string(back.error());
  EXPECT_EQ(back->context.device, "Test CPU");
  EXPECT_EQ(back->context.threads, 2);
  ASSERT_EQ(back->gemms.size(), m.gemms.size());
  EXPECT_EQ(back->gemms[5].shape, m.gemms[5].shape);
  EXPECT_DOUBLE_EQ(back->gemms[5].time.median_s, m.gemms[5].time.median_s);
  EXPECT_EQ(back->gemms[5].time.samples_s, m.gemms[5].time.samples_s);
  ASSERT_EQ(back->collectives.size(), 1u);
  EXPECT_EQ(back->collectives[0].kind, sim::CollectiveKind::all_gather);
  EXPECT_EQ(back->collectives[0].tier, "host-shm");
  ASSERT_EQ(back->steps.size(), 2u);
  EXPECT_EQ(back->steps[0].shape, s.shape);
  EXPECT_EQ(back->steps[1].shape.decode_context, 1024);
  EXPECT_EQ(back->steps[1].shape, decode.shape);
  EXPECT_DOUBLE_EQ(back->steps[0].components_s.at("gemm"), 0.03);
  EXPECT_EQ(measurements_to_json(*back), text);
}

// A profile of records with NCCL versions (the CUDA backend's context) says which NCCL measured
// the collectives, as `capplan calibrate` prints the profile's notes; records without (the host
// backend) get no such note.
TEST(FitProfile, NotesTheNcclVersionAndAllToAllPathOfTheRecords) {
  Measurements m = small_measurements();
  m.context.versions["nccl"] = "2.27.3";
  m.context.versions["nccl_headers"] = "2.28.9";
  m.context.versions["nccl_alltoall"] = "grouped send/recv";
  auto p = fit_profile(m);
  ASSERT_TRUE(p.has_value()) << to_string(p.error());
  ASSERT_FALSE(p->notes.empty());
  EXPECT_EQ(p->notes.back(), "nccl: 2.27.3 loaded, headers 2.28.9; all-to-all grouped send/recv");
  auto host = fit_profile(small_measurements());
  ASSERT_TRUE(host.has_value());
  for (const auto& n : host->notes) EXPECT_EQ(n.find("nccl"), std::string::npos) << n;
}

// The device properties of the context round-trip, and a records file written before they were
// recorded (no "properties" key at all) still reads, with none.
TEST(RecordsFile, DevicePropertiesRoundTripAndOldFilesWithoutThemStillRead) {
  Measurements m = small_measurements();
  m.context.properties = {{"sm_count", "132"}, {"l2_bytes", "52428800"}, {"memory_bus_width_bits", "5120"}};
  m.context.clocks = {{"sm_mhz_before", "1980"}, {"throttle_reasons_after", "sw_power_cap"}};
  const std::string text = measurements_to_json(m);
  auto back = parse_measurements(text, "records.json");
  ASSERT_TRUE(back.has_value()) << to_string(back.error());
  EXPECT_EQ(back->context.properties, m.context.properties);
  EXPECT_EQ(back->context.clocks, m.context.clocks);
  EXPECT_EQ(measurements_to_json(*back), text);

  std::string old = text;
  const auto key = old.find(",\n    \"properties\"");
  ASSERT_NE(key, std::string::npos);
  old.erase(key, old.find('}', key) + 1 - key);
  ASSERT_EQ(old.find("properties"), std::string::npos);
  auto read_old = parse_measurements(old, "old.json");
  ASSERT_TRUE(read_old.has_value()) << to_string(read_old.error());
  EXPECT_TRUE(read_old->context.properties.empty());
  EXPECT_EQ(read_old->gemms.size(), m.gemms.size());
}

// GEMM records of a 132-SM GPU (generated with the wave-quantisation term on): fit_profile takes
// the SM count from Context::properties, so the fit carries the wave term (wave_units = 132) and
// recovers the peak; the keys older records used (versions, clocks) are still read.
TEST(FitProfile, TheSmCountOfTheDevicePropertiesTurnsTheWaveTermOn) {
  Measurements m = small_measurements();
  m.gemms = synthetic_gemms(truth_gemm(132), 11);
  m.context.properties["sm_count"] = "132";
  auto p = fit_profile(m);
  ASSERT_TRUE(p.has_value()) << to_string(p.error());
  ASSERT_EQ(p->gemm.size(), 1u);
  EXPECT_EQ(p->gemm[0].wave_units, 132);
  EXPECT_NEAR(p->gemm[0].peak_flops_per_s.value / truth_gemm(132).peak_flops_per_s.value, 1.0, 0.015);

  m.context.properties.clear();
  auto none = fit_profile(m);
  ASSERT_TRUE(none.has_value()) << to_string(none.error());
  EXPECT_EQ(none->gemm[0].wave_units, 0);  // no SM count: no quantisation term

  m.context.versions["sm_count"] = "132";  // where records from before properties kept it
  auto old = fit_profile(m);
  ASSERT_TRUE(old.has_value()) << to_string(old.error());
  EXPECT_EQ(old->gemm[0].wave_units, 132);
  m.context.properties["sm_count"] = "114";  // properties win over the old keys
  auto both = fit_profile(m);
  ASSERT_TRUE(both.has_value()) << to_string(both.error());
  EXPECT_EQ(both->gemm[0].wave_units, 114);
}

// Launch batches of 16..1024 kernels: time = fixed + kernels x per kernel. With 2% noise the
// per-kernel cost (the slope, set by the large batches) comes back within 3%, the fixed cost
// (an event or a synchronisation, under 1% of the 1024-kernel batch) within a loose 50%.
TEST(LaunchFit, RecoversThePerKernelAndFixedCostOfABatch) {
  std::mt19937 rng(5);
  std::vector<LaunchRecord> recs;
  const double per_kernel = 2.5e-6, fixed = 8e-6;
  for (int k : {16, 64, 256, 1024}) {
    recs.push_back({"launch", k, noisy(fixed + k * per_kernel, rng, 9)});
    recs.push_back({"graph", k, noisy(4e-6 + k * 0.8e-6, rng, 9)});  // another pattern: not mixed in
  }
  auto fit = fit_launch(recs, "launch");
  ASSERT_TRUE(fit.has_value()) << to_string(fit.error());
  EXPECT_EQ(fit->pattern, "launch");
  EXPECT_NEAR(fit->per_kernel_s.value / per_kernel, 1.0, 0.03);
  EXPECT_NEAR(fit->fixed_s.value / fixed, 1.0, 0.5);
  EXPECT_EQ(fit->per_kernel_s.source, sim::ParamSource::fitted);
  EXPECT_EQ(fit->per_kernel_s.samples, 4);
  EXPECT_EQ(fit->min_kernels, 16);
  EXPECT_EQ(fit->max_kernels, 1024);
  EXPECT_GT(fit->quality.r2, 0.99);
  auto graph = fit_launch(recs, "graph");
  ASSERT_TRUE(graph.has_value());
  EXPECT_NEAR(graph->per_kernel_s.value / 0.8e-6, 1.0, 0.03);
}

TEST(LaunchFit, TwoBatchSizesAreTooFewAndTheProfileSaysSo) {
  std::mt19937 rng(6);
  Measurements m = small_measurements();
  for (int k : {16, 64, 256}) m.launches.push_back({"back_to_back", k, noisy(3e-6 + k * 2e-6, rng, 3)});
  for (int k : {16, 64}) m.launches.push_back({"dispatch", k, noisy(k * 9e-6, rng, 3)});
  auto p = fit_profile(m);
  ASSERT_TRUE(p.has_value()) << to_string(p.error());
  ASSERT_EQ(p->launch.size(), 1u);
  EXPECT_EQ(p->launch[0].pattern, "back_to_back");
  EXPECT_NEAR(p->kernel_floor_s() / 2e-6, 1.0, 0.05);
  EXPECT_EQ(p->host_issue_s_per_op(), 0.0);  // neither dispatch (too few sizes) nor launch fitted
  EXPECT_NE(std::find(p->notes.begin(), p->notes.end(), "launch/dispatch: 2 distinct batch sizes measured; a fit needs 3"),
            p->notes.end());
}

TEST(RecordsFile, LaunchRecordsRoundTripAndOldFilesWithoutThemStillRead) {
  std::mt19937 rng(7);
  Measurements m = small_measurements();
  m.launches.push_back({"dispatch", 256, noisy(2e-3, rng, 3)});
  const std::string text = measurements_to_json(m);
  auto back = parse_measurements(text, "records.json");
  ASSERT_TRUE(back.has_value()) << to_string(back.error());
  ASSERT_EQ(back->launches.size(), 1u);
  EXPECT_EQ(back->launches[0].pattern, "dispatch");
  EXPECT_EQ(back->launches[0].kernels, 256);
  EXPECT_EQ(back->launches[0].time.samples_s, m.launches[0].time.samples_s);
  EXPECT_EQ(measurements_to_json(*back), text);
  // A records file from before the launch sweep: no "launches" key at all.
  std::string old = measurements_to_json(small_measurements());
  const auto key = old.find(",\n  \"launches\"");
  ASSERT_NE(key, std::string::npos);
  old.erase(key, old.find(']', key) + 1 - key);
  auto read_old = parse_measurements(old, "old.json");
  ASSERT_TRUE(read_old.has_value()) << to_string(read_old.error());
  EXPECT_TRUE(read_old->launches.empty());
  // A bad pattern and a non-positive batch are named by their pointers.
  std::string bad = text;
  bad.replace(bad.find("\"dispatch\""), 10, "\"dispatsh\"");
  bad.replace(bad.find("\"kernels\": 256"), 14, "\"kernels\": 0");
  auto broken = parse_measurements(bad, "records.json");
  ASSERT_FALSE(broken.has_value());
  const std::string all = to_string(broken.error());
  EXPECT_NE(all.find("records.json#/launches/0/pattern"), std::string::npos) << all;
  EXPECT_NE(all.find("records.json#/launches/0/kernels"), std::string::npos) << all;
}

TEST(RecordsFile, BadFieldsAreReportedByTheirPointer) {
  Measurements m = small_measurements();
  std::string text = measurements_to_json(m);
  // Break three fields of the first GEMM record and add a typo'd key.
  auto replace = [&](const std::string& from, const std::string& to) {
    const auto pos = text.find(from);
    ASSERT_NE(pos, std::string::npos) << from;
    text.replace(pos, from.size(), to);
  };
  replace("\"m\": 64", "\"m\": -64");
  replace("\"dtype\": \"bf16\"", "\"dtype\": \"bf17\"");
  replace("\"batch\": 1", "\"batch\": 1, \"bacth\": 2");
  auto back = parse_measurements(text, "records.json");
  ASSERT_FALSE(back.has_value());
  const std::string all = to_string(back.error());
  EXPECT_NE(all.find("records.json#/gemms/0/m: must be a positive integer; got -64"), std::string::npos) << all;
  EXPECT_NE(all.find("records.json#/gemms/0/dtype: unknown dtype"), std::string::npos) << all;
  EXPECT_NE(all.find("records.json#/gemms/0/bacth: unknown field"), std::string::npos) << all;
}

TEST(RecordsFile, TruncatedFileIsASyntaxErrorNamingTheFile) {
  const std::string text = measurements_to_json(small_measurements());
  auto back = parse_measurements(text.substr(0, text.size() / 2), "records.json");
  ASSERT_FALSE(back.has_value());
  EXPECT_EQ(back.error()[0].where, "records.json");
  EXPECT_NE(back.error()[0].message.find("invalid JSON at line"), std::string::npos);
}

// ---- real records (tests/fixtures/calibrate/) ----
// host-quick.records.json: `capplan calibrate --backend host --quick` on the 2-core development VM
// (AMD EPYC, Eigen 3.4 SSE2, 1 thread) while four other engineers were compiling on it, so the
// times carry real contention. host-mpi2-collectives.records.json: `mpirun -np 2 capplan calibrate
// --backend host --collectives-only` (Open MPI 4.1.4, shared memory) on the same machine.

namespace real {

Measurements load(const std::string& name) {
  const std::filesystem::path file = std::filesystem::path(CAPPLAN_TEST_DATA_DIR) / "calibrate" / name;
  std::ifstream in(file);
  std::ostringstream ss;
  ss << in.rdbuf();
  auto m = parse_measurements(ss.str(), name);
  EXPECT_TRUE(m.has_value()) << (m ? "" : to_string(m.error()));
  return m ? *m : Measurements{};
}

bool positive(double x) { return std::isfinite(x) && x > 0; }

}  // namespace real

// The fp32 GEMM fit explains the measured shapes (R^2 of log time 0.977 when recorded: the
// contention above costs the rest); 0.9 leaves room for a re-recorded fixture on a busy machine.
// bf16/fp16 were measured at only two shapes each (Eigen emulates them; the quick sweep keeps
// them small): no fit, a note, but their points are kept for CalibratedCost.
TEST(RealHostRecords, FitPositiveGemmAndMemoryParametersWithSaneR2) {
  const Measurements m = real::load("host-quick.records.json");
  auto p = fit_profile(m);
  ASSERT_TRUE(p.has_value()) << to_string(p.error());
  EXPECT_EQ(p->context_value("backend"), "host");
  ASSERT_EQ(p->gemm.size(), 1u);
  const auto& g = p->gemm[0];
  EXPECT_EQ(g.dtype, sim::Precision::fp32);
  EXPECT_TRUE(real::positive(g.peak_flops_per_s.value));
  EXPECT_GE(g.launch_s.value, 0.0);
  EXPECT_GT(g.quality.r2, 0.9);
  EXPECT_EQ(g.quality.samples, 18);
  EXPECT_EQ(p->gemm_points.size(), m.gemms.size());
  EXPECT_EQ(p->notes.size(), 2u);
  // Memory patterns: every one measured at >= 3 sizes is fitted, with R^2 >= 0.969 when recorded.
  EXPECT_EQ(p->memory.size(), 5u);
  for (const auto& f : p->memory) {
    EXPECT_TRUE(real::positive(f.bandwidth_Bps.value)) << f.pattern;
    EXPECT_GE(f.latency_s.value, 0.0) << f.pattern;
    EXPECT_GT(f.quality.r2, 0.9) << f.pattern;
  }
  ASSERT_EQ(p->steps.size(), 1u);
  EXPECT_TRUE(real::positive(p->steps[0].time_s));
}

// MPI collectives on 2 oversubscribed ranks do not follow alpha + bytes/busbw well: busbw peaks
// around 0.5-2 MiB (caches) and collapses at 32-128 MiB under contention, and single medians
// jump by 10^4 (an 8-byte send/recv took 9.8 ms). The fit must still give positive parameters
// and say how poor it is: R^2 of log time was 0.45-0.89 and the RMS relative residual 54-69%.
TEST(RealHostRecords, MpiCollectivesFitPositiveParametersAndReportTheirPoorFit) {
  const Measurements m = real::load("host-mpi2-collectives.records.json");
  auto p = fit_profile(m);
  ASSERT_TRUE(p.has_value()) << to_string(p.error());
  EXPECT_EQ(p->collectives.size(), 5u);  // every kind, 2 ranks, host-shm
  for (const auto& f : p->collectives) {
    EXPECT_EQ(f.ranks, 2);
    EXPECT_EQ(f.tier, "host-shm");
    EXPECT_TRUE(real::positive(f.busbw_Bps.value)) << sim::to_string(f.kind);
    EXPECT_GE(f.latency_s.value, 0.0) << sim::to_string(f.kind);
    EXPECT_GT(f.quality.r2, 0.3) << sim::to_string(f.kind);
    EXPECT_GT(f.quality.rms_relative_residual, 0.0);
    EXPECT_EQ(f.busbw_Bps.residual, f.quality.rms_relative_residual);
  }
}

TEST(RealHostRecords, RoundTripUnchanged) {
  for (const char* name : {"host-quick.records.json", "host-mpi2-collectives.records.json"}) {
    const Measurements m = real::load(name);
    auto back = parse_measurements(measurements_to_json(m), name);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(measurements_to_json(*back), measurements_to_json(m)) << name;
  }
}

}  // namespace
}  // namespace capplan::calib
