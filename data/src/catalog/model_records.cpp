// SPDX-License-Identifier: Apache-2.0
// The model records of the catalog: models.json (schema in data/README.md), each record read and
// checked on its own; the attention kind, MLA, MoE and hybrid layer pattern checked together once
// the record is in.
#include <algorithm>
#include <cstdlib>

#include "catalog/catalog_records.hpp"
#include "catalog/hybrid_model.hpp"
#include "capplan/data/fields.hpp"
#include "input/fields/read_table.hpp"

namespace capplan::data {
namespace {

using namespace records;  // the shared conversions and the reader toolkit

// --- Models -------------------------------------------------------------------------------

// A model record while it is read: the entry plus the catalog keys that are checked against
// each other once the whole record is in (attention kind vs kv_heads, mla, sliding_window).
struct ModelDraft {
  ModelEntry entry;
  std::string attention;  // "" = not given (MHA/GQA from kv_heads)
  bool has_mla = false;
  bool has_moe = false;
  std::optional<double> params_active_b_published;
};

template <int sim::ModelSpec::*member>
void set_dim(ModelDraft& m, const json& v, Reader&, const std::string&) {
  m.entry.spec.*member = integer(v);
}
template <bool sim::ModelSpec::*member>
void set_flag(ModelDraft& m, const json& v, Reader&, const std::string&) {
  m.entry.spec.*member = v.get<bool>();
}

std::vector<std::string> attention_kinds() { return {"mha", "gqa", "mqa", "mla", "sliding_window"}; }

constexpr detail::Field<ModelDraft> kModelFields[] = {
    {"id", Kind::string, Need::required, false, {}, "kebab-case id",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       check_id(v, r, p);
       m.entry.id = str(v);
     }},
    {"name", Kind::string, Need::required, false, {}, "display name",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.spec.name = str(v); }},
    {"layers", Kind::integer, Need::required, false, {1, 1e4, false}, "transformer layers",
     set_dim<&sim::ModelSpec::layers>},
    {"hidden", Kind::integer, Need::required, false, {1, 1e6, false}, "hidden size", set_dim<&sim::ModelSpec::hidden>},
    {"heads", Kind::integer, Need::required, false, {1, 1e5, false}, "attention heads",
     set_dim<&sim::ModelSpec::heads>},
    {"kv_heads", Kind::integer, Need::required, false, {1, 1e5, false}, "key/value heads (GQA; = heads for MLA)",
     set_dim<&sim::ModelSpec::kv_heads>},
    {"ffn_hidden", Kind::integer, Need::required, false, {1, 1e7, false},
     "FFN inner size (of the dense layers; = expert_ffn_hidden for all-MoE models)",
     set_dim<&sim::ModelSpec::ffn_hidden>},
    {"vocab", Kind::integer, Need::required, false, {1, 1e8, false}, "vocabulary size",
     set_dim<&sim::ModelSpec::vocab>},
    {"seq_len", Kind::integer, Need::required, false, {1, 1e8, false}, "training sequence length",
     set_dim<&sim::ModelSpec::seq_len>},
    {"gated_ffn", Kind::boolean, Need::required, false, {}, "SwiGLU-style gated FFN",
     set_flag<&sim::ModelSpec::gated_ffn>},
    {"tied_embeddings", Kind::boolean, Need::required, false, {}, "output layer shares the embedding",
     set_flag<&sim::ModelSpec::tied_embeddings>},
    {"dropout", Kind::boolean, Need::required, false, {}, "dropout during pre-training",
     set_flag<&sim::ModelSpec::dropout>},
    {"rmsnorm", Kind::boolean, Need::optional, false, {}, "RMSNorm (true) or LayerNorm (false, default)",
     set_flag<&sim::ModelSpec::rmsnorm>},
    {"rope", Kind::boolean, Need::optional, false, {}, "rotary position embedding in every layer (default false)",
     set_flag<&sim::ModelSpec::rope>},
    {"attention", Kind::string, Need::optional, false, {},
     "mha, gqa, mqa, mla or sliding_window (default: mha/gqa from kv_heads)",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       const std::string a = str(v);
       const auto kinds = attention_kinds();
       if (std::find(kinds.begin(), kinds.end(), a) == kinds.end()) {
         r.error(p, "unknown attention '" + a + "' (" + suggest(a, kinds) + ")");
         return;
       }
       m.attention = a;
     }},
    {"mla", Kind::object, Need::optional, false, {}, "multi-head latent attention dimensions (with attention \"mla\")",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       m.has_mla = true;
       fields_detail::read_object(v, p, mla_fields(), m.entry.spec.mla, r, false, /*catalog=*/true);
     }},
    {"head_dim", Kind::integer, Need::optional, false, {1, 1e5, false},
     "per-head dimension when it is not hidden/heads (Qwen3, gpt-oss)", set_dim<&sim::ModelSpec::attention_head_dim>},
    {"sliding_window_every", Kind::integer, Need::optional, false, {1, 1e4, false},
     "one layer in this many uses the sliding window (default 1: all)", set_dim<&sim::ModelSpec::sliding_window_every>},
    {"sliding_window", Kind::integer, Need::optional, false, {1, 1e8, false},
     "tokens each query attends to (sliding-window attention)", set_dim<&sim::ModelSpec::sliding_window>},
    {"moe", Kind::object, Need::optional, false, {}, "mixture of experts: experts, top_k, expert_ffn_hidden, ...",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       m.has_moe = true;
       // Routed experts as the model was trained; the routing's imbalance, padding and dispatch
       // are the run's (run_only rows), not catalog keys.
       fields_detail::read_object(v, p, moe_fields(), m.entry.spec.moe, r, false, /*catalog=*/true);
     }},
    {"layer_pattern", Kind::string, Need::optional, false, {},
     "hybrid model: one symbol per layer, M (Mamba-2), * (attention), - (MLP), E (MoE) (Megatron-Core's "
     "hybrid_override_pattern)",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.spec.layer_pattern = str(v); }},
    {"mamba", Kind::object, Need::optional, false, {}, "Mamba-2 mixer: heads, head_dim, state, groups, conv_kernel, chunk",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       // read_hybrid reads the `mamba` key of the model object: hand it the one key.
       detail::read_hybrid(json{{"mamba", v}, {"layers", m.entry.spec.layers}}, p.substr(0, p.rfind('/')),
                           m.entry.spec, r);
     }},
    {"params_B_published", Kind::number, Need::required, true, {0, 1e6, true},
     "parameter count as published, billions",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.params_b_published = num(v); }},
    {"params_active_B_published", Kind::number, Need::optional, false, {0, 1e6, true},
     "parameters active per token as published (MoE), billions",
     detail::store<&ModelDraft::params_active_b_published>},
    {"source", Kind::string_list, Need::required, false, {}, "where the dimensions come from",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.sources = strings(v); }},
    {"notes", Kind::string, Need::optional, false, {}, "caveats",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.notes = str(v); }},
};

// Checks across the keys of one record; fills ModelSpec::attention from the attention kind.
ModelEntry finish_model(ModelDraft d, Reader& r, const std::string& p) {
  auto& s = d.entry.spec;
  using detail::child;
  const std::string heads = std::to_string(s.heads), kv = std::to_string(s.kv_heads);
  if (s.hidden > 0 && s.heads > 0 && s.hidden % s.heads != 0) {
    r.error(child(p, "heads"), "must divide hidden (" + std::to_string(s.hidden) + "); got " + heads);
  }
  if (s.heads > 0 && s.kv_heads > 0 && s.heads % s.kv_heads != 0) {
    r.error(child(p, "kv_heads"), "must divide heads (" + heads + "); got " + kv);
  }
  const std::string& a = d.attention;
  const std::string ap = child(p, "attention");
  if (a == "mha" && s.kv_heads != s.heads) {
    r.error(ap, "'mha' needs kv_heads == heads; got kv_heads " + kv + ", heads " + heads);
  } else if (a == "gqa" && s.kv_heads >= s.heads) {
    r.error(ap, "'gqa' needs kv_heads < heads; got kv_heads " + kv + ", heads " + heads);
  } else if (a == "mqa" && s.kv_heads != 1) {
    r.error(ap, "'mqa' needs kv_heads == 1; got kv_heads " + kv);
  } else if (a == "mla") {
    s.attention = sim::Attention::mla;
    if (!d.has_mla) r.error(child(p, "mla"), "required with attention \"mla\" (the latent dimensions) is missing");
    if (s.kv_heads != s.heads) {
      r.error(child(p, "kv_heads"), "must equal heads (" + heads + ") with attention \"mla\" (MLA has no separate "
                                    "key/value heads); got " + kv);
    }
    if (s.sliding_window > 0) r.error(child(p, "sliding_window"), "is not supported with attention \"mla\"");
  } else if (a == "sliding_window" && s.sliding_window == 0) {
    r.error(child(p, "sliding_window"), "required with attention \"sliding_window\" (window in tokens) is missing");
  }
  if (d.has_mla && a != "mla") {
    r.error(child(p, "mla"), "is only used with attention \"mla\"; got attention " +
                                 (a.empty() ? std::string("not given") : "\"" + a + "\""));
  }
  if (s.sliding_window > 0 && s.seq_len > 0 && s.sliding_window > s.seq_len) {
    r.error(child(p, "sliding_window"), "must be at most seq_len (" + std::to_string(s.seq_len) + "); got " +
                                            std::to_string(s.sliding_window));
  }
  if (d.has_moe && s.is_moe()) {
    const std::string mp = child(p, "moe");
    if (s.moe.top_k > s.moe.experts) {
      r.error(child(mp, "top_k"), "must be at most experts (" + std::to_string(s.moe.experts) + "); got " +
                                      std::to_string(s.moe.top_k));
    }
    if (s.layers > 0 && s.moe.dense_layers >= s.layers) {
      r.error(child(mp, "dense_layers"), "must be less than layers (" + std::to_string(s.layers) + "); got " +
                                             std::to_string(s.moe.dense_layers));
    }
  }
  detail::check_hybrid(s, p, r);
  if (d.params_active_b_published && *d.params_active_b_published > d.entry.params_b_published &&
      d.entry.params_b_published > 0) {
    r.error(child(p, "params_active_B_published"),
            "must not exceed params_B_published (" + detail::fmt(d.entry.params_b_published) + "); got " +
                detail::fmt(*d.params_active_b_published));
  }
  return std::move(d.entry);
}

}  // namespace

ModelEntry records::read_model(const json& j, const std::string& p, Reader& r) {
  ModelDraft d;
  detail::read_fields<ModelDraft>(j, p, kModelFields, d, r);
  return finish_model(std::move(d), r, p);
}

}  // namespace capplan::data
