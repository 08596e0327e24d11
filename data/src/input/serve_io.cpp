// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/serve_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

#include "capplan/data/cost_model.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/price_sheet.hpp"
#include "capplan/sim/datasheet_cost.hpp"
#include "capplan/sim/search.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data {

namespace {

using nlohmann::json;
using detail::child;
using detail::Reader;

const std::vector<std::string> kFormats = {"bf16", "fp16", "fp8", "int8", "int4", "fp4"};
const std::vector<std::string> kKv = {"bf16", "fp16", "fp8"};
const std::vector<std::string> kArrivals = {"poisson", "closed_loop", "offline"};
constexpr double kMaxTokens = 10e6;  // per request: beyond any model's context

std::optional<sim::Arrival> arrival_from_string(const std::string& s) {
  if (s == "poisson") return sim::Arrival::poisson;
  if (s == "closed_loop") return sim::Arrival::closed_loop;
  if (s == "offline") return sim::Arrival::offline;
  return std::nullopt;
}

// Reads the serve workload; `out` (may be null: checking only) receives the values, `catalogs`
// (may be null) resolves the engine id.
void read_serve(const json& w, Reader& r, ServeRequest* out, const Catalogs* catalogs) {
  const std::string p = "/workload";
  r.unknown_keys(w, p,
                 {"kind", "engine", "weights", "kv_cache", "tp", "pp", "ep", "traffic", "slo", "headroom", "compare"});
  ServeRequest scratch;
  ServeRequest& o = out != nullptr ? *out : scratch;
  sim::ServeJob& job = o.job;
  // Engine: an id, or {id, overrides}.
  const json* engine = Reader::find(w, "engine");
  std::string engine_id = "vllm";
  const json* overrides = nullptr;
  if (engine != nullptr) {
    if (engine->is_object()) {
      const std::string ep = child(p, "engine");
      r.unknown_keys(*engine, ep,
                     {"id", "max_num_seqs", "max_num_batched_tokens", "chunked_prefill", "kv_memory_fraction",
                      "cuda_graphs", "step_overhead_us", "kernel_gap_us", "runtime_reserve_gib"});
      if (const json* id = Reader::find(*engine, "id")) {
        if (auto s = r.string(*id, child(ep, "id"))) engine_id = *s;
      }
      overrides = engine;
    } else if (auto s = r.string(*engine, child(p, "engine"))) {
      engine_id = *s;
    }
  }
  o.engine_id = engine_id;
  if (catalogs != nullptr) {
    if (const EngineEntry* e = catalogs->find_engine(engine_id)) {
      job.engine = e->spec;
    } else {
      const std::string at = engine != nullptr && engine->is_object() ? child(child(p, "engine"), "id") : child(p, "engine");
      r.error(at, "unknown engine '" + engine_id + "' (" + suggest(engine_id, catalogs->engine_ids()) + ")");
    }
  }
  if (overrides != nullptr) {
    const std::string ep = child(p, "engine");
    sim::EngineSpec& e = job.engine;
    if (const json* v = Reader::find(*overrides, "max_num_seqs")) {
      if (auto n = r.integer(*v, child(ep, "max_num_seqs"), 1, 1e6)) e.max_num_seqs = static_cast<int>(*n);
    }
    if (const json* v = Reader::find(*overrides, "max_num_batched_tokens")) {
      if (auto n = r.integer(*v, child(ep, "max_num_batched_tokens"), 1, 1e7)) e.max_num_batched_tokens = *n;
    }
    if (const json* v = Reader::find(*overrides, "chunked_prefill")) {
      if (auto b = r.boolean(*v, child(ep, "chunked_prefill"))) e.chunked_prefill = *b;
    }
    if (const json* v = Reader::find(*overrides, "cuda_graphs")) {
      if (auto b = r.boolean(*v, child(ep, "cuda_graphs"))) e.cuda_graphs = *b;
    }
    if (const json* v = Reader::find(*overrides, "kv_memory_fraction")) {
      if (auto x = r.number(*v, child(ep, "kv_memory_fraction"), 0.0, 1.0, true)) e.kv_memory_fraction = *x;
    }
    if (const json* v = Reader::find(*overrides, "step_overhead_us")) {
      if (auto x = r.number(*v, child(ep, "step_overhead_us"), 0.0, 1e6, false)) e.step_overhead = units::microseconds(*x);
    }
    if (const json* v = Reader::find(*overrides, "kernel_gap_us")) {
      if (auto x = r.number(*v, child(ep, "kernel_gap_us"), 0.0, 1e4, false)) e.kernel_gap = units::microseconds(*x);
    }
    if (const json* v = Reader::find(*overrides, "runtime_reserve_gib")) {
      if (auto x = r.number(*v, child(ep, "runtime_reserve_gib"), 0.0, 1e4, false)) e.runtime_reserve = units::gib(*x);
    }
  }
  if (const json* v = Reader::find(w, "weights")) {
    if (auto f = r.one_of(*v, child(p, "weights"), sim::weight_format_from_string, kFormats, "weight format")) {
      job.weights = *f;
    }
  }
  if (const json* v = Reader::find(w, "kv_cache")) {
    if (auto k = r.one_of(*v, child(p, "kv_cache"), kKv, "KV-cache precision")) job.kv = *sim::precision_from_string(*k);
  }
  for (auto [key, dst] : {std::pair{"tp", &job.tp}, std::pair{"pp", &job.pp}, std::pair{"ep", &job.ep}}) {
    if (const json* v = Reader::find(w, key)) {
      if (auto n = r.integer(*v, child(p, key), 1, 1024)) *dst = static_cast<int>(*n);
    }
  }
  if (const json* v = Reader::find(w, "headroom")) {
    if (auto x = r.number(*v, child(p, "headroom"), 0.0, 0.9, false)) job.headroom = *x;
  }
  if (const json* v = Reader::find(w, "compare")) {
    if (auto b = r.boolean(*v, child(p, "compare"))) o.compare = *b;
  }
  // Traffic.
  const std::string tp = child(p, "traffic");
  const json* traffic = Reader::find(w, "traffic");
  if (traffic == nullptr) {
    r.error(tp, "required (arrival, rate_per_s or concurrency, input_tokens, output_tokens) is missing");
  } else if (r.object(*traffic, tp)) {
    r.unknown_keys(*traffic, tp,
                   {"arrival", "rate_per_s", "concurrency", "requests", "input_tokens", "output_tokens", "prefix_hit",
                    "hourly_load"});
    sim::Traffic& t = job.traffic;
    if (const json* v = Reader::find(*traffic, "arrival")) {
      if (auto a = r.one_of(*v, child(tp, "arrival"), arrival_from_string, kArrivals, "arrival")) t.arrival = *a;
    }
    if (const json* v = Reader::find(*traffic, "rate_per_s")) {
      if (auto x = r.number(*v, child(tp, "rate_per_s"), 0.0, 1e7, true)) t.rate = *x;
    }
    if (const json* v = Reader::find(*traffic, "concurrency")) {
      if (auto n = r.integer(*v, child(tp, "concurrency"), 1, 1e6)) t.concurrency = static_cast<int>(*n);
    }
    if (const json* v = Reader::find(*traffic, "requests")) {
      if (auto n = r.integer(*v, child(tp, "requests"), 1, 1e6)) t.requests = *n;
    }
    if (t.arrival == sim::Arrival::poisson && Reader::find(*traffic, "rate_per_s") == nullptr) {
      r.error(child(tp, "rate_per_s"), "required for poisson arrivals (requests per second) is missing");
    }
    if (t.arrival == sim::Arrival::closed_loop && Reader::find(*traffic, "concurrency") == nullptr) {
      r.error(child(tp, "concurrency"), "required for closed_loop arrivals (clients) is missing");
    }
    // A length: a number (every request the same) or {mean, p95}.
    const auto length = [&](const char* key, sim::LengthDistribution& d) {
      const std::string lp = child(tp, key);
      const json* v = Reader::find(*traffic, key);
      if (v == nullptr) {
        r.error(lp, "required (tokens per request: a number, or {mean, p95}) is missing");
        return;
      }
      if (v->is_object()) {
        r.unknown_keys(*v, lp, {"mean", "p95"});
        const json* mean = Reader::find(*v, "mean");
        if (mean == nullptr) {
          r.error(child(lp, "mean"), "required (mean tokens per request) is missing");
        } else if (auto x = r.number(*mean, child(lp, "mean"), 1.0, kMaxTokens, false)) {
          d.mean = *x;
        }
        if (const json* p95 = Reader::find(*v, "p95")) {
          if (auto x = r.number(*p95, child(lp, "p95"), 1.0, kMaxTokens, false)) {
            d.p95 = *x;
            if (d.mean > 0 && *x < d.mean) r.error(child(lp, "p95"), "must be at least the mean (" + detail::describe(*mean) + "); got " + detail::describe(*p95));
          }
        }
      } else if (auto x = r.number(*v, lp, 1.0, kMaxTokens, false)) {
        d.mean = *x;
      }
    };
    length("input_tokens", t.input);
    length("output_tokens", t.output);
    if (const json* v = Reader::find(*traffic, "prefix_hit")) {
      if (auto x = r.number(*v, child(tp, "prefix_hit"), 0.0, 0.99, false)) t.prefix_hit = *x;
    }
    if (const json* v = Reader::find(*traffic, "hourly_load")) {
      const std::string hp = child(tp, "hourly_load");
      if (!v->is_array() || v->size() != 24) {
        r.error(hp, "expected 24 numbers (each hour's share of the peak rate, the peak 1); got " + detail::describe(*v));
      } else {
        t.hourly_load.clear();
        double peak = 0;
        for (std::size_t i = 0; i < 24; ++i) {
          if (auto x = r.number((*v)[i], child(hp, i), 0.0, 1.0, false)) {
            t.hourly_load.push_back(*x);
            peak = std::max(peak, *x);
          }
        }
        if (t.hourly_load.size() == 24 && peak < 1.0) r.error(hp, "the peak hour must be 1 (shares of the peak rate)");
      }
    }
  }
  if (const json* slo = Reader::find(w, "slo")) {
    const std::string sp = child(p, "slo");
    if (r.object(*slo, sp)) {
      r.unknown_keys(*slo, sp, {"ttft_s", "tpot_s", "e2e_s", "percentile"});
      for (auto [key, dst] : {std::pair{"ttft_s", &job.slo.ttft}, std::pair{"tpot_s", &job.slo.tpot},
                              std::pair{"e2e_s", &job.slo.e2e}}) {
        if (const json* v = Reader::find(*slo, key)) {
          if (auto x = r.number(*v, child(sp, key), 0.0, 86400.0, true)) *dst = units::seconds(*x);
        }
      }
      if (const json* v = Reader::find(*slo, "percentile")) {
        if (auto x = r.number(*v, child(sp, "percentile"), 0.5, 0.999, false)) job.slo.percentile = *x;
      }
    }
  }
}

}  // namespace

void check_serve_section(const json& workload, std::string_view where, Diagnostics& diags) {
  Reader r{std::string(where), diags};
  if (!r.object(workload, "/workload")) return;
  read_serve(workload, r, nullptr, nullptr);
}

Result<ServeRequest> serve_request(const json& doc, const ParsedScenario& scenario, const Catalogs& catalogs,
                                   std::string_view where) {
  Diagnostics diags;
  Reader r{std::string(where), diags};
  ServeRequest out;
  const json* w = doc.is_object() ? Reader::find(doc, "workload") : nullptr;
  if (w == nullptr || !w->is_object()) {
    r.error("/workload", "required ({\"kind\": \"serve\", engine, traffic, ...}) is missing");
    return std::unexpected(std::move(diags));
  }
  out.job.model = scenario.scenario.model;
  out.model_id = scenario.model_id;
  out.cluster = scenario.scenario.cluster;
  out.currency = scenario.scenario.pricing.currency;
  read_serve(*w, r, &out, &catalogs);
  if (has_errors(diags)) return std::unexpected(std::move(diags));
  if (const auto why = sim::check_serve_job(out.job, out.cluster)) {
    r.error("/workload", render(*why));
    return std::unexpected(std::move(diags));
  }
  for (const auto& w2 : scenario.warnings) out.warnings.push_back(w2);
  return out;
}

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

// Why a plan is not feasible, in words (empty when it is).
std::string reason_text(const sim::ServePlan& p) { return p.reason ? render(*p.reason) : std::string(); }

// Why the cheapest, in words, against the runner-up (empty unless both are feasible).
std::string explain_choice(const std::vector<ServeOption>& options) {
  if (options.size() < 2 || !options[0].plan.feasible || !options[1].plan.feasible) return {};
  const auto& a = options[0];
  const auto& b = options[1];
  std::ostringstream s;
  const double q = a.job.slo.percentile * 100;
  s << option_name(a) << " instead of " << option_name(b) << ": " << a.plan.gpus << " GPUs instead of "
    << b.plan.gpus << " (KV cache " << fixed(static_cast<double>(a.plan.memory.kv_tokens) / 1000.0, 0) << "k tokens per replica vs "
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

}  // namespace

const ServeOption& ServeResult::recommended() const {
  if (!options.empty() && options.front().plan.feasible) return options.front();
  return asked;
}

ServeResult plan_request(const ServeRequest& r, const sim::Profile* profile, int curve_points) {
  sim::ServePlanRequest ask;
  ask.job = r.job;
  ask.cluster = r.cluster;
  ask.compare = r.compare;
  ask.offerings = r.offerings;
  ask.engines = r.engines;
  ask.curve_points = curve_points;
  // Each engine's assumptions (CUDA-graph kernel gaps) hold for its layouts.
  const sim::ServeCostFactory cost = [profile](const sim::Cluster& c, const sim::EngineSpec& e) {
    return make_cost_model(c, profile, sim::serving_assumptions(e));
  };
  sim::ServePlanning planned = sim::plan_serve_options(ask, cost);
  ServeResult out;
  out.asked = std::move(planned.asked);
  out.options = std::move(planned.options);
  out.pareto = std::move(planned.pareto);
  out.curve = std::move(planned.curve);
  out.cost_model = std::move(planned.cost_source);
  out.explanation = explain_choice(out.options);
  return out;
}

Result<ServePlanned> plan_serve_document(const json& doc, const Catalogs& catalogs, std::string_view scenario_file,
                                         const std::string& sheet_file, const sim::Profile* profile, int curve_points,
                                         std::string_view where, const OfferingFilter* offerings,
                                         const std::vector<std::string>& engines) {
  ServePlanned out;
  auto priced = parse_priced_scenario(doc, catalogs, scenario_file, sheet_file, where);
  if (!priced) return std::unexpected(std::move(priced.error()));
  out.sheet = priced->sheet;
  const Catalogs& used = priced->catalogs(catalogs);
  const ParsedScenario& parsed = priced->parsed;
  if (parsed.scenario.workload.kind != sim::WorkloadKind::serve) {
    return std::unexpected(Diagnostics{{.where = std::string(where) + "#/workload/kind",
                                        .message = "capplan serve plans a serve workload; got '" +
                                                   std::string(to_string(parsed.scenario.workload.kind)) +
                                                   "' (capplan estimate plans training)"}});
  }
  auto request = serve_request(doc, parsed, used, where);
  if (!request) return std::unexpected(std::move(request.error()));
  for (auto& n : priced->sheet_notes) request->warnings.push_back(std::move(n));
  for (const auto& id : engines) {
    const EngineEntry* e = used.find_engine(id);
    if (e == nullptr) {
      return std::unexpected(Diagnostics{{.where = "--engines",
                                          .message = "unknown engine '" + id + "' (" + suggest(id, used.engine_ids()) + ")"}});
    }
    request->engines.push_back(e->spec);
    request->compare = true;
  }
  if (offerings != nullptr) {
    auto list = offerings_from_catalog(used, *offerings);
    if (!list) return std::unexpected(std::move(list.error()));
    request->offerings = std::move(list->offerings);
    for (auto& n : list->notes) request->warnings.push_back(std::move(n));
    request->compare = true;
  }
  if (profile != nullptr && !sim::profile_measured_on(*profile, request->cluster.gpu)) {
    request->warnings.push_back("profile: measured on " + profile->context_value("device") + ", not on " +
                                request->cluster.gpu.id + "; the datasheet model prices what it did not measure");
  }
  out.result = plan_request(*request, profile, curve_points);
  out.request = std::move(*request);
  return out;
}

void train_then_serve(ServeResult& result, const ServeRequest& r, const ParsedScenario& training,
                      const sim::Estimate& estimate, int months) {
  TrainThenServe t;
  const sim::Scenario& s = training.scenario;
  t.training_workload = to_string(s.workload.kind);
  t.training_model = s.model.name.empty() ? training.model_id : s.model.name;
  t.training_gpus = static_cast<int>(std::min<long long>(s.cluster.gpus, 1 << 30));
  const double wall_s = sim::plan_time(estimate).base();
  t.training_days = wall_s / 86400.0;
  t.training_gpu_hours = wall_s * static_cast<double>(s.cluster.gpus) / 3600.0;
  if (const auto c = sim::plan_cost(estimate)) t.training_usd = c->base();
  const ServeOption& o = result.recommended();
  t.serving_layout = layout_name(o.job);
  t.serving_gpus = o.plan.gpus;
  t.serving_gpu_hours_per_month = o.plan.gpu_hours_per_month;
  t.serving_usd_per_month = o.plan.usd_per_month;
  t.months = std::max(months, 1);
  std::optional<double> total = t.training_usd;
  t.cumulative_usd.push_back(total);
  for (int m = 1; m <= t.months; ++m) {
    if (total && t.serving_usd_per_month) {
      *total += *t.serving_usd_per_month;
    } else {
      total.reset();
    }
    t.cumulative_usd.push_back(total);
  }
  t.total_usd = total;
  if (!o.plan.feasible) t.notes.push_back("the serving layout is not feasible: " + reason_text(o.plan));
  if (!t.training_usd) t.notes.push_back("the training scenario has no price: its cost and the total are unknown");
  if (!t.serving_usd_per_month) t.notes.push_back("the serving scenario has no price: the serving cost and the total are unknown");
  if (s.model.name != r.job.model.name) {
    t.notes.push_back("the training scenario's model (" + t.training_model + ") is not the served model (" +
                      (r.job.model.name.empty() ? r.model_id : r.job.model.name) + ")");
  }
  if (s.cluster.gpu.id != r.cluster.gpu.id) {
    t.notes.push_back("trained on " + s.cluster.gpu.id + ", served on " + r.cluster.gpu.id);
  }
  if (!(s.pricing.currency == r.currency) && s.pricing.currency.code != r.currency.code) {
    t.notes.push_back("the training scenario prices in " + s.pricing.currency.code + ": its cost is converted to " +
                      r.currency.code + " through US dollars");
  }
  result.lifecycle = std::move(t);
}

nlohmann::json example_serve_scenario() {
  return {{"name", "Llama 3.1 8B API at 50 requests/s"},
          {"workload",
           {{"kind", "serve"},
            {"engine", "vllm"},
            {"weights", "bf16"},
            {"tp", 1},
            {"compare", true},
            {"traffic",
             {{"arrival", "poisson"},
              {"rate_per_s", 50},
              {"input_tokens", 1000},
              {"output_tokens", 300}}},
            {"slo", {{"e2e_s", 2.0}, {"percentile", 0.95}}}}},
          {"model", {{"preset", "llama3.1-8b"}}},
          {"cluster", {{"instance", "tencent-hccpnv5"}}}};
}

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
            {"cost_per_month", money(p.usd_per_month, r.currency)},
            {"cost_per_million_input_tokens", money(p.usd_per_million_input, r.currency)},
            {"cost_per_million_output_tokens", money(p.usd_per_million_output, r.currency)},
            {"cost_usd_per_month", money(p.usd_per_month, sim::Currency{})}};
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
  return j;
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
    s << "    " << std::string("layout") << std::string(width - 6 + 2, ' ')
      << "GPUs  KV tokens  max req/s  latency s  per month         per 1M out\n";
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
