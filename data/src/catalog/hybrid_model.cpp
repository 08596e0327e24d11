// SPDX-License-Identifier: Apache-2.0
#include "catalog/hybrid_model.hpp"

#include <algorithm>

#include "capplan/data/fields.hpp"
#include "input/fields/read_table.hpp"

namespace capplan::data::detail {

void read_hybrid(const nlohmann::json& j, const std::string& p, sim::ModelSpec& m, Reader& r) {
  if (!j.is_object()) return;
  if (auto it = j.find("layer_pattern"); it != j.end()) {
    if (auto s = r.string(*it, child(p, "layer_pattern"))) {
      m.layer_pattern = *s;
      if (!j.contains("layers")) m.layers = static_cast<int>(std::min<std::size_t>(s->size(), 1 << 30));
    }
  }
  if (auto it = j.find("mamba"); it != j.end()) {
    // The Mamba-2 mixer (capplan/data/fields.hpp): each key given replaces its default.
    fields_detail::read_object(*it, child(p, "mamba"), mamba_fields(), m.mamba, r, /*waive_required=*/false);
  }
}

void check_hybrid(const sim::ModelSpec& m, const std::string& p, Reader& r) {
  const std::string pp = child(p, "layer_pattern");
  if (!m.is_hybrid()) {
    if (m.mamba.heads > 0) r.error(child(p, "mamba"), "is only used with a layer_pattern holding M layers");
    return;
  }
  const std::string& s = m.layer_pattern;
  const auto bad = s.find_first_not_of("M*-E");
  if (bad != std::string::npos) {
    r.error(pp, "symbols are M (Mamba), * (attention), - (MLP), E (MoE); got '" + std::string(1, s[bad]) +
                    "' at position " + std::to_string(bad));
    return;
  }
  if (static_cast<std::size_t>(m.layers) != s.size()) {
    r.error(child(p, "layers"), "must equal the layer_pattern's length (" + std::to_string(s.size()) + "); got " +
                                    std::to_string(m.layers));
  }
  if (s.find('E') != std::string::npos && !m.is_moe()) {
    r.error(pp, "has MoE layers (E) but the model has no `moe` experts");
  }
  if (s.find('M') != std::string::npos) {
    const auto& mb = m.mamba;
    if (mb.heads <= 0) {
      r.error(child(p, "mamba"), "required with Mamba layers (M) in the layer_pattern (heads, head_dim, state, "
                                 "groups, conv_kernel, chunk) is missing");
    } else if (mb.groups <= 0 || mb.heads % mb.groups != 0) {
      r.error(child(child(p, "mamba"), "groups"), "must divide mamba heads (" + std::to_string(mb.heads) +
                                                     "); got " + std::to_string(mb.groups));
    }
  } else if (m.mamba.heads > 0) {
    r.error(child(p, "mamba"), "is only used with Mamba layers (M) in the layer_pattern");
  }
}

void hybrid_to_json(const sim::ModelSpec& m, nlohmann::json& model) {
  if (!m.is_hybrid()) return;
  model["layer_pattern"] = m.layer_pattern;
  if (m.mamba.heads <= 0) return;
  model["mamba"] = fields_detail::write_object(mamba_fields(), m.mamba);
}

}  // namespace capplan::data::detail
