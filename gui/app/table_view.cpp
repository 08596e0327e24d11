// SPDX-License-Identifier: Apache-2.0
#include "table_view.hpp"

#include <QHeaderView>

#include "capplan/gui/table_model.hpp"

namespace capplan::gui {

QSortFilterProxyModel* sort_by_value(QAbstractItemModel* model, QObject* parent) {
  auto* proxy = new QSortFilterProxyModel(parent);
  proxy->setSourceModel(model);
  proxy->setSortRole(kSortRole);
  return proxy;
}

QTableView* make_table_view(QAbstractItemModel* model, int sort_column, int row_height, QWidget* parent) {
  auto* view = new QTableView(parent);
  view->setModel(model);
  view->setSortingEnabled(true);
  view->sortByColumn(sort_column, Qt::AscendingOrder);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->verticalHeader()->hide();
  view->verticalHeader()->setDefaultSectionSize(row_height);
  return view;
}

}  // namespace capplan::gui
