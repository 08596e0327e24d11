// SPDX-License-Identifier: Apache-2.0
// The records file (docs/calibration.md, "Records file"): every measurement with all its samples,
// so a fit can be redone offline and real records can be kept as test fixtures.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capplan/calibrate/fit.hpp"
#include "reading/json_reader.hpp"  // capplan_data's validation toolkit (header-only)

namespace capplan::calib {
namespace {

using nlohmann::json;
using data::detail::child;
using data::detail::finite_or_zero;
using data::detail::Object;
using data::detail::precision;
using data::detail::Reader;

constexpr const char* kSchema = "capplan-records";

json stats_to_json(const SampleStats& s) {
  json samples = json::array();
  for (double x : s.samples_s) samples.push_back(finite_or_zero(x));
  return {{"samples_s", samples}, {"min_s", finite_or_zero(s.min_s)},   {"median_s", finite_or_zero(s.median_s)},
          {"p99_s", finite_or_zero(s.p99_s)}, {"mean_s", finite_or_zero(s.mean_s)}, {"cv", finite_or_zero(s.cv)}};
}

SampleStats read_stats(Object& parent) {
  SampleStats s;
  parent.object("time", [&](Object& o) {
    if (const json* v = o.get("samples_s")) {
      if (!v->is_array() || v->empty()) {
        o.error("samples_s", "expected a non-empty list of times in seconds; got " + data::detail::describe(*v));
      } else {
        for (std::size_t i = 0; i < v->size(); ++i) {
          // 0 is a kernel below the timer's resolution (kept here, left out of the fits).
          if (auto x = o.r.number((*v)[i], child(o.at("samples_s"), i), 0, data::detail::kInf, false)) {
            s.samples_s.push_back(*x);
          }
        }
      }
    }
    s.min_s = o.number("min_s", 0, false);
    s.median_s = o.number("median_s", 0, false);
    s.p99_s = o.number("p99_s", 0, false);
    s.mean_s = o.number("mean_s", 0, false);
    s.cv = o.number("cv", 0, false);
    if (!(s.min_s <= s.median_s && s.median_s <= s.p99_s)) {
      o.error("median_s", "must lie between min_s and p99_s; got " + data::detail::fmt(s.median_s));
    }
    o.known({"samples_s", "min_s", "median_s", "p99_s", "mean_s", "cv"});
  });
  return s;
}

}  // namespace

std::string measurements_to_json(const Measurements& m) {
  const Context& c = m.context;
  json root;
  root["schema"] = kSchema;
  root["schema_version"] = kRecordsSchemaVersion;
  root["context"] = {{"backend", c.backend},
                     {"device", c.device},
                     {"host", c.host},
                     {"date_utc", c.date_utc},
                     {"capplan_version", c.capplan_version},
                     {"versions", c.versions},
                     {"clocks", c.clocks},
                     {"properties", c.properties},
                     {"ranks", c.ranks},
                     {"ranks_per_node", c.ranks_per_node},
                     {"devices_per_rank", c.devices_per_rank},
                     {"threads", c.threads}};
  json gemms = json::array();
  for (const auto& g : m.gemms) {
    gemms.push_back({{"m", g.shape.m},
                     {"n", g.shape.n},
                     {"k", g.shape.k},
                     {"batch", g.shape.batch},
                     {"dtype", sim::to_string(g.shape.dtype)},
                     {"flops", finite_or_zero(g.flops)},
                     {"bytes", finite_or_zero(g.bytes)},
                     {"time", stats_to_json(g.time)}});
  }
  root["gemms"] = gemms;
  json memory = json::array();
  for (const auto& r : m.memory) {
    memory.push_back({{"pattern", r.pattern}, {"bytes", finite_or_zero(r.bytes)}, {"time", stats_to_json(r.time)}});
  }
  root["memory"] = memory;
  json colls = json::array();
  for (const auto& r : m.collectives) {
    colls.push_back({{"kind", sim::to_string(r.kind)},
                     {"bytes", finite_or_zero(r.bytes)},
                     {"ranks", r.ranks},
                     {"ranks_per_node", r.ranks_per_node},
                     {"nodes", r.nodes},
                     {"tier", r.tier},
                     {"algbw_Bps", finite_or_zero(r.algbw_Bps)},
                     {"busbw_Bps", finite_or_zero(r.busbw_Bps)},
                     {"time", stats_to_json(r.time)}});
  }
  root["collectives"] = colls;
  json steps = json::array();
  for (const auto& s : m.steps) {
    json comps = json::object();
    for (const auto& [k, v] : s.components_s) comps[k] = finite_or_zero(v);
    steps.push_back({{"shape",
                      {{"layers", s.shape.layers},
                       {"hidden", s.shape.hidden},
                       {"heads", s.shape.heads},
                       {"ffn_hidden", s.shape.ffn_hidden},
                       {"seq_len", s.shape.seq_len},
                       {"micro_batch", s.shape.micro_batch},
                       {"gated_ffn", s.shape.gated_ffn},
                       {"dtype", sim::to_string(s.shape.dtype)},
                       {"kv_heads", s.shape.kv_heads},
                       {"rmsnorm", s.shape.rmsnorm},
                       {"rope", s.shape.rope},
                       {"flash_attention", s.shape.flash_attention},
                       {"decode_context", s.shape.decode_context}}},
                     {"time", stats_to_json(s.time)},
                     {"components_s", comps}});
  }
  root["steps"] = steps;
  json launches = json::array();
  for (const auto& r : m.launches) {
    launches.push_back({{"pattern", r.pattern}, {"kernels", r.kernels}, {"time", stats_to_json(r.time)}});
  }
  root["launches"] = launches;
  return root.dump(2) + "\n";
}

Result<Measurements> parse_measurements(const std::string& text, const std::string& where) {
  auto parsed = data::detail::parse_json_text(text, where);
  if (!parsed) return std::unexpected(parsed.error());
  const json& root = *parsed;
  Diagnostics diags;
  Reader r(where, diags);
  if (!r.object(root, "")) return std::unexpected(std::move(diags));
  Measurements m;
  Object top{root, "", r};
  top.schema(kSchema, kRecordsSchemaVersion);
  top.known({"schema", "schema_version", "context", "gemms", "memory", "collectives", "steps", "launches"});

  top.object("context", [&](Object& o) {
    Context& c = m.context;
    c.backend = o.string("backend");
    c.device = o.string("device");
    c.host = o.string("host");
    c.date_utc = o.string("date_utc");
    c.capplan_version = o.string("capplan_version");
    c.versions = o.string_map("versions");
    c.clocks = o.string_map("clocks");
    // Optional: records written before device properties were recorded have none.
    if (o.has("properties")) c.properties = o.string_map("properties");
    c.ranks = static_cast<int>(o.integer("ranks", 1, 1));
    c.ranks_per_node = static_cast<int>(o.integer("ranks_per_node", 1, 1));
    c.devices_per_rank = static_cast<int>(o.integer("devices_per_rank", 1, 1));
    c.threads = static_cast<int>(o.integer("threads", 1, 1));
    o.known({"backend", "device", "host", "date_utc", "capplan_version", "versions", "clocks", "properties",
             "ranks", "ranks_per_node", "devices_per_rank", "threads"});
  });
  top.list("gemms", [&](Object& o) {
    GemmRecord g;
    g.shape.m = o.integer("m", 1);
    g.shape.n = o.integer("n", 1);
    g.shape.k = o.integer("k", 1);
    g.shape.batch = o.integer("batch", 1, 1);
    g.shape.dtype = precision(o);
    g.flops = o.number("flops", 0, true);
    g.bytes = o.number("bytes", 0, true);
    g.time = read_stats(o);
    o.known({"m", "n", "k", "batch", "dtype", "flops", "bytes", "time"});
    m.gemms.push_back(std::move(g));
  });
  top.list("memory", [&](Object& o) {
    MemoryRecord rec;
    rec.pattern = o.string("pattern", true, "copy, norm or elementwise");
    rec.bytes = o.number("bytes", 0, true);
    rec.time = read_stats(o);
    o.known({"pattern", "bytes", "time"});
    m.memory.push_back(std::move(rec));
  });
  top.list("collectives", [&](Object& o) {
    CollectiveRecord rec;
    rec.kind =
        o.one_of("kind", sim::collective_kind_from_string, data::detail::kCollectiveNames, "collective", rec.kind);
    rec.bytes = o.number("bytes", 0, true);
    rec.ranks = static_cast<int>(o.integer("ranks", 2, 2));
    rec.ranks_per_node = static_cast<int>(o.integer("ranks_per_node", 1, 1));
    rec.nodes = static_cast<int>(o.integer("nodes", 1, 1));
    rec.tier = o.one_of("tier", data::detail::kTierNames, "tier", /*empty_ok=*/true);
    rec.algbw_Bps = o.number("algbw_Bps", 0, true);
    rec.busbw_Bps = o.number("busbw_Bps", 0, false);
    rec.time = read_stats(o);
    o.known({"kind", "bytes", "ranks", "ranks_per_node", "nodes", "tier", "algbw_Bps", "busbw_Bps", "time"});
    m.collectives.push_back(std::move(rec));
  });
  top.list("steps", [&](Object& o) {
    StepRecord s;
    o.object("shape", [&](Object& so) {
      s.shape.layers = static_cast<int>(so.integer("layers", 1, 1));
      s.shape.hidden = static_cast<int>(so.integer("hidden", 1));
      s.shape.heads = static_cast<int>(so.integer("heads", 1));
      s.shape.ffn_hidden = static_cast<int>(so.integer("ffn_hidden", 1));
      s.shape.seq_len = static_cast<int>(so.integer("seq_len", 1));
      s.shape.micro_batch = static_cast<int>(so.integer("micro_batch", 1, 1));
      s.shape.gated_ffn = so.boolean("gated_ffn");
      s.shape.dtype = precision(so);
      // Optional (records written before the layer variants existed describe the default layer).
      if (so.has("kv_heads")) s.shape.kv_heads = static_cast<int>(so.integer("kv_heads", 0));
      if (so.has("rmsnorm")) s.shape.rmsnorm = so.boolean("rmsnorm");
      if (so.has("rope")) s.shape.rope = so.boolean("rope");
      if (so.has("flash_attention")) s.shape.flash_attention = so.boolean("flash_attention");
      if (so.has("decode_context")) s.shape.decode_context = static_cast<int>(so.integer("decode_context", 0));
      so.known({"layers", "hidden", "heads", "ffn_hidden", "seq_len", "micro_batch", "gated_ffn", "dtype", "kv_heads",
                "rmsnorm", "rope", "flash_attention", "decode_context"});
    });
    s.time = read_stats(o);
    s.components_s = o.number_map("components_s", 0);
    o.known({"shape", "time", "components_s"});
    m.steps.push_back(std::move(s));
  });
  // Optional: records written before the launch sweep have none.
  if (top.has("launches")) {
    top.list("launches", [&](Object& o) {
      LaunchRecord rec;
      rec.pattern = o.one_of("pattern", std::vector<std::string>(std::begin(sim::kLaunchPatterns), std::end(sim::kLaunchPatterns)),
                             "launch pattern");
      const std::int64_t kernels = o.integer("kernels", 1, 1);
      if (kernels > 1'000'000) o.error("kernels", "must be at most 1000000; got " + std::to_string(kernels));
      rec.kernels = static_cast<int>(std::min<std::int64_t>(kernels, 1'000'000));
      rec.time = read_stats(o);
      o.known({"pattern", "kernels", "time"});
      m.launches.push_back(std::move(rec));
    });
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return m;
}

}  // namespace capplan::calib
