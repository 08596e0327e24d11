// SPDX-License-Identifier: Apache-2.0
// A serving scenario's workload section read into a ServeRequest (engine, layout, traffic, SLO);
// planning it is input/serve_plan.cpp, writing the plan output/serve_output.cpp.
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

}  // namespace capplan::data
