// SPDX-License-Identifier: Apache-2.0
// The scenario being edited (STYLE.md 4.8: inputs).
//
// Contract:
//  * The document is held in the scenario file format (CONTRACT.md) as JSON: what the user typed
//    is kept as typed ("2T", "auto", "6x"), so saving writes the CLI's format and reopening gives
//    the same scenario. Nothing else is written: keys the editor does not show survive untouched.
//  * Every edit is validated by data::parse_scenario, the code path `capplan estimate` uses, with
//    the same "scenario" prefix, so a message reads exactly as the CLI prints it
//    ("scenario#/cluster/nodes: must be an integer >= 1; got 0").
//  * last_good() keeps the last scenario that parsed, so views keep showing its result while an
//    edit is invalid. No core type derives from QObject; this class only owns plain values.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "capplan/data/catalog.hpp"
#include "capplan/data/json_pointer.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/workload/strategy.hpp"

namespace capplan::gui {

// The strategy fields the editor offers, each a number or "auto" (scenario keys).
inline constexpr const char* kStrategyIntKeys[] = {"tp", "pp", "dp", "cp", "ep", "micro_batch", "virtual_stages",
                                                  "zero"};
inline constexpr const char* kModelDimKeys[] = {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                                               "seq_len"};

class ScenarioDocument final : public QObject {
  Q_OBJECT

 public:
  // The prefix of every diagnostic, as the CLI's.
  static constexpr std::string_view kWhere = "scenario";

  explicit ScenarioDocument(std::shared_ptr<const data::Catalogs> catalogs, QObject* parent = nullptr);

  // A scenario document read as `capplan estimate FILE` reads it, and so as every tab reads it: the
  // price sheet it names (pricing.sheet, relative to `file_path`) merged over a copy of `catalogs`,
  // its rates (spot, reserved, currency) applied, the sheet's notes among the warnings.
  static Result<data::ParsedScenario> parse(const nlohmann::json& doc, const data::Catalogs& catalogs,
                                            const QString& file_path);

  const data::Catalogs& catalogs() const { return *catalogs_; }
  std::shared_ptr<const data::Catalogs> catalogs_ptr() const { return catalogs_; }

  // --- whole document --------------------------------------------------------------------
  const nlohmann::json& document() const { return doc_; }
  void load_json(nlohmann::json doc);
  // Text of a scenario file. On invalid JSON the document is left as it was and the syntax error
  // (line, column, as data::parse_scenario_text words it) is returned.
  Result<void> load_text(std::string_view text);
  // The file's text: 2-space indented JSON and a final newline.
  std::string to_text() const;
  void load_example();  // data::example_scenario()

  // --- field edits (JSON pointers such as "/cluster/nodes") --------------------------------
  // Text as typed: a JSON number or bool when it reads as one, else a string ("auto", "2T"), as the
  // CLI's flags do. An empty text removes the key (the default applies).
  void set_text(std::string_view pointer, const QString& text);
  void set_value(std::string_view pointer, nlohmann::json value);
  void erase(std::string_view pointer);
  bool has(std::string_view pointer) const;
  QString text(std::string_view pointer) const;  // "" when absent

  // Structural edits, each one validated like any other edit.
  void use_preset(const std::string& model_id);       // model = {preset}; keeps nothing else
  void use_custom_model();                            // explicit dimensions of the current model
  void use_instance(const std::string& instance_id);  // keeps nodes (1 if none)
  void use_gpu(const std::string& gpu_id);            // keeps the GPU count (8 if none)
  void set_strategy_auto(bool all_auto);              // "auto", or an object of the current layout
  // A price per GPU-hour over the catalog's; nullopt removes the override. The rest of the pricing
  // section (purchase model, spot, reserved and on-prem terms, currency) is kept; a section left
  // empty is removed.
  void set_price_override(std::optional<double> usd_per_gpu_hour);
  // Loads a planned layout (and its offering) into the document.
  void apply_plan(const std::string& instance_id, const std::string& gpu_id, int nodes_or_gpus,
                  const sim::Parallelism& p);

  // --- validation --------------------------------------------------------------------------
  bool valid() const { return parsed_.has_value(); }
  // Errors of the current document (empty when valid), then the parser's warnings.
  const Diagnostics& diagnostics() const { return diags_; }
  // "where: message" of every error whose JSON pointer is `pointer` or lies below it.
  QStringList messages_for(std::string_view pointer) const;
  QStringList all_messages() const;
  // The current scenario when valid; otherwise the last one that was.
  const std::optional<data::ParsedScenario>& last_good() const { return last_good_; }

  // --- file state ------------------------------------------------------------------------
  QString file_path() const { return file_path_; }
  // The scenario's pricing.sheet is relative to its file: a document that names one is read again.
  void set_file_path(const QString& path);
  bool modified() const { return modified_; }
  void set_modified(bool m) { modified_ = m; }

 signals:
  // After every change, valid or not (check valid()/last_good()).
  void changed();

 private:
  void revalidate();

  std::shared_ptr<const data::Catalogs> catalogs_;
  nlohmann::json doc_;
  std::optional<data::ParsedScenario> parsed_;
  std::optional<data::ParsedScenario> last_good_;
  Diagnostics diags_;
  QString file_path_;
  bool modified_ = false;
};

// Sets `value` at a JSON pointer, turning any non-object on the way into an object (a field set on
// an "auto" strategy makes it an object with that field, the others auto): the CLI's flags do the same.
using data::set_at;

}  // namespace capplan::gui
