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
#include "capplan/data/fields.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/price_sheet.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/search/search.hpp"
#include "input/fields/read_table.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data {

namespace {

using nlohmann::json;
using detail::child;
using detail::Reader;

// The keys the serve tables name directly below `parent` ("" the workload section).
std::vector<std::string> serve_keys(std::string_view parent) {
  std::vector<std::string> keys;
  if (parent.empty()) keys.emplace_back("kind");
  for (const auto& table : serve_field_tables()) fields_detail::add_keys(table, parent, keys);
  if (parent == "engine") fields_detail::add_keys(engine_fields(), "", keys);
  return keys;
}

// Reads the serve workload through its field tables (input/fields/serve_fields.cpp); `out` (may
// be null: checking only) receives the values, `catalogs` (may be null) resolves the engine id.
void read_serve(const json& w, Reader& r, ServeRequest* out, const Catalogs* catalogs) {
  const std::string p = "/workload";
  r.unknown_keys(w, p, serve_keys(""));
  ServeRequest scratch;
  ServeRequest& o = out != nullptr ? *out : scratch;
  sim::ServeJob& job = o.job;
  // Engine: an id, or {id, overrides}.
  const json* engine = Reader::find(w, "engine");
  std::string engine_id = "vllm";
  if (engine != nullptr) {
    if (engine->is_object()) {
      const std::string ep = child(p, "engine");
      r.unknown_keys(*engine, ep, serve_keys("engine"));
      if (const json* id = Reader::find(*engine, "id")) {
        if (auto s = r.string(*id, child(ep, "id"))) engine_id = *s;
      }
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
  // The engine's overrides over its recipe (the catalog record's keys), the layout, the traffic
  // and the latency target.
  if (engine != nullptr && engine->is_object()) {
    fields_detail::read_table(*engine, child(p, "engine"), engine_fields(), job.engine, r);
  }
  fields_detail::read_table(w, p, serve_layout_fields(), o, r);
  const std::string tp = child(p, "traffic");
  const json* traffic = Reader::find(w, "traffic");
  if (traffic == nullptr) {
    r.error(tp, "required (arrival, rate_per_s or concurrency, input_tokens, output_tokens) is missing");
  } else if (r.object(*traffic, tp)) {
    r.unknown_keys(*traffic, tp, serve_keys("traffic"));
    fields_detail::read_table(w, p, serve_traffic_fields(), o, r);
    const sim::Traffic& t = job.traffic;
    if (t.arrival == sim::Arrival::poisson && Reader::find(*traffic, "rate_per_s") == nullptr) {
      r.error(child(tp, "rate_per_s"), "required for poisson arrivals (requests per second) is missing");
    }
    if (t.arrival == sim::Arrival::closed_loop && Reader::find(*traffic, "concurrency") == nullptr) {
      r.error(child(tp, "concurrency"), "required for closed_loop arrivals (clients) is missing");
    }
    if (t.hourly_load.size() == 24 && *std::max_element(t.hourly_load.begin(), t.hourly_load.end()) < 1.0) {
      r.error(child(tp, "hourly_load"), "the peak hour must be 1 (shares of the peak rate)");
    }
  }
  if (const json* slo = Reader::find(w, "slo")) {
    const std::string sp = child(p, "slo");
    if (r.object(*slo, sp)) r.unknown_keys(*slo, sp, serve_keys("slo"));
  }
  fields_detail::read_table(w, p, serve_slo_fields(), o, r);
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
  out.job.pricing = scenario.scenario.pricing;
  read_serve(*w, r, &out, &catalogs);
  if (const auto why = sim::check_serve_purchase(out.job.pricing)) r.error("/pricing/purchase", render(*why));
  // A context the scenario gives (model.seq_len) must hold the long requests: the p95 prompt and
  // the p95 output together (an engine refuses a longer one; the preset's training length is not
  // taken for the served context).
  const json* model = Reader::find(doc, "model");
  if (model != nullptr && model->is_object() && Reader::find(*model, "seq_len") != nullptr && !has_errors(diags)) {
    const sim::Traffic& t = out.job.traffic;
    const double in = std::max(t.input.mean, t.input.p95);
    const double gen = std::max(t.output.mean, t.output.p95);
    const double context = static_cast<double>(out.job.model.seq_len);
    if (context < in + gen) {
      r.error("/model/seq_len", "the model's context (" + detail::fmt(context) + " tokens) is shorter than the traffic's p95 "
                                "prompt plus p95 output (" + detail::fmt(in) + " + " + detail::fmt(gen) + " = " + detail::fmt(in + gen) +
                                " tokens): give a seq_len of at least " + detail::fmt(in + gen) + ", or shorter requests");
    }
  }
  if (has_errors(diags)) return std::unexpected(std::move(diags));
  if (const auto why = sim::check_serve_job(out.job, out.cluster)) {
    // A weight format the GPU cannot run is one layout among those compare mode plans: the asked
    // one is shown as not feasible, with why, and the other formats are planned.
    if (out.compare && why->code == sim::FindingCode::serve_weights_need_tensor_cores) {
      out.warnings.push_back("workload.weights: " + render(*why) + "; the other weight formats are compared");
    } else {
      r.error("/workload", render(*why));
      return std::unexpected(std::move(diags));
    }
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
