// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/compare_model.hpp"

#include "capplan/sim/search/search.hpp"

#include <utility>

#include "capplan/gui/format.hpp"

namespace capplan::gui {

void CompareModel::set_columns(std::vector<Column> columns) {
  if (columns.size() > static_cast<size_t>(kMaxScenarios)) columns.resize(kMaxScenarios);
  const auto previous = std::exchange(columns_, std::move(columns));  // alive until the rows are replaced
  show_rows(columns_);
}

QString CompareModel::metric_label(Metric m) {
  switch (m) {
    case kTimeToTrain: return tr("Expected time to train (with failures)");
    case kSteadyTime: return tr("Time to train (steady state)");
    case kGoodput: return tr("Goodput (steady / with failures)");
    case kPurchase: return tr("Purchase model");
    case kCost: return tr("Total cost");
    case kCostPerBillionTokens: return tr("Cost per billion tokens");
    case kPricePerGpuHour: return tr("Price per GPU-hour (under the purchase terms)");
    case kGpus: return tr("GPUs");
    case kStepTime: return tr("Step time");
    case kTokensPerS: return tr("Throughput");
    case kMfu: return tr("MFU");
    case kMemory: return tr("Memory per GPU (peak)");
    case kFits: return tr("Fits in memory");
    case kStrategy: return tr("Strategy");
    case kMetricCount: break;
  }
  return {};
}

std::optional<double> CompareModel::value(const EstimateSnapshot& s, Metric m) {
  const sim::Estimate& e = s.estimate;
  switch (m) {
    case kTimeToTrain: return units::to_days(sim::plan_time(e));  // expected, with failures
    case kSteadyTime: return units::to_days(e.totals.time_to_train);
    case kGoodput: return e.goodput.modelled ? std::optional<double>(e.goodput.fraction) : std::nullopt;
    case kPurchase: return static_cast<double>(e.goodput.cost.model);
    case kCost: return sim::plan_cost(e) ? std::optional<double>(sim::plan_cost(e)->base()) : std::nullopt;
    case kCostPerBillionTokens: return s.usd_per_billion_tokens();
    case kPricePerGpuHour:
      // The rate the cost is computed at (a spot scenario's spot price), else the on-demand one.
      if (e.goodput.modelled) return e.goodput.cost.usd_per_gpu_hour;
      return e.totals.price_per_gpu ? std::optional<double>(units::to_usd_per_hour(*e.totals.price_per_gpu)) : std::nullopt;
    case kGpus: return s.scenario.scenario.cluster.gpus;
    case kStepTime: return e.step.time.base();
    case kTokensPerS: return e.step.tokens_per_s;
    case kMfu: return e.step.mfu;
    case kMemory: return e.memory.total().base();
    case kFits: return e.memory.fits() ? 1.0 : 0.0;
    case kStrategy:
    case kMetricCount: break;
  }
  return std::nullopt;
}

namespace {

QString value_text(CompareModel::Metric m, const EstimateSnapshot& s, std::optional<double> v) {
  const sim::Estimate& e = s.estimate;
  const sim::Currency& currency = s.scenario.scenario.pricing.currency;  // as the user priced it
  const QString purchase = purchase_text(e.goodput.modelled ? e.goodput.cost.model : s.scenario.scenario.pricing.model);
  switch (m) {
    case CompareModel::kTimeToTrain:
    case CompareModel::kSteadyTime: return days_text(*v);
    case CompareModel::kGoodput: return percent_text(*v);
    case CompareModel::kPurchase: return purchase;
    case CompareModel::kCost:
      return v ? money_text(*v, currency) + QStringLiteral(" (") + purchase + QLatin1Char(')')
               : CompareModel::tr("unknown (no price)");
    case CompareModel::kCostPerBillionTokens: return v ? money_text(*v, currency) : CompareModel::tr("unknown (no price)");
    case CompareModel::kPricePerGpuHour:
      return v ? money_text(*v, currency) + QStringLiteral("/GPU-h (") + purchase + QLatin1Char(')')
               : CompareModel::tr("unknown");
    case CompareModel::kGpus: {
      const auto& c = s.scenario.scenario.cluster;
      QString text = count_text(*v) + QStringLiteral(" x ") + QString::fromStdString(c.gpu.id);
      if (!c.instance_id.empty()) {
        text += QStringLiteral("\n") + QString::number(c.nodes()) + QStringLiteral(" x ") +
                QString::fromStdString(c.instance_id);
      }
      return text;
    }
    case CompareModel::kStepTime: return seconds_text(*v);
    case CompareModel::kTokensPerS: return tokens_text(*v) + QStringLiteral("/s");
    case CompareModel::kMfu: return percent_text(*v);
    case CompareModel::kMemory: return gib_text(*v) + QStringLiteral(" of ") + gib_text(e.memory.capacity.base());
    case CompareModel::kFits: return *v > 0 ? CompareModel::tr("yes") : CompareModel::tr("NO");
    case CompareModel::kStrategy: {
      const auto& p = e.layout.strategy;
      QString text = degrees_text(p);
      text += QStringLiteral("\nmicro-batch %1 · ZeRO %2 · %3").arg(p.micro_batch).arg(p.zero).arg(
          QString::fromLatin1(sim::to_string(p.recompute)));
      return text;
    }
    case CompareModel::kMetricCount: break;
  }
  return {};
}

// The figures shown without a value ("unknown (no price)"); the others leave the cell empty.
bool shown_without_value(CompareModel::Metric m) {
  return m == CompareModel::kStrategy || m == CompareModel::kCost || m == CompareModel::kCostPerBillionTokens ||
         m == CompareModel::kPricePerGpuHour || m == CompareModel::kPurchase;
}

// Row `m` of the table: the figure's text in each scenario, with its delta against the first.
Field<CompareColumn> metric_field(const CompareModel* model, CompareModel::Metric m) {
  auto display = [model, m](const CompareColumn& c) -> QVariant {
    const auto v = CompareModel::value(*c.snapshot, m);
    if (!v && !shown_without_value(m)) return {};
    QString text = value_text(m, *c.snapshot, v);
    // Deltas against the first scenario for the numeric figures.
    const CompareColumn& first = model->rows().front();
    if (&c != &first && v && m != CompareModel::kFits && m != CompareModel::kGpus && m != CompareModel::kPurchase &&
        first.snapshot) {
      if (auto base = CompareModel::value(*first.snapshot, m)) {
        const QString d = delta_text(*v, *base);
        if (!d.isEmpty()) text += QStringLiteral("  (") + d + QStringLiteral(")");
      }
    }
    return text;
  };
  auto sort = [m](const CompareColumn& c) -> QVariant {
    const auto v = CompareModel::value(*c.snapshot, m);
    return v ? QVariant(*v) : QVariant();
  };
  return {CompareModel::metric_label(m), display, sort, kAlignNumber};
}

TableSpec<CompareColumn> compare_spec(const CompareModel* model) {
  TableSpec<CompareColumn> spec{
      .placeholder = [](const CompareColumn& c) -> std::optional<QString> {
        if (c.snapshot) return std::nullopt;
        return c.problem.isEmpty() ? CompareModel::tr("computing…") : c.problem;
      },
      .transposed = true,
      .record_header = [](const CompareColumn& c, int i) -> QVariant {
        return (i == 0 ? CompareModel::tr("A (base): ") : QString(QChar(u'A' + i)) + QStringLiteral(": ")) + c.label;
      },
  };
  for (int m = 0; m < CompareModel::kMetricCount; ++m) {
    spec.fields.push_back(metric_field(model, static_cast<CompareModel::Metric>(m)));
  }
  return spec;
}

}  // namespace

CompareModel::CompareModel(QObject* parent) : TableModel(compare_spec(this), parent) {}

}  // namespace capplan::gui
