// SPDX-License-Identifier: Apache-2.0
// Set-up shared by the tabs' tables (views over the models of gui/models, no numbers here).
#pragma once
#include <QAbstractItemModel>
#include <QSortFilterProxyModel>
#include <QTableView>

namespace capplan::gui {

// A proxy over `model` that sorts by kSortRole: by the raw numbers, not by their text.
QSortFilterProxyModel* sort_by_value(QAbstractItemModel* model, QObject* parent);

// A read-only table of whole rows over `model`, sortable by clicking a header and sorted by
// `sort_column` at first (-1: the model's order), without row numbers, `row_height` pixels a row.
QTableView* make_table_view(QAbstractItemModel* model, int sort_column, int row_height, QWidget* parent);

}  // namespace capplan::gui
