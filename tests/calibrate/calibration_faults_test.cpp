// SPDX-License-Identifier: Apache-2.0
// A calibration that meets faults: a backend whose case throws,
// runs out of memory, times out in a collective or loses its device. run_calibration keeps the
// records of every finished case, names each failed case, stops once the device is gone, and a
// run resumed from the records file (written, then read back as `--resume` does) measures only
// what is missing. The backend is a test double with made-up times: no device, no timing noise.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "capplan/calibrate/calibration_run.hpp"
#include "capplan/calibrate/fit.hpp"
#include "capplan/calibrate/records.hpp"

namespace capplan::calib {
namespace {

enum class Fault { none, throws, out_of_memory, timeout, device_lost };

// Measures instantly (1 ms per case) on two ranks, except where `faults` says otherwise (by the
// number of the call, from 0). After device_lost every call fails and healthy() is false.
class FaultyBackend final : public MeasurementBackend {
 public:
  explicit FaultyBackend(std::map<int, Fault> faults = {}) : faults_(std::move(faults)) {}

  std::string name() const override { return "test"; }
  Context context() const override {
    Context c;
    c.backend = "test";
    c.device = "Test Device";
    c.ranks = 2;
    c.ranks_per_node = 2;
    c.host = "test";
    c.date_utc = "2026-12-02T00:00:00Z";
    c.capplan_version = "0.1.0";
    return c;
  }
  bool supports(sim::Precision) const override { return true; }
  // A GPU whose SM clock reads 1000 MHz plus the cases tried so far, power-capped once any was.
  std::map<std::string, std::string> device_state() const override {
    return {{"sm_mhz", std::to_string(1000 + calls_)}, {"throttle_reasons", calls_ > 0 ? "sw_power_cap" : "none"}};
  }
  bool healthy() const override { return !lost_; }
  int ranks() const override { return 2; }

  Result<GemmRecord> gemm(const GemmShape& shape, const RunOptions&) override {
    if (auto failed = fault("gemm")) return std::unexpected(*failed);
    GemmRecord r;
    r.shape = shape;
    r.flops = 2.0 * static_cast<double>(shape.m * shape.n * shape.k * shape.batch);
    r.bytes = 2.0 * static_cast<double>((shape.m * shape.k + shape.k * shape.n + shape.m * shape.n) * shape.batch);
    r.time = summarize({1e-3, 1e-3, 1e-3});
    return r;
  }
  Result<MemoryRecord> memory(const std::string& pattern, double bytes, const RunOptions&) override {
    if (auto failed = fault("memory")) return std::unexpected(*failed);
    return MemoryRecord{pattern, bytes, summarize({1e-3, 1e-3, 1e-3})};
  }
  Result<CollectiveRecord> collective(sim::CollectiveKind kind, double bytes, const RunOptions&) override {
    if (auto failed = fault("collective")) return std::unexpected(*failed);
    CollectiveRecord r;
    r.kind = kind;
    r.bytes = bytes;
    r.ranks = 2;
    r.ranks_per_node = 2;
    r.tier = "host-shm";
    r.time = summarize({1e-3, 1e-3, 1e-3});
    r.algbw_Bps = bytes / 1e-3;
    r.busbw_Bps = r.algbw_Bps * bus_factor(kind, 2);
    return r;
  }
  Result<StepRecord> training_step(const StepShape& shape, const RunOptions&) override {
    if (auto failed = fault("step")) return std::unexpected(*failed);
    StepRecord r;
    r.shape = shape;
    r.time = summarize({1e-3, 1e-3, 1e-3});
    return r;
  }

  int calls() const { return calls_; }

 private:
  // The Diagnostics of a failed call, throwing where the fault is an exception.
  std::optional<Diagnostics> fault(const std::string& what) {
    const int call = calls_++;
    if (lost_) return Diagnostics{{Diagnostic::Severity::error, what, "device lost earlier in the run"}};
    const auto it = faults_.find(call);
    const Fault f = it == faults_.end() ? Fault::none : it->second;
    switch (f) {
      case Fault::none: return std::nullopt;
      case Fault::throws: throw std::runtime_error("cublasLtMatmul returned CUBLAS_STATUS_EXECUTION_FAILED");
      case Fault::out_of_memory: throw std::bad_alloc();
      case Fault::timeout: return Diagnostics{{Diagnostic::Severity::error, what, "timed out after 30 s"}};
      case Fault::device_lost:
        lost_ = true;
        return Diagnostics{{Diagnostic::Severity::error, what, "device lost (cudaErrorDevicesUnavailable)"}};
    }
    return std::nullopt;
  }

  std::map<int, Fault> faults_;
  int calls_ = 0;
  bool lost_ = false;
};

// Six GEMMs, two collectives, a step: nine cases.
std::vector<Case> plan() {
  std::vector<Case> p;
  for (std::int64_t n : {64, 128, 256, 512, 1024, 2048}) {
    Case c;
    c.gemm = {n, n, n, 1, sim::Precision::bf16};
    p.push_back(c);
  }
  for (double bytes : {1024.0, 65536.0}) {
    Case c;
    c.kind = CaseKind::collective;
    c.bytes = bytes;
    p.push_back(c);
  }
  Case step;
  step.kind = CaseKind::step;
  step.step = {.layers = 1, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .seq_len = 256};
  p.push_back(step);
  return p;
}

// A device backend's full sweep has the decode-shaped GEMMs: skinny batches of
// 1-256 rows against 4096-wide and 14336-wide weights (16-bit and fp8), and the decode attention's
// group x context x 128 score and 512-key context splits (16-bit only); the quick sweep has none.
TEST(CalibrationPlan, DeviceSweepHasDecodeShapedGemms) {
  FaultyBackend b;
  const auto plan = plan_sweep(b, PlanOptions{});
  const auto has = [&](const GemmShape& s) {
    return std::any_of(plan.begin(), plan.end(), [&](const Case& c) { return c.kind == CaseKind::gemm && c.gemm == s; });
  };
  for (std::int64_t m : {1, 8, 256}) {
    EXPECT_TRUE(has({m, 4096, 4096, 1, sim::Precision::bf16})) << m;
    EXPECT_TRUE(has({m, 14336, 4096, 1, sim::Precision::fp8})) << m;
    EXPECT_TRUE(has({m, 4096, 14336, 1, sim::Precision::fp16})) << m;
  }
  EXPECT_FALSE(has({8, 14336, 4096, 1, sim::Precision::fp32}));  // not a serving dtype
  EXPECT_TRUE(has({8, 4096, 128, 256, sim::Precision::bf16}));            // GQA-8 score over 4k keys
  EXPECT_TRUE(has({8, 128, 512, 256 * 8, sim::Precision::bf16}));         // its 8 context splits
  EXPECT_FALSE(has({8, 4096, 128, 256, sim::Precision::fp8}));            // attention stays 16-bit
  const auto quick = plan_sweep(b, PlanOptions{.quick = true});
  EXPECT_TRUE(std::none_of(quick.begin(), quick.end(),
                           [](const Case& c) { return c.kind == CaseKind::gemm && c.gemm.n == 14336; }));
}

// A device backend's memory sweep starts at 64 KiB (a decode step's small tensors, read from HBM by
// the CUDA backend at every size) and grows by 4x to its default maximum, 4 GiB (1 GiB quick):
// 64 KiB x 4^8 = 4 GiB, nine sizes per pattern. The host backend keeps its 32 KiB start.
TEST(CalibrationPlan, DeviceMemorySweepStartsAt64KiB) {
  FaultyBackend b;
  for (const bool quick : {false, true}) {
    const auto plan = plan_sweep(b, PlanOptions{.quick = quick});
    std::map<std::string, std::vector<double>> sizes;
    for (const auto& c : plan) {
      if (c.kind == CaseKind::memory) sizes[c.pattern].push_back(c.bytes);
    }
    ASSERT_EQ(sizes.size(), 3u);  // copy, norm, elementwise
    for (const auto& [pattern, v] : sizes) {
      ASSERT_EQ(v.size(), quick ? 8u : 9u) << pattern;
      EXPECT_DOUBLE_EQ(v.front(), 64.0 * 1024) << pattern;
      EXPECT_DOUBLE_EQ(v.back(), (quick ? 1.0 : 4.0) * 1024 * 1024 * 1024) << pattern;
      for (std::size_t i = 1; i < v.size(); ++i) EXPECT_DOUBLE_EQ(v[i], 4 * v[i - 1]) << pattern;
    }
  }
}

// The device state is read before the first case and after the last, into the context's clocks
// with the suffixes _before and _after: after a whole run, after a run stopped early, and after a
// run that lost its device.
TEST(CalibrationRun, RecordsTheDeviceStateBeforeAndAfterEvenWhenStoppedOrLost) {
  const auto cases = plan();
  FaultyBackend whole;
  const auto done = run_calibration(whole, cases, {}, {});
  const auto& clocks = done.measurements.context.clocks;
  EXPECT_EQ(clocks.at("sm_mhz_before"), "1000");
  EXPECT_EQ(clocks.at("throttle_reasons_before"), "none");
  EXPECT_EQ(clocks.at("sm_mhz_after"), std::to_string(1000 + whole.calls()));
  EXPECT_EQ(clocks.at("throttle_reasons_after"), "sw_power_cap");

  FaultyBackend stopped;
  int asked = 0;
  const auto early = run_calibration(stopped, cases, {}, {}, {}, {}, [&] { return ++asked > 2; });
  EXPECT_TRUE(early.stopped);
  EXPECT_EQ(early.measurements.context.clocks.at("sm_mhz_before"), "1000");
  EXPECT_EQ(early.measurements.context.clocks.at("sm_mhz_after"), "1002");  // two cases tried

  FaultyBackend dying({{1, Fault::device_lost}});
  const auto lost = run_calibration(dying, cases, {}, {});
  EXPECT_FALSE(lost.lost.empty());
  EXPECT_EQ(lost.measurements.context.clocks.at("sm_mhz_after"), "1002");
  // The state goes into the records file with the rest of the context.
  auto back = parse_measurements(measurements_to_json(lost.measurements), "records.json");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->context.clocks.at("throttle_reasons_after"), "sw_power_cap");
}

TEST(CalibrationFaults, AFailedCaseIsNamedAndTheRunGoesOnKeepingEveryFinishedRecord) {
  // Call 1 throws, call 2 runs out of memory, call 6 (the first collective) times out.
  FaultyBackend b({{1, Fault::throws}, {2, Fault::out_of_memory}, {6, Fault::timeout}});
  const auto cases = plan();
  int checkpoints = 0;
  std::size_t last_checkpoint_gemms = 0;
  const auto report = run_calibration(b, cases, {}, {}, {}, [&](const Measurements& m) {
    ++checkpoints;
    last_checkpoint_gemms = m.gemms.size();
  });
  EXPECT_EQ(report.measured, 6u);
  EXPECT_EQ(report.failed, 3u);
  EXPECT_TRUE(report.lost.empty());
  EXPECT_FALSE(report.stopped);
  EXPECT_EQ(checkpoints, 6);  // after every finished case: an interruption loses at most one
  EXPECT_EQ(last_checkpoint_gemms, 4u);
  EXPECT_EQ(report.measurements.gemms.size(), 4u);
  EXPECT_EQ(report.measurements.collectives.size(), 1u);
  EXPECT_EQ(report.measurements.steps.size(), 1u);
  ASSERT_EQ(report.notes.size(), 3u);
  EXPECT_EQ(report.notes[0].where, "gemm bf16 m=128 n=128 k=128");
  EXPECT_EQ(report.notes[0].message, "failed: cublasLtMatmul returned CUBLAS_STATUS_EXECUTION_FAILED");
  EXPECT_EQ(report.notes[1].where, "gemm bf16 m=256 n=256 k=256");
  EXPECT_EQ(report.notes[1].message, "out of memory");
  EXPECT_EQ(report.notes[2].where, "all_reduce 1024 B: collective");
  EXPECT_EQ(report.notes[2].message, "timed out after 30 s");
  for (const auto& n : report.notes) EXPECT_EQ(n.severity, Diagnostic::Severity::warning);
}

TEST(CalibrationFaults, ALostDeviceEndsTheRunThereAndAResumeFromTheRecordsFileFinishesIt) {
  const auto cases = plan();
  FaultyBackend dying({{3, Fault::device_lost}});
  std::string records_file;  // what `capplan calibrate` writes after every case
  const auto first = run_calibration(dying, cases, {}, {}, {},
                                     [&](const Measurements& m) { records_file = measurements_to_json(m); });
  EXPECT_EQ(first.lost, "gemm bf16 m=512 n=512 k=512");
  EXPECT_EQ(dying.calls(), 4);  // nothing tried after the device was lost
  EXPECT_EQ(first.measured, 3u);
  ASSERT_EQ(first.notes.size(), 1u);
  EXPECT_EQ(first.notes[0].where, "gemm bf16 m=512 n=512 k=512: gemm");
  EXPECT_EQ(first.notes[0].message, "device lost (cudaErrorDevicesUnavailable)");

  // --resume reads the records file back and measures the six missing cases only.
  auto start = parse_measurements(records_file, "test.records.json");
  ASSERT_TRUE(start.has_value()) << (start ? "" : start.error().front().where + ": " + start.error().front().message);
  EXPECT_EQ(start->gemms.size(), 3u);
  FaultyBackend healthy;
  const auto second = run_calibration(healthy, cases, std::move(*start), {});
  EXPECT_EQ(second.resumed, 3u);
  EXPECT_EQ(second.measured, 6u);
  EXPECT_EQ(healthy.calls(), 6);
  EXPECT_TRUE(second.lost.empty());
  EXPECT_EQ(second.measurements.gemms.size(), 6u);
  EXPECT_EQ(second.measurements.collectives.size(), 2u);
  EXPECT_EQ(second.measurements.steps.size(), 1u);
}

}  // namespace
}  // namespace capplan::calib
