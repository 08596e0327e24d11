// SPDX-License-Identifier: Apache-2.0
// A finding of the model (sim/finding.hpp) in the GUI's words: data/'s English template, through
// tr() (context "capplan::Finding"), filled with the GUI's number format.
#pragma once
#include <QString>
#include <QStringList>

#include "capplan/sim/workload/finding.hpp"
#include "capplan/sim/workload/result.hpp"
#include "capplan/sim/search/search.hpp"

namespace capplan::gui {

QString finding_text(const sim::Finding& f);

// The planner's "Why #1" (data::explanation_parts), each piece through finding_text; empty when the
// result has no chosen plan.
QString explanation_text(const sim::SearchResult& result, const sim::SearchRequest& request);
// The unmet constraint (data::failure_parts) and a runner-up (data::runner_up_parts), the same way.
QString failure_text(const sim::ConstraintFailure& failure, const sim::SearchRequest& request);
QString runner_up_text(const sim::RunnerUp& runner_up, const sim::Plan& chosen);

// "where: message", the message through finding_text when sim/ coded it (its finding, not the
// English data::word wrote).
QString diagnostic_text(const Diagnostic& d);
// diagnostic_text of each, in order: what a runner reports when its request is refused.
QStringList diagnostic_messages(const Diagnostics& diags);

}  // namespace capplan::gui
