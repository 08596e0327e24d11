// SPDX-License-Identifier: Apache-2.0
// The dense FFN (MLP) block, and the FFN that the MoE block's shared and routed experts run too:
// the up (and gate) projection, the activation, the down projection.
#include <cstdint>

#include "lowering/blocks.hpp"
#include "lowering/shared_ops.hpp"

namespace capplan::sim::lowering {

// `rows`: the GEMM rows of one kernel; `rows_mean`: the rows all `kernels` process together,
// mean-loaded (model FLOPs and kept bytes).
void lower_ffn(OpListBuilder& b, const Context& cx, const char* up_name, const char* down_name, std::int64_t rows,
               double rows_mean, std::int64_t inner, double kernels, Scope scope, OpRole act_role, double conv_scale,
               bool tp_block) {
  const ModelSpec& m = cx.m;
  const Precision dt = cx.dt;
  const std::int64_t h = cx.h;
  const double act = cx.act, hd = cx.hd;
  const std::int64_t up = (m.gated_ffn ? 2 : 1) * inner;
  b.linear(up_name, "ffn_up_dgrad", "ffn_up_wgrad", rows, up, h, dt, scope, act * rows_mean * up,
           conv_scale * 2.0 * rows_mean * up * hd, 1, kernels);
  if (tp_block) tp_window(b, cx);
  if (m.gated_ffn) b.adapter(Tuned{lora_gate}, rows, inner, h, scope, 1, kernels);
  b.adapter(Tuned{lora_up}, rows, inner, h, scope, 1, kernels);
  const double elems = static_cast<double>(rows) * kernels * inner;
  const double kept = cx.gemm_in * rows_mean * inner;  // the activation output = the down GEMM's input
  if (cx.eager && m.gated_ffn) {
    // silu(gate) (2+2 bytes per element), then * up (2+2+2).
    b.elementwise("silu_eager", 2.0 * act * elems, scope, act_role);
    b.elementwise("mul_eager", 3.0 * act * elems, scope, act_role, 1.0, kept);
  } else {
    // Fused activation: reads the up (and gate) outputs, writes the product.
    b.elementwise(m.gated_ffn ? "swiglu" : "gelu", act * elems * ((m.gated_ffn ? 2.0 : 1.0) + 1.0), scope, act_role,
                  1.0, kept);
  }
  b.linear(Tuned{lora_down, true}, down_name, "ffn_down_dgrad", "ffn_down_wgrad", rows, h, inner, dt, scope, 0,
           conv_scale * 2.0 * rows_mean * inner * hd, 1, kernels);
}

void lower_dense_ffn(OpListBuilder& b, const Context& cx) {
  if (cx.hybrid) residual_stream(b, cx, Scope::dense_ffn, 1.0);
  lower_ffn(b, cx, "ffn_up", "ffn_down", cx.tokens, cx.td, cx.f / cx.t, 1.0, Scope::dense_ffn, OpRole::activation, 1.0);
  tp_block_comm(b, cx, Scope::dense_ffn);
}

}  // namespace capplan::sim::lowering
