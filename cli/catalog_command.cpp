// SPDX-License-Identifier: Apache-2.0
// `capplan catalog gpus|instances|models|storage|frameworks|engines [--format table|json]`: what the
// catalogs hold. `capplan catalog price-sheet --provider P`: an empty price sheet of P's instances
// (data/price_sheet.hpp), to fill in.
#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/price_sheet.hpp"
#include "commands.hpp"

namespace capplan::cli {
namespace {

using nlohmann::json;

struct CatalogOptions {
  std::string what;
  std::string format = "table";
  std::string out;
  std::string provider;  // price-sheet
  std::string device;    // gpus: only the entry the driver's name for a device matches
};

using data::format::number;
json positive_or_null(double v) { return std::isfinite(v) && v > 0 ? json(v) : json(nullptr); }
json optional_number(const std::optional<double>& v) { return number(v); }
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

double tflops(units::FlopsPerSecond f) { return units::to_tflop_per_s(f); }
double gb_per_s(units::BytesPerSecond b) { return b.base() / 1e9; }

// "-" for a zero (unsupported / unknown) figure.
std::string cell(double v, int decimals) { return std::isfinite(v) && v > 0 ? fixed(v, decimals) : "-"; }

std::string gpus_table(const data::Catalogs& c) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : c.gpus) {
    const auto& s = g.spec;
    rows.push_back({s.id, s.name, cell(tflops(s.peak.bf16), 0), cell(tflops(s.peak.fp8), 0),
                    cell(units::to_gib(s.hbm_capacity), 1), cell(gb_per_s(s.hbm_bandwidth), 0),
                    s.nvlink_bandwidth.base() > 0 ? fixed(gb_per_s(s.nvlink_bandwidth), 0) : "PCIe"});
  }
  return render_table({"id", "name", "bf16 TFLOP/s", "fp8 TFLOP/s", "HBM GiB", "HBM GB/s", "NVLink GB/s"}, rows,
                      {false, false, true, true, true, true, true}) +
         "\nDense peaks (no sparsity); NVLink is one direction per GPU.\n";
}

json gpus_json(const data::Catalogs& c) {
  json out = json::array();
  for (const auto& g : c.gpus) {
    const auto& s = g.spec;
    out.push_back({
        {"id", s.id},
        {"name", s.name},
        {"vendor", g.vendor},
        {"arch", g.arch},
        {"fp32_TFLOPs", positive_or_null(tflops(s.peak.fp32))},
        {"tf32_dense_TFLOPs", positive_or_null(tflops(s.peak.tf32))},
        {"fp16_dense_TFLOPs", positive_or_null(tflops(s.peak.fp16))},
        {"bf16_dense_TFLOPs", positive_or_null(tflops(s.peak.bf16))},
        {"fp8_dense_TFLOPs", positive_or_null(tflops(s.peak.fp8))},
        {"hbm_GiB", number(units::to_gib(s.hbm_capacity))},
        {"hbm_GBps", number(gb_per_s(s.hbm_bandwidth))},
        {"nvlink_GBps", positive_or_null(gb_per_s(s.nvlink_bandwidth))},
        {"pcie_GBps", positive_or_null(gb_per_s(s.pcie_bandwidth))},
        {"pcie_gen", g.pcie_gen > 0 ? json(g.pcie_gen) : json(nullptr)},
        {"sm_count", s.sm_count > 0 ? json(s.sm_count) : json(nullptr)},
        {"tdp_W", positive_or_null(g.tdp_w)},
        {"gemm_efficiency", positive_or_null(s.gemm_efficiency)},
        {"gemm_fp8_efficiency", positive_or_null(s.gemm_fp8_efficiency)},
        {"hbm_efficiency", positive_or_null(s.hbm_efficiency)},
        {"nvlink_busbw_GBps", positive_or_null(gb_per_s(s.nvlink_busbw))},
        {"ep_fused_GBps", positive_or_null(gb_per_s(s.ep_fused_bandwidth))},
        {"confidence", text_or_null(g.confidence)},
        {"sources", g.sources},
        {"notes", text_or_null(g.notes)},
        {"device_names", g.device_names},
    });
  }
  return out;
}

std::string instances_table(const data::Catalogs& c) {
  std::vector<std::vector<std::string>> rows;
  bool all_usd = true;
  for (const auto& i : c.instances) {
    const auto price = i.price.per_gpu_hour(i.gpus_per_node);  // in the price's currency, labelled unless USD
    const bool usd = i.price.currency == "USD";
    all_usd = all_usd && usd;
    rows.push_back({i.id, i.gpu, std::to_string(i.gpus_per_node),
                    i.network_gbps ? fixed(*i.network_gbps, 0) : "unknown",
                    price ? (usd ? std::string() : i.price.currency + " ") + fixed(*price, 2) : "unknown",
                    i.price.date.empty() ? "-" : i.price.date, i.price.region.empty() ? "-" : i.price.region});
  }
  return render_table({"id", "gpu", "GPUs", "network Gbps", all_usd ? "$/GPU-h" : "price/GPU-h", "price date", "region"},
                      rows,
                      {false, false, true, true, true, false, false}) +
         "\nNetwork is per node; prices are list prices as of the date shown.\n";
}

json instances_json(const data::Catalogs& c) {
  json out = json::array();
  for (const auto& i : c.instances) {
    const auto& p = i.price;
    out.push_back({
        {"id", i.id},
        {"provider", i.provider},
        {"name", i.name},
        {"gpu", i.gpu},
        {"gpus_per_node", i.gpus_per_node},
        {"network_Gbps", optional_number(i.network_gbps)},
        {"network", text_or_null(i.network)},
        {"rdma", i.rdma ? json(*i.rdma) : json(nullptr)},
        {"vcpu", i.vcpu ? json(*i.vcpu) : json(nullptr)},
        {"ram_GiB", optional_number(i.ram_gib)},
        {"usd_per_gpu_hour", optional_number(p.per_gpu_hour_usd(i.gpus_per_node))},  // null: not comparable
        {"currency", text_or_null(p.currency)},
        {"price_per_gpu_hour", optional_number(p.per_gpu_hour(i.gpus_per_node))},  // in `currency`
        {"price",
         {
             {"usd_per_node_hour", optional_number(p.usd_per_node_hour)},
             {"usd_per_gpu_hour", optional_number(p.usd_per_gpu_hour)},
             {"type", text_or_null(p.type)},
             {"region", text_or_null(p.region)},
             {"date", text_or_null(p.date)},
             {"currency", text_or_null(p.currency)},
             {"usd_per_unit", optional_number(p.usd_per_unit)},
             {"confidence", text_or_null(p.confidence)},
             {"sources", p.sources},
             {"notes", text_or_null(p.notes)},
         }},
        {"sources", i.sources},
        {"notes", text_or_null(i.notes)},
    });
  }
  return out;
}

std::string models_table(const data::Catalogs& c) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : c.models) {
    const auto& s = m.spec;
    // Active = what one token passes through (sim::ModelSpec::active_params: the routed top_k and
    // shared experts of an MoE, all of a dense model), so a 389B-A52B model reads 389 / 52.
    rows.push_back({m.id, s.name, fixed(s.total_params() / 1e9, 1), fixed(s.active_params() / 1e9, 1),
                    std::to_string(s.layers), std::to_string(s.hidden),
                    std::to_string(s.heads) + "/" + std::to_string(s.kv_heads), std::to_string(s.seq_len)});
  }
  return render_table({"id", "name", "params B", "active B", "layers", "hidden", "heads/kv", "seq"}, rows,
                      {false, false, true, true, true, true, true, true}) +
         "\nParameters are computed from the shapes (capplan's own count); active counts the input embedding.\n";
}

json models_json(const data::Catalogs& c) {
  json out = json::array();
  for (const auto& m : c.models) {
    const auto& s = m.spec;
    out.push_back({
        {"id", m.id},
        {"name", s.name},
        {"params_b", number(s.total_params() / 1e9)},
        {"active_params_b", number(s.active_params() / 1e9)},
        {"params_b_published", positive_or_null(m.params_b_published)},
        {"layers", s.layers},
        {"hidden", s.hidden},
        {"heads", s.heads},
        {"kv_heads", s.kv_heads},
        {"ffn_hidden", s.ffn_hidden},
        {"vocab", s.vocab},
        {"seq_len", s.seq_len},
        {"gated_ffn", s.gated_ffn},
        {"tied_embeddings", s.tied_embeddings},
        {"sources", m.sources},
        {"notes", text_or_null(m.notes)},
    });
  }
  return out;
}

// Storage tiers (data/storage.json): bandwidths in GB/s, null = not published.
std::string storage_table(const data::Catalogs& c) {
  std::vector<std::vector<std::string>> rows;
  auto gbs = [](const std::optional<double>& v) { return v ? fixed(*v, *v < 10 ? 3 : 1) : std::string("-"); };
  for (const auto& t : c.storage) {
    // Per TiB: one figure for both directions, or write/read where they differ (CPFS).
    const std::string per_tib = t.write_gb_per_s_per_tib || t.read_gb_per_s_per_tib
                                    ? gbs(t.write_gb_per_s_per_tib) + "/" + gbs(t.read_gb_per_s_per_tib)
                                    : gbs(t.gb_per_s_per_tib);
    rows.push_back({t.id, t.kind, gbs(t.write_gb_per_s), gbs(t.read_gb_per_s), gbs(t.write_gb_per_s_per_node),
                    per_tib, t.usd_per_gb_month ? fixed(*t.usd_per_gb_month, 4) : std::string("-")});
  }
  const data::StorageEntry* d = c.default_storage();
  return render_table({"id", "kind", "write GB/s", "read GB/s", "per node", "per TiB", "USD/GB-month"}, rows,
                      {false, false, true, true, true, true, true}) +
         "\n'-' = not published: give the figure in the scenario's storage section.\n" +
         (d ? "Without a storage section, '" + d->id + "' is assumed (the catalog's default tier).\n" : std::string());
}

json storage_json(const data::Catalogs& c) {
  json out = json::array();
  for (const auto& t : c.storage) {
    out.push_back({
        {"id", t.id},
        {"provider", t.provider},
        {"name", t.name},
        {"kind", t.kind},
        {"write_GBps", optional_number(t.write_gb_per_s)},
        {"read_GBps", optional_number(t.read_gb_per_s)},
        {"write_GBps_per_node", optional_number(t.write_gb_per_s_per_node)},
        {"read_GBps_per_node", optional_number(t.read_gb_per_s_per_node)},
        {"GBps_per_TiB", optional_number(t.gb_per_s_per_tib)},
        {"write_GBps_per_TiB", optional_number(t.write_gb_per_s_per_tib)},
        {"read_GBps_per_TiB", optional_number(t.read_gb_per_s_per_tib)},
        {"max_write_GBps", optional_number(t.max_write_gb_per_s)},
        {"max_read_GBps", optional_number(t.max_read_gb_per_s)},
        {"default", t.is_default},
        {"usd_per_GB_month", optional_number(t.usd_per_gb_month)},
        {"region", text_or_null(t.region)},
        {"date", t.date},
        {"currency", t.currency},
        {"sources", t.sources},
        {"confidence", t.confidence},
        {"notes", text_or_null(t.notes)},
    });
  }
  return out;
}

// Framework recipes (data/frameworks.json): one row per recipe, '-' where the recipe has no
// default (capplan's own applies); the JSON gives every default with its source or note.
// What a recipe's stack runs, compactly: the parallelisms it runs ('?' where its sources do not
// say), its ZeRO stages and host offload (o: optimizer, p: parameters).
std::string runs_text(const sim::StackSupport& s) {
  std::string out;
  const auto add = [&](const std::string& part) { out += (out.empty() ? "" : " ") + part; };
  for (auto [name, v] : {std::pair{"tp", s.tensor_parallel}, std::pair{"sp", s.sequence_parallel},
                         std::pair{"pp", s.pipeline_parallel}, std::pair{"cp", s.context_parallel},
                         std::pair{"ep", s.expert_parallel}}) {
    if (!v) add(std::string(name) + "?");
    else if (*v) add(name);
  }
  std::string zero = "z";
  if (!s.zero_stages) zero += "?";
  for (int z = 0; z <= 3 && s.zero_stages; ++z) {
    if (s.allows_zero(z)) zero += std::to_string(z);
  }
  add(zero);
  std::string off;
  for (auto [name, v] : {std::pair{"o", s.offload_optimizer}, std::pair{"p", s.offload_params}}) {
    if (!v) off += std::string(name) + "?";
    else if (*v) off += name;
  }
  if (!off.empty()) add("offload " + off);
  return out;
}

std::string frameworks_table(const data::Catalogs& c) {
  std::vector<std::vector<std::string>> rows;
  auto yes_no = [](const std::optional<bool>& b) { return b ? std::string(*b ? "yes" : "no") : std::string("-"); };
  for (const auto& f : c.frameworks) {
    const auto& r = f.recipe;
    std::string grad = "-";
    if (auto g = r.grad_reduce_in_fp32(sim::Precision::bf16)) grad = *g ? "fp32" : "bf16";
    const bool kernels_given = std::any_of(f.defaults.begin(), f.defaults.end(), [](const data::FrameworkDefault& d) {
      return d.key == "kernels" && d.value != "null";
    });
    rows.push_back({r.id, !kernels_given ? "-" : r.kernels == sim::Framework::pytorch ? "eager" : "fused",
                    r.loss_kernel ? sim::to_string(*r.loss_kernel) : "-", grad,
                    yes_no(r.overlap_dp_comm), yes_no(r.tp_comm_overlap),
                    r.recompute ? sim::to_string(*r.recompute) : "-", yes_no(r.fp8_param_gather), yes_no(r.cuda_graphs),
                    runs_text(r.supports), f.version});
  }
  return render_table({"id", "kernels", "loss", "bf16 grads", "DP overlap", "TP overlap", "recompute", "FP8 gather",
                       "CUDA graphs", "runs", "version"},
                      rows, {false, false, false, false, false, false, false, false, false, false, false}) +
         "\n'-' = no default in the recipe: capplan's own applies. runs: what the stack runs (tp sp pp cp ep, ZeRO "
         "stages z0-3, offload o optimizer / p parameters; '?' = not stated, not restricted); the planners search "
         "only that. Sources: capplan catalog frameworks --format json.\n";
}

json frameworks_json(const data::Catalogs& c) {
  const auto sourced = [](const std::vector<data::FrameworkDefault>& ds) {
    json out = json::object();
    for (const auto& d : ds) {
      json one{{"value", json::parse(d.value)}};
      if (!d.source.empty()) one["source"] = d.source;
      if (!d.note.empty()) one["note"] = d.note;
      out[d.key] = std::move(one);
    }
    return out;
  };
  json out = json::array();
  for (const auto& f : c.frameworks) {
    out.push_back({{"id", f.recipe.id},
                   {"name", f.recipe.name},
                   {"version", f.version},
                   {"summary", f.summary},
                   {"defaults", sourced(f.defaults)},
                   {"supports", sourced(f.supports)}});
  }
  return out;
}

// Serving engine recipes (data/engines.json): one row per engine with its main defaults, '-' where
// the recipe leaves a default null (sim::EngineSpec's own applies); the JSON gives every default
// with its source or note.
bool engine_default_given(const data::EngineEntry& e, std::string_view key) {
  return std::any_of(e.defaults.begin(), e.defaults.end(),
                     [&](const data::FrameworkDefault& d) { return d.key == key && d.value != "null"; });
}

std::string engines_table(const data::Catalogs& c) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : c.engines) {
    const auto& s = e.spec;
    auto given = [&](std::string_view key, std::string text) { return engine_default_given(e, key) ? text : "-"; };
    auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
    std::string kv = "-";
    if (engine_default_given(e, "kv_memory_fraction")) {
      kv = fixed(s.kv_memory_fraction, 3) +
           (s.kv_budget == sim::KvBudget::free_memory ? " of free" : " of total");
    }
    rows.push_back({s.id, s.name, given("max_num_seqs", std::to_string(s.max_num_seqs)),
                    given("max_num_batched_tokens", std::to_string(s.max_num_batched_tokens)),
                    given("chunked_prefill", yes_no(s.chunked_prefill)), kv,
                    given("kv_block_tokens", std::to_string(s.kv_block_tokens)),
                    given("cuda_graphs", yes_no(s.cuda_graphs)),
                    given("step_overhead_us", fixed(s.step_overhead.base() * 1e6, 0)), s.version});
  }
  return render_table({"id", "name", "max seqs", "max tokens", "chunked prefill", "KV memory", "KV block",
                       "CUDA graphs", "step overhead us", "version"},
                      rows, {false, false, true, true, false, false, true, false, true, false}) +
         "\n'-' = null in the recipe: capplan's own default applies. Sources: capplan catalog engines --format json.\n";
}

json engines_json(const data::Catalogs& c) {
  json out = json::array();
  for (const auto& e : c.engines) {
    json defaults = json::object();
    for (const auto& d : e.defaults) {
      json one{{"value", json::parse(d.value)}};
      if (!d.source.empty()) one["source"] = d.source;
      if (!d.note.empty()) one["note"] = d.note;
      defaults[d.key] = std::move(one);
    }
    out.push_back({{"id", e.spec.id},
                   {"name", e.spec.name},
                   {"version", e.spec.version},
                   {"summary", e.summary},
                   {"source", e.spec.source},
                   {"defaults", std::move(defaults)}});
  }
  return out;
}

int run_catalog(const CatalogOptions& opt, const GlobalOptions& global) {
  if (!output_path_ok_or_report(opt.out)) return code(Exit::invalid_input);  // before any work
  auto catalogs = load_catalogs_or_report(global);
  if (!catalogs) return code(Exit::invalid_input);
  if (!opt.device.empty()) {
    if (opt.what != "gpus") {
      print_error("--device: only `capplan catalog gpus` takes it; got '" + opt.what + "'");
      return code(Exit::invalid_input);
    }
    const data::GpuEntry* match = catalogs->gpu_for_device_name(opt.device);
    if (match == nullptr) {
      // A valid question with no answer in the catalog: say so, and what it does know.
      std::string known;
      for (const auto& g : catalogs->gpus) {
        for (const auto& n : g.device_names) known += (known.empty() ? "" : ", ") + ("'" + n + "'");
      }
      print_error("--device '" + opt.device + "': no catalog GPU lists this device name in device_names (known: " +
                  known + ")");
      return code(Exit::infeasible);
    }
    data::GpuEntry only = *match;
    catalogs->gpus = {std::move(only)};
  }
  std::string text;
  if (opt.what == "price-sheet") {
    auto sheet = data::price_sheet_template(*catalogs, opt.provider);
    if (!sheet) {
      print_diagnostics(sheet.error());
      return code(Exit::invalid_input);
    }
    text = sheet->dump(2) + "\n";
  } else if (opt.format == "json") {
    json j = opt.what == "gpus"        ? gpus_json(*catalogs)
             : opt.what == "instances" ? instances_json(*catalogs)
             : opt.what == "storage"   ? storage_json(*catalogs)
             : opt.what == "frameworks" ? frameworks_json(*catalogs)
             : opt.what == "engines"   ? engines_json(*catalogs)
                                       : models_json(*catalogs);
    text = j.dump(2) + "\n";
  } else {
    text = opt.what == "gpus"        ? gpus_table(*catalogs)
           : opt.what == "instances" ? instances_table(*catalogs)
           : opt.what == "storage"   ? storage_table(*catalogs)
           : opt.what == "frameworks" ? frameworks_table(*catalogs)
           : opt.what == "engines"   ? engines_table(*catalogs)
                                     : models_table(*catalogs);
  }
  return emit(opt.out, text) ? code(Exit::ok) : code(Exit::invalid_input);
}

}  // namespace

Command add_catalog_command(CLI::App& app, const GlobalOptions& global) {
  auto opt = std::make_shared<CatalogOptions>();
  CLI::App* cmd =
      app.add_subcommand("catalog", "List the GPUs, instances, models, storage tiers, framework recipes or serving engines capplan knows");
  cmd->add_option("what", opt->what, "gpus, instances, models, storage, frameworks, engines, or price-sheet (an empty "
                                     "price sheet of --provider's instances, JSON)")
      ->required()
      ->check(CLI::IsMember({"gpus", "instances", "models", "storage", "frameworks", "engines", "price-sheet"}));
  cmd->add_option("--provider", opt->provider, "price-sheet: the provider whose instances to list (tencent, ...)");
  cmd->add_option("--device", opt->device,
                  "gpus: only the GPU whose device_names hold this name as nvidia-smi or CUDA reports it "
                  "(\"NVIDIA H200\"); exit 3 when no entry does")
      ->type_name("NAME");
  cmd->add_option("--format", opt->format, "Output format (default: table)")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--out", opt->out, "Write the output to this file (atomically) instead of stdout")
      ->check(output_file_name());
  return Command{cmd, [opt, &global] { return run_catalog(*opt, global); }};
}

}  // namespace capplan::cli
