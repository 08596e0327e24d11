// SPDX-License-Identifier: Apache-2.0
#include "step_shape.hpp"

#include <algorithm>

#include "capplan/calibrate/calibration_run.hpp"
#include "capplan/sim/cost/layer_step.hpp"
#include "io.hpp"

namespace capplan::cli {

std::optional<calib::StepShape> step_from_flags(const StepFlags& f, const std::string& backend) {
  auto step = calib::default_step_shape(backend, false);
  if (f.hidden > 0) step.hidden = f.hidden;
  if (f.heads > 0) step.heads = f.heads;
  if (f.kv_heads > 0) step.kv_heads = f.kv_heads;
  if (f.seq_len > 0) step.seq_len = f.seq_len;
  if (f.micro_batch > 0) step.micro_batch = f.micro_batch;
  if (f.layers > 0) step.layers = f.layers;
  step.ffn_hidden = f.ffn_hidden > 0 ? f.ffn_hidden : (f.hidden > 0 ? 4 * f.hidden : step.ffn_hidden);
  if (auto p = sim::precision_from_string(f.dtype)) step.dtype = *p;
  step.gated_ffn = step.gated_ffn || f.gated_ffn;
  step.rmsnorm = step.rmsnorm || f.rmsnorm;
  step.rope = step.rope || f.rope;
  step.flash_attention = step.flash_attention || f.flash_attention;
  if (f.decode_context > 0) {
    step.decode_context = f.decode_context;
    if (f.micro_batch <= 0) step.micro_batch = 32;  // a serving batch, not a training micro-batch
  }
  if (auto d = sim::check(calib::layer_step_shape(step)); has_errors(d)) {
    for (auto& x : d) {  // "step/seq_len" -> "--seq-len"
      x.where = "--" + x.where.substr(x.where.find('/') + 1);
      std::replace(x.where.begin(), x.where.end(), '_', '-');
    }
    print_diagnostics(d);
    return std::nullopt;
  }
  return step;
}

}  // namespace capplan::cli
