// SPDX-License-Identifier: Apache-2.0
// vTrain's tables of measured iteration times (Bang et al., "vTrain", MICRO 2024; github
// VIA-Research/vTrain, data/ground_truth_{single,multi}.csv, and development samples of them) as measured runs, for the accuracy harness. Private to
// capplan_data: load_published_runs() reads such a file when its header is vTrain's.
#pragma once
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/published_runs.hpp"
#include "reading/csv.hpp"

namespace capplan::data::detail {

// Settles a table row's run: usable when nothing in `reasons` blocks it and capplan accepts its
// scenario (a rejection is added to `reasons`); skip_reason joins them.
void settle_run(PublishedRun& run, std::vector<std::string>& reasons, const Catalogs& catalogs,
                const std::string& file);

// Every record of a table (rows[0] is the header, which must name every one of `columns`) as a
// settled run: `fill(row, col, run, reasons)` reads the record's cells (col: index by header name)
// into the run and adds to `reasons` what keeps it from being used. A malformed table is an error
// naming the line.
template <class Fill>
Result<std::vector<PublishedRun>> table_runs(const std::vector<CsvRow>& rows, std::span<const char* const> columns,
                                             const Catalogs& catalogs, const std::string& file, Fill&& fill) {
  auto col = table_columns(rows, columns, file);
  if (!col) return std::unexpected(std::move(col.error()));
  std::vector<PublishedRun> runs;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    PublishedRun run;
    std::vector<std::string> reasons;
    fill(rows[i], std::as_const(*col), run, reasons);
    settle_run(run, reasons, catalogs, file);
    runs.push_back(std::move(run));
  }
  return runs;
}

// A header with vTrain's columns (GPUs, batch, layout, model shape, "iteration time (ms)").
bool is_vtrain_header(const CsvRow& header);

// Every record of a vTrain table (rows[0] is the header) as a run: the GPT model and layout of
// the record with the settings of vTrain's configs (stated as assumptions), and the measured
// throughput global batch x sequence length / iteration time / GPUs. A record capplan cannot
// take is kept, unusable, with the reason; a malformed table is an error naming the line.
Result<std::vector<PublishedRun>> vtrain_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                              const std::string& file);

}  // namespace capplan::data::detail
