// SPDX-License-Identifier: Apache-2.0
#include "tco_view.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QTimer>
#include <QVBoxLayout>

#include "capplan/data/currency.hpp"
#include "capplan/gui/format.hpp"
#include "charts.hpp"
#include "table_view.hpp"
#include "view_text.hpp"

namespace capplan::gui {

namespace {

QLabel* text_label(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  return label;
}

}  // namespace

TcoView::TcoView(ScenarioDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  message_ = text_label(this);
  message_->setStyleSheet(QStringLiteral(
      "QLabel { background: #fff4e5; border: 1px solid #e0a040; border-radius: 4px; padding: 8px; color: #6b3d00; }"));
  message_->hide();
  layout->addWidget(message_);

  content_ = new QWidget(this);
  auto* content = new QVBoxLayout(content_);
  content->setContentsMargins(0, 0, 0, 0);
  heading_ = text_label(content_);
  content->addWidget(heading_);
  auto* body = new QHBoxLayout();
  chart_view_ = make_chart_view(tr("Cost per useful GPU-hour"), content_);
  chart_view_->setMinimumHeight(360);
  body->addWidget(chart_view_, 5);

  auto* side = new QVBoxLayout();
  table_ = make_table_view(sort_by_value(&model_, content_), -1, 24, content_);
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setToolTip(tr("Owning the fleet (capital depreciated, financed, powered, housed and staffed) against "
                        "renting the same useful GPU-hours at each rate (README \"Own versus rent over years\")"));
  table_->setMinimumWidth(460);
  side->addWidget(table_);
  missing_ = text_label(content_);
  side->addWidget(missing_);
  notes_ = text_label(content_);
  notes_->setStyleSheet(QStringLiteral("color: #4a5568;"));
  side->addWidget(notes_);
  side->addStretch(1);
  body->addLayout(side, 3);
  content->addLayout(body, 1);
  layout->addWidget(content_, 1);

  connect(doc_, &ScenarioDocument::changed, this, &TcoView::schedule);
}

void TcoView::schedule() {
  if (pending_) return;
  pending_ = true;
  // Queued: when a file opens, the document changes before its path (which pricing.sheet is
  // relative to) is set; many keystrokes make one refresh.
  QTimer::singleShot(0, this, [this] {
    pending_ = false;
    if (isVisible()) {
      refresh();
    } else {
      stale_ = true;
    }
  });
}

void TcoView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (stale_) refresh();
}

void TcoView::show_message(const QString& html) {
  snapshot_.reset();
  model_.clear();
  message_->setText(html);
  message_->show();
  content_->hide();
}

void TcoView::refresh() {
  stale_ = false;
  const nlohmann::json& doc = doc_->document();
  if (!has_tco_section(doc)) {
    show_message(tr("<b>This scenario has no <code>tco</code> section.</b> Add one to compare owning its fleet "
                    "for years with renting the same GPU-hours (as <code>capplan tco</code> does), e.g.<br>"
                    "<code>\"tco\": {\"years\": 3, \"utilisation\": 0.6, \"capex_per_node\": 2200000, "
                    "\"price_per_kwh\": 0.8, \"staff_per_year\": 1500000}</code><br>"
                    "in the scenario's currency (the editor's <i>Own vs rent (tco)</i> group has a field per "
                    "term); README \"Own versus rent over years\" lists every term."));
    return;
  }
  auto snap = tco_snapshot(doc, doc_->catalogs(), doc_->file_path().toStdString());
  if (!snap) {
    QStringList lines;
    for (const auto& d : snap.error()) lines << QString::fromStdString(d.where + ": " + d.message);
    show_message(tr("<b>Own vs rent needs fixing</b> (the messages of <code>capplan tco</code>):<br>") +
                 html_lines(lines));
    return;
  }
  snapshot_ = std::move(*snap);
  message_->hide();
  content_->show();
  const TcoSnapshot& s = *snapshot_;
  const sim::Tco& t = s.tco;
  const sim::Currency& cur = s.request.currency;
  const QString rate = QString::fromStdString(data::rate_text(cur));
  QString head = tr("<b>Own vs rent</b>: %1, owned %2 years at %3 utilisation%4")
                     .arg(QString::fromStdString(s.request.fleet).toHtmlEscaped())
                     .arg(s.request.inputs.years)
                     .arg(percent_text(s.request.inputs.utilisation))
                     .arg(rate.isEmpty() ? QString() : tr(" · amounts in %1").arg(rate.toHtmlEscaped()));
  head += tr("<br>capital %1 (known parts), residual %2 · %3 kW provisioned · %4 useful GPU-hours")
              .arg(money_text(t.capital, cur), money_text(t.residual, cur), fixed_text(t.provisioned_kw, 1),
                   count_text(t.useful_gpu_hours));
  heading_->setText(head);
  model_.set_snapshot(s);
  table_->setFixedHeight(table_->horizontalHeader()->sizeHint().height() +
                         model_.rowCount() * table_->verticalHeader()->defaultSectionSize() + 2 * table_->frameWidth());
  QStringList missing;
  for (const auto& m : t.missing) missing << QString::fromStdString(m);
  missing_->setText(missing.isEmpty()
                        ? tr("<b>Missing inputs</b>: none")
                        : tr("<b>Missing inputs</b> (left out, never guessed; give them in the scenario):<br>%1")
                              .arg(html_lines(missing)));
  QStringList notes;
  if (!s.sheet.isEmpty()) notes << tr("price sheet: %1").arg(s.sheet);
  notes << s.notes;
  notes_->setText(html_lines(notes));
  notes_->setVisible(!notes.isEmpty());
  fill_tco_chart(chart_view_->chart(), s);
}

}  // namespace capplan::gui
