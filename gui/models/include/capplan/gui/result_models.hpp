// SPDX-License-Identifier: Apache-2.0
// Read-only table models over one estimate snapshot (STYLE.md 4.8, snippet 6).
//
// Contract: each model resets on a new snapshot; DisplayRole gives text with units, kSortRole the
// raw SI number (seconds, bytes, fraction) so proxies sort and charts plot by value, never by text.
#pragma once
#include <QAbstractListModel>
#include <string>
#include <vector>

#include "capplan/gui/estimate_runner.hpp"
#include "capplan/gui/table_model.hpp"

namespace capplan::gui {

// One part of a whole (a step's time, a GPU's memory): a stable id, its label and its amount in SI units.
struct Part {
  std::string key;
  QString label;
  double amount = 0;
};

// Parts of a whole: the part, its amount with a unit, and its share of the whole (raw numbers on
// kSortRole, the part's key on kKeyRole). BreakdownModel and MemoryModel differ in their texts only.
class PartsModel : public TableModel<Part> {
 public:
  enum Column { kPart, kAmount, kShare, kColumnCount };

  void clear();
  double whole() const { return whole_; }

 protected:
  // Headers of the three columns; `amount_text` writes an amount with its unit.
  PartsModel(QString part, QString amount, QString share, QString (*amount_text)(double), QObject* parent);
  void set_parts(std::vector<Part> parts, double whole);

 private:
  double share_of(const Part& p) const;
  double whole_ = 0;
};

// Where one step's time goes; the rows partition the step time (compute is shown without its
// recompute part, which has its own row). Rows with no time in this layout are left out, except compute.
class BreakdownModel final : public PartsModel {
  Q_OBJECT
 public:
  enum Column { kPart = PartsModel::kPart, kTime = PartsModel::kAmount, kShare = PartsModel::kShare, kColumnCount };
  explicit BreakdownModel(QObject* parent = nullptr);

  void set_snapshot(const EstimateSnapshot& snapshot);
  double step_seconds() const { return whole(); }
};

// Peak memory of the most loaded GPU by kind, against its HBM capacity.
class MemoryModel final : public PartsModel {
  Q_OBJECT
 public:
  enum Column { kPart = PartsModel::kPart, kSize = PartsModel::kAmount, kShare = PartsModel::kShare, kColumnCount };
  explicit MemoryModel(QObject* parent = nullptr);

  void set_snapshot(const EstimateSnapshot& snapshot);
  double capacity_bytes() const { return whole(); }
  double total_bytes() const;
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

// How a peak fits its GPU: with room (green), tight (amber: it fits, but the room left is smaller
// than the reserve the estimate sets aside, so the reserve is what it relies on; 80.0 / 80.0 GiB
// is tight), or not at all (red).
enum class MemoryFit { fits, tight, over };
MemoryFit memory_fit(const sim::MemoryBreakdown& m);

}  // namespace capplan::gui
