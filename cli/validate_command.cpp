// SPDX-License-Identifier: Apache-2.0
// `capplan validate --profile P [--backend host|cuda] [--format table|json] [--hidden N --heads N
//  --kv-heads N --seq-len N --micro-batch N --layers N --ffn-hidden N --dtype D --gated-ffn --rmsnorm
//  --rope --flash-attention --decode-context N] [--max-error F]`: runs the measured training step (one
// transformer layer forward + backward: the layer slice of the estimate's op list, sim/layer_step.hpp),
// or with --decode-context a serving decode step (the serving pass's layer, forward only), on this machine,
// predicts it from the profile with the calibrated cost model, and prints both per component.
// A report: exit 0 whatever the error, unless --max-error is given and exceeded (exit 3).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "backends.hpp"
#include "capplan/calibrate/calibration_run.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/sim/cost/calibrated_cost.hpp"
#include "capplan/sim/cost/layer_step.hpp"
#include "validate_command.hpp"
#include "step_shape.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The datasheet model behind the profile's fallback: the catalog GPU named by --gpu or matched from
// the profile's device name ("NVIDIA H200" -> h200-sxm-141gb). A CPU has no catalog entry: the
// fallback then has no datasheet figures, and validate says which ops it could not price.
sim::Cluster fallback_cluster(const ValidateOptions& opt, const GlobalOptions& global, const sim::Profile& p,
                              std::vector<std::string>& notes) {
  sim::Cluster c;
  c.gpus = 1;
  c.gpus_per_node = 1;
  const std::string device = lower(p.context_value("device"));
  if (opt.gpu.empty() && p.context_value("backend") == "host") {
    c.gpu.id = "host";
    c.gpu.name = p.context_value("device");
    return c;
  }
  const auto catalogs = data::load_catalogs(data_dir(global));
  if (!catalogs) return c;
  const data::GpuEntry* best = nullptr;
  for (const auto& g : catalogs->gpus) {
    if (!opt.gpu.empty()) {
      if (g.spec.id == opt.gpu) best = &g;
      continue;
    }
    const std::string token = lower(g.spec.id.substr(0, g.spec.id.find('-')));
    if (device.find(token) == std::string::npos) continue;
    const bool pcie = g.spec.id.find("pcie") != std::string::npos;
    if (best == nullptr || pcie == (device.find("pcie") != std::string::npos)) best = &g;
  }
  if (best != nullptr) {
    c.gpu = best->spec;
    c.intra_node_bandwidth = best->spec.nvlink_bandwidth;
  } else {
    notes.push_back("no catalog GPU matches the profile's device '" + p.context_value("device") +
                    "' (give --gpu ID): ops outside the profile cannot be priced");
  }
  return c;
}

double rel(double predicted, double measured) { return measured > 0 ? (predicted - measured) / measured : 0.0; }
double safe(double v) { return std::isfinite(v) ? v : 0.0; }

}  // namespace

int run_validate(const ValidateOptions& opt, const GlobalOptions& global) {
  const auto step = step_from_flags(opt.step, opt.backend);
  if (!step) return code(Exit::invalid_input);
  const calib::StepShape& shape = *step;
  const sim::LayerStepShape ls = calib::layer_step_shape(shape);
  const auto text = read_input(opt.profile);
  if (!text) {
    print_error("--profile '" + opt.profile + "': " + text.error());
    return code(Exit::invalid_input);
  }
  const auto profile = data::parse_profile(*text, opt.profile);
  if (!profile) {
    print_diagnostics(profile.error());
    return code(Exit::invalid_input);
  }

  if (profile->context_value("backend") != opt.backend) {
    print_warning("the profile was measured with the " + profile->context_value("backend") +
                  " backend; this step runs on " + opt.backend);
  }

  auto opened = open_backend(opt.backend);
  if (!opened.backend) return code(opened.exit);
  if (opened.backend->rank() != 0) return code(Exit::ok);  // under mpirun: rank 0 measures and reports

  calib::RunOptions run;
  run.warmup = 2;
  run.iterations = std::max(opt.iterations, 1);
  run.max_seconds_per_case = 30;
  const auto measured = opened.backend->training_step(shape, run);
  if (!measured) {
    print_diagnostics(measured.error());
    return code(Exit::infeasible);
  }

  std::vector<std::string> notes;
  const sim::CalibratedCost cost(*profile, fallback_cluster(opt, global, *profile, notes));
  const auto prediction = sim::predict_layer_step(ls, cost);
  std::vector<sim::StepOp> ops;
  std::map<std::string, std::map<std::string, int>> pricing;  // component -> how -> ops
  for (const auto& op : sim::layer_step_ops(ls)) {
    ops.push_back(op.op);
    ++pricing[sim::to_string(op.component)][cost.pricing(op.op.op)];
  }
  std::vector<std::string> coverage;  // the profile's gaps, in words (two that read the same are one)
  for (const auto& f : cost.coverage(ops)) {
    std::string w = data::render(f);
    if (std::find(coverage.begin(), coverage.end(), w) == coverage.end()) coverage.push_back(std::move(w));
  }
  for (auto& w : coverage) notes.push_back(std::move(w));

  const double predicted_total = prediction.total().base();
  const double measured_total = measured->time.median_s;
  if (!std::isfinite(predicted_total) || predicted_total <= 0) {
    for (const auto& n : notes) print_warning(n);
    print_error("the profile does not cover this step and has no datasheet to fall back to (see the warnings "
                "above); calibrate with the same step flags (--hidden, --heads, --seq-len, --gated-ffn, ...), which "
                "measures exactly its GEMMs");
    return code(Exit::infeasible);
  }
  const double error = rel(predicted_total, measured_total);
  // A backend without a fused (flash) attention kernel runs a fused-attention layer's attention as
  // the op list's batched GEMMs scaled by the causal work share (the CUDA backend: the component
  // "attention_batched_gemm", records.hpp). The measured attention is then not a flash kernel's,
  // and the comparison with the profile's (or the catalog's FlashAttention) rate says so.
  const auto stand_in = measured->components_s.find("attention_batched_gemm");
  const bool attention_is_batched_gemm = stand_in != measured->components_s.end();
  constexpr const char* kBatchedGemmNote =
      "batched GEMMs scaled by the causal work share, not a flash kernel";
  std::vector<std::string> measurement_notes;
  if (attention_is_batched_gemm) {
    measurement_notes.push_back("measured attention: " + std::string(kBatchedGemmNote) + " (" +
                                fixed(stand_in->second * 1e3, 2) + " ms of the measured attention); the " +
                                opt.backend + " backend has no fused attention kernel");
  }

  struct Row {
    const char* name;
    double predicted, measured;
  };
  const std::vector<Row> rows = {
      {"gemm", prediction.gemm.base(), measured->components_s.count("gemm") ? measured->components_s.at("gemm") : 0},
      {"attention", prediction.attention.base(),
       measured->components_s.count("attention") ? measured->components_s.at("attention") : 0},
      {"memory", prediction.memory.base(),
       measured->components_s.count("memory") ? measured->components_s.at("memory") : 0},
  };

  if (opt.format == "json") {
    json j;
    j["profile"] = opt.profile;
    j["source"] = cost.source();
    j["backend"] = opt.backend;
    j["step"] = {{"layers", shape.layers},
                 {"hidden", shape.hidden},
                 {"heads", shape.heads},
                 {"kv_heads", ls.kv_heads_or_heads()},
                 {"ffn_hidden", shape.ffn_hidden},
                 {"seq_len", shape.seq_len},
                 {"micro_batch", shape.micro_batch},
                 {"dtype", sim::to_string(shape.dtype)},
                 {"gated_ffn", shape.gated_ffn},
                 {"rmsnorm", shape.rmsnorm},
                 {"rope", shape.rope},
                 {"flash_attention", shape.flash_attention},
                 {"kind", shape.decode_context > 0 ? "decode" : "training"},
                 {"decode_context", shape.decode_context},
                 {"gemm_flops", sim::layer_step_flops(ls).base()}};
    j["predicted_step_s"] = safe(predicted_total);
    j["measured_step_s"] = safe(measured_total);
    j["relative_error"] = safe(error);
    j["measured_samples"] = measured->time.samples_s.size();
    j["measured_cv"] = safe(measured->time.cv);
    json comps = json::object();
    for (const auto& r : rows) {
      comps[r.name] = {{"predicted_s", safe(r.predicted)},
                       {"measured_s", safe(r.measured)},
                       {"relative_error", safe(rel(r.predicted, r.measured))},
                       {"ops_by_pricing", pricing[r.name]}};
    }
    if (attention_is_batched_gemm) {
      comps["attention"]["measured_as"] = kBatchedGemmNote;
      comps["attention"]["attention_batched_gemm_s"] = safe(stand_in->second);
    }
    j["components"] = comps;
    j["warnings"] = notes;
    j["notes"] = measurement_notes;
    std::cout << j.dump(2) << "\n";
  } else {
    std::ostringstream o;
    o << (shape.decode_context > 0 ? "Serving decode step: " : "Training step: ") << shape.layers
      << " layer(s), hidden " << shape.hidden << ", " << shape.heads
      << " heads" << (ls.kv_heads_or_heads() != shape.heads ? " (" + std::to_string(ls.kv_heads) + " kv)" : "")
      << ", " << (shape.gated_ffn ? "SwiGLU" : "GELU") << " ffn " << shape.ffn_hidden
      << (shape.rmsnorm ? ", RMSNorm" : ", LayerNorm") << (shape.rope ? ", RoPE" : "")
      << (shape.flash_attention ? ", fused attention" : "")
      << (shape.decode_context > 0
              ? ", " + std::to_string(shape.micro_batch) + " sequences decoding over " +
                    std::to_string(shape.decode_context) + " cached tokens, forward only"
              : ", seq " + std::to_string(shape.seq_len) + ", micro-batch " + std::to_string(shape.micro_batch))
      << ", " << sim::to_string(shape.dtype) << " (" << fixed(sim::layer_step_flops(ls).base() / 1e9, 2)
      << " GFLOP)\nPredicted with " << cost.source() << "\n\n";
    std::vector<std::vector<std::string>> table;
    for (const auto& r : rows) {
      const bool batched = attention_is_batched_gemm && std::string(r.name) == "attention";
      table.push_back({batched ? "attention_batched_gemm" : r.name, fixed(r.predicted * 1e3, 2),
                       fixed(r.measured * 1e3, 2), fixed(100 * rel(r.predicted, r.measured), 1) + "%"});
    }
    table.push_back({"step", fixed(predicted_total * 1e3, 2), fixed(measured_total * 1e3, 2),
                     fixed(100 * error, 1) + "%"});
    o << render_table({"component", "predicted ms", "measured ms", "error"}, table, {false, true, true, true}, "  ");
    o << "\n  priced:";
    for (const auto& [component, how] : pricing) {
      o << " " << component << " (";
      bool first = true;
      for (const auto& [name, n] : how) {
        o << (first ? "" : ", ") << n << " " << name;
        first = false;
      }
      o << ")";
    }
    o << "\n  measured: median of " << measured->time.samples_s.size() << " steps, cv "
      << fixed(100 * measured->time.cv, 1) << "%; components are the summed kernel times of each step\n";
    for (const auto& n : measurement_notes) o << "  " << n << "\n";
    if (!notes.empty()) {
      o << "\nWarnings\n";
      for (const auto& n : notes) o << "  - " << n << "\n";
    }
    std::cout << o.str();
  }
  if (opt.max_error >= 0 && std::abs(error) > opt.max_error) {
    print_error("relative error " + fixed(100 * error, 1) + "% exceeds --max-error " +
                fixed(100 * opt.max_error, 1) + "%");
    return code(Exit::infeasible);
  }
  return code(Exit::ok);
}

}  // namespace capplan::cli
