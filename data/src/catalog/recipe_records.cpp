// SPDX-License-Identifier: Apache-2.0
// The recipe records of the catalog: frameworks.json (how a training framework runs a step) and
// engines.json (how a serving engine batches and holds memory). Every default is sourced: an
// object {"value": ..., "source": "..."}, or {"value": null, "note": "..."} where there is none.
#include <algorithm>
#include <cstdlib>
#include <span>

#include "capplan/data/fields.hpp"
#include "catalog/catalog_records.hpp"
#include "input/fields/read_table.hpp"

namespace capplan::data {
namespace {

using namespace records;  // the shared conversions and the reader toolkit

// Reads a recipe's "defaults" object: one {"value": ..., "source": "..."} or {"value": null,
// "note": "..."} per row of `rows` (a row without `required` is always required), each non-null
// value checked and stored into `target` by its row, and each default kept as given in `out`.
template <class Row, class Target>
void read_sourced_defaults(const json& defaults, const std::string& dp, std::span<const Row> rows, Target& target,
                           std::vector<FrameworkDefault>& out, Reader& r) {
  // A row of a field table (capplan/data/fields.hpp) names its key and help in its spec and is
  // checked by its kind and range before it is stored.
  constexpr bool field_row = requires(const Row& f) { f.spec; };
  const auto key_of = [](const Row& f) -> const char* {
    if constexpr (field_row) {
      return f.spec.pointer;
    } else {
      return f.key;
    }
  };
  const auto help_of = [](const Row& f) -> const char* {
    if constexpr (field_row) {
      return f.spec.help;
    } else {
      return f.help;
    }
  };
  for (const auto& f : rows) {
    const std::string p = detail::child(dp, key_of(f));
    const json* it = Reader::find(defaults, key_of(f));
    if (it == nullptr) {
      bool required = true;
      if constexpr (requires { f.required; }) required = f.required;
      if (required) r.error(p, std::string("required (") + help_of(f) + "; null with a note when there is none) is missing");
      continue;
    }
    if (!r.object(*it, p)) continue;
    r.unknown_keys(*it, p, {"value", "source", "note"});
    FrameworkDefault d;
    d.key = key_of(f);
    for (auto [key, into] : {std::pair{"source", &d.source}, std::pair{"note", &d.note}}) {
      const json* v = Reader::find(*it, key);
      if (auto s = v ? r.string(*v, detail::child(p, key)) : std::nullopt; s && !s->empty()) *into = *s;
    }
    const json* value = r.required(*it, p, "value", std::string(help_of(f)) + ", or null");
    if (value == nullptr) continue;
    d.value = value->dump();
    if (value->is_null()) {
      if (d.note.empty()) r.error(detail::child(p, "note"), "required where the value is null (why there is none)");
    } else {
      if (d.source.empty()) r.error(detail::child(p, "source"), "required (where the value was read: URL, file#line)");
      if constexpr (field_row) {
        if (fields_detail::check_value(f.spec, *value, detail::child(p, "value"), r)) f.set(target, *value);
      } else {
        f.set(target, *value, r, detail::child(p, "value"));
      }
    }
    out.push_back(std::move(d));
  }
  r.unknown_keys(defaults, dp, [rows, key_of] {
    std::vector<std::string> keys;
    for (const auto& f : rows) keys.emplace_back(key_of(f));
    return keys;
  }());
}

// --- frameworks.json --------------------------------------------------------------------------

// One row per recipe default: how its value is checked and stored. Every default is an object
// {"value": ..., "source": "..."}, or {"value": null, "note": "..."} where the framework has no
// such default or it was not read (capplan's own default applies).
struct RecipeDefault {
  const char* key;
  bool required;
  const char* help;
  // Checks a non-null value and stores it; false (with the error reported) when it is invalid.
  bool (*set)(sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p);
};

bool expect_bool(const json& v, Reader& rd, const std::string& p) { return rd.boolean(v, p).has_value(); }

template <class E>
bool expect_name(const json& v, Reader& rd, const std::string& p, std::optional<E> (*parse)(const std::string&),
                 std::vector<std::string> known, E& out) {
  auto e = rd.one_of(v, p, parse, known, "value");
  if (e) out = *e;
  return e.has_value();
}

#define CAPPLAN_RECIPE_BOOL(key, member, required, help)                                          \
  {key, required, help, [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) { \
     if (!expect_bool(v, rd, p)) return false;                                                       \
     r.member = v.get<bool>();                                                                       \
     return true;                                                                                    \
   }}

// A number field of the recipe within [lo, hi].
#define CAPPLAN_RECIPE_NUMBER(key, member, lo, hi, help)                                             \
  {key, false, help, [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {  \
     const auto x = rd.number(v, p, lo, hi, false);                                                  \
     if (x) r.member = *x;                                                                           \
     return x.has_value();                                                                           \
   }}

std::optional<sim::Framework> kernels_from_string(const std::string& s) {
  if (s == "fused") return sim::Framework::megatron;
  if (s == "eager") return sim::Framework::pytorch;
  return std::nullopt;
}

constexpr RecipeDefault kRecipeDefaults[] = {
    {"kernels", true, "element-wise kernels: fused or eager",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       return expect_name<sim::Framework>(v, rd, p, kernels_from_string, {"fused", "eager"}, r.kernels);
     }},
    {"loss_kernel", true, "loss kernels: unfused, fused, te or eager",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       sim::LossKernel k{};
       if (!expect_name<sim::LossKernel>(v, rd, p, sim::loss_kernel_from_string, {"unfused", "fused", "te", "eager"},
                                         k))
         return false;
       r.loss_kernel = k;
       return true;
     }},
    {"attention_kernel", false, "fused attention kernel generation: flash2 or flash1 (absent: flash2)",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       sim::AttentionKernel k{};
       if (!expect_name<sim::AttentionKernel>(v, rd, p, sim::attention_kernel_from_string, {"flash2", "flash1"}, k))
         return false;
       r.attention_kernel = k;
       return true;
     }},
    {"grad_reduce_in_fp32", true, "gradients reduced in fp32, per precision: {bf16, fp16, fp8} (each true, false or null)",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       if (!rd.object(v, p)) return false;
       bool ok = true;
       auto one = [&](const char* key, std::optional<bool>& out) {
         const json* b = rd.required(v, p, key, "true, false or null");
         if (b == nullptr) {
           ok = false;
         } else if (!b->is_null()) {
           auto flag = rd.boolean(*b, detail::child(p, key));
           if (flag) out = *flag;
           ok = ok && flag.has_value();
         }
       };
       one("bf16", r.grad_reduce_in_fp32_bf16);
       one("fp16", r.grad_reduce_in_fp32_fp16);
       one("fp8", r.grad_reduce_in_fp32_fp8);
       rd.unknown_keys(v, p, {"bf16", "fp16", "fp8"});
       return ok;
     }},
    CAPPLAN_RECIPE_BOOL("fp8_param_gather", fp8_param_gather, true, "FP8 weights, all-gathered in FP8"),
    CAPPLAN_RECIPE_BOOL("master_weights", master_weights, false,
                        "fp32 master weights and optimizer state beside 16-bit weights (false: pure 16-bit training)"),
    {"fp8_recipe", false, "FP8 scaling: delayed or current",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       sim::Fp8Recipe k{};
       if (!expect_name<sim::Fp8Recipe>(v, rd, p, sim::fp8_recipe_from_string, {"delayed", "current", "mxfp8"}, k)) return false;
       r.fp8_recipe = k;
       return true;
     }},
    CAPPLAN_RECIPE_BOOL("overlap_dp_comm", overlap_dp_comm, true, "gradient reduction overlapped with backward"),
    CAPPLAN_RECIPE_BOOL("overlap_dp_comm_zero3", overlap_dp_comm_zero3, false,
                        "the same with ZeRO-3 / full sharding, where it differs"),
    CAPPLAN_RECIPE_BOOL("tp_comm_overlap", tp_comm_overlap, true, "tensor-parallel communication overlapped with GEMMs"),
    CAPPLAN_RECIPE_BOOL("pp_comm_overlap", pp_comm_overlap, false, "pipeline send/recv overlapped with compute"),
    CAPPLAN_RECIPE_BOOL("pp_p2p_batched", pp_p2p_batched, false,
                        "a micro-batch's pipeline send and receive batched into one call (false: separate blocking calls)"),
    CAPPLAN_RECIPE_BOOL("tp_async_dgrad", tp_async_dgrad, false,
                        "a column-parallel linear's input-gradient collective overlapped with its weight-gradient GEMM"),
    CAPPLAN_RECIPE_BOOL("ep_comm_overlap", ep_comm_overlap, false, "expert-parallel all-to-all overlapped"),
    {"recompute", true, "activation recompute: none, selective or full",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       sim::Recompute k{};
       if (!expect_name<sim::Recompute>(v, rd, p, sim::recompute_from_string, {"none", "selective", "full"}, k))
         return false;
       r.recompute = k;
       return true;
     }},
    {"recompute_modules", false, "Megatron-Core recompute_modules beyond core_attn: layernorm, moe_act, moe",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       if (!v.is_array()) {
         rd.error(p, "expected a list of module names (layernorm, moe_act, moe); got " + detail::describe(v));
         return false;
       }
       r.recompute_norms = false;
       r.recompute_moe_act = false;
       r.recompute_moe = false;
       for (std::size_t i = 0; i < v.size(); ++i) {
         const std::string name = v[i].is_string() ? v[i].get<std::string>() : v[i].dump();
         if (name == "layernorm") {
           r.recompute_norms = true;
         } else if (name == "moe_act") {
           r.recompute_moe_act = true;
         } else if (name == "moe") {
           r.recompute_moe = true;
         } else {
           rd.error(detail::child(p, i), "unknown module '" + name + "' (known: layernorm, moe_act, moe)");
           return false;
         }
       }
       return true;
     }},
    {"selective_recompute", false, "false: only full-layer checkpointing exists in this version",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       if (!expect_bool(v, rd, p)) return false;
       r.selective_recompute = v.get<bool>();
       return true;
     }},
    CAPPLAN_RECIPE_BOOL("flash_attention", flash_attention, false, "fused (flash) attention"),
    CAPPLAN_RECIPE_BOOL("dropout", dropout, false, "dropout in training"),
    CAPPLAN_RECIPE_BOOL("expert_tp_follows_tp", expert_tp_follows_tp, false,
                        "MoE: expert tensor-parallel size defaults to the tensor-parallel size"),
    CAPPLAN_RECIPE_BOOL("cuda_graphs", cuda_graphs, true, "CUDA graphs captured (not modelled)"),
    CAPPLAN_RECIPE_NUMBER("host_us_per_op", host_us_per_op, 0.0, 10000.0,
                          "host time to issue one op of capplan's op list, microseconds"),
    CAPPLAN_RECIPE_NUMBER("zero3_prefetch_params", zero3_prefetch_params, 1.0, 1e12,
                          "ZeRO-3: parameter elements gathered ahead of use (at least the next tensor)"),
    CAPPLAN_RECIPE_BOOL("zero3_regather_recompute", zero3_regather_recompute, false,
                        "ZeRO-3 under full recompute: parameters gathered for the recomputed forward, released, "
                        "gathered again for backward"),
    CAPPLAN_RECIPE_NUMBER("zero3_host_us_per_layer", zero3_host_us_per_layer, 0.0, 1e6,
                          "DeepSpeed ZeRO-3: host time of the parameter hooks per layer and pass, microseconds"),
    {"zero_full_finetune", false, "the ZeRO stage of the recipe's full-parameter fine-tuning script",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       const auto z = rd.integer(v, p, 0, 3);
       if (z) r.zero_full_finetune = static_cast<int>(*z);
       return z.has_value();
     }},
    {"lora_rank", false, "fine-tuning: the LoRA rank when the scenario does not give one",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       const auto rank = rd.integer(v, p, 1, 65536);
       if (rank) r.lora_rank = static_cast<int>(*rank);
       return rank.has_value();
     }},
    {"lora_targets", false, "fine-tuning: the linears LoRA adapts by default (q, k, v, o, gate, up, down)",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       const auto bits = detail::lora_targets_from_json(v, rd, p);
       if (bits) r.lora_targets = *bits;
       return bits.has_value();
     }},
    CAPPLAN_RECIPE_BOOL("packed_document_mask", packed_document_mask, false,
                        "fine-tuning: packed sequences attend only within their documents"),
};

// What the stack runs ("supports"): each a boolean, or for zero_stages the list of ZeRO stages
// (0 = plain data parallelism); null with a note where the sources do not say (not restricted).
#define CAPPLAN_SUPPORT_BOOL(key, member, help)                                                  \
  {key, true, help, [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) { \
     if (!expect_bool(v, rd, p)) return false;                                                    \
     r.supports.member = v.get<bool>();                                                           \
     return true;                                                                                 \
   }}

constexpr RecipeDefault kRecipeSupports[] = {
    CAPPLAN_SUPPORT_BOOL("tensor_parallel", tensor_parallel, "tensor parallelism (tp > 1)"),
    CAPPLAN_SUPPORT_BOOL("sequence_parallel", sequence_parallel,
                         "Megatron-style sequence parallelism of the norms and dropout between TP regions"),
    CAPPLAN_SUPPORT_BOOL("pipeline_parallel", pipeline_parallel, "pipeline parallelism (pp > 1)"),
    CAPPLAN_SUPPORT_BOOL("context_parallel", context_parallel, "context parallelism (cp > 1)"),
    CAPPLAN_SUPPORT_BOOL("expert_parallel", expert_parallel, "expert parallelism (ep > 1)"),
    {"zero_stages", true, "the ZeRO / FSDP sharding stages it runs, a list of 0..3 (0 = none)",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       if (!v.is_array() || v.empty()) {
         rd.error(p, std::string("expected a non-empty list of ZeRO stages 0..3; got ") + v.type_name());
         return false;
       }
       unsigned bits = 0;
       for (std::size_t i = 0; i < v.size(); ++i) {
         const auto z = rd.integer(v[i], detail::child(p, i), 0, 3);
         if (!z) return false;
         bits |= 1u << *z;
       }
       r.supports.zero_stages = bits;
       return true;
     }},
    CAPPLAN_SUPPORT_BOOL("offload_optimizer", offload_optimizer, "the optimizer state and step on the host"),
    CAPPLAN_SUPPORT_BOOL("offload_params", offload_params, "ZeRO-3 parameter shards on the host"),
};
#undef CAPPLAN_SUPPORT_BOOL
#undef CAPPLAN_RECIPE_BOOL
#undef CAPPLAN_RECIPE_NUMBER

FrameworkEntry read_framework_record(const json& j, const std::string& path, Reader& r) {
  FrameworkEntry e;
  if (!r.object(j, path)) return e;
  detail::Object o{j, path, r};
  if (const json* id = Reader::find(j, "id"); id != nullptr && id->is_string()) check_id(*id, r, o.at("id"));
  e.recipe.id = o.string("id", true);
  e.recipe.name = o.string("name", true);
  e.version = o.string("version", true);
  e.summary = o.string("summary", true);
  o.known({"id", "name", "version", "summary", "defaults", "supports"});
  const std::string dp = o.at("defaults");
  const json* defaults = o.get("defaults", "the recipe's defaults, each {value, source} or {value: null, note}");
  if (defaults != nullptr && r.object(*defaults, dp)) {
    read_sourced_defaults(*defaults, dp, std::span<const RecipeDefault>(kRecipeDefaults), e.recipe, e.defaults, r);
  }
  const std::string sp = o.at("supports");
  const json* supports =
      o.get("supports", "what the stack runs (TP, SP, PP, CP, EP, ZeRO stages, offload), each {value, source} or "
                        "{value: null, note}");
  if (supports != nullptr && r.object(*supports, sp)) {
    read_sourced_defaults(*supports, sp, std::span<const RecipeDefault>(kRecipeSupports), e.recipe, e.supports, r);
  }
  return e;
}

// --- engines.json -----------------------------------------------------------------------------

EngineEntry read_engine_record(const json& j, const std::string& path, Reader& r) {
  EngineEntry e;
  if (!r.object(j, path)) return e;
  detail::Object o{j, path, r};
  if (const json* id = Reader::find(j, "id"); id != nullptr && id->is_string()) check_id(*id, r, o.at("id"));
  e.spec.id = o.string("id", true);
  e.spec.name = o.string("name", true);
  e.spec.version = o.string("version", true);
  e.summary = o.string("summary", true);
  e.spec.source = o.string("source", true);
  o.known({"id", "name", "version", "summary", "source", "defaults"});
  const std::string dp = o.at("defaults");
  const json* defaults = o.get("defaults", "the engine's defaults, each {value, source} or {value: null, note}");
  if (defaults == nullptr || !r.object(*defaults, dp)) return e;
  // Each default is a key of the engine's field table (capplan/data/fields.hpp), the keys a serve
  // scenario overrides.
  read_sourced_defaults(*defaults, dp, engine_fields(), e.spec, e.defaults, r);
  return e;
}

}  // namespace

FrameworkEntry records::read_framework(const json& j, const std::string& p, Reader& r) {
  return read_framework_record(j, p, r);
}

EngineEntry records::read_engine(const json& j, const std::string& p, Reader& r) {
  return read_engine_record(j, p, r);
}

}  // namespace capplan::data
