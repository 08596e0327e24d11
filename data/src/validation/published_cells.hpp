// SPDX-License-Identifier: Apache-2.0
// The published-runs table's reading, shared by its three files: the cell conventions and the
// free-text columns (published_cells.cpp), the model and whole-run columns
// (published_columns.cpp) and the row itself (published_runs.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/data/published_runs.hpp"
#include "reading/csv.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data::published {

using detail::CsvRow;
using detail::fmt;
using nlohmann::json;

// Cell conventions (published_runs_dev.md)
std::string lower(std::string s);
bool contains(const std::string& haystack, std::string_view needle);
// Removes parenthetical notes: "8 (assumed)" -> "8".
std::string strip_notes(const std::string& s);
std::optional<double> checked_number(std::string_view text);
std::optional<double> leading_number(const std::string& cell, bool* out_of_range = nullptr);
std::optional<int> leading_int(const std::string& cell, bool* out_of_range = nullptr);
bool weak(const std::string& cell);
bool starts_with_word(const std::string& cell, std::string_view word);

// The CSV columns this reader uses; a file without them is malformed.
inline constexpr const char* kColumns[] = {
    "row_id", "group", "source", "source_url", "measurement_kind", "model_name", "arch_type", "num_layers",
    "hidden_size", "num_attention_heads", "num_kv_heads", "ffn_hidden_size", "ffn_activation", "vocab_size",
    "seq_len", "attention_notes", "global_batch_seqs", "global_batch_tokens", "micro_batch_size", "precision",
    "gpu_model", "num_gpus", "gpus_per_node", "inter_node_network", "tp", "pp", "dp", "cp", "sequence_parallel",
    "ep", "zero_or_fsdp", "virtual_pipeline_stages", "activation_recompute", "step_time_s", "tokens_per_s_total",
    "tokens_per_s_per_gpu", "tflops_per_gpu", "tflops_definition", "derived_fields", "framework", "moe_num_experts",
    "moe_top_k", "moe_expert_ffn_size", "moe_shared_experts", "moe_dense_layers", "etp",
};

class RowReader {
 public:
  RowReader(const CsvRow& row, const std::map<std::string, std::size_t>& columns, PublishedRun& run)
      : row_(row), columns_(columns), run_(run) {}

  const std::string& cell(const std::string& column) const {
    static const std::string kEmpty;
    auto it = columns_.find(column);
    return it == columns_.end() || it->second >= row_.cells.size() ? kEmpty : row_.cells[it->second];
  }
  // A number from a column; notes the assumption when the cell is marked as weak. A number
  // beyond double's range is an error naming the row and column.
  std::optional<double> number(const std::string& column) {
    bool out_of_range = false;
    auto v = leading_number(cell(column), &out_of_range);
    if (out_of_range) out_of_range_error(column);
    if (v) note_weak(column);
    return v;
  }
  std::optional<int> integer(const std::string& column) {
    bool out_of_range = false;
    auto v = leading_int(cell(column), &out_of_range);
    if (out_of_range) out_of_range_error(column);
    if (v) note_weak(column);
    return v;
  }
  // A number found inside a free-text cell (a count, a rate, a window), range-checked.
  std::optional<double> number_in(const std::string& column, std::string_view text, double hi) {
    auto v = checked_number(text);
    if (!v || *v > hi) {
      error(column, "number out of range (at most " + fmt(hi) + "); got '" + std::string(text.substr(0, 40)) + "'");
      return std::nullopt;
    }
    return v;
  }
  void out_of_range_error(const std::string& column) {
    error(column, "number out of range (beyond a double); got '" + cell(column).substr(0, 40) +
                      (cell(column).size() > 40 ? "...'" : "'"));
  }
  // An error in this row (exit 2): "<file>:<line>: column '<column>': <message>".
  void error(const std::string& column, std::string message) {
    errors_.push_back({Diagnostic::Severity::error, "", "column '" + column + "': " + std::move(message)});
  }
  const Diagnostics& errors() const { return errors_; }
  int line() const { return row_.line; }
  void note_weak(const std::string& column) {
    if (weak(cell(column))) assume(column + " = '" + cell(column) + "' (marked as weaker than a primary source)");
  }
  void assume(std::string text) {
    if (std::find(run_.assumptions.begin(), run_.assumptions.end(), text) == run_.assumptions.end()) {
      run_.assumptions.push_back(std::move(text));
    }
  }
  void skip(std::string reason) { reasons_.push_back(std::move(reason)); }
  const std::vector<std::string>& reasons() const { return reasons_; }

 private:
  const CsvRow& row_;
  const std::map<std::string, std::size_t>& columns_;
  PublishedRun& run_;
  std::vector<std::string> reasons_;
  Diagnostics errors_;
};

// Free-text columns
class RowReader;
std::optional<std::string> map_gpu(const std::string& text, const Catalogs& cat, RowReader& rr);
double parse_network(const std::string& text, int gpus_per_node, const std::string& gpu_id, RowReader& rr);
std::string map_precision(const std::string& text, RowReader& rr);
std::optional<int> map_zero(const std::string& text, RowReader& rr);
std::optional<int> publication_year(const std::string& source, const std::string& url);
double eq3_flops_per_token(double l, double h, double s, double V);
double chowdhery_flops_per_token(double params, double layers, double heads_x_head_dim, double seq);

// Model and run columns (published_columns.cpp)
void read_moe(RowReader& rr, nlohmann::json& model);
void read_mla(RowReader& rr, const Catalogs& cat, nlohmann::json& model);
void read_config_caveats(RowReader& rr, nlohmann::json& model);
void read_whole_run(RowReader& rr, PublishedRun& run, const Catalogs& cat, const std::string& file);

}  // namespace capplan::data::published
