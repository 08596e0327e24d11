// SPDX-License-Identifier: Apache-2.0
#include "capplan/gui/calibration.hpp"

#include <string>
#include <utility>

#include "capplan/data/input_file.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/sim/cost/profile.hpp"

namespace capplan::gui {

QString LoadedProfile::label() const {
  if (!profile) return QStringLiteral("datasheet model");
  // The model's own wording for the profile; whether it is the scenario's GPU is the estimate's to say.
  return QString::fromStdString(sim::profile_cost_model_name(*profile));
}

QStringList LoadedProfile::measured() const {
  QStringList items;
  if (!profile) return items;
  for (const auto& g : profile->gemm) {
    items << QStringLiteral("GEMM %1 (m %2..%3, n %4..%5, k %6..%7)")
                 .arg(QString::fromLatin1(sim::to_string(g.dtype)))
                 .arg(g.min_m)
                 .arg(g.max_m)
                 .arg(g.min_n)
                 .arg(g.max_n)
                 .arg(g.min_k)
                 .arg(g.max_k);
  }
  QStringList patterns;
  for (const auto& m : profile->memory) patterns << QString::fromStdString(m.pattern);
  if (!patterns.isEmpty()) items << QStringLiteral("memory: %1").arg(patterns.join(QStringLiteral(", ")));
  for (const auto& c : profile->collectives) {
    items << QStringLiteral("%1 %2 ranks on %3 node%4 (%5)")
                 .arg(QString::fromLatin1(sim::to_string(c.kind)))
                 .arg(c.ranks)
                 .arg(c.nodes)
                 .arg(c.nodes == 1 ? QString() : QStringLiteral("s"))
                 .arg(QString::fromStdString(c.tier));
  }
  // Launch and dispatch (docs/calibration.md): per kernel, in us (a CPU's dispatch in ns).
  QStringList launches;
  for (const auto& f : profile->launch) {
    const double us = f.per_kernel_s.value * 1e6;
    launches << (us >= 1.0 ? QStringLiteral("%1 %2 us").arg(QString::fromStdString(f.pattern)).arg(us, 0, 'f', 2)
                           : QStringLiteral("%1 %2 ns").arg(QString::fromStdString(f.pattern)).arg(us * 1e3, 0, 'f', 1));
  }
  if (!launches.isEmpty()) items << QStringLiteral("launch per kernel: %1").arg(launches.join(QStringLiteral(", ")));
  return items;
}

Result<LoadedProfile> load_profile_file(const QString& path) {
  // The CLI's bounded reader (data/input_file.hpp): at most 64 MiB, no devices.
  auto text = data::read_input_file(path.toStdString());
  if (!text) {
    return std::unexpected(Diagnostics{{Diagnostic::Severity::error, path.toStdString(),
                                        "cannot read the profile file: " + text.error()}});
  }
  auto parsed = data::parse_profile(*text, path.toStdString());
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  LoadedProfile loaded;
  loaded.path = path;
  loaded.profile = std::make_shared<const sim::Profile>(std::move(*parsed));
  return loaded;
}

}  // namespace capplan::gui
