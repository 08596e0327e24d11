// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/catalog_models.hpp"

#include <utility>

#include "capplan/gui/format.hpp"
#include "capplan/gui/result_models.hpp"

namespace capplan::gui {

InstanceCatalogModel::InstanceCatalogModel(std::shared_ptr<const data::Catalogs> catalogs, QObject* parent)
    : QAbstractTableModel(parent), catalogs_(std::move(catalogs)) {}

int InstanceCatalogModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(catalogs_->instances.size());
}
int InstanceCatalogModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

int InstanceCatalogModel::row_of(const QString& id) const {
  const std::string key = id.toStdString();
  for (size_t i = 0; i < catalogs_->instances.size(); ++i) {
    if (catalogs_->instances[i].id == key) return static_cast<int>(i);
  }
  return -1;
}

QVariant InstanceCatalogModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const data::InstanceEntry& e = catalogs_->instances[static_cast<size_t>(index.row())];
  const auto price = e.price.per_gpu_hour(e.gpus_per_node);
  if (role == kKeyRole) return QString::fromStdString(e.id);
  if (role == kSortRole) {
    switch (index.column()) {
      case kId: return QString::fromStdString(e.id);
      case kGpu: return QString::fromStdString(e.gpu);
      case kGpus: return e.gpus_per_node;
      case kNetwork: return e.network_gbps ? *e.network_gbps : -1.0;
      case kPriceGpuHour: return price ? *price : -1.0;
      case kPriceDate: return QString::fromStdString(e.price.date);
    }
    return {};
  }
  if (role == Qt::ToolTipRole) {
    QString tip = QString::fromStdString(e.provider + " " + e.name + ": " + std::to_string(e.gpus_per_node) + " x " +
                                         e.gpu);
    if (!e.network.empty()) tip += QStringLiteral("\nnetwork: ") + QString::fromStdString(e.network);
    if (!e.price.type.empty()) tip += QStringLiteral("\nprice: ") + QString::fromStdString(e.price.type);
    if (!e.price.region.empty()) tip += QStringLiteral(", ") + QString::fromStdString(e.price.region);
    for (const auto& s : e.price.sources) tip += QStringLiteral("\nsource: ") + QString::fromStdString(s);
    return tip;
  }
  if (role == Qt::TextAlignmentRole && (index.column() == kGpus || index.column() == kNetwork ||
                                        index.column() == kPriceGpuHour)) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kId: return QString::fromStdString(e.id);
    case kGpu: return QString::fromStdString(e.gpu);
    case kGpus: return e.gpus_per_node;
    case kNetwork:
      return e.network_gbps ? QString::number(*e.network_gbps, 'f', 0) + QStringLiteral(" Gbit/s")
                            : QStringLiteral("unknown");
    case kPriceGpuHour: return price ? usd_text(*price) + QStringLiteral("/GPU-h") : QStringLiteral("unknown");
    case kPriceDate: return QString::fromStdString(e.price.date);
  }
  return {};
}

QVariant InstanceCatalogModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kId: return tr("Instance");
    case kGpu: return tr("GPU");
    case kGpus: return tr("GPUs");
    case kNetwork: return tr("Network/node");
    case kPriceGpuHour: return tr("Price");
    case kPriceDate: return tr("Price date");
  }
  return {};
}

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
