// SPDX-License-Identifier: Apache-2.0
// The serve workload's fields (workload.kind serve; capplan serve): engine overrides, the
// replica's layout, the traffic and the latency target, below /workload.
#include <array>
#include <optional>
#include <string>

#include "capplan/data/fields.hpp"

namespace capplan::data {
namespace {

using nlohmann::json;

constexpr const char* kFormats[] = {"bf16", "fp16", "fp8", "int8", "int4", "fp4"};
constexpr const char* kKv[] = {"bf16", "fp16", "fp8"};
constexpr const char* kArrivals[] = {"poisson", "closed_loop", "offline"};

// Per request: beyond any model's context.
constexpr double kMaxTokens = 10e6;
constexpr const char* kMaxTokensWhy = "beyond any model's context";
// A replica's layout: more GPUs than any serving deployment uses per replica.
constexpr double kMaxLayout = 1024;

void set_length(sim::LengthDistribution& d, const json& v) {
  if (v.is_object()) {
    d.mean = v.at("mean").get<double>();
    if (v.contains("p95")) d.p95 = v.at("p95").get<double>();
  } else {
    d.mean = v.get<double>();
  }
}

const Field<ServeRequest> kEngine[] = {
    {{.pointer = "engine/id",
      .kind = FieldKind::text,
      .help = "the engine recipe id (capplan catalog engines)",
      .flag = {"--engine", "ID", "Serving engine recipe (capplan catalog engines), default vllm", "Engine and layout"}},
     nullptr},  // read by hand: workload.engine may be the id itself; its overrides are engine_fields()
};

const Field<ServeRequest> kLayout[] = {
    {{.pointer = "weights",
      .kind = FieldKind::choice,
      .help = "weight format of the layers' linears",
      .flag = {"--weights", "NAME", "bf16 (default), fp16, fp8, int8, int4 (AWQ/GPTQ), fp4 (NVFP4)",
               "Engine and layout"},
      .choices = kFormats,
      .noun = "weight format"},
     [](ServeRequest& o, const json& v) { o.job.weights = *sim::weight_format_from_string(v.get<std::string>()); }},
    {{.pointer = "kv_cache",
      .kind = FieldKind::choice,
      .help = "KV-cache precision",
      .flag = {"--kv-cache", "NAME", "KV-cache precision: bf16 (default), fp16, fp8", "Engine and layout"},
      .choices = kKv,
      .noun = "KV-cache precision"},
     [](ServeRequest& o, const json& v) { o.job.kv = *sim::precision_from_string(v.get<std::string>()); }},
    {{.pointer = "tp",
      .kind = FieldKind::integer,
      .unit = "GPUs",
      .min = 1,
      .max = kMaxLayout,
      .help = "tensor-parallel GPUs per replica",
      .flag = {"--tp", "INT", "Tensor-parallel GPUs per replica (default 1)", "Engine and layout"}},
     [](ServeRequest& o, const json& v) { o.job.tp = v.get<int>(); }},
    {{.pointer = "pp",
      .kind = FieldKind::integer,
      .unit = "stages",
      .min = 1,
      .max = kMaxLayout,
      .help = "pipeline stages per replica",
      .flag = {"--pp", "INT", "Pipeline stages per replica (default 1)", "Engine and layout"}},
     [](ServeRequest& o, const json& v) { o.job.pp = v.get<int>(); }},
    {{.pointer = "ep",
      .kind = FieldKind::integer,
      .unit = "GPUs",
      .min = 1,
      .max = kMaxLayout,
      .help = "MoE, tp for whole experts per GPU",
      .flag = {"--ep", "INT", "MoE: tp for whole experts per GPU (default 1: experts split over TP)",
               "Engine and layout"}},
     [](ServeRequest& o, const json& v) { o.job.ep = v.get<int>(); }},
    {{.pointer = "compare",
      .kind = FieldKind::boolean,
      .help = "also plan every TP size and weight format",
      .flag = {"--compare", "BOOL", "Also plan every TP size and weight format; Pareto front", "Engine and layout"}},
     [](ServeRequest& o, const json& v) { o.compare = v.get<bool>(); }},
};

const Field<ServeRequest> kTraffic[] = {
    {{.pointer = "traffic/arrival",
      .kind = FieldKind::choice,
      .help = "how requests arrive",
      .flag = {"--arrival", "NAME", "poisson (default), closed_loop or offline", "Traffic"},
      .choices = kArrivals,
      .noun = "arrival"},
     [](ServeRequest& o, const json& v) {
       const std::string s = v.get<std::string>();
       o.job.traffic.arrival = s == "poisson"       ? sim::Arrival::poisson
                               : s == "closed_loop" ? sim::Arrival::closed_loop
                                                    : sim::Arrival::offline;
     }},
    {{.pointer = "traffic/rate_per_s",
      .kind = FieldKind::number,
      .unit = "requests/s",
      .min = 0,
      .max = 1e7,
      .min_open = true,
      .help = "peak requests per second (poisson)",
      .flag = {"--rate", "REQ/S", "Peak request rate (Poisson arrivals)", "Traffic"}},
     [](ServeRequest& o, const json& v) { o.job.traffic.rate = v.get<double>(); }},
    {{.pointer = "traffic/concurrency",
      .kind = FieldKind::integer,
      .unit = "clients",
      .min = 1,
      .max = 1e6,
      .help = "clients (closed_loop)",
      .flag = {"--concurrency", "INT", "Clients (closed_loop arrivals)", "Traffic"}},
     [](ServeRequest& o, const json& v) { o.job.traffic.concurrency = v.get<int>(); }},
    {{.pointer = "traffic/requests",
      .kind = FieldKind::integer,
      .unit = "requests",
      .min = 1,
      .max = 1e6,
      .help = "requests to simulate",
      .flag = {"--requests", "INT", "Requests to simulate (default: automatic)", "Traffic"}},
     [](ServeRequest& o, const json& v) { o.job.traffic.requests = static_cast<std::int64_t>(v.get<double>()); }},
    {{.pointer = "traffic/input_tokens",
      .kind = FieldKind::length,
      .unit = "tokens",
      .min = 1,
      .max = kMaxTokens,
      .help = "tokens per request: a number, or {mean, p95}",
      .bound = kMaxTokensWhy,
      .flag = {"--input-tokens", "TOKENS", "Mean prompt tokens", "Traffic"},
      .p95_flag = {"--input-p95", "TOKENS", "95th percentile of prompt tokens", "Traffic"}},
     [](ServeRequest& o, const json& v) { set_length(o.job.traffic.input, v); }},
    {{.pointer = "traffic/output_tokens",
      .kind = FieldKind::length,
      .unit = "tokens",
      .min = 1,
      .max = kMaxTokens,
      .help = "tokens per request: a number, or {mean, p95}",
      .bound = kMaxTokensWhy,
      .flag = {"--output-tokens", "TOKENS", "Mean generated tokens", "Traffic"},
      .p95_flag = {"--output-p95", "TOKENS", "95th percentile of generated tokens", "Traffic"}},
     [](ServeRequest& o, const json& v) { set_length(o.job.traffic.output, v); }},
    {{.pointer = "traffic/prefix_hit",
      .kind = FieldKind::number,
      .min = 0,
      .max = 0.99,
      .help = "share of prompt tokens in the prefix cache",
      .flag = {"--prefix-hit", "FRACTION", "Share of prompt tokens in the prefix cache", "Traffic"}},
     [](ServeRequest& o, const json& v) { o.job.traffic.prefix_hit = v.get<double>(); }},
    {{.pointer = "traffic/hourly_load",
      .kind = FieldKind::number,
      .min = 0,
      .max = 1,
      .help = "each hour's share of the peak rate, the peak 1",
      .items = 24},
     [](ServeRequest& o, const json& v) { o.job.traffic.hourly_load = v.get<std::vector<double>>(); }},
};

constexpr double kDay = 86400.0;

const Field<ServeRequest> kSlo[] = {
    {{.pointer = "slo/ttft_s",
      .kind = FieldKind::number,
      .unit = "s",
      .min = 0,
      .max = kDay,
      .min_open = true,
      .help = "time to first token",
      .flag = {"--ttft-s", "S", "Time-to-first-token target", "Latency target"}},
     [](ServeRequest& o, const json& v) { o.job.slo.ttft = units::seconds(v.get<double>()); }},
    {{.pointer = "slo/tpot_s",
      .kind = FieldKind::number,
      .unit = "s",
      .min = 0,
      .max = kDay,
      .min_open = true,
      .help = "time per output token",
      .flag = {"--tpot-s", "S", "Time-per-output-token target", "Latency target"}},
     [](ServeRequest& o, const json& v) { o.job.slo.tpot = units::seconds(v.get<double>()); }},
    {{.pointer = "slo/e2e_s",
      .kind = FieldKind::number,
      .unit = "s",
      .min = 0,
      .max = kDay,
      .min_open = true,
      .help = "end-to-end latency",
      .flag = {"--e2e-s", "S", "End-to-end latency target", "Latency target"}},
     [](ServeRequest& o, const json& v) { o.job.slo.e2e = units::seconds(v.get<double>()); }},
    {{.pointer = "slo/percentile",
      .kind = FieldKind::number,
      .min = 0.5,
      .max = 0.999,
      .help = "the percentile the targets hold at",
      .flag = {"--percentile", "Q", "Percentile of the targets (default 0.95)", "Latency target"}},
     [](ServeRequest& o, const json& v) { o.job.slo.percentile = v.get<double>(); }},
    {{.pointer = "headroom",
      .kind = FieldKind::number,
      .min = 0,
      .max = 0.9,
      .help = "replicas for peak / (1 - headroom)",
      .flag = {"--headroom", "FRACTION", "Replicas planned for peak / (1 - headroom) (0.2)", "Latency target"}},
     [](ServeRequest& o, const json& v) { o.job.headroom = v.get<double>(); }},
};

const std::array<std::span<const Field<ServeRequest>>, 4> kServeTables = {kEngine, kLayout, kTraffic, kSlo};

}  // namespace

std::span<const Field<ServeRequest>> serve_engine_fields() { return kEngine; }
std::span<const Field<ServeRequest>> serve_layout_fields() { return kLayout; }
std::span<const Field<ServeRequest>> serve_traffic_fields() { return kTraffic; }
std::span<const Field<ServeRequest>> serve_slo_fields() { return kSlo; }
std::span<const std::span<const Field<ServeRequest>>> serve_field_tables() { return kServeTables; }

}  // namespace capplan::data
