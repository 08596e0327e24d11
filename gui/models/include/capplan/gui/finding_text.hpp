// SPDX-License-Identifier: Apache-2.0
// A finding of the model (sim/finding.hpp) in the GUI's words: data/'s English template, through
// tr() (context "capplan::Finding"), filled with the GUI's number format.
#pragma once
#include <QString>

#include "capplan/sim/finding.hpp"

namespace capplan::gui {

QString finding_text(const sim::Finding& f);

}  // namespace capplan::gui
