// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/catalog_models.hpp"

#include <utility>

#include "capplan/gui/format.hpp"

namespace capplan::gui {

namespace {

using data::InstanceEntry;

std::optional<double> price_per_gpu_hour(const InstanceEntry& e) { return e.price.per_gpu_hour(e.gpus_per_node); }

QVariant tooltip(const InstanceEntry& e) {
  QString tip = QString::fromStdString(e.provider + " " + e.name + ": " + std::to_string(e.gpus_per_node) + " x " +
                                       e.gpu);
  if (!e.network.empty()) tip += QStringLiteral("\nnetwork: ") + QString::fromStdString(e.network);
  if (!e.price.type.empty()) tip += QStringLiteral("\nprice: ") + QString::fromStdString(e.price.type);
  if (!e.price.region.empty()) tip += QStringLiteral(", ") + QString::fromStdString(e.price.region);
  for (const auto& s : e.price.sources) tip += QStringLiteral("\nsource: ") + QString::fromStdString(s);
  return tip;
}

// Unknown numbers sort first (-1).
TableSpec<InstanceEntry> instance_spec() {
  using M = InstanceCatalogModel;
  return {
      .fields = {
          {M::tr("Instance"), [](const InstanceEntry& e) -> QVariant { return QString::fromStdString(e.id); }},
          {M::tr("GPU"), [](const InstanceEntry& e) -> QVariant { return QString::fromStdString(e.gpu); }},
          {M::tr("GPUs"), [](const InstanceEntry& e) -> QVariant { return e.gpus_per_node; }, {}, kAlignNumber},
          {M::tr("Network/node"),
           [](const InstanceEntry& e) -> QVariant {
             return e.network_gbps ? gbit_text(*e.network_gbps) : QStringLiteral("unknown");
           },
           [](const InstanceEntry& e) -> QVariant { return e.network_gbps ? *e.network_gbps : -1.0; }, kAlignNumber},
          {M::tr("Price"),
           [](const InstanceEntry& e) -> QVariant {
             const auto price = price_per_gpu_hour(e);
             return price ? usd_text(*price) + QStringLiteral("/GPU-h") : QStringLiteral("unknown");
           },
           [](const InstanceEntry& e) -> QVariant {
             const auto price = price_per_gpu_hour(e);
             return price ? *price : -1.0;
           },
           kAlignNumber},
          {M::tr("Price date"),
           [](const InstanceEntry& e) -> QVariant { return QString::fromStdString(e.price.date); }},
      },
      .key = [](const InstanceEntry& e) { return QString::fromStdString(e.id); },
      .tooltip = &tooltip,
  };
}

}  // namespace

InstanceCatalogModel::InstanceCatalogModel(std::shared_ptr<const data::Catalogs> catalogs, QObject* parent)
    : TableModel(instance_spec(), parent), catalogs_(std::move(catalogs)) {
  show_rows(catalogs_->instances);
}

int InstanceCatalogModel::row_of(const QString& id) const { return row_of_key(id); }

InstanceFilterModel::InstanceFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(kSortRole);
  setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void InstanceFilterModel::set_query(const QString& query) {
  words_ = query.split(QLatin1Char(' '), Qt::SkipEmptyParts);
  invalidateFilter();
}

// Every word of the query must appear in some column (AND of words, OR of columns).
bool InstanceFilterModel::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  if (words_.isEmpty()) return true;
  const QAbstractItemModel* m = sourceModel();
  QString row_text;
  for (int c = 0; c < m->columnCount(source_parent); ++c) {
    row_text += m->index(source_row, c, source_parent).data(Qt::DisplayRole).toString() + QLatin1Char(' ');
  }
  for (const auto& w : words_) {
    if (!row_text.contains(w, Qt::CaseInsensitive)) return false;
  }
  return true;
}

}  // namespace capplan::gui
