// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/cost/calibrated_cost.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

namespace capplan::sim {

namespace {

// A fit whose RMS relative residual exceeds this prices ops, but with a warning: 25% is well
// beyond run-to-run noise (a few %) and means the model's shape does not match the machine.
constexpr double kPoorFit = 0.25;

// A poor fit's finding (`code`, with `f`'s identifying values first): its residual and R^2.
void note_poor_fit(Finding* warning, const FitQuality& q, Finding f) {
  if (warning == nullptr || !(q.rms_relative_residual > kPoorFit)) return;
  f.values.push_back({"residual_pct", 100.0 * q.rms_relative_residual, {}});
  f.values.push_back({"r2", q.r2, {}});
  *warning = std::move(f);
}

// A finding with one text value first, then numbers.
Finding coded(FindingCode code, std::string_view name, std::string text,
              std::initializer_list<std::pair<std::string_view, double>> numbers = {}) {
  Finding f = text_finding(code, name, std::move(text));
  for (const auto& [n, v] : numbers) f.values.push_back({n, v, {}});
  return f;
}

// Which measured memory pattern class an op runs like (names from the blocks in sim/src/lowering/,
// whose layer slice is also the measured step): norms and softmax reduce per row; everything else
// is element-wise.
std::string memory_pattern(const MemoryOp& op) {
  const std::string name = op.name ? op.name : "";
  if (name.find("norm") != std::string::npos || name.find("softmax") != std::string::npos) return "norm";
  if (name == "copy") return "copy";
  return "elementwise";
}

bool same_shape(const GemmPoint& p, const GemmOp& op) {
  return p.dtype == op.dtype && p.m == op.m && p.n == op.n && p.k == op.k && p.batch == op.batch;
}

double dim(const GemmPoint& p, int d) { return static_cast<double>(d == 0 ? p.m : (d == 1 ? p.n : p.k)); }
double dim(const GemmOp& op, int d) { return static_cast<double>(d == 0 ? op.m : (d == 1 ? op.n : op.k)); }

}  // namespace

// How an op was priced; the warning's finding is built only when asked for (the strategy search
// prices thousands of layouts and never reads it).
struct CalibratedCost::Choice {
  const char* how = "datasheet";  // measured | interpolated | fitted | datasheet
  double seconds = 0;             // unused for "datasheet"
  bool datasheet() const { return std::string_view(how) == "datasheet"; }
};

CalibratedCost::CalibratedCost(Profile profile, const Cluster& cluster, DatasheetAssumptions a)
    : profile_(std::move(profile)),
      datasheet_(cluster, profile_.runs_fit ? with_runs_fit(a, *profile_.runs_fit) : a),
      peak_(cluster.gpu.peak),
      hbm_(cluster.gpu.hbm_bandwidth),
      intra_(cluster.intra_node_bandwidth),
      inter_(cluster.inter_node_bandwidth),
      gpu_id_(cluster.gpu.id),
      own_device_(profile_measured_on(profile_, cluster.gpu)) {}

double CalibratedCost::gemm_floor_s(const GemmOp& op) const {
  const double peak = peak_.for_precision(op.dtype).base();
  if (!(peak > 0)) return 0;
  return 2.0 * static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k) *
         static_cast<double>(op.batch) / peak;
}

double CalibratedCost::memory_floor_s(const MemoryOp& op) const {
  if (op.link != MemoryLink::hbm) return 0;
  const double bandwidth = hbm_.base();
  return bandwidth > 0 ? op.bytes.base() / bandwidth : 0;
}

double CalibratedCost::collective_floor_s(const CollectiveOp& op) const {
  const double link = intra_.base() + (op.group.spans_nodes() ? std::max(inter_.base(), 0.0) : 0.0);
  if (!(link > 0)) return 0;
  const double most_busbw = op.kind == CollectiveKind::all_reduce ? 2 * link : link;
  return op.bytes.base() * nccl_bus_factor(op.kind, op.group.size) / most_busbw;
}

std::string CalibratedCost::source() const {
  std::string s = profile_cost_model_name(profile_);
  if (!own_device_) s += "; measured on another device than the scenario's " + gpu_id_;
  return s;
}

CalibratedCost::Choice CalibratedCost::gemm_choice(const GemmOp& op, Finding* warning) const {
  auto fallback = [&](auto&& coded_finding) {
    if (warning != nullptr) *warning = coded_finding();
    return Choice{};
  };
  const std::string_view dt = to_string(op.dtype);
  if (op.fused_attention) {
    return fallback([] { return finding(FindingCode::profile_fused_attention); });
  }
  // 1. A measured point of exactly this shape: its median (mean of medians if measured twice).
  double sum = 0;
  int hits = 0;
  for (const auto& p : profile_.gemm_points) {
    if (same_shape(p, op) && p.time_s > 0) {
      sum += p.time_s;
      ++hits;
    }
  }
  if (hits > 0) return {"measured", sum / hits};

  const GemmFit* fit = nullptr;
  for (const auto& f : profile_.gemm) {
    if (f.dtype == op.dtype) fit = &f;
  }
  if (fit == nullptr) {
    return fallback([&] {
      int shapes = 0;
      for (const auto& p : profile_.gemm_points) shapes += p.dtype == op.dtype;
      if (shapes == 0) return coded(FindingCode::profile_gemm_not_measured, "dtype", std::string(dt));
      return coded(FindingCode::profile_gemm_too_few_shapes, "dtype", std::string(dt), {{"shapes", shapes}});
    });
  }
  if (!fit->covers(op.m, op.n, op.k)) {
    return fallback([&] {
      const auto d = [](std::int64_t v) { return static_cast<double>(v); };
      return coded(FindingCode::profile_gemm_outside_range, "dtype", std::string(dt),
                   {{"m", d(op.m)},
                    {"n", d(op.n)},
                    {"k", d(op.k)},
                    {"min_m", d(fit->min_m)},
                    {"max_m", d(fit->max_m)},
                    {"min_n", d(fit->min_n)},
                    {"max_n", d(fit->max_n)},
                    {"min_k", d(fit->min_k)},
                    {"max_k", d(fit->max_k)}});
    });
  }
  const double model = gemm_model_time_s(*fit, op.m, op.n, op.k, op.batch);
  // 2. Inside a measured shape family (same dtype and batch, two dimensions equal, the third
  // bracketed by measured points): the model times the measured/model ratio, interpolated in
  // log(dimension) between the two nearest points, so the answer passes through the measurements.
  for (int d = 0; d < 3; ++d) {
    const GemmPoint* lo = nullptr;
    const GemmPoint* hi = nullptr;
    const double x = dim(op, d);
    for (const auto& p : profile_.gemm_points) {
      if (p.dtype != op.dtype || p.batch != op.batch || p.time_s <= 0) continue;
      bool others_equal = true;
      for (int e = 0; e < 3; ++e) others_equal = others_equal && (e == d || dim(p, e) == dim(op, e));
      if (!others_equal) continue;
      const double v = dim(p, d);
      if (v < x && (lo == nullptr || v > dim(*lo, d))) lo = &p;
      if (v > x && (hi == nullptr || v < dim(*hi, d))) hi = &p;
    }
    if (lo == nullptr || hi == nullptr) continue;
    const double r_lo = lo->time_s / gemm_model_time_s(*fit, lo->m, lo->n, lo->k, lo->batch);
    const double r_hi = hi->time_s / gemm_model_time_s(*fit, hi->m, hi->n, hi->k, hi->batch);
    if (!(r_lo > 0) || !(r_hi > 0) || !std::isfinite(r_lo) || !std::isfinite(r_hi)) continue;
    const double t = std::log(x / dim(*lo, d)) / std::log(dim(*hi, d) / dim(*lo, d));
    const double ratio = std::exp(std::log(r_lo) + t * (std::log(r_hi) - std::log(r_lo)));
    if (warning != nullptr) {
      note_poor_fit(warning, fit->quality, coded(FindingCode::profile_gemm_poor_fit, "dtype", std::string(dt)));
    }
    return {"interpolated", model * ratio};
  }
  // 3. The fitted model.
  if (warning != nullptr) {
    note_poor_fit(warning, fit->quality, coded(FindingCode::profile_gemm_poor_fit, "dtype", std::string(dt)));
  }
  return {"fitted", model};
}

CalibratedCost::Choice CalibratedCost::memory_choice(const MemoryOp& op, Finding* warning) const {
  auto fallback = [&](auto&& coded_finding) {
    if (warning != nullptr) *warning = coded_finding();
    return Choice{};
  };
  // Host copies and the CPU optimizer step are not kernels the profile measures: the datasheet's.
  if (op.link != MemoryLink::hbm) return Choice{};
  // A pattern measured under the op's own name ("gelu" for "gelu_fwd") wins over its class.
  const std::string name = op.name ? op.name : "";
  std::string pattern = memory_pattern(op);
  auto own_name = [&](const std::string& pat) { return name == pat || name.starts_with(pat + "_"); };
  for (const auto& f : profile_.memory) {
    if (own_name(f.pattern)) pattern = f.pattern;
  }
  for (const auto& pt : profile_.memory_points) {
    if (own_name(pt.pattern)) pattern = pt.pattern;
  }
  const double b = op.bytes.base();
  // 1. Measured sizes of the pattern: the measured time at an exact size, else log(time)
  // interpolated in log(bytes) between the two nearest sizes around it. This follows cache
  // effects a single bandwidth cannot (a CPU's small kernels run from cache).
  const MemoryPoint* lo = nullptr;
  const MemoryPoint* hi = nullptr;
  double exact_sum = 0;
  int exact = 0;
  for (const auto& pt : profile_.memory_points) {
    if (pt.pattern != pattern || !(pt.bytes > 0) || !(pt.time_s > 0)) continue;
    if (pt.bytes == b) {
      exact_sum += pt.time_s;
      ++exact;
    }
    if (pt.bytes < b && (lo == nullptr || pt.bytes > lo->bytes)) lo = &pt;
    if (pt.bytes > b && (hi == nullptr || pt.bytes < hi->bytes)) hi = &pt;
  }
  const MemoryFit* fit = nullptr;
  for (const auto& f : profile_.memory) {
    if (f.pattern == pattern) fit = &f;
  }
  if (exact > 0) return {"measured", exact_sum / exact};
  if (lo != nullptr && hi != nullptr) {
    if (warning != nullptr && fit != nullptr) {
      note_poor_fit(warning, fit->quality, coded(FindingCode::profile_memory_poor_fit, "pattern", pattern));
    }
    const double t = std::log(b / lo->bytes) / std::log(hi->bytes / lo->bytes);
    return {"interpolated", std::exp(std::log(lo->time_s) + t * (std::log(hi->time_s) - std::log(lo->time_s)))};
  }
  // 2. The fitted latency + bytes / bandwidth inside the measured range.
  if (fit != nullptr) {
    if (b < fit->min_bytes || b > fit->max_bytes) {
      // No size in the text: forward, backward and recompute of one op make one warning.
      return fallback([&] {
        Finding f = coded(FindingCode::profile_memory_outside_range, "op", name,
                          {{"min_bytes", fit->min_bytes}, {"max_bytes", fit->max_bytes}});
        return with_text(f, "pattern", pattern);
      });
    }
    if (warning != nullptr) {
      note_poor_fit(warning, fit->quality, coded(FindingCode::profile_memory_poor_fit, "pattern", pattern));
    }
    return {"fitted", fit->latency_s.value + b / fit->bandwidth_Bps.value};
  }
  if (lo != nullptr || hi != nullptr) {
    return fallback([&] {
      Finding f = coded(FindingCode::profile_memory_outside_sizes, "op", name);
      return with_text(f, "pattern", pattern);
    });
  }
  return fallback([&] {
    Finding f = coded(FindingCode::profile_memory_not_measured, "op", name);
    return with_text(f, "pattern", pattern);
  });
}

CalibratedCost::Choice CalibratedCost::collective_choice(const CollectiveOp& op, Finding* warning) const {
  auto fallback = [&](auto&& coded_finding) {
    if (warning != nullptr) *warning = coded_finding();
    return Choice{};
  };
  // A fused EP kernel inside the NVLink domain: no profile measures it (calibration runs NCCL);
  // the catalog's rate prices it.
  if (op.fused_ep_in_node()) return Choice{};
  const std::string kind(to_string(op.kind));
  if (const int tiers = datasheet_.network().size(); tiers > 2) {
    const TierSpan ts = tier_span(op.group, tiers);
    if (ts.outer >= 2) {
      const std::string name = datasheet_.network().tiers[static_cast<std::size_t>(ts.outer)].name;
      const auto across_tier = [&](FindingCode code) {
        Finding f = coded(code, "kind", kind);
        return with_text(f, "tier", name);
      };
      const CollectiveFit* up = nullptr;
      const CollectiveFit* out = nullptr;
      for (const auto& f : profile_.collectives) {
        if (f.kind != op.kind || !(f.busbw_Bps.value > 0)) continue;
        const CollectiveFit*& best = tier_spans_nodes(f.tier) ? out : up;
        if (best == nullptr || f.ranks > best->ranks) best = &f;
      }
      std::vector<TierLink> links = datasheet_.collectives().links();
      if (out == nullptr || !(links[1].busbw.base() > 0)) {
        return fallback([&] { return across_tier(FindingCode::profile_tier_not_scalable); });
      }
      const double scale = out->busbw_Bps.value / links[1].busbw.base();
      if (up != nullptr) links[0].busbw = units::BytesPerSecond::from_base(up->busbw_Bps.value);
      for (std::size_t i = 1; i < links.size(); ++i) links[i].busbw = links[i].busbw * scale;
      if (warning != nullptr) *warning = across_tier(FindingCode::profile_tier_scaled);
      return {"scaled",
              hierarchical_collective_time(op, links, datasheet_.collectives().latency_per_log2_us(),
                                           &datasheet_.collectives().ring())
                  .base()};
    }
  }
  const bool inter = op.group.spans_nodes();
  const int n = op.group.size;
  // The op's finding: its kind, which side of the node boundary, then `numbers`.
  auto describe = [&](FindingCode code, std::initializer_list<std::pair<std::string_view, double>> numbers = {}) {
    Finding f = coded(code, "kind", kind, {{"across_nodes", inter ? 1.0 : 0.0}});
    for (const auto& [name, v] : numbers) f.values.push_back({name, v, {}});
    return f;
  };
  // Fits of this kind on the same side of the node boundary, by rank count.
  const CollectiveFit* exact = nullptr;
  const CollectiveFit* lo = nullptr;
  const CollectiveFit* hi = nullptr;
  bool any = false;
  for (const auto& f : profile_.collectives) {
    if (f.kind != op.kind || tier_spans_nodes(f.tier) != inter) continue;
    any = true;
    if (f.ranks == n) exact = &f;
    if (f.ranks < n && (lo == nullptr || f.ranks > lo->ranks)) lo = &f;
    if (f.ranks > n && (hi == nullptr || f.ranks < hi->ranks)) hi = &f;
  }
  if (!any) return fallback([&] { return describe(FindingCode::profile_collective_not_measured); });
  const double bytes = op.bytes.base();
  auto in_range = [&](const CollectiveFit& f) { return bytes >= f.min_bytes && bytes <= f.max_bytes; };
  auto out_of_range = [&](const CollectiveFit& f) {
    return fallback([&] {
      return describe(FindingCode::profile_collective_outside_range,
                      {{"bytes", bytes}, {"ranks", n}, {"min_bytes", f.min_bytes}, {"max_bytes", f.max_bytes}});
    });
  };
  const double factor = nccl_bus_factor(op.kind, n);
  if (exact != nullptr) {
    if (!in_range(*exact)) return out_of_range(*exact);
    if (warning != nullptr) {
      note_poor_fit(warning, exact->quality, describe(FindingCode::profile_collective_poor_fit, {{"ranks", n}}));
    }
    return {"fitted", exact->latency_s.value + bytes * factor / exact->busbw_Bps.value};
  }
  if (lo != nullptr && hi != nullptr) {
    // Between two measured group sizes: busbw and latency interpolated in log2(ranks) (busbw is
    // nccl-tests' size-independent figure of merit, so it interpolates better than time).
    if (!in_range(*lo)) return out_of_range(*lo);
    if (!in_range(*hi)) return out_of_range(*hi);
    const double t = std::log2(double(n) / lo->ranks) / std::log2(double(hi->ranks) / lo->ranks);
    const double latency = lo->latency_s.value + t * (hi->latency_s.value - lo->latency_s.value);
    const double busbw = std::exp(std::log(lo->busbw_Bps.value) +
                                  t * (std::log(hi->busbw_Bps.value) - std::log(lo->busbw_Bps.value)));
    if (warning != nullptr) {
      const FitQuality& worse = lo->quality.rms_relative_residual > hi->quality.rms_relative_residual ? lo->quality
                                                                                                    : hi->quality;
      note_poor_fit(warning, worse, describe(FindingCode::profile_collective_poor_fit, {{"ranks", n}}));
    }
    return {"interpolated", latency + bytes * factor / busbw};
  }
  return fallback([&] {
    std::string measured;
    for (const auto& f : profile_.collectives) {
      if (f.kind != op.kind || tier_spans_nodes(f.tier) != inter) continue;
      measured += (measured.empty() ? "" : ", ") + std::to_string(f.ranks);
    }
    Finding f = describe(FindingCode::profile_collective_ranks_not_measured, {{"ranks", n}});
    return with_text(f, "measured", measured);
  });
}

units::Seconds CalibratedCost::gemm(const GemmOp& op) const {
  if (op.m <= 0 || op.n <= 0 || op.k <= 0 || op.batch <= 0) return {};
  const Choice c = gemm_choice(op);
  const double t = c.datasheet() || !std::isfinite(c.seconds) || c.seconds < 0
                       ? datasheet_.gemm(op).base()
                       : std::max(c.seconds, gemm_floor_s(op));
  return units::seconds(std::max(t, kernel_floor_s()));
}

units::Seconds CalibratedCost::memory(const MemoryOp& op) const {
  if (op.bytes.base() <= 0) return {};
  const Choice c = memory_choice(op);
  const double t = c.datasheet() || !std::isfinite(c.seconds) || c.seconds < 0
                       ? datasheet_.memory(op).base()
                       : std::max(c.seconds, memory_floor_s(op));
  return units::seconds(std::max(t, kernel_floor_s()));
}

double CalibratedCost::host_issue_s_per_op() const {
  const double measured = own_device_ ? profile_.host_issue_s_per_op() : 0.0;
  return measured > 0 ? measured : datasheet_.host_issue_s_per_op();
}

units::Seconds CalibratedCost::collective(const CollectiveOp& op) const {
  if (op.group.size <= 1 || op.bytes.base() <= 0) return {};
  const Choice c = collective_choice(op);
  if (c.datasheet() || !std::isfinite(c.seconds) || c.seconds < 0) return datasheet_.collective(op);
  return units::seconds(std::max(c.seconds, collective_floor_s(op)));
}

std::string CalibratedCost::pricing(const Op& op) const {
  if (const auto* g = std::get_if<GemmOp>(&op)) {
    if (g->m <= 0 || g->n <= 0 || g->k <= 0 || g->batch <= 0) return "zero";
    return gemm_choice(*g).how;
  }
  if (const auto* m = std::get_if<MemoryOp>(&op)) {
    if (m->bytes.base() <= 0) return "zero";
    return memory_choice(*m).how;
  }
  const auto& c = std::get<CollectiveOp>(op);
  if (c.group.size <= 1 || c.bytes.base() <= 0) return "zero";
  return collective_choice(c).how;
}

std::vector<Finding> CalibratedCost::coverage(const std::vector<StepOp>& ops) const {
  std::vector<Finding> out;
  std::vector<Finding> held;  // the ceilings the profile's times were raised to, one per kind
  double priced = 0, fallback = 0;
  // A profile time below the op's physical floor: one finding per code (and GEMM dtype) with the
  // count of ops it raised, the values of the op furthest above its ceiling.
  const auto hold = [&](const Choice& c, double floor, Finding f, double rate_scale) {
    if (c.datasheet() || !std::isfinite(c.seconds) || !(c.seconds > 0) || !(c.seconds < floor)) return;
    const double over = floor / c.seconds;
    f.values.push_back({f.code == FindingCode::profile_gemm_above_peak     ? "tflops"
                        : f.code == FindingCode::profile_memory_above_peak ? "gbps"
                                                                           : "busbw_gbps",
                        rate_scale / c.seconds, {}});
    f.values.push_back({f.code == FindingCode::profile_gemm_above_peak     ? "peak_tflops"
                        : f.code == FindingCode::profile_memory_above_peak ? "peak_gbps"
                                                                           : "ceiling_gbps",
                        rate_scale / floor, {}});
    f.values.push_back({"over", over, {}});
    f.values.push_back({"operations", 1, {}});
    auto same = std::find_if(held.begin(), held.end(), [&](const Finding& h) {
      return h.code == f.code && (f.code != FindingCode::profile_gemm_above_peak || h.text("dtype") == f.text("dtype"));
    });
    if (same == held.end()) {
      held.push_back(std::move(f));
      return;
    }
    const double operations = same->number("operations") + 1;
    if (over > same->number("over")) *same = std::move(f);
    for (auto& v : same->values) {
      if (v.name == "operations") v.number = operations;
    }
  };
  for (const auto& s : ops) {
    Finding w{FindingCode::note, {}, {}};  // stays a note (never a coverage code) when the op is covered
    Finding* warning = own_device_ ? &w : nullptr;
    std::string_view how = "zero";
    if (const auto* g = std::get_if<GemmOp>(&s.op)) {
      if (g->m > 0 && g->n > 0 && g->k > 0 && g->batch > 0) {
        const Choice c = gemm_choice(*g, warning);
        how = c.how;
        const double flops = 2.0 * static_cast<double>(g->m) * static_cast<double>(g->n) *
                             static_cast<double>(g->k) * static_cast<double>(g->batch);
        hold(c, gemm_floor_s(*g), coded(FindingCode::profile_gemm_above_peak, "dtype", std::string(to_string(g->dtype))),
             flops / 1e12);
      }
    } else if (const auto* m = std::get_if<MemoryOp>(&s.op)) {
      if (m->bytes.base() > 0) {
        const Choice c = memory_choice(*m, warning);
        how = c.how;
        hold(c, memory_floor_s(*m), coded(FindingCode::profile_memory_above_peak, "pattern", memory_pattern(*m)),
             m->bytes.base() / 1e9);
      }
    } else {
      const auto& op = std::get<CollectiveOp>(s.op);
      if (op.group.size > 1 && op.bytes.base() > 0) {
        const Choice c = collective_choice(op, warning);
        how = c.how;
        hold(c, collective_floor_s(op),
             coded(FindingCode::profile_collective_above_link, "kind", std::string(to_string(op.kind)),
                   {{"across_nodes", op.group.spans_nodes() ? 1.0 : 0.0}, {"ranks", op.group.size}}),
             op.bytes.base() * nccl_bus_factor(op.kind, op.group.size) / 1e9);
      }
    }
    if (how != "zero") (how == "datasheet" ? fallback : priced) += 1;
    if (w.code != FindingCode::note && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(std::move(w));
  }
  if (!own_device_) {
    // Another device's measurements: one finding with the counts, not one per kind of op.
    Finding f = coded(FindingCode::profile_other_device, "device", profile_.context_value("device"),
                      {{"operations", priced}, {"datasheet", fallback}});
    with_text(f, "backend", profile_.context_value("backend"));
    out.push_back(std::move(with_text(f, "gpu", gpu_id_)));
  }
  for (auto& h : held) {
    std::erase_if(h.values, [](const FindingValue& v) { return v.name == "over"; });
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace capplan::sim
