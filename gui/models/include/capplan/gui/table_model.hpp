// SPDX-License-Identifier: Apache-2.0
// The one base of the GUI's read-only tables (STYLE.md "One base table model", after hotspot's
// TableModel): a table is a list of records by a list of fields, and the tables differ only in
// their fields, never in their item-model code.
//
// Contract:
//  * A Field<Row> is a header (through the subclass's tr()) and the accessors of one value of a
//    record: `display` (DisplayRole: text with units, or a number), `sort` (kSortRole: the raw SI
//    number; the display value when empty), `tooltip` (ToolTipRole) and `alignment`
//    (TextAlignmentRole; none when empty). No other role answers, EditRole included.
//  * Row-wide roles come from the Spec: `key` (kKeyRole, a stable row id such as "tp_comm", on
//    every field), `tooltip` (for the fields without their own), and `placeholder` (a record with
//    nothing to show yet: its text in the first field, every other cell and role empty).
//  * Records are rows and fields columns; a transposed Spec shows fields as rows and records as
//    columns (a side-by-side comparison), with `record_header` naming each record's column.
//  * The structural overrides are final; a subclass sets its records with set_rows() (it owns them)
//    or show_rows() (a view over storage the subclass keeps alive), each a model reset.
#pragma once
#include <QAbstractTableModel>
#include <QString>
#include <QVariant>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace capplan::gui {

// kSortRole: the raw number behind a cell (proxies sort and charts plot by it); kKeyRole: a row's id.
enum Role { kSortRole = Qt::UserRole + 1, kKeyRole };

template <class Row>
struct Field {
  QString header;
  std::function<QVariant(const Row&)> display;
  std::function<QVariant(const Row&)> sort = {};     // empty: the display value
  Qt::Alignment alignment = {};                      // empty: the view's default
  std::function<QVariant(const Row&)> tooltip = {};  // empty: the Spec's row tooltip, if any
};

template <class Row>
struct TableSpec {
  std::vector<Field<Row>> fields = {};
  std::function<QString(const Row&)> key = {};
  std::function<QVariant(const Row&)> tooltip = {};
  std::function<std::optional<QString>(const Row&)> placeholder = {};
  bool transposed = false;
  std::function<QVariant(const Row&, int index)> record_header = {};
};

inline constexpr Qt::Alignment kAlignNumber = Qt::AlignRight | Qt::AlignVCenter;

template <class Row>
class TableModel : public QAbstractTableModel {
 public:
  int rowCount(const QModelIndex& parent = {}) const final {
    return parent.isValid() ? 0 : (spec_.transposed ? field_count() : record_count());
  }
  int columnCount(const QModelIndex& parent = {}) const final {
    return parent.isValid() ? 0 : (spec_.transposed ? record_count() : field_count());
  }

  QVariant data(const QModelIndex& index, int role) const final {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const int field = spec_.transposed ? index.row() : index.column();
    const Row& r = rows_[static_cast<std::size_t>(spec_.transposed ? index.column() : index.row())];
    if (spec_.placeholder) {
      if (const auto text = spec_.placeholder(r)) {
        return role == Qt::DisplayRole && field == 0 ? QVariant(*text) : QVariant();
      }
    }
    const Field<Row>& f = spec_.fields[static_cast<std::size_t>(field)];
    switch (role) {
      case Qt::DisplayRole: return f.display(r);
      case kSortRole: return f.sort ? f.sort(r) : f.display(r);
      case kKeyRole: return spec_.key ? QVariant(spec_.key(r)) : QVariant();
      case Qt::ToolTipRole: return f.tooltip ? f.tooltip(r) : spec_.tooltip ? spec_.tooltip(r) : QVariant();
      case Qt::TextAlignmentRole: return f.alignment ? QVariant::fromValue(f.alignment) : QVariant();
      default: return {};
    }
  }

  QVariant headerData(int section, Qt::Orientation orientation, int role) const final {
    if (role != Qt::DisplayRole) return {};
    const Qt::Orientation fields_along = spec_.transposed ? Qt::Vertical : Qt::Horizontal;
    if (orientation == fields_along) {
      if (section < 0 || section >= field_count()) return {};
      return spec_.fields[static_cast<std::size_t>(section)].header;
    }
    if (!spec_.record_header || section < 0 || section >= record_count()) return {};
    return spec_.record_header(rows_[static_cast<std::size_t>(section)], section);
  }

  // The records, in order.
  std::span<const Row> rows() const { return rows_; }
  // The record whose key is `key`; -1 when none is.
  int row_of_key(const QString& key) const {
    for (std::size_t i = 0; spec_.key && i < rows_.size(); ++i) {
      if (spec_.key(rows_[i]) == key) return static_cast<int>(i);
    }
    return -1;
  }

 protected:
  explicit TableModel(TableSpec<Row> spec, QObject* parent = nullptr)
      : QAbstractTableModel(parent), spec_(std::move(spec)) {}

  void set_rows(std::vector<Row> rows) {
    beginResetModel();
    owned_ = std::move(rows);
    rows_ = owned_;
    endResetModel();
  }
  void show_rows(std::span<const Row> rows) {
    beginResetModel();
    owned_.clear();
    rows_ = rows;
    endResetModel();
  }

 private:
  int field_count() const { return static_cast<int>(spec_.fields.size()); }
  int record_count() const { return static_cast<int>(rows_.size()); }

  TableSpec<Row> spec_;
  std::vector<Row> owned_;
  std::span<const Row> rows_;
};

}  // namespace capplan::gui
