// SPDX-License-Identifier: Apache-2.0
// The calibrated profile file (docs/calibration.md, "Profile file"). Written by `capplan
// calibrate`, read by `capplan estimate --profile` and `capplan validate`; validated like every
// other input: all findings collected, each naming its field.
#include "capplan/data/profile_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "reading/json_reader.hpp"

namespace capplan::data {
namespace {

using detail::child;
using detail::describe;
using detail::kInf;
using detail::finite_or_zero;
using detail::Object;
using detail::precision;
using detail::Reader;
using nlohmann::json;

constexpr const char* kSchema = "capplan-profile";

// Context keys stored as strings and as integers; "version.<x>" / "clock.<x>" go to the
// "versions" / "clocks" objects.
constexpr const char* kContextStrings[] = {"backend", "device", "host", "date_utc", "capplan_version"};
constexpr const char* kContextIntegers[] = {"ranks", "ranks_per_node", "devices_per_rank", "threads"};

json param_to_json(const sim::Param& p) {
  return {{"value", finite_or_zero(p.value)},
          {"source", sim::to_string(p.source)},
          {"samples", p.samples},
          {"residual", finite_or_zero(p.residual)}};
}

json quality_to_json(const sim::FitQuality& q) {
  return {{"samples", q.samples},
          {"rms_relative_residual", finite_or_zero(q.rms_relative_residual)},
          {"max_relative_residual", finite_or_zero(q.max_relative_residual)},
          {"r2", finite_or_zero(q.r2)}};
}

// Physical ceilings of what a profile may claim (a collective latency_s of
// 1e308 reached the model and the step time came out null), each far above any real device.
struct ProfileLimits {
  double latency_s = 10.0;        // a launch or link latency of 10 s is a hang, not a latency
  double bytes_per_s = 1e15;      // 1 PB/s: 100x B200 HBM3e (8 TB/s), 500x NVLink 5 (1.8 TB/s)
  double flops_per_s = 1e18;      // 1 EFLOP/s: 200x B200's dense FP8 (4.5 PFLOP/s)
  double shape = 1e9;             // a GEMM dimension (the fit's half-efficiency points)
  double time_s = 1e6;            // 11.6 days: no probe runs that long
  double bytes = 1e15;            // a probe's message or buffer
};
constexpr ProfileLimits kLimits;

// A fitted parameter: {"value", "source", "samples", "residual"}; value in [lo, hi]. With
// `std_error`, also its "std_error" (a runs fit's parameter).
sim::Param param(Object& parent, const char* key, double lo, bool lo_open, double hi = kInf,
                 double* std_error = nullptr) {
  sim::Param p;
  parent.object(key, [&](Object& o) {
    p.value = o.number("value", lo, lo_open, hi);
    p.source = o.one_of("source", sim::param_source_from_string, {"measured", "fitted", "datasheet"}, "source",
                        p.source);
    p.samples = static_cast<int>(o.integer("samples", 0));
    p.residual = o.number("residual", 0, false);
    if (std_error != nullptr) *std_error = o.number("std_error", 0, false);
    std::vector<std::string> keys = {"value", "source", "samples", "residual"};
    if (std_error != nullptr) keys.push_back("std_error");
    o.known(keys);
  });
  return p;
}

sim::FitQuality quality(Object& parent) {
  sim::FitQuality q;
  parent.object("quality", [&](Object& o) {
    q.samples = static_cast<int>(o.integer("samples", 1));
    q.rms_relative_residual = o.number("rms_relative_residual", 0, false);
    q.max_relative_residual = o.number("max_relative_residual", 0, false);
    // R^2 of log time can be negative for a fit worse than the mean; never above 1.
    q.r2 = o.number("r2", -kInf, false, 1.0);
    o.known({"samples", "rms_relative_residual", "max_relative_residual", "r2"});
  });
  return q;
}

json runs_param_to_json(const sim::RunsFitParam& p) {
  json j = param_to_json(p.param);
  j["std_error"] = finite_or_zero(p.std_error);
  return j;
}

// A runs-fit parameter: a Param with its standard error; value in [lo, hi].
sim::RunsFitParam runs_param(Object& parent, const char* key, double lo, double hi) {
  sim::RunsFitParam p;
  p.param = param(parent, key, lo, false, hi, &p.std_error);
  return p;
}

json runs_fit_to_json(const sim::RunsFit& f) {
  json runs = json::array();
  for (const auto& r : f.per_run) {
    runs.push_back({{"label", r.label},
                    {"measured_step_s", finite_or_zero(r.measured_s)},
                    {"predicted_before_s", finite_or_zero(r.before_s)},
                    {"predicted_after_s", finite_or_zero(r.after_s)},
                    {"leave_one_out_s", finite_or_zero(r.loo_s)}});
  }
  return {{"gemm_efficiency_scale", runs_param_to_json(f.gemm_efficiency_scale)},
          {"scale_up_busbw_scale", runs_param_to_json(f.scale_up_busbw_scale)},
          {"scale_out_busbw_scale", runs_param_to_json(f.scale_out_busbw_scale)},
          {"per_op_overhead_s", runs_param_to_json(f.per_op_overhead_s)},
          {"runs", f.runs},
          {"rms_log_residual", finite_or_zero(f.rms_log_residual)},
          {"max_abs_log_residual", finite_or_zero(f.max_abs_log_residual)},
          {"loo_mape", finite_or_zero(f.loo_mape)},
          {"per_run", runs}};
}

// The bounds calibrate --from-runs fits within (calib::kRunsFitBounds; docs/calibration.md).
sim::RunsFit runs_fit(Object& o) {
  sim::RunsFit f;
  f.gemm_efficiency_scale = runs_param(o, "gemm_efficiency_scale", 0.3, 1.3);
  f.scale_up_busbw_scale = runs_param(o, "scale_up_busbw_scale", 0.1, 1.5);
  f.scale_out_busbw_scale = runs_param(o, "scale_out_busbw_scale", 0.1, 1.5);
  f.per_op_overhead_s = runs_param(o, "per_op_overhead_s", 0, 200e-6);
  f.runs = static_cast<int>(o.integer("runs", 1));
  f.rms_log_residual = o.number("rms_log_residual", 0, false);
  f.max_abs_log_residual = o.number("max_abs_log_residual", 0, false);
  f.loo_mape = o.number("loo_mape", 0, false);
  o.list("per_run", [&](Object& ro) {
    sim::RunResidual r;
    r.label = ro.string("label");
    r.measured_s = ro.number("measured_step_s", 0, true);
    r.before_s = ro.number("predicted_before_s", 0, false);
    r.after_s = ro.number("predicted_after_s", 0, false);
    r.loo_s = ro.number("leave_one_out_s", 0, false);
    ro.known({"label", "measured_step_s", "predicted_before_s", "predicted_after_s", "leave_one_out_s"});
    f.per_run.push_back(std::move(r));
  });
  o.known({"gemm_efficiency_scale", "scale_up_busbw_scale", "scale_out_busbw_scale", "per_op_overhead_s", "runs",
           "rms_log_residual", "max_abs_log_residual", "loo_mape", "per_run"});
  return f;
}

void check_order(Reader& r, const std::string& path, const char* lo_key, double lo, const char* hi_key, double hi) {
  if (lo > 0 && hi > 0 && lo > hi) {
    r.error(child(path, hi_key), std::string("must be >= ") + lo_key + " (" + detail::fmt(lo) + "); got " +
                                     detail::fmt(hi));
  }
}

}  // namespace

std::string profile_to_json(const sim::Profile& p) {
  json root;
  root["schema"] = kSchema;
  root["schema_version"] = p.schema_version;
  json ctx = json::object();
  json versions = json::object(), clocks = json::object(), properties = json::object();
  for (const auto& [k, v] : p.context) {
    if (k.starts_with("version.")) {
      versions[k.substr(8)] = v;
    } else if (k.starts_with("clock.")) {
      clocks[k.substr(6)] = v;
    } else if (k.starts_with("property.")) {
      properties[k.substr(9)] = v;
    }
  }
  for (const char* k : kContextStrings) ctx[k] = p.context_value(k);
  for (const char* k : kContextIntegers) {
    const std::string v = p.context_value(k);
    long long n = 1;
    try {
      n = v.empty() ? 1 : std::stoll(v);
    } catch (...) {
      n = 1;
    }
    ctx[k] = n;
  }
  ctx["versions"] = versions;
  ctx["clocks"] = clocks;
  if (!properties.empty()) ctx["properties"] = properties;
  root["context"] = ctx;

  json gemm = json::array();
  for (const auto& f : p.gemm) {
    gemm.push_back({{"dtype", sim::to_string(f.dtype)},
                    {"launch_s", param_to_json(f.launch_s)},
                    {"peak_flops_per_s", param_to_json(f.peak_flops_per_s)},
                    {"m_half", param_to_json(f.m_half)},
                    {"n_half", param_to_json(f.n_half)},
                    {"k_half", param_to_json(f.k_half)},
                    {"wave_units", f.wave_units},
                    {"quality", quality_to_json(f.quality)},
                    {"range",
                     {{"min_m", f.min_m},
                      {"max_m", f.max_m},
                      {"min_n", f.min_n},
                      {"max_n", f.max_n},
                      {"min_k", f.min_k},
                      {"max_k", f.max_k}}}});
  }
  root["gemm"] = gemm;
  json points = json::array();
  for (const auto& g : p.gemm_points) {
    points.push_back({{"m", g.m},
                      {"n", g.n},
                      {"k", g.k},
                      {"batch", g.batch},
                      {"dtype", sim::to_string(g.dtype)},
                      {"time_s", finite_or_zero(g.time_s)},
                      {"samples", g.samples},
                      {"cv", finite_or_zero(g.cv)}});
  }
  root["gemm_points"] = points;
  json memory = json::array();
  for (const auto& f : p.memory) {
    memory.push_back({{"pattern", f.pattern},
                      {"latency_s", param_to_json(f.latency_s)},
                      {"bandwidth_Bps", param_to_json(f.bandwidth_Bps)},
                      {"quality", quality_to_json(f.quality)},
                      {"min_bytes", finite_or_zero(f.min_bytes)},
                      {"max_bytes", finite_or_zero(f.max_bytes)}});
  }
  root["memory"] = memory;
  json mpoints = json::array();
  for (const auto& m : p.memory_points) {
    mpoints.push_back({{"pattern", m.pattern},
                       {"bytes", finite_or_zero(m.bytes)},
                       {"time_s", finite_or_zero(m.time_s)},
                       {"samples", m.samples},
                       {"cv", finite_or_zero(m.cv)}});
  }
  root["memory_points"] = mpoints;
  json colls = json::array();
  for (const auto& f : p.collectives) {
    colls.push_back({{"kind", sim::to_string(f.kind)},
                     {"ranks", f.ranks},
                     {"nodes", f.nodes},
                     {"tier", f.tier},
                     {"latency_s", param_to_json(f.latency_s)},
                     {"busbw_Bps", param_to_json(f.busbw_Bps)},
                     {"quality", quality_to_json(f.quality)},
                     {"min_bytes", finite_or_zero(f.min_bytes)},
                     {"max_bytes", finite_or_zero(f.max_bytes)}});
  }
  root["collectives"] = colls;
  json steps = json::array();
  for (const auto& s : p.steps) {
    json comps = json::object();
    for (const auto& [k, v] : s.components_s) comps[k] = finite_or_zero(v);
    steps.push_back({{"layers", s.layers},
                     {"hidden", s.hidden},
                     {"heads", s.heads},
                     {"ffn_hidden", s.ffn_hidden},
                     {"seq_len", s.seq_len},
                     {"micro_batch", s.micro_batch},
                     {"gated_ffn", s.gated_ffn},
                     {"dtype", sim::to_string(s.dtype)},
                     {"kv_heads", s.kv_heads},
                     {"rmsnorm", s.rmsnorm},
                     {"rope", s.rope},
                     {"flash_attention", s.flash_attention},
                     {"time_s", finite_or_zero(s.time_s)},
                     {"samples", s.samples},
                     {"cv", finite_or_zero(s.cv)},
                     {"components_s", comps}});
  }
  root["steps"] = steps;
  root["notes"] = p.notes;
  if (p.runs_fit) root["runs_fit"] = runs_fit_to_json(*p.runs_fit);
  if (!p.launch.empty()) {
    json launch = json::array();
    for (const auto& f : p.launch) {
      launch.push_back({{"pattern", f.pattern},
                        {"per_kernel_s", param_to_json(f.per_kernel_s)},
                        {"fixed_s", param_to_json(f.fixed_s)},
                        {"quality", quality_to_json(f.quality)},
                        {"min_kernels", f.min_kernels},
                        {"max_kernels", f.max_kernels}});
    }
    root["launch"] = launch;
  }
  return root.dump(2) + "\n";
}

Result<sim::Profile> parse_profile(const std::string& text, const std::string& where) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return fail(where, "empty file (no JSON)");
  auto parsed = detail::parse_json_text(text, where);
  if (!parsed) return std::unexpected(parsed.error());
  const json& root = *parsed;
  Diagnostics diags;
  Reader r(where, diags);
  if (!r.object(root, "")) return std::unexpected(std::move(diags));
  sim::Profile p;
  Object top{root, "", r};
  // Versions 1 (before runs_fit) and 2 (before the launch fits) still read.
  int version = sim::kProfileSchemaVersion;
  if (const json* s = top.get("schema"); s != nullptr && (!s->is_string() || s->get<std::string>() != kSchema)) {
    r.error(top.at("schema"), std::string("must be \"") + kSchema + "\"; got " + describe(*s));
  }
  if (const json* v = top.get("schema_version")) {
    const auto n = r.integer(*v, top.at("schema_version"), 1, 1e9);
    if (n && (*n < 1 || *n > sim::kProfileSchemaVersion)) {
      r.error(top.at("schema_version"), "unsupported schema version (this capplan reads 1 to " +
                                            std::to_string(sim::kProfileSchemaVersion) + "); got " + describe(*v));
    }
    if (n) version = static_cast<int>(*n);
  }
  top.known({"schema", "schema_version", "context", "gemm", "gemm_points", "memory", "memory_points", "collectives",
             "steps", "notes", "runs_fit", "launch"});
  if (top.has("runs_fit")) {
    if (version < 2) {
      r.error(top.at("runs_fit"), "needs schema_version 2 or later; got " + std::to_string(version));
    } else {
      top.object("runs_fit", [&](Object& o) { p.runs_fit = runs_fit(o); });
    }
  }

  if (top.has("launch")) {
    if (version < 3) {
      r.error(top.at("launch"), "needs schema_version 3 or later; got " + std::to_string(version));
    } else {
      const std::vector<std::string> patterns(std::begin(sim::kLaunchPatterns), std::end(sim::kLaunchPatterns));
      top.list("launch", [&](Object& o) {
        sim::LaunchFit f;
        f.pattern = o.one_of("pattern", patterns, "launch pattern");
        f.per_kernel_s = param(o, "per_kernel_s", 0, true, kLimits.latency_s);
        f.fixed_s = param(o, "fixed_s", 0, false, kLimits.latency_s);
        f.quality = quality(o);
        // A batch of kernels, as the records file bounds it (at most a million launches).
        const auto kernels = [&](const char* key) {
          const std::int64_t n = o.integer(key, 1);
          if (n > 1'000'000) o.error(key, "must be at most 1000000; got " + std::to_string(n));
          return static_cast<int>(std::min<std::int64_t>(n, 1'000'000));
        };
        f.min_kernels = kernels("min_kernels");
        f.max_kernels = kernels("max_kernels");
        check_order(r, o.path, "min_kernels", f.min_kernels, "max_kernels", f.max_kernels);
        o.known({"pattern", "per_kernel_s", "fixed_s", "quality", "min_kernels", "max_kernels"});
        for (const auto& other : p.launch) {
          if (!f.pattern.empty() && other.pattern == f.pattern) {
            r.error(o.at("pattern"), "a second fit for " + f.pattern);
          }
        }
        p.launch.push_back(f);
      });
    }
  }

  top.object("context", [&](Object& o) {
    for (const char* k : kContextStrings) p.context[k] = o.string(k, true);
    for (const char* k : kContextIntegers) p.context[k] = std::to_string(o.integer(k, 1));
    for (const auto& [name, prefix] : {std::pair{"versions", "version."}, std::pair{"clocks", "clock."}}) {
      for (const auto& [k, v] : o.string_map(name)) p.context[prefix + k] = v;
    }
    // The device's properties (SM count, L2 size): GPU profiles have them, others none.
    if (o.has("properties")) {
      for (const auto& [k, v] : o.string_map("properties")) p.context["property." + k] = v;
    }
    std::vector<std::string> keys(std::begin(kContextStrings), std::end(kContextStrings));
    keys.insert(keys.end(), std::begin(kContextIntegers), std::end(kContextIntegers));
    keys.insert(keys.end(), {"versions", "clocks", "properties"});
    o.known(keys);
  });

  top.list("gemm", [&](Object& o) {
    sim::GemmFit f;
    f.dtype = precision(o);
    f.launch_s = param(o, "launch_s", 0, false, kLimits.latency_s);
    f.peak_flops_per_s = param(o, "peak_flops_per_s", 0, true, kLimits.flops_per_s);
    f.m_half = param(o, "m_half", 0, false, kLimits.shape);
    f.n_half = param(o, "n_half", 0, false, kLimits.shape);
    f.k_half = param(o, "k_half", 0, false, kLimits.shape);
    f.wave_units = static_cast<int>(o.integer("wave_units", 0));
    f.quality = quality(o);
    o.object("range", [&](Object& ro) {
      f.min_m = ro.integer("min_m", 1);
      f.max_m = ro.integer("max_m", 1);
      f.min_n = ro.integer("min_n", 1);
      f.max_n = ro.integer("max_n", 1);
      f.min_k = ro.integer("min_k", 1);
      f.max_k = ro.integer("max_k", 1);
      ro.known({"min_m", "max_m", "min_n", "max_n", "min_k", "max_k"});
      check_order(r, ro.path, "min_m", double(f.min_m), "max_m", double(f.max_m));
      check_order(r, ro.path, "min_n", double(f.min_n), "max_n", double(f.max_n));
      check_order(r, ro.path, "min_k", double(f.min_k), "max_k", double(f.max_k));
    });
    o.known({"dtype", "launch_s", "peak_flops_per_s", "m_half", "n_half", "k_half", "wave_units", "quality", "range"});
    for (const auto& other : p.gemm) {
      if (other.dtype == f.dtype) r.error(o.at("dtype"), std::string("a second fit for ") + sim::to_string(f.dtype));
    }
    p.gemm.push_back(f);
  });
  top.list("gemm_points", [&](Object& o) {
    sim::GemmPoint g;
    g.m = o.integer("m", 1);
    g.n = o.integer("n", 1);
    g.k = o.integer("k", 1);
    g.batch = o.integer("batch", 1);
    g.dtype = precision(o);
    g.time_s = o.number("time_s", 0, true, kLimits.time_s);
    g.samples = static_cast<int>(o.integer("samples", 0));
    g.cv = o.number("cv", 0, false);
    o.known({"m", "n", "k", "batch", "dtype", "time_s", "samples", "cv"});
    p.gemm_points.push_back(g);
  });
  top.list("memory", [&](Object& o) {
    sim::MemoryFit f;
    f.pattern = o.string("pattern", true);
    f.latency_s = param(o, "latency_s", 0, false, kLimits.latency_s);
    f.bandwidth_Bps = param(o, "bandwidth_Bps", 0, true, kLimits.bytes_per_s);
    f.quality = quality(o);
    f.min_bytes = o.number("min_bytes", 0, true);
    f.max_bytes = o.number("max_bytes", 0, true);
    check_order(r, o.path, "min_bytes", f.min_bytes, "max_bytes", f.max_bytes);
    o.known({"pattern", "latency_s", "bandwidth_Bps", "quality", "min_bytes", "max_bytes"});
    p.memory.push_back(f);
  });
  top.list("memory_points", [&](Object& o) {
    sim::MemoryPoint m;
    m.pattern = o.string("pattern", true);
    m.bytes = o.number("bytes", 0, true, kLimits.bytes);
    m.time_s = o.number("time_s", 0, true, kLimits.time_s);
    m.samples = static_cast<int>(o.integer("samples", 0));
    m.cv = o.number("cv", 0, false);
    o.known({"pattern", "bytes", "time_s", "samples", "cv"});
    p.memory_points.push_back(m);
  });
  top.list("collectives", [&](Object& o) {
    sim::CollectiveFit f;
    f.kind = o.one_of("kind", sim::collective_kind_from_string, detail::kCollectiveNames, "collective", f.kind);
    f.ranks = static_cast<int>(o.integer("ranks", 2));
    f.nodes = static_cast<int>(o.integer("nodes", 1));
    f.tier = o.one_of("tier", detail::kTierNames, "tier");
    f.latency_s = param(o, "latency_s", 0, false, kLimits.latency_s);
    f.busbw_Bps = param(o, "busbw_Bps", 0, true, kLimits.bytes_per_s);
    f.quality = quality(o);
    f.min_bytes = o.number("min_bytes", 0, true);
    f.max_bytes = o.number("max_bytes", 0, true);
    check_order(r, o.path, "min_bytes", f.min_bytes, "max_bytes", f.max_bytes);
    o.known({"kind", "ranks", "nodes", "tier", "latency_s", "busbw_Bps", "quality", "min_bytes", "max_bytes"});
    p.collectives.push_back(f);
  });
  top.list("steps", [&](Object& o) {
    sim::MeasuredStep s;
    s.layers = static_cast<int>(o.integer("layers", 1));
    s.hidden = static_cast<int>(o.integer("hidden", 1));
    s.heads = static_cast<int>(o.integer("heads", 1));
    s.ffn_hidden = static_cast<int>(o.integer("ffn_hidden", 1));
    s.seq_len = static_cast<int>(o.integer("seq_len", 1));
    s.micro_batch = static_cast<int>(o.integer("micro_batch", 1));
    s.gated_ffn = o.boolean("gated_ffn");
    s.dtype = precision(o);
    // Optional: profiles written before the layer variants existed describe the default layer.
    if (o.has("kv_heads")) s.kv_heads = static_cast<int>(o.integer("kv_heads", 0));
    if (o.has("rmsnorm")) s.rmsnorm = o.boolean("rmsnorm");
    if (o.has("rope")) s.rope = o.boolean("rope");
    if (o.has("flash_attention")) s.flash_attention = o.boolean("flash_attention");
    s.time_s = o.number("time_s", 0, true, kLimits.time_s);
    s.samples = static_cast<int>(o.integer("samples", 0));
    s.cv = o.number("cv", 0, false);
    s.components_s = o.number_map("components_s", 0);
    o.known({"layers", "hidden", "heads", "ffn_hidden", "seq_len", "micro_batch", "gated_ffn", "dtype", "kv_heads",
             "rmsnorm", "rope", "flash_attention", "time_s", "samples", "cv", "components_s"});
    p.steps.push_back(std::move(s));
  });
  if (const json* n = top.get("notes"); n != nullptr && r.array(*n, "/notes", "of strings")) {
    for (std::size_t i = 0; i < n->size(); ++i) {
      if (auto s = r.string((*n)[i], child("/notes", i))) p.notes.push_back(*s);
    }
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return p;
}

}  // namespace capplan::data
