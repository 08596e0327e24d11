// SPDX-License-Identifier: Apache-2.0
// The model section's fields: its name, dimensions and switches, below /model.
#include <string>

#include "capplan/data/fields.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

// A dimension: an integer in [1, max], written back when set (0: not given, e.g. head_dim).
template <int sim::ModelSpec::*Member>
constexpr auto kSetDim = [](sim::ModelSpec& m, const json& v) { m.*Member = v.get<int>(); };
template <int sim::ModelSpec::*Member>
constexpr auto kGetDim = [](const sim::ModelSpec& m) { return m.*Member > 0 ? json(m.*Member) : json(nullptr); };
template <bool sim::ModelSpec::*Member>
constexpr auto kSetFlag = [](sim::ModelSpec& m, const json& v) { m.*Member = v.get<bool>(); };
template <bool sim::ModelSpec::*Member>
constexpr auto kGetFlag = [](const sim::ModelSpec& m) { return json(m.*Member); };

#define CAPPLAN_DIM(key, member, max_, help_, flag_, flag_help)                                              \
  Field<sim::ModelSpec> {                                                                                \
    {.pointer = key, .kind = FieldKind::integer, .min = 1, .max = max_, .help = help_,                     \
     .flag = {flag_, "INT", flag_help, "Model"}},                                                          \
        kSetDim<&sim::ModelSpec::member>, kGetDim<&sim::ModelSpec::member>                                 \
  }
#define CAPPLAN_SWITCH(key, member, help_, flag_, flag_help)                                                 \
  Field<sim::ModelSpec> {                                                                                \
    {.pointer = key, .kind = FieldKind::boolean, .help = help_, .flag = {flag_, "BOOL", flag_help, "Model"}}, \
        kSetFlag<&sim::ModelSpec::member>, kGetFlag<&sim::ModelSpec::member>                               \
  }

const Field<sim::ModelSpec> kModel[] = {
    {{.pointer = "name",
      .kind = FieldKind::text,
      .help = "the model's name in the output",
      .flag = {"--name", "TEXT", "The model's name in the output (a custom model's, or a preset renamed)", "Model"}},
     [](sim::ModelSpec& m, const json& v) { m.name = v.get<std::string>(); },
     [](const sim::ModelSpec& m) { return json(m.name); }},
    CAPPLAN_DIM("layers", layers, 1e4, "transformer layers", "--layers", "Transformer layers"),
    CAPPLAN_DIM("hidden", hidden, 1e6, "hidden size", "--hidden", "Hidden size"),
    CAPPLAN_DIM("heads", heads, 1e5, "attention heads", "--heads", "Attention heads"),
    CAPPLAN_DIM("kv_heads", kv_heads, 1e5, "key/value heads; default = heads", "--kv-heads", "Key/value heads (GQA)"),
    CAPPLAN_DIM("ffn_hidden", ffn_hidden, 1e7, "FFN inner size", "--ffn-hidden", "FFN hidden size"),
    CAPPLAN_DIM("vocab", vocab, 1e8, "vocabulary size", "--vocab", "Vocabulary size"),
    CAPPLAN_DIM("seq_len", seq_len, 1e8, "sequence length", "--seq-len", "Sequence length in tokens"),
    CAPPLAN_DIM("head_dim", attention_head_dim, 1e5, "per-head dimension when not hidden/heads (optional)", nullptr,
                ""),
    CAPPLAN_SWITCH("gated_ffn", gated_ffn, "SwiGLU-style gated FFN (default false)", "--gated-ffn",
                   "SwiGLU-style gated FFN"),
    CAPPLAN_SWITCH("tied_embeddings", tied_embeddings, "output layer shares the embedding (default false)",
                   "--tied-embeddings", "Output layer shares the input embedding"),
    CAPPLAN_SWITCH("dropout", dropout, "dropout masks kept for backward (default false)", "--dropout",
                   "Dropout masks kept for backward"),
    CAPPLAN_SWITCH("flash_attention", flash_attention, "fused attention (default true)", "--flash-attention",
                   "Fused (flash) attention (default true)"),
    CAPPLAN_SWITCH("rmsnorm", rmsnorm, "RMSNorm instead of LayerNorm (default false)", "--rmsnorm",
                   "RMSNorm instead of LayerNorm"),
    CAPPLAN_SWITCH("rope", rope, "rotary position embedding (default false)", "--rope", "Rotary position embedding"),
};

#undef CAPPLAN_DIM
#undef CAPPLAN_SWITCH

}  // namespace

std::span<const Field<sim::ModelSpec>> model_fields() { return kModel; }

}  // namespace capplan::data
