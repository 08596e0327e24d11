// SPDX-License-Identifier: Apache-2.0
// A serving engine's settings, below an engine object: the defaults of a catalog engine record
// (data/engines.json, each with its source) and the overrides of a serve scenario
// (workload.engine {id, ...}) are the same keys, read through this one table.
#include <string>

#include "capplan/data/fields.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;
using sim::EngineSpec;

constexpr const char* kBudgets[] = {"total_memory", "free_memory"};
// The weight formats in sim::WeightFormat's order (quant_efficiency's keys).
constexpr const char* kFormats[] = {"bf16", "fp16", "fp8", "int8", "int4", "fp4"};
static_assert(std::size(kFormats) == sim::kWeightFormats);

constexpr FieldFlag engine_flag(const char* name, const char* type, const char* help) {
  return {name, type, help, "Engine and layout"};
}

// One number per weight format; null keeps the roofline (1).
void set_per_format(std::array<double, sim::kWeightFormats>& out, const json& v) {
  for (std::size_t i = 0; i < std::size(kFormats); ++i) {
    const json& x = v.at(kFormats[i]);
    out[i] = x.is_null() ? 1.0 : x.get<double>();
  }
}

const Field<EngineSpec> kEngine[] = {
    {{.pointer = "max_num_seqs",
      .kind = FieldKind::integer,
      .unit = "sequences",
      .min = 1,
      .max = 1e6,
      .help = "sequences in one batch",
      .bound = "beyond any engine's scheduler",
      .flag = engine_flag("--max-num-seqs", "INT", "Sequences per batch (the engine's default)")},
     [](EngineSpec& e, const json& v) { e.max_num_seqs = v.get<int>(); }},
    {{.pointer = "max_num_batched_tokens",
      .kind = FieldKind::integer,
      .unit = "tokens",
      .min = 1,
      .max = 1e8,
      .help = "tokens (prefill chunks + decodes) in one step",
      .bound = "beyond any model's context times any batch an engine runs",
      .flag = engine_flag("--max-num-batched-tokens", "INT", "Tokens per engine step (the engine's default)")},
     [](EngineSpec& e, const json& v) { e.max_num_batched_tokens = static_cast<std::int64_t>(v.get<double>()); }},
    {{.pointer = "chunked_prefill",
      .kind = FieldKind::boolean,
      .help = "prompts split into chunks that share steps with decodes",
      .flag = engine_flag("--chunked-prefill", "BOOL", "Prompts split into chunks")},
     [](EngineSpec& e, const json& v) { e.chunked_prefill = v.get<bool>(); }},
    {{.pointer = "reserve_full_sequence",
      .kind = FieldKind::boolean,
      .help = "admission reserves the KV cache for the whole sequence, so nothing is preempted"},
     [](EngineSpec& e, const json& v) { e.reserve_full_sequence = v.get<bool>(); }},
    {{.pointer = "kv_budget",
      .kind = FieldKind::choice,
      .help = "what kv_memory_fraction is a fraction of: total_memory or free_memory",
      .choices = kBudgets,
      .noun = "KV budget"},
     [](EngineSpec& e, const json& v) {
       e.kv_budget = v.get<std::string>() == "free_memory" ? sim::KvBudget::free_memory : sim::KvBudget::total_memory;
     }},
    {{.pointer = "kv_memory_fraction",
      .kind = FieldKind::number,
      .min = 0,
      .max = 1,
      .min_open = true,
      .help = "share of the GPU's memory (or of what is free) the engine takes (vLLM gpu_memory_utilization, "
              "TensorRT-LLM kv_cache_free_gpu_mem_fraction)",
      .flag = engine_flag("--kv-memory-fraction", "FRACTION",
                          "vLLM gpu_memory_utilization / TensorRT-LLM kv_cache_free_gpu_mem_fraction")},
     [](EngineSpec& e, const json& v) { e.kv_memory_fraction = v.get<double>(); }},
    {{.pointer = "kv_block_tokens",
      .kind = FieldKind::integer,
      .unit = "tokens",
      .min = 1,
      .max = 1e5,
      .help = "tokens per paged-KV block"},
     [](EngineSpec& e, const json& v) { e.kv_block_tokens = v.get<int>(); }},
    {{.pointer = "cuda_graphs", .kind = FieldKind::boolean, .help = "decode steps replayed from CUDA graphs"},
     [](EngineSpec& e, const json& v) { e.cuda_graphs = v.get<bool>(); }},
    {{.pointer = "kernel_gap_us",
      .kind = FieldKind::number,
      .unit = "us",
      .min = 0,
      .max = 1e3,
      .help = "per-kernel cost inside a CUDA graph",
      .bound = "1 ms per kernel inside a graph"},
     [](EngineSpec& e, const json& v) { e.kernel_gap = units::microseconds(v.get<double>()); }},
    {{.pointer = "step_overhead_us",
      .kind = FieldKind::number,
      .unit = "us",
      .min = 0,
      .max = 1e6,
      .help = "host time per engine step the GPU waits for (schedule, inputs, sampling)",
      .bound = "1 s per engine step"},
     [](EngineSpec& e, const json& v) { e.step_overhead = units::microseconds(v.get<double>()); }},
    {{.pointer = "runtime_reserve_gib",
      .kind = FieldKind::number,
      .unit = "GiB",
      .min = 0,
      .max = 1024,
      .help = "per GPU: CUDA context, CUDA graphs, NCCL and allocator slack",
      .bound = "more than any GPU's memory"},
     [](EngineSpec& e, const json& v) { e.runtime_reserve = units::gib(v.get<double>()); }},
    {{.pointer = "quant_efficiency",
      .kind = FieldKind::per_choice,
      .min = 0,
      .max = 1,
      .min_open = true,
      .help = "dense GEMM speed per weight format relative to its roofline (null: 1)",
      .choices = kFormats},
     [](EngineSpec& e, const json& v) { set_per_format(e.quant_efficiency, v); }},
    {{.pointer = "quant_moe_efficiency",
      .kind = FieldKind::per_choice,
      .min = 0,
      .max = 1,
      .min_open = true,
      .help = "MoE expert GEMM speed per weight format relative to its roofline (null: 1)",
      .choices = kFormats},
     [](EngineSpec& e, const json& v) { set_per_format(e.quant_moe_efficiency, v); }},
};

}  // namespace

std::span<const Field<sim::EngineSpec>> engine_fields() { return kEngine; }

}  // namespace capplan::data
