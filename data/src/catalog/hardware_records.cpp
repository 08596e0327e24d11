// SPDX-License-Identifier: Apache-2.0
// The hardware records of the catalog: gpus.json, instances.json and storage.json (schema in
// data/README.md), each record read and checked on its own.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>

#include "capplan/data/currency.hpp"
#include "catalog/catalog_records.hpp"
#include "catalog/topology_io.hpp"

namespace capplan::data {
namespace {

using namespace records;  // the shared conversions and the reader toolkit

// PCIe x16, one direction, per generation:
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

}  // namespace

namespace records {

GpuEntry read_gpu(const json& j, const std::string& p, Reader& r) {
  GpuDraft d;
  detail::read_fields<GpuDraft>(j, p, kGpuFields, d, r);
  return finish_gpu(std::move(d), r);
}

InstanceEntry read_instance(const json& j, const std::string& p, Reader& r) {
  InstanceEntry e;
  detail::read_fields<InstanceEntry>(j, p, kInstanceFields, e, r);
  check_instance(e, r, p);
  return e;
}

StorageEntry read_storage_tier(const json& j, const std::string& p, Reader& r) {
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
}

}  // namespace records

}  // namespace capplan::data
