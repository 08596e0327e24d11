// SPDX-License-Identifier: Apache-2.0
// vTrain's tables of measured iteration times (Bang et al., "vTrain", MICRO 2024; github
// VIA-Research/vTrain, data/ground_truth_{single,multi}.csv, and development samples of them) as measured runs, for the accuracy harness. Private to
// capplan_data: load_published_runs() reads such a file when its header is vTrain's.
#pragma once
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/published_runs.hpp"
#include "reading/csv.hpp"

namespace capplan::data::detail {

// Settles a table row's run: usable when nothing in `reasons` blocks it and capplan accepts its
// scenario (a rejection is added to `reasons`); skip_reason joins them.
void settle_run(PublishedRun& run, std::vector<std::string>& reasons, const Catalogs& catalogs,
                const std::string& file);

// A header with vTrain's columns (GPUs, batch, layout, model shape, "iteration time (ms)").
bool is_vtrain_header(const CsvRow& header);

// Every record of a vTrain table (rows[0] is the header) as a run: the GPT model and layout of
// the record with the settings of vTrain's configs (stated as assumptions), and the measured
// throughput global batch x sequence length / iteration time / GPUs. A record capplan cannot
// take is kept, unusable, with the reason; a malformed table is an error naming the line.
Result<std::vector<PublishedRun>> vtrain_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                              const std::string& file);

}  // namespace capplan::data::detail
