// SPDX-License-Identifier: Apache-2.0
// The instance catalog as a read-only table, and a search filter over it.
#pragma once
#include <QSortFilterProxyModel>
#include <memory>

#include "capplan/data/catalog.hpp"
#include "capplan/gui/table_model.hpp"

namespace capplan::gui {

class InstanceCatalogModel final : public TableModel<data::InstanceEntry> {
  Q_OBJECT
 public:
  enum Column { kId, kGpu, kGpus, kNetwork, kPriceGpuHour, kPriceDate, kColumnCount };
  explicit InstanceCatalogModel(std::shared_ptr<const data::Catalogs> catalogs, QObject* parent = nullptr);

  // Row of an instance id; -1 when absent.
  int row_of(const QString& id) const;

 private:
  std::shared_ptr<const data::Catalogs> catalogs_;  // keeps the rows alive
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
