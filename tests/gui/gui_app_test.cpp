// SPDX-License-Identifier: Apache-2.0
// The real window, driven offscreen: typing in the editor updates the results, an invalid field
// shows the CLI's message over the last good result, a plan loads into the editor, files round-trip.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QWheelEvent>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QFontDatabase>
#include <QGlyphRun>
#include <QHeaderView>
#include <QRawFont>
#include <QRegularExpression>
#include <QSet>
#include <QTextLayout>
#include <QSignalSpy>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include "charts.hpp"
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QMessageBox>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <set>
#include <string_view>

#include "capplan/data/catalog.hpp"
#include "capplan/data/error_bands.hpp"
#include "capplan/data/fields.hpp"
#include "capplan/sim/search/search.hpp"
#include "compare_view.hpp"
#include "main_window.hpp"
#include "plan_view.hpp"
#include "results_view.hpp"
#include "scenario_editor.hpp"
#include "serve_view.hpp"
#include "tco_view.hpp"
#include "capplan/gui/format.hpp"
#include "gui_test_support.hpp"

using namespace capplan;
using namespace capplan::gui;

namespace {

using capplan::gui::test::catalogs;
using capplan::gui::test::bands;

// Replaces a line edit's text the way a user does (select all, type), so textEdited fires.
void type_into(QLineEdit* edit, const QString& text) {
  edit->setFocus();
  edit->selectAll();
  QTest::keyClick(edit, Qt::Key_Backspace);
  QTest::keyClicks(edit, text);
  edit->clearFocus();
}

// Opens tests/cli/scenarios/`file` in a window that writes no settings.
bool open_scenario(MainWindow& w, const char* file) {
  w.set_ephemeral(true);
  return w.open_file(QStringLiteral(CAPPLAN_SOURCE_DIR "/tests/cli/scenarios/") + QString::fromLatin1(file)).isEmpty();
}

// The series of `chart` whose name starts with `name`; null when none does.
template <class Series>
Series* series_named(QChart* chart, const QString& name) {
  for (QAbstractSeries* s : chart->series()) {
    if (auto* typed = qobject_cast<Series*>(s); typed != nullptr && typed->name().startsWith(name)) return typed;
  }
  return nullptr;
}

}  // namespace

class GuiAppTest : public QObject {
  Q_OBJECT

 private slots:
  void typing_in_the_editor_updates_the_results_and_an_invalid_value_keeps_the_last_good_one() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.show();
    QSignalSpy done(w.runner(), &EstimateRunner::finished);
    QVERIFY(done.wait(60000) || w.results()->snapshot().has_value());
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    QCOMPARE(w.results()->snapshot()->scenario.scenario.cluster.gpus, 512);

    auto* nodes = w.findChild<QLineEdit*>(QStringLiteral("/cluster/nodes"));
    QVERIFY(nodes != nullptr);
    type_into(nodes, QStringLiteral("32"));
    QTRY_COMPARE_WITH_TIMEOUT(w.results()->snapshot()->scenario.scenario.cluster.gpus, 256, 60000);

    // "0" nodes: the CLI's message beside the field and over the results, which stay at 32 nodes.
    type_into(nodes, QStringLiteral("0"));
    QVERIFY(!w.document()->valid());
    bool shown = false;
    for (auto* label : w.findChildren<QLabel*>()) {
      shown = shown || (label->isVisible() &&
                        label->text().contains(QStringLiteral("scenario#/cluster/nodes: must be a positive integer; got 0")));
    }
    QVERIFY(shown);
    QTest::qWait(200);
    QCOMPARE(w.results()->snapshot()->scenario.scenario.cluster.gpus, 256);
  }

  void price_override_and_per_field_strategy_edits_reach_the_results() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    const double catalog_cost = w.results()->snapshot()->estimate.totals.cost->base();
    // Price: tick Override (starts from the catalog price), then type a lower one.
    QCheckBox* override_box = nullptr;
    for (auto* b : w.findChildren<QCheckBox*>()) {
      if (b->text() == QStringLiteral("Override")) override_box = b;
    }
    QVERIFY(override_box != nullptr);
    override_box->click();
    QVERIFY(w.document()->has("/pricing/usd_per_gpu_hour"));
    auto* price = w.findChild<QLineEdit*>(QStringLiteral("/pricing/usd_per_gpu_hour"));
    QVERIFY(price != nullptr);
    type_into(price, QStringLiteral("3.44"));
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot()->estimate.totals.cost->base() < 0.6 * catalog_cost, 60000);
    QCOMPARE(w.results()->snapshot()->scenario.scenario.cluster.price_source, std::string("scenario pricing"));

    // Strategy: untick "auto" for the whole strategy, then fix tp to what capplan chose.
    QCheckBox* all_auto = nullptr;
    for (auto* b : w.findChildren<QCheckBox*>()) {
      if (b->text().startsWith(QStringLiteral("Let capplan choose"))) all_auto = b;
    }
    QVERIFY(all_auto != nullptr && all_auto->isChecked());
    const int chosen_tp = w.results()->snapshot()->estimate.layout.strategy.tp;
    all_auto->click();
    QVERIFY(w.document()->document()["strategy"].is_object());
    auto* tp = w.findChild<QLineEdit*>(QStringLiteral("/strategy/tp"));
    QVERIFY(tp != nullptr);
    QTRY_VERIFY_WITH_TIMEOUT(!tp->placeholderText().isEmpty(), 60000);
    // Untick tp's "auto": it starts from what capplan chose, so the result does not move.
    auto* tp_auto = w.findChild<QCheckBox*>(QStringLiteral("/strategy/tp#auto"));
    QVERIFY(tp_auto != nullptr && tp_auto->isChecked() && !tp->isEnabled());
    tp_auto->click();
    QCOMPARE(w.document()->text("/strategy/tp"), QString::number(chosen_tp));
    QVERIFY(tp->isEnabled());
    QVERIFY(w.document()->valid());
    QTRY_VERIFY_WITH_TIMEOUT(!w.results()->snapshot()->estimate.layout.chosen_by_capplan ||
                                 w.results()->snapshot()->scenario.scenario.strategy.tp.has_value(), 60000);
    QCOMPARE(w.results()->snapshot()->estimate.layout.strategy.tp, chosen_tp);
  }

  // The wheel over a field that was not clicked scrolls the form; it changes the field only once
  // the field has focus.
  void the_mouse_wheel_changes_only_a_focused_field() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.show();
    auto* combo = w.findChild<QComboBox*>(QStringLiteral("/training/loss_kernel"));
    QVERIFY(combo != nullptr);
    const int before = combo->currentIndex();
    const QPointF at(combo->width() / 2.0, combo->height() / 2.0);
    const auto wheel = [&] {
      QWheelEvent e(at, combo->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
      QApplication::sendEvent(combo, &e);
    };
    combo->clearFocus();
    wheel();
    QCOMPARE(combo->currentIndex(), before);
    w.activateWindow();
    combo->setFocus();
    QTRY_VERIFY(combo->hasFocus());
    wheel();
    QVERIFY(combo->currentIndex() != before);
  }

  void the_workload_switches_to_fine_tuning_and_back() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    auto* kind = w.findChild<QComboBox*>(QStringLiteral("/workload/kind"));
    auto* method = w.findChild<QComboBox*>(QStringLiteral("/workload/method"));
    auto* targets = w.findChild<QComboBox*>(QStringLiteral("/workload/lora/targets"));
    QVERIFY(kind != nullptr && method != nullptr && targets != nullptr);
    QVERIFY(!method->isEnabled());  // pre-training: no method
    const double pretrain_tokens = w.results()->snapshot()->scenario.scenario.training.tokens;
    kind->setCurrentIndex(kind->findData(QStringLiteral("finetune")));
    emit kind->activated(kind->currentIndex());
    // The pre-training tokens become one epoch of the dataset; LoRA by default.
    QVERIFY(!w.document()->has("/training/tokens"));
    QCOMPARE(w.document()->text("/workload/method"), QStringLiteral("lora"));
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot()->scenario.scenario.workload.kind == sim::WorkloadKind::finetune,
                             60000);
    QCOMPARE(w.results()->snapshot()->scenario.scenario.training.tokens, pretrain_tokens);
    QVERIFY(method->isEnabled() && targets->isEnabled());
    targets->setCurrentIndex(targets->findData(QStringLiteral("q,v")));
    emit targets->activated(targets->currentIndex());
    QTRY_COMPARE_WITH_TIMEOUT(w.results()->snapshot()->scenario.scenario.training.finetune.lora_targets,
                              static_cast<unsigned>(sim::lora_q | sim::lora_v), 60000);
    // Only the adapters are trained: no optimizer state to speak of.
    QVERIFY(w.results()->snapshot()->estimate.memory.optimizer.base() <
            0.01 * w.results()->snapshot()->estimate.memory.weights.base());
    method->setCurrentIndex(method->findData(QStringLiteral("full")));
    emit method->activated(method->currentIndex());
    QVERIFY(!w.document()->has("/workload/lora"));
    QVERIFY(!targets->isEnabled());
    kind->setCurrentIndex(kind->findData(QStringLiteral("pretrain")));
    emit kind->activated(kind->currentIndex());
    QVERIFY(!w.document()->has("/workload"));
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot()->scenario.scenario.workload.kind == sim::WorkloadKind::pretrain,
                             60000);
    QCOMPARE(w.results()->snapshot()->scenario.scenario.training.tokens, pretrain_tokens);
  }

  void training_options_set_and_clear_their_scenario_keys() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    auto* grads = w.findChild<QComboBox*>(QStringLiteral("/training/grad_reduce_in_fp32"));
    QVERIFY(grads != nullptr);
    QCOMPARE(grads->currentIndex(), 0);  // framework default: the key is absent
    QVERIFY(!w.document()->has("/training/grad_reduce_in_fp32"));
    QVERIFY(w.results()->snapshot()->scenario.scenario.training.fp32_gradients());  // bf16: fp32
    grads->setCurrentIndex(grads->findData(QStringLiteral("false")));
    emit grads->activated(grads->currentIndex());
    QVERIFY(w.document()->document()["training"]["grad_reduce_in_fp32"] == nlohmann::json(false));
    QTRY_VERIFY_WITH_TIMEOUT(!w.results()->snapshot()->scenario.scenario.training.fp32_gradients(), 60000);
    grads->setCurrentIndex(0);
    emit grads->activated(0);
    QVERIFY(!w.document()->has("/training/grad_reduce_in_fp32"));
    // FP8 scaling only applies to fp8 precision.
    auto* fp8 = w.findChild<QComboBox*>(QStringLiteral("/training/fp8_recipe"));
    QVERIFY(fp8 != nullptr);
    QVERIFY(!fp8->isEnabled());
    auto* fp8_params = w.findChild<QComboBox*>(QStringLiteral("/training/fp8_params"));
    QVERIFY(fp8_params != nullptr && !fp8_params->isEnabled());
    auto* loss = w.findChild<QComboBox*>(QStringLiteral("/training/loss_kernel"));
    QVERIFY(loss != nullptr);
    loss->setCurrentIndex(loss->findData(QStringLiteral("te")));
    emit loss->activated(loss->currentIndex());
    QCOMPARE(w.document()->text("/training/loss_kernel"), QStringLiteral("te"));
    // The attention kernel's generation: the key written, and the estimate takes it.
    auto* attention = w.findChild<QComboBox*>(QStringLiteral("/training/attention_kernel"));
    QVERIFY(attention != nullptr);
    attention->setCurrentIndex(attention->findData(QStringLiteral("flash1")));
    emit attention->activated(attention->currentIndex());
    QCOMPARE(w.document()->text("/training/attention_kernel"), QStringLiteral("flash1"));
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot()->scenario.scenario.training.attention_kernel ==
                                 capplan::sim::AttentionKernel::flash1,
                             60000);
    // Pure 16-bit training: the key written, the estimate's optimizer state 4 bytes per parameter.
    auto* master = w.findChild<QComboBox*>(QStringLiteral("/training/master_weights"));
    QVERIFY(master != nullptr);
    master->setCurrentIndex(master->findData(QStringLiteral("false")));
    emit master->activated(master->currentIndex());
    QVERIFY(w.document()->document()["training"]["master_weights"] == nlohmann::json(false));
    QTRY_VERIFY_WITH_TIMEOUT(!w.results()->snapshot()->scenario.scenario.training.master_weights, 60000);
  }

  void a_plan_from_the_planner_loads_into_the_editor() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.show();
    w.plan()->set_filters(QStringLiteral("aws-*"), QStringLiteral("h100-sxm-80gb"), QStringLiteral("16,32"));
    QSignalSpy finished(w.plan(), &PlanView::finished);
    w.plan()->start();
    QVERIFY(finished.wait(120000));
    QVERIFY(w.plan()->plans().rowCount() >= 1);
    const sim::Plan* best = w.plan()->plans().plan(0);
    QSignalSpy chosen(w.plan(), &PlanView::plan_chosen);
    w.plan()->load_plan(0);
    QCOMPARE(chosen.count(), 1);
    QVERIFY2(w.document()->valid(), qPrintable(w.document()->all_messages().join(QLatin1Char(10))));
    QCOMPARE(w.document()->last_good()->scenario.cluster.gpus, best->gpus);
    QCOMPARE(*w.document()->last_good()->scenario.strategy.tp, best->estimate.layout.strategy.tp);
    QTRY_COMPARE_WITH_TIMEOUT(w.results()->snapshot()->estimate.layout.strategy, best->estimate.layout.strategy, 60000);
    // The editor's estimate of the plan is the planner's (same library, same layout).
    QCOMPARE(w.results()->snapshot()->estimate.step.time.base(), best->estimate.step.time.base());
  }

  void the_plan_tab_prices_the_scenarios_own_instance_with_its_terms() {
    // The Plan tab's GPU field is pre-filled from the scenario; the planner must still keep the
    // file's pricing (not "unknown price") and agree with the spot cost "Why #1" quotes.
    MainWindow w(catalogs(), nullptr);
    QVERIFY(open_scenario(w, "tencent_h800_cny_spot.json"));
    w.show();
    PlanView* plan = w.plan();
    // The fields are the scenario's.
    QCOMPARE(plan->purchase_field()->currentData().toString(), QStringLiteral("spot"));
    QCOMPARE(plan->price_field()->text(), QStringLiteral("25"));
    QCOMPARE(plan->spot_price_field()->text(), QStringLiteral("10"));
    QCOMPARE(plan->preemptions_field()->text(), QStringLiteral("0.002"));
    QVERIFY2(plan->pricing_note()->text().contains(QStringLiteral("CNY")), qPrintable(plan->pricing_note()->text()));
    QVERIFY(plan->pricing_note()->text().contains(QStringLiteral("tencent-hccpnv5")));
    plan->set_filters(QString(), QStringLiteral("h800-sxm-80gb"), QStringLiteral("16"));
    QSignalSpy finished(plan, &PlanView::finished);
    plan->start();
    QVERIFY(finished.wait(120000));
    const PlansModel& plans = plan->plans();
    QVERIFY(plans.rowCount() >= 1);
    const sim::Plan* best = plans.plan(0);
    QCOMPARE(best->instance_id, std::string("tencent-hccpnv5"));
    QCOMPARE(best->purchase, sim::PurchaseModel::spot);
    QVERIFY(best->price_known);
    const QString cost = plans.index(0, PlansModel::kCost).data().toString();
    QVERIFY2(cost.startsWith(QStringLiteral("CNY")), qPrintable(cost));
    QCOMPARE(plans.index(0, PlansModel::kCost).data(kSortRole).toDouble(), sim::plan_cost(best->estimate)->base());
    QCOMPARE(plans.index(0, PlansModel::kPurchase).data().toString(), QStringLiteral("spot (CNY)"));
    const QString why = plan->explanation()->text();
    QVERIFY2(why.contains(QStringLiteral("Purchase: spot in CNY (tencent-hccpnv5)")), qPrintable(why));
    QVERIFY2(why.contains(QStringLiteral("Why #1")) && why.contains(QStringLiteral(", CNY")), qPrintable(why));
    // The spot price of the file, not its on-demand one: a spot price of 10 CNY per GPU-hour.
    const double gpu_hours = best->estimate.totals.gpu_hours;
    QVERIFY(sim::plan_cost(best->estimate)->base() < 25 * 0.14 * gpu_hours);

    // Typing in the Plan tab's fields edits the scenario (the editor shows the same pricing).
    type_into(plan->spot_price_field(), QStringLiteral("12"));
    QCOMPARE(w.document()->text("/pricing/spot/usd_per_gpu_hour"), QStringLiteral("12"));
    plan->purchase_field()->setCurrentIndex(plan->purchase_field()->findData(QStringLiteral("on_demand")));
    emit plan->purchase_field()->activated(plan->purchase_field()->currentIndex());
    QCOMPARE(w.document()->text("/pricing/purchase"), QStringLiteral("on_demand"));
    QVERIFY(!plan->spot_price_field()->isEnabled());
  }

  void double_clicking_a_plan_keeps_the_scenarios_pricing_and_asks_before_replacing_it() {
    // Double-clicking a plan keeps the pricing and spot terms in the editor.
    MainWindow w(catalogs(), nullptr);
    QVERIFY(open_scenario(w, "tencent_h800_spot.json"));
    w.document()->set_text("/cluster/gpu_speed_spread", QStringLiteral("0.02"));  // typed by the user
    w.show();
    const nlohmann::json pricing = w.document()->document().at("pricing");
    const nlohmann::json training = w.document()->document().at("training");
    PlanView* plan = w.plan();
    int asked = 0;
    QMessageBox::StandardButton answer = QMessageBox::Cancel;
    plan->set_ask([&](const QString&, const QString& text) {
      ++asked;
      [&] { QVERIFY2(text.contains(QStringLiteral("tencent-hccpnv5")), qPrintable(text)); }();
      return answer;
    });
    plan->set_filters(QString(), QStringLiteral("h800-sxm-80gb,h100-sxm-80gb"), QStringLiteral("16"));
    QSignalSpy finished(plan, &PlanView::finished);
    plan->start();
    QVERIFY(finished.wait(120000));
    const PlansModel& plans = plan->plans();
    int own = -1, other = -1;
    for (int r = 0; r < plans.rowCount(); ++r) {
      const bool is_own = plans.plan(r)->instance_id == "tencent-hccpnv5";
      if (is_own && own < 0) own = r;
      if (!is_own && other < 0 && !plans.plan(r)->instance_id.empty()) other = r;
    }
    QVERIFY(own >= 0 && other >= 0);

    // The scenario's own instance, by a real double-click on its row: nothing asked, pricing kept.
    w.show_tab(MainWindow::kPlanTab);
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTableView* table = plan->table();
    const auto* proxy = qobject_cast<const QSortFilterProxyModel*>(table->model());
    QVERIFY(proxy != nullptr);
    const QModelIndex cell = proxy->mapFromSource(plans.index(own, PlansModel::kOffering));
    table->scrollTo(cell);
    QSignalSpy chosen(plan, &PlanView::plan_chosen);
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(cell).center());
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(cell).center());
    QTRY_COMPARE(chosen.count(), 1);
    QCOMPARE(asked, 0);
    QVERIFY(w.document()->document().at("pricing") == pricing);
    QVERIFY(w.document()->document().at("training") == training);
    QCOMPARE(w.document()->text("/cluster/gpu_speed_spread"), QStringLiteral("0.02"));
    QCOMPARE(w.document()->text("/cluster/instance"), QStringLiteral("tencent-hccpnv5"));
    QCOMPARE(w.document()->last_good()->scenario.pricing.model, sim::PurchaseModel::spot);

    // Another offering: asked; Cancel changes nothing, Yes keeps the pricing, No drops it.
    const std::string other_id = plans.plan(other)->instance_id;
    const nlohmann::json before = w.document()->document();
    answer = QMessageBox::Cancel;
    plan->load_plan(other);
    QCOMPARE(asked, 1);
    QVERIFY(w.document()->document() == before);
    answer = QMessageBox::Yes;
    plan->load_plan(other);
    QCOMPARE(asked, 2);
    QCOMPARE(w.document()->text("/cluster/instance"), QString::fromStdString(other_id));
    QVERIFY(w.document()->document().at("pricing") == pricing);
    answer = QMessageBox::No;
    plan->load_plan(other);
    QCOMPARE(asked, 3);
    QVERIFY(!w.document()->has("/pricing"));
    QCOMPARE(w.document()->text("/cluster/gpu_speed_spread"), QStringLiteral("0.02"));
    QVERIFY(w.document()->document().at("training") == training);
  }

  void the_cost_chart_ticks_are_distinct_and_name_the_currency() {
    // A small job's cost axis has distinct ticks (not "0, 0, 1, 1, 2, 2").
    MainWindow w(catalogs(), nullptr);
    QVERIFY(open_scenario(w, "tencent_h800_cny_spot.json"));
    w.document()->set_text("/training/tokens", QStringLiteral("2B"));
    w.show();
    w.plan()->set_filters(QString(), QStringLiteral("h800-sxm-80gb"), QStringLiteral("8,16,32"));
    QSignalSpy finished(w.plan(), &PlanView::finished);
    w.plan()->start();
    QVERIFY(finished.wait(120000));
    QVERIFY(w.plan()->plans().rowCount() >= 1);
    QChart* chart = w.plan()->chart_view()->chart();
    int axes = 0;
    for (QAbstractAxis* a : chart->axes()) {
      auto* axis = qobject_cast<QValueAxis*>(a);
      QVERIFY(axis != nullptr);
      ++axes;
      QStringList labels;
      const double step = (axis->max() - axis->min()) / (axis->tickCount() - 1);
      for (int i = 0; i < axis->tickCount(); ++i) {
        labels << QString::asprintf(axis->labelFormat().toLatin1().constData(), axis->min() + i * step);
      }
      QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());  // no tick label repeats
      if (axis->orientation() == Qt::Vertical) {
        QVERIFY2(axis->titleText().contains(QStringLiteral("CNY")), qPrintable(axis->titleText()));
      }
    }
    QCOMPARE(axes, 2);
    QCOMPARE(tick_decimals(0.5), 1);
    QCOMPARE(tick_decimals(0.25), 2);
    QCOMPARE(tick_decimals(20), 0);
  }

  void a_missed_deadline_shows_the_closest_plan_and_the_front_as_the_cli_does() {
    // When no plan meets the deadline the Plan tab is not empty.
    MainWindow w(catalogs(), nullptr);
    QVERIFY(open_scenario(w, "tencent_h800_spot.json"));
    w.show();
    PlanView* plan = w.plan();
    plan->set_filters(QString(), QStringLiteral("h800-sxm-80gb"), QStringLiteral("8,16"));
    type_into(plan->findChild<QLineEdit*>(QStringLiteral("plan:deadline")), QStringLiteral("2"));
    QSignalSpy finished(plan, &PlanView::finished);
    plan->start();
    QVERIFY(finished.wait(120000));
    const PlanSnapshot* snap = plan->plans().snapshot();
    QVERIFY(snap != nullptr && snap->result && snap->result->failure && snap->result->failure->closest);
    const sim::SearchResult& r = *snap->result;
    const PlansModel& plans = plan->plans();
    QCOMPARE(plans.rowCount(), 1 + static_cast<int>(r.pareto.size()));
    QVERIFY(r.pareto.size() >= 1);
    QCOMPARE(plans.index(0, PlansModel::kRank).data().toString(), QStringLiteral("closest"));
    QCOMPARE(plans.plan(0)->nodes, r.failure->closest->nodes);
    QCOMPARE(plans.index(1, PlansModel::kRank).data().toString(), QStringLiteral("front 1"));
    QVERIFY(plan->explanation()->text().contains(QStringLiteral("no plan meets the deadline")));
    // The chart draws them.
    int points = 0;
    for (QAbstractSeries* s : plan->chart_view()->chart()->series()) {
      if (auto* scatter = qobject_cast<QScatterSeries*>(s); scatter != nullptr && !scatter->name().isEmpty()) {
        points += static_cast<int>(scatter->count());
      }
    }
    QCOMPARE(points, plans.rowCount());
    // And the closest loads into the editor.
    QSignalSpy chosen(plan, &PlanView::plan_chosen);
    plan->load_plan(0);
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(w.document()->last_good()->scenario.cluster.nodes(), r.failure->closest->nodes);
  }

  void a_scenario_saved_by_the_window_opens_to_the_same_scenario() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("s.json"));
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.document()->use_gpu("a100-80gb-sxm");
    w.document()->set_text("/cluster/gpus", QStringLiteral("64"));
    QVERIFY(w.save_file(path).isEmpty());
    QVERIFY(!w.document()->modified());
    MainWindow w2(catalogs(), nullptr);
    w2.set_ephemeral(true);
    QVERIFY(w2.open_file(path).isEmpty());
    QVERIFY(w2.document()->document() == w.document()->document());
    QCOMPARE(w2.document()->file_path(), path);
    // A file that is not JSON: the CLI's wording, and the window keeps its scenario.
    QFile bad(dir.filePath(QStringLiteral("bad.json")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("{ \"model\": ");
    bad.close();
    const QString err = w2.open_file(bad.fileName());
    QVERIFY2(err.startsWith(QStringLiteral("scenario: invalid JSON")) || err.contains(QStringLiteral("line")), qPrintable(err));
    QVERIFY(w2.document()->valid());
  }

  void loading_a_profile_changes_the_estimate_and_the_label_and_a_bad_one_keeps_the_datasheet_model() {
    MainWindow w(catalogs(), nullptr);
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    const double datasheet_step = w.results()->snapshot()->estimate.step.time.base();
    auto* label = w.findChild<ScenarioEditor*>()->profile_label();
    QVERIFY(label->text().contains(QStringLiteral("datasheet model")));

    // A bad profile: the CLI's message naming the field, and the datasheet model stays.
    const QString dir = QStringLiteral(CAPPLAN_SOURCE_DIR "/tests/fixtures/calibrate/");
    const QString err = w.load_profile(dir + QStringLiteral("bad-peak-profile.json"));
    QVERIFY2(err.contains(QStringLiteral("bad-peak-profile.json#/gemm/0/peak_flops_per_s/value: must be > 0; got -1")),
             qPrintable(err));
    QVERIFY(!w.profile().has_value());
    QVERIFY(label->text().contains(QStringLiteral("Profile refused")));
    QVERIFY(label->text().contains(QStringLiteral("peak_flops_per_s")));
    QVERIFY(w.runner()->profile() == nullptr);

    // The synthetic H100 profile of the CLI tests: the estimate changes, and the labels say so.
    QVERIFY(w.load_profile(dir + QStringLiteral("synthetic-h100-profile.json")).isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot()->estimate.step.time.base() != datasheet_step, 60000);
    const QString name = w.profile()->label();
    QVERIFY(name.startsWith(QStringLiteral("calibrated: synthetic H100")));
    QCOMPARE(w.results()->snapshot()->cost_model_label(), name);
    QVERIFY(w.results()->cost_model_source()->text().contains(name.toHtmlEscaped()));
    QVERIFY(label->text().contains(name.toHtmlEscaped()));
    QVERIFY(label->text().contains(QStringLiteral("measured:")));
    QVERIFY(label->text().contains(QStringLiteral("GEMM bf16")));
    QVERIFY2(label->text().contains(QStringLiteral("not measured; datasheet used")), qPrintable(label->text()));
    QCOMPARE(w.plan()->cost_model_label(), name);

    // Back to the datasheet model.
    w.use_datasheet();
    QTRY_COMPARE_WITH_TIMEOUT(w.results()->snapshot()->estimate.step.time.base(), datasheet_step, 60000);
    QVERIFY(!label->text().contains(QStringLiteral("calibrated")));
  }

  void the_cards_show_the_expected_time_with_failures_and_the_total_cost() {
    MainWindow w(catalogs(), bands());
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    const sim::Estimate& e = w.results()->snapshot()->estimate;
    QVERIFY(e.goodput.modelled && e.goodput.cost.total);
    QCOMPARE(w.results()->time_value()->text(), days_text(units::to_days(e.goodput.wall)));
    QCOMPARE(w.results()->cost_value()->text(), usd_text(e.goodput.cost.total->base()));
    QVERIFY(w.results()->cost_detail()->text().contains(QStringLiteral("sticker ") + usd_text(e.totals.cost->base())));
    // Each card's band is the band of the figure it shows: the expected total
    // cost's, not the sticker's.
    QVERIFY(e.uncertainty.total_cost_usd && e.uncertainty.cost_usd);
    const QString cost_band = usd_text(e.uncertainty.total_cost_usd->low) + QStringLiteral("–") +
                              usd_text(e.uncertainty.total_cost_usd->high);
    QVERIFY2(w.results()->cost_detail()->text().contains(QStringLiteral("band ") + cost_band),
             qPrintable(w.results()->cost_detail()->text()));
    QCOMPARE(w.results()->goodput_model().rowCount(), 10);

    // Spot terms without a spot price: the total is unknown, and the card names the missing input.
    w.document()->set_text("/pricing/purchase", QStringLiteral("spot"));
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->cost_value()->text() == QStringLiteral("unknown"), 60000);
    QVERIFY2(w.results()->cost_detail()->text().contains(QStringLiteral("pricing.spot.usd_per_gpu_hour")),
             qPrintable(w.results()->cost_detail()->text()));
  }

  void a_short_run_shows_its_time_and_band_in_hours_as_the_cli_does() {
    // Under two days the card reads hours, and so does its band (not "17.3 hours" over "0.6–0.8 hours days").
    MainWindow w(catalogs(), bands());
    w.set_ephemeral(true);
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    w.document()->set_text("/training/tokens", QStringLiteral("20B"));
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot()->scenario.scenario.training.tokens == 20e9, 60000);
    const sim::Estimate& e = w.results()->snapshot()->estimate;
    const double days = units::to_days(e.goodput.modelled ? e.goodput.wall : e.totals.time_to_train);
    QVERIFY2(days < 2.0 && days * 24.0 >= 1.0, qPrintable(QString::number(days)));
    QCOMPARE(w.results()->time_value()->text(), QString::number(days * 24.0, 'f', 1) + QStringLiteral(" hours"));
    const QString detail = w.results()->time_detail()->text();
    QVERIFY2(!detail.contains(QStringLiteral("hours days")), qPrintable(detail));
    QVERIFY2(detail.contains(QStringLiteral(" hours (p10–p90)")), qPrintable(detail));
  }

  void the_memory_card_is_amber_when_the_peak_uses_the_reserve() {
    // A plan at 80.0 / 80.0 GiB is not shown green.
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    EstimateSnapshot s = *w.results()->snapshot();
    sim::MemoryBreakdown& m = s.estimate.memory;
    const units::Bytes others = m.total() - m.activations;
    auto show_at = [&](double total_fraction) {
      m.activations = m.capacity * total_fraction - others;
      QVERIFY(m.activations.base() > 0);
      w.results()->show_snapshot(s);
    };
    show_at(0.9999);  // full to the displayed digit: fits, on the reserve
    QVERIFY(m.fits());
    QCOMPARE(w.results()->memory_value()->text(), gib_text(m.capacity.base()) + QStringLiteral(" / ") + gib_text(m.capacity.base()));
    QVERIFY2(w.results()->memory_value()->styleSheet().contains(QStringLiteral("#b26a00")),
             qPrintable(w.results()->memory_value()->styleSheet()));
    QVERIFY(w.results()->memory_detail()->text().startsWith(QStringLiteral("fits, tight")));
    show_at(0.5);  // clearly under
    QVERIFY(w.results()->memory_value()->styleSheet().contains(QStringLiteral("#1a7f37")));
    show_at(1.05);  // over
    QVERIFY(w.results()->memory_value()->styleSheet().contains(QStringLiteral("#c62828")));
    QVERIFY(w.results()->memory_detail()->text().startsWith(QStringLiteral("DOES NOT FIT")));
  }

  void the_headless_plan_and_compare_tabs_use_the_given_scenario() {
    // capplan-gui --tab plan|compare SCENARIO shows SCENARIO's plans, not the built-in example's.
    MainWindow w(catalogs(), nullptr);
    QVERIFY(open_scenario(w, "tencent_h800_spot.json"));
    w.show();
    QSignalSpy finished(w.plan(), &PlanView::finished);
    w.start_plan_example(true);
    QVERIFY(finished.wait(120000));
    QVERIFY(w.plan()->plans().rowCount() >= 1);
    for (int i = 0; i < w.plan()->plans().rowCount(); ++i) {
      QCOMPARE(w.plan()->plans().plan(i)->gpu_id, std::string("h800-sxm-80gb"));  // the scenario's GPU
    }
    const int columns = w.load_compare_example(true);
    QCOMPARE(columns, 4);
    QTRY_VERIFY_WITH_TIMEOUT(!w.compare()->busy() && w.compare()->model().columns().size() == 4, 60000);
    const auto& a = w.compare()->model().columns()[0];
    QVERIFY(a.snapshot.has_value());
    QCOMPARE(a.snapshot->scenario.scenario.cluster.instance_id, std::string("tencent-hccpnv5"));
    QCOMPARE(a.snapshot->scenario.scenario.cluster.nodes(), 16);
    QCOMPARE(a.snapshot->scenario.scenario.pricing.model, sim::PurchaseModel::spot);
    QCOMPARE(a.snapshot->scenario.scenario.model.name, w.document()->last_good()->scenario.model.name);
    for (size_t i = 1; i < 4; ++i) {
      const auto& c = w.compare()->model().columns()[i];
      QVERIFY(c.snapshot.has_value());
      QVERIFY(c.snapshot->scenario.scenario.cluster.instance_id != "tencent-hccpnv5");
      QCOMPARE(c.snapshot->scenario.scenario.cluster.nodes(), 16);  // the scenario's job on another offering
    }
  }

  void compare_shows_a_spot_scenarios_spot_price_purchase_model_and_goodput() {
    // Compare shows a spot scenario's spot price (not its on-demand price) and has purchase and
    // goodput rows.
    MainWindow w(catalogs(), nullptr);
    QVERIFY(open_scenario(w, "tencent_h800_cny_spot.json"));
    w.compare()->clear();
    QVERIFY(w.compare()->add(QStringLiteral("spot"), w.document()->document()));
    QTRY_VERIFY_WITH_TIMEOUT(!w.compare()->busy() && w.compare()->model().columns().size() == 1 &&
                                 w.compare()->model().columns()[0].snapshot.has_value(), 60000);
    const CompareModel& m = w.compare()->model();
    const sim::Estimate& e = m.columns()[0].snapshot->estimate;
    QVERIFY(e.goodput.modelled && e.goodput.cost.total && e.goodput.cost.usd_per_gpu_hour);
    const QString price = m.index(CompareModel::kPricePerGpuHour, 0).data().toString();
    QCOMPARE(price, QStringLiteral("CNY 10.00/GPU-h (spot)"));  // the spot price, not the on-demand 25
    const QString cost = m.index(CompareModel::kCost, 0).data().toString();
    QCOMPARE(cost, money_text(e.goodput.cost.total->base(), m.columns()[0].snapshot->scenario.scenario.pricing.currency) +
                       QStringLiteral(" (spot)"));
    QCOMPARE(m.index(CompareModel::kPurchase, 0).data().toString(), QStringLiteral("spot"));
    QCOMPARE(m.headerData(CompareModel::kPurchase, Qt::Vertical, Qt::DisplayRole).toString(), QStringLiteral("Purchase model"));
    QCOMPARE(m.index(CompareModel::kGoodput, 0).data().toString(), percent_text(e.goodput.fraction));
    QCOMPARE(m.index(CompareModel::kSteadyTime, 0).data().toString(), days_text(units::to_days(e.totals.time_to_train)));
  }

  void chinese_names_render_with_a_cjk_font() {
    // Chinese instance and model names render with a CJK font (not as empty boxes).
    if (QFontDatabase::families(QFontDatabase::SimplifiedChinese).isEmpty()) {
      QSKIP("no CJK font installed (scripts/install_deps.sh installs fonts-wqy-microhei)");
    }
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    const QString name = QStringLiteral("混元 腾讯云 H800");
    w.compare()->clear();
    QVERIFY(w.compare()->add(name, w.document()->document()));
    w.show_tab(MainWindow::kCompareTab);
    w.show();
    auto* table = w.compare()->findChild<QTableView*>();
    QVERIFY(table != nullptr);
    QTRY_VERIFY_WITH_TIMEOUT(table->model()->headerData(0, Qt::Horizontal, Qt::DisplayRole).toString().contains(name), 60000);
    // Lay the header's text out in the header's font: every glyph found (none is glyph 0, the
    // "missing" box), the Chinese ones in a font that has them.
    QTextLayout layout(table->model()->headerData(0, Qt::Horizontal, Qt::DisplayRole).toString(),
                       table->horizontalHeader()->font());
    layout.beginLayout();
    layout.createLine();
    layout.endLayout();
    int cjk_runs = 0;
    for (const QGlyphRun& run : layout.glyphRuns()) {
      for (const quint32 g : run.glyphIndexes()) QVERIFY2(g != 0, qPrintable(run.rawFont().familyName()));
      if (run.rawFont().supportsCharacter(QChar(u'混')) && run.rawFont().supportsCharacter(QChar(u'腾'))) ++cjk_runs;
    }
    QVERIFY(cjk_runs >= 1);
  }

  void the_own_vs_rent_tab_draws_the_own_curve_the_rent_lines_and_the_clis_break_even() {
    // The GUI chart of `capplan tco`.
    MainWindow w(catalogs(), nullptr);
    QVERIFY(open_scenario(w, "tencent_h800_tco.json"));
    w.show();
    w.show_tab(MainWindow::kTcoTab);
    QTRY_VERIFY(w.tco()->snapshot().has_value());
    QVERIFY(w.tco()->message()->isHidden());
    QChart* chart = w.tco()->chart_view()->chart();
    // The own fleet: sim::tco at 5 %, 6 %, ..., 100 %, in CNY, through CNY 26.75 at 60 %.
    auto* own = series_named<QLineSeries>(chart, QStringLiteral("own"));
    QVERIFY(own != nullptr);
    QCOMPARE(own->count(), 96);
    QCOMPARE(own->at(0).x(), 5.0);
    QCOMPARE(own->at(95).x(), 100.0);
    QVERIFY(std::abs(own->at(55).y() - 26.75) < 0.005);
    // A horizontal line per rent rate, in the scenario's currency.
    const std::pair<const char*, double> rates[] = {{"on demand CNY 25.00", 25}, {"reserved CNY 40.00", 40},
                                                    {"spot CNY 10.00", 10}};
    for (const auto& [name, rate] : rates) {
      auto* line = series_named<QLineSeries>(chart, QString::fromLatin1(name));
      QVERIFY2(line != nullptr, name);
      QCOMPARE(line->count(), 2);
      QVERIFY(std::abs(line->at(0).y() - rate) < 1e-9 && std::abs(line->at(1).y() - rate) < 1e-9);
    }
    // The break-even points carry the CLI's figures (`capplan tco` on this file: owning is cheaper
    // above 64.4% utilisation against on demand, 39.6% against reserved, never against spot).
    auto* on_demand = series_named<QScatterSeries>(chart, QStringLiteral("64.4 % vs on demand"));
    auto* reserved = series_named<QScatterSeries>(chart, QStringLiteral("39.6 % vs reserved"));
    QVERIFY(on_demand != nullptr && reserved != nullptr);
    QVERIFY(on_demand->pointLabelsVisible() && reserved->pointLabelsVisible());
    QCOMPARE(on_demand->pointLabelsFormat(), QStringLiteral("64.4 % vs on demand"));
    QVERIFY(std::abs(on_demand->at(0).x() - 64.4) < 0.05 && on_demand->at(0).y() == 25.0);
    QVERIFY(std::abs(reserved->at(0).x() - 39.6) < 0.05 && reserved->at(0).y() == 40.0);
    QVERIFY(series_named<QScatterSeries>(chart, QStringLiteral(" vs spot")) == nullptr);
    for (QAbstractSeries* s : chart->series()) QVERIFY(!s->name().contains(QStringLiteral("vs spot")));
    // The scenario's utilisation, and the y axis in its currency.
    auto* at = series_named<QLineSeries>(chart, QStringLiteral("scenario 60.0 %: own CNY 26.75"));
    QVERIFY(at != nullptr);
    QCOMPARE(at->at(0).x(), 60.0);
    QCOMPARE(at->at(1).x(), 60.0);
    bool currency_axis = false;
    for (QAbstractAxis* a : chart->axes(Qt::Vertical)) currency_axis |= a->titleText().contains(QStringLiteral("CNY"));
    QVERIFY(currency_axis);
    // Beside it: own total and per useful GPU-hour, each rent option's total and break-even.
    const TcoModel& m = w.tco()->model();
    QCOMPARE(m.index(m.row_of("own"), TcoModel::kTotal).data().toString(), QStringLiteral("CNY 53.98M"));
    QCOMPARE(m.index(m.row_of("own"), TcoModel::kRate).data().toString(), QStringLiteral("CNY 26.75"));
    QCOMPARE(m.index(m.row_of("on_demand"), TcoModel::kTotal).data().toString(), QStringLiteral("CNY 50.46M"));
    QCOMPARE(m.index(m.row_of("on_demand"), TcoModel::kBreakEven).data().toString(), QStringLiteral("64.4 %"));
    QCOMPARE(m.index(m.row_of("reserved"), TcoModel::kBreakEven).data().toString(), QStringLiteral("39.6 %"));
    QVERIFY(w.tco()->missing()->text().contains(QStringLiteral("none")));

    // A rate taken away: its line goes, and the tab lists it as missing (after the edit, by itself).
    w.document()->erase("/pricing/spot");
    QTRY_VERIFY(w.tco()->missing()->text().contains(QStringLiteral("pricing.spot.usd_per_gpu_hour")));
    chart = w.tco()->chart_view()->chart();
    QVERIFY(series_named<QLineSeries>(chart, QStringLiteral("spot")) == nullptr);
    QVERIFY(series_named<QLineSeries>(chart, QStringLiteral("on demand CNY 25.00")) != nullptr);
    QCOMPARE(m.index(m.row_of("spot"), TcoModel::kRate).data().toString(), QStringLiteral("unknown"));
  }

  void the_own_vs_rent_tab_asks_for_a_tco_section_and_reads_the_price_sheet() {
    MainWindow w(catalogs(), nullptr);
    QVERIFY(open_scenario(w, "tencent_h800_spot.json"));  // no tco section
    w.show();
    w.show_tab(MainWindow::kTcoTab);
    QTRY_VERIFY(w.tco()->message()->isVisible());
    QVERIFY(!w.tco()->snapshot().has_value());
    QVERIFY2(w.tco()->message()->text().contains(QStringLiteral("no <code>tco</code> section")),
             qPrintable(w.tco()->message()->text()));
    QVERIFY(w.tco()->message()->text().contains(QStringLiteral("Add one")));
    QCOMPARE(w.tco()->model().rowCount(), 0);
    // The example priced from a sheet (pricing.sheet, relative to the scenario file), opened while
    // the tab is shown: the sheet's reserved rate (a monthly subscription), as `capplan tco` reads it.
    QVERIFY(w.open_file(QStringLiteral(CAPPLAN_SOURCE_DIR "/examples/tencent-h800-100b/scenario.json")).isEmpty());
    QTRY_VERIFY(w.tco()->snapshot().has_value());
    QVERIFY(w.tco()->message()->isHidden());
    QVERIFY(w.tco()->notes()->text().contains(QStringLiteral("prices.json")));
    const TcoModel& m = w.tco()->model();
    QCOMPARE(m.index(m.row_of("on_demand"), TcoModel::kBreakEven).data().toString(), QStringLiteral("57.4 %"));
    QCOMPARE(m.index(m.row_of("reserved"), TcoModel::kRate).data().toString(), QStringLiteral("CNY 16.78"));
    QCOMPARE(m.index(m.row_of("reserved"), TcoModel::kBreakEven).data().toString(), QStringLiteral("87.4 %"));
    QVERIFY(series_named<QScatterSeries>(w.tco()->chart_view()->chart(), QStringLiteral("87.4 % vs reserved")));
    // An invalid section: the CLI's message, naming the field.
    w.document()->set_value("/tco/years", 0);
    QTRY_VERIFY(w.tco()->message()->isVisible());
    QVERIFY2(w.tco()->message()->text().contains(QStringLiteral("scenario#/tco/years")),
             qPrintable(w.tco()->message()->text()));
  }

  void the_serve_tab_plans_edits_and_adds_the_training() {
    // The Serve tab over the built-in serving example.
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.show();
    w.show_tab(MainWindow::kServeTab);
    ServeView* v = w.serve();
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot().has_value() && !v->busy(), 60000);
    QVERIFY(v->summary()->text().contains(QStringLiteral("replica")));
    // The curve: the asked layout's p95 end-to-end latency at rising rates, the 2 s target, the max rate.
    QChart* curve = v->curve_view()->chart();
    auto* p95 = series_named<QLineSeries>(curve, QStringLiteral("p95"));
    QVERIFY(p95 != nullptr);
    QVERIFY(p95->count() >= 5);
    for (int i = 1; i < p95->count(); ++i) QVERIFY(p95->at(i).x() > p95->at(i - 1).x());
    auto* target = series_named<QLineSeries>(curve, QStringLiteral("target 2.00 s"));
    QVERIFY(target != nullptr);
    QCOMPARE(target->at(0).y(), 2.0);
    QVERIFY(series_named<QLineSeries>(curve, QStringLiteral("max ")) != nullptr);
    // Every feasible layout is a bar; the Pareto front is a series of its own.
    int feasible = 0;
    for (const auto& o : v->snapshot()->result.options) feasible += o.plan.feasible ? 1 : 0;
    QVERIFY(feasible >= 2);
    auto* bars = qobject_cast<QAbstractBarSeries*>(v->layouts_view()->chart()->series().front());
    QVERIFY(bars != nullptr);
    QCOMPARE(bars->barSets().front()->count(), feasible);
    auto* front = series_named<QScatterSeries>(v->pareto_view()->chart(), QStringLiteral("Pareto front"));
    QVERIFY(front != nullptr);
    QCOMPARE(front->count(), static_cast<int>(v->snapshot()->result.pareto.size()));

    // Editing the rate re-plans: twice the rate, about twice the replicas (5%: each replica's rate is
    // the closed form's bound as the simulation confirmed it, a few percent apart at the two rates).
    const int replicas = v->snapshot()->result.asked.plan.replicas;
    v->rate_box()->setValue(100);
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot() && v->snapshot()->request.job.traffic.rate == 100.0 && !v->busy(), 60000);
    QCOMPARE(v->document()["workload"]["traffic"]["rate_per_s"].get<double>(), 100.0);
    QVERIFY(std::abs(v->snapshot()->result.asked.plan.replicas - 2.0 * replicas) <= 0.05 * 2.0 * replicas);
    // A format the GPU cannot run: compare mode plans the formats it can run and shows the asked
    // one as not feasible, saying why (as the CLI does).
    v->weights_box()->setCurrentIndex(v->weights_box()->findData(QStringLiteral("fp4")));
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot() && v->snapshot()->request.job.weights == sim::WeightFormat::fp4 &&
                                 !v->busy(),
                             60000);
    QVERIFY(!v->snapshot()->result.asked.plan.feasible);
    QVERIFY(v->summary()->text().contains(QStringLiteral("fp4")));
    v->weights_box()->setCurrentIndex(v->weights_box()->findData(QStringLiteral("fp8")));
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot().has_value() && !v->busy(), 60000);

    // Train, then serve: the Estimate tab's training plus three months at $2 per GPU-hour.
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    v->price_box()->setValue(2.0);
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot() && v->snapshot()->result.asked.plan.usd_per_month && !v->busy(), 60000);
    v->set_train_then_serve(true, 3);
    const auto& life = v->snapshot()->result.lifecycle;
    QVERIFY(life.has_value());
    QCOMPARE(life->months, 3);
    QCOMPARE(static_cast<int>(life->cumulative_usd.size()), 4);
    // The built-in training example is priced (the catalog's on-demand rate of its instance).
    QVERIFY(life->training_usd.has_value() && life->total_usd.has_value());
    QVERIFY(std::abs(*life->total_usd - (*life->training_usd + 3 * *life->serving_usd_per_month)) <=
            1e-9 * *life->total_usd);
    QVERIFY(v->lifecycle_view()->chart()->title().contains(QStringLiteral("after 3 months")));
    // Unticked: no lifecycle, and the chart says how to get one.
    v->set_train_then_serve(false, 3);
    QVERIFY(!v->snapshot()->result.lifecycle.has_value());
    QVERIFY(v->lifecycle_view()->chart()->title().contains(QStringLiteral("tick")));
    v->set_train_then_serve(true, 3);
    QVERIFY(v->summary()->text().contains(QStringLiteral("Train, then serve")));

    // Exports: the plan as JSON (with the lifecycle), the four charts.
    QTemporaryDir dir;
    const QString json_path = dir.filePath(QStringLiteral("serve.json"));
    QCOMPARE(v->export_json(json_path), QString());
    QFile f(json_path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto exported = nlohmann::json::parse(f.readAll().toStdString());
    QVERIFY(exported.contains("train_then_serve"));
    QVERIFY(exported.contains("latency_curve"));
    QCOMPARE(v->export_charts(dir.filePath(QStringLiteral("serve.png"))), QString());
    for (const char* name : {"serve-curve.png", "serve-layouts.png", "serve-pareto.png", "serve-lifecycle.png"}) {
      QVERIFY2(QFileInfo(dir.filePath(QString::fromLatin1(name))).size() > 2000, name);
    }
  }

  void the_estimate_tab_reads_the_scenarios_price_sheet() {
    // As `capplan estimate FILE` does: pricing.sheet (relative to the file) prices the instance,
    // here CNY 200 per node-hour of tencent-hccpnv5 (CNY 25 per GPU-hour) from the example sheet.
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    QCOMPARE(w.open_file(QStringLiteral(CAPPLAN_SOURCE_DIR "/examples/serve-llama8b/finetune.json")), QString());
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    const auto& snap = *w.results()->snapshot();
    QVERIFY(snap.scenario.scenario.cluster.price_per_gpu.has_value());
    QVERIFY(std::abs(snap.scenario.scenario.cluster.price_per_gpu->base() * 3600 - 25 * 0.14) < 1e-9);
    QCOMPARE(snap.scenario.scenario.pricing.currency.code, std::string("CNY"));
    QVERIFY(sim::plan_cost(snap.estimate).has_value());
  }

  void the_serve_tab_plans_on_other_offerings() {
    // capplan serve --instances in the tab: every matching offering x TP x format, the front
    // confirmed by simulation, each labelled with its instance in the charts.
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    ServeView* v = w.serve();
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot().has_value() && !v->busy(), 60000);
    v->offerings_box()->setText(QStringLiteral("tencent-hccpnv5, runpod-8x-h200"));
    emit v->offerings_box()->editingFinished();
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot() && !v->snapshot()->request.offerings.empty() && !v->busy(), 60000);
    QCOMPARE(static_cast<int>(v->snapshot()->request.offerings.size()), 2);
    bool h200 = false;
    for (const auto& o : v->snapshot()->result.options) h200 |= o.instance_id == "runpod-8x-h200";
    QVERIFY(h200);
    for (std::size_t i : v->snapshot()->result.pareto) QVERIFY(v->snapshot()->result.options[i].confirmed);
    auto* bars = qobject_cast<QAbstractBarSeries*>(v->layouts_view()->chart()->series().front());
    QVERIFY(bars != nullptr);
    QVERIFY(bars->barSets().front()->count() <= 24 + static_cast<int>(v->snapshot()->result.pareto.size()));
    // Other engines too: options of each engine, labelled with it.
    v->engines_box()->setText(QStringLiteral("sglang"));
    emit v->engines_box()->editingFinished();
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot() && !v->snapshot()->request.engines.empty() && !v->busy(), 60000);
    bool sglang = false;
    for (const auto& o : v->snapshot()->result.options) sglang |= o.job.engine.id == "sglang";
    QVERIFY(sglang);
    v->engines_box()->setText(QString());
    // A glob that matches nothing: the CLI's message naming --instances.
    v->offerings_box()->setText(QStringLiteral("nothing-*"));
    emit v->offerings_box()->editingFinished();
    QTRY_VERIFY_WITH_TIMEOUT(!v->snapshot().has_value() && !v->busy(), 60000);
    QVERIFY(v->summary()->text().contains(QStringLiteral("--instances")));
  }

  void the_serve_tab_opens_a_serve_scenario_file() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    ServeView* v = w.serve();
    QCOMPARE(v->open_file(QStringLiteral(CAPPLAN_SOURCE_DIR "/tests/cli/scenarios/serve_llama8b.json")), QString());
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot().has_value() && !v->busy(), 60000);
    // The file's price (CNY 20 per GPU-hour) and currency are in the form and the plan.
    QCOMPARE(v->price_box()->value(), 20.0);
    QCOMPARE(v->snapshot()->request.currency.code, std::string("CNY"));
    QVERIFY(v->summary()->text().contains(QStringLiteral("CNY")));
    QVERIFY(!v->compare_box()->isChecked());
    // A file that is not a scenario: an error, the last document kept.
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"workload\": ");
    f.close();
    QVERIFY(!v->open_file(bad).isEmpty());
    QCOMPARE(v->document()["workload"]["kind"].get<std::string>(), std::string("serve"));
  }

  void compare_prices_a_sheet_and_spot_scenario_as_the_estimate_tab_does() {
    // A scenario priced from its price sheet (pricing.sheet, relative to the file) under spot terms
    // whose preemption rate comes from the sheet: the Compare column is the Estimate tab's figures.
    MainWindow w(catalogs(), bands());
    QVERIFY(open_scenario(w, "tencent_h800_7b_sheet_spot.json"));
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    const EstimateSnapshot estimate = *w.results()->snapshot();
    QCOMPARE(estimate.scenario.scenario.pricing.currency.code, std::string("CNY"));
    QVERIFY(sim::plan_cost(estimate.estimate).has_value());
    w.compare()->clear();
    w.compare()->add_current();
    QTRY_VERIFY_WITH_TIMEOUT(!w.compare()->busy() && w.compare()->model().columns().size() == 1 &&
                                 w.compare()->model().columns()[0].snapshot.has_value(), 60000);
    const auto& column = *w.compare()->model().columns()[0].snapshot;
    const sim::Estimate& e = column.estimate;
    QCOMPARE(column.scenario.scenario.pricing.currency.code, std::string("CNY"));
    QCOMPARE(column.scenario.scenario.pricing.model, sim::PurchaseModel::spot);
    QVERIFY(sim::plan_cost(e).has_value());
    QCOMPARE(sim::plan_cost(e)->base(), sim::plan_cost(estimate.estimate)->base());
    QCOMPARE(e.goodput.modelled, estimate.estimate.goodput.modelled);
    QCOMPARE(e.goodput.fraction, estimate.estimate.goodput.fraction);
    QCOMPARE(sim::plan_time(e).base(), sim::plan_time(estimate.estimate).base());
    QCOMPARE(column.scenario.scenario.cluster.price_source, estimate.scenario.scenario.cluster.price_source);
    const CompareModel& m = w.compare()->model();
    const QString cost = m.index(CompareModel::kCost, 0).data().toString();
    QVERIFY2(cost.startsWith(QStringLiteral("CNY")), qPrintable(cost));
    QCOMPARE(m.index(CompareModel::kGoodput, 0).data().toString(), percent_text(estimate.estimate.goodput.fraction));
    // The cost chart is in the scenario's currency.
    QVERIFY2(w.compare()->cost_view()->chart()->title().contains(QStringLiteral("CNY")),
             qPrintable(w.compare()->cost_view()->chart()->title()));
    // The example built from the editor: column A is the same, the other offerings keep the spot
    // terms (priced from the sheet where it has their row, else from the catalog).
    QCOMPARE(w.load_compare_example(true), 4);
    QTRY_VERIFY_WITH_TIMEOUT(!w.compare()->busy() && w.compare()->model().columns().size() == 4, 120000);
    const auto& a = w.compare()->model().columns()[0];
    QVERIFY(a.snapshot.has_value());
    QCOMPARE(sim::plan_cost(a.snapshot->estimate)->base(), sim::plan_cost(estimate.estimate)->base());
    for (size_t i = 1; i < 4; ++i) {
      const auto& c = w.compare()->model().columns()[i];
      QVERIFY2(c.snapshot.has_value(), qPrintable(c.problem));
      QCOMPARE(c.snapshot->scenario.scenario.pricing.model, sim::PurchaseModel::spot);
    }
  }

  void prices_budgets_and_token_counts_read_in_the_scenarios_terms() {
    MainWindow w(catalogs(), bands());
    QVERIFY(open_scenario(w, "tencent_h800_7b_sheet_spot.json"));
    w.show();
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    // The price is the sheet's, labelled so.
    QVERIFY2(w.results()->cost_detail()->text().contains(QStringLiteral("(price sheet)")),
             qPrintable(w.results()->cost_detail()->text()));
    QVERIFY(!w.results()->cost_detail()->text().contains(QStringLiteral("your override")));
    // The Plan tab's budget is in the scenario's currency.
    QCOMPARE(w.plan()->budget_label()->text(), QStringLiteral("Budget (CNY)"));
    // Token counts as people read them.
    auto* summary = w.results()->findChild<QLabel*>(QStringLiteral("results:summary"));
    QVERIFY(summary != nullptr);
    QVERIFY2(summary->text().contains(QStringLiteral("10 B tokens")), qPrintable(summary->text()));
    QCOMPARE(tokens_text(1.5e9), QStringLiteral("1.5 B tokens"));
  }

  void the_price_override_is_shown_and_typed_in_the_scenarios_currency() {
    MainWindow w(catalogs(), bands());
    QVERIFY(open_scenario(w, "tencent_h800_7b_sheet_spot.json"));
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot().has_value(), 60000);
    // The override's unit and starting value are the scenario's currency: CNY 25 per GPU-hour.
    auto* unit = w.findChild<QLabel*>(QStringLiteral("/pricing/usd_per_gpu_hour#unit"));
    QVERIFY(unit != nullptr);
    QCOMPARE(unit->text(), QStringLiteral("per GPU-hour in CNY"));
    auto* price = w.findChild<QLineEdit*>(QStringLiteral("/pricing/usd_per_gpu_hour"));
    QVERIFY(price != nullptr && price->placeholderText().startsWith(QStringLiteral("CNY per GPU-hour")));
    const double usd_per_hour = units::to_usd_per_hour(*w.results()->snapshot()->scenario.scenario.cluster.price_per_gpu);
    QCheckBox* override_box = nullptr;
    for (auto* b : w.findChildren<QCheckBox*>()) {
      if (b->text() == QStringLiteral("Override")) override_box = b;
    }
    QVERIFY(override_box != nullptr);
    override_box->click();
    // The sheet's currency is written into the section with its rate, then the price in it.
    const nlohmann::json& pricing = w.document()->document()["pricing"];
    QCOMPARE(pricing["usd_per_gpu_hour"].get<double>(), 25.0);
    QCOMPARE(pricing["currency"].get<std::string>(), std::string("CNY"));
    QCOMPARE(pricing["usd_per_unit"].get<double>(), 0.14);
    QTRY_VERIFY_WITH_TIMEOUT(w.results()->snapshot()->scenario.scenario.cluster.price_source == "scenario pricing",
                             60000);
    const auto& priced = w.results()->snapshot()->scenario.scenario;
    QVERIFY(std::abs(units::to_usd_per_hour(*priced.cluster.price_per_gpu) - usd_per_hour) <= 1e-9 * usd_per_hour);
    QCOMPARE(priced.pricing.currency.code, std::string("CNY"));
    QCOMPARE(unit->text(), QStringLiteral("per GPU-hour in CNY"));
  }

  void the_serve_summary_says_each_latency_and_gpu_count_once() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    ServeView* v = w.serve();
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot().has_value() && !v->busy(), 60000);
    // The example's two best layouts take as many GPUs: said once, not "6 GPUs instead of 6".
    const QString why = QString::fromStdString(v->snapshot()->result.explanation);
    QVERIFY2(why.contains(QRegularExpression(QStringLiteral(": the same \\d+ GPUs \\("))), qPrintable(why));
    QVERIFY2(!why.contains(QRegularExpression(QStringLiteral("(\\d+) GPUs instead of \\1\\b"))), qPrintable(why));
    // A time-to-first-token target: TTFT is the target's latency, shown once.
    v->ttft_box()->setValue(1.0);
    v->e2e_box()->setValue(v->e2e_box()->minimum());
    QTRY_VERIFY_WITH_TIMEOUT(v->snapshot() && v->snapshot()->request.job.slo.ttft.base() == 1.0 &&
                                 v->snapshot()->request.job.slo.e2e.base() == 0 && !v->busy(),
                             60000);
    const QString text = v->summary()->text();
    QVERIFY2(text.count(QStringLiteral("TTFT p95")) == 1, qPrintable(text));
    QVERIFY2(text.count(QStringLiteral("TPOT p95")) == 1, qPrintable(text));
  }

  void the_editors_training_pricing_and_tco_controls_come_from_their_field_tables() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    const std::set<std::string_view> by_hand = {"/training/tokens", "/training/global_batch",
                                                "/training/global_batch_tokens", "/training/framework",
                                                "/pricing/usd_per_node_hour"};  // the override is per GPU-hour
    int controls = 0;
    auto check = [&](const std::string& section, const data::FieldSpec& spec) {
      const std::string pointer = section + "/" + spec.pointer;
      if (by_hand.contains(pointer)) return;
      const QString name = QString::fromStdString(pointer);
      if (spec.kind == data::FieldKind::choice || spec.kind == data::FieldKind::boolean) {
        auto* combo = w.findChild<QComboBox*>(name);
        QVERIFY2(combo != nullptr, qPrintable(name));
        for (const char* c : spec.choices) QVERIFY2(combo->findData(QString::fromLatin1(c)) >= 0, c);
        ++controls;
      } else if (spec.kind != data::FieldKind::list && spec.kind != data::FieldKind::records &&
                 spec.kind != data::FieldKind::per_choice && spec.kind != data::FieldKind::length) {
        QVERIFY2(w.findChild<QLineEdit*>(name) != nullptr, qPrintable(name));
        ++controls;
      }
    };
    for (const auto& f : data::training_fields()) check("/training", f.spec);
    for (const auto& f : data::pricing_fields()) check("/pricing", f.spec);
    for (const auto& f : data::tco_fields()) check("/tco", f.spec);
    QVERIFY(controls >= 30);
    // A table row's control edits its key.
    auto* years = w.findChild<QLineEdit*>(QStringLiteral("/tco/years"));
    QVERIFY(years != nullptr);
    type_into(years, QStringLiteral("3"));
    QCOMPARE(w.document()->document()["tco"]["years"].get<int>(), 3);
    auto* purchase = w.findChild<QComboBox*>(QStringLiteral("/pricing/purchase"));
    purchase->setCurrentIndex(purchase->findData(QStringLiteral("spot")));
    emit purchase->activated(purchase->currentIndex());
    QCOMPARE(w.document()->text("/pricing/purchase"), QStringLiteral("spot"));
    auto* kernels = w.findChild<QComboBox*>(QStringLiteral("/training/kernels"));
    kernels->setCurrentIndex(kernels->findData(QStringLiteral("eager")));
    emit kernels->activated(kernels->currentIndex());
    QCOMPARE(w.document()->text("/training/kernels"), QStringLiteral("eager"));
    kernels->setCurrentIndex(0);
    emit kernels->activated(0);
    QVERIFY(!w.document()->has("/training/kernels"));
    // The Plan tab's purchase models are the table's.
    for (const auto& f : data::pricing_fields()) {
      if (std::string_view(f.spec.pointer) != "purchase") continue;
      QCOMPARE(w.plan()->purchase_field()->count(), static_cast<int>(f.spec.choices.size()));
    }
  }

  void compare_shows_up_to_four_scenarios() {
    MainWindow w(catalogs(), nullptr);
    w.set_ephemeral(true);
    w.load_compare_example();
    QTRY_VERIFY_WITH_TIMEOUT(!w.compare()->busy() && w.compare()->model().columns().size() == 4, 60000);
    QVERIFY(w.compare()->model().columns()[0].snapshot.has_value());
    QVERIFY(!w.compare()->add(QStringLiteral("fifth"), w.document()->document()));  // at most four
  }
};

QTEST_MAIN(GuiAppTest)
#include "gui_app_test.moc"
