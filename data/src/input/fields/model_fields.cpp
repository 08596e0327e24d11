// SPDX-License-Identifier: Apache-2.0
// The model section's fields: its name, dimensions and switches, below /model; its mixture of
// experts, latent attention and Mamba-2 mixer below /model/moe, /model/mla and /model/mamba.
#include <string>
#include <type_traits>

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

#define CAPPLAN_DIM(key, member, unit_, max_, help_, flag_, flag_help)                                       \
  Field<sim::ModelSpec> {                                                                                \
    {.pointer = key, .kind = FieldKind::integer, .unit = unit_, .min = 1, .max = max_, .help = help_,      \
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
    CAPPLAN_DIM("layers", layers, "", 1e4, "transformer layers", "--layers", "Transformer layers"),
    CAPPLAN_DIM("hidden", hidden, "", 1e6, "hidden size", "--hidden", "Hidden size"),
    CAPPLAN_DIM("heads", heads, "", 1e5, "attention heads", "--heads", "Attention heads"),
    CAPPLAN_DIM("kv_heads", kv_heads, "", 1e5, "key/value heads; default = heads", "--kv-heads", "Key/value heads (GQA)"),
    CAPPLAN_DIM("ffn_hidden", ffn_hidden, "", 1e7, "FFN inner size", "--ffn-hidden", "FFN hidden size"),
    CAPPLAN_DIM("vocab", vocab, "", 1e8, "vocabulary size", "--vocab", "Vocabulary size"),
    CAPPLAN_DIM("seq_len", seq_len, "tokens", 1e8, "sequence length", "--seq-len", "Sequence length in tokens"),
    CAPPLAN_DIM("head_dim", attention_head_dim, "", 1e5, "per-head dimension when not hidden/heads (optional)", nullptr,
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
    // Read beside the table (catalog/hybrid_model.cpp): it also sets layers.
    {{.pointer = "layer_pattern",
      .kind = FieldKind::text,
      .help = "hybrid model: one symbol per layer, M (Mamba-2), * (attention), - (MLP), E (MoE) (Megatron-Core's "
              "hybrid_override_pattern); sets layers to its length when layers is not given",
      .flag = {"--layer-pattern", "PATTERN",
               "Hybrid model: one symbol per layer, M (Mamba-2), * (attention), - (MLP), E (MoE) (Megatron-Core's "
               "hybrid_override_pattern); sets --layers to its length",
               "Model"},
      .pattern = "^[M*E-]+$"}},
};

#undef CAPPLAN_DIM
#undef CAPPLAN_SWITCH

// A member stored as the JSON value's type, and written back as it is.
template <class T, auto Member>
void store(T& s, const json& v) {
  s.*Member = v.get<std::remove_cvref_t<decltype(s.*Member)>>();
}
template <class T, auto Member>
json load(const T& s) {
  return json(s.*Member);
}
template <class T, auto Member>
constexpr Field<T> member(FieldSpec spec) {
  return {spec, &store<T, Member>, &load<T, Member>};
}

using sim::MoeSpec;
constexpr const char* kDispatchers[] = {"alltoall", "deepep"};

// Routed experts as the model was trained (Megatron-Core's num_moe_experts, moe_router_topk,
// moe_ffn_hidden_size, moe_shared_expert_intermediate_size, moe_layer_freq); the load imbalance,
// padding, routing and dispatcher are the run's.
const Field<MoeSpec> kMoe[] = {
    member<MoeSpec, &MoeSpec::experts>(
        {.pointer = "experts", .kind = FieldKind::integer, .min = 1, .max = 1e5, .help = "routed experts per MoE layer",
         .required = true}),
    member<MoeSpec, &MoeSpec::top_k>(
        {.pointer = "top_k", .kind = FieldKind::integer, .min = 1, .max = 1e5, .help = "routed experts each token uses",
         .required = true}),
    member<MoeSpec, &MoeSpec::expert_ffn_hidden>({.pointer = "expert_ffn_hidden",
                                                  .kind = FieldKind::integer,
                                                  .min = 1,
                                                  .max = 1e7,
                                                  .help = "inner size of one expert",
                                                  .required = true}),
    member<MoeSpec, &MoeSpec::shared_experts>({.pointer = "shared_experts",
                                               .kind = FieldKind::integer,
                                               .min = 0,
                                               .max = 1e5,
                                               .help = "always-active experts of expert_ffn_hidden (default 0)"}),
    member<MoeSpec, &MoeSpec::dense_layers>({.pointer = "dense_layers",
                                             .kind = FieldKind::integer,
                                             .min = 0,
                                             .max = 1e4,
                                             .help = "leading layers with a dense FFN of ffn_hidden (default 0)"}),
    member<MoeSpec, &MoeSpec::every_n_layers>({.pointer = "every_n_layers",
                                               .kind = FieldKind::integer,
                                               .min = 1,
                                               .max = 1e4,
                                               .help = "after the dense layers every n-th layer is MoE (default 1)"}),
    member<MoeSpec, &MoeSpec::max_nodes_per_token>(
        {.pointer = "max_nodes_per_token",
         .kind = FieldKind::integer,
         .min = 0,
         .max = 1e5,
         .help = "node-limited routing: nodes a token's experts may span (default 0 = unlimited)"}),
    member<MoeSpec, &MoeSpec::capacity_factor>(
        {.pointer = "capacity_factor",
         .kind = FieldKind::number,
         .min = 1,
         .max = 10,
         .help = "load imbalance: busiest expert rank over the mean (default 1.0 = balanced)",
         .bound = "beyond 10 the layout, not the router, is the problem",
         .run_only = true}),
    member<MoeSpec, &MoeSpec::activation_clamp>(
        {.pointer = "activation_clamp",
         .kind = FieldKind::number,
         .min = 0,
         .max = 1e6,
         .help = "gated-activation input clamp, run as eager ops in Megatron-Core (default 0 = none)"}),
    member<MoeSpec, &MoeSpec::expert_bias>(
        {.pointer = "expert_bias", .kind = FieldKind::boolean, .help = "expert linears carry biases (default false)"}),
    member<MoeSpec, &MoeSpec::pad_to_capacity>(
        {.pointer = "pad_to_capacity",
         .kind = FieldKind::boolean,
         .help = "token dropping with every expert's input padded to its capacity (Megatron-Core "
                 "moe_pad_expert_input_to_capacity): static shapes, no token-count exchange; default false = "
                 "dropless",
         .run_only = true}),
    member<MoeSpec, &MoeSpec::random_routing>(
        {.pointer = "random_routing",
         .kind = FieldKind::boolean,
         .help = "benchmark routing that draws each token's experts at random (Megatron-Core "
                 "moe_router_force_load_balancing): the busiest expert-parallel rank carries its binomial spread "
                 "above the mean",
         .run_only = true}),
    {{.pointer = "dispatcher",
      .kind = FieldKind::choice,
      .help = "expert-parallel token dispatch: Megatron-Core's all-to-all dispatcher (default) or DeepEP's fused "
              "dispatch and combine",
      .flag = {"--moe-dispatcher", "NAME",
               "MoE token dispatch with expert parallelism: alltoall (Megatron-Core's NCCL all-to-all, default) or "
               "deepep (DeepEP / HybridEP fused kernels, Megatron-Core's flex dispatcher)",
               "Model"},
      .choices = kDispatchers,
      .noun = "dispatcher",
      .run_only = true},
     [](MoeSpec& m, const json& v) {
       m.dispatcher = v.get<std::string>() == "deepep" ? sim::MoeDispatcher::deepep : sim::MoeDispatcher::alltoall;
     },
     [](const MoeSpec& m) { return json(m.dispatcher == sim::MoeDispatcher::deepep ? "deepep" : "alltoall"); }},
};

using sim::MlaSpec;
// DeepSeek-V2's latent dimensions (its config.json names).
const Field<MlaSpec> kMla[] = {
    member<MlaSpec, &MlaSpec::q_lora_rank>({.pointer = "q_lora_rank",
                                            .kind = FieldKind::integer,
                                            .min = 0,
                                            .max = 1e6,
                                            .help = "query latent rank; 0 = queries projected directly",
                                            .required = true}),
    member<MlaSpec, &MlaSpec::kv_lora_rank>({.pointer = "kv_lora_rank",
                                             .kind = FieldKind::integer,
                                             .min = 1,
                                             .max = 1e6,
                                             .help = "key/value latent rank",
                                             .required = true}),
    member<MlaSpec, &MlaSpec::qk_nope_head_dim>({.pointer = "qk_nope_head_dim",
                                                 .kind = FieldKind::integer,
                                                 .min = 1,
                                                 .max = 1e5,
                                                 .help = "per-head query/key dimension without RoPE",
                                                 .required = true}),
    member<MlaSpec, &MlaSpec::qk_rope_head_dim>({.pointer = "qk_rope_head_dim",
                                                 .kind = FieldKind::integer,
                                                 .min = 1,
                                                 .max = 1e5,
                                                 .help = "per-head decoupled RoPE dimension",
                                                 .required = true}),
    member<MlaSpec, &MlaSpec::v_head_dim>({.pointer = "v_head_dim",
                                           .kind = FieldKind::integer,
                                           .min = 1,
                                           .max = 1e5,
                                           .help = "per-head value dimension",
                                           .required = true}),
};

using sim::MambaSpec;
// Megatron-Core's names (TransformerConfig mamba_num_heads, mamba_head_dim, mamba_state_dim,
// mamba_num_groups; MambaMixer d_conv and chunk_size, mamba_mixer.py @d98e8a6); heads is needed,
// the rest default to Megatron-Core's.
const Field<MambaSpec> kMamba[] = {
    member<MambaSpec, &MambaSpec::heads>({.pointer = "heads",
                                          .kind = FieldKind::integer,
                                          .min = 1,
                                          .max = 1e5,
                                          .help = "SSM heads (mamba_num_heads); inner size = heads x head_dim"}),
    member<MambaSpec, &MambaSpec::head_dim>({.pointer = "head_dim",
                                             .kind = FieldKind::integer,
                                             .min = 1,
                                             .max = 1e4,
                                             .help = "per-head dimension (mamba_head_dim, default 64)"}),
    member<MambaSpec, &MambaSpec::state>({.pointer = "state",
                                          .kind = FieldKind::integer,
                                          .min = 1,
                                          .max = 1e4,
                                          .help = "SSM state size (mamba_state_dim, default 128)"}),
    member<MambaSpec, &MambaSpec::groups>({.pointer = "groups",
                                           .kind = FieldKind::integer,
                                           .min = 1,
                                           .max = 1e4,
                                           .help = "groups of B and C (mamba_num_groups, default 8)"}),
    member<MambaSpec, &MambaSpec::conv_kernel>({.pointer = "conv_kernel",
                                                .kind = FieldKind::integer,
                                                .min = 1,
                                                .max = 64,
                                                .help = "causal convolution width (d_conv, default 4)"}),
    member<MambaSpec, &MambaSpec::chunk>({.pointer = "chunk",
                                          .kind = FieldKind::integer,
                                          .min = 1,
                                          .max = 1e5,
                                          .help = "chunk of the SSD scan kernels (chunk_size, default 128)"}),
    member<MambaSpec, &MambaSpec::version>({.pointer = "version",
                                            .kind = FieldKind::integer,
                                            .min = 1,
                                            .max = 2,
                                            .help = "mixer generation: 2 (SSD, default) or 1 (selective scan, priced "
                                                    "as Mamba-2 with a warning)"}),
};

}  // namespace

std::span<const Field<sim::ModelSpec>> model_fields() { return kModel; }
std::span<const Field<sim::MoeSpec>> moe_fields() { return kMoe; }
std::span<const Field<sim::MlaSpec>> mla_fields() { return kMla; }
std::span<const Field<sim::MambaSpec>> mamba_fields() { return kMamba; }

}  // namespace capplan::data
