// SPDX-License-Identifier: Apache-2.0
// The GUI's models, document and runner, with no widgets (STYLE.md 4.8: QAbstractItemModelTester
// in QtTest mode, QSignalSpy on the runner, QT_QPA_PLATFORM=offscreen).
#include <QAbstractItemModelTester>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include "capplan/data/cost_model.hpp"
#include "capplan/data/error_bands.hpp"
#include "capplan/data/findings.hpp"
#include "capplan/data/plan_text.hpp"
#include "capplan/gui/catalog_models.hpp"
#include "capplan/gui/compare_model.hpp"
#include "capplan/data/search_io.hpp"
#include "capplan/gui/calibration.hpp"
#include "capplan/gui/estimate_runner.hpp"
#include "capplan/gui/finding_text.hpp"
#include "capplan/gui/format.hpp"
#include "gui_test_support.hpp"
#include "capplan/gui/goodput_model.hpp"
#include "capplan/gui/plan_runner.hpp"
#include "capplan/gui/result_models.hpp"
#include "capplan/gui/scenario_document.hpp"
#include "capplan/gui/table_model.hpp"
#include "capplan/gui/serve_model.hpp"
#include "capplan/gui/tco_model.hpp"

using namespace capplan;
using namespace capplan::gui;

namespace {

// A translator that knows a few of data/'s templates (context "capplan::Finding").
class FewWords : public QTranslator {
 public:
  bool isEmpty() const override { return false; }
  QString translate(const char* context, const char* source, const char*, int) const override {
    if (QByteArrayView(context) != "capplan::Finding") return {};
    const QByteArrayView s(source);
    if (s == "Cheapest plan") return QStringLiteral("Le plan le moins cher");
    if (s == ", {unit}{amount:money}") return QStringLiteral(", pour {unit}{amount:money}");
    if (s == "must divide the number of attention heads ({heads}); got {got}") {
      return QStringLiteral("doit diviser les {heads} têtes ; reçu {got}");
    }
    return {};
  }
};

using capplan::gui::test::catalogs;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

EstimateSnapshot example_snapshot() {
  auto parsed = data::parse_scenario(data::example_scenario(), *catalogs());
  if (!parsed) qFatal("example does not parse");
  auto snap = EstimateRunner::compute(*parsed, nullptr);
  if (!snap) qFatal("example does not estimate");
  return *snap;
}

// A table of the base model alone: two fields with their own sort and tooltip, one with neither.
struct Crate {
  std::string id;
  double kg = 0;
  std::optional<QString> pending;  // set: nothing to show yet
};

TableSpec<Crate> crate_spec(bool transposed) {
  Field<Crate> id{QStringLiteral("Crate"), [](const Crate& c) -> QVariant { return QString::fromStdString(c.id); }};
  Field<Crate> weight{QStringLiteral("Weight"),
                      [](const Crate& c) -> QVariant { return QStringLiteral("%1 kg").arg(c.kg); },
                      [](const Crate& c) -> QVariant { return c.kg; }, Qt::AlignRight | Qt::AlignVCenter,
                      [](const Crate& c) -> QVariant { return QStringLiteral("weighed: %1").arg(c.kg); }};
  return {.fields = {id, weight},
          .key = [](const Crate& c) { return QString::fromStdString(c.id); },
          .tooltip = [](const Crate& c) -> QVariant { return QStringLiteral("row ") + QString::fromStdString(c.id); },
          .placeholder = [](const Crate& c) { return c.pending; },
          .transposed = transposed,
          .record_header = [](const Crate& c, int i) -> QVariant {
            return QString::number(i) + QStringLiteral(":") + QString::fromStdString(c.id);
          }};
}

class CrateTable final : public TableModel<Crate> {
 public:
  explicit CrateTable(bool transposed) : TableModel(crate_spec(transposed)) {}
  using TableModel::set_rows;
  using TableModel::show_rows;
};

// Keeps the runner fed from the document, as MainWindow does.
void wire(ScenarioDocument& doc, EstimateRunner& runner) {
  QObject::connect(&doc, &ScenarioDocument::changed, &runner, [&] {
    if (doc.valid()) runner.request(*doc.last_good());
  });
}

}  // namespace

class GuiModelsTest : public QObject {
  Q_OBJECT

 private slots:
  // Money in the currency the user priced in, "$" for US dollars.
  void money_is_labelled_with_its_currency() {
    const sim::Currency cny{"CNY", 0.14, "2026-12-01"};
    QCOMPARE(money_text(1.4e6, cny), QStringLiteral("CNY 10.00M"));
    QCOMPARE(money_text(3.5, cny), QStringLiteral("CNY 25.00"));
    QCOMPARE(money_text(1.4e6, sim::Currency{}), QStringLiteral("$1.40M"));
    QCOMPARE(usd_text(45678.0), QStringLiteral("$45,678"));
  }

  void result_models_pass_the_item_model_tester() {
    BreakdownModel breakdown;
    MemoryModel memory;
    WarningsModel warnings;
    QAbstractItemModelTester t1(&breakdown, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(&memory, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t3(&warnings, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const EstimateSnapshot snap = example_snapshot();
    breakdown.set_snapshot(snap);
    memory.set_snapshot(snap);
    warnings.set_messages(snapshot_warnings(snap));
    QVERIFY(breakdown.rowCount() >= 1);
    QCOMPARE(memory.rowCount(), 6);
    // The breakdown rows partition the step: their raw seconds add up to the step time.
    double sum = 0;
    for (int r = 0; r < breakdown.rowCount(); ++r) {
      sum += breakdown.index(r, BreakdownModel::kTime).data(kSortRole).toDouble();
    }
    QVERIFY(std::abs(sum - snap.estimate.step.time.base()) <= 1e-9 * snap.estimate.step.time.base());
    // Memory rows add up to the peak total (raw bytes on kSortRole, text with a unit on DisplayRole).
    QVERIFY(std::abs(memory.total_bytes() - snap.estimate.memory.total().base()) < 1.0);
    QVERIFY(memory.index(0, MemoryModel::kSize).data().toString().endsWith(QStringLiteral("GiB")));
    breakdown.clear();
    memory.clear();
    QCOMPARE(breakdown.rowCount(), 0);
  }

  void the_base_table_model_answers_every_role_from_its_fields() {
    CrateTable table(false);
    QAbstractItemModelTester tester(&table, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(table.rowCount(), 0);
    QCOMPARE(table.columnCount(), 2);
    QSignalSpy reset(&table, &QAbstractItemModel::modelReset);
    table.set_rows({{"apples", 12.5, {}}, {"pears", 3, {}}, {"plums", 1, QStringLiteral("weighing…")}});
    QCOMPARE(reset.count(), 1);
    QCOMPARE(table.rowCount(), 3);
    QCOMPARE(table.rowCount(table.index(0, 0)), 0);  // flat: no children
    QCOMPARE(table.columnCount(table.index(0, 0)), 0);
    // Headers: the fields' along the top, nothing but DisplayRole, nothing out of range.
    QCOMPARE(table.headerData(0, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("Crate"));
    QCOMPARE(table.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("Weight"));
    QVERIFY(!table.headerData(2, Qt::Horizontal, Qt::DisplayRole).isValid());
    QVERIFY(!table.headerData(-1, Qt::Horizontal, Qt::DisplayRole).isValid());
    QVERIFY(!table.headerData(0, Qt::Horizontal, Qt::ToolTipRole).isValid());
    QCOMPARE(table.headerData(1, Qt::Vertical, Qt::DisplayRole).toString(), QStringLiteral("1:pears"));
    // Cells: display, sort (the display value when a field has none), key, tooltips, alignment.
    const QModelIndex name = table.index(0, 0);
    const QModelIndex weight = table.index(0, 1);
    QCOMPARE(name.data().toString(), QStringLiteral("apples"));
    QCOMPARE(weight.data().toString(), QStringLiteral("12.5 kg"));
    QCOMPARE(weight.data(kSortRole).toDouble(), 12.5);
    QCOMPARE(name.data(kSortRole).toString(), QStringLiteral("apples"));
    QCOMPARE(weight.data(kKeyRole).toString(), QStringLiteral("apples"));
    QCOMPARE(weight.data(Qt::ToolTipRole).toString(), QStringLiteral("weighed: 12.5"));
    QCOMPARE(name.data(Qt::ToolTipRole).toString(), QStringLiteral("row apples"));
    QCOMPARE(weight.data(Qt::TextAlignmentRole).value<Qt::Alignment>(), Qt::AlignRight | Qt::AlignVCenter);
    QVERIFY(!name.data(Qt::TextAlignmentRole).isValid());
    QVERIFY(!name.data(Qt::EditRole).isValid());
    QVERIFY(!name.data(Qt::DecorationRole).isValid());
    // A record with nothing to show: its text in the first field only, no other role.
    QCOMPARE(table.index(2, 0).data().toString(), QStringLiteral("weighing…"));
    QVERIFY(!table.index(2, 1).data().isValid());
    QVERIFY(!table.index(2, 0).data(kKeyRole).isValid());
    QVERIFY(!table.index(2, 1).data(kSortRole).isValid());
    QCOMPARE(table.row_of_key(QStringLiteral("pears")), 1);
    QCOMPARE(table.row_of_key(QStringLiteral("figs")), -1);
    // A view over storage the subclass keeps: no copy.
    const std::vector<Crate> kept = {{"figs", 2, {}}};
    table.show_rows(kept);
    QCOMPARE(reset.count(), 2);
    QCOMPARE(table.rows().data(), kept.data());
    QCOMPARE(table.index(0, 1).data(kSortRole).toDouble(), 2.0);
    table.set_rows({});
    QCOMPARE(table.rowCount(), 0);

    // Transposed: fields down the side, one column per record, named by record_header.
    CrateTable side(true);
    QAbstractItemModelTester side_tester(&side, QAbstractItemModelTester::FailureReportingMode::QtTest);
    side.set_rows({{"apples", 12.5, {}}, {"plums", 1, QStringLiteral("weighing…")}});
    QCOMPARE(side.rowCount(), 2);
    QCOMPARE(side.columnCount(), 2);
    QCOMPARE(side.headerData(1, Qt::Vertical, Qt::DisplayRole).toString(), QStringLiteral("Weight"));
    QCOMPARE(side.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("1:plums"));
    QCOMPARE(side.index(1, 0).data().toString(), QStringLiteral("12.5 kg"));
    QCOMPARE(side.index(0, 1).data().toString(), QStringLiteral("weighing…"));
    QVERIFY(!side.index(1, 1).data().isValid());
  }

  // A finding in the GUI's words: data/'s template (through tr()), the GUI's number format. Where
  // both formats write a number the same way the sentence is the CLI's; a number that is not
  // finite reads "n/a" here and "inf" in the CLI.
  void findings_are_worded_with_the_guis_number_format() {
    const sim::Finding fit =
        sim::finding(sim::FindingCode::does_not_fit, "", {{"need_gib", 194.37}, {"have_gib", 141}});
    QCOMPARE(finding_text(fit), QStringLiteral("does not fit in memory: needs 194.4 GiB per GPU, the GPU has 141 GiB"));
    QCOMPARE(finding_text(fit).toStdString(), data::render(fit));
    const sim::Finding unbounded = sim::finding(sim::FindingCode::interruptions_unbounded, "",
                                                {{"mtbi_h", std::numeric_limits<double>::infinity()}});
    QVERIFY(finding_text(unbounded).contains(QStringLiteral("(every n/a h)")));
    QVERIFY(data::render(unbounded).find("(every inf h)") != std::string::npos);
    QCOMPARE(finding_text(sim::note("profile: gemm fp8 not measured; datasheet used")),
             QStringLiteral("profile: gemm fp8 not measured; datasheet used"));
  }

  // The planner's "Why #1" is worded piece by piece through tr(): untranslated it is the CLI's
  // sentence; a translator that knows a piece's template rewords that piece, values and all. A
  // diagnostic sim/ coded goes the same way.
  void why_number_one_and_coded_errors_are_worded_through_tr() {
    ScenarioDocument doc(catalogs());
    sim::SearchRequest request;
    request.base = doc.last_good()->scenario;
    request.node_counts = {16};
    request.objective = sim::Objective::cheapest;
    data::OfferingFilter filter;
    filter.instances = {"aws-p5.48xlarge"};
    auto offerings = data::offerings_from_catalog(*catalogs(), filter);
    QVERIFY(offerings.has_value());
    request.offerings = offerings->offerings;
    const auto result = sim::search(request);
    QVERIFY(result.has_value());
    const QString why = explanation_text(*result, request);
    QCOMPARE(why.toStdString(), data::explanation(*result, request));
    QVERIFY2(why.startsWith(QStringLiteral("Cheapest plan: ")), qPrintable(why));
    const auto cost = sim::plan_cost(sim::chosen_plan(*result)->estimate);
    QVERIFY(cost.has_value());
    const QString usd = QString::fromStdString(data::spec_number(cost->base(), "usd"));
    QVERIFY2(why.contains(QStringLiteral(", ") + usd + QStringLiteral(". Step")), qPrintable(why));

    const Diagnostic coded{Diagnostic::Severity::error, "scenario#/strategy/tp", {},
                           sim::finding(sim::FindingCode::layout_tp_divides_heads, "strategy.tp",
                                        {{"heads", 64}, {"got", 6}})};
    QCOMPARE(diagnostic_text(coded),
             QStringLiteral("scenario#/strategy/tp: must divide the number of attention heads (64); got 6"));

    FewWords words;
    QVERIFY(QCoreApplication::installTranslator(&words));
    const QString translated = explanation_text(*result, request);
    const QString translated_error = diagnostic_text(coded);
    QCoreApplication::removeTranslator(&words);
    QString expected = why;
    expected.replace(0, QStringLiteral("Cheapest plan").size(), QStringLiteral("Le plan le moins cher"));
    expected.replace(QStringLiteral(", ") + usd + QStringLiteral(". Step"),
                     QStringLiteral(", pour ") + usd + QStringLiteral(". Step"));
    QCOMPARE(translated, expected);
    QCOMPARE(translated_error, QStringLiteral("scenario#/strategy/tp: doit diviser les 64 têtes ; reçu 6"));
    QCOMPARE(explanation_text(*result, request), why);  // the translator is gone

    // The runner-ups and an unmet constraint read as the CLI's, piece by piece the same way.
    const sim::Plan* chosen = sim::chosen_plan(*result);
    QVERIFY(!result->runner_ups.empty());
    for (const auto& u : result->runner_ups) {
      QCOMPARE(runner_up_text(u, *chosen).toStdString(), data::runner_up_text(u, *chosen));
    }
    request.deadline = units::seconds(3600);  // an hour: no plan meets it
    const auto missed = sim::search(request);
    QVERIFY(missed.has_value() && missed->failure.has_value());
    QCOMPARE(failure_text(*missed->failure, request).toStdString(), data::failure_message(*missed->failure, request));
    QVERIFY(failure_text(*missed->failure, request).startsWith(QStringLiteral("no plan meets the deadline of 0.04 days")));
  }

  void goodput_model_shows_the_estimates_goodput_with_raw_numbers() {
    GoodputModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const EstimateSnapshot snap = example_snapshot();
    const sim::Goodput& g = snap.estimate.goodput;
    QVERIFY(g.modelled);
    model.set_snapshot(snap);
    QCOMPARE(model.columnCount(), static_cast<int>(GoodputModel::kColumnCount));
    for (const char* key : {"interruptions", "mtbi", "checkpoint_interval", "checkpoint_write", "checkpoint_stall",
                            "checkpoint_size", "restart", "lost_work", "data_loading", "fraction"}) {
      QVERIFY2(model.row_of(key) >= 0, key);
      QCOMPARE(model.index(model.row_of(key), 0).data(kKeyRole).toString(), QString::fromLatin1(key));
    }
    auto raw = [&](const char* key) { return model.index(model.row_of(key), GoodputModel::kValue).data(kSortRole).toDouble(); };
    // kSortRole carries the library's numbers unchanged (SI: seconds, bytes, fraction).
    QCOMPARE(raw("interruptions"), g.expected_interruptions);
    QCOMPARE(raw("mtbi"), g.mtbi.base());
    QCOMPARE(raw("checkpoint_interval"), g.checkpoint_interval.base());
    QCOMPARE(raw("checkpoint_stall"), g.checkpoint_stall.base());
    QCOMPARE(raw("checkpoint_size"), g.checkpoint.per_rank_max.base());
    QCOMPARE(raw("restart"), g.restart.base());
    QCOMPARE(raw("lost_work"), g.lost_work.base());
    QCOMPARE(raw("fraction"), g.fraction);
    // The example chooses its interval: the note says it is Daly's optimum.
    QVERIFY(!g.interval_given);
    QVERIFY(model.index(model.row_of("checkpoint_interval"), GoodputModel::kNote).data().toString().contains(
        QStringLiteral("Daly optimum")));
    QVERIFY(model.index(model.row_of("fraction"), GoodputModel::kValue).data().toString().endsWith(QStringLiteral("%")));
    // The headline time is the expected wall time with failures, above the steady state.
    QVERIFY(g.wall.base() > snap.estimate.totals.time_to_train.base());
    model.clear();
    QCOMPARE(model.rowCount(), 0);
  }

  void a_profile_prices_the_estimate_as_estimate_profile_does() {
    const QString fixture = QStringLiteral(CAPPLAN_SOURCE_DIR "/tests/fixtures/calibrate/synthetic-h100-profile.json");
    auto loaded = load_profile_file(fixture);
    QVERIFY2(loaded.has_value(), loaded ? "" : loaded.error().front().message.c_str());
    QVERIFY2(loaded->label().startsWith(QStringLiteral("calibrated: synthetic H100")), qPrintable(loaded->label()));
    QVERIFY(loaded->label().endsWith(QStringLiteral("(2026-11-30)")));
    QVERIFY(loaded->measured().join(QLatin1Char(' ')).contains(QStringLiteral("GEMM bf16")));
    // A profile with launch fits lists them per kernel (microseconds on a GPU, nanoseconds on a CPU).
    {
      sim::Profile with_launch = *loaded->profile;
      sim::LaunchFit dispatch;
      dispatch.pattern = "dispatch";
      dispatch.per_kernel_s.value = 6.5e-6;
      sim::LaunchFit host;
      host.pattern = "launch";
      host.per_kernel_s.value = 1.6e-9;
      with_launch.launch = {dispatch, host};
      LoadedProfile l;
      l.profile = std::make_shared<const sim::Profile>(with_launch);
      QVERIFY2(l.measured().contains(QStringLiteral("launch per kernel: dispatch 6.50 us, launch 1.6 ns")),
               qPrintable(l.measured().join(QLatin1Char('|'))));
    }

    auto parsed = data::parse_scenario(data::example_scenario(), *catalogs());
    QVERIFY(parsed.has_value());
    const auto datasheet = EstimateRunner::compute(*parsed, nullptr);
    const auto calibrated = EstimateRunner::compute(*parsed, nullptr, loaded->profile.get());
    QVERIFY(datasheet.has_value() && calibrated.has_value());
    QCOMPARE(datasheet->cost_model_label(), QStringLiteral("datasheet model"));
    QCOMPARE(calibrated->cost_model_label(), loaded->label());
    QVERIFY(calibrated->estimate.step.time.base() != datasheet->estimate.step.time.base());
    // What the profile did not cover is listed, each saying the datasheet was used.
    bool coverage = false;
    for (const auto& f : calibrated->estimate.findings) {
      const std::string w = data::render(f);
      coverage = coverage || (w.starts_with("profile: ") && w.ends_with("datasheet used"));
    }
    QVERIFY(coverage);

    // The runner prices later requests with the profile it holds.
    EstimateRunner runner;
    runner.set_profile(loaded->profile);
    QSignalSpy spy(&runner, &EstimateRunner::finished);
    runner.request(*parsed);
    QVERIFY(spy.wait(60000));
    QCOMPARE(spy.at(0).at(0).value<EstimateSnapshot>().estimate.step.time.base(), calibrated->estimate.step.time.base());

    // The planner's factory (SearchRequest::cost_model) builds the same calibrated model.
    const auto factory = data::cost_model_factory(loaded->profile);
    QCOMPARE(QString::fromStdString(factory(parsed->scenario.cluster)->source()), loaded->label());
  }

  void a_bad_profile_is_refused_with_the_clis_message() {
    for (const char* name : {"bad-peak-profile.json", "truncated-profile.json"}) {
      const QString path = QStringLiteral(CAPPLAN_SOURCE_DIR "/tests/fixtures/calibrate/") + QString::fromLatin1(name);
      auto loaded = load_profile_file(path);
      QVERIFY(!loaded.has_value());
      const QString message = QString::fromStdString(loaded.error().front().where + ": " + loaded.error().front().message);
      QProcess cli;
      cli.start(QStringLiteral(CAPPLAN_CLI_EXE), {QStringLiteral("estimate"), QStringLiteral("--profile"), path,
                                                   QStringLiteral("--data-dir"), QStringLiteral(CAPPLAN_SOURCE_DIR "/data")});
      QVERIFY(cli.waitForFinished(60000));
      QCOMPARE(cli.exitCode(), 2);
      const QString err = QString::fromUtf8(cli.readAllStandardError());
      QVERIFY2(err.contains(QStringLiteral("capplan: error: ") + message), qPrintable(err + " vs " + message));
    }
    QVERIFY(load_profile_file(QStringLiteral("/no/such/profile.json")).error().front().message.starts_with("cannot read"));
  }

  void catalog_and_compare_models_pass_the_item_model_tester() {
    InstanceCatalogModel instances(catalogs());
    InstanceFilterModel filter;
    filter.setSourceModel(&instances);
    QAbstractItemModelTester t1(&instances, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(instances.rowCount(), static_cast<int>(catalogs()->instances.size()));
    filter.set_query(QStringLiteral("aws h100"));
    QVERIFY(filter.rowCount() >= 1);
    for (int r = 0; r < filter.rowCount(); ++r) {
      const QString id = filter.index(r, InstanceCatalogModel::kId).data().toString();
      QVERIFY2(id.startsWith(QStringLiteral("aws-")), qPrintable(id));
    }
    filter.sort(InstanceCatalogModel::kPriceGpuHour, Qt::DescendingOrder);
    filter.set_query(QString());
    QCOMPARE(filter.rowCount(), instances.rowCount());

    CompareModel compare;
    QAbstractItemModelTester t3(&compare, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const EstimateSnapshot snap = example_snapshot();
    compare.set_columns({{QStringLiteral("a"), snap, {}}, {QStringLiteral("b"), snap, {}}, {QStringLiteral("c"), {}, QStringLiteral("bad")}});
    QCOMPARE(compare.columnCount(), 3);
    QCOMPARE(compare.rowCount(), static_cast<int>(CompareModel::kMetricCount));
    // The same scenario twice: a delta of +0.0 % against column A.
    QVERIFY(compare.index(CompareModel::kTimeToTrain, 1).data().toString().contains(QStringLiteral("+0.0 %")));
    // Time and cost are the planner's axes: expected time with failures, total cost (goodput).
    QCOMPARE(compare.index(CompareModel::kTimeToTrain, 1).data(kSortRole).toDouble(),
             units::to_days(sim::plan_time(snap.estimate)));
    QVERIFY(snap.estimate.goodput.modelled);
    QCOMPARE(units::to_days(sim::plan_time(snap.estimate)), units::to_days(snap.estimate.goodput.wall));
    compare.set_columns({});
    QCOMPARE(compare.columnCount(), 0);
  }

  void editing_a_field_updates_the_results() {
    ScenarioDocument doc(catalogs());
    EstimateRunner runner;
    wire(doc, runner);
    QSignalSpy spy(&runner, &EstimateRunner::finished);
    runner.request(*doc.last_good());
    QVERIFY(spy.wait(60000));
    const auto first = spy.takeFirst().at(0).value<EstimateSnapshot>();
    QCOMPARE(first.scenario.scenario.cluster.gpus, 512);

    doc.set_text("/cluster/nodes", QStringLiteral("32"));
    QVERIFY(doc.valid());
    QVERIFY(spy.wait(60000));
    const auto second = spy.takeFirst().at(0).value<EstimateSnapshot>();
    QCOMPARE(second.scenario.scenario.cluster.gpus, 256);
    // The GUI shows the library's numbers: the same as computing directly.
    const auto direct = EstimateRunner::compute(*doc.last_good(), nullptr);
    QVERIFY(direct.has_value());
    QCOMPARE(second.estimate.step.time.base(), direct->estimate.step.time.base());
    QVERIFY(second.estimate.totals.time_to_train > first.estimate.totals.time_to_train);
  }

  void the_latest_request_wins() {
    ScenarioDocument doc(catalogs());
    EstimateRunner runner;
    QSignalSpy spy(&runner, &EstimateRunner::finished);
    auto base = *doc.last_good();
    quint64 last = 0;
    for (int nodes : {8, 16, 32, 48}) {
      doc.set_text("/cluster/nodes", QString::number(nodes));
      last = runner.request(*doc.last_good());
    }
    QVERIFY(spy.wait(60000));
    QTest::qWait(200);  // nothing older may arrive afterwards
    QCOMPARE(spy.count(), 1);
    const auto snap = spy.at(0).at(0).value<EstimateSnapshot>();
    QCOMPARE(snap.generation, last);
    QCOMPARE(snap.scenario.scenario.cluster.gpus, 48 * 8);
  }

  void an_invalid_field_shows_the_cli_message_and_keeps_the_last_good_result() {
    ScenarioDocument doc(catalogs());
    EstimateRunner runner;
    wire(doc, runner);
    QSignalSpy spy(&runner, &EstimateRunner::finished);
    QSignalSpy changed(&doc, &ScenarioDocument::changed);
    doc.set_text("/cluster/nodes", QStringLiteral("0"));
    QCOMPARE(changed.count(), 1);
    QVERIFY(!doc.valid());
    const QStringList messages = doc.messages_for("/cluster/nodes");
    QCOMPARE(messages.size(), 1);
    // The CLI prints the same message for the same value.
    QProcess cli;
    cli.start(QStringLiteral(CAPPLAN_CLI_EXE), {QStringLiteral("estimate"), QStringLiteral("--nodes"), QStringLiteral("0"),
                                                 QStringLiteral("--data-dir"), QStringLiteral(CAPPLAN_SOURCE_DIR "/data")});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 2);
    const QString err = QString::fromUtf8(cli.readAllStandardError());
    QVERIFY2(err.contains(QStringLiteral("capplan: error: ") + messages.front()), qPrintable(err + " vs " + messages.front()));
    // Text that is not a number at all: the same wording as a file holding that string.
    doc.set_text("/training/tokens", QStringLiteral("2 trillion"));
    QVERIFY(doc.messages_for("/training/tokens").front().startsWith(QStringLiteral("scenario#/training/tokens: expected a number")));
    // The last good scenario is kept, and no estimate was requested for the invalid one.
    QVERIFY(doc.last_good().has_value());
    QCOMPARE(doc.last_good()->scenario.cluster.gpus, 512);
    QTest::qWait(100);
    QCOMPARE(spy.count(), 0);
    // Fixing the fields makes it valid again, with a new result.
    doc.set_text("/training/tokens", QStringLiteral("1T"));
    doc.set_text("/cluster/nodes", QStringLiteral("16"));
    QVERIFY(doc.valid());
    QVERIFY(spy.wait(60000));
    QCOMPARE(spy.last().at(0).value<EstimateSnapshot>().scenario.scenario.cluster.gpus, 128);
  }

  void an_estimate_refusal_is_reported_with_the_cli_message() {
    ScenarioDocument doc(catalogs());
    EstimateRunner runner;
    QSignalSpy failed(&runner, &EstimateRunner::failed);
    doc.set_strategy_auto(false);
    doc.set_text("/strategy/tp", QStringLiteral("3"));  // does not divide llama3-70b's 64 heads
    if (doc.valid()) {
      runner.request(*doc.last_good());
      QVERIFY(failed.wait(60000));
      QVERIFY(failed.at(0).at(0).toStringList().join(' ').contains(QStringLiteral("scenario#/strategy")));
    } else {
      QVERIFY(!doc.messages_for("/strategy").isEmpty());
    }
  }

  // A deeply nested scenario or --profile file must not crash the app (a recursive dump() of the
  // error path would overflow the stack). The app reads through the CLI's bounded reader and
  // parser, so both are refused with the CLI's message, and a device is refused unread.
  void deeply_nested_scenario_and_profile_are_refused_not_a_crash() {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    ScenarioDocument doc(catalogs());
    const auto loaded = doc.load_text(deep);
    QVERIFY(!loaded.has_value());
    QVERIFY2(loaded.error().front().message.starts_with("invalid JSON: nested deeper than 256 levels"),
             loaded.error().front().message.c_str());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("deep-profile.json"));
    {
      std::ofstream(path.toStdString()) << deep;
    }
    const auto profile = load_profile_file(path);
    QVERIFY(!profile.has_value());
    QVERIFY2(profile.error().front().message.starts_with("invalid JSON: nested deeper than 256 levels"),
             profile.error().front().message.c_str());
    const auto device = load_profile_file(QStringLiteral("/dev/zero"));
    QVERIFY(!device.has_value());
    QVERIFY2(device.error().front().message == "cannot read the profile file: a device, not a file (capplan reads "
                                               "files, pipes and standard input)",
             device.error().front().message.c_str());
  }

  void open_and_save_round_trip_a_scenario_file() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const char* name : {"llama2_70b_p4d.json", "custom_model.json", "auto_strategy.json",
                             "mixtral_8x7b_ep8.json", "no_price.json"}) {
      const std::string path = std::string(CAPPLAN_SOURCE_DIR) + "/tests/cli/scenarios/" + name;
      const std::string original = read_file(path);
      ScenarioDocument doc(catalogs());
      QVERIFY(doc.load_text(original).has_value());
      QVERIFY2(doc.valid(), name);
      const std::string saved = doc.to_text();
      // Same JSON document, key for key and value for value...
      QVERIFY2(nlohmann::json::parse(saved) == nlohmann::json::parse(original), name);
      // ...and the same meaning: parsing either gives the same estimate output.
      auto a = data::parse_scenario_text(original, *catalogs());
      auto b = data::parse_scenario_text(saved, *catalogs());
      QVERIFY(a && b);
      auto ea = EstimateRunner::compute(*a, nullptr);
      auto eb = EstimateRunner::compute(*b, nullptr);
      QVERIFY(ea && eb);
      QCOMPARE(data::estimate_to_json(eb->estimate, *b).dump(), data::estimate_to_json(ea->estimate, *a).dump());
    }
    // Edits survive a save and a reopen.
    ScenarioDocument doc(catalogs());
    doc.use_gpu("h100-sxm-80gb");
    doc.set_text("/cluster/gpus", QStringLiteral("256"));
    doc.set_price_override(2.0);
    doc.set_strategy_auto(false);
    doc.set_text("/strategy/tp", QStringLiteral("8"));
    QVERIFY(doc.valid());
    ScenarioDocument reopened(catalogs());
    QVERIFY(reopened.load_text(doc.to_text()).has_value());
    QVERIFY(reopened.valid());
    QVERIFY(reopened.document() == doc.document());
    QCOMPARE(reopened.last_good()->scenario.cluster.gpus, 256);
    QCOMPARE(*reopened.last_good()->scenario.strategy.tp, 8);
  }

  void the_price_override_keeps_the_pricing_sections_terms() {
    // Ticking or unticking the price override keeps the rest of the pricing section: the spot
    // terms and currency the user typed stay.
    ScenarioDocument doc(catalogs());
    doc.use_instance("tencent-hccpnv5");
    doc.set_text("/pricing/currency", QStringLiteral("CNY"));
    doc.set_text("/pricing/usd_per_unit", QStringLiteral("0.14"));
    doc.set_text("/pricing/purchase", QStringLiteral("spot"));
    doc.set_text("/pricing/spot/usd_per_gpu_hour", QStringLiteral("10"));
    doc.set_price_override(25.0);
    QVERIFY2(doc.valid(), qPrintable(doc.all_messages().join(QLatin1Char('\n'))));
    QCOMPARE(units::to_usd_per_hour(*doc.last_good()->scenario.cluster.price_per_gpu), 25 * 0.14);  // CNY 25
    QCOMPARE(doc.text("/pricing/spot/usd_per_gpu_hour"), QStringLiteral("10"));
    QCOMPARE(doc.text("/pricing/currency"), QStringLiteral("CNY"));
    QCOMPARE(doc.last_good()->scenario.pricing.model, sim::PurchaseModel::spot);
    doc.set_price_override(std::nullopt);
    QVERIFY(!doc.has("/pricing/usd_per_gpu_hour"));
    QCOMPARE(doc.text("/pricing/purchase"), QStringLiteral("spot"));
    QCOMPARE(doc.text("/pricing/spot/usd_per_gpu_hour"), QStringLiteral("10"));
    // A section holding only the price goes with it.
    ScenarioDocument plain(catalogs());
    plain.set_price_override(2.0);
    QVERIFY(plain.has("/pricing/usd_per_gpu_hour"));
    plain.set_price_override(std::nullopt);
    QVERIFY(!plain.has("/pricing"));
  }

  void invalid_json_is_reported_by_line_and_column() {
    ScenarioDocument doc(catalogs());
    auto r = doc.load_text("{ \"model\": \n  { \"preset\": }");
    QVERIFY(!r.has_value());
    QVERIFY(r.error().front().message.find("line 2") != std::string::npos);
    QVERIFY(doc.valid());  // the document is unchanged
  }

  void structural_edits_stay_valid() {
    ScenarioDocument doc(catalogs());
    doc.use_custom_model();
    QVERIFY(doc.valid());
    QVERIFY(!doc.has("/model/preset"));
    doc.use_preset("llama2-7b");
    QVERIFY(doc.valid());
    // The catalog lacks this instance's network bandwidth: the CLI's message, until the user gives one.
    doc.use_instance("coreweave-8x-h100");
    QVERIFY(!doc.valid());
    QVERIFY(doc.messages_for("/cluster/instance").front().contains(QStringLiteral("inter_node_gbps_per_gpu")));
    doc.set_text("/cluster/inter_node_gbps_per_gpu", QStringLiteral("400"));
    QVERIFY2(doc.valid(), qPrintable(doc.all_messages().join(QLatin1Char(10))));
    QCOMPARE(doc.last_good()->scenario.cluster.instance_id, std::string("coreweave-8x-h100"));
    sim::Parallelism p;
    p.tp = 2;
    p.pp = 1;
    p.dp = 16;
    p.zero = 1;
    doc.apply_plan("", "h100-sxm-80gb", 32, p);
    QVERIFY2(doc.valid(), qPrintable(doc.all_messages().join('\n')));
    QCOMPARE(doc.last_good()->scenario.cluster.gpus, 32);
    QCOMPARE(*doc.last_good()->scenario.strategy.dp, 16);
  }

  void the_gpu_speed_spread_survives_switching_the_cluster() {
    ScenarioDocument doc(catalogs());
    doc.set_text("/cluster/gpu_speed_spread", QStringLiteral("0"));
    QVERIFY2(doc.valid(), qPrintable(doc.all_messages().join('\n')));
    QCOMPARE(doc.last_good()->scenario.cluster.gpu_speed_spread, 0.0);
    doc.use_gpu("h100-sxm-80gb");
    QCOMPARE(doc.last_good()->scenario.cluster.gpu_speed_spread, 0.0);
    doc.use_instance("aws-p5.48xlarge");
    QCOMPARE(doc.last_good()->scenario.cluster.gpu_speed_spread, 0.0);
    sim::Parallelism p;
    p.tp = 8;
    p.pp = 1;
    p.dp = 8;
    doc.apply_plan("aws-p5.48xlarge", "h100-sxm-80gb", 8, p);
    QVERIFY2(doc.valid(), qPrintable(doc.all_messages().join('\n')));
    QCOMPARE(doc.last_good()->scenario.cluster.gpu_speed_spread, 0.0);
    // Out of range: the CLI's message beside the field, the last good scenario kept.
    doc.set_text("/cluster/gpu_speed_spread", QStringLiteral("0.9"));
    QVERIFY(!doc.valid());
    QVERIFY(!doc.messages_for("/cluster/gpu_speed_spread").isEmpty());
  }

  void the_planner_runs_in_the_background_and_its_plans_pass_the_item_model_tester() {
    ScenarioDocument doc(catalogs());
    sim::SearchRequest request;
    request.base = doc.last_good()->scenario;
    request.node_counts = {16, 32, 64};
    request.top_k = 50;
    data::OfferingFilter filter;
    filter.instances = {"aws-*"};
    filter.gpus = {"h100-sxm-80gb"};
    auto offerings = data::offerings_from_catalog(*catalogs(), filter);
    QVERIFY(offerings.has_value());
    request.offerings = offerings->offerings;
    PlanRunner runner;
    PlansModel plans;
    QAbstractItemModelTester tester(&plans, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy progress(&runner, &PlanRunner::progress);
    QSignalSpy finished(&runner, &PlanRunner::finished);
    runner.start(*doc.last_good(), request);
    QVERIFY(runner.busy());
    QVERIFY(finished.wait(120000));
    const auto snap = finished.at(0).at(0).value<std::shared_ptr<const PlanSnapshot>>();
    QVERIFY(snap->errors.isEmpty());
    QVERIFY(!snap->cancelled);
    QVERIFY(snap->result && !snap->result->plans.empty());
    QVERIFY(progress.count() >= 1);  // at least the start and the end
    plans.set_snapshot(snap);
    QCOMPARE(plans.rowCount(), static_cast<int>(snap->result->plans.size()));
    // Best first, and the raw time and cost on kSortRole are the planner's axes (goodput: expected
    // days with failures, total cost), not the steady-state sticker figures.
    const sim::Plan& best = snap->result->plans.front();
    QCOMPARE(plans.index(0, PlansModel::kCost).data(kSortRole).toDouble(), sim::plan_cost(best.estimate)->base());
    QCOMPARE(plans.index(0, PlansModel::kTime).data(kSortRole).toDouble(), units::to_days(sim::plan_time(best.estimate)));
    QCOMPARE(plans.index(0, PlansModel::kOffering).data().toString(), QString::fromStdString(best.instance_id));
    // Every plan of the Pareto front is marked as such.
    int marked = 0;
    for (int r = 0; r < plans.rowCount(); ++r) marked += plans.index(r, PlansModel::kPareto).data(kSortRole).toInt();
    QVERIFY(marked >= 1);
    // A plan loads into the editor as a scenario that parses.
    doc.apply_plan(best.instance_id, best.gpu_id, best.nodes, best.estimate.layout.strategy);
    QVERIFY2(doc.valid(), qPrintable(doc.all_messages().join(QLatin1Char(10))));
    QCOMPARE(doc.last_good()->scenario.cluster.gpus, best.gpus);
    plans.set_snapshot(nullptr);
    QCOMPARE(plans.rowCount(), 0);
  }

  // The Own vs rent tab's figures are `capplan tco`'s, price sheet included, and
  // its curve is sim::tco asked at each utilisation.
  void the_own_vs_rent_figures_are_capplan_tcos() {
    struct Case {
      const char* file;
      bool sheet;
    };
    for (const Case& c : {Case{"tests/cli/scenarios/tencent_h800_tco.json", false},
                          Case{"examples/tencent-h800-100b/scenario.json", true}}) {
      const std::string path = std::string(CAPPLAN_SOURCE_DIR "/") + c.file;
      std::ifstream in(path);
      const nlohmann::json doc = nlohmann::json::parse(in);
      QVERIFY(has_tco_section(doc));
      auto snap = tco_snapshot(doc, *catalogs(), path);
      QVERIFY2(snap.has_value(), c.file);
      QCOMPARE(!snap->sheet.isEmpty(), c.sheet);
      QProcess cli;
      cli.start(QStringLiteral(CAPPLAN_CLI_EXE), {QStringLiteral("tco"), QString::fromStdString(path),
                                                   QStringLiteral("--format"), QStringLiteral("json"),
                                                   QStringLiteral("--data-dir"), QStringLiteral(CAPPLAN_SOURCE_DIR "/data")});
      QVERIFY(cli.waitForFinished(60000));
      QCOMPARE(cli.exitCode(), 0);
      const auto out = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
      // The request and result are the CLI's: its JSON, written from them, is what `capplan tco` prints.
      QCOMPARE(QString::fromStdString(data::tco_to_json(snap->tco, snap->request).dump()),
               QString::fromStdString(out.dump()));
      // The curve: 5 % to 100 %, falling, through the scenario's own point.
      QCOMPARE(static_cast<int>(snap->own_curve.size()), 100 - kTcoCurveFromPercent + 1);
      QCOMPARE(snap->own_curve.front().utilisation, 0.05);
      QCOMPARE(snap->own_curve.back().utilisation, 1.0);
      for (size_t i = 1; i < snap->own_curve.size(); ++i) {
        QVERIFY(snap->own_curve[i].usd_per_useful_gpu_hour < snap->own_curve[i - 1].usd_per_useful_gpu_hour);
      }
      const auto at = std::find_if(snap->own_curve.begin(), snap->own_curve.end(),
                                   [](const TcoPoint& p) { return std::abs(p.utilisation - 0.6) < 1e-9; });
      QVERIFY(at != snap->own_curve.end());
      QCOMPARE(at->usd_per_useful_gpu_hour, *snap->tco.own_usd_per_useful_gpu_hour);

      TcoModel model;
      QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
      model.set_snapshot(*snap);
      QCOMPARE(model.rowCount(), 4);
      for (const auto& rent : out.at("rent")) {
        const int row = model.row_of(rent.at("purchase").get<std::string>());
        QVERIFY(row > 0);
        const QVariant be = model.index(row, TcoModel::kBreakEven).data(kSortRole);
        if (rent.at("break_even_utilisation").is_null()) {
          QVERIFY(!be.isValid());
        } else {
          QCOMPARE(be.toDouble(), rent.at("break_even_utilisation").get<double>());
        }
      }
    }
    // The CLI's figures for the test file (README "Own versus rent over years").
    std::ifstream in(CAPPLAN_SOURCE_DIR "/tests/cli/scenarios/tencent_h800_tco.json");
    nlohmann::json doc = nlohmann::json::parse(in);
    TcoModel model;
    model.set_snapshot(*tco_snapshot(doc, *catalogs(), ""));
    auto cell = [&](const char* key, int column) {
      return model.index(model.row_of(key), column).data().toString();
    };
    QCOMPARE(cell("own", TcoModel::kTotal), QStringLiteral("CNY 53.98M"));
    QCOMPARE(cell("own", TcoModel::kRate), QStringLiteral("CNY 26.75"));
    QCOMPARE(cell("on_demand", TcoModel::kBreakEven), QStringLiteral("64.4 %"));
    QCOMPARE(cell("reserved", TcoModel::kBreakEven), QStringLiteral("39.6 %"));
    QCOMPARE(cell("spot", TcoModel::kBreakEven), QStringLiteral("never at this rate"));
    QCOMPARE(cell("reserved", TcoModel::kTotal), QStringLiteral("CNY 80.73M"));
    // A price not given stays unknown and is listed; without the purchase price there is no curve.
    doc["pricing"].erase("spot");
    doc["tco"].erase("capex_per_node");
    auto unpriced = tco_snapshot(doc, *catalogs(), "");
    QVERIFY(unpriced.has_value());
    QVERIFY(unpriced->own_curve.empty());
    const auto& missing = unpriced->tco.missing;
    QVERIFY(std::find(missing.begin(), missing.end(), "tco.capex_per_node") != missing.end());
    QVERIFY(std::find(missing.begin(), missing.end(), "pricing.spot.usd_per_gpu_hour") != missing.end());
    model.set_snapshot(*unpriced);
    QCOMPARE(cell("own", TcoModel::kTotal), QStringLiteral("unknown"));
    QCOMPARE(cell("spot", TcoModel::kRate), QStringLiteral("unknown"));
    QCOMPARE(cell("on_demand", TcoModel::kBreakEven), QStringLiteral("unknown"));
    // No section: nothing to compute, in the CLI's words.
    doc.erase("tco");
    QVERIFY(!has_tco_section(doc));
    const auto none = tco_snapshot(doc, *catalogs(), "");
    QVERIFY(!none.has_value());
    QCOMPARE(QString::fromStdString(none.error().front().where), QStringLiteral("scenario#/tco"));
  }

  void the_serve_tabs_plan_is_capplan_serves() {
    // The Serve tab runs data::plan_serve_document with the CLI's default curve,
    // so its JSON is `capplan serve --format json`'s for the same document.
    const nlohmann::json doc = data::example_serve_scenario();
    auto snap = ServeRunner::compute(doc, *catalogs(), std::string(), nullptr);
    QVERIFY(snap.has_value());
    auto planned = data::plan_serve_document(doc, *catalogs(), std::string(), {}, nullptr, kServeCurvePoints);
    QVERIFY(planned.has_value());
    QCOMPARE(serve_json(*snap).dump(), data::serve_to_json(planned->result, planned->request).dump());
    QCOMPARE(static_cast<int>(snap->result.curve.size()), kServeCurvePoints + 1);  // plus the plan's max_rate
    // The example's target is end-to-end p95 <= 2 s.
    const SloMetric m = slo_metric(snap->request.job);
    QCOMPARE(m.kind, SloMetric::kE2e);
    QCOMPARE(m.target_s, 2.0);
    QCOMPARE(m.at(snap->result.asked.plan.at_rate, 0.95), snap->result.asked.plan.at_rate.e2e.at(0.95));
    sim::ServeJob j = snap->request.job;
    j.slo.e2e = units::Seconds{};
    j.slo.tpot = units::seconds(0.05);
    QCOMPARE(slo_metric(j).kind, SloMetric::kTpot);
    // A bad field comes back in the CLI's words.
    nlohmann::json bad = doc;
    bad["workload"]["traffic"]["rate_per_s"] = -1;
    auto refused = ServeRunner::compute(bad, *catalogs(), std::string(), nullptr);
    QVERIFY(!refused.has_value());
    QCOMPARE(QString::fromStdString(refused.error().front().where), QStringLiteral("scenario#/workload/traffic/rate_per_s"));
    // The runner delivers the latest request only.
    ServeRunner runner(catalogs());
    QSignalSpy done(&runner, &ServeRunner::finished);
    nlohmann::json slow = doc;
    runner.request(slow, {});
    slow["workload"]["traffic"]["rate_per_s"] = 7;
    const quint64 last = runner.request(slow, {});
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
    const auto got = done.front().front().value<ServeSnapshot>();
    QCOMPARE(got.generation, last);
    QCOMPARE(got.request.job.traffic.rate, 7.0);
  }

  void the_planner_can_be_cancelled() {
    ScenarioDocument doc(catalogs());
    sim::SearchRequest request;
    request.base = doc.last_good()->scenario;
    // A large space (every node count from 1 to 256 on every offering with a known network).
    for (int n = 1; n <= 256; ++n) request.node_counts.push_back(n);
    auto offerings = data::offerings_from_catalog(*catalogs(), data::OfferingFilter{});
    QVERIFY(offerings.has_value());
    request.offerings = offerings->offerings;
    PlanRunner runner;
    QSignalSpy finished(&runner, &PlanRunner::finished);
    runner.start(*doc.last_good(), request);
    runner.cancel();
    QVERIFY(finished.wait(120000));
    const auto snap = finished.at(0).at(0).value<std::shared_ptr<const PlanSnapshot>>();
    QVERIFY(snap->cancelled);
    QVERIFY(!runner.busy());
  }
};

QTEST_GUILESS_MAIN(GuiModelsTest)
#include "gui_models_test.moc"
