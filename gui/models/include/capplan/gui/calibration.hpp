// SPDX-License-Identifier: Apache-2.0
// A calibration profile loaded into the desktop app (`capplan estimate --profile FILE`).
//
// Contract:
//  * load_profile_file() reads the file and validates it with data::parse_profile, the parser the
//    CLI uses, so a bad file is refused with the CLI's messages (each names the field, or the line
//    and column of a syntax error). It never throws; nothing is kept on failure.
//  * The cost model is then chosen by data::make_cost_model / data::estimate_with_profile, as in
//    the CLI: the GUI holds no model logic.
#pragma once
#include <QString>
#include <QStringList>
#include <memory>

#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::gui {

struct LoadedProfile {
  QString path;
  std::shared_ptr<const sim::Profile> profile;

  // "calibrated: <device> (<date>)", as CalibratedCost::source() and the JSON's cost_model say.
  QString label() const;
  // What the profile measured, one short item each: "GEMM bf16 (m 64..8192, ...)",
  // "memory: elementwise, norm", "all_reduce 8 ranks nvlink". Everything else: the datasheet.
  QStringList measured() const;
};

Result<LoadedProfile> load_profile_file(const QString& path);

}  // namespace capplan::gui
