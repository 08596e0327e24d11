// SPDX-License-Identifier: Apache-2.0
#include "search/plan_text.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

namespace capplan::sim::plan_text {

// ---------------------------------------------------------------------------------------------
// Formatting for messages (no <format> in g++ 12; to_chars is exact and locale-free).

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "?";
  std::array<char, 64> buf{};
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, digits);
  return std::string(buf.data(), r.ptr);
}

// Three significant figures for ordinary magnitudes.
std::string sig3(double v) {
  const double a = std::fabs(v);
  return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

std::string usd_text(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return "$" + sig3(v / 1e9) + "B";
  if (a >= 1e6) return "$" + sig3(v / 1e6) + "M";
  if (a >= 1e3) return "$" + sig3(v / 1e3) + "k";
  return "$" + fixed(v, 2);
}

std::string days_text(double seconds) { return sig3(seconds / 86400.0) + " days"; }

// Whole percent, or one decimal below 10% (so a 0.4% change does not read as 0%).
std::string percent(double fraction) {
  const double p = fraction * 100.0;
  return fixed(p, std::fabs(p) < 9.95 ? 1 : 0) + "%";
}

std::string layout_text(const Parallelism& p) {
  std::string s = "tp " + std::to_string(p.tp) + " pp " + std::to_string(p.pp) + " dp " + std::to_string(p.dp);
  if (p.cp > 1) s += " cp " + std::to_string(p.cp);
  if (p.ep > 1) s += " ep " + std::to_string(p.ep);
  if (p.etp > 1) s += " etp " + std::to_string(p.etp);
  s += ", micro-batch " + std::to_string(p.micro_batch);
  if (p.virtual_stages > 1) s += ", " + std::to_string(p.virtual_stages) + " virtual stages";
  s += ", ZeRO " + std::to_string(p.zero) + ", " +
       (p.recompute == Recompute::none ? std::string("no") : std::string(to_string(p.recompute))) + " recompute";
  if (p.sequence_parallel) s += ", sequence parallel";
  return s;
}

std::string shape_text(const Plan& p) {
  const std::string what = p.instance_id.empty() ? p.gpu_id : p.instance_id;
  return what + " x " + std::to_string(p.nodes) + (p.nodes == 1 ? " node" : " nodes") + " (" +
         std::to_string(p.gpus) + " GPUs)";
}

std::string explain(const Plan& plan) {
  const Estimate& e = plan.estimate;
  const StepBreakdown& b = e.step.breakdown;
  const double total = e.step.time.base();
  std::string s = shape_text(plan) + ", " + layout_text(e.layout.strategy) + ": " + days_text(plan_time(e).base());
  if (e.goodput.modelled && e.goodput.wall.base() > e.totals.time_to_train.base()) {
    s += " with failures and checkpoints (" + days_text(e.totals.time_to_train.base()) + " steady)";
  }
  if (const auto c = plan_cost(e)) s += ", " + usd_text(c->base());
  s += ". Step " + sig3(total) + " s: compute " + percent(b.compute.base() / total);
  if (b.recompute.base() > 0) s += " (recompute " + percent(b.recompute.base() / total) + ")";
  const std::pair<const char*, double> parts[] = {
      {"pipeline bubble", b.bubble.base()}, {"tp comm", b.tp_comm.base()}, {"pp comm", b.pp_comm.base()},
      {"dp comm", b.dp_comm.base()},        {"ep comm", b.ep_comm.base()}, {"cp comm", b.cp_comm.base()},
      {"optimizer", b.optimizer.base()}};
  for (const auto& [name, v] : parts) {
    if (v / total >= 0.005) s += ", " + std::string(name) + " " + percent(v / total);
  }
  s += "; MFU " + percent(e.step.mfu) + "; memory " + fixed(units::to_gib(e.memory.total()), 1) + " of " +
       fixed(units::to_gib(e.memory.capacity), 0) + " GiB per GPU.";
  return s;
}

// "41% faster, 12% dearer" (time: fraction of the chosen time saved or added; cost likewise).
std::string change_text(double time_ratio, std::optional<double> cost_ratio) {
  std::string s = time_ratio <= 1 ? percent(1 - time_ratio) + " faster" : percent(time_ratio - 1) + " slower";
  if (cost_ratio) {
    s += ", " + (*cost_ratio <= 1 ? percent(1 - *cost_ratio) + " cheaper" : percent(*cost_ratio - 1) + " dearer");
  } else {
    s += ", cost not comparable (price unknown)";
  }
  return s;
}

std::string nodes_text(int from, int to) {
  if (to % from == 0) return std::to_string(to / from) + "x the nodes (" + std::to_string(from) + " -> " +
                             std::to_string(to) + ")";
  if (from % to == 0) return "1/" + std::to_string(from / to) + " the nodes (" + std::to_string(from) + " -> " +
                             std::to_string(to) + ")";
  return std::to_string(to) + " nodes instead of " + std::to_string(from);
}

std::string layout_diff(const Parallelism& a, const Parallelism& b) {
  std::string s;
  auto field = [&](const char* name, int x, int y) {
    if (x != y) s += (s.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(y) + " instead of " +
                     std::to_string(x);
  };
  field("tp", a.tp, b.tp);
  field("pp", a.pp, b.pp);
  field("dp", a.dp, b.dp);
  field("cp", a.cp, b.cp);
  field("ep", a.ep, b.ep);
  field("micro-batch", a.micro_batch, b.micro_batch);
  field("virtual stages", a.virtual_stages, b.virtual_stages);
  field("ZeRO", a.zero, b.zero);
  if (a.recompute != b.recompute) {
    s += (s.empty() ? "" : ", ") + std::string(to_string(b.recompute)) + " recompute instead of " +
         to_string(a.recompute);
  }
  if (a.sequence_parallel != b.sequence_parallel) {
    s += (s.empty() ? "" : ", ") + std::string(b.sequence_parallel ? "with" : "without") + " sequence parallelism";
  }
  return s.empty() ? "another layout" : s;
}

}  // namespace capplan::sim::plan_text
