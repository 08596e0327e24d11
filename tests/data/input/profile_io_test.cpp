// SPDX-License-Identifier: Apache-2.0
// The calibrated profile file: round trip, and validation that names every bad field.
#include <gtest/gtest.h>

#include <string>

#include "capplan/data/profile_io.hpp"
#include "test_support.hpp"

namespace capplan::data {
namespace {

sim::Param param(double v, sim::ParamSource s = sim::ParamSource::fitted) { return sim::Param{v, s, 42, 0.031}; }

sim::Profile sample_profile() {
  sim::Profile p;
  p.context = {{"backend", "cuda"},
               {"device", "NVIDIA H200"},
               {"host", "gpu-1"},
               {"date_utc", "2026-11-30T17:00:00Z"},
               {"capplan_version", "0.1.0"},
               {"ranks", "1"},
               {"ranks_per_node", "1"},
               {"devices_per_rank", "1"},
               {"threads", "1"},
               {"version.cuda_runtime", "13.0"},
               {"version.cublas", "13.0.0"},
               {"clock.sm_mhz", "1980"}};
  p.gemm.push_back({.dtype = sim::Precision::bf16, .launch_s = param(5.5e-6), .peak_flops_per_s = param(7.1e14),
                    .m_half = param(40), .n_half = param(0.0), .k_half = param(150), .wave_units = 132,
                    .quality = {42, 0.031, 0.09, 0.998}, .min_m = 64, .max_m = 8192, .min_n = 128, .max_n = 8192,
                    .min_k = 64, .max_k = 16384});
  p.gemm_points.push_back({4096, 4096, 4096, 1, sim::Precision::bf16, 2.1e-4, 20, 0.004});
  p.memory.push_back({.pattern = "copy", .latency_s = param(3e-6), .bandwidth_Bps = param(4.1e12),
                      .quality = {12, 0.01, 0.03, 0.9999}, .min_bytes = 4096, .max_bytes = 4.2e9});
  p.memory_points.push_back({"copy", 4096, 4.1e-6, 5, 0.02});
  p.collectives.push_back({.kind = sim::CollectiveKind::all_gather, .ranks = 2, .nodes = 1, .tier = "host-shm",
                           .latency_s = param(2e-6), .busbw_Bps = param(9e9), .quality = {10, 0.05, 0.1, 0.99},
                           .min_bytes = 8, .max_bytes = 6.7e7});
  p.steps.push_back({.layers = 2, .hidden = 1024, .heads = 16, .ffn_hidden = 4096, .seq_len = 512, .micro_batch = 2,
                     .dtype = sim::Precision::bf16, .time_s = 0.0123, .samples = 5, .cv = 0.02,
                     .components_s = {{"gemm", 0.008}, {"memory", 0.003}}});
  p.notes.push_back("gemm/fp8: 2 distinct shapes measured; a fit needs 6");
  return p;
}

TEST(ProfileFile, RoundTripsEveryField) {
  const sim::Profile p = sample_profile();
  const std::string text = profile_to_json(p);
  auto back = parse_profile(text, "profile.json");
  ASSERT_TRUE(back.has_value()) << to_string(back.error());
  EXPECT_EQ(back->context, p.context);
  ASSERT_EQ(back->gemm.size(), 1u);
  EXPECT_DOUBLE_EQ(back->gemm[0].peak_flops_per_s.value, 7.1e14);
  EXPECT_EQ(back->gemm[0].peak_flops_per_s.samples, 42);
  EXPECT_EQ(back->gemm[0].peak_flops_per_s.source, sim::ParamSource::fitted);
  EXPECT_EQ(back->gemm[0].wave_units, 132);
  EXPECT_EQ(back->gemm[0].max_k, 16384);
  EXPECT_DOUBLE_EQ(back->gemm[0].quality.r2, 0.998);
  ASSERT_EQ(back->gemm_points.size(), 1u);
  EXPECT_DOUBLE_EQ(back->gemm_points[0].time_s, 2.1e-4);
  ASSERT_EQ(back->memory_points.size(), 1u);
  EXPECT_DOUBLE_EQ(back->memory_points[0].time_s, 4.1e-6);
  EXPECT_EQ(back->memory_points[0].pattern, "copy");
  EXPECT_EQ(back->collectives[0].tier, "host-shm");
  EXPECT_EQ(back->collectives[0].kind, sim::CollectiveKind::all_gather);
  EXPECT_EQ(back->steps[0].components_s, p.steps[0].components_s);
  EXPECT_EQ(back->notes, p.notes);
  EXPECT_EQ(profile_to_json(*back), text);  // a fixed point: nothing lost or reordered
}

// Edits one value of the serialised sample profile by JSON pointer and returns the diagnostics.
std::string diagnostics_after(const std::string& pointer, const nlohmann::json& value) {
  nlohmann::json j = nlohmann::json::parse(profile_to_json(sample_profile()));
  j[nlohmann::json::json_pointer(pointer)] = value;
  auto parsed = parse_profile(j.dump(), "profile.json");
  return parsed ? std::string("(parsed)") : to_string(parsed.error());
}

// The device's properties (SM count, L2 size) travel in context.properties, and a profile
// without them (a host one) writes no properties object at all.
TEST(ProfileFile, DevicePropertiesRoundTrip) {
  sim::Profile p = sample_profile();
  p.context["property.sm_count"] = "132";
  p.context["property.l2_bytes"] = "52428800";
  const std::string text = profile_to_json(p);
  auto back = parse_profile(text, "profile.json");
  ASSERT_TRUE(back) << to_string(back.error());
  EXPECT_EQ(back->context_value("property.sm_count"), "132");
  EXPECT_EQ(back->context_value("property.l2_bytes"), "52428800");
  EXPECT_EQ(nlohmann::json::parse(text)["context"]["properties"]["sm_count"], "132");
  EXPECT_FALSE(nlohmann::json::parse(profile_to_json(sample_profile()))["context"].contains("properties"));
}

TEST(ProfileFile, ANonPositivePeakIsReportedByItsField) {
  EXPECT_NE(diagnostics_after("/gemm/0/peak_flops_per_s/value", -1).find(
                "profile.json#/gemm/0/peak_flops_per_s/value: must be > 0; got -1"),
            std::string::npos);
}

TEST(ProfileFile, EveryKindOfBadFieldNamesItsPointer) {
  EXPECT_NE(diagnostics_after("/memory/0/bandwidth_Bps/value", "fast").find(
                "profile.json#/memory/0/bandwidth_Bps/value: expected a number; got string"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/collectives/0/kind", "allreduce").find(
                "profile.json#/collectives/0/kind: unknown collective"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/collectives/0/tier", "infiniband").find("profile.json#/collectives/0/tier: unknown tier"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/gemm/0/launch_s/source", "guessed").find(
                "profile.json#/gemm/0/launch_s/source: unknown source 'guessed' (known: measured, fitted, datasheet)"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/gemm/0/range/max_m", 32).find(
                "profile.json#/gemm/0/range/max_m: must be >= min_m (64); got 32"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/gemm/0/dtype", "bf12").find("profile.json#/gemm/0/dtype: unknown dtype"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/gemm/0/quality/r2", 1.5).find("profile.json#/gemm/0/quality/r2: must be at most 1"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/memory_points/0/bytes", 0).find(
                "profile.json#/memory_points/0/bytes: must be > 0; got 0"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/steps/0/heads", 0).find("profile.json#/steps/0/heads: must be a positive integer"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/context/threads", "two").find("profile.json#/context/threads"), std::string::npos);
  EXPECT_NE(diagnostics_after("/context/device", 7).find("profile.json#/context/device: expected a string"),
            std::string::npos);
}

TEST(ProfileFile, UnknownKeysAreErrors) {
  EXPECT_NE(diagnostics_after("/gemm/0/peak_TFLOPs", 700).find("profile.json#/gemm/0/peak_TFLOPs: unknown field"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/context/gpu", "H200").find("profile.json#/context/gpu: unknown field"),
            std::string::npos);
}

TEST(ProfileFile, AMissingFieldIsNamed) {
  nlohmann::json j = nlohmann::json::parse(profile_to_json(sample_profile()));
  j["memory"][0].erase("max_bytes");
  auto parsed = parse_profile(j.dump(), "p.json");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(to_string(parsed.error()), "p.json#/memory/0/max_bytes: required field is missing");
}

TEST(ProfileFile, AnotherSchemaVersionIsRejected) {
  EXPECT_NE(diagnostics_after("/schema_version", 4).find(
                "profile.json#/schema_version: unsupported schema version (this capplan reads 1 to 3); got 4"),
            std::string::npos);
  EXPECT_NE(diagnostics_after("/schema", "capplan-records").find("profile.json#/schema: must be \"capplan-profile\""),
            std::string::npos);
}

TEST(ProfileFile, ATruncatedFileIsASyntaxErrorNamingTheFile) {
  const std::string text = profile_to_json(sample_profile());
  auto parsed = parse_profile(text.substr(0, text.size() / 3), "capplan-profile.json");
  ASSERT_FALSE(parsed.has_value());
  ASSERT_EQ(parsed.error().size(), 1u);
  EXPECT_EQ(parsed.error()[0].where, "capplan-profile.json");
  EXPECT_EQ(parsed.error()[0].message.rfind("invalid JSON at line ", 0), 0u) << parsed.error()[0].message;
  auto empty = parse_profile("", "capplan-profile.json");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(to_string(empty.error()), "capplan-profile.json: empty file (no JSON)");
}

TEST(ProfileFile, NeverWritesNonFiniteNumbers) {
  sim::Profile p = sample_profile();
  p.gemm[0].quality.r2 = std::nan("");
  const std::string text = profile_to_json(p);
  EXPECT_EQ(text.find("null"), std::string::npos);
  EXPECT_EQ(text.find("nan"), std::string::npos);
}


sim::Profile runs_profile() {
  sim::Profile p = sample_profile();
  sim::RunsFit f;
  f.gemm_efficiency_scale = {param(0.81), 0.012};
  f.scale_up_busbw_scale = {sim::Param{1.0, sim::ParamSource::datasheet, 0, 0}, 0};
  f.scale_out_busbw_scale = {param(0.62), 0.05};
  f.per_op_overhead_s = {param(2.1e-5), 1.5e-6};
  f.runs = 6;
  f.rms_log_residual = 0.004;
  f.max_abs_log_residual = 0.009;
  f.loo_mape = 0.011;
  f.per_run.push_back({"8 GPUs, tp 8", 1.25, 1.0, 1.24, 1.23});
  p.runs_fit = f;
  return p;
}

TEST(ProfileFile, RunsFitRoundTrips) {
  const sim::Profile p = runs_profile();
  const std::string text = profile_to_json(p);
  auto back = parse_profile(text, "profile.json");
  ASSERT_TRUE(back.has_value()) << to_string(back.error());
  ASSERT_TRUE(back->runs_fit.has_value());
  EXPECT_DOUBLE_EQ(back->runs_fit->gemm_efficiency_scale.param.value, 0.81);
  EXPECT_DOUBLE_EQ(back->runs_fit->gemm_efficiency_scale.std_error, 0.012);
  EXPECT_EQ(back->runs_fit->scale_up_busbw_scale.param.source, sim::ParamSource::datasheet);
  EXPECT_DOUBLE_EQ(back->runs_fit->per_op_overhead_s.param.value, 2.1e-5);
  EXPECT_EQ(back->runs_fit->runs, 6);
  EXPECT_DOUBLE_EQ(back->runs_fit->loo_mape, 0.011);
  ASSERT_EQ(back->runs_fit->per_run.size(), 1u);
  EXPECT_EQ(back->runs_fit->per_run[0].label, "8 GPUs, tp 8");
  EXPECT_DOUBLE_EQ(back->runs_fit->per_run[0].loo_s, 1.23);
  EXPECT_EQ(profile_to_json(*back), text);  // a fixed point
}

TEST(ProfileFile, VersionOneProfilesStillReadAndCannotCarryARunsFit) {
  nlohmann::json j = nlohmann::json::parse(profile_to_json(sample_profile()));
  j["schema_version"] = 1;
  auto v1 = parse_profile(j.dump(), "old.json");
  ASSERT_TRUE(v1.has_value()) << to_string(v1.error());
  EXPECT_FALSE(v1->runs_fit.has_value());
  nlohmann::json k = nlohmann::json::parse(profile_to_json(runs_profile()));
  k["schema_version"] = 1;
  auto bad = parse_profile(k.dump(), "old.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(to_string(bad.error()).find("old.json#/runs_fit: needs schema_version 2 or later; got 1"),
            std::string::npos);
}

sim::Profile launch_profile() {
  sim::Profile p = sample_profile();
  p.launch.push_back({.pattern = "launch", .per_kernel_s = param(2.4e-6), .fixed_s = param(7e-6),
                      .quality = {4, 0.01, 0.02, 0.999}, .min_kernels = 16, .max_kernels = 1024});
  p.launch.push_back({.pattern = "dispatch", .per_kernel_s = param(6.5e-6), .fixed_s = param(0.0),
                      .quality = {4, 0.02, 0.03, 0.998}, .min_kernels = 16, .max_kernels = 1024});
  return p;
}

TEST(ProfileFile, LaunchFitsRoundTrip) {
  const sim::Profile p = launch_profile();
  const std::string text = profile_to_json(p);
  auto back = parse_profile(text, "profile.json");
  ASSERT_TRUE(back.has_value()) << to_string(back.error());
  ASSERT_EQ(back->launch.size(), 2u);
  EXPECT_EQ(back->launch[0].pattern, "launch");
  EXPECT_DOUBLE_EQ(back->launch[0].per_kernel_s.value, 2.4e-6);
  EXPECT_DOUBLE_EQ(back->launch[0].fixed_s.value, 7e-6);
  EXPECT_EQ(back->launch[1].max_kernels, 1024);
  EXPECT_DOUBLE_EQ(back->host_issue_s_per_op(), 6.5e-6);  // dispatch, measured, wins over launch
  EXPECT_EQ(back->kernel_floor_s(), 0.0);                   // back_to_back not measured
  EXPECT_EQ(profile_to_json(*back), text);                  // a fixed point
  // A profile without launch fits writes no "launch" key (what schema 2 readers expect to see).
  EXPECT_EQ(profile_to_json(sample_profile()).find("\"launch\""), std::string::npos);
}

TEST(ProfileFile, LaunchFitsNeedSchemaThreeAndValidValues) {
  nlohmann::json j = nlohmann::json::parse(profile_to_json(launch_profile()));
  j["schema_version"] = 2;
  auto old = parse_profile(j.dump(), "old.json");
  ASSERT_FALSE(old.has_value());
  EXPECT_NE(to_string(old.error()).find("old.json#/launch: needs schema_version 3 or later; got 2"), std::string::npos);
  nlohmann::json k = nlohmann::json::parse(profile_to_json(launch_profile()));
  k["launch"][0]["pattern"] = "lanch";
  k["launch"][1]["per_kernel_s"]["value"] = 0;
  k["launch"][1]["max_kernels"] = 8;  // below min_kernels
  k["launch"][1]["min_kernels"] = 2000000;
  auto bad = parse_profile(k.dump(), "p.json");
  ASSERT_FALSE(bad.has_value());
  const std::string all = to_string(bad.error());
  EXPECT_NE(all.find("p.json#/launch/0/pattern"), std::string::npos) << all;
  EXPECT_NE(all.find("p.json#/launch/1/per_kernel_s/value"), std::string::npos) << all;
  EXPECT_NE(all.find("p.json#/launch/1/min_kernels: must be at most 1000000; got 2000000"), std::string::npos) << all;
  EXPECT_NE(all.find("p.json#/launch/1/max_kernels: must be >= min_kernels"), std::string::npos) << all;
  // Two fits of one pattern.
  nlohmann::json d = nlohmann::json::parse(profile_to_json(launch_profile()));
  d["launch"][1]["pattern"] = "launch";
  auto twice = parse_profile(d.dump(), "p.json");
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(to_string(twice.error()).find("p.json#/launch/1/pattern: a second fit for launch"), std::string::npos);
}

TEST(ProfileFile, RunsFitValuesOutsideTheirBoundsAreNamed) {
  nlohmann::json j = nlohmann::json::parse(profile_to_json(runs_profile()));
  j["runs_fit"]["gemm_efficiency_scale"]["value"] = 2.5;
  j["runs_fit"]["per_op_overhead_s"]["value"] = -1;
  j["runs_fit"]["typo"] = 1;
  auto parsed = parse_profile(j.dump(), "p.json");
  ASSERT_FALSE(parsed.has_value());
  const std::string d = to_string(parsed.error());
  EXPECT_NE(d.find("p.json#/runs_fit/gemm_efficiency_scale/value: must be at most 1.3; got 2.5"), std::string::npos)
      << d;
  EXPECT_NE(d.find("p.json#/runs_fit/per_op_overhead_s/value: must be >= 0; got -1"), std::string::npos) << d;
  EXPECT_NE(d.find("p.json#/runs_fit/typo: unknown field"), std::string::npos) << d;
}

}  // namespace
}  // namespace capplan::data
