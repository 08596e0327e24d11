// SPDX-License-Identifier: Apache-2.0
// The strategy section: parallel sizes, recompute and options, the recipe's defaults, and
// the GPU-count identity.
#include <tuple>

#include "input/scenario/parser.hpp"

namespace capplan::data::scenario_detail {

struct StrategyInt {
  const char* key;
  std::optional<int> sim::StrategyRequest::*member;
  double lo;
  double hi;
};
constexpr StrategyInt kStrategyInts[] = {
    {"tp", &sim::StrategyRequest::tp, 1, kMaxParallel},
    {"pp", &sim::StrategyRequest::pp, 1, kMaxParallel},
    {"dp", &sim::StrategyRequest::dp, 1, kMaxParallel},
    {"cp", &sim::StrategyRequest::cp, 1, kMaxParallel},
    {"ep", &sim::StrategyRequest::ep, 1, kMaxParallel},
    {"etp", &sim::StrategyRequest::etp, 1, kMaxParallel},
    {"micro_batch", &sim::StrategyRequest::micro_batch, 1, kMaxBatchSequences},
    {"virtual_stages", &sim::StrategyRequest::virtual_stages, 1, 1e4},
    {"zero", &sim::StrategyRequest::zero, 0, 3},
    {"first_stage_layers", &sim::StrategyRequest::first_stage_layers, 1, 1e6},
    {"last_stage_layers", &sim::StrategyRequest::last_stage_layers, 1, 1e6},
};

// --- strategy ---------------------------------------------------------------------------
sim::StrategyRequest ScenarioParser::parse_strategy(const json& j, const std::optional<sim::Cluster>& c,
                                                  const std::optional<sim::ModelSpec>& m) {
  const std::string p = "/strategy";
  sim::StrategyRequest s;
  if (is_auto(j)) {
    out_.strategy_all_auto = true;
    return s;
  }
  if (!j.is_object()) {
    r_.error(p, "must be \"auto\" or an object of tp, pp, dp, ...; got " + describe(j));
    return s;
  }
  std::vector<std::string> known;
  for (const auto& f : kStrategyInts) known.emplace_back(f.key);
  known.emplace_back("recompute");
  for (const auto& f : sim::kStrategyOptions) known.emplace_back(f.key);
  r_.unknown_keys(j, p, known);

  bool any = false;
  for (const auto& f : kStrategyInts) {
    const json* v = find(j, f.key);
    if (v == nullptr || is_auto(*v)) continue;
    if (auto x = r_.integer(*v, child(p, f.key), f.lo, f.hi)) {
      s.*f.member = static_cast<int>(*x);
      any = true;
    }
  }
  if (s.ep && *s.ep > 1 && m && !m->is_moe()) {
    r_.error(child(p, "ep"), "expert parallelism needs an MoE model (model.moe or an MoE preset); got " +
                                 std::to_string(*s.ep));
  }
  if (s.etp && *s.etp > 1 && m && !m->is_moe()) {
    r_.error(child(p, "etp"), "expert tensor parallelism needs an MoE model (model.moe or an MoE preset); got " +
                                  std::to_string(*s.etp));
  }
  if (const json* v = find(j, "recompute"); v != nullptr && !is_auto(*v)) {
    if (auto str = r_.string(*v, child(p, "recompute"))) {
      if (auto rc = sim::recompute_from_string(*str)) {
        s.recompute = *rc;
        any = true;
      } else {
        r_.error(child(p, "recompute"), "unknown recompute '" + *str + "' (" +
                                            suggest(*str, {"none", "selective", "full", "auto"}) + ")");
      }
    }
  }
  for (const auto& f : sim::kStrategyOptions) {
    const json* v = find(j, f.key);
    if (v == nullptr || is_auto(*v)) continue;
    if (!v->is_boolean()) {
      r_.error(child(p, f.key),
               std::string("expected true, false or \"auto\"; got ") + v->type_name() + " " + describe(*v));
      continue;
    }
    s.*f.request = v->get<bool>();
    any = true;
  }
  out_.strategy_all_auto = !any;
  if (recipe_) apply_recipe(j, s, m);

  if (c) check_gpu_count(s, c->gpus);
  return s;
}

// The recipe's strategy defaults for the keys the strategy object leaves out ("auto" stays a
// search); whether the version has selective recompute at all.
void ScenarioParser::apply_recipe(const json& j, sim::StrategyRequest& s, const std::optional<sim::ModelSpec>& m) {
  const auto& r = *recipe_;
  const auto absent = [&](const char* key) { return find(j, key) == nullptr; };
  s.selective_recompute = r.selective_recompute;
  if (!r.selective_recompute && s.recompute == sim::Recompute::selective) {
    r_.error("/strategy/recompute", "framework '" + r.id +
                                        "' has no selective recompute (full-layer checkpointing only); got \"selective\"");
  }
  if (absent("overlap_dp_comm")) {
    if (auto o = r.overlap_dp_comm_for(s.zero)) s.overlap_dp_comm = o;
  }
  if (absent("tp_comm_overlap") && r.tp_comm_overlap) s.tp_comm_overlap = r.tp_comm_overlap;
  if (absent("pp_comm_overlap") && r.pp_comm_overlap) s.pp_comm_overlap = r.pp_comm_overlap;
  if (absent("ep_comm_overlap") && r.ep_comm_overlap) s.ep_comm_overlap = r.ep_comm_overlap;
  if (absent("recompute") && r.recompute) s.recompute = r.recompute;
  if (absent("recompute_norms") && r.recompute_norms) s.recompute_norms = r.recompute_norms;
  if (absent("recompute_moe_act") && r.recompute_moe_act) s.recompute_moe_act = r.recompute_moe_act;
  if (absent("recompute_moe") && r.recompute_moe) s.recompute_moe = r.recompute_moe;
  if (absent("etp") && r.expert_tp_follows_tp.value_or(false) && m && m->is_moe() && s.tp) s.etp = s.tp;
}

// What the stack runs (the recipe's "supports", narrowed by the fine-tuning method): the planners
// search only that, and a strategy that fixes anything else is refused, naming the field.
void ScenarioParser::apply_support(sim::StrategyRequest& s, const sim::TrainingJob& t) {
  const sim::StackSupport recipe = recipe_ ? recipe_->supports : sim::StackSupport{};
  s.support = sim::stack_support(recipe, t.finetune.method);
  const std::string who = recipe_ ? "framework '" + recipe_->id + "'" : std::string("the stack");
  // Why a dimension is out: the method's rule, else the recipe's statement.
  const auto why = [&](const std::optional<bool>& by_recipe, const char* what) {
    if (sim::StackSupport::runs(by_recipe)) {
      return std::string("QLoRA's 4-bit base (bitsandbytes Linear4bit) is not split by ") + what +
             " in any stack";
    }
    return who + " does not run " + what + " (its recipe's supports in frameworks.json)";
  };
  const auto refuse_size = [&](const std::optional<int>& v, const std::optional<bool>& runs,
                               const std::optional<bool>& by_recipe, const char* key, const char* what) {
    if (v && *v > 1 && !sim::StackSupport::runs(runs)) {
      r_.error(child("/strategy", key), why(by_recipe, what) + "; got " + std::to_string(*v));
    }
  };
  const sim::StackSupport& sup = s.support;
  refuse_size(s.tp, sup.tensor_parallel, recipe.tensor_parallel, "tp", "tensor parallelism");
  refuse_size(s.pp, sup.pipeline_parallel, recipe.pipeline_parallel, "pp", "pipeline parallelism");
  refuse_size(s.cp, sup.context_parallel, recipe.context_parallel, "cp", "context parallelism");
  refuse_size(s.ep, sup.expert_parallel, recipe.expert_parallel, "ep", "expert parallelism");
  if (s.sequence_parallel.value_or(false) && !sim::StackSupport::runs(sup.sequence_parallel)) {
    r_.error("/strategy/sequence_parallel", why(recipe.sequence_parallel, "sequence parallelism") + "; got true");
  }
  if (s.zero && *s.zero > 0 && !sup.allows_zero(*s.zero)) {
    std::string stages;
    for (int z = 0; z <= 3; ++z) {
      if (sup.allows_zero(z)) stages += (stages.empty() ? "" : ", ") + std::to_string(z);
    }
    r_.error("/strategy/zero", who + " runs ZeRO stages " + stages + " only; got " + std::to_string(*s.zero));
  }
  for (auto [v, runs, key, what] :
       {std::tuple{s.offload_optimizer, sup.offload_optimizer, "offload_optimizer", "optimizer offload"},
        std::tuple{s.offload_params, sup.offload_params, "offload_params", "parameter offload"}}) {
    if (v.value_or(false) && !sim::StackSupport::runs(runs)) {
      r_.error(child("/strategy", key), why(runs, what) + "; got true");  // not narrowed by the method
    }
  }
}

// The GPU-count identity (other layout divisibility is sim::check_layout's job).
//
// Layout convention (Megatron-Core): tp*pp*dp*cp == GPUs, where dp is the data-parallel size of
// the attention and dense layers; expert parallelism is carved out of the same tp*dp*cp ranks
// (each expert-parallel group spans ep of them), so ep divides tp*dp*cp and does not multiply the
// GPU count. CONTRACT.md's spelling "tp*pp*dp (times cp and ep where used) = GPUs" is kept
// working: when tp, pp, dp and ep are given (cp absent counts as 1, as everywhere here) and only
// tp*pp*dp*cp*ep matches the GPU count, dp was written as the expert-data-parallel size, and the
// attention's data-parallel size is dp*ep (with a warning). The Megatron-Core reading wins when
// both would match.
void ScenarioParser::check_gpu_count(sim::StrategyRequest& s, int gpus) {
  const std::string p = "/strategy";
  const double g = gpus;
  const double cp = s.cp.value_or(1);
  if (s.tp && s.pp && s.dp) {
    const double product = static_cast<double>(*s.tp) * *s.pp * *s.dp * cp;
    const std::string spelled = std::to_string(*s.tp) + "*" + std::to_string(*s.pp) + "*" + std::to_string(*s.dp) +
                                "*" + fmt(cp) + " = " + fmt(product);
    if (product != g) {
      const double ep = s.ep.value_or(1);
      if (ep > 1 && product * ep == g) {
        const int dp = *s.dp * *s.ep;
        warn(child(p, "dp"), "tp*pp*dp*cp = " + spelled + " is not the number of GPUs (" + std::to_string(gpus) +
                                 "); read with CONTRACT's tp*pp*dp*cp*ep = GPUs: data-parallel size for attention "
                                 "is dp*ep = " + std::to_string(dp) +
                                 " (capplan's layout is Megatron-Core's: tp*pp*dp*cp = GPUs, ep within tp*dp*cp)");
        s.dp = dp;
      } else {
        r_.error(p, "tp*pp*dp*cp = " + spelled + " must equal the number of GPUs (" + std::to_string(gpus) + ")" +
                        (ep > 1 ? std::string("; ep is carved out of the tp*dp*cp ranks (Megatron-Core) and does "
                                              "not multiply the GPU count")
                                : std::string()));
        return;
      }
    }
    if (s.ep) {
      const double ranks = static_cast<double>(*s.tp) * *s.dp * cp;
      if (std::fmod(ranks, *s.ep) != 0) {
        r_.error(child(p, "ep"), "must divide tp*dp*cp = " + fmt(ranks) +
                                     " (experts are spread over the tensor-, data- and context-parallel ranks, as "
                                     "in Megatron-Core); got " + std::to_string(*s.ep));
      }
    }
  } else {
    const double product = static_cast<double>(s.tp.value_or(1)) * s.pp.value_or(1) * s.dp.value_or(1) * cp;
    if (product > g || std::fmod(g, product) != 0) {
      r_.error(p, "the given parallel sizes multiply to " + fmt(product) +
                      ", which does not divide the number of GPUs (" + std::to_string(gpus) + ")");
    }
  }
}

}  // namespace capplan::data::scenario_detail

namespace capplan::data {

using nlohmann::json;

nlohmann::json strategy_to_json(const sim::Parallelism& p) {
  json s = {{"tp", p.tp},
            {"pp", p.pp},
            {"dp", p.dp},
            {"cp", p.cp},
            {"ep", p.ep},
            {"etp", p.etp},
            {"micro_batch", p.micro_batch},
            {"virtual_stages", p.virtual_stages},
            {"zero", p.zero},
            {"recompute", sim::to_string(p.recompute)}};
  for (const auto& o : sim::kStrategyOptions) s[o.key] = p.*o.value;
  // Uneven pipeline stages only when set (0 = even split).
  if (p.first_stage_layers > 0) s["first_stage_layers"] = p.first_stage_layers;
  if (p.last_stage_layers > 0) s["last_stage_layers"] = p.last_stage_layers;
  return s;
}

}  // namespace capplan::data
