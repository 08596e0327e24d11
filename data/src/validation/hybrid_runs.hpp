// SPDX-License-Identifier: Apache-2.0
// Hybrid-model training runs (data/benchmarks/hybrid_runs_dev.csv: Megatron-Bridge's performance
// tables for Nemotron-H and Nemotron 3, and NVIDIA dgxc-benchmarking's example output) as measured
// runs, for the accuracy harness. Private to capplan_data: load_published_runs() reads such a
// file when its header is this layout's.
#pragma once
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/published_runs.hpp"
#include "reading/csv.hpp"

namespace capplan::data::detail {

// A header with this layout's columns (row_id, source_group, model, arch_summary, gpu, ...,
// tokens_per_s_per_gpu, metric_definition).
bool is_hybrid_runs_header(const CsvRow& header);

// Every row as a run: the model preset the row names, the row's layout and batch, and the
// settings of Megatron-Bridge's performance recipes (stated as assumptions); the measured
// throughput is the row's tokens/s per GPU. A row capplan cannot take is kept, unusable, with the
// reason; a malformed table is an error naming the line.
Result<std::vector<PublishedRun>> hybrid_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                              const std::string& file);

}  // namespace capplan::data::detail
