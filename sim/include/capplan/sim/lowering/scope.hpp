// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <array>
#include <cstddef>

#include "capplan/sim/workload/model.hpp"
#include "capplan/sim/lowering/ops.hpp"
#include "capplan/sim/lowering/stage_layout.hpp"

namespace capplan::sim {

// The scopes of an op list (Scope) as data: one row each in kScopeTraits, and per-scope sums as
// arrays indexed by Scope. The folds (time, memory, FLOPs, a serving pass) loop over the table,
// so a new layer kind is one enumerator, one row and its lowering.

constexpr std::size_t scope_index(Scope s) { return static_cast<std::size_t>(s); }

// One value per scope, indexed by Scope.
template <class T>
struct PerScope {
  std::array<T, kScopeCount> values{};
  T& operator[](Scope s) { return values[scope_index(s)]; }
  const T& operator[](Scope s) const { return values[scope_index(s)]; }
};

// How often a scope's ops run on one GPU of a pipeline stage.
enum class Repeat {
  per_layer,       // once per micro-batch for each of the stage's layers of its kind
  first_stage,     // once per micro-batch on the first stage
  last_stage,      // once per micro-batch on the last stage
  stage_boundary,  // once per micro-batch per stage boundary and virtual chunk
  per_step,        // once per step
};

struct ScopeTraits {
  Scope scope = Scope::layer;
  const char* name = "";
  Repeat repeat = Repeat::per_step;
  // Repeat::per_layer only: the model's layers of this kind, and those a stage holds; null
  // otherwise.
  int (*model_layers)(const ModelSpec&) = nullptr;
  int (*stage_layers)(const StageLayers&) = nullptr;
  // Part of a (non-hybrid) transformer layer: the attention block (Scope::layer) and its FFN of
  // either kind run as one layer, whose ZeRO-3 gathers overlap the layer's compute and which is
  // recomputed as a whole. A hybrid's layers, and any other per-layer scope, stand alone.
  bool transformer_layer = false;

  bool per_layer() const { return repeat == Repeat::per_layer; }
  // Times the scope's ops run per micro-batch on one GPU of a stage (stage boundaries and
  // once-per-step scopes: 0, their time is not a stage's).
  int on_stage(const StageLayers& sl) const {
    switch (repeat) {
      case Repeat::per_layer: return stage_layers(sl);
      case Repeat::first_stage: return sl.first ? 1 : 0;
      case Repeat::last_stage: return sl.last ? 1 : 0;
      case Repeat::stage_boundary:
      case Repeat::per_step: return 0;
    }
    return 0;
  }
  // Times the scope's ops run per micro-batch over the whole model (every stage once).
  int in_model(const ModelSpec& m) const {
    switch (repeat) {
      case Repeat::per_layer: return model_layers(m);
      case Repeat::first_stage:
      case Repeat::last_stage: return 1;
      case Repeat::stage_boundary:
      case Repeat::per_step: return 0;
    }
    return 0;
  }
};

// One row per Scope, in enumerator order. In a hybrid model (ModelSpec::layer_pattern) layer,
// dense_ffn, moe_ffn and mamba are its `*`, `-`, `E` and `M` layers.
inline constexpr std::array<ScopeTraits, kScopeCount> kScopeTraits = {{
    {Scope::layer, "layer", Repeat::per_layer, [](const ModelSpec& m) { return m.attention_layer_count(); },
     [](const StageLayers& sl) { return sl.layers; }, true},
    {Scope::dense_ffn, "dense_ffn", Repeat::per_layer, [](const ModelSpec& m) { return m.dense_ffn_layer_count(); },
     [](const StageLayers& sl) { return sl.dense(); }, true},
    {Scope::moe_ffn, "moe_ffn", Repeat::per_layer, [](const ModelSpec& m) { return m.moe_layer_count(); },
     [](const StageLayers& sl) { return sl.moe; }, true},
    {Scope::embedding, "embedding", Repeat::first_stage},
    {Scope::output, "output", Repeat::last_stage},
    {Scope::pipeline, "pipeline", Repeat::stage_boundary},
    {Scope::data_parallel, "data_parallel", Repeat::per_step},
    {Scope::optimizer, "optimizer", Repeat::per_step},
    {Scope::mamba, "mamba", Repeat::per_layer, [](const ModelSpec& m) { return m.mamba_layer_count(); },
     [](const StageLayers& sl) { return sl.mamba; }},
}};

// Every row sits at its enumerator's index and has a name: a Scope added without its row (or a
// row out of order) fails here. (That a per-layer row says how to count its layers is checked by
// tests/sim/scope_test.cpp: comparing a function's address with null is not a constant
// expression under the sanitizers.)
constexpr bool scope_table_complete() {
  for (std::size_t i = 0; i < kScopeCount; ++i) {
    const ScopeTraits& t = kScopeTraits[i];
    if (scope_index(t.scope) != i || t.name == nullptr || t.name[0] == '\0') return false;
  }
  return true;
}
static_assert(scope_table_complete(), "kScopeTraits needs one row per Scope, in enumerator order");

constexpr const ScopeTraits& traits(Scope s) { return kScopeTraits[scope_index(s)]; }
inline const char* to_string(Scope s) { return traits(s).name; }

// Calls f(traits) for each scope repeated as `r`, in enumerator order.
template <class F>
void for_each_scope(Repeat r, F&& f) {
  for (const ScopeTraits& t : kScopeTraits) {
    if (t.repeat == r) f(t);
  }
}

}  // namespace capplan::sim
