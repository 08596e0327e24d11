// SPDX-License-Identifier: Apache-2.0
// The Estimate tab's left side: a form over the ScenarioDocument. Every edit goes to the document,
// which validates it with the CLI's parser; the form shows the messages beside the fields.
#pragma once
#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QLineEdit>
#include <QRadioButton>
#include <QTableView>
#include <QVBoxLayout>
#include <QWidget>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capplan/data/fields.hpp"
#include "capplan/gui/catalog_models.hpp"
#include "capplan/gui/estimate_runner.hpp"
#include "capplan/gui/calibration.hpp"
#include "capplan/gui/scenario_document.hpp"
#include "capplan/sim/workload/strategy.hpp"

namespace capplan::gui {

class ScenarioEditor final : public QWidget {
  Q_OBJECT
 public:
  explicit ScenarioEditor(ScenarioDocument* doc, QWidget* parent = nullptr);

  // Shows what capplan chose for "auto" fields (as placeholders) from the latest result.
  void show_result(const EstimateSnapshot& snapshot);
  // sim::estimate refused the (parsed) scenario: its messages, shown beside the fields they name.
  void show_estimate_errors(const QStringList& messages);
  QLineEdit* field(const std::string& pointer) const;  // for tests and shortcuts
  QString calibration_profile() const { return profile_path_; }
  // The cost model in use: `loaded` (nullptr: the datasheet model), and the messages of a profile
  // that was refused (the CLI's, naming the field), shown until the next choice.
  void show_profile(const LoadedProfile* loaded, const QStringList& errors = {});
  QLabel* profile_label() const { return profile_label_; }

 signals:
  void calibration_profile_chosen(const QString& path);
  void datasheet_chosen();

 private:
  void refresh();
  // A combo box for `pointer` whose items are (text, value); the value "" leaves the key out.
  QComboBox* add_choice(QGridLayout* grid, int row, const QString& label, const std::string& pointer,
                        const QString& tip, const std::vector<std::pair<QString, QString>>& items);
  // One control per row of a section's field table (capplan/data/fields.hpp) below `section`
  // ("/training"), from row `row` on: a choice or a switch as a combo box whose first item
  // (`default_text`) leaves the key out, a number or a text as a field with its unit. Rows whose
  // key is in `by_hand` have their own controls. Returns the next free row.
  template <class T>
  int add_table_rows(QGridLayout* grid, int row, std::span<const data::Field<T>> table, const std::string& section,
                     const QString& default_text, std::initializer_list<std::string_view> by_hand = {});
  QLineEdit* add_field(QGridLayout* grid, int row, const QString& label, const std::string& pointer,
                       const QString& unit, const QString& tip);
  QLabel* add_error_label(QGroupBox* box);
  // Ends a group of the form: its error label (messages under `pointer`) last in it, the group into `layout`.
  void add_group(QVBoxLayout* layout, QGroupBox* box, const char* pointer);
  void choose_profile();

  ScenarioDocument* doc_;
  bool refreshing_ = false;
  std::map<std::string, QLineEdit*> fields_;

  QComboBox* preset_ = nullptr;
  QComboBox* batch_unit_ = nullptr;
  QLineEdit* batch_ = nullptr;
  QComboBox* precision_ = nullptr;
  QComboBox* framework_ = nullptr;
  QComboBox* workload_kind_ = nullptr;
  QComboBox* method_ = nullptr;
  QComboBox* lora_targets_ = nullptr;
  std::map<std::string, QComboBox*> option_combos_;  // choices whose first item leaves the key out
  QRadioButton* by_instance_ = nullptr;
  QRadioButton* by_gpu_ = nullptr;
  QWidget* instance_box_ = nullptr;
  QWidget* gpu_box_ = nullptr;
  QLineEdit* instance_search_ = nullptr;
  QTableView* instances_ = nullptr;
  InstanceCatalogModel* instance_model_ = nullptr;
  InstanceFilterModel* instance_filter_ = nullptr;
  QLabel* instance_label_ = nullptr;
  QComboBox* gpu_ = nullptr;
  QCheckBox* strategy_auto_ = nullptr;
  QWidget* strategy_fields_ = nullptr;
  std::map<std::string, QCheckBox*> auto_boxes_;
  QComboBox* recompute_ = nullptr;
  struct OptionBoxes {
    const sim::StrategyOption* option = nullptr;
    QCheckBox* box = nullptr;
    QCheckBox* automatic = nullptr;  // searched options only
  };
  std::map<std::string, OptionBoxes> option_boxes_;  // "/strategy/<key>" -> its check boxes
  QCheckBox* price_override_ = nullptr;
  QLineEdit* price_ = nullptr;
  QLabel* price_label_ = nullptr;
  QLabel* price_unit_ = nullptr;
  // Unit labels that name pricing.currency ("per kWh in pricing.currency"), with their text as the
  // table gives it: shown with the scenario's currency code.
  std::vector<std::pair<QLabel*, QString>> currency_units_;
  QLabel* profile_label_ = nullptr;
  QString profile_path_;
  QString profile_name_;      // "calibrated: <device> (<date>)" of the loaded profile
  QStringList profile_measured_;
  QStringList profile_errors_;
  QPushButton* datasheet_button_ = nullptr;
  std::map<std::string, QLabel*> errors_;  // group pointer -> label
  QLabel* general_errors_ = nullptr;
  std::optional<EstimateSnapshot> last_result_;
  QStringList estimate_errors_;
};

}  // namespace capplan::gui
