// SPDX-License-Identifier: Apache-2.0
// The instance catalog as a read-only table, and a search filter over it.
#pragma once
#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <memory>

#include "capplan/data/catalog.hpp"

namespace capplan::gui {

class InstanceCatalogModel final : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kId, kGpu, kGpus, kNetwork, kPriceGpuHour, kPriceDate, kColumnCount };
  explicit InstanceCatalogModel(std::shared_ptr<const data::Catalogs> catalogs, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  // Row of an instance id; -1 when absent.
  int row_of(const QString& id) const;

 private:
  std::shared_ptr<const data::Catalogs> catalogs_;
};

// Case-insensitive search over every column (id, provider, GPU, network); sorts by kSortRole.
class InstanceFilterModel final : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit InstanceFilterModel(QObject* parent = nullptr);
  void set_query(const QString& query);

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  QStringList words_;
};

}  // namespace capplan::gui
