// SPDX-License-Identifier: Apache-2.0
#include "catalog/topology_io.hpp"

#include <vector>

namespace capplan::data::detail {

namespace {

constexpr double kMaxTierGpus = 1e6;
constexpr double kMaxTierGbps = 1e6;
constexpr double kMaxLatencyUs = 1e6;
constexpr double kMaxOversubscription = 64;

// A tier while it is read: the keys given, checked against each other once every tier is in.
struct TierDraft {
  sim::NetworkTier tier;
  std::string kind;
  std::optional<int> gpus, rails;
  std::optional<double> oversubscription;
  bool has_source = false;
};

constexpr Field<TierDraft> kTierFields[] = {
    {"name", Kind::string, Need::required, false, {}, "what the tier is: nvlink, pcie, scale-out, rail, spine, ...",
     [](TierDraft& d, const json& v, Reader&, const std::string&) { d.tier.name = v.get<std::string>(); }},
    {"kind", Kind::string, Need::optional, false, {}, "scale_up or scale_out",
     [](TierDraft& d, const json& v, Reader&, const std::string&) { d.kind = v.get<std::string>(); }},
    {"gpus", Kind::integer, Need::optional, false, {1, kMaxTierGpus, false},
     "GPUs in one domain of this tier; only the outermost tier may omit it",
     store<&TierDraft::gpus>},
    {"gbps_per_gpu", Kind::number, Need::required, false, {0, kMaxTierGbps, true},
     "link bandwidth per GPU, one direction, Gbit/s",
     [](TierDraft& d, const json& v, Reader&, const std::string&) {
       d.tier.bandwidth = units::gbit_per_s(v.get<double>());
     }},
    {"latency_us", Kind::number, Need::optional, false, {0, kMaxLatencyUs, false},
     "collective latency base, microseconds (default: the cost model's)",
     [](TierDraft& d, const json& v, Reader&, const std::string&) {
       d.tier.latency = units::microseconds(v.get<double>());
     }},
    {"rails", Kind::integer, Need::optional, false, {1, 1024, false}, "rail planes (NICs per innermost domain)",
     store<&TierDraft::rails>},
    {"oversubscription", Kind::number, Need::optional, false, {1, kMaxOversubscription, false},
     "downlink:uplink ratio for traffic that crosses this tier (1 = non-blocking)",
     store<&TierDraft::oversubscription>},
    {"source", Kind::string_list, Need::optional, false, {}, "where the tier's numbers come from",
     [](TierDraft& d, const json&, Reader&, const std::string&) { d.has_source = true; }},
    {"notes", Kind::string, Need::optional, false, {}, "caveats", nullptr},
};

}  // namespace

std::optional<sim::Topology> read_topology(const json& v, const std::string& pointer, Reader& r, bool require_source) {
  const auto before = r.count();
  if (!v.is_array() || v.empty()) {
    r.error(pointer, "expected a non-empty list of tiers, innermost first; got " + describe(v));
    return std::nullopt;
  }
  if (v.size() > static_cast<std::size_t>(sim::kMaxTiers)) {
    r.error(pointer, "at most " + std::to_string(sim::kMaxTiers) + " tiers; got " + std::to_string(v.size()));
    return std::nullopt;
  }
  std::vector<TierDraft> drafts(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = child(pointer, i);
    read_fields<TierDraft>(v[i], p, kTierFields, drafts[i], r);
    sim::NetworkTier& tier = drafts[i].tier;
    tier.gpus = drafts[i].gpus.value_or(tier.gpus);
    tier.rails = drafts[i].rails.value_or(tier.rails);
    tier.oversubscription = drafts[i].oversubscription.value_or(tier.oversubscription);
    if (require_source && v[i].is_object() && !drafts[i].has_source && v[i].find("source") == v[i].end()) {
      r.error(child(p, "source"), "required (where the tier's numbers come from) is missing");
    }
  }
  if (r.count() != before) return std::nullopt;

  sim::Topology t;
  bool seen_scale_out = false;
  for (std::size_t i = 0; i < drafts.size(); ++i) {
    TierDraft& d = drafts[i];
    const std::string p = child(pointer, i);
    const bool outermost = i + 1 == drafts.size();
    if (d.kind.empty()) {
      d.tier.kind = i == 0 ? sim::TierKind::scale_up : sim::TierKind::scale_out;
    } else if (d.kind == "scale_up") {
      d.tier.kind = sim::TierKind::scale_up;
    } else if (d.kind == "scale_out") {
      d.tier.kind = sim::TierKind::scale_out;
    } else {
      r.error(child(p, "kind"),
              "unknown tier kind '" + d.kind + "' (" + suggest(d.kind, {"scale_up", "scale_out"}) + ")");
      continue;
    }
    if (d.tier.kind == sim::TierKind::scale_up && seen_scale_out) {
      r.error(child(p, "kind"), "a scale_up tier must come before every scale_out tier; got \"scale_up\" after tier " +
                                    std::to_string(i - 1));
    }
    seen_scale_out = seen_scale_out || d.tier.kind == sim::TierKind::scale_out;
    if (d.tier.kind == sim::TierKind::scale_up) {
      if (d.rails) r.error(child(p, "rails"), "only a scale_out tier has rails; got " + std::to_string(d.tier.rails));
      if (d.oversubscription) {
        r.error(child(p, "oversubscription"),
                "only a scale_out tier has oversubscription; got " + fmt(d.tier.oversubscription));
      }
    }
    if (!d.gpus && !outermost) {
      r.error(child(p, "gpus"), "required (GPUs in one domain of this tier; only the outermost tier may omit it) is missing");
    }
    if (d.gpus && i > 0 && drafts[i - 1].gpus) {
      const int inner = drafts[i - 1].tier.gpus;
      if (d.tier.gpus <= inner || d.tier.gpus % inner != 0) {
        r.error(child(p, "gpus"), "must be a multiple of tier " + std::to_string(i - 1) + "'s gpus (" +
                                      std::to_string(inner) + ") and larger; got " + std::to_string(d.tier.gpus));
      }
    }
    if (d.rails && drafts[0].gpus && d.tier.rails > drafts[0].tier.gpus) {
      r.error(child(p, "rails"), "must be at most the innermost tier's gpus (" + std::to_string(drafts[0].tier.gpus) +
                                     "); got " + std::to_string(d.tier.rails));
    }
    t.tiers.push_back(d.tier);
  }
  if (r.count() != before) return std::nullopt;
  return t;
}

void check_topology_fits(const sim::Topology& t, int gpus, int gpus_per_node, const std::string& pointer, Reader& r) {
  if (t.empty()) return;
  const std::size_t last = t.tiers.size() - 1;
  const int outer = t.tiers[last].gpus;
  if (outer > 0 && outer < gpus) {
    r.error(child(child(pointer, last), "gpus"), "the outermost tier must hold every GPU of the cluster (" +
                                                     std::to_string(gpus) + ") or omit gpus; got " + std::to_string(outer));
  }
  const int inner = t.tiers[0].gpus;
  if (inner > 0 && gpus_per_node > 0 && gpus >= gpus_per_node && inner % gpus_per_node != 0 &&
      gpus_per_node % inner != 0) {
    r.error(child(child(pointer, 0), "gpus"), "must divide or be a multiple of the GPUs per node (" +
                                                  std::to_string(gpus_per_node) + "); got " + std::to_string(inner));
  }
}

}  // namespace capplan::data::detail
