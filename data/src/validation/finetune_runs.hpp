// SPDX-License-Identifier: Apache-2.0
// Measured fine-tuning runs (data/benchmarks/finetune_runs_dev.csv: NeMo, Megatron-Bridge, NeMo
// AutoModel, torchtune, Qwen's fine-tuning profile, PEFT, unsloth, MLPerf Llama-2-70B LoRA) as
// runs for the accuracy harness: throughput and, where measured, peak memory per GPU. Private to
// capplan_data: load_published_runs() reads such a file when its header is this layout's.
#pragma once
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/published_runs.hpp"
#include "reading/csv.hpp"

namespace capplan::data::detail {

// A header with the fine-tuning table's columns (method, frozen_base_weight_dtype, lora_rank, ...).
bool is_finetune_header(const CsvRow& header);

// Every record as a fine-tuning run: the preset, GPU, framework recipe and layout the row names
// (names mapped, nothing else), the measured tokens/s per GPU (given, or the step time under the
// row's own metric definition) and the peak memory per GPU where the row measures one. A record
// capplan cannot take (no preset or catalog GPU, a budget instead of a measurement, an encoder-
// decoder model) is kept, unusable, with the reason.
Result<std::vector<PublishedRun>> finetune_runs(const std::vector<CsvRow>& rows, const Catalogs& catalogs,
                                                const std::string& file);

}  // namespace capplan::data::detail
