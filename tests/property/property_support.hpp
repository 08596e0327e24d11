// SPDX-License-Identifier: Apache-2.0
// The property suite's generator and runner. Every case draws its scenario from its own random
// stream, seeded from (suite seed, property name, case index), so that a failure names the three
// and one case re-runs alone:
//   CAPPLAN_PROPERTY_SEED  the suite seed (default kDefaultSeed; decimal)
//   CAPPLAN_PROPERTY_CASES the number of cases of every property (default: each property's own)
//   CAPPLAN_PROPERTY_CASE  run only this case index of each property
// Scenarios are JSON documents over the shipped catalogs (models, GPUs), read by
// data::parse_scenario like a user's file, with layouts drawn at random and kept only where
// sim::check_layout accepts them; a failure prints the document, which `capplan estimate` reads.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "capplan/data/catalog.hpp"
#include "capplan/data/cost_model.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/workload/strategy.hpp"

namespace capplan::property {

using nlohmann::json;

inline constexpr std::uint64_t kDefaultSeed = 20261207;

inline std::optional<std::uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0') return std::nullopt;
  return n;
}

inline std::uint64_t suite_seed() { return env_number("CAPPLAN_PROPERTY_SEED").value_or(kDefaultSeed); }
inline int case_count(int fallback) {
  const auto n = env_number("CAPPLAN_PROPERTY_CASES");
  return n ? static_cast<int>(std::min<std::uint64_t>(*n, 100000)) : fallback;
}
inline std::optional<int> only_case() {
  const auto n = env_number("CAPPLAN_PROPERTY_CASE");
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

inline const data::Catalogs& catalogs() {
  static const data::Catalogs c = [] {
    auto r = data::load_catalogs(std::filesystem::path(CAPPLAN_SOURCE_DIR) / "data");
    if (!r) {
      ADD_FAILURE() << "data/ catalogs do not load:\n" << to_string(r.error());
      return data::Catalogs{};
    }
    return *r;
  }();
  return c;
}

// One case's random stream and the draws the generators make from it.
struct Draw {
  std::mt19937_64 rng;

  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  }
  int pick(std::initializer_list<int> v) { return pick(std::vector<int>(v)); }
  double pick(std::initializer_list<double> v) { return pick(std::vector<double>(v)); }
  std::string pick(std::initializer_list<const char*> v) {
    std::vector<std::string> s(v.begin(), v.end());
    return pick(s);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
};

inline std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

inline Draw case_draw(std::uint64_t seed, std::string_view property, int index) {
  const std::uint64_t p = fnv1a(property);
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(p >> 32),
                    static_cast<std::uint32_t>(index)};
  return Draw{std::mt19937_64(seq)};
}

// The line every failure of a case carries: how to run that case alone.
inline std::string reproduce(std::uint64_t seed, std::string_view property, int index) {
  return "property " + std::string(property) + ", seed " + std::to_string(seed) + ", case " +
         std::to_string(index) + " (re-run: CAPPLAN_PROPERTY_SEED=" + std::to_string(seed) +
         " CAPPLAN_PROPERTY_CASE=" + std::to_string(index) + ")";
}

// Runs `body(draw, index)` for each case of `property`, under a trace naming the case.
template <class Body>
void for_each_case(std::string_view property, int default_cases, Body&& body) {
  const std::uint64_t seed = suite_seed();
  const auto only = only_case();
  const int n = only ? *only + 1 : case_count(default_cases);  // one case runs whatever the count
  for (int i = only.value_or(0); i < n; ++i) {
    if (only && *only != i) continue;
    SCOPED_TRACE(reproduce(seed, property, i));
    Draw d = case_draw(seed, property, i);
    body(d, i);
    if (testing::Test::HasFatalFailure()) return;
  }
}

// A parsed scenario and its estimate.
struct Run {
  json doc;
  data::ParsedScenario parsed;
  sim::Estimate estimate;
};

inline std::optional<data::ParsedScenario> parse(const json& doc) {
  auto p = data::parse_scenario(doc, catalogs());
  if (!p) return std::nullopt;
  return std::move(*p);
}

// The estimate of `doc`, or nothing when capplan refuses it.
inline std::optional<Run> run(const json& doc) {
  auto p = parse(doc);
  if (!p) return std::nullopt;
  auto e = data::estimate_with_profile(p->scenario, nullptr);
  if (!e) return std::nullopt;
  return Run{doc, std::move(*p), std::move(*e)};
}

// ---- Scenario generators --------------------------------------------------------------------------

enum class Workload { dense, moe, hybrid, full, lora, qlora };
inline const char* name(Workload w) {
  switch (w) {
    case Workload::dense: return "dense";
    case Workload::moe: return "moe";
    case Workload::hybrid: return "hybrid";
    case Workload::full: return "full";
    case Workload::lora: return "lora";
    case Workload::qlora: return "qlora";
  }
  return "?";
}
inline bool finetune(Workload w) { return w == Workload::full || w == Workload::lora || w == Workload::qlora; }
inline const std::vector<Workload>& all_workloads() {
  static const std::vector<Workload> w = {Workload::dense, Workload::moe,  Workload::hybrid,
                                          Workload::full,  Workload::lora, Workload::qlora};
  return w;
}

// Catalog models per workload: dense and MoE models of several sizes and attention kinds (GQA,
// MHA, MLA), hybrid Mamba models, and the sizes fine-tuning recipes run.
inline const std::vector<std::string>& models_of(Workload w) {
  static const std::vector<std::string> dense = {"llama3-8b",   "llama2-7b", "qwen2.5-14b", "mistral-7b",
                                                 "llama3-70b",  "qwen3-8b",  "gemma2-9b",   "llama2-13b",
                                                 "qwen2.5-1.5b", "gpt-neox-20b"};
  static const std::vector<std::string> moe = {"mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2", "gpt-oss-120b"};
  static const std::vector<std::string> hybrid = {"nemotron-h-8b", "nemotron-h-47b", "nemotron-3-nano-30b-a3b"};
  static const std::vector<std::string> tune = {"qwen2.5-7b", "llama3.1-8b", "qwen3-4b", "llama3.2-3b",
                                                "qwen2.5-14b", "mistral-7b"};
  switch (w) {
    case Workload::dense: return dense;
    case Workload::moe: return moe;
    case Workload::hybrid: return hybrid;
    default: return tune;
  }
}

inline const std::vector<std::string>& training_gpus() {
  static const std::vector<std::string> g = {"h100-sxm-80gb", "a100-80gb-sxm", "h200-sxm-141gb", "h800-sxm-80gb",
                                             "b200-hgx",      "mi300x-192gb",  "a100-40gb-sxm",  "l40s-48gb"};
  return g;
}

// A training or fine-tuning document of workload `w` with the layout still "auto" (set_layout
// draws it); `nodes` of 8 GPUs, or fewer GPUs on one node.
inline json training_doc(Draw& d, Workload w) {
  json s;
  const std::string gpu = d.pick(training_gpus());
  int gpus = 8 * d.pick({1, 1, 2, 4});
  if (finetune(w) && d.chance(0.4)) gpus = d.pick({1, 2, 4});
  s["model"] = {{"preset", d.pick(models_of(w))}};
  s["cluster"] = {{"gpu", gpu}, {"gpus", gpus}, {"gpus_per_node", 8}};
  if (gpus > 8) s["cluster"]["inter_node_gbps_per_gpu"] = d.pick({100.0, 200.0, 400.0});
  s["pricing"] = {{"usd_per_gpu_hour", d.pick({0.85, 2.49, 6.88, 11.0})}};
  if (finetune(w)) {
    json wl = {{"kind", "finetune"}, {"method", name(w)}};
    if (w != Workload::full) {
      wl["lora"] = {{"rank", d.pick({8, 16, 64})},
                    {"targets", d.chance(0.5) ? json{"q", "k", "v", "o", "gate", "up", "down"} : json{"q", "v"}}};
    }
    const double mean = d.pick({300.0, 900.0, 1500.0});
    wl["dataset"] = {{"tokens", d.pick({2e8, 1e9, 5e9})},
                     {"epochs", d.pick({1, 2, 3})},
                     {"mean_sample_tokens", mean},
                     {"p95_sample_tokens", std::min(4096.0, mean * d.pick({2.0, 3.5}))},
                     {"packing", d.chance(0.5)}};
    s["workload"] = wl;
    s["model"]["seq_len"] = 4096;
    s["training"] = {{"precision", "bf16"}};
  } else {
    s["training"] = {{"tokens", d.pick({1e10, 1e11, 1e12})}, {"precision", "bf16"}};
  }
  return s;
}

// A random layout for `s` (tp x pp x dp = its GPUs), not yet checked; the global batch it asks
// for in `global_batch`: dp x micro_batch x accumulation steps.
inline sim::Parallelism draw_layout(Draw& d, const sim::Scenario& s, std::int64_t& global_batch) {
  sim::Parallelism p;
  const int gpus = s.cluster.gpus;
  std::vector<int> tps;
  for (int t : {1, 2, 4, 8}) {
    if (t <= std::min(gpus, s.cluster.gpus_per_node) && gpus % t == 0) tps.push_back(t);
  }
  p.tp = d.pick(tps);
  std::vector<int> pps;
  for (int q : {1, 2, 4}) {
    if ((gpus / p.tp) % q == 0) pps.push_back(q);
  }
  p.pp = d.pick(pps);
  p.dp = gpus / (p.tp * p.pp);
  p.cp = 1;
  p.micro_batch = d.pick({1, 2, 4});
  p.virtual_stages = p.pp > 1 ? d.pick({1, 2}) : 1;
  p.zero = p.pp > 1 ? d.pick({0, 1}) : d.pick({0, 1, 2, 3});
  p.recompute = d.pick(std::vector<sim::Recompute>{sim::Recompute::none, sim::Recompute::selective, sim::Recompute::full});
  p.sequence_parallel = p.tp > 1;
  if (s.model.is_moe()) {
    std::vector<int> eps;
    for (int e : {1, 2, 4, 8}) {
      if (s.model.moe.experts % e == 0 && (p.tp * p.dp) % e == 0) eps.push_back(e);
    }
    p.ep = d.pick(eps);
    p.etp = 1;
  }
  const int accumulation = p.pp * d.pick({1, 2, 4});
  global_batch = static_cast<std::int64_t>(p.dp) * p.micro_batch * accumulation;
  return p;
}

inline void set_layout(json& doc, const sim::Parallelism& p, std::int64_t global_batch) {
  doc["strategy"] = data::strategy_to_json(p);
  doc["training"]["global_batch"] = global_batch;
  doc["training"].erase("global_batch_tokens");
}

// A valid case of workload `w`: a document with a drawn layout that the model accepts, and its
// estimate; nothing when no draw passes (counted by the callers).
inline std::optional<Run> draw_case(Draw& d, Workload w) {
  for (int attempt = 0; attempt < 6; ++attempt) {
    json doc = training_doc(d, w);
    doc["strategy"] = "auto";
    doc["training"]["global_batch"] = 64;
    auto base = parse(doc);
    if (!base) continue;
    for (int tries = 0; tries < 12; ++tries) {
      std::int64_t gb = 0;
      const sim::Parallelism p = draw_layout(d, base->scenario, gb);
      json fixed = doc;
      set_layout(fixed, p, gb);
      auto parsed = parse(fixed);
      if (!parsed) continue;
      if (!sim::check_layout(parsed->scenario, p).empty()) continue;
      auto e = data::estimate_with_profile(parsed->scenario, nullptr);
      if (!e) continue;
      return Run{std::move(fixed), std::move(*parsed), std::move(*e)};
    }
  }
  return std::nullopt;
}

// A compact description of an estimate's headline figures, for failure messages.
inline std::string figures(const sim::Estimate& e) {
  json j = {{"step_s", e.step.time.base()},
            {"time_to_train_s", e.totals.time_to_train.base()},
            {"memory_bytes", e.memory.total().base()},
            {"cost_usd", e.totals.cost ? json(e.totals.cost->base()) : json(nullptr)},
            {"total_cost_usd", e.goodput.cost.total ? json(e.goodput.cost.total->base()) : json(nullptr)}};
  return j.dump();
}

}  // namespace capplan::property
