// SPDX-License-Identifier: Apache-2.0
// A serving plan written out: the JSON of capplan serve --json and the table, amounts in the
// request's currency; and the sentences that explain the plan (serve_words.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "capplan/data/findings.hpp"
#include "capplan/data/format.hpp"
#include "capplan/data/serve_io.hpp"
#include "output/serve_words.hpp"

namespace capplan::data {

using nlohmann::json;

namespace {

using sim::layout_name;
using sim::slo_latency;

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string option_name(const ServeOption& o) {
  return o.label.empty() ? layout_name(o.job) : o.label;
}

// The latency a layout's target is read on (sim::slo_latency: end-to-end when the target has it,
// else time to first token, else time per output token) at the target's percentile: "TTFT p95 s".
std::string slo_latency_label(const sim::ServeJob& j) {
  const std::string q = " p" + fixed(j.slo.percentile * 100, 0) + " s";
  if (j.slo.e2e.base() > 0) return "e2e" + q;
  if (j.slo.ttft.base() > 0) return "TTFT" + q;
  if (j.slo.tpot.base() > 0) return "TPOT" + q;
  return "e2e" + q;
}

}  // namespace

namespace serve_words {

std::string reason_text(const sim::ServePlan& p) { return p.reason ? render(*p.reason) : std::string(); }

std::string explain_choice(const std::vector<ServeOption>& options) {
  if (options.size() < 2 || !options[0].plan.feasible || !options[1].plan.feasible) return {};
  const auto& a = options[0];
  const auto& b = options[1];
  std::ostringstream s;
  const double q = a.job.slo.percentile * 100;
  s << option_name(a) << " instead of " << option_name(b) << ": ";
  // "120 GPUs instead of 120" said nothing: equal counts read as the same GPUs.
  if (a.plan.gpus == b.plan.gpus) {
    s << "the same " << a.plan.gpus << " GPUs";
  } else {
    s << a.plan.gpus << " GPUs instead of " << b.plan.gpus;
  }
  s << " (KV cache " << fixed(static_cast<double>(a.plan.memory.kv_tokens) / 1000.0, 0) << "k tokens per replica vs "
    << fixed(static_cast<double>(b.plan.memory.kv_tokens) / 1000.0, 0) << "k), p" << fixed(q, 0) << " latency "
    << fixed(slo_latency(a.job, a.plan.at_rate), 2) << " s vs " << fixed(slo_latency(b.job, b.plan.at_rate), 2) << " s";
  if (a.plan.usd_per_month && b.plan.usd_per_month && *b.plan.usd_per_month > 0) {
    const double cheaper = 1.0 - *a.plan.usd_per_month / *b.plan.usd_per_month;
    if (cheaper > 0.005) {
      s << ", " << fixed(cheaper * 100.0, 0) << "% cheaper per month";
    } else {
      s << ", the same instances per month (fewer GPUs busy: room for another model)";
    }
  }
  s << "; each replica is limited by " << a.plan.binding << ".";
  return s.str();
}

}  // namespace serve_words

using serve_words::reason_text;

namespace {

json stats_json(const sim::LatencyStats& s) {
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {{"mean", num(s.mean)}, {"p50", num(s.p50)}, {"p90", num(s.p90)}, {"p95", num(s.p95)}, {"p99", num(s.p99)}};
}

json money(const std::optional<double>& usd, const sim::Currency& c) {
  if (!usd || !std::isfinite(*usd)) return nullptr;
  return *usd / (c.usd_per_unit > 0 ? c.usd_per_unit : 1.0);
}

json option_json(const ServeOption& o, const ServeRequest& r) {
  const sim::ServePlan& p = o.plan;
  const sim::ServeLoad& l = p.at_rate;
  const auto gib = [](units::Bytes b) { return units::to_gib(b); };
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json j = {{"instance", o.instance_id.empty() ? json(nullptr) : json(o.instance_id)},
            {"engine_id", o.job.engine.id},
            {"gpu", o.cluster.gpu.id},
            {"gpus_per_node", o.cluster.gpus_per_node},
            {"confirmed_by_simulation", o.confirmed},
            {"tp", o.job.tp},
            {"pp", o.job.pp},
            {"ep", o.job.ep},
            {"weights", to_string(o.job.weights)},
            {"kv_cache", to_string(o.job.kv)},
            {"feasible", p.feasible},
            {"reason", p.reason ? json(render(*p.reason)) : json(nullptr)},
            {"memory_per_gpu_gib",
             {{"capacity", gib(p.memory.capacity)},
              {"weights", gib(p.memory.weights)},
              {"activations", gib(p.memory.activations)},
              {"reserve", gib(p.memory.reserve)},
              {"kv_cache", gib(p.memory.kv_budget)}}},
            {"kv_cache_tokens", p.memory.kv_tokens},
            {"max_sequences", p.memory.max_sequences},
            {"max_rate_per_replica_per_s", num(p.max_rate)},
            {"binding", p.binding.empty() ? json(nullptr) : json(p.binding)},
            {"replicas", p.replicas},
            {"gpus", p.gpus},
            {"instances", p.instances},
            {"gpu_hours_per_month", num(p.gpu_hours_per_month)},
            {"purchase", sim::to_string(o.job.pricing.model)},
            {"billed_gpu_hours_per_month", num(p.billed_gpu_hours_per_month)},
            {"price_per_gpu_hour", money(p.usd_per_gpu_hour, r.currency)},
            {"cost_per_month", money(p.usd_per_month, r.currency)},
            {"cost_per_million_input_tokens", money(p.usd_per_million_input, r.currency)},
            {"cost_per_million_output_tokens", money(p.usd_per_million_output, r.currency)},
            {"cost_usd_per_month", money(p.usd_per_month, sim::Currency{})}};
  if (!p.instances_by_hour.empty()) {
    // Scaling with the hourly load profile: what each hour needs and what it saves.
    std::optional<double> saves;
    if (p.usd_per_month && p.usd_per_month_without_scaling) saves = *p.usd_per_month_without_scaling - *p.usd_per_month;
    j["hourly"] = {{"load", o.job.traffic.hourly_load},
                   {"replicas", p.replicas_by_hour},
                   {"instances", p.instances_by_hour},
                   {"cost_per_month_without_scaling", money(p.usd_per_month_without_scaling, r.currency)},
                   {"scaling_saves_per_month", money(saves, r.currency)}};
  } else {
    j["hourly"] = nullptr;
  }
  j["per_replica"] = {{"rate_per_s", num(l.requests_per_s)},
                      {"ttft_s", stats_json(l.ttft)},
                      {"tpot_s", stats_json(l.tpot)},
                      {"e2e_s", stats_json(l.e2e)},
                      {"output_tokens_per_s", num(l.output_tokens_per_s)},
                      {"total_tokens_per_s", num(l.total_tokens_per_s)},
                      {"mean_batch", num(l.mean_batch)},
                      {"mean_step_s", num(l.mean_step_s)},
                      {"prefill_share", num(l.prefill_share)},
                      {"preemptions", l.preemptions},
                      {"saturated", l.saturated},
                      {"simulated_requests", l.requests}};
  return j;
}

json lifecycle_json(const TrainThenServe& t, const sim::Currency& c) {
  json cumulative = json::array();
  for (const auto& v : t.cumulative_usd) cumulative.push_back(money(v, c));
  return {{"training",
           {{"workload", t.training_workload},
            {"model", t.training_model},
            {"gpus", t.training_gpus},
            {"days", t.training_days},
            {"gpu_hours", t.training_gpu_hours},
            {"cost", money(t.training_usd, c)},
            {"cost_usd", money(t.training_usd, sim::Currency{})}}},
          {"serving",
           {{"layout", t.serving_layout},
            {"gpus", t.serving_gpus},
            {"months", t.months},
            {"gpu_hours_per_month", t.serving_gpu_hours_per_month},
            {"cost_per_month", money(t.serving_usd_per_month, c)},
            {"cost_usd_per_month", money(t.serving_usd_per_month, sim::Currency{})}}},
          {"currency", c.code},
          {"cumulative_cost", std::move(cumulative)},
          {"total_cost", money(t.total_usd, c)},
          {"total_cost_usd", money(t.total_usd, sim::Currency{})},
          {"notes", t.notes}};
}

}  // namespace

json serve_to_json(const ServeResult& res, const ServeRequest& r) {
  json j = option_json(res.asked, r);
  j["workload"] = "serve";
  j["model"] = r.model_id;
  j["gpu"] = r.cluster.gpu.id;
  j["instance"] = r.cluster.instance_id.empty() ? json(nullptr) : json(r.cluster.instance_id);
  j["gpus_per_node"] = r.cluster.gpus_per_node;
  j["engine"] = {{"id", r.job.engine.id}, {"name", r.job.engine.name}, {"version", r.job.engine.version}};
  j["currency"] = r.currency.code;
  j["cost_model"] = res.cost_model;
  const sim::Traffic& t = r.job.traffic;
  j["traffic"] = {{"arrival", t.arrival == sim::Arrival::poisson       ? "poisson"
                              : t.arrival == sim::Arrival::closed_loop ? "closed_loop"
                                                                       : "offline"},
                  {"rate_per_s", t.rate},
                  {"concurrency", t.concurrency},
                  {"input_tokens", {{"mean", t.input.mean}, {"p95", t.input.fixed() ? t.input.mean : t.input.p95}}},
                  {"output_tokens", {{"mean", t.output.mean}, {"p95", t.output.fixed() ? t.output.mean : t.output.p95}}},
                  {"prefix_hit", t.prefix_hit}};
  const sim::Slo& s = r.job.slo;
  const auto opt = [](units::Seconds v) { return v.base() > 0 ? json(v.base()) : json(nullptr); };
  j["slo"] = {{"ttft_s", opt(s.ttft)}, {"tpot_s", opt(s.tpot)}, {"e2e_s", opt(s.e2e)}, {"percentile", s.percentile}};
  if (r.compare) {
    json opts = json::array();
    for (const auto& o : res.options) opts.push_back(option_json(o, r));
    j["options"] = std::move(opts);
    j["pareto"] = res.pareto;
    j["explanation"] = res.explanation.empty() ? json(nullptr) : json(res.explanation);
  }
  if (!res.curve.empty()) {
    json curve = json::array();
    const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    for (const auto& p : res.curve) {
      curve.push_back({{"rate_per_s", num(p.rate)},
                       {"saturated", p.load.saturated},
                       {"ttft_s", stats_json(p.load.ttft)},
                       {"tpot_s", stats_json(p.load.tpot)},
                       {"e2e_s", stats_json(p.load.e2e)},
                       {"output_tokens_per_s", num(p.load.output_tokens_per_s)},
                       {"mean_batch", num(p.load.mean_batch)}});
    }
    j["latency_curve"] = std::move(curve);
  }
  if (res.lifecycle) j["train_then_serve"] = lifecycle_json(*res.lifecycle, r.currency);
  j["warnings"] = r.warnings;
  format::stamp(j);
  return j;
}

std::string serve_to_csv(const ServeResult& res, const ServeRequest& r) {
  std::string out =
      "layout,instance,engine,gpu,gpus_per_node,tp,pp,ep,weights,kv_cache,recommended,pareto,confirmed_by_simulation,"
      "feasible,reason,binding,replicas,gpus,instances,kv_cache_tokens,max_sequences,max_rate_per_replica_per_s,"
      "rate_per_replica_per_s";
  for (const char* metric : {"ttft", "tpot", "e2e"}) {
    for (const char* stat : {"mean", "p50", "p90", "p95", "p99"}) out += std::string(",") + metric + "_" + stat + "_s";
  }
  out += ",output_tokens_per_s_per_replica,gpu_hours_per_month,currency,cost_per_month,cost_per_million_input_tokens,"
         "cost_per_million_output_tokens\n";
  const auto cell = [](const json& v) {
    if (v.is_null()) return std::string();
    if (v.is_string()) return format::csv_field(v.get<std::string>());
    if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
    return v.dump();
  };
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  const ServeOption& chosen = res.recommended();
  const auto row = [&](const ServeOption& o, bool front) {
    const sim::ServePlan& p = o.plan;
    const sim::ServeLoad& l = p.at_rate;
    const std::string& instance = o.instance_id.empty() ? o.cluster.instance_id : o.instance_id;
    std::vector<json> cells = {option_name(o),
                               instance.empty() ? json(nullptr) : json(instance),
                               o.job.engine.id,
                               o.cluster.gpu.id,
                               o.cluster.gpus_per_node,
                               o.job.tp,
                               o.job.pp,
                               o.job.ep,
                               to_string(o.job.weights),
                               to_string(o.job.kv),
                               &o == &chosen,
                               front,
                               o.confirmed,
                               p.feasible,
                               p.reason ? json(render(*p.reason)) : json(nullptr),
                               p.binding.empty() ? json(nullptr) : json(p.binding),
                               p.replicas,
                               p.gpus,
                               p.instances,
                               p.memory.kv_tokens,
                               p.memory.max_sequences,
                               num(p.max_rate),
                               num(l.requests_per_s)};
    for (const sim::LatencyStats* st : {&l.ttft, &l.tpot, &l.e2e}) {
      for (double v : {st->mean, st->p50, st->p90, st->p95, st->p99}) cells.push_back(num(v));
    }
    for (const json& v : {num(l.output_tokens_per_s), num(p.gpu_hours_per_month), json(r.currency.code),
                          money(p.usd_per_month, r.currency), money(p.usd_per_million_input, r.currency),
                          money(p.usd_per_million_output, r.currency)}) {
      cells.push_back(v);
    }
    std::string line;
    for (const json& c : cells) line += (line.empty() ? "" : ",") + cell(c);
    out += line + "\n";
  };
  if (r.compare && !res.options.empty()) {
    for (std::size_t i = 0; i < res.options.size(); ++i) {
      row(res.options[i], std::find(res.pareto.begin(), res.pareto.end(), i) != res.pareto.end());
    }
  } else {
    row(res.asked, false);
  }
  return out;
}

namespace {

std::string amount(const std::optional<double>& usd, const sim::Currency& c, int digits = 0) {
  if (!usd) return "unknown";
  return fixed(*usd / (c.usd_per_unit > 0 ? c.usd_per_unit : 1.0), digits) + " " + c.code;
}

}  // namespace

std::string serve_to_table(const ServeResult& res, const ServeRequest& r) {
  std::ostringstream s;
  const ServeOption& a = res.asked;
  const sim::ServePlan& p = a.plan;
  const sim::ServeLoad& l = p.at_rate;
  const sim::Traffic& t = r.job.traffic;
  s << "capplan serve: " << r.model_id << " on " << r.cluster.gpu.name << " with " << r.job.engine.name
    << (r.job.engine.version.empty() ? "" : " " + r.job.engine.version) << " (" << res.cost_model << " cost model)\n";
  s << "  layout          " << layout_name(a.job) << " weights, " << to_string(a.job.kv) << " KV cache\n";
  s << "  traffic         ";
  if (t.arrival == sim::Arrival::poisson) s << fixed(t.rate, 2) << " requests/s (Poisson)";
  if (t.arrival == sim::Arrival::closed_loop) s << t.concurrency << " concurrent clients";
  if (t.arrival == sim::Arrival::offline) s << "offline (all requests at once)";
  s << ", " << fixed(t.input.mean, 0) << " tokens in, " << fixed(t.output.mean, 0) << " out\n";
  const sim::Slo& slo = r.job.slo;
  if (slo.any()) {
    s << "  target          p" << fixed(slo.percentile * 100, 0);
    if (slo.ttft.base() > 0) s << " TTFT <= " << fixed(slo.ttft.base(), 3) << " s";
    if (slo.tpot.base() > 0) s << " TPOT <= " << fixed(slo.tpot.base() * 1e3, 1) << " ms";
    if (slo.e2e.base() > 0) s << " end-to-end <= " << fixed(slo.e2e.base(), 2) << " s";
    s << "\n";
  }
  s << "  memory per GPU  " << fixed(units::to_gib(p.memory.weights), 1) << " GiB weights, "
    << fixed(units::to_gib(p.memory.activations), 1) << " activations, " << fixed(units::to_gib(p.memory.reserve), 1)
    << " reserve, " << fixed(units::to_gib(p.memory.kv_budget), 1) << " KV cache of "
    << fixed(units::to_gib(p.memory.capacity), 0) << " GiB\n";
  s << "  KV cache        " << p.memory.kv_tokens << " tokens per replica, " << p.memory.max_sequences
    << " sequences of the mean length\n";
  if (!p.feasible) {
    s << "  not feasible    " << reason_text(p) << "\n";
  } else {
  s << "  per replica     at most " << fixed(p.max_rate, 2) << " requests/s within the target (limited by " << p.binding
    << ")\n";
  s << "  plan            " << p.replicas << " replica(s), " << p.gpus << " GPUs, " << p.instances << " instance(s) of "
    << r.cluster.gpus_per_node << " GPUs\n";
  s << "  each replica at " << fixed(l.requests_per_s, 2) << " requests/s (simulated, " << l.requests << " requests):\n";
  const auto row = [&](const char* name, const sim::LatencyStats& st, double scale, const char* unit) {
    s << "    " << name << " mean " << fixed(st.mean * scale, 1) << " p50 " << fixed(st.p50 * scale, 1) << " p95 "
      << fixed(st.p95 * scale, 1) << " p99 " << fixed(st.p99 * scale, 1) << " " << unit << "\n";
  };
  row("TTFT      ", l.ttft, 1e3, "ms");
  row("TPOT      ", l.tpot, 1e3, "ms");
  row("end-to-end", l.e2e, 1.0, "s");
  s << "    " << fixed(l.output_tokens_per_s, 0) << " output tokens/s, mean batch " << fixed(l.mean_batch, 1)
    << ", prompts take " << fixed(l.prefill_share * 100, 0) << "% of the GPU time";
  if (l.preemptions > 0) s << ", " << l.preemptions << " preemptions";
  s << "\n";
  s << "  cost            " << amount(p.usd_per_month, r.currency) << " per month (" << fixed(p.gpu_hours_per_month, 0)
    << " GPU-hours); per 1M tokens: " << amount(p.usd_per_million_input, r.currency, 3) << " input, "
    << amount(p.usd_per_million_output, r.currency, 3) << " output\n";
  if (!p.replicas_by_hour.empty()) {
    s << "  load by hour    peak " << fixed(t.rate, 2) << " requests/s scaled by the hourly profile; replicas, hours 0-23:";
    for (int n : p.replicas_by_hour) s << " " << n;
    s << "\n";
    if (p.usd_per_month && p.usd_per_month_without_scaling) {
      const double saves = *p.usd_per_month_without_scaling - *p.usd_per_month;
      if (saves > 0) {
        s << "  scaling saves   " << amount(saves, r.currency) << " a month against the peak's " << p.instances
          << " instance(s) held every hour (" << amount(p.usd_per_month_without_scaling, r.currency) << ")\n";
      } else {
        s << "  scaling saves   nothing: every hour still needs the peak's " << p.instances
          << " instance(s) (billed whole)\n";
      }
    }
  }
  if (res.asked.job.pricing.model != sim::PurchaseModel::on_demand) {
    // Reserved and owned capacity is paid at the peak every hour, whatever the load profile.
    s << "  purchase        " << sim::to_string(res.asked.job.pricing.model) << " at "
      << amount(p.usd_per_gpu_hour, r.currency, 3) << " per GPU-hour, " << fixed(p.billed_gpu_hours_per_month, 0)
      << " GPU-hours a month paid (the peak's " << p.instances << " instance(s) held every hour)\n";
  }
  }
  if (r.compare && !res.options.empty()) {
    s << "\n  layouts (cheapest first; * on the Pareto front of cost per output token vs p"
      << fixed(r.job.slo.percentile * 100, 0) << " latency";
    if (!r.offerings.empty()) {
      s << "; ~ closed form only, not confirmed by simulation; " << r.offerings.size() << " offerings";
    }
    s << ")\n";
    std::size_t width = 13;
    for (const auto& o : res.options) width = std::max(width, option_name(o).size());
    const int w = static_cast<int>(width);
    char latency[32];
    std::snprintf(latency, sizeof latency, "%10s", slo_latency_label(r.job).c_str());
    s << "    " << std::string("layout") << std::string(width - 6 + 2, ' ') << "GPUs  KV tokens  max req/s " << latency
      << "  per month         per 1M out\n";
    std::size_t shown = 0;
    for (std::size_t i = 0; i < res.options.size(); ++i) {
      const auto& o = res.options[i];
      const bool front = std::find(res.pareto.begin(), res.pareto.end(), i) != res.pareto.end();
      // An offering search lists its front and the 30 cheapest; the JSON has every option.
      if (!r.offerings.empty() && !front && shown >= 30) continue;
      ++shown;
      char line[512];
      if (!o.plan.feasible) {
        std::snprintf(line, sizeof line, "    %-*s  not feasible: %s\n", w, option_name(o).c_str(), reason_text(o.plan).c_str());
      } else {
        std::snprintf(line, sizeof line, "  %c%c%-*s %5d %10lld %10.2f %10.2f  %-16s  %s\n", front ? '*' : ' ',
                      o.confirmed ? ' ' : '~', w, option_name(o).c_str(), o.plan.gpus,
                      static_cast<long long>(o.plan.memory.kv_tokens), o.plan.max_rate,
                      slo_latency(o.job, o.plan.at_rate), amount(o.plan.usd_per_month, r.currency).c_str(),
                      amount(o.plan.usd_per_million_output, r.currency, 3).c_str());
      }
      s << line;
    }
    if (shown < res.options.size()) {
      s << "    ... " << res.options.size() - shown << " more (--format json lists every one)\n";
    }
    if (!res.explanation.empty()) s << "  " << res.explanation << "\n";
  }
  if (!res.curve.empty()) {
    s << "\n  latency under load (" << layout_name(a.job) << ", one replica, simulated; * saturated: the queue grows)\n";
    s << "    req/s   out tok/s  TTFT p50/p95 ms    TPOT p50/p95 ms   end-to-end p50/p95 s\n";
    for (const auto& pt : res.curve) {
      char line[200];
      std::snprintf(line, sizeof line, "  %c %7.2f %10.0f  %7.1f / %-7.1f  %6.2f / %-6.2f    %6.2f / %.2f\n",
                    pt.load.saturated ? '*' : ' ', pt.rate, pt.load.output_tokens_per_s, pt.load.ttft.p50 * 1e3,
                    pt.load.ttft.p95 * 1e3, pt.load.tpot.p50 * 1e3, pt.load.tpot.p95 * 1e3, pt.load.e2e.p50,
                    pt.load.e2e.p95);
      s << line;
    }
  }
  if (res.lifecycle) {
    const TrainThenServe& life = *res.lifecycle;
    s << "\n  train, then serve (" << r.currency.code << ")\n";
    s << "    " << life.training_workload << " " << life.training_model << " on " << life.training_gpus << " GPUs: "
      << fixed(life.training_days, 1) << " days, " << fixed(life.training_gpu_hours, 0) << " GPU-hours, "
      << amount(life.training_usd, r.currency) << "\n";
    s << "    serving " << life.serving_layout << " on " << life.serving_gpus << " GPUs: "
      << amount(life.serving_usd_per_month, r.currency) << " per month (" << fixed(life.serving_gpu_hours_per_month, 0)
      << " GPU-hours)\n";
    s << "    total after " << life.months << " month(s) of serving: " << amount(life.total_usd, r.currency);
    if (life.total_usd && life.training_usd && *life.total_usd > 0) {
      const double share = *life.training_usd / *life.total_usd * 100.0;
      s << " (training " << fixed(share, share < 10.0 ? 1 : 0) << "%)";
    }
    s << "\n";
    for (const auto& n : life.notes) s << "    note: " << n << "\n";
  }
  return s.str();
}

}  // namespace capplan::data
