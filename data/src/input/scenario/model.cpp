// SPDX-License-Identifier: Apache-2.0
// The model section: a preset and/or dimensions, MoE, attention (MLA, sliding window), hybrid
// layers; and a model written back as JSON.
#include "input/scenario/parser.hpp"

#include <algorithm>

#include "capplan/data/fields.hpp"
#include "catalog/hybrid_model.hpp"
#include "input/fields/read_table.hpp"

namespace capplan::data::scenario_detail {

constexpr const char* kAttentionKinds[] = {"mha", "gqa", "mqa", "mla", "sliding_window"};

std::optional<sim::ModelSpec> ScenarioParser::parse_model(const json& j) {
  const std::string p = "/model";
  if (!r_.object(j, p)) return std::nullopt;
  const auto before = r_.count();
  std::vector<std::string> known{"preset", "name", "moe", "attention", "mla", "sliding_window",
                                 "sliding_window_every"};
  for (const auto& f : model_fields()) {
    if (std::string_view(f.spec.pointer) != "name") known.emplace_back(f.spec.pointer);
  }
  known.emplace_back("mamba");
  r_.unknown_keys(j, p, known);

  sim::ModelSpec m;
  const ModelEntry* preset = nullptr;
  if (const json* v = find(j, "preset")) {
    if (auto id = r_.string(*v, child(p, "preset"))) {
      preset = cat_.find_model(*id);
      if (preset == nullptr) {
        std::vector<std::string> ids;
        for (const auto& e : cat_.models) ids.push_back(e.id);
        r_.error(child(p, "preset"), "unknown model preset '" + *id + "' (" + suggest(*id, ids) + ")");
      } else {
        m = preset->spec;
        out_.model_id = preset->id;
      }
    }
  }
  if (preset == nullptr) out_.model_id = "custom";
  const bool mha_preset = preset != nullptr && preset->spec.kv_heads == preset->spec.heads;

  // The dimensions and switches (input/fields/model_fields.cpp); the name below.
  for (const auto& f : model_fields()) {
    const char* key = f.spec.pointer;
    const json* v = find(j, key);
    if (f.spec.kind == FieldKind::boolean) {
      if (v != nullptr && r_.boolean(*v, child(p, key))) f.set(m, *v);
      continue;
    }
    if (f.spec.kind != FieldKind::integer) continue;
    if (v == nullptr) {
      // kv_heads defaults to heads; an all-MoE model needs no dense ffn_hidden (see parse_moe).
      const bool defaulted = std::string_view(key) == "kv_heads" || std::string_view(key) == "head_dim" ||
                             (std::string_view(key) == "ffn_hidden" && find(j, "moe") != nullptr);
      if (preset == nullptr && !defaulted && find(j, "preset") == nullptr) {
        r_.error(child(p, key), std::string("required (") + f.spec.help + ") is missing; or give a preset");
      }
      continue;
    }
    if (r_.integer(*v, child(p, key), f.spec.min, f.spec.max)) f.set(m, *v);
  }
  if (find(j, "kv_heads") == nullptr && (preset == nullptr || mha_preset)) m.kv_heads = m.heads;
  if (const json* v = find(j, "name")) {
    if (auto s = r_.string(*v, child(p, "name"))) m.name = *s;
  } else if (preset == nullptr) {
    m.name = "custom";
  }

  if (const json* v = find(j, "moe")) {
    // With a preset (even an unknown one, already reported) ffn_hidden is never asked for.
    parse_moe(*v, preset, m, find(j, "ffn_hidden") != nullptr || find(j, "preset") != nullptr);
  }
  parse_attention(j, preset, m);
  detail::read_hybrid(j, p, m, r_);
  detail::check_hybrid(m, p, r_);

  if (m.hidden > 0 && m.heads > 0 && m.hidden % m.heads != 0) {
    r_.error(child(p, "heads"),
             "must divide hidden (" + std::to_string(m.hidden) + "); got " + std::to_string(m.heads));
  }
  if (m.heads > 0 && m.kv_heads > 0 && (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)) {
    r_.error(child(p, "kv_heads"), "must divide heads (" + std::to_string(m.heads) + "); got " +
                                       std::to_string(m.kv_heads));
  }
  if (r_.count() != before) return std::nullopt;
  return m;
}

// `moe`: merged over the preset's experts when the preset is an MoE model (so a scenario may
// change only capacity_factor); otherwise experts, top_k and expert_ffn_hidden are required.
void ScenarioParser::parse_moe(const json& j, const ModelEntry* preset, sim::ModelSpec& m, bool ffn_given) {
  const std::string p = "/model/moe";
  // An MoE preset's experts are merged under what the scenario gives: none is required then.
  const bool moe_preset = preset != nullptr && preset->spec.is_moe();
  sim::MoeSpec moe = moe_preset ? preset->spec.moe : sim::MoeSpec{};
  if (!fields_detail::read_object(j, p, moe_fields(), moe, r_, moe_preset)) return;
  if (moe.top_k > moe.experts) {
    r_.error(child(p, "top_k"), "must be at most experts (" + std::to_string(moe.experts) + "); got " +
                                    std::to_string(moe.top_k));
  }
  if (m.layers > 0 && moe.dense_layers >= m.layers) {
    r_.error(child(p, "dense_layers"), "must be less than layers (" + std::to_string(m.layers) + "); got " +
                                           std::to_string(moe.dense_layers));
  }
  m.moe = moe;
  // Every layer MoE: the dense FFN size is never used; a custom model may leave it out.
  const bool all_moe = moe.dense_layers == 0 && moe.every_n_layers == 1;
  if (!ffn_given && preset == nullptr) {
    if (all_moe) {
      m.ffn_hidden = moe.expert_ffn_hidden;
    } else {
      r_.error("/model/ffn_hidden",
               "required (FFN inner size of the dense layers: dense_layers or every_n_layers > 1) is missing");
    }
  }
}

// `attention` names the kind: "mha"/"gqa"/"mqa" (through kv_heads), "mla" (with an `mla`
// object of latent dimensions) or "sliding_window" (with `sliding_window` tokens). Without it a
// preset keeps its own attention and window. A named kind replaces the preset's: "gqa" without
// `sliding_window` is full causal attention even when the preset had a window.
void ScenarioParser::parse_attention(const json& j, const ModelEntry* preset, sim::ModelSpec& m) {
  const std::string p = "/model";
  const std::string ap = child(p, "attention");
  std::optional<std::string> kind;
  if (const json* v = find(j, "attention")) {
    if (auto a = r_.string(*v, ap)) {
      if (std::find(std::begin(kAttentionKinds), std::end(kAttentionKinds), *a) == std::end(kAttentionKinds)) {
        std::vector<std::string> names(std::begin(kAttentionKinds), std::end(kAttentionKinds));
        r_.error(ap, "unknown attention '" + *a + "' (" + suggest(*a, names) + ")");
        return;
      }
      kind = *a;
    } else {
      return;
    }
  }
  const bool mla_preset = preset != nullptr && preset->spec.attention == sim::Attention::mla;
  const bool mla = kind ? *kind == "mla" : mla_preset;
  const std::string heads = std::to_string(m.heads);
  const std::string kv = std::to_string(m.kv_heads);
  const bool kv_given = find(j, "kv_heads") != nullptr;

  // Multi-head latent attention.
  const json* mla_j = find(j, "mla");
  if (mla_j != nullptr && !mla) {
    r_.error(child(p, "mla"), "is only used with attention \"mla\"; got attention " +
                                  (kind ? "\"" + *kind + "\"" : std::string("not given")));
  }
  if (mla) {
    m.attention = sim::Attention::mla;
    sim::MlaSpec dims = mla_preset ? preset->spec.mla : sim::MlaSpec{};
    if (mla_j != nullptr) {
      fields_detail::read_object(*mla_j, child(p, "mla"), mla_fields(), dims, r_, mla_preset);
    } else if (!mla_preset) {
      r_.error(child(p, "mla"), "required with attention \"mla\" (q_lora_rank, kv_lora_rank, qk_nope_head_dim, "
                                "qk_rope_head_dim, v_head_dim) is missing");
    }
    m.mla = dims;
    // MLA has no separate key/value heads: kv_heads is not used and is kept equal to heads.
    if (kv_given && m.kv_heads != m.heads) {
      warn(child(p, "kv_heads"), "not used with attention \"mla\" (keys and values come from the latent); "
                                 "kv_heads = heads = " + heads);
    }
    m.kv_heads = m.heads;
  } else {
    m.attention = sim::Attention::standard;
    m.mla = sim::MlaSpec{};
    if (kind == "mha" && m.kv_heads != m.heads) {
      r_.error(ap, "'mha' needs kv_heads == heads; got kv_heads " + kv + ", heads " + heads +
                       " (use 'gqa' or leave attention out)");
    } else if (kind == "gqa" && m.kv_heads >= m.heads) {
      r_.error(ap, "'gqa' needs kv_heads < heads; got kv_heads " + kv + ", heads " + heads);
    } else if (kind == "mqa") {
      if (!kv_given) {
        m.kv_heads = 1;  // "mqa" alone means one key/value head
      } else if (m.kv_heads != 1) {
        r_.error(ap, "'mqa' needs kv_heads == 1; got kv_heads " + kv);
      }
    }
  }

  // Sliding window.
  const std::string wp = child(p, "sliding_window");
  const json* w = find(j, "sliding_window");
  int window = 0;
  bool window_given = false;
  if (w != nullptr) {
    auto x = r_.integer(*w, wp, 1, 1e8);
    if (!x) return;
    window = static_cast<int>(*x);
    window_given = true;
  } else if (!kind && preset != nullptr) {
    window = preset->spec.sliding_window;  // inherited with the preset's attention
  }
  if (kind == "sliding_window" && window == 0) {
    r_.error(wp, "required with attention \"sliding_window\" (tokens each query attends to) is missing");
  }
  if (window > 0 && mla) {
    r_.error(wp, "is not supported with attention \"mla\"; got " + std::to_string(window));
    return;
  }
  if (window > 0 && m.seq_len > 0 && window > m.seq_len) {
    if (window_given) {
      r_.error(wp, "must be at most seq_len (" + std::to_string(m.seq_len) + "); got " + std::to_string(window));
      return;
    }
    warn(wp, "the preset's window (" + std::to_string(window) + " tokens) covers the whole sequence (seq_len " +
                 std::to_string(m.seq_len) + "): full causal attention");
    window = 0;
  }
  m.sliding_window = window;
  if (const json* e = find(j, "sliding_window_every")) {
    // One layer in N uses the window (gpt-oss alternates windowed and full layers: 2).
    if (auto x = r_.integer(*e, child(p, "sliding_window_every"), 1, 1e4)) {
      if (window == 0) {
        r_.error(child(p, "sliding_window_every"), "needs a sliding_window; got " + std::to_string(*x));
      } else {
        m.sliding_window_every = static_cast<int>(*x);
      }
    }
  } else if (window_given || kind) {
    m.sliding_window_every = 1;  // a window given here applies to every layer unless said otherwise
  }
}

}  // namespace capplan::data::scenario_detail

namespace capplan::data {

using nlohmann::json;

nlohmann::json model_to_json(const sim::ModelSpec& m) {
  json model = json::object();
  for (const auto& f : model_fields()) {
    if (f.get == nullptr) continue;
    json v = f.get(m);  // head_dim: 0 = hidden/heads, left out
    if (!v.is_null()) model[f.spec.pointer] = std::move(v);
  }
  if (m.is_moe()) model["moe"] = fields_detail::write_object(moe_fields(), m.moe);
  detail::hybrid_to_json(m, model);
  if (m.attention == sim::Attention::mla) {
    model["attention"] = "mla";
    model["mla"] = fields_detail::write_object(mla_fields(), m.mla);
  } else if (m.sliding_window > 0) {
    model["sliding_window"] = m.sliding_window;
    if (m.sliding_window_every != 1) model["sliding_window_every"] = m.sliding_window_every;
  }
  return model;
}

}  // namespace capplan::data
