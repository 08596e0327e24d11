// SPDX-License-Identifier: Apache-2.0
// The records file (docs/calibration.md, "Records file"): every measurement with all its samples,
// so a fit can be redone offline and real records can be kept as test fixtures.
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capplan/calibrate/fit.hpp"
#include "json_reader.hpp"  // capplan_data's validation toolkit (header-only)

namespace capplan::calib {
namespace {

using nlohmann::json;
using data::detail::child;
using data::detail::Reader;

constexpr const char* kSchema = "capplan-records";

// Non-finite values never reach the file (nlohmann would write null): they become 0, which the
// parser then rejects where a positive value is required.
double finite(double v) { return std::isfinite(v) ? v : 0.0; }

json stats_to_json(const SampleStats& s) {
  json samples = json::array();
  for (double x : s.samples_s) samples.push_back(finite(x));
  return {{"samples_s", samples}, {"min_s", finite(s.min_s)},   {"median_s", finite(s.median_s)},
          {"p99_s", finite(s.p99_s)}, {"mean_s", finite(s.mean_s)}, {"cv", finite(s.cv)}};
}

// Small typed accessors over Reader: each reports a missing key and returns the default.
struct Obj {
  const json& j;
  std::string path;
  Reader& r;

  const json* get(const char* key) {
    auto it = j.find(key);
    if (it == j.end()) {
      r.error(child(path, key), "required field is missing");
      return nullptr;
    }
    return &*it;
  }
  double number(const char* key, double lo, bool lo_open, double fallback = 0) {
    const json* v = get(key);
    if (v == nullptr) return fallback;
    return r.number(*v, child(path, key), lo, data::detail::kInf, lo_open).value_or(fallback);
  }
  std::int64_t integer(const char* key, double lo, std::int64_t fallback = 0) {
    const json* v = get(key);
    if (v == nullptr) return fallback;
    return r.integer(*v, child(path, key), lo, 9.0e15).value_or(fallback);
  }
  std::string string(const char* key) {
    const json* v = get(key);
    if (v == nullptr) return {};
    return r.string(*v, child(path, key)).value_or("");
  }
  bool boolean(const char* key) {
    const json* v = get(key);
    if (v == nullptr) return false;
    return r.boolean(*v, child(path, key)).value_or(false);
  }
  sim::Precision dtype(const char* key) {
    const std::string s = string(key);
    if (auto p = sim::precision_from_string(s)) return *p;
    if (!s.empty()) r.error(child(path, key), "unknown dtype (known: fp32, tf32, fp16, bf16, fp8); got \"" + s + "\"");
    return sim::Precision::bf16;
  }
  std::map<std::string, std::string> string_map(const char* key) {
    std::map<std::string, std::string> out;
    const json* v = get(key);
    if (v == nullptr || !r.object(*v, child(path, key))) return out;
    for (const auto& [k, val] : v->items()) {
      if (auto s = r.string(val, child(child(path, key), k))) out[k] = *s;
    }
    return out;
  }
  void known(const std::vector<std::string>& keys) { r.unknown_keys(j, path, keys); }
};

SampleStats read_stats(const json& j, const std::string& path, Reader& r) {
  SampleStats s;
  if (!r.object(j, path)) return s;
  Obj o{j, path, r};
  if (const json* v = o.get("samples_s")) {
    if (!v->is_array() || v->empty()) {
      r.error(child(path, "samples_s"), "expected a non-empty list of times in seconds; got " +
                                            data::detail::describe(*v));
    } else {
      for (std::size_t i = 0; i < v->size(); ++i) {
        // 0 is a kernel below the timer's resolution (kept here, left out of the fits).
        if (auto x = r.number((*v)[i], child(child(path, "samples_s"), i), 0, data::detail::kInf, false)) {
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
    r.error(child(path, "median_s"), "must lie between min_s and p99_s; got " + data::detail::fmt(s.median_s));
  }
  o.known({"samples_s", "min_s", "median_s", "p99_s", "mean_s", "cv"});
  return s;
}

template <class F>
void read_list(const json& root, const char* key, const std::string& where, Reader& r, F&& each) {
  auto it = root.find(key);
  const std::string p = child(std::string(), key);
  if (it == root.end()) {
    r.error(p, "required field is missing (a list, may be empty)");
    return;
  }
  if (!it->is_array()) {
    r.error(p, std::string("expected a list; got ") + it->type_name());
    return;
  }
  (void)where;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const std::string ip = child(p, i);
    if (r.object((*it)[i], ip)) each((*it)[i], ip);
  }
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
                     {"flops", finite(g.flops)},
                     {"bytes", finite(g.bytes)},
                     {"time", stats_to_json(g.time)}});
  }
  root["gemms"] = gemms;
  json memory = json::array();
  for (const auto& r : m.memory) {
    memory.push_back({{"pattern", r.pattern}, {"bytes", finite(r.bytes)}, {"time", stats_to_json(r.time)}});
  }
  root["memory"] = memory;
  json colls = json::array();
  for (const auto& r : m.collectives) {
    colls.push_back({{"kind", sim::to_string(r.kind)},
                     {"bytes", finite(r.bytes)},
                     {"ranks", r.ranks},
                     {"ranks_per_node", r.ranks_per_node},
                     {"nodes", r.nodes},
                     {"tier", r.tier},
                     {"algbw_Bps", finite(r.algbw_Bps)},
                     {"busbw_Bps", finite(r.busbw_Bps)},
                     {"time", stats_to_json(r.time)}});
  }
  root["collectives"] = colls;
  json steps = json::array();
  for (const auto& s : m.steps) {
    json comps = json::object();
    for (const auto& [k, v] : s.components_s) comps[k] = finite(v);
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
                       {"flash_attention", s.shape.flash_attention}}},
                     {"time", stats_to_json(s.time)},
                     {"components_s", comps}});
  }
  root["steps"] = steps;
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
  Obj top{root, "", r};
  if (const json* s = top.get("schema"); s != nullptr && (!s->is_string() || s->get<std::string>() != kSchema)) {
    r.error("/schema", std::string("must be \"") + kSchema + "\"; got " + data::detail::describe(*s));
  }
  if (const json* v = top.get("schema_version"); v != nullptr) {
    if (auto n = r.integer(*v, "/schema_version", 1, 1e9); n && *n != kRecordsSchemaVersion) {
      r.error("/schema_version", "unsupported version (this capplan reads " + std::to_string(kRecordsSchemaVersion) +
                                     "); got " + std::to_string(*n));
    }
  }
  top.known({"schema", "schema_version", "context", "gemms", "memory", "collectives", "steps"});

  if (const json* cj = top.get("context"); cj != nullptr && r.object(*cj, "/context")) {
    Obj o{*cj, "/context", r};
    Context& c = m.context;
    c.backend = o.string("backend");
    c.device = o.string("device");
    c.host = o.string("host");
    c.date_utc = o.string("date_utc");
    c.capplan_version = o.string("capplan_version");
    c.versions = o.string_map("versions");
    c.clocks = o.string_map("clocks");
    c.ranks = static_cast<int>(o.integer("ranks", 1, 1));
    c.ranks_per_node = static_cast<int>(o.integer("ranks_per_node", 1, 1));
    c.devices_per_rank = static_cast<int>(o.integer("devices_per_rank", 1, 1));
    c.threads = static_cast<int>(o.integer("threads", 1, 1));
    o.known({"backend", "device", "host", "date_utc", "capplan_version", "versions", "clocks", "ranks",
             "ranks_per_node", "devices_per_rank", "threads"});
  }
  read_list(root, "gemms", where, r, [&](const json& j, const std::string& p) {
    Obj o{j, p, r};
    GemmRecord g;
    g.shape.m = o.integer("m", 1);
    g.shape.n = o.integer("n", 1);
    g.shape.k = o.integer("k", 1);
    g.shape.batch = o.integer("batch", 1, 1);
    g.shape.dtype = o.dtype("dtype");
    g.flops = o.number("flops", 0, true);
    g.bytes = o.number("bytes", 0, true);
    if (const json* t = o.get("time")) g.time = read_stats(*t, child(p, "time"), r);
    o.known({"m", "n", "k", "batch", "dtype", "flops", "bytes", "time"});
    m.gemms.push_back(std::move(g));
  });
  read_list(root, "memory", where, r, [&](const json& j, const std::string& p) {
    Obj o{j, p, r};
    MemoryRecord rec;
    rec.pattern = o.string("pattern");
    if (rec.pattern.empty() && j.contains("pattern") && j["pattern"].is_string()) {
      r.error(child(p, "pattern"), "must not be empty (copy, norm or elementwise)");
    }
    rec.bytes = o.number("bytes", 0, true);
    if (const json* t = o.get("time")) rec.time = read_stats(*t, child(p, "time"), r);
    o.known({"pattern", "bytes", "time"});
    m.memory.push_back(std::move(rec));
  });
  read_list(root, "collectives", where, r, [&](const json& j, const std::string& p) {
    Obj o{j, p, r};
    CollectiveRecord rec;
    const std::string kind = o.string("kind");
    if (auto k = sim::collective_kind_from_string(kind)) {
      rec.kind = *k;
    } else if (j.contains("kind") && j["kind"].is_string()) {
      r.error(child(p, "kind"),
              "unknown collective (known: all_reduce, all_gather, reduce_scatter, all_to_all, send_recv); got \"" +
                  kind + "\"");
    }
    rec.bytes = o.number("bytes", 0, true);
    rec.ranks = static_cast<int>(o.integer("ranks", 2, 2));
    rec.ranks_per_node = static_cast<int>(o.integer("ranks_per_node", 1, 1));
    rec.nodes = static_cast<int>(o.integer("nodes", 1, 1));
    rec.tier = o.string("tier");
    if (!rec.tier.empty() && rec.tier != "nvlink" && rec.tier != "network" && rec.tier != "pcie" &&
        rec.tier != "host-shm") {
      r.error(child(p, "tier"), "unknown tier (known: nvlink, pcie, host-shm, network); got \"" + rec.tier + "\"");
    }
    rec.algbw_Bps = o.number("algbw_Bps", 0, true);
    rec.busbw_Bps = o.number("busbw_Bps", 0, false);
    if (const json* t = o.get("time")) rec.time = read_stats(*t, child(p, "time"), r);
    o.known({"kind", "bytes", "ranks", "ranks_per_node", "nodes", "tier", "algbw_Bps", "busbw_Bps", "time"});
    m.collectives.push_back(std::move(rec));
  });
  read_list(root, "steps", where, r, [&](const json& j, const std::string& p) {
    Obj o{j, p, r};
    StepRecord s;
    if (const json* sj = o.get("shape"); sj != nullptr && r.object(*sj, child(p, "shape"))) {
      Obj so{*sj, child(p, "shape"), r};
      s.shape.layers = static_cast<int>(so.integer("layers", 1, 1));
      s.shape.hidden = static_cast<int>(so.integer("hidden", 1));
      s.shape.heads = static_cast<int>(so.integer("heads", 1));
      s.shape.ffn_hidden = static_cast<int>(so.integer("ffn_hidden", 1));
      s.shape.seq_len = static_cast<int>(so.integer("seq_len", 1));
      s.shape.micro_batch = static_cast<int>(so.integer("micro_batch", 1, 1));
      s.shape.gated_ffn = so.boolean("gated_ffn");
      s.shape.dtype = so.dtype("dtype");
      // Optional (records written before the layer variants existed describe the default layer).
      if (sj->contains("kv_heads")) s.shape.kv_heads = static_cast<int>(so.integer("kv_heads", 0));
      if (sj->contains("rmsnorm")) s.shape.rmsnorm = so.boolean("rmsnorm");
      if (sj->contains("rope")) s.shape.rope = so.boolean("rope");
      if (sj->contains("flash_attention")) s.shape.flash_attention = so.boolean("flash_attention");
      so.known({"layers", "hidden", "heads", "ffn_hidden", "seq_len", "micro_batch", "gated_ffn", "dtype", "kv_heads",
                "rmsnorm", "rope", "flash_attention"});
    }
    if (const json* t = o.get("time")) s.time = read_stats(*t, child(p, "time"), r);
    if (const json* cj = o.get("components_s"); cj != nullptr && r.object(*cj, child(p, "components_s"))) {
      for (const auto& [k, v] : cj->items()) {
        if (auto x = r.number(v, child(child(p, "components_s"), k), 0, data::detail::kInf, false)) {
          s.components_s[k] = *x;
        }
      }
    }
    o.known({"shape", "time", "components_s"});
    m.steps.push_back(std::move(s));
  });
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return m;
}

}  // namespace capplan::calib
