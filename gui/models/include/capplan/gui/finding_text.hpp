// SPDX-License-Identifier: Apache-2.0
// A finding of the model (sim/finding.hpp) in the GUI's words: data/'s English template, through
// tr() (context "capplan::Finding"), filled with the GUI's number format.
#pragma once
#include <QString>

#include "capplan/sim/finding.hpp"
#include "capplan/sim/result.hpp"

namespace capplan::gui {

QString finding_text(const sim::Finding& f);

// "where: message", the message through finding_text when sim/ coded it (its finding, not the
// English data::word wrote).
QString diagnostic_text(const Diagnostic& d);

}  // namespace capplan::gui
