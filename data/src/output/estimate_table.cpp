// SPDX-License-Identifier: Apache-2.0
// The terminal table of one estimate: what was estimated, the result with its error band, the
// goodput and its cost, memory per GPU, the step time's parts, the strategy and the warnings.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/currency.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/format.hpp"
#include "capplan/data/scenario_io.hpp"

namespace capplan::data {
namespace {

using format::fixed;
using format::grouped;
using format::si;



std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (s < 1e-3) return fixed(s * 1e6, 1) + " us";
  if (s < 1.0) return fixed(s * 1e3, 1) + " ms";
  if (s >= 1000.0) return grouped(s) + " s";
  return fixed(s, 3) + " s";
}

std::string pad_right(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string pad_left(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// Words into lines of at most `width` characters (a longer word gets a line of its own).
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t space = text.find(' ', pos);
    const std::string word = text.substr(pos, space == std::string::npos ? std::string::npos : space - pos);
    pos = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string gib(units::Bytes b) { return fixed(units::to_gib(b), 1); }

std::string detail_join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// " (p10-p90: 31.0-44.2)" after a value when the estimate has an error band.
template <class Text>
std::string range(const std::optional<sim::Interval>& i, Text text) {
  return i ? " (p10-p90: " + text(i->low) + "-" + text(i->high) + ")" : std::string();
}

// A time in days, hours or minutes as its size asks (its band in the same unit): "17.3 hours".
std::string time_text(double d, const std::optional<sim::Interval>& band) {
  const format::DurationUnit unit = format::duration_unit(d);
  auto in_unit = [&unit](double x) { return format::duration(x, unit); };
  return in_unit(d) + " " + unit.name + range(band, in_unit);
}

// The table as it is written, one section at a time.
struct Table {
  const sim::Estimate& e;
  const ParsedScenario& s;
  std::string out;

  void line(const std::string& text) { out += text + "\n"; }
  void row(const std::string& label, const std::string& value) { line("  " + pad_right(label, 22) + value); }

  void what_was_estimated();
  void result();
  void goodput();
  void memory();
  void step_breakdown();
  void strategy_and_warnings();
};

void Table::what_was_estimated() {
  const sim::Scenario& sc = s.scenario;
  const sim::Cluster& cl = sc.cluster;
  // What was estimated.
  std::string model = sc.model.name.empty() ? s.model_id : sc.model.name;
  if (!s.model_id.empty() && s.model_id != "custom" && s.model_id != model) model += " (" + s.model_id + ")";
  line("capplan estimate: " + model + ", " + format::parameters(sc.model.total_params(), sc.model.active_params()));
  if (sc.workload.kind == sim::WorkloadKind::finetune) {
    const sim::FinetuneSpec& f = sc.training.finetune;
    const double trained = sim::trainable_params(sc.model, f);
    std::string what = std::string("  fine-tuning: ") + sim::to_string(f.method);
    if (f.adapters()) what += " rank " + std::to_string(f.lora_rank) + " on " + format::lora_targets(f.lora_targets);
    if (f.quantized_base()) what += std::string(", ") + sim::to_string(f.base()) + " base";
    what += "; " + (trained < 1e9 ? fixed(trained / 1e6, 1) + "M" : fixed(trained / 1e9, 2) + "B") + " parameters trained (" + fixed(100.0 * trained / sc.model.total_params(), 2) +
            "%)";
    const sim::FinetuneData& d = sc.workload.dataset;
    // The padding at the micro-batch the estimate runs (unpacked samples pad to their micro-batch's longest).
    const sim::FinetuneShape r = sim::at_micro_batch(sc, e.layout.strategy.micro_batch).workload.shape;
    what += "; dataset " + format::tokens(d.tokens) + " x " + fixed(d.epochs, d.epochs == std::floor(d.epochs) ? 0 : 2) +
            " epochs, " + (d.packing ? "packed" : "unpacked, padded to " + std::to_string(r.step_tokens) + " tokens (" +
                                                      fixed(100.0 * r.useful_share, 1) + "% real)");
    line(what);
  }
  std::string where = std::to_string(cl.gpus) + " x " + (cl.gpu.name.empty() ? cl.gpu.id : cl.gpu.name);
  if (!cl.instance_id.empty()) {
    where += " (" + std::to_string(cl.nodes()) + " x " + cl.instance_id + ")";
  } else {
    where += " (" + std::to_string(cl.nodes()) + " node" + (cl.nodes() == 1 ? "" : "s") + " of " +
             std::to_string(cl.gpus_per_node) + ")";
  }
  line("  " + where + ", " + sim::to_string(sc.training.precision) + ", " + format::tokens(sc.training.tokens) +
       " tokens, global batch " + grouped(static_cast<double>(sc.training.global_batch)) + " x " +
       std::to_string(sc.model.seq_len) + " tokens");
  line("");
}

void Table::result() {
  const sim::Scenario& sc = s.scenario;
  const sim::Cluster& cl = sc.cluster;
  // Headline.
  line("Result");
  const double days = units::to_days(e.totals.time_to_train);
  row("time to train", time_text(days, e.uncertainty.time_to_train_days) + " (" + grouped(e.totals.steps) + " steps)");
  const sim::Currency& cur = sc.pricing.currency;
  auto usd = [&cur](double v) { return money(v, cur); };
  if (e.totals.cost) {
    row("cost", usd(e.totals.cost->base()) + range(e.uncertainty.cost_usd, usd) + " (" + grouped(e.totals.gpu_hours) + " GPU-hours)");
  } else {
    row("cost", "unknown: no price (" + grouped(e.totals.gpu_hours) + " GPU-hours); give --usd-per-gpu-hour");
  }
  if (e.totals.price_per_gpu) {
    std::string price = money_prefix(cur) + fixed(from_usd(units::to_usd_per_hour(*e.totals.price_per_gpu), cur), 2) +
                        " per GPU-hour";
    if (!cl.price_source.empty()) price += " (" + cl.price_source + ")";
    row("price", price);
  }
  if (!cur.is_usd()) row("currency", rate_text(cur));
  row("step time", seconds_text(e.step.time.base()) + range(e.uncertainty.step_time_s, seconds_text));
  row("throughput", si(e.step.tokens_per_s) + " tokens/s" + range(e.uncertainty.tokens_per_s, si) + " (" +
                        (cl.gpus > 0 ? grouped(e.step.tokens_per_s / cl.gpus) : std::string("n/a")) + " per GPU)");
  if (e.uncertainty.band) {
    row("error band", "measured/predicted " + fixed(e.uncertainty.band->ratio_p10, 2) + "-" + fixed(e.uncertainty.band->ratio_p90, 2) +
                          " (p10-p90, " + e.uncertainty.band->category + ")");
    for (const auto& text : wrap(error_band_basis(*e.uncertainty.band), 76)) row("", text);
  }
  row("model TFLOP/s per GPU", fixed(units::to_tflop_per_s(e.step.model_flops_per_gpu), 1));
  row("MFU / HFU", fixed(100.0 * e.step.mfu, 1) + "% / " + fixed(100.0 * e.step.hfu, 1) + "%" +
                       (sc.training.precision == sim::Precision::fp8 ? " of the FP8 peak" : ""));
  if (sc.training.precision == sim::Precision::fp8) {
    row("MFU vs BF16 peak", fixed(100.0 * e.step.mfu_bf16_peak, 1) + "%");
  }
  line("");
}

void Table::goodput() {
  const sim::Scenario& sc = s.scenario;
  const sim::Currency& cur = sc.pricing.currency;
  auto usd = [&cur](double v) { return money(v, cur); };
  // Goodput: interruptions, checkpoints, data loading, and the cost beyond the sticker.
  const sim::Goodput& g = e.goodput;
  if (g.modelled) {
    line("Goodput (expected, with interruptions and checkpoints)");
    row("time to train", (g.finite ? time_text(units::to_days(g.wall), e.uncertainty.wall_days) : std::string("unbounded")) +
                             " (" + fixed(100.0 * g.fraction, 1) + "% goodput: useful / wall time)");
    row("interruptions", (std::isfinite(g.mtbi.base())
                              ? fixed(g.expected_interruptions, 1) + " expected, one per " +
                                    fixed(g.mtbi.base() / 3600.0, 2) + " h"
                              : std::string("none (rate 0)")) +
                             " (" + si(g.interruptions_per_gpu_hour * 1e6) + " per 1M GPU-hours" +
                             (g.preemptions_per_node_hour > 0
                                  ? ", spot " + fixed(g.preemptions_per_node_hour, 4) + " per node-hour"
                                  : std::string()) + ")");
    row("checkpoint", si(g.checkpoint.total.base()) + "B total, " + si(g.checkpoint.per_rank_max.base()) +
                          "B per rank (" + grouped(static_cast<double>(g.checkpoint.writers)) + " writers), " +
                          sim::to_string(g.mode));
    std::string why;
    switch (g.interval_rule) {
      case sim::IntervalRule::scenario: why = " (given)"; break;
      case sim::IntervalRule::end_only: why = " (no interruptions: once, at the end)"; break;
      case sim::IntervalRule::daly: why = " (Daly optimum)"; break;
      case sim::IntervalRule::minimum:
        why = " (the minimum interval; Daly optimum " + seconds_text(g.daly_interval.base()) + ")";
        break;
      case sim::IntervalRule::step: why = " (one step)"; break;
      case sim::IntervalRule::persist: why = " (time to persist one checkpoint)"; break;
    }
    row("  every", seconds_text(g.checkpoint_interval.base()) + why + "; Young " + seconds_text(g.young_interval.base()));
    row("  write / stall", seconds_text(g.checkpoint_write.base()) + " / " + seconds_text(g.checkpoint_stall.base()));
    row("restart", seconds_text(g.restart.base()) + " each (load " + seconds_text(g.checkpoint_read.base()) + ")");
    const double wall = g.wall.base();
    const std::pair<const char*, units::Seconds> parts[] = {
        {"steady state", g.steady},           {"data loading stall", g.data_stall},
        {"checkpoint stalls", g.checkpoint_overhead}, {"restarts", g.restart_total},
        {"lost work", g.lost_work},
    };
    for (const auto& [name, t] : parts) {
      if (t.base() == 0.0 && std::string(name) == "data loading stall") continue;
      row("  " + std::string(name), pad_left(fixed(units::to_days(t), 2) + " d", 10) +
                                         pad_left(wall > 0 && std::isfinite(wall) ? fixed(100.0 * t.base() / wall, 1) + "%"
                                                                                  : std::string("n/a"),
                                                  8));
    }
    const sim::DataLoadingCheck& d = g.data;
    std::string data = si(d.required_bytes_per_s) + "B/s needed (" + fixed(d.bytes_per_token, 0) + " B/token)";
    if (d.storage_read_bytes_per_s) data += ", storage " + si(*d.storage_read_bytes_per_s) + "B/s";
    if (d.cpu_tokens_per_s) data += ", CPU " + si(*d.cpu_tokens_per_s) + " tokens/s";
    data += d.bound == "none" ? ": not a bottleneck" : ": BOUND by " + d.bound + " (x" + fixed(d.slowdown, 2) + ")";
    row("data loading", data);
    const sim::CostBreakdown& c = g.cost;
    // Reserved and on-prem: the run's share at the stated utilisation, the whole term beside it.
    std::string framing;
    if (c.utilisation) {
      framing = ": job's share at " + fixed(100.0 * *c.utilisation, 0) + "% utilisation; whole term " +
                (c.whole_term ? usd(c.whole_term->base()) : std::string("unknown"));
    }
    row("total cost", (c.total ? usd(c.total->base()) + range(e.uncertainty.total_cost_usd, usd) : std::string("unknown")) +
                          " (" + sim::to_string(c.model) + framing +
                          (c.missing.empty() ? std::string() : "; missing: " + detail_join(c.missing)) + ")");
    const std::pair<const char*, const std::optional<units::Usd>*> costs[] = {
        {"compute", &c.compute},   {"hot spares", &c.spares},   {"idle share", &c.idle_share},
        {"energy", &c.energy},     {"operations", &c.operations}, {"checkpoint storage", &c.checkpoint_storage},
        {"data storage", &c.data_storage},
    };
    for (const auto& [name, v] : costs) {
      if (*v && (*v)->base() != 0.0) row("  " + std::string(name), usd((*v)->base()));
    }
    if (c.whole_term && c.term_hours && c.committed_gpus) {
      const bool owned = c.model == sim::PurchaseModel::on_prem;
      row("  whole term", usd(c.whole_term->base()) + " (" + grouped(*c.committed_gpus) + " GPUs " +
                              (owned ? "owned" : "committed") + " for " +
                              fixed(*c.term_hours / (owned ? 8760.0 : 730.0), 1) + (owned ? " years" : " months") +
                              " at " + fixed(100.0 * *c.utilisation, 0) + "% utilisation; not in the total)");
    }
    line("");
  }
}

void Table::memory() {
  // Memory.
  const sim::MemoryBreakdown& m = e.memory;
  line("Memory per GPU (peak, pipeline stage " + std::to_string(m.stage) + ")");
  row("total", gib(m.total()) + " of " + gib(m.capacity) + " GiB" + (m.fits() ? "  fits" : "  DOES NOT FIT"));
  const std::pair<const char*, units::Bytes> parts[] = {
      {"weights", m.weights},         {"gradients", m.gradients}, {"optimizer state", m.optimizer},
      {"activations", m.activations}, {"logits", m.logits},       {"reserve", m.reserve},
  };
  for (const auto& [name, bytes] : parts) row("  " + std::string(name), pad_left(gib(bytes), 8) + " GiB");
  line("");
}

void Table::step_breakdown() {
  // Step breakdown.
  const sim::StepBreakdown& b = e.step.breakdown;
  const double total = e.step.time.base();
  line("Step time breakdown");
  const std::pair<const char*, units::Seconds> phases[] = {
      {"compute", b.compute},           {"  of which recompute", b.recompute},
      {"tp comm (exposed)", b.tp_comm}, {"pp comm (exposed)", b.pp_comm},
      {"dp comm (exposed)", b.dp_comm}, {"ep comm (exposed)", b.ep_comm},
      {"cp comm (exposed)", b.cp_comm}, {"pipeline bubble", b.bubble},
      {"optimizer", b.optimizer},       {"slowest GPU wait", b.variability},
      {"host-bound (launch)", b.host},  {"other", b.other},
  };
  for (const auto& [name, t] : phases) {
    const double v = t.base();
    if (v == 0.0 && std::string(name) != "compute") continue;  // hide parts this layout does not have
    const std::string share = total > 0 ? fixed(100.0 * v / total, 1) + "%" : "n/a";
    row(name, pad_left(seconds_text(v), 10) + pad_left(share, 8));
  }
  line("");
}

void Table::strategy_and_warnings() {
  const sim::Parallelism& p = e.layout.strategy;
  // Strategy.
  std::string strategy = "tp " + std::to_string(p.tp) + ", pp " + std::to_string(p.pp) + ", dp " + std::to_string(p.dp);
  if (p.cp != 1) strategy += ", cp " + std::to_string(p.cp);
  if (p.ep != 1) strategy += ", ep " + std::to_string(p.ep);
  strategy += ", micro-batch " + std::to_string(p.micro_batch) + " x " + std::to_string(e.layout.micro_batches) +
              " accumulation steps";
  if (p.virtual_stages != 1) strategy += ", " + std::to_string(p.virtual_stages) + " virtual stages";
  strategy += ", ZeRO " + std::to_string(p.zero) + ", recompute " + sim::to_string(p.recompute);
  for (const auto& o : sim::kStrategyOptions) {
    if (o.tag != nullptr && p.*o.value) strategy += std::string(", ") + o.label;
  }
  line("Strategy" + std::string(e.layout.chosen_by_capplan
                                    ? " (chosen by capplan from " +
                                          grouped(static_cast<double>(e.layout.configurations_evaluated)) + " configurations)"
                                    : ""));
  line("  " + strategy);
  line("  cost model: " + (e.step.cost_model.empty() ? std::string("datasheet") : e.step.cost_model));

  const auto warnings = estimate_warnings(e, s);
  if (!warnings.empty()) {
    line("");
    line("Warnings");
    for (const auto& w : warnings) line("  - " + w);
  }
}

}  // namespace

std::string estimate_to_table(const sim::Estimate& e, const ParsedScenario& s) {
  Table t{e, s, {}};
  t.what_was_estimated();
  t.result();
  t.goodput();
  t.memory();
  t.step_breakdown();
  t.strategy_and_warnings();
  return t.out;
}

}  // namespace capplan::data
