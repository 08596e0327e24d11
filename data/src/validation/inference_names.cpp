// SPDX-License-Identifier: Apache-2.0
// The measured serving table's names as capplan's ids: model presets, catalog GPUs, engine
// recipes and weight formats.
#include "validation/inference_names.hpp"

#include <cctype>
#include <charconv>

#include "reading/csv.hpp"

namespace capplan::data::detail::serving_names {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool has(const std::string& text, std::string_view needle) { return lower(text).find(needle) != std::string::npos; }

void erase_all(std::string& s, std::string_view what) {
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what)) s.erase(at, what.size());
}

// The table's model names as preset ids: lower case, an instruct / checkpoint suffix dropped,
// "LLaMA v3.1 8B" and "Llama 3.1 8B" written llama3.1-8b, "Llama 4 Scout" llama4-scout,
// "Qwen3 235B A22B" qwen3-235b-a22b, spaces as dashes. DeepSeek-R1 (-0528) is DeepSeek-V3's
// architecture (the R1 model card: "built on DeepSeek-V3-Base"): the deepseek-v3 preset.
ModelName preset_for(const std::string& model) {
  std::string s = lower(trim(model));
  if (s.rfind("deepseek-r1", 0) == 0 || s.rfind("deepseek r1", 0) == 0) {
    return {"deepseek-v3", "DeepSeek-R1 has DeepSeek-V3's architecture (its model card): the deepseek-v3 preset"};
  }
  for (const char* drop : {"-instruct", " instruct", " fp8"}) erase_all(s, drop);
  for (const char* from : {"llama v3", "llama 3"}) {
    if (s.rfind(from, 0) == 0) s = "llama3" + s.substr(std::string(from).size());
  }
  if (s.rfind("llama 4 ", 0) == 0) s = "llama4-" + s.substr(8);
  for (char& c : s) c = (c == ' ' || c == '_') ? '-' : c;
  return {s, ""};
}

// The table's GPU names as catalog ids, the Grace and PCIe variants before the plain names
// ("GH200" holds "H200", "GB200" holds "B200", "H200" holds "H20").
GpuName gpu_for(const std::string& name) {
  if (has(name, "gh200")) return {"gh200", nullptr};
  if (has(name, "gb300")) return {"gb300-nvl72", nullptr};
  if (has(name, "gb200")) return {"gb200-nvl72", nullptr};
  if (has(name, "b300")) return {"b300-hgx", nullptr};
  if (has(name, "b200")) return {"b200-hgx", nullptr};
  if (has(name, "h200")) return {"h200-sxm-141gb", nullptr};
  if (has(name, "h100") && has(name, "pcie")) return {"h100-pcie-80gb", nullptr};
  if (has(name, "h100")) {
    return {"h100-sxm-80gb", has(name, "sxm") ? nullptr : "GPU 'H100 80GB HBM3' read as the SXM part (HBM3; the PCIe card has HBM2e)"};
  }
  if (has(name, "h20")) return {"h20-96gb", nullptr};
  if (has(name, "a100") && has(name, "40gb")) return {"a100-40gb-sxm", nullptr};
  if (has(name, "a100")) return {"a100-80gb-sxm", has(name, "sxm") ? nullptr : "GPU 'A100 80GB' read as the SXM4 part"};
  if (has(name, "l40s")) return {"l40s-48gb", nullptr};
  return {};
}

// The framework column as an engine recipe id (data/engines.json). The plain "TensorRT-LLM" of
// the issue rows is read from its version: the perf-overview's workflow uses the PyTorch backend
// from v0.19 on ("Starting with v0.19, testing was performed using the PyTorch backend").
EngineName engine_for(const std::string& framework, const std::string& version) {
  if (has(framework, "vllm")) return {"vllm", ""};
  if (has(framework, "sglang")) return {"sglang", ""};
  if (has(framework, "triton")) return {"tensorrt-llm", ""};  // tensorrtllm_backend serves built engines
  if (has(framework, "pytorch backend")) return {"tensorrt-llm-pytorch", ""};
  if (has(framework, "engine built")) return {"tensorrt-llm", ""};
  if (has(framework, "tensorrt-llm")) {
    int major = 0, minor = 0;
    const std::string v = trim(version);
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), major);
    if (ec == std::errc() && p < v.data() + v.size() && *p == '.') std::from_chars(p + 1, v.data() + v.size(), minor);
    if (major > 0 || minor >= 19) {
      return {"tensorrt-llm-pytorch", "framework 'TensorRT-LLM' " + v +
                                          ": the PyTorch backend (the perf-overview workflow from v0.19 on)"};
    }
    return {"tensorrt-llm", "framework 'TensorRT-LLM' " + v + ": an engine built with trtllm-build"};
  }
  return {};
}

// The weight_precision column as a weight format (serve.hpp), nullopt when capplan has none.
std::optional<sim::WeightFormat> weights_for(const std::string& text) {
  const std::string s = lower(text);
  // OCP microscaling (MXFP4 / MXFP8: an E8M0 scale per 32 elements) is neither NVFP4 nor FP8.
  if (has(s, "mxfp")) return std::nullopt;
  if (has(s, "fp8")) return sim::WeightFormat::fp8;
  if (has(s, "fp4")) return sim::WeightFormat::fp4;  // NVFP4 (ModelOpt)
  if (has(s, "int8")) return sim::WeightFormat::int8;
  if (has(s, "int4") || has(s, "awq")) return sim::WeightFormat::int4;  // AWQ checkpoints are 4-bit
  if (has(s, "bf16")) return sim::WeightFormat::bf16;
  if (has(s, "fp16")) return sim::WeightFormat::fp16;
  return std::nullopt;
}

}  // namespace capplan::data::detail::serving_names
