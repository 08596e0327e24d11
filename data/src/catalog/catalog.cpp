// SPDX-License-Identifier: Apache-2.0
// Loads gpus.json, instances.json and models.json (schema in data/README.md) into plain sim
// structs. Two passes (STYLE.md 4.9): per record (required, type, range, unknown keys), then
// across records (unique ids, instance -> gpu). Every finding is collected.
#include "capplan/data/catalog.hpp"
#include "capplan/data/currency.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>

#include "catalog/hybrid_model.hpp"
#include "reading/json_reader.hpp"
#include "catalog/topology_io.hpp"

namespace capplan::data {

namespace {

using detail::Field;
using detail::json;
using detail::Kind;
using detail::Need;
using detail::Reader;
using detail::kPositive;

constexpr int kSchema = 1;

std::string str(const json& v) { return v.get<std::string>(); }
double num(const json& v) { return v.get<double>(); }
int integer(const json& v) { return static_cast<int>(v.get<double>()); }
std::vector<std::string> strings(const json& v) { return v.get<std::vector<std::string>>(); }

// Ids are kebab-case: lower-case letters, digits, '-', '.', '_' ("aws-p5.48xlarge").
void check_id(const json& v, Reader& r, const std::string& p) {
  if (!detail::is_catalog_id(str(v))) {
    r.error(p, "must be a lower-case id of letters, digits, '-', '.' or '_'; got " + detail::describe(v));
  }
}

// PCIe x16, one direction, per generation [catalog_facts.md section 1, NVLink/PCIe note]:
// Gen3 ~15.75, Gen4 ~31.5, Gen5 ~63 GB/s; each generation doubles the rate, so Gen6 ~126.
double pcie_x16_gbps(int gen) {
  switch (gen) {
    case 3: return 15.75;
    case 4: return 31.5;
    case 5: return 63.0;
    case 6: return 126.0;
    default: return 0.0;
  }
}

// --- GPUs ---------------------------------------------------------------------------------

struct Measured {
  double value = 0;
  std::string source;
};

constexpr Field<Measured> kMeasuredFields[] = {
    {"value", Kind::number, Need::required, false, kPositive, "the measured figure",
     detail::store<&Measured::value>},
    {"source", Kind::string, Need::required, false, {}, "where it was measured or published",
     detail::store<&Measured::source>},
    {"notes", Kind::string, Need::optional, false, {}, "caveats", nullptr},
};

constexpr Field<GpuEntry::SystemPower> kSystemPowerFields[] = {
    {"W", Kind::number, Need::required, false, kPositive, "maximum system power, W",
     detail::store<&GpuEntry::SystemPower::w>},
    {"gpus", Kind::integer, Need::required, false, {1, 1e3, false}, "GPUs in the system",
     [](GpuEntry::SystemPower& s, const json& v, Reader&, const std::string&) { s.gpus = integer(v); }},
    {"system", Kind::string, Need::required, false, {}, "the server the figure is for",
     detail::store<&GpuEntry::SystemPower::system>},
    {"source", Kind::string, Need::required, false, {}, "where the figure is published",
     detail::store<&GpuEntry::SystemPower::source>},
};

struct GpuDraft {
  GpuEntry entry;
  double hbm_gbps = 0;
  std::optional<double> hbm_copy_gbps;
  std::string hbm_copy_path;
  std::optional<double> ep_fused_gbps;
  std::string ep_fused_path;
};

std::optional<Measured> read_measured(const json& v, Reader& r, const std::string& p) {
  const auto before = r.count();
  Measured m;
  detail::read_fields<Measured>(v, p, kMeasuredFields, m, r);
  if (r.count() != before) return std::nullopt;
  return m;
}

constexpr Field<sim::PeakRates> kPeakFields[] = {
    {"fp32", Kind::number, Need::optional, true, kPositive, "dense FP32 TFLOP/s, null = unsupported",
     [](sim::PeakRates& p, const json& v, Reader&, const std::string&) { p.fp32 = units::tflop_per_s(num(v)); }},
    {"tf32", Kind::number, Need::optional, true, kPositive, "dense TF32 tensor TFLOP/s, null = unsupported",
     [](sim::PeakRates& p, const json& v, Reader&, const std::string&) { p.tf32 = units::tflop_per_s(num(v)); }},
    {"fp16", Kind::number, Need::optional, true, kPositive, "dense FP16 tensor TFLOP/s, null = unsupported",
     [](sim::PeakRates& p, const json& v, Reader&, const std::string&) { p.fp16 = units::tflop_per_s(num(v)); }},
    {"bf16", Kind::number, Need::optional, true, kPositive, "dense BF16 tensor TFLOP/s, null = unsupported",
     [](sim::PeakRates& p, const json& v, Reader&, const std::string&) { p.bf16 = units::tflop_per_s(num(v)); }},
    {"fp8", Kind::number, Need::optional, true, kPositive, "dense FP8 tensor TFLOP/s, null = unsupported",
     [](sim::PeakRates& p, const json& v, Reader&, const std::string&) { p.fp8 = units::tflop_per_s(num(v)); }},
    {"fp4", Kind::number, Need::optional, true, kPositive, "dense FP4 (NVFP4) tensor TFLOP/s, null = unsupported",
     [](sim::PeakRates& p, const json& v, Reader&, const std::string&) { p.fp4 = units::tflop_per_s(num(v)); }},
};

// A measured fraction of a peak rate, {value, source}, in (0, 1].
void read_peak_fraction(const json& v, Reader& r, const std::string& p, double& out) {
  if (auto m = read_measured(v, r, p)) {
    if (m->value > 1.0) {
      r.error(detail::child(p, "value"), "must be in (0, 1] (a fraction of peak); got " + detail::fmt(m->value));
    } else {
      out = m->value;
    }
  }
}

constexpr Field<GpuDraft> kMeasuredSetFields[] = {
    {"gemm_bf16_efficiency", Kind::object, Need::optional, true, {},
     "best large BF16 GEMM / dense peak (MAMF): {value, source}",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       read_peak_fraction(v, r, p, g.entry.spec.gemm_efficiency);
     }},
    {"gemm_fp8_efficiency", Kind::object, Need::optional, true, {},
     "best large FP8 (E4M3) GEMM / dense FP8 peak (MAMF): {value, source}",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       read_peak_fraction(v, r, p, g.entry.spec.gemm_fp8_efficiency);
     }},
    {"flash_attention_efficiency", Kind::object, Need::optional, true, {},
     "published fused (flash) attention fwd+bwd throughput / dense peak: {value, source}",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       read_peak_fraction(v, r, p, g.entry.spec.attention_efficiency);
     }},
    {"flash_attention_v1_efficiency", Kind::object, Need::optional, true, {},
     "published FlashAttention-1-class attention fwd+bwd throughput / dense peak: {value, source}",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       read_peak_fraction(v, r, p, g.entry.spec.attention_v1_efficiency);
     }},
    {"hbm_copy_GBps", Kind::object, Need::optional, true, {}, "measured device-to-device copy GB/s: {value, source}",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       if (auto m = read_measured(v, r, p)) {
         g.hbm_copy_gbps = m->value;
         g.hbm_copy_path = detail::child(p, "value");
       }
     }},
    {"ep_fused_GBps", Kind::object, Need::optional, true, {},
     "measured fused expert-parallel dispatch/combine (DeepEP, HybridEP) algorithm bandwidth in one NVLink "
     "domain, GB/s per GPU, the lower of the two: {value, source}",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       if (auto m = read_measured(v, r, p)) {
         g.ep_fused_gbps = m->value;
         g.ep_fused_path = detail::child(p, "value");
       }
     }},
    {"nvlink_allreduce_busbw_GBps", Kind::object, Need::optional, true, {},
     "measured single-node NCCL all-reduce busbw GB/s: {value, source}",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       if (auto m = read_measured(v, r, p)) g.entry.spec.nvlink_busbw = units::gb_per_s(m->value);
     }},
};

constexpr Field<GpuDraft> kGpuFields[] = {
    {"id", Kind::string, Need::required, false, {}, "kebab-case id",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       check_id(v, r, p);
       g.entry.spec.id = str(v);
     }},
    {"name", Kind::string, Need::required, false, {}, "display name",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.spec.name = str(v); }},
    {"vendor", Kind::string, Need::required, false, {}, "vendor",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.vendor = str(v); }},
    {"arch", Kind::string, Need::required, false, {}, "architecture",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) {
       g.entry.arch = str(v);
       // The catalog's architecture names ("Hopper (GH100)", "Blackwell Ultra", ...) to the
       // generations the cost model tells apart.
       g.entry.spec.tensor_cores = g.entry.arch.starts_with("Hopper")      ? sim::TensorCoreGeneration::hopper
                                   : g.entry.arch.starts_with("Blackwell") ? sim::TensorCoreGeneration::blackwell
                                                                           : sim::TensorCoreGeneration::other;
     }},
    {"dense_TFLOPs", Kind::object, Need::required, false, {}, "dense peak TFLOP/s per precision",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       detail::read_fields<sim::PeakRates>(v, p, kPeakFields, g.entry.spec.peak, r);
     }},
    {"hbm_GiB", Kind::number, Need::required, false, {0, 1e5, true}, "memory capacity per GPU, GiB",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.spec.hbm_capacity = units::gib(num(v)); }},
    {"hbm_GBps", Kind::number, Need::required, false, {0, 1e6, true}, "memory bandwidth, datasheet GB/s",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) {
       g.hbm_gbps = num(v);
       g.entry.spec.hbm_bandwidth = units::gb_per_s(num(v));
     }},
    {"nvlink_GBps_bidir", Kind::number, Need::required, false, {0, 1e6, false},
     "GPU-to-GPU link GB/s, both directions together; 0 = none",
     // The catalog gives the datasheet's bidirectional figure; sim wants one direction.
     [](GpuDraft& g, const json& v, Reader&, const std::string&) {
       g.entry.spec.nvlink_bandwidth = units::gb_per_s(num(v) / 2.0);
     }},
    {"pcie_gen", Kind::integer, Need::required, false, {3, 6, false}, "PCIe generation of the host link (3..6)",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) {
       g.entry.pcie_gen = integer(v);
       g.entry.spec.pcie_bandwidth = units::gb_per_s(pcie_x16_gbps(integer(v)));
     }},
    {"sm_count", Kind::integer, Need::optional, true, {1, 1e5, false}, "streaming multiprocessors; null = unknown",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.spec.sm_count = integer(v); }},
    {"tdp_W", Kind::number, Need::required, false, {0, 1e5, true}, "board power, W",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.tdp_w = num(v); }},
    {"system_power", Kind::object, Need::optional, true, {},
     "maximum power of the vendor's server on this GPU: {W, gpus, system, source}; null = unpublished",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       const auto before = r.count();
       GpuEntry::SystemPower sp;
       detail::read_fields<GpuEntry::SystemPower>(v, p, kSystemPowerFields, sp, r);
       if (r.count() == before) g.entry.system_power = sp;
     }},
    {"measured", Kind::object, Need::required, false, {}, "published measurements, each {value, source} or null",
     [](GpuDraft& g, const json& v, Reader& r, const std::string& p) {
       detail::read_fields<GpuDraft>(v, p, kMeasuredSetFields, g, r);
     }},
    {"confidence", Kind::string, Need::required, false, {}, "confidence in the figures",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.confidence = str(v); }},
    {"source", Kind::string_list, Need::required, false, {}, "sources of the figures",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.sources = strings(v); }},
    {"notes", Kind::string, Need::optional, false, {}, "caveats",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.notes = str(v); }},
    {"device_names", Kind::string_list, Need::optional, false, {},
     "names the driver reports for this GPU (nvidia-smi, cudaGetDeviceProperties), each quoted in a source",
     [](GpuDraft& g, const json& v, Reader&, const std::string&) { g.entry.device_names = strings(v); }},
};

GpuEntry finish_gpu(GpuDraft d, Reader& r) {
  if (d.hbm_copy_gbps && d.hbm_gbps > 0) {
    if (*d.hbm_copy_gbps > d.hbm_gbps) {
      r.error(d.hbm_copy_path, "must not exceed hbm_GBps (" + detail::fmt(d.hbm_gbps) + "); got " +
                                   detail::fmt(*d.hbm_copy_gbps));
    } else {
      d.entry.spec.hbm_efficiency = *d.hbm_copy_gbps / d.hbm_gbps;
    }
  }
  if (d.ep_fused_gbps) {
    // Received bytes per second can not beat the links they arrive over.
    const double link = d.entry.spec.nvlink_bandwidth.base() / 1e9;
    if (!(link > 0) || *d.ep_fused_gbps > link) {
      r.error(d.ep_fused_path, "must not exceed one direction of nvlink_GBps_bidir (" + detail::fmt(link) +
                                   " GB/s); got " + detail::fmt(*d.ep_fused_gbps));
    } else {
      d.entry.spec.ep_fused_bandwidth = units::gb_per_s(*d.ep_fused_gbps);
    }
  }
  return std::move(d.entry);
}

// --- Instances ----------------------------------------------------------------------------

constexpr Field<InstancePrice> kPriceFields[] = {
    {"usd_per_node_hour", Kind::number, Need::optional, true, {0, 1e6, false}, "price of the whole node per hour, USD",
     detail::store<&InstancePrice::usd_per_node_hour>},
    {"usd_per_gpu_hour", Kind::number, Need::optional, true, {0, 1e5, false}, "price per GPU-hour, USD",
     detail::store<&InstancePrice::usd_per_gpu_hour>},
    {"type", Kind::string, Need::required, false, {}, "on-demand, spot, reserved, ...",
     detail::store<&InstancePrice::type>},
    {"region", Kind::string, Need::optional, true, {}, "region the price applies to",
     detail::store<&InstancePrice::region>},
    {"date", Kind::string, Need::optional, true, {}, "date the price was read, YYYY-MM-DD",
     [](InstancePrice& p, const json& v, Reader& r, const std::string& path) {
       if (!detail::is_date(str(v), true)) {
         r.error(path, "must be a date YYYY-MM-DD (or YYYY-MM, YYYY); got " + detail::describe(v));
       }
       p.date = str(v);
     }},
    {"currency", Kind::string, Need::required, false, {}, "ISO 4217 code of the price's currency",
     [](InstancePrice& pr, const json& v, Reader& r, const std::string& path) {
       if (!is_currency_code(str(v))) r.error(path, currency_code_error(str(v)));
       pr.currency = str(v);
     }},
    {"usd_per_unit", Kind::number, Need::optional, true, {0, 1e6, true},
     "US dollars per unit of the currency (required to compare a non-USD price)",
     detail::store<&InstancePrice::usd_per_unit>},
    {"source", Kind::string_list_or_empty, Need::required, false, {}, "where the price was read; [] when no price",
     detail::store<&InstancePrice::sources>},
    {"confidence", Kind::string, Need::required, false, {}, "confidence in the price",
     detail::store<&InstancePrice::confidence>},
    {"notes", Kind::string, Need::optional, false, {}, "caveats",
     detail::store<&InstancePrice::notes>},
};

constexpr Field<InstanceEntry> kInstanceFields[] = {
    {"id", Kind::string, Need::required, false, {}, "<provider>-<name>, lower case",
     [](InstanceEntry& e, const json& v, Reader& r, const std::string& p) {
       check_id(v, r, p);
       e.id = str(v);
     }},
    {"provider", Kind::string, Need::required, false, {}, "cloud provider",
     detail::store<&InstanceEntry::provider>},
    {"name", Kind::string, Need::required, false, {}, "the provider's instance name",
     detail::store<&InstanceEntry::name>},
    {"gpu", Kind::string, Need::required, false, {}, "GPU id from gpus.json",
     detail::store<&InstanceEntry::gpu>},
    {"gpus_per_node", Kind::integer, Need::required, false, {1, 1024, false}, "GPUs in one instance",
     detail::store<&InstanceEntry::gpus_per_node>},
    {"network_Gbps", Kind::number, Need::optional, true, {0, 1e6, true}, "inter-node network per node, Gbit/s",
     detail::store<&InstanceEntry::network_gbps>},
    {"network", Kind::string, Need::required, false, {}, "network description",
     detail::store<&InstanceEntry::network>},
    {"topology", Kind::array, Need::optional, false, {}, "network tiers, innermost first, each with a source",
     [](InstanceEntry& e, const json& v, Reader& r, const std::string& p) {
       e.topology = detail::read_topology(v, p, r, true);
     }},
    {"rdma", Kind::boolean, Need::optional, true, {}, "RDMA (GPUDirect, EFA, RoCE, IB)",
     detail::store<&InstanceEntry::rdma>},
    {"vcpu", Kind::integer, Need::optional, true, {1, 1e5, false}, "host vCPUs",
     detail::store<&InstanceEntry::vcpu>},
    {"ram_GiB", Kind::number, Need::optional, true, {0, 1e6, true}, "host memory, GiB",
     detail::store<&InstanceEntry::ram_gib>},
    {"price", Kind::object, Need::required, false, {}, "price with type, region, date, currency and source",
     [](InstanceEntry& e, const json& v, Reader& r, const std::string& p) {
       detail::read_fields<InstancePrice>(v, p, kPriceFields, e.price, r);
     }},
    {"source", Kind::string_list, Need::required, false, {}, "sources of the instance specification",
     detail::store<&InstanceEntry::sources>},
    {"notes", Kind::string, Need::optional, false, {}, "caveats",
     detail::store<&InstanceEntry::notes>},
};

void check_instance(const InstanceEntry& e, Reader& r, const std::string& p) {
  if (e.topology && !e.topology->empty()) {
    const std::string tp = detail::child(p, "topology");
    const sim::Topology& t = *e.topology;
    const std::size_t last = t.tiers.size() - 1;
    if (t.tiers[last].gpus > 0) {
      r.error(detail::child(detail::child(tp, last), "gpus"),
              "the outermost tier of an instance must omit gpus (it grows with the nodes bought); got " +
                  std::to_string(t.tiers[last].gpus));
    }
    const int inner = t.tiers[0].gpus;
    if (e.gpus_per_node > 0 && inner > 0 && inner % e.gpus_per_node != 0 && e.gpus_per_node % inner != 0) {
      r.error(detail::child(detail::child(tp, 0), "gpus"), "must divide or be a multiple of gpus_per_node (" +
                                                               std::to_string(e.gpus_per_node) + "); got " +
                                                               std::to_string(inner));
    }
  }
  const auto& price = e.price;
  if (price.currency == "USD" && price.usd_per_unit && *price.usd_per_unit != 1.0) {
    r.error(detail::child(detail::child(p, "price"), "usd_per_unit"),
            "must be 1 (or absent) for a USD price; got " + detail::fmt(*price.usd_per_unit));
  }
  if ((price.usd_per_node_hour || price.usd_per_gpu_hour) && price.sources.empty()) {
    r.error(detail::child(detail::child(p, "price"), "source"), "must name where the price was read; got []");
  }
  if (price.usd_per_node_hour && price.usd_per_gpu_hour && e.gpus_per_node > 0 && *price.usd_per_node_hour > 0) {
    const double implied = *price.usd_per_node_hour / e.gpus_per_node;
    if (std::abs(implied - *price.usd_per_gpu_hour) > 0.02 * implied) {
      r.error(detail::child(detail::child(p, "price"), "usd_per_gpu_hour"),
              "disagrees with usd_per_node_hour / gpus_per_node (" + detail::fmt(implied) + "); got " +
                  detail::fmt(*price.usd_per_gpu_hour));
    }
  }
}

// --- Models -------------------------------------------------------------------------------

// A model record while it is read: the entry plus the catalog keys that are checked against
// each other once the whole record is in (attention kind vs kv_heads, mla, sliding_window).
struct ModelDraft {
  ModelEntry entry;
  std::string attention;  // "" = not given (MHA/GQA from kv_heads)
  bool has_mla = false;
  bool has_moe = false;
  std::optional<double> params_active_b_published;
};

template <int sim::ModelSpec::*member>
void set_dim(ModelDraft& m, const json& v, Reader&, const std::string&) {
  m.entry.spec.*member = integer(v);
}
template <bool sim::ModelSpec::*member>
void set_flag(ModelDraft& m, const json& v, Reader&, const std::string&) {
  m.entry.spec.*member = v.get<bool>();
}

// Routed experts as the model was trained; routing imbalance (capacity_factor) belongs to a
// scenario, not to the model, so it is not a catalog key.
constexpr Field<sim::MoeSpec> kMoeFields[] = {
    {"experts", Kind::integer, Need::required, false, {1, 1e5, false}, "routed experts per MoE layer",
     detail::store<&sim::MoeSpec::experts>},
    {"top_k", Kind::integer, Need::required, false, {1, 1e5, false}, "routed experts each token uses",
     detail::store<&sim::MoeSpec::top_k>},
    {"expert_ffn_hidden", Kind::integer, Need::required, false, {1, 1e7, false}, "inner size of one expert",
     detail::store<&sim::MoeSpec::expert_ffn_hidden>},
    {"shared_experts", Kind::integer, Need::optional, false, {0, 1e5, false},
     "always-active experts of expert_ffn_hidden (default 0)", detail::store<&sim::MoeSpec::shared_experts>},
    {"dense_layers", Kind::integer, Need::optional, false, {0, 1e4, false},
     "leading layers with a dense FFN of ffn_hidden (default 0)", detail::store<&sim::MoeSpec::dense_layers>},
    {"every_n_layers", Kind::integer, Need::optional, false, {1, 1e4, false},
     "after the dense layers every n-th layer is MoE (default 1)", detail::store<&sim::MoeSpec::every_n_layers>},
    {"max_nodes_per_token", Kind::integer, Need::optional, false, {0, 1e5, false},
     "node-limited routing: nodes a token's experts may span (default 0 = unlimited)",
     detail::store<&sim::MoeSpec::max_nodes_per_token>},
    {"activation_clamp", Kind::number, Need::optional, false, {0, 1e6, false},
     "gated-activation input clamp, run as eager ops in Megatron-Core (default 0 = none)",
     detail::store<&sim::MoeSpec::activation_clamp>},
    {"expert_bias", Kind::boolean, Need::optional, false, {}, "expert linears carry biases (default false)",
     detail::store<&sim::MoeSpec::expert_bias>},
};

constexpr Field<sim::MlaSpec> kMlaFields[] = {
    {"q_lora_rank", Kind::integer, Need::required, false, {0, 1e6, false},
     "query latent rank (0 = queries projected directly)", detail::store<&sim::MlaSpec::q_lora_rank>},
    {"kv_lora_rank", Kind::integer, Need::required, false, {1, 1e6, false}, "compressed key/value latent rank",
     detail::store<&sim::MlaSpec::kv_lora_rank>},
    {"qk_nope_head_dim", Kind::integer, Need::required, false, {1, 1e5, false},
     "per-head query/key dimension without RoPE", detail::store<&sim::MlaSpec::qk_nope_head_dim>},
    {"qk_rope_head_dim", Kind::integer, Need::required, false, {1, 1e5, false},
     "per-head decoupled RoPE dimension", detail::store<&sim::MlaSpec::qk_rope_head_dim>},
    {"v_head_dim", Kind::integer, Need::required, false, {1, 1e5, false}, "per-head value dimension",
     detail::store<&sim::MlaSpec::v_head_dim>},
};

std::vector<std::string> attention_kinds() { return {"mha", "gqa", "mqa", "mla", "sliding_window"}; }

constexpr Field<ModelDraft> kModelFields[] = {
    {"id", Kind::string, Need::required, false, {}, "kebab-case id",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       check_id(v, r, p);
       m.entry.id = str(v);
     }},
    {"name", Kind::string, Need::required, false, {}, "display name",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.spec.name = str(v); }},
    {"layers", Kind::integer, Need::required, false, {1, 1e4, false}, "transformer layers",
     set_dim<&sim::ModelSpec::layers>},
    {"hidden", Kind::integer, Need::required, false, {1, 1e6, false}, "hidden size", set_dim<&sim::ModelSpec::hidden>},
    {"heads", Kind::integer, Need::required, false, {1, 1e5, false}, "attention heads",
     set_dim<&sim::ModelSpec::heads>},
    {"kv_heads", Kind::integer, Need::required, false, {1, 1e5, false}, "key/value heads (GQA; = heads for MLA)",
     set_dim<&sim::ModelSpec::kv_heads>},
    {"ffn_hidden", Kind::integer, Need::required, false, {1, 1e7, false},
     "FFN inner size (of the dense layers; = expert_ffn_hidden for all-MoE models)",
     set_dim<&sim::ModelSpec::ffn_hidden>},
    {"vocab", Kind::integer, Need::required, false, {1, 1e8, false}, "vocabulary size",
     set_dim<&sim::ModelSpec::vocab>},
    {"seq_len", Kind::integer, Need::required, false, {1, 1e8, false}, "training sequence length",
     set_dim<&sim::ModelSpec::seq_len>},
    {"gated_ffn", Kind::boolean, Need::required, false, {}, "SwiGLU-style gated FFN",
     set_flag<&sim::ModelSpec::gated_ffn>},
    {"tied_embeddings", Kind::boolean, Need::required, false, {}, "output layer shares the embedding",
     set_flag<&sim::ModelSpec::tied_embeddings>},
    {"dropout", Kind::boolean, Need::required, false, {}, "dropout during pre-training",
     set_flag<&sim::ModelSpec::dropout>},
    {"rmsnorm", Kind::boolean, Need::optional, false, {}, "RMSNorm (true) or LayerNorm (false, default)",
     set_flag<&sim::ModelSpec::rmsnorm>},
    {"rope", Kind::boolean, Need::optional, false, {}, "rotary position embedding in every layer (default false)",
     set_flag<&sim::ModelSpec::rope>},
    {"attention", Kind::string, Need::optional, false, {},
     "mha, gqa, mqa, mla or sliding_window (default: mha/gqa from kv_heads)",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       const std::string a = str(v);
       const auto kinds = attention_kinds();
       if (std::find(kinds.begin(), kinds.end(), a) == kinds.end()) {
         r.error(p, "unknown attention '" + a + "' (" + suggest(a, kinds) + ")");
         return;
       }
       m.attention = a;
     }},
    {"mla", Kind::object, Need::optional, false, {}, "multi-head latent attention dimensions (with attention \"mla\")",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       m.has_mla = true;
       detail::read_fields<sim::MlaSpec>(v, p, kMlaFields, m.entry.spec.mla, r);
     }},
    {"head_dim", Kind::integer, Need::optional, false, {1, 1e5, false},
     "per-head dimension when it is not hidden/heads (Qwen3, gpt-oss)", set_dim<&sim::ModelSpec::attention_head_dim>},
    {"sliding_window_every", Kind::integer, Need::optional, false, {1, 1e4, false},
     "one layer in this many uses the sliding window (default 1: all)", set_dim<&sim::ModelSpec::sliding_window_every>},
    {"sliding_window", Kind::integer, Need::optional, false, {1, 1e8, false},
     "tokens each query attends to (sliding-window attention)", set_dim<&sim::ModelSpec::sliding_window>},
    {"moe", Kind::object, Need::optional, false, {}, "mixture of experts: experts, top_k, expert_ffn_hidden, ...",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       m.has_moe = true;
       detail::read_fields<sim::MoeSpec>(v, p, kMoeFields, m.entry.spec.moe, r);
     }},
    {"layer_pattern", Kind::string, Need::optional, false, {},
     "hybrid model: one symbol per layer, M (Mamba-2), * (attention), - (MLP), E (MoE) (Megatron-Core's "
     "hybrid_override_pattern)",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.spec.layer_pattern = str(v); }},
    {"mamba", Kind::object, Need::optional, false, {}, "Mamba-2 mixer: heads, head_dim, state, groups, conv_kernel, chunk",
     [](ModelDraft& m, const json& v, Reader& r, const std::string& p) {
       // read_hybrid reads the `mamba` key of the model object: hand it the one key.
       detail::read_hybrid(json{{"mamba", v}, {"layers", m.entry.spec.layers}}, p.substr(0, p.rfind('/')),
                           m.entry.spec, r);
     }},
    {"params_B_published", Kind::number, Need::required, true, {0, 1e6, true},
     "parameter count as published, billions",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.params_b_published = num(v); }},
    {"params_active_B_published", Kind::number, Need::optional, false, {0, 1e6, true},
     "parameters active per token as published (MoE), billions",
     detail::store<&ModelDraft::params_active_b_published>},
    {"source", Kind::string_list, Need::required, false, {}, "where the dimensions come from",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.sources = strings(v); }},
    {"notes", Kind::string, Need::optional, false, {}, "caveats",
     [](ModelDraft& m, const json& v, Reader&, const std::string&) { m.entry.notes = str(v); }},
};

// Checks across the keys of one record; fills ModelSpec::attention from the attention kind.
ModelEntry finish_model(ModelDraft d, Reader& r, const std::string& p) {
  auto& s = d.entry.spec;
  using detail::child;
  const std::string heads = std::to_string(s.heads), kv = std::to_string(s.kv_heads);
  if (s.hidden > 0 && s.heads > 0 && s.hidden % s.heads != 0) {
    r.error(child(p, "heads"), "must divide hidden (" + std::to_string(s.hidden) + "); got " + heads);
  }
  if (s.heads > 0 && s.kv_heads > 0 && s.heads % s.kv_heads != 0) {
    r.error(child(p, "kv_heads"), "must divide heads (" + heads + "); got " + kv);
  }
  const std::string& a = d.attention;
  const std::string ap = child(p, "attention");
  if (a == "mha" && s.kv_heads != s.heads) {
    r.error(ap, "'mha' needs kv_heads == heads; got kv_heads " + kv + ", heads " + heads);
  } else if (a == "gqa" && s.kv_heads >= s.heads) {
    r.error(ap, "'gqa' needs kv_heads < heads; got kv_heads " + kv + ", heads " + heads);
  } else if (a == "mqa" && s.kv_heads != 1) {
    r.error(ap, "'mqa' needs kv_heads == 1; got kv_heads " + kv);
  } else if (a == "mla") {
    s.attention = sim::Attention::mla;
    if (!d.has_mla) r.error(child(p, "mla"), "required with attention \"mla\" (the latent dimensions) is missing");
    if (s.kv_heads != s.heads) {
      r.error(child(p, "kv_heads"), "must equal heads (" + heads + ") with attention \"mla\" (MLA has no separate "
                                    "key/value heads); got " + kv);
    }
    if (s.sliding_window > 0) r.error(child(p, "sliding_window"), "is not supported with attention \"mla\"");
  } else if (a == "sliding_window" && s.sliding_window == 0) {
    r.error(child(p, "sliding_window"), "required with attention \"sliding_window\" (window in tokens) is missing");
  }
  if (d.has_mla && a != "mla") {
    r.error(child(p, "mla"), "is only used with attention \"mla\"; got attention " +
                                 (a.empty() ? std::string("not given") : "\"" + a + "\""));
  }
  if (s.sliding_window > 0 && s.seq_len > 0 && s.sliding_window > s.seq_len) {
    r.error(child(p, "sliding_window"), "must be at most seq_len (" + std::to_string(s.seq_len) + "); got " +
                                            std::to_string(s.sliding_window));
  }
  if (d.has_moe && s.is_moe()) {
    const std::string mp = child(p, "moe");
    if (s.moe.top_k > s.moe.experts) {
      r.error(child(mp, "top_k"), "must be at most experts (" + std::to_string(s.moe.experts) + "); got " +
                                      std::to_string(s.moe.top_k));
    }
    if (s.layers > 0 && s.moe.dense_layers >= s.layers) {
      r.error(child(mp, "dense_layers"), "must be less than layers (" + std::to_string(s.layers) + "); got " +
                                             std::to_string(s.moe.dense_layers));
    }
  }
  detail::check_hybrid(s, p, r);
  if (d.params_active_b_published && *d.params_active_b_published > d.entry.params_b_published &&
      d.entry.params_b_published > 0) {
    r.error(child(p, "params_active_B_published"),
            "must not exceed params_B_published (" + detail::fmt(d.entry.params_b_published) + "); got " +
                detail::fmt(*d.params_active_b_published));
  }
  return std::move(d.entry);
}

// --- storage.json ---------------------------------------------------------------------------

constexpr const char* kStorageKinds[] = {"parallel_fs", "object", "local_nvme"};

// Bandwidths in GB/s (decimal), null when not published; 1e5 GB/s = 100 TB/s is beyond any system.
#define CAPPLAN_STORAGE_BW(key, member, help)                                                     \
  {key, Kind::number, Need::optional, true, {0, 1e5, true}, help,                                 \
   detail::store<&StorageEntry::member>}
constexpr Field<StorageEntry> kStorageFields[] = {
    {"id", Kind::string, Need::required, false, {}, "<provider>-<name>, lower case",
     [](StorageEntry& e, const json& v, Reader& r, const std::string& p) {
       check_id(v, r, p);
       e.id = str(v);
     }},
    {"provider", Kind::string, Need::required, false, {}, "provider or site",
     detail::store<&StorageEntry::provider>},
    {"name", Kind::string, Need::required, false, {}, "the offering's name",
     detail::store<&StorageEntry::name>},
    {"kind", Kind::string, Need::required, false, {}, "parallel_fs, object or local_nvme",
     [](StorageEntry& e, const json& v, Reader& r, const std::string& p) {
       e.kind = str(v);
       r.one_of(v, p, {std::begin(kStorageKinds), std::end(kStorageKinds)}, "kind");
     }},
    CAPPLAN_STORAGE_BW("write_GBps", write_gb_per_s, "aggregate write bandwidth, GB/s"),
    CAPPLAN_STORAGE_BW("read_GBps", read_gb_per_s, "aggregate read bandwidth, GB/s"),
    CAPPLAN_STORAGE_BW("write_GBps_per_node", write_gb_per_s_per_node, "write bandwidth of one node, GB/s"),
    CAPPLAN_STORAGE_BW("read_GBps_per_node", read_gb_per_s_per_node, "read bandwidth of one node, GB/s"),
    CAPPLAN_STORAGE_BW("GBps_per_TiB", gb_per_s_per_tib, "throughput per TiB provisioned, GB/s"),
    CAPPLAN_STORAGE_BW("write_GBps_per_TiB", write_gb_per_s_per_tib, "write throughput per TiB provisioned, GB/s"),
    CAPPLAN_STORAGE_BW("read_GBps_per_TiB", read_gb_per_s_per_tib, "read throughput per TiB provisioned, GB/s"),
    CAPPLAN_STORAGE_BW("max_write_GBps", max_write_gb_per_s, "cap on the per-TiB write throughput, GB/s"),
    CAPPLAN_STORAGE_BW("max_read_GBps", max_read_gb_per_s, "cap on the per-TiB read throughput, GB/s"),
    {"default", Kind::boolean, Need::optional, false, {}, "the tier assumed when a scenario gives no storage",
     detail::store<&StorageEntry::is_default>},
    {"usd_per_GB_month", Kind::number, Need::optional, true, {0, 1e3, false}, "price per decimal GB-month, USD",
     detail::store<&StorageEntry::usd_per_gb_month>},
    {"region", Kind::string, Need::optional, true, {}, "region the price applies to",
     detail::store<&StorageEntry::region>},
    {"date", Kind::string, Need::required, false, {}, "date the figures were read, YYYY-MM-DD",
     [](StorageEntry& e, const json& v, Reader& r, const std::string& path) {
       if (!detail::is_date(str(v), true)) {
         r.error(path, "must be a date YYYY-MM-DD (or YYYY-MM, YYYY); got " + detail::describe(v));
       }
       e.date = str(v);
     }},
    {"currency", Kind::string, Need::required, false, {}, "ISO 4217 code of the price's currency",
     [](StorageEntry& e, const json& v, Reader& r, const std::string& path) {
       if (!is_currency_code(str(v))) r.error(path, currency_code_error(str(v)));
       e.currency = str(v);
     }},
    {"source", Kind::string_list, Need::required, false, {}, "where each figure was read",
     detail::store<&StorageEntry::sources>},
    {"confidence", Kind::string, Need::required, false, {}, "confidence in the figures",
     detail::store<&StorageEntry::confidence>},
    {"notes", Kind::string, Need::optional, false, {}, "caveats",
     detail::store<&StorageEntry::notes>},
};
#undef CAPPLAN_STORAGE_BW

// --- One catalog file ---------------------------------------------------------------------

struct Loaded {
  bool readable = false;  // the list itself could be read (records may still have errors)
};

// Reads {"schema": 1, "<list_key>": [records]}, parsing each record with `parse_record` and
// checking that the ids (`id_of`) are unique.
template <class Entry, class ParseRecord, class IdOf>
Loaded load_list(const std::filesystem::path& dir, const std::string& file, const std::string& list_key,
                 std::vector<Entry>& out, Diagnostics& diags, ParseRecord parse_record, IdOf id_of) {
  auto text = detail::read_text_file(dir / file, file);
  if (!text) {
    diags.insert(diags.end(), text.error().begin(), text.error().end());
    return {};
  }
  auto j = detail::parse_json_text(*text, file);
  if (!j) {
    diags.insert(diags.end(), j.error().begin(), j.error().end());
    return {};
  }
  Reader r(file, diags);
  if (!r.object(*j, "")) return {};
  if (const json* s = r.required(*j, "", "schema", "catalog schema version, 1")) {
    r.schema_version(*s, "/schema", kSchema);
  }
  if (const json* n = Reader::find(*j, "notes")) r.string(*n, "/notes");
  r.unknown_keys(*j, "", {"schema", list_key, "notes"});
  const json* list = r.required(*j, "", list_key, "the list of records");
  if (list == nullptr || !r.array(*list, "/" + list_key)) return {};
  std::map<std::string, std::size_t> first_index;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string p = detail::child("/" + list_key, i);
    Entry e = parse_record((*list)[i], p, r);
    if (const std::string& id = id_of(e); !id.empty()) {
      auto [it, inserted] = first_index.emplace(id, i);
      if (!inserted) {
        r.error(detail::child(p, "id"), "duplicate id '" + id + "' (first at #/" + list_key + "/" +
                                            std::to_string(it->second) + ")");
      }
    }
    out.push_back(std::move(e));
  }
  return {true};
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// --- frameworks.json --------------------------------------------------------------------------

// One row per recipe default: how its value is checked and stored. Every default is an object
// {"value": ..., "source": "..."}, or {"value": null, "note": "..."} where the framework has no
// such default or it was not read (capplan's own default applies).
struct RecipeDefault {
  const char* key;
  bool required;
  const char* help;
  // Checks a non-null value and stores it; false (with the error reported) when it is invalid.
  bool (*set)(sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p);
};

bool expect_bool(const json& v, Reader& rd, const std::string& p) { return rd.boolean(v, p).has_value(); }

template <class E>
bool expect_name(const json& v, Reader& rd, const std::string& p, std::optional<E> (*parse)(const std::string&),
                 std::vector<std::string> known, E& out) {
  auto e = rd.one_of(v, p, parse, known, "value");
  if (e) out = *e;
  return e.has_value();
}

#define CAPPLAN_RECIPE_BOOL(key, member, required, help)                                          \
  {key, required, help, [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) { \
     if (!expect_bool(v, rd, p)) return false;                                                       \
     r.member = v.get<bool>();                                                                       \
     return true;                                                                                    \
   }}

// A number field of the recipe within [lo, hi].
#define CAPPLAN_RECIPE_NUMBER(key, member, lo, hi, help)                                             \
  {key, false, help, [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {  \
     const auto x = rd.number(v, p, lo, hi, false);                                                  \
     if (x) r.member = *x;                                                                           \
     return x.has_value();                                                                           \
   }}

std::optional<sim::Framework> kernels_from_string(const std::string& s) {
  if (s == "fused") return sim::Framework::megatron;
  if (s == "eager") return sim::Framework::pytorch;
  return std::nullopt;
}

constexpr RecipeDefault kRecipeDefaults[] = {
    {"kernels", true, "element-wise kernels: fused or eager",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       return expect_name<sim::Framework>(v, rd, p, kernels_from_string, {"fused", "eager"}, r.kernels);
     }},
    {"loss_kernel", true, "loss kernels: unfused, fused, te or eager",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       sim::LossKernel k{};
       if (!expect_name<sim::LossKernel>(v, rd, p, sim::loss_kernel_from_string, {"unfused", "fused", "te", "eager"},
                                         k))
         return false;
       r.loss_kernel = k;
       return true;
     }},
    {"attention_kernel", false, "fused attention kernel generation: flash2 or flash1 (absent: flash2)",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       sim::AttentionKernel k{};
       if (!expect_name<sim::AttentionKernel>(v, rd, p, sim::attention_kernel_from_string, {"flash2", "flash1"}, k))
         return false;
       r.attention_kernel = k;
       return true;
     }},
    {"grad_reduce_in_fp32", true, "gradients reduced in fp32, per precision: {bf16, fp16, fp8} (each true, false or null)",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       if (!rd.object(v, p)) return false;
       bool ok = true;
       auto one = [&](const char* key, std::optional<bool>& out) {
         const json* b = rd.required(v, p, key, "true, false or null");
         if (b == nullptr) {
           ok = false;
         } else if (!b->is_null()) {
           auto flag = rd.boolean(*b, detail::child(p, key));
           if (flag) out = *flag;
           ok = ok && flag.has_value();
         }
       };
       one("bf16", r.grad_reduce_in_fp32_bf16);
       one("fp16", r.grad_reduce_in_fp32_fp16);
       one("fp8", r.grad_reduce_in_fp32_fp8);
       rd.unknown_keys(v, p, {"bf16", "fp16", "fp8"});
       return ok;
     }},
    CAPPLAN_RECIPE_BOOL("fp8_param_gather", fp8_param_gather, true, "FP8 weights, all-gathered in FP8"),
    CAPPLAN_RECIPE_BOOL("master_weights", master_weights, false,
                        "fp32 master weights and optimizer state beside 16-bit weights (false: pure 16-bit training)"),
    {"fp8_recipe", false, "FP8 scaling: delayed or current",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       sim::Fp8Recipe k{};
       if (!expect_name<sim::Fp8Recipe>(v, rd, p, sim::fp8_recipe_from_string, {"delayed", "current", "mxfp8"}, k)) return false;
       r.fp8_recipe = k;
       return true;
     }},
    CAPPLAN_RECIPE_BOOL("overlap_dp_comm", overlap_dp_comm, true, "gradient reduction overlapped with backward"),
    CAPPLAN_RECIPE_BOOL("overlap_dp_comm_zero3", overlap_dp_comm_zero3, false,
                        "the same with ZeRO-3 / full sharding, where it differs"),
    CAPPLAN_RECIPE_BOOL("tp_comm_overlap", tp_comm_overlap, true, "tensor-parallel communication overlapped with GEMMs"),
    CAPPLAN_RECIPE_BOOL("pp_comm_overlap", pp_comm_overlap, false, "pipeline send/recv overlapped with compute"),
    CAPPLAN_RECIPE_BOOL("pp_p2p_batched", pp_p2p_batched, false,
                        "a micro-batch's pipeline send and receive batched into one call (false: separate blocking calls)"),
    CAPPLAN_RECIPE_BOOL("tp_async_dgrad", tp_async_dgrad, false,
                        "a column-parallel linear's input-gradient collective overlapped with its weight-gradient GEMM"),
    CAPPLAN_RECIPE_BOOL("ep_comm_overlap", ep_comm_overlap, false, "expert-parallel all-to-all overlapped"),
    {"recompute", true, "activation recompute: none, selective or full",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       sim::Recompute k{};
       if (!expect_name<sim::Recompute>(v, rd, p, sim::recompute_from_string, {"none", "selective", "full"}, k))
         return false;
       r.recompute = k;
       return true;
     }},
    {"recompute_modules", false, "Megatron-Core recompute_modules beyond core_attn: layernorm, moe_act, moe",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       if (!v.is_array()) {
         rd.error(p, "expected a list of module names (layernorm, moe_act, moe); got " + detail::describe(v));
         return false;
       }
       r.recompute_norms = false;
       r.recompute_moe_act = false;
       r.recompute_moe = false;
       for (std::size_t i = 0; i < v.size(); ++i) {
         const std::string name = v[i].is_string() ? v[i].get<std::string>() : v[i].dump();
         if (name == "layernorm") {
           r.recompute_norms = true;
         } else if (name == "moe_act") {
           r.recompute_moe_act = true;
         } else if (name == "moe") {
           r.recompute_moe = true;
         } else {
           rd.error(detail::child(p, i), "unknown module '" + name + "' (known: layernorm, moe_act, moe)");
           return false;
         }
       }
       return true;
     }},
    {"selective_recompute", false, "false: only full-layer checkpointing exists in this version",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       if (!expect_bool(v, rd, p)) return false;
       r.selective_recompute = v.get<bool>();
       return true;
     }},
    CAPPLAN_RECIPE_BOOL("flash_attention", flash_attention, false, "fused (flash) attention"),
    CAPPLAN_RECIPE_BOOL("dropout", dropout, false, "dropout in training"),
    CAPPLAN_RECIPE_BOOL("expert_tp_follows_tp", expert_tp_follows_tp, false,
                        "MoE: expert tensor-parallel size defaults to the tensor-parallel size"),
    CAPPLAN_RECIPE_BOOL("cuda_graphs", cuda_graphs, true, "CUDA graphs captured (not modelled)"),
    CAPPLAN_RECIPE_NUMBER("host_us_per_op", host_us_per_op, 0.0, 10000.0,
                          "host time to issue one op of capplan's op list, microseconds"),
    CAPPLAN_RECIPE_NUMBER("zero3_prefetch_params", zero3_prefetch_params, 1.0, 1e12,
                          "ZeRO-3: parameter elements gathered ahead of use (at least the next tensor)"),
    CAPPLAN_RECIPE_BOOL("zero3_regather_recompute", zero3_regather_recompute, false,
                        "ZeRO-3 under full recompute: parameters gathered for the recomputed forward, released, "
                        "gathered again for backward"),
    CAPPLAN_RECIPE_NUMBER("zero3_host_us_per_layer", zero3_host_us_per_layer, 0.0, 1e6,
                          "DeepSpeed ZeRO-3: host time of the parameter hooks per layer and pass, microseconds"),
    {"zero_full_finetune", false, "the ZeRO stage of the recipe's full-parameter fine-tuning script",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       const auto z = rd.integer(v, p, 0, 3);
       if (z) r.zero_full_finetune = static_cast<int>(*z);
       return z.has_value();
     }},
    {"lora_rank", false, "fine-tuning: the LoRA rank when the scenario does not give one",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       const auto rank = rd.integer(v, p, 1, 65536);
       if (rank) r.lora_rank = static_cast<int>(*rank);
       return rank.has_value();
     }},
    {"lora_targets", false, "fine-tuning: the linears LoRA adapts by default (q, k, v, o, gate, up, down)",
     [](sim::FrameworkRecipe& r, const json& v, Reader& rd, const std::string& p) {
       const auto bits = detail::lora_targets_from_json(v, rd, p);
       if (bits) r.lora_targets = *bits;
       return bits.has_value();
     }},
    CAPPLAN_RECIPE_BOOL("packed_document_mask", packed_document_mask, false,
                        "fine-tuning: packed sequences attend only within their documents"),
};
#undef CAPPLAN_RECIPE_BOOL
#undef CAPPLAN_RECIPE_NUMBER

FrameworkEntry parse_framework(const json& j, const std::string& path, Reader& r) {
  FrameworkEntry e;
  if (!r.object(j, path)) return e;
  detail::Object o{j, path, r};
  if (const json* id = Reader::find(j, "id"); id != nullptr && id->is_string()) check_id(*id, r, o.at("id"));
  e.recipe.id = o.string("id", true);
  e.recipe.name = o.string("name", true);
  e.version = o.string("version", true);
  e.summary = o.string("summary", true);
  o.known({"id", "name", "version", "summary", "defaults"});
  const std::string dp = o.at("defaults");
  const json* defaults = o.get("defaults", "the recipe's defaults, each {value, source} or {value: null, note}");
  if (defaults == nullptr || !r.object(*defaults, dp)) return e;
  for (const auto& f : kRecipeDefaults) {
    const std::string p = detail::child(dp, f.key);
    const json* it = Reader::find(*defaults, f.key);
    if (it == nullptr) {
      if (f.required) r.error(p, std::string("required (") + f.help + "; null with a note when there is none) is missing");
      continue;
    }
    if (!r.object(*it, p)) continue;
    r.unknown_keys(*it, p, {"value", "source", "note"});
    FrameworkDefault d;
    d.key = f.key;
    for (auto [key, out] : {std::pair{"source", &d.source}, std::pair{"note", &d.note}}) {
      const json* v = Reader::find(*it, key);
      if (auto s = v ? r.string(*v, detail::child(p, key)) : std::nullopt; s && !s->empty()) *out = *s;
    }
    const json* value = r.required(*it, p, "value", std::string(f.help) + ", or null");
    if (value == nullptr) continue;
    d.value = value->dump();
    if (value->is_null()) {
      if (d.note.empty()) r.error(detail::child(p, "note"), "required where the value is null (why there is none)");
    } else {
      if (d.source.empty()) r.error(detail::child(p, "source"), "required (where the value was read: URL, file#line)");
      f.set(e.recipe, *value, r, detail::child(p, "value"));
    }
    e.defaults.push_back(std::move(d));
  }
  r.unknown_keys(*defaults, dp, [] {
    std::vector<std::string> keys;
    for (const auto& f : kRecipeDefaults) keys.emplace_back(f.key);
    return keys;
  }());
  return e;
}

// --- engines.json -----------------------------------------------------------------------------

// One row per engine default, as kRecipeDefaults: every default is {"value": ..., "source": "..."}
// or {"value": null, "note": "..."}; a null leaves the EngineSpec member at its C++ default.
struct EngineDefault {
  const char* key;
  const char* help;
  // Checks a non-null value and stores it; false (with the error reported) when it is invalid.
  bool (*set)(sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p);
};

std::optional<sim::KvBudget> kv_budget_from_string(const std::string& s) {
  if (s == "total_memory") return sim::KvBudget::total_memory;
  if (s == "free_memory") return sim::KvBudget::free_memory;
  return std::nullopt;
}

// {"bf16": x, "fp16": x, "fp8": x, "int8": x, "int4": x, "fp4": x}: each in (0, 1], or null (1).
bool set_quant_efficiency(std::array<double, sim::kWeightFormats>& out, const json& v, Reader& rd,
                          const std::string& p) {
  if (!rd.object(v, p)) return false;
  constexpr sim::WeightFormat kFormats[] = {sim::WeightFormat::bf16, sim::WeightFormat::fp16,
                                            sim::WeightFormat::fp8,  sim::WeightFormat::int8,
                                            sim::WeightFormat::int4, sim::WeightFormat::fp4};
  static_assert(std::size(kFormats) == sim::kWeightFormats);
  std::vector<std::string> names;
  bool ok = true;
  for (const auto f : kFormats) {
    const std::string name = sim::to_string(f);
    names.push_back(name);
    const json* x = rd.required(v, p, name, "a number in (0, 1] or null (1)");
    if (x == nullptr) {
      ok = false;
      continue;
    }
    auto& slot = out[static_cast<std::size_t>(sim::index(f))];
    if (x->is_null()) {
      slot = 1.0;
    } else if (auto eff = rd.number(*x, detail::child(p, name), 0.0, 1.0, true)) {
      slot = *eff;
    } else {
      ok = false;
    }
  }
  rd.unknown_keys(v, p, names);
  return ok;
}

constexpr double kMaxSeqs = 1e6;
constexpr double kMaxBatchedTokens = 1e8;
constexpr double kMaxBlockTokens = 1e5;
constexpr double kMaxKernelGapUs = 1e3;      // 1 ms per kernel inside a graph
constexpr double kMaxStepOverheadUs = 1e6;   // 1 s per engine step
constexpr double kMaxRuntimeReserveGib = 1024;

constexpr EngineDefault kEngineDefaults[] = {
    {"max_num_seqs", "sequences in one batch, >= 1",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto n = rd.integer(v, p, 1, kMaxSeqs);
       if (n) e.max_num_seqs = static_cast<int>(*n);
       return n.has_value();
     }},
    {"max_num_batched_tokens", "tokens (prefill chunks + decodes) in one step, >= 1",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto n = rd.integer(v, p, 1, kMaxBatchedTokens);
       if (n) e.max_num_batched_tokens = *n;
       return n.has_value();
     }},
    {"chunked_prefill", "prompts split into chunks that share steps with decodes",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto b = rd.boolean(v, p);
       if (b) e.chunked_prefill = *b;
       return b.has_value();
     }},
    {"reserve_full_sequence", "admission reserves the KV cache for the whole sequence, so nothing is preempted",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto b = rd.boolean(v, p);
       if (b) e.reserve_full_sequence = *b;
       return b.has_value();
     }},
    {"kv_budget", "what kv_memory_fraction is a fraction of: total_memory or free_memory",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       return expect_name<sim::KvBudget>(v, rd, p, kv_budget_from_string, {"total_memory", "free_memory"},
                                         e.kv_budget);
     }},
    {"kv_memory_fraction", "share of the GPU's memory (or of what is free) the engine takes, in (0, 1]",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto x = rd.number(v, p, 0.0, 1.0, true);
       if (x) e.kv_memory_fraction = *x;
       return x.has_value();
     }},
    {"kv_block_tokens", "tokens per paged-KV block, >= 1",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto n = rd.integer(v, p, 1, kMaxBlockTokens);
       if (n) e.kv_block_tokens = static_cast<int>(*n);
       return n.has_value();
     }},
    {"cuda_graphs", "decode steps replayed from CUDA graphs",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto b = rd.boolean(v, p);
       if (b) e.cuda_graphs = *b;
       return b.has_value();
     }},
    {"kernel_gap_us", "per-kernel cost inside a CUDA graph, microseconds",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto us = rd.number(v, p, 0.0, kMaxKernelGapUs, false);
       if (us) e.kernel_gap = units::microseconds(*us);
       return us.has_value();
     }},
    {"step_overhead_us", "host time per engine step the GPU waits for (schedule, inputs, sampling), microseconds",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto us = rd.number(v, p, 0.0, kMaxStepOverheadUs, false);
       if (us) e.step_overhead = units::microseconds(*us);
       return us.has_value();
     }},
    {"runtime_reserve_gib", "per GPU: CUDA context, CUDA graphs, NCCL and allocator slack, GiB",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       const auto g = rd.number(v, p, 0.0, kMaxRuntimeReserveGib, false);
       if (g) e.runtime_reserve = units::gib(*g);
       return g.has_value();
     }},
    {"quant_efficiency", "dense GEMM speed per weight format relative to its roofline: {bf16, fp16, fp8, int8, int4, fp4}",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       return set_quant_efficiency(e.quant_efficiency, v, rd, p);
     }},
    {"quant_moe_efficiency", "MoE expert GEMM speed per weight format relative to its roofline: {bf16, fp16, fp8, int8, int4, fp4}",
     [](sim::EngineSpec& e, const json& v, Reader& rd, const std::string& p) {
       return set_quant_efficiency(e.quant_moe_efficiency, v, rd, p);
     }},
};

EngineEntry parse_engine(const json& j, const std::string& path, Reader& r) {
  EngineEntry e;
  if (!r.object(j, path)) return e;
  detail::Object o{j, path, r};
  if (const json* id = Reader::find(j, "id"); id != nullptr && id->is_string()) check_id(*id, r, o.at("id"));
  e.spec.id = o.string("id", true);
  e.spec.name = o.string("name", true);
  e.spec.version = o.string("version", true);
  e.summary = o.string("summary", true);
  e.spec.source = o.string("source", true);
  o.known({"id", "name", "version", "summary", "source", "defaults"});
  const std::string dp = o.at("defaults");
  const json* defaults = o.get("defaults", "the engine's defaults, each {value, source} or {value: null, note}");
  if (defaults == nullptr || !r.object(*defaults, dp)) return e;
  for (const auto& f : kEngineDefaults) {
    const std::string p = detail::child(dp, f.key);
    const json* it = Reader::find(*defaults, f.key);
    if (it == nullptr) {
      r.error(p, std::string("required (") + f.help + "; null with a note when there is none) is missing");
      continue;
    }
    if (!r.object(*it, p)) continue;
    r.unknown_keys(*it, p, {"value", "source", "note"});
    FrameworkDefault d;
    d.key = f.key;
    for (auto [key, out] : {std::pair{"source", &d.source}, std::pair{"note", &d.note}}) {
      const json* v = Reader::find(*it, key);
      if (auto s = v ? r.string(*v, detail::child(p, key)) : std::nullopt; s && !s->empty()) *out = *s;
    }
    const json* value = r.required(*it, p, "value", std::string(f.help) + ", or null");
    if (value == nullptr) continue;
    d.value = value->dump();
    if (value->is_null()) {
      if (d.note.empty()) r.error(detail::child(p, "note"), "required where the value is null (why there is none)");
    } else {
      if (d.source.empty()) r.error(detail::child(p, "source"), "required (where the value was read: URL, file#line)");
      f.set(e.spec, *value, r, detail::child(p, "value"));
    }
    e.defaults.push_back(std::move(d));
  }
  r.unknown_keys(*defaults, dp, [] {
    std::vector<std::string> keys;
    for (const auto& f : kEngineDefaults) keys.emplace_back(f.key);
    return keys;
  }());
  return e;
}

}  // namespace

std::optional<double> InstancePrice::per_gpu_hour(int gpus_per_node) const {
  if (usd_per_gpu_hour) return *usd_per_gpu_hour;
  if (usd_per_node_hour && gpus_per_node > 0) return *usd_per_node_hour / gpus_per_node;
  return std::nullopt;
}

std::optional<double> InstancePrice::per_gpu_hour_usd(int gpus_per_node) const {
  const auto amount = per_gpu_hour(gpus_per_node);
  if (!amount || currency == "USD") return amount;
  if (!usd_per_unit) return std::nullopt;  // never compared (nor shown) as if it were dollars
  return *amount * *usd_per_unit;
}

sim::Currency InstancePrice::money() const {
  sim::Currency c;
  c.code = currency.empty() ? "USD" : currency;
  c.usd_per_unit = c.is_usd() ? 1.0 : usd_per_unit.value_or(0.0);
  c.rate_date = c.is_usd() ? std::string() : date;
  return c;
}

std::optional<NodePower> default_node_power(const Catalogs& catalogs, const sim::Cluster& c) {
  const GpuEntry* g = catalogs.find_gpu(c.gpu.id);
  if (g == nullptr) return std::nullopt;
  const std::string gpus = std::to_string(c.gpus_per_node) + " GPUs";
  if (g->system_power && g->system_power->gpus == c.gpus_per_node) {
    return NodePower{g->system_power->w, false,
                     g->system_power->system + " maximum system power " + detail::fmt(g->system_power->w) +
                         " W per node (" + g->system_power->source + ")"};
  }
  if (g->tdp_w <= 0) return std::nullopt;
  const double w = g->tdp_w * c.gpus_per_node;
  std::string why = g->system_power ? "the catalog's system power is for " + std::to_string(g->system_power->gpus) +
                                          " GPUs, not " + std::to_string(c.gpus_per_node)
                                    : "no system power in the catalog for " + g->spec.name;
  return NodePower{w, true,
                   "GPU TDP " + detail::fmt(g->tdp_w) + " W x " + gpus + " = " + detail::fmt(w) +
                       " W per node (GPUs only: CPUs, NICs, fans not counted; " + why + ")"};
}

const GpuEntry* Catalogs::find_gpu(std::string_view id) const {
  auto it = std::find_if(gpus.begin(), gpus.end(), [&](const GpuEntry& g) { return g.spec.id == id; });
  return it == gpus.end() ? nullptr : &*it;
}
namespace {
// "NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3" and " NVIDIA_H100 80GB  HBM3" alike.
std::string device_name_key(std::string_view name) {
  std::string key;
  for (char ch : name) {
    const bool gap = ch == ' ' || ch == '-' || ch == '_' || ch == '\t';
    if (gap) {
      if (!key.empty() && key.back() != ' ') key.push_back(' ');
    } else {
      key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    }
  }
  while (!key.empty() && key.back() == ' ') key.pop_back();
  return key;
}
}  // namespace

const GpuEntry* Catalogs::gpu_for_device_name(std::string_view reported) const {
  const std::string want = device_name_key(reported);
  if (want.empty()) return nullptr;
  for (const auto& g : gpus) {
    for (const auto& n : g.device_names) {
      if (device_name_key(n) == want) return &g;
    }
  }
  return nullptr;
}

const InstanceEntry* Catalogs::find_instance(std::string_view id) const {
  auto it = std::find_if(instances.begin(), instances.end(), [&](const InstanceEntry& e) { return e.id == id; });
  return it == instances.end() ? nullptr : &*it;
}
const StorageEntry* Catalogs::default_storage() const {
  auto it = std::find_if(storage.begin(), storage.end(), [](const StorageEntry& e) { return e.is_default; });
  return it == storage.end() ? nullptr : &*it;
}

const StorageEntry* Catalogs::find_storage(std::string_view id) const {
  auto it = std::find_if(storage.begin(), storage.end(), [&](const StorageEntry& e) { return e.id == id; });
  return it == storage.end() ? nullptr : &*it;
}
const FrameworkEntry* Catalogs::find_framework(std::string_view id) const {
  auto it = std::find_if(frameworks.begin(), frameworks.end(), [&](const FrameworkEntry& e) { return e.recipe.id == id; });
  return it == frameworks.end() ? nullptr : &*it;
}
std::optional<sim::FrameworkRecipe> Catalogs::framework_recipe(std::string_view id) const {
  if (const auto* e = find_framework(id)) return e->recipe;
  if (id == "megatron") return sim::kernel_style_recipe(sim::Framework::megatron);
  if (id == "pytorch") return sim::kernel_style_recipe(sim::Framework::pytorch);
  return std::nullopt;
}
std::vector<std::string> Catalogs::framework_ids() const {
  std::vector<std::string> ids;
  for (const char* legacy : {"megatron", "pytorch"}) {
    if (find_framework(legacy) == nullptr) ids.emplace_back(legacy);
  }
  for (const auto& e : frameworks) ids.push_back(e.recipe.id);
  return ids;
}
const EngineEntry* Catalogs::find_engine(std::string_view id) const {
  auto it = std::find_if(engines.begin(), engines.end(), [&](const EngineEntry& e) { return e.spec.id == id; });
  return it == engines.end() ? nullptr : &*it;
}
std::vector<std::string> Catalogs::engine_ids() const {
  std::vector<std::string> ids;
  for (const auto& e : engines) ids.push_back(e.spec.id);
  return ids;
}
const ModelEntry* Catalogs::find_model(std::string_view id) const {
  auto it = std::find_if(models.begin(), models.end(), [&](const ModelEntry& m) { return m.id == id; });
  return it == models.end() ? nullptr : &*it;
}

std::filesystem::path default_data_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("CAPPLAN_DATA_DIR"); env != nullptr && *env != '\0') return fs::path(env);
  std::error_code ec;
  fs::path installed = fs::path("share") / "capplan" / "data";
  if (auto exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    installed = exe.parent_path().parent_path() / "share" / "capplan" / "data";
    if (fs::is_regular_file(installed / "gpus.json", ec)) return installed;
    // A build tree in its checkout (build/<preset>/cli/capplan), also one carried with its sources
    // to another machine: the nearest folder above the executable that holds data/gpus.json.
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      if (fs::is_regular_file(dir / "data" / "gpus.json", ec)) return dir / "data";
    }
  }
#ifdef CAPPLAN_SOURCE_DATA_DIR
  // A build tree outside its checkout.
  if (fs::path src(CAPPLAN_SOURCE_DATA_DIR); fs::is_regular_file(src / "gpus.json", ec)) return src;
#endif
  return installed;
}

std::string suggest(std::string_view got, const std::vector<std::string>& known) {
  const std::string g = lower(got.substr(0, kMaxSuggestedLength + 1));
  std::string best;
  std::size_t best_score = std::string::npos, best_prefix = 0;
  // A name longer than any id is no typo of one: no edit distance (a 10 MB name cost 6 s).
  const bool typo_sized = got.size() <= kMaxSuggestedLength;
  for (const auto& k : known) {
    if (!typo_sized) break;
    const std::string kl = lower(k);
    std::size_t score = edit_distance(g, kl);
    // A typo in the leading part of a long id ("h1000-sxm" for "h100-sxm-80gb").
    if (g.size() >= 4 && kl.size() > g.size()) score = std::min(score, edit_distance(g, kl.substr(0, g.size())) + 1);
    // A known name that contains what was typed is a likely intent ("h100").
    if (!g.empty() && kl.find(g) != std::string::npos) score = std::min<std::size_t>(score, 1);
    // Ties go to the longer common prefix: "llama3-7b" is nearer "llama3-70b" than "llama2-7b".
    std::size_t prefix = 0;
    while (prefix < g.size() && prefix < kl.size() && g[prefix] == kl[prefix]) ++prefix;
    if (score < best_score || (score == best_score && prefix > best_prefix)) {
      best_score = score;
      best_prefix = prefix;
      best = k;
    }
  }
  const std::size_t tolerance = std::max<std::size_t>(2, g.size() / 3);
  std::string out;
  if (!best.empty() && best_score <= tolerance) out = "did you mean '" + best + "'? ";
  std::vector<std::string> unique;
  for (const auto& k : known) {
    if (std::find(unique.begin(), unique.end(), k) == unique.end()) unique.push_back(k);
  }
  out += "known: " + (unique.empty() ? std::string("(none)") : detail::join(unique));
  return out;
}

Result<Catalogs> load_catalogs(const std::filesystem::path& dir) {
  Diagnostics diags;
  Catalogs c;

  const Loaded gpus = load_list(
      dir, "gpus.json", "gpus", c.gpus, diags,
      [](const json& j, const std::string& p, Reader& r) {
        GpuDraft d;
        detail::read_fields<GpuDraft>(j, p, kGpuFields, d, r);
        return finish_gpu(std::move(d), r);
      },
      [](const GpuEntry& g) -> const std::string& { return g.spec.id; });
  load_list(
      dir, "instances.json", "instances", c.instances, diags,
      [](const json& j, const std::string& p, Reader& r) {
        InstanceEntry e;
        detail::read_fields<InstanceEntry>(j, p, kInstanceFields, e, r);
        check_instance(e, r, p);
        return e;
      },
      [](const InstanceEntry& e) -> const std::string& { return e.id; });
  load_list(
      dir, "models.json", "models", c.models, diags,
      [](const json& j, const std::string& p, Reader& r) {
        ModelDraft d;
        detail::read_fields<ModelDraft>(j, p, kModelFields, d, r);
        return finish_model(std::move(d), r, p);
      },
      [](const ModelEntry& m) -> const std::string& { return m.id; });

  // Storage tiers (optional file: catalogs without it have no tiers to name).
  if (std::error_code ec; std::filesystem::is_regular_file(dir / "storage.json", ec)) {
    load_list(
        dir, "storage.json", "tiers", c.storage, diags,
        [](const json& j, const std::string& p, Reader& r) {
          StorageEntry e;
          detail::read_fields<StorageEntry>(j, p, kStorageFields, e, r);
          const bool per_tib = e.gb_per_s_per_tib || e.write_gb_per_s_per_tib || e.read_gb_per_s_per_tib;
          if (per_tib && (e.write_gb_per_s || e.read_gb_per_s)) {
            r.error(detail::child(p, "GBps_per_TiB"),
                    "give either a per-TiB throughput (GBps_per_TiB, write_/read_GBps_per_TiB) or write_GBps/"
                    "read_GBps, not both");
          }
          if (e.gb_per_s_per_tib && (e.write_gb_per_s_per_tib || e.read_gb_per_s_per_tib)) {
            r.error(detail::child(p, "GBps_per_TiB"),
                    "give either GBps_per_TiB or write_GBps_per_TiB/read_GBps_per_TiB, not both");
          }
          if (!per_tib && (e.max_write_gb_per_s || e.max_read_gb_per_s)) {
            r.error(detail::child(p, e.max_write_gb_per_s ? "max_write_GBps" : "max_read_GBps"),
                    "caps a per-TiB throughput: give write_/read_GBps_per_TiB or GBps_per_TiB");
          }
          if (e.is_default && !e.write_gb_per_s && !e.write_gb_per_s_per_node) {
            r.error(detail::child(p, "default"),
                    "the default tier needs write_GBps or write_GBps_per_node (a bandwidth that needs no capacity)");
          }
          return e;
        },
        [](const StorageEntry& e) -> const std::string& { return e.id; });
    // Across records: one default tier at most.
    Reader r("storage.json", diags);
    bool seen = false;
    for (std::size_t i = 0; i < c.storage.size(); ++i) {
      if (!c.storage[i].is_default) continue;
      if (seen) {
        r.error(detail::child(detail::child("/tiers", i), "default"),
                "a second default tier ('" + c.storage[i].id + "'): at most one tier may be the default");
      }
      seen = true;
    }
  }

  // Framework recipes (optional file: without it, only the kernel styles megatron and pytorch).
  if (std::error_code ec; std::filesystem::is_regular_file(dir / "frameworks.json", ec)) {
    load_list(dir, "frameworks.json", "frameworks", c.frameworks, diags, parse_framework,
              [](const FrameworkEntry& e) -> const std::string& { return e.recipe.id; });
  }

  // Serving engine recipes (optional file: without it, sim::EngineSpec's own defaults).
  if (std::error_code ec; std::filesystem::is_regular_file(dir / "engines.json", ec)) {
    load_list(dir, "engines.json", "engines", c.engines, diags, parse_engine,
              [](const EngineEntry& e) -> const std::string& { return e.spec.id; });
  }

  // Across records: every instance names a GPU that gpus.json defines.
  if (gpus.readable) {
    std::vector<std::string> gpu_ids;
    for (const auto& g : c.gpus) gpu_ids.push_back(g.spec.id);
    Reader r("instances.json", diags);
    for (std::size_t i = 0; i < c.instances.size(); ++i) {
      const auto& e = c.instances[i];
      if (!e.gpu.empty() && c.find_gpu(e.gpu) == nullptr) {
        r.error(detail::child(detail::child("/instances", i), "gpu"),
                "unknown GPU '" + e.gpu + "' (not in gpus.json; " + suggest(e.gpu, gpu_ids) + ")");
      }
    }
  }

  if (!diags.empty()) return std::unexpected(std::move(diags));
  return c;
}

}  // namespace capplan::data
