// SPDX-License-Identifier: Apache-2.0
// Read-only table models over one estimate snapshot (STYLE.md 4.8, snippet 6).
//
// Contract: each model resets on a new snapshot; DisplayRole gives text with units, kSortRole the
// raw SI number (seconds, bytes, fraction) so proxies sort and charts plot by value, never by text.
#pragma once
#include <QAbstractListModel>
#include <QAbstractTableModel>
#include <optional>
#include <string>
#include <vector>

#include "capplan/gui/estimate_runner.hpp"

namespace capplan::gui {

enum Role { kSortRole = Qt::UserRole + 1, kKeyRole };  // kKeyRole: stable id of a row ("tp_comm")

// Where one step's time goes; the rows partition the step time (compute is shown without its
// recompute part, which has its own row). Rows with no time in this layout are left out, except compute.
class BreakdownModel final : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kPart, kTime, kShare, kColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void set_snapshot(const EstimateSnapshot& snapshot);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  double step_seconds() const { return step_s_; }

 private:
  struct Row {
    std::string key;
    QString label;
    double seconds = 0;
  };
  std::vector<Row> rows_;
  double step_s_ = 0;
};

// Peak memory of the most loaded GPU by kind, against its HBM capacity.
class MemoryModel final : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kPart, kSize, kShare, kColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void set_snapshot(const EstimateSnapshot& snapshot);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  double capacity_bytes() const { return capacity_; }
  double total_bytes() const;

 private:
  struct Row {
    std::string key;
    QString label;
    double bytes = 0;
  };
  std::vector<Row> rows_;
  double capacity_ = 0;
};

// Warnings of the parse and the estimate, as the CLI lists them.
class WarningsModel final : public QAbstractListModel {
  Q_OBJECT
 public:
  using QAbstractListModel::QAbstractListModel;

  void set_messages(QStringList messages);
  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  QStringList messages_;
};

// All warnings of a snapshot (parser's first, then the estimate's, without repeats).
QStringList snapshot_warnings(const EstimateSnapshot& snapshot);

}  // namespace capplan::gui
