// SPDX-License-Identifier: Apache-2.0
// Published training runs (data/benchmarks/published_runs_dev.csv and its .md) -> scenarios with
// a measured throughput, for validating capplan against reality. Rows that cannot become a
// like-for-like scenario are kept, marked unusable, with the reason; every value we had to
// assume is stated in PublishedRun::assumptions.
#include "capplan/data/published_runs.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "capplan/data/scenario_io.hpp"
#include "reading/csv.hpp"
#include "validation/finetune_runs.hpp"
#include "validation/hybrid_runs.hpp"
#include "validation/vtrain_runs.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data {

namespace {

using detail::CsvRow;
using detail::fmt;
using detail::parse_csv;
using detail::trim;
using nlohmann::json;

// --- Cell conventions (published_runs_dev.md) ---------------------------------------------

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool contains(const std::string& haystack, std::string_view needle) {
  return lower(haystack).find(lower(std::string(needle))) != std::string::npos;
}
// Removes parenthetical notes: "8 (assumed)" -> "8".
std::string strip_notes(const std::string& s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '(') {
      ++depth;
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  return trim(out);
}
// A number spelled out in a cell (digits, a point, an exponent), range-checked: nullopt for text
// that is not one and for a value beyond double's range ("1e999", 400 digits), instead of
// std::stod's exception ("internal error", exit 1).
std::optional<double> checked_number(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Where a leading number ends: [+-]?(digits[.digits*]|.digits)([eE][+-]?digits)?; 0 when
// there is none. A hand-written scanner: no std::regex over user text.
std::size_t number_length(std::string_view s) {
  auto digits = [&](std::size_t i) {
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i;
  };
  std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  const std::size_t int_end = digits(i);
  std::size_t end = int_end;
  if (end < s.size() && s[end] == '.') {
    const std::size_t frac_end = digits(end + 1);
    if (int_end == i && frac_end == end + 1) return 0;  // "." alone
    end = frac_end;
  } else if (int_end == i) {
    return 0;
  }
  if (end < s.size() && (s[end] == 'e' || s[end] == 'E')) {
    std::size_t e = end + 1;
    if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
    if (const std::size_t exp_end = digits(e); exp_end > e) end = exp_end;
  }
  return end;
}

// The leading number of a cell ("8 (assumed)" -> 8, "50257 (padded 50432)" -> 50257); nullopt for
// "unknown", "n/a", "up to 147", "yes (...)". `out_of_range` is set for a number that does not
// fit a double.
std::optional<double> leading_number(const std::string& cell, bool* out_of_range = nullptr) {
  const std::string s = strip_notes(cell);
  const std::size_t end = number_length(s);
  if (end == 0) return std::nullopt;
  if (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end])) && s[end] != ',' && s[end] != ';') {
    return std::nullopt;  // "8x200", "128K"
  }
  std::string_view digits(s.data(), end);
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);  // from_chars takes no '+'
  auto v = checked_number(digits);
  if (!v && out_of_range != nullptr) *out_of_range = true;
  return v;
}
std::optional<int> leading_int(const std::string& cell, bool* out_of_range = nullptr) {
  auto v = leading_number(cell, out_of_range);
  if (!v || *v != std::floor(*v) || *v < 0 || *v > 2e9) return std::nullopt;
  return static_cast<int>(*v);
}
// A cell the source marks as weaker than a primary read.
bool weak(const std::string& cell) {
  for (const char* w : {"assumed", "recalled", "verify", "likely", "third-party", "unverified", "inferred"}) {
    if (contains(cell, w)) return true;
  }
  return false;
}
bool starts_with_word(const std::string& cell, std::string_view word) {
  const std::string l = lower(trim(cell));
  if (!l.starts_with(word)) return false;
  return l.size() == word.size() || !std::isalnum(static_cast<unsigned char>(l[word.size()]));
}

// The CSV columns this reader uses; a file without them is malformed.
constexpr const char* kColumns[] = {
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

// --- Interpretation of free-text columns --------------------------------------------------

// GPU text -> catalog id. Candidates are tried in order; the first the catalog has wins.
std::optional<std::string> map_gpu(const std::string& text, const Catalogs& cat, RowReader& rr) {
  auto pick = [&](std::initializer_list<const char*> ids) -> std::optional<std::string> {
    for (const char* id : ids) {
      if (cat.find_gpu(id) != nullptr) return std::string(id);
    }
    return std::nullopt;
  };
  static const std::regex kMemory(R"((\d+)\s*GB)");
  std::smatch m;
  const bool has_mem = std::regex_search(text, m, kMemory);
  const int mem = has_mem ? static_cast<int>(rr.number_in("gpu_model", m.str(1), 1e6).value_or(0)) : 0;
  if (contains(text, "ampere")) {
    rr.assume("gpu_model '" + text + "' read as A100 80GB SXM");
    return pick({"a100-80gb-sxm"});
  }
  if (contains(text, "a100")) {
    if (mem == 40) return pick({"a100-40gb-sxm"});
    if (mem != 80) rr.assume("gpu_model '" + text + "': memory not stated, A100 80GB SXM assumed");
    return pick({"a100-80gb-sxm"});
  }
  if (contains(text, "h100")) {
    if (contains(text, "pcie")) return pick({"h100-pcie-80gb"});
    if (has_mem && mem != 80) {
      // e.g. Meta's Grand Teton H100 96 GB HBM2e capped at 500 W: a different memory size and a
      // power cap whose sustained clocks (and so peak) its source says are unknown. Not in the
      // catalog, so not predicted rather than predicted as an 80 GB / 700 W part.
      rr.skip("GPU SKU '" + text + "' is not in the catalog (different memory and power cap; peak unknown)");
      return std::nullopt;
    }
    if (mem != 80)
      rr.assume("gpu_model '" + text + "' mapped to h100-sxm-80gb (same compute; memory and power differ)");
    return pick({"h100-sxm-80gb"});
  }
  if (contains(text, "h800")) return pick({"h800-sxm-80gb"});
  if (contains(text, "h200")) return pick({"h200-sxm-141gb"});
  if (contains(text, "b200")) return pick({"b200", "b200-hgx"});
  if (contains(text, "v100")) {
    if (!contains(text, "sxm2") || mem != 32) rr.assume("gpu_model '" + text + "' mapped to v100-sxm2-32gb");
    return pick({"v100-sxm2-32gb"});
  }
  return std::nullopt;
}

// Era default when the fabric is not published: HDR (200 Gbit/s per GPU) for A100, NDR (400)
// for Hopper and Blackwell, EDR (100) for Volta.
double default_network_gbps(const std::string& gpu_id) {
  if (gpu_id.starts_with("v100")) return 100;
  if (gpu_id.starts_with("a100") || gpu_id.starts_with("a800")) return 200;
  return 400;
}

// inter_node_network text -> Gbit/s per GPU, one direction.
double parse_network(const std::string& text, int gpus_per_node, const std::string& gpu_id, RowReader& rr) {
  static const std::regex kCountTimesRate(R"((\d+)\s*x\s*(\d+(?:\.\d+)?)\s*(?:Gb/s|Gbps|Gbit/s|G\b))");
  static const std::regex kCountTimesGen(R"((\d+)\s*x\s*[^,;()]*?\b(EDR|HDR|NDR|XDR)\b)");
  static const std::regex kRate(R"((\d+(?:\.\d+)?)\s*(Gb/s|Gbps|Gbit/s|GB/s))");
  std::smatch m;
  const bool hedged = weak(text) || contains(text, "not restate") || contains(text, "standard");
  auto per_gpu = [&](double node_total, const char* how) {
    const double v = node_total / gpus_per_node;
    if (hedged) rr.assume("inter_node_network '" + text + "' read as " + fmt(v) + " Gbit/s per GPU (" + how + ")");
    return v;
  };
  // Counts and rates far beyond any fabric are errors naming the column, not an exception.
  constexpr double kMaxNics = 1e4, kMaxRate = 1e6;
  const char* column = "inter_node_network";
  if (std::regex_search(text, m, kCountTimesRate)) {
    const auto nics = rr.number_in(column, m.str(1), kMaxNics), rate = rr.number_in(column, m.str(2), kMaxRate);
    if (!nics || !rate) return default_network_gbps(gpu_id);
    return per_gpu(*nics * *rate, "NICs x rate per node / GPUs per node");
  }
  if (std::regex_search(text, m, kCountTimesGen)) {
    const std::string gen = m.str(2);
    const double rate = gen == "EDR" ? 100 : gen == "HDR" ? 200 : gen == "NDR" ? 400 : 800;
    const auto nics = rr.number_in(column, m.str(1), kMaxNics);
    if (!nics) return default_network_gbps(gpu_id);
    return per_gpu(*nics * rate, "NICs x InfiniBand generation rate / GPUs per node");
  }
  if (std::regex_search(text, m, kRate)) {
    const auto rate = rr.number_in(column, m.str(1), kMaxRate);
    if (!rate) return default_network_gbps(gpu_id);
    double v = *rate;
    if (m.str(2) == "GB/s") v *= 8;
    if (contains(text, "per gpu")) {
      if (hedged) rr.assume("inter_node_network '" + text + "' read as " + fmt(v) + " Gbit/s per GPU");
      return v;
    }
    if (contains(text, "per node") || contains(text, "per server") || contains(text, "node-to-node") ||
        contains(text, "inter-node")) {
      const double g = v / gpus_per_node;
      rr.assume("inter_node_network '" + text + "' read as " + fmt(v) + " Gbit/s per node = " + fmt(g) +
                " Gbit/s per GPU");
      return g;
    }
    rr.assume("inter_node_network '" + text + "' read as " + fmt(v) + " Gbit/s per GPU (one NIC per GPU)");
    return v;
  }
  if (contains(text, "efa")) {
    static const std::regex kBare(R"((\d{3,5}))");
    if (std::regex_search(text, m, kBare)) {
      const double g = checked_number(m.str(1)).value_or(0) / gpus_per_node;  // \d{3,5}: at most 99,999
      rr.assume("inter_node_network '" + text + "' read as " + m.str(1) + " Gbit/s EFA per node = " + fmt(g) +
                " Gbit/s per GPU");
      return g;
    }
  }
  const double d = default_network_gbps(gpu_id);
  rr.assume("inter_node_network '" + text + "' not published: " + fmt(d) + " Gbit/s per GPU assumed for " + gpu_id);
  return d;
}

std::string map_precision(const std::string& text, RowReader& rr) {
  rr.note_weak("precision");
  const std::string l = lower(text);
  if (l.find("fp8") != std::string::npos) return "fp8";
  const bool bf = l.find("bf16") != std::string::npos, fp = l.find("fp16") != std::string::npos;
  if (bf && fp) {
    if (!l.starts_with("bf16") || l.find("unknown") != std::string::npos) {
      rr.assume("precision '" + text + "' ambiguous: bf16 assumed (same dense peak as fp16 on A100/H100)");
    }
    return "bf16";
  }
  if (fp) return "fp16";
  if (!bf) rr.assume("precision '" + text + "' not recognised: bf16 assumed");
  return "bf16";
}

// ZeRO stage from zero_or_fsdp; nullopt = not published ("auto").
std::optional<int> map_zero(const std::string& text, RowReader& rr) {
  const std::string l = lower(text);
  std::optional<int> z;
  const bool dist_opt =
      l.find("distributed optimizer") != std::string::npos || l.find("dist. optimizer") != std::string::npos;
  if (starts_with_word(l, "none") || starts_with_word(l, "no")) {
    z = dist_opt ? 1 : 0;  // "no FSDP (DDP; distributed optimizer assumed)" is ZeRO-1
  } else if (l.find("zero-2") != std::string::npos) {
    z = 2;
  } else if (l.find("zero-3") != std::string::npos || l.find("full_shard") != std::string::npos ||
             l.find("full shard") != std::string::npos || l.find("fsdp") != std::string::npos) {
    z = 3;
  } else if (l.find("zero-1") != std::string::npos || dist_opt) {
    z = 1;
  }
  if (z) rr.note_weak("zero_or_fsdp");
  return z;
}

// Publication year: the earliest of a year in `source` ("2019", "SC'21") and an arXiv id.
std::optional<int> publication_year(const std::string& source, const std::string& url) {
  std::optional<int> year;
  auto take = [&](int y) { year = year ? std::min(*year, y) : y; };
  static const std::regex kYear(R"(\b(19|20)(\d\d)\b)");
  static const std::regex kShortYear(R"('(\d\d)\b)");
  static const std::regex kArxiv(R"(arxiv\.org/(?:abs|pdf)/(\d\d)\d\d\.)");
  std::smatch m;
  // Two or four digits each: always in range.
  auto whole = [](const std::string& digits) { return static_cast<int>(checked_number(digits).value_or(0)); };
  if (std::regex_search(source, m, kYear)) take(whole(m.str(1) + m.str(2)));
  if (std::regex_search(source, m, kShortYear)) take(2000 + whole(m.str(1)));
  if (std::regex_search(url, m, kArxiv)) take(2000 + whole(m.str(1)));
  return year;
}

// Narayanan et al. SC'21 Eq. 3: FLOPs per iteration F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)),
// which counts the recompute forward pass. Per token: F / (B s).
double eq3_flops_per_token(double l, double h, double s, double V) {
  return 96.0 * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

// Chowdhery et al. 2022 (PaLM), Appendix B: model FLOPs per token 6N + 12 L H Q T (N parameters,
// L layers, H heads, Q head dimension, T sequence length; attention counted without the causal
// half). Sources that state "MFU (Chowdhery et al. definition)" with model TFLOP/s per GPU give
// the throughput as TFLOP/s / this.
double chowdhery_flops_per_token(double params, double layers, double heads_x_head_dim, double seq) {
  return 6.0 * params + 12.0 * layers * heads_x_head_dim * seq;
}

// The CSV's framework column -> a recipe id of data/frameworks.json. The first row whose needle
// the column contains wins; `until_year` > 0: only rows published up to that year (the column
// names no version). What the framework does is the recipe's business, never this table's.
struct FrameworkName {
  const char* needle;
  int until_year;
  const char* recipe;
};
constexpr FrameworkName kFrameworkNames[] = {
    {"automodel", 0, "nemo-automodel"},
    {"megatron-bridge", 0, "megatron-bridge-perf"},  // NVIDIA's Megatron-Bridge performance tables
    {"nemo 24.07", 0, "nemo-1"},
    {"nemo 24.03", 0, "nemo-1"},
    {"nemo", 0, "nemo-2-perf"},                      // NVIDIA's NeMo performance tables
    {"megascale", 0, "megascale"},
    {"megatron-lm commit 285068c8", 0, "megatron-lm-285068c8"},
    {"megatron-lm (2019)", 0, "megatron-lm-v1"},
    {"megatron-lm (ptd-p)", 0, "megatron-lm-v2"},
    {"megatron-deepspeed", 0, "megatron-deepspeed"},
    {"metaseq", 0, "pytorch"},
    {"megatron-lm", 2022, "megatron-lm-2022"},
    {"megatron-lm", 0, "megatron-lm"},
    {"deepspeed", 0, "deepspeed"},
    {"composer", 0, "llm-foundry"},
    {"fms-fsdp", 0, "fms-fsdp-2024-03"},  // the rows cite the March 2024 PyTorch blog
    {"torchtitan", 0, "torchtitan"},
    {"4d parallelism", 0, "torchtitan"},  // tensor, context, pipeline and FSDP data parallelism in PyTorch
    {"fsdp", 0, "pytorch-fsdp"},
};

}  // namespace

std::optional<std::string> framework_recipe_for(const std::string& framework, std::optional<int> year,
                                                const std::string& model_name) {
  for (const auto& f : kFrameworkNames) {
    if (!contains(framework, f.needle)) continue;
    if (f.until_year > 0 && !(year && *year <= f.until_year)) continue;
    // Megatron-Bridge's GPT-OSS presets carry their own recompute (a recipe of their own).
    if (std::string_view(f.recipe) == "megatron-bridge-perf" && contains(model_name, "gpt-oss")) {
      return "megatron-bridge-perf-gpt-oss";
    }
    return std::string(f.recipe);
  }
  return std::nullopt;
}

namespace {

// MoE columns -> model.moe. Routing imbalance is not a CSV column: balanced routing
// (capacity_factor 1.0) is assumed and said so, with the reason when the benchmark forces it.
void read_moe(RowReader& rr, json& model) {
  struct Col {
    const char* column;
    const char* key;
    int lo;
  };
  constexpr Col kCols[] = {{"moe_num_experts", "experts", 1},
                           {"moe_top_k", "top_k", 1},
                           {"moe_expert_ffn_size", "expert_ffn_hidden", 1},
                           {"moe_shared_experts", "shared_experts", 0},
                           {"moe_dense_layers", "dense_layers", 0}};
  json moe = json::object();
  std::vector<std::string> missing;
  for (const auto& c : kCols) {
    if (auto v = rr.integer(c.column); v && *v >= c.lo) {
      moe[c.key] = *v;
    } else {
      missing.push_back(std::string(c.column) + " = '" + rr.cell(c.column) + "'");
    }
  }
  if (!missing.empty()) {
    rr.skip("MoE dimensions not published (" + detail::join(missing) + ")");
    return;
  }
  moe["capacity_factor"] = 1.0;
  const std::string name = rr.cell("model_name");
  if (contains(name, "token-drop")) {
    // Megatron-Bridge's token drop (scripts/performance/utils/overrides.py#L455 use_tokendrop ->
    // src/megatron/bridge/training/utils/moe_token_drop.py#L25-L28 apply_moe_token_drop: capacity
    // factor 1.0, moe_pad_expert_input_to_capacity True, @067f987): every expert runs exactly its
    // capacity.
    moe["pad_to_capacity"] = true;
    rr.assume("capacity_factor 1.0, padded to capacity: token-drop benchmark routing (Megatron-Bridge "
              "apply_moe_token_drop: factor 1.0, moe_pad_expert_input_to_capacity) runs every expert at capacity");
  } else if (contains(name, "force-balanced")) {
    // Megatron-Bridge without token drop (scripts/performance/utils/overrides.py#L458-L462
    // @067f987): dropless, moe_router_force_load_balancing = True (random router logits).
    moe["random_routing"] = true;
    rr.assume("capacity_factor 1.0: force-balanced benchmark routing: balanced on average, each token's experts "
              "drawn at random (Megatron-Core moe_router_force_load_balancing); dropless (token counts exchanged "
              "and copied to the host every MoE layer)");
  } else {
    rr.assume("capacity_factor 1.0 (balanced routing): the run's real routing imbalance is not published");
  }
  if (!model.contains("ffn_hidden")) {
    if (moe["dense_layers"].get<int>() == 0) {
      model["ffn_hidden"] = moe["expert_ffn_hidden"];
      rr.assume("ffn_hidden_size = '" + rr.cell("ffn_hidden_size") +
                "': set to the expert size (not used: every layer is MoE)");
    } else {
      rr.skip("ffn_hidden_size of the dense layers not published ('" + rr.cell("ffn_hidden_size") + "')");
    }
  }
  model["moe"] = std::move(moe);
}

// MLA rows list no latent dimensions: they come from the model's preset, when capplan has one
// of the same shape, and the row says so.
void read_mla(RowReader& rr, const Catalogs& cat, json& model) {
  const std::string name = rr.cell("model_name");
  const char* preset_id = nullptr;
  if (contains(name, "deepseek-v3") || contains(name, "deepseek v3")) preset_id = "deepseek-v3";
  if (contains(name, "deepseek-v2") || contains(name, "deepseek v2")) preset_id = "deepseek-v2";
  const ModelEntry* preset = preset_id != nullptr ? cat.find_model(preset_id) : nullptr;
  if (preset == nullptr || preset->spec.attention != sim::Attention::mla) {
    rr.skip("MLA latent dimensions not published and no MLA preset of this model in the catalog");
    return;
  }
  const auto& s = preset->spec;
  const bool same_shape = model.value("layers", 0) == s.layers && model.value("hidden", 0) == s.hidden &&
                          model.value("heads", 0) == s.heads;
  if (!same_shape) {
    rr.skip("MLA latent dimensions not published, and the row's shape differs from the " + std::string(preset_id) +
            " preset");
    return;
  }
  const auto& m = s.mla;
  model["attention"] = "mla";
  model["mla"] = {{"q_lora_rank", m.q_lora_rank},
                  {"kv_lora_rank", m.kv_lora_rank},
                  {"qk_nope_head_dim", m.qk_nope_head_dim},
                  {"qk_rope_head_dim", m.qk_rope_head_dim},
                  {"v_head_dim", m.v_head_dim}};
  if (s.moe.max_nodes_per_token > 0 && model.contains("moe")) {
    model["moe"]["max_nodes_per_token"] = s.moe.max_nodes_per_token;
    rr.assume("node-limited routing of the " + std::string(preset_id) + " preset (at most " +
              std::to_string(s.moe.max_nodes_per_token) + " nodes per token)");
  }
  rr.assume("num_kv_heads = '" + rr.cell("num_kv_heads") + "': multi-head latent attention with the " + preset_id +
            " preset's latent dimensions (q_lora_rank " + std::to_string(m.q_lora_rank) + ", kv_lora_rank " +
            std::to_string(m.kv_lora_rank) + ", qk_nope/rope/v head dims " + std::to_string(m.qk_nope_head_dim) + "/" +
            std::to_string(m.qk_rope_head_dim) + "/" + std::to_string(m.v_head_dim) + "); the row does not list them");
}

// Model details the CSV has no column for (attention head size when it is not hidden/heads,
// gpt-oss's clamped activation and expert biases): set from the model's config,
// stated as an assumption.
void read_config_caveats(RowReader& rr, json& model) {
  const std::string name = rr.cell("model_name");
  int head_dim = 0;
  const char* source = "";
  if (contains(name, "qwen3")) {
    head_dim = 128;
    source = "Qwen/Qwen3 config.json head_dim";
  } else if (contains(name, "gpt-oss")) {
    head_dim = 64;
    source = "openai/gpt-oss config.json head_dim";
  }
  if (contains(name, "gpt-oss") && model.contains("moe")) {
    // gpt-oss's clamped SwiGLU (swiglu_limit 7.0) and expert biases, as the gpt-oss-120b preset.
    model["moe"]["activation_clamp"] = 7.0;
    model["moe"]["expert_bias"] = true;
    rr.assume("gpt-oss experts: SwiGLU clamped at 7 (config.json swiglu_limit) and biased linears, run by "
              "Megatron-Core as eager clamp + cat and a per-expert bias add");
  }
  if (head_dim == 0 || !model.contains("hidden") || !model.contains("heads")) return;
  const int derived = model["hidden"].get<int>() / model["heads"].get<int>();
  if (derived == head_dim) return;
  model["head_dim"] = head_dim;
  rr.assume("attention head size " + std::to_string(head_dim) + " (" + source + "), not hidden/heads = " +
            std::to_string(derived) + "; the row does not list it");
}

// A cell's leading number with an optional SI suffix ("30.84M (model card)" -> 30.84e6,
// "15.6e12 (whole run)" -> 15.6e12); nullopt for "unknown" and text.
std::optional<double> leading_si(const std::string& cell) {
  std::string s = strip_notes(cell);
  if (auto sp = s.find_first_of(" ,;'"); sp != std::string::npos) s = s.substr(0, sp);
  auto v = parse_si(s);
  if (!v || !std::isfinite(*v) || *v <= 0) return std::nullopt;
  return v;
}

// GPU count used when a whole-run row does not publish it: LLaMA-1 65B's 2,048 A100 (Touvron et
// al. 2023, Sec. 2.4), the only cluster size the Llama 1/2 papers state.
constexpr int kAssumedWholeRunGpus = 2048;

// Whole-run rows: total GPU-hours and the run's tokens. The step scenario (with its own
// assumptions) gets the tokens; an unpublished GPU count is assumed and an unpublished layout is
// left to capplan. Reasons that block the per-step benchmark but not the whole run are ignored.
void read_whole_run(RowReader& rr, PublishedRun& run, const Catalogs& cat, const std::string& file) {
  const auto gpu_hours = leading_si(rr.cell("total_gpu_hours"));
  const auto tokens = leading_si(rr.cell("training_tokens"));
  if (!gpu_hours || !tokens) return;
  run.whole_run = true;
  run.measured_gpu_hours = *gpu_hours;
  std::vector<std::string> reasons;
  for (const auto& reason : rr.reasons()) {
    const bool not_blocking = reason.starts_with("whole-run aggregate") || reason.starts_with("GPU count not") ||
                              reason.starts_with("parallel layout not") || reason.starts_with("measured throughput") ||
                              reason.starts_with("scenario rejected");
    // A batch in tokens that is not whole sequences: the scenario's own rounding (with its warning).
    const auto batch_tokens = leading_si(rr.cell("global_batch_tokens"));
    if (reason == "global batch not published" && batch_tokens) continue;
    if (!not_blocking) reasons.push_back(reason);
  }
  json scenario = run.scenario;
  scenario["name"] = run.row_id + " " + run.model_name + " (whole run)";
  scenario["training"]["tokens"] = *tokens;
  if (!scenario["training"].contains("global_batch")) {
    if (const auto batch_tokens = leading_si(rr.cell("global_batch_tokens"))) {
      scenario["training"]["global_batch_tokens"] = *batch_tokens;
      run.whole_run_assumptions.push_back("global_batch_tokens = " + fmt(*batch_tokens) +
                                          " is not whole sequences: rounded as capplan estimate does");
    }
  }
  if (!scenario["cluster"].contains("gpus")) {
    scenario["cluster"]["gpus"] = kAssumedWholeRunGpus;
    run.whole_run_assumptions.push_back("num_gpus = '" + rr.cell("num_gpus") + "': " +
                                        std::to_string(kAssumedWholeRunGpus) +
                                        " assumed (LLaMA-1 65B's cluster, Touvron et al. 2023 Sec. 2.4)");
  }
  for (const char* col : {"tp", "pp", "dp"}) {
    if (!scenario["strategy"].contains(col)) {
      run.whole_run_assumptions.push_back("parallel layout not published: chosen by capplan");
      break;
    }
  }
  if (reasons.empty()) {
    auto parsed = parse_scenario(scenario, cat, file + "#" + run.row_id);
    if (!parsed) {
      const auto& d = parsed.error().front();
      reasons.push_back("scenario rejected: " + d.where + ": " + d.message);
    }
  }
  run.whole_run_scenario = std::move(scenario);
  run.whole_run_usable = reasons.empty();
  run.whole_run_skip_reason = detail::join(reasons, "; ");
}

PublishedRun read_row(const CsvRow& row, const std::map<std::string, std::size_t>& columns, const Catalogs& cat,
                      const std::string& file, Diagnostics& errors) {
  PublishedRun run;
  RowReader rr(row, columns, run);
  run.row_id = rr.cell("row_id");
  run.model_name = rr.cell("model_name");
  run.arch_type = rr.cell("arch_type");
  run.gpu_model = rr.cell("gpu_model");

  const bool moe_row = starts_with_word(run.arch_type, "moe");
  // DeepSeek rows write "MLA" (or "n/a (MLA)") where other rows give the KV head count.
  const bool mla_row = contains(rr.cell("num_kv_heads"), "mla") || starts_with_word(rr.cell("attention_notes"), "mla");
  const std::string kind = lower(rr.cell("measurement_kind"));
  if (kind.starts_with("full run") || kind.starts_with("cost rate")) {
    rr.skip("whole-run aggregate: needs the goodput model");
  }

  auto gpus = rr.integer("num_gpus");
  if (!gpus || *gpus < 1) rr.skip("GPU count not published");
  run.num_gpus = gpus.value_or(0);

  // Model dimensions.
  struct Dim {
    const char* column;
    const char* key;
  };
  constexpr Dim kDims[] = {{"num_layers", "layers"},   {"hidden_size", "hidden"},   {"num_attention_heads", "heads"},
                           {"num_kv_heads", "kv_heads"}, {"ffn_hidden_size", "ffn_hidden"}, {"vocab_size", "vocab"},
                           {"seq_len", "seq_len"}};
  json model{{"name", run.model_name}};
  std::vector<std::string> missing;
  for (const auto& d : kDims) {
    const std::string key = d.key;
    if (key == "kv_heads" && mla_row) continue;  // MLA: no separate key/value heads
    if (auto v = rr.integer(d.column); v && *v > 0) {
      model[d.key] = *v;
    } else if (!(key == "ffn_hidden" && moe_row)) {  // all-MoE rows: from the expert size below
      missing.push_back(std::string(d.column) + " = '" + rr.cell(d.column) + "'");
    }
  }
  if (!missing.empty()) rr.skip("model dimensions not published (" + detail::join(missing) + ")");
  const std::string act = rr.cell("ffn_activation");
  model["gated_ffn"] = contains(act, "swiglu") || contains(act, "geglu") || contains(act, "gated");
  const std::string name = rr.cell("model_name");
  if (contains(name, "grok-1") && !model["gated_ffn"].get<bool>()) {
    // xai-org/grok-1 model.py, MoELayer: gelu(linear(x)) * linear_v(x) -> linear_1, three matrices
    // per expert of ffn_size(6144, 8) = 32768; only the gated count reproduces the published 314B.
    model["gated_ffn"] = true;
    rr.assume("ffn_activation '" + act + "' read as gated GeLU (GeGLU): Grok-1's experts multiply gelu(linear) by "
              "linear_v (xai-org/grok-1 model.py), which is what reproduces its published 314B parameters");
  }
  if (moe_row) read_moe(rr, model);
  if (mla_row) read_mla(rr, cat, model);
  read_config_caveats(rr, model);
  if (contains(rr.cell("attention_notes"), "alternating") && contains(rr.cell("attention_notes"), "sliding window")) {
    static const std::regex kWindow(R"((\d+)-token sliding window)");
    std::smatch wm;
    const std::string notes = rr.cell("attention_notes");
    if (std::regex_search(notes, wm, kWindow)) {
      model["attention"] = "sliding_window";
      model["sliding_window"] = static_cast<int>(rr.number_in("attention_notes", wm.str(1), 1e8).value_or(1));
      model["sliding_window_every"] = 2;
      rr.assume("attention_notes '" + notes + "': every second layer attends within a " + wm.str(1) +
                "-token window, the others to the whole sequence");
    }
  }
  model["tied_embeddings"] = false;
  const std::string attention_text = rr.cell("attention_notes") + " " + rr.cell("framework");
  const auto year = publication_year(rr.cell("source"), rr.cell("source_url"));
  // The framework column names a recipe (data/frameworks.json); its defaults (kernels, loss,
  // gradient dtype, overlap, recompute, attention kernel, dropout, ...) apply through the scenario.
  const std::string framework = rr.cell("framework");
  const auto mapped = framework_recipe_for(framework, year, name);
  std::string recipe_id = mapped.value_or("megatron");
  if (recipe_id == "llm-foundry" && contains(rr.cell("source"), "llm-foundry") &&
      contains(rr.cell("source"), "benchmarking") && !contains(rr.cell("source_locator"), "large scale")) {
    // llm-foundry's benchmark README: its tables of 2023 (A100 in May, H100 in October) were run by
    // the v0.1-v0.3 benchmark scripts (recipe llm-foundry-2023: Triton FlashAttention); its "Large
    // Scale" table was added in January 2024 (5e85bd6) by sweep.py on main with flash-attn 2.
    recipe_id = "llm-foundry-2023";
  }
  const auto recipe = cat.framework_recipe(recipe_id);
  if (mapped) {
    rr.assume("framework '" + framework + "': recipe '" + recipe_id + "' (data/frameworks.json)");
  } else {
    rr.assume("framework '" + framework + "' has no recipe: 'megatron' (fused kernels, capplan's defaults)");
  }
  if (recipe && !recipe->flash_attention && year && *year <= 2022 && !contains(attention_text, "flash") &&
      !contains(attention_text, "sdpa")) {
    // The recipe does not know the attention kernel (the model code decides): FlashAttention
    // (arXiv:2205.14135) appeared in May 2022.
    model["flash_attention"] = false;
    rr.assume("published " + std::to_string(*year) +
              ", before fused (flash) attention was in use: unfused attention assumed");
  }
  // Norm and position embedding: from the attention notes where they say so, else the model
  // family (Llama-family models use RMSNorm and RoPE).
  // Families whose published configs use RMSNorm and rotary embeddings in every layer.
  constexpr std::pair<const char*, const char*> kFamilies[] = {
      {"llama", "Llama"}, {"mixtral", "Mixtral"}, {"mistral", "Mistral"}, {"qwen", "Qwen"},
      {"deepseek", "DeepSeek"}, {"gpt-oss", "gpt-oss"}, {"grok", "Grok"}};
  std::string family;
  for (const auto& [key, label] : kFamilies) {
    if (family.empty() && contains(name, key)) family = label;
  }
  model["rmsnorm"] = !family.empty() || contains(attention_text, "rmsnorm");
  model["rope"] = !family.empty() || contains(attention_text, "rope") || contains(attention_text, "rotary");
  if (family == "Llama") {
    rr.assume("Llama-family model: RMSNorm and RoPE");
  } else if (!family.empty()) {
    rr.assume(family + "-family model: RMSNorm and RoPE (its published config)");
  }
  const int seq_len = model.contains("seq_len") ? model["seq_len"].get<int>() : 0;

  // Batch and precision.
  json training{{"tokens", 1e12}};  // irrelevant for throughput; a full run is not modelled
  if (auto gb = rr.integer("global_batch_seqs"); gb && *gb > 0) {
    training["global_batch"] = *gb;
  } else if (auto gbt = rr.number("global_batch_tokens"); gbt && seq_len > 0 && std::fmod(*gbt, seq_len) == 0) {
    training["global_batch"] = static_cast<std::int64_t>(*gbt / seq_len);
    rr.assume("global batch = global_batch_tokens / seq_len = " + fmt(*gbt / seq_len) + " sequences");
  } else {
    rr.skip("global batch not published");
  }
  training["precision"] = map_precision(rr.cell("precision"), rr);
  if (training["precision"] == "fp8" && contains(lower(rr.cell("precision")), "current")) {
    // "FP8 current-scaling" (Megatron-Bridge's fp8 "cs": Transformer Engine's tensorwise
    // Float8CurrentScaling); other FP8 rows keep TE's DelayedScaling default.
    training["fp8_recipe"] = "current";
    rr.assume("precision '" + rr.cell("precision") + "': FP8 current (tensorwise) scaling, an amax pass before each cast");
  }
  training["framework"] = recipe_id;
  // NeMo AutoModel's benchmark configs with "kernel opts: TE" select Transformer Engine's fused
  // RMSNorm, attention and RoPE (examples/benchmark/configs/*_te_*.yaml: backend rms_norm: te,
  // attn: te, rope_fusion: true): a published setting over the recipe's eager kernels.
  const bool automodel_te = recipe_id == "nemo-automodel" && contains(rr.cell("other_settings"), "kernel opts: te");
  if (automodel_te) {
    training["kernels"] = "fused";
    rr.assume("framework '" + framework + "' with kernel opts TE: Transformer Engine's fused RMSNorm, RoPE and "
              "attention (NeMo AutoModel benchmark configs: rms_norm te, rope_fusion true)");
  }
  if ((recipe_id == "llm-foundry" || recipe_id == "llm-foundry-2023") && contains(rr.cell("precision"), "pure")) {
    // The row's FSDP mixed precision PURE (Composer get_mixed_precision): reductions in bf16.
    training["grad_reduce_in_fp32"] = false;
    rr.assume("precision '" + rr.cell("precision") + "': FSDP mixed precision PURE, gradients reduced in bf16");
  }

  // Hardware.
  json cluster;
  const std::size_t reasons_before = rr.reasons().size();
  auto gpu_id = map_gpu(run.gpu_model, cat, rr);
  if (!gpu_id && rr.reasons().size() == reasons_before) rr.skip("GPU '" + run.gpu_model + "' not in the catalog");
  int gpn = 8;
  if (auto v = rr.integer("gpus_per_node"); v && *v > 0) {
    gpn = *v;
  } else {
    rr.assume("gpus_per_node not published: 8 assumed");
  }
  if (gpu_id) cluster["gpu"] = *gpu_id;
  if (gpus) cluster["gpus"] = *gpus;
  cluster["gpus_per_node"] = gpn;
  cluster["inter_node_gbps_per_gpu"] = parse_network(rr.cell("inter_node_network"), gpn, gpu_id.value_or(""), rr);

  // Parallel layout.
  json strategy = json::object();
  std::vector<std::string> unpublished;
  for (const char* col : {"tp", "pp", "dp"}) {
    if (auto v = rr.integer(col); v && *v > 0) {
      strategy[col] = *v;
    } else {
      unpublished.push_back(std::string(col) + " = '" + rr.cell(col) + "'");
    }
  }
  if (!unpublished.empty()) rr.skip("parallel layout not published (" + detail::join(unpublished) + ")");
  // The CSV's sizes follow Megatron-Core: tp*pp*dp*cp = GPUs, ep within tp*dp*cp.
  if (auto cp = rr.integer("cp"); cp && *cp > 0) {
    strategy["cp"] = *cp;
  } else {
    strategy["cp"] = 1;
    rr.assume("cp = '" + rr.cell("cp") + "': 1 assumed");
  }
  if (auto ep = rr.integer("ep"); ep && *ep > 0) {
    strategy["ep"] = *ep;
  } else if (moe_row) {
    rr.assume("ep = '" + rr.cell("ep") + "': expert-parallel size left to capplan");
  }
  if (auto etp = rr.integer("etp"); etp && *etp > 0) {
    strategy["etp"] = *etp;
  } else if (moe_row && recipe && recipe->expert_tp_follows_tp.value_or(false)) {
    rr.assume("etp = '" + rr.cell("etp") + "': recipe '" + recipe_id +
              "' default (Megatron-Core: the tensor-parallel size when --expert-tensor-parallel-size is not given)");
  } else if (moe_row) {
    strategy["etp"] = 1;
    rr.assume("etp = '" + rr.cell("etp") + "': 1 assumed (experts not split by tensor parallelism)");
  }
  if (auto v = rr.integer("micro_batch_size"); v && *v > 0) {
    strategy["micro_batch"] = *v;
  } else {
    strategy["micro_batch"] = "auto";
  }
  if (auto v = rr.integer("virtual_pipeline_stages"); v && *v > 0) {
    strategy["virtual_stages"] = *v;
  } else {
    strategy["virtual_stages"] = "auto";
  }
  // An uneven pipeline stated in words ("first/last pipeline stages have one fewer transformer
  // layer", Llama 3, Dubey et al. 2024 Sec. 3.3.2: the stages holding the embedding and the output
  // layer get one layer less), mapped to Megatron-Core's --decoder-first/last-pipeline-num-layers.
  if (contains(rr.cell("other_settings"), "first/last pipeline stages have one fewer") && strategy.contains("pp") &&
      strategy["pp"].is_number_integer() && model.contains("layers")) {
    const int pp = strategy["pp"].get<int>();
    const int layers = model["layers"].get<int>();
    if (pp > 2 && (layers + 2) % pp == 0) {
      strategy["first_stage_layers"] = (layers + 2) / pp - 1;
      strategy["last_stage_layers"] = (layers + 2) / pp - 1;
      rr.assume("first and last pipeline stages " + std::to_string((layers + 2) / pp - 1) + " layers, the other " +
                std::to_string(pp - 2) + " stages " + std::to_string((layers + 2) / pp) + " (other_settings)");
    }
  }
  const std::string sp = rr.cell("sequence_parallel");
  if (starts_with_word(sp, "yes")) {
    strategy["sequence_parallel"] = true;
    rr.note_weak("sequence_parallel");
  } else if (starts_with_word(sp, "no")) {
    strategy["sequence_parallel"] = false;
  } else {
    strategy["sequence_parallel"] = "auto";
  }
  const std::string rc = rr.cell("activation_recompute");
  strategy["recompute"] = "auto";
  for (const char* word : {"none", "selective", "full"}) {
    if (starts_with_word(rc, word)) {
      strategy["recompute"] = word;
      rr.note_weak("activation_recompute");
    }
  }
  if (strategy["recompute"] == "auto" && recipe && recipe->recompute && *recipe->recompute != sim::Recompute::none) {
    // A preset that states its recompute (not an argument parser's "none", which says nothing
    // about what a large run used): the recipe's.
    strategy.erase("recompute");
    rr.assume("activation_recompute = '" + rc + "': recipe '" + recipe_id + "' (" + sim::to_string(*recipe->recompute) +
              ")");
  }
  if (auto z = map_zero(rr.cell("zero_or_fsdp"), rr)) {
    strategy["zero"] = *z;
  } else {
    strategy["zero"] = "auto";
  }
  if (model.contains("moe") && contains(rr.cell("other_settings"), "deepep")) {
    // A published DeepEP dispatch (NeMo AutoModel's *_te_deepep.yaml benchmark configs): fused
    // dispatch and combine, not Megatron-Core's all-to-all dispatcher.
    model["moe"]["dispatcher"] = "deepep";
    rr.assume("other_settings name DeepEP: tokens dispatched and combined by DeepEP's fused kernels (no separate "
              "probability all-to-all, token-count exchange or chunk sort)");
  }
  if (automodel_te && model.contains("moe") && strategy.contains("ep")) {
    // NeMo AutoModel's MoE benchmark configs route with FakeBalancedGate (fake_balanced_gate: true
    // in examples/benchmark/configs/*_te_deepep.yaml): token i goes to experts i*k .. i*k+k-1
    // (mod E). DeepEP sends a token over the network once per node that holds one of its experts,
    // so the network bytes follow the nodes these k consecutive experts span.
    const int nodes = fake_balanced_gate_nodes(model["moe"]["experts"].get<int>(), model["moe"]["top_k"].get<int>(),
                                               strategy["ep"].get<int>(), gpn);
    if (nodes > 0) {
      model["moe"]["max_nodes_per_token"] = nodes;
      std::erase_if(run.assumptions, [](const std::string& a) {
        return a.starts_with("node-limited routing") || a.starts_with("capacity_factor 1.0 (balanced routing)");
      });
      rr.assume("NeMo AutoModel benchmark routing (FakeBalancedGate, fake_balanced_gate: true): token i goes to "
                "experts i*k..i*k+k-1, which lie on " + std::to_string(nodes) +
                " node(s); DeepEP sends it over the network once per node; every expert gets exactly the same "
                "number of tokens (capacity_factor 1.0)");
    }
  }

  // Measured throughput, tokens/s per GPU.
  const bool derived_in_csv = contains(rr.cell("derived_fields"), "tokens_per_s_per_gpu");
  const auto step = rr.number("step_time_s");
  const auto tflops = rr.number("tflops_per_gpu");
  if (auto v = rr.number("tokens_per_s_per_gpu"); v && *v > 0) {
    run.measured_tokens_per_s_per_gpu = *v;
    run.measured_how = "tokens_per_s_per_gpu column" + std::string(derived_in_csv ? " (derived in the CSV)" : "");
  } else if (auto total = rr.number("tokens_per_s_total"); total && *total > 0 && gpus && *gpus > 0) {
    run.measured_tokens_per_s_per_gpu = *total / *gpus;
    run.measured_how = "tokens_per_s_total / num_gpus";
  } else if (step && *step > 0 && training.contains("global_batch") && seq_len > 0 && gpus && *gpus > 0) {
    run.measured_tokens_per_s_per_gpu =
        training["global_batch"].get<double>() * seq_len / *step / static_cast<double>(*gpus);
    run.measured_how = "global_batch_seqs x seq_len / step_time_s / num_gpus";
  } else if (tflops && *tflops > 0 && contains(rr.cell("tflops_definition"), "eq.3") && missing.empty()) {
    const double per_token = eq3_flops_per_token(model["layers"].get<double>(), model["hidden"].get<double>(),
                                                 model["seq_len"].get<double>(), model["vocab"].get<double>());
    run.measured_tokens_per_s_per_gpu = *tflops * 1e12 / per_token;
    run.measured_how =
        "tflops_per_gpu (" + fmt(*tflops) +
        ") / Narayanan et al. SC'21 Eq. 3 FLOPs per token, 96 l h^2 (1 + s/6h + V/16lh) (counts the recompute "
        "forward pass)";
    rr.assume("throughput derived from TFLOP/s through the source's Eq. 3, which assumes full recomputation");
  } else if (const auto params_b = rr.number("params_total_b");
             tflops && *tflops > 0 && params_b && *params_b > 0 && contains(rr.cell("mfu_definition"), "Chowdhery") &&
             contains(rr.cell("tflops_definition"), "model TFLOP/s") && missing.empty()) {
    const double heads = model["heads"].get<double>();
    const double head_dim = model.contains("head_dim") ? model["head_dim"].get<double>()
                                                       : model["hidden"].get<double>() / heads;
    const double per_token = chowdhery_flops_per_token(*params_b * 1e9, model["layers"].get<double>(),
                                                       heads * head_dim, model["seq_len"].get<double>());
    run.measured_tokens_per_s_per_gpu = *tflops * 1e12 / per_token;
    run.measured_how = "tflops_per_gpu (" + fmt(*tflops) +
                       ") / Chowdhery et al. 2022 App. B model FLOPs per token, 6N + 12 L H Q T (N = params_total_b)";
    rr.assume("throughput derived from model TFLOP/s through the source's MFU definition (Chowdhery et al.); N "
              "counted with the embeddings (params_total_b)");
  } else {
    rr.skip("measured throughput not derivable (no tokens/s, no step time, and TFLOP/s without a FLOP definition "
            "we can invert)");
  }

  run.scenario = json{{"name", run.row_id + " " + run.model_name},
                      {"model", model},
                      {"training", training},
                      {"cluster", cluster},
                      {"strategy", strategy}};

  // A row is usable only if capplan accepts its scenario as it stands.
  if (rr.reasons().empty()) {
    auto parsed = parse_scenario(run.scenario, cat, file + "#" + run.row_id);
    if (!parsed) {
      const auto& d = parsed.error().front();
      rr.skip("scenario rejected: " + d.where + ": " + d.message);
    }
  }
  // A throughput from tiny or huge cells (a step of 1e-300 s) is no measurement: never NaN or
  // Inf in the report.
  if (!std::isfinite(run.measured_tokens_per_s_per_gpu) || run.measured_tokens_per_s_per_gpu > 1e12) {
    rr.error("tokens_per_s_per_gpu", "the measured throughput (" + run.measured_how + ") is out of range; got " +
                                         fmt(run.measured_tokens_per_s_per_gpu) + " tokens/s per GPU");
  }
  run.usable = rr.reasons().empty();
  run.skip_reason = detail::join(rr.reasons(), "; ");
  read_whole_run(rr, run, cat, file);
  for (auto d : rr.errors()) {
    d.where = file + ":" + std::to_string(rr.line());
    errors.push_back(std::move(d));
  }
  return run;
}

}  // namespace

int fake_balanced_gate_nodes(int experts, int top_k, int ep, int gpus_per_node) {
  if (experts <= 0 || top_k <= 0 || top_k > experts || ep <= 0 || gpus_per_node <= 0) return 0;
  if (experts % ep != 0 || ep <= gpus_per_node) return 0;
  const int per_rank = experts / ep;
  int most = 0;
  // Token i starts at expert (i*k) mod E: E tokens cover every start the pattern takes.
  for (int i = 0; i < experts; ++i) {
    const long long first = (static_cast<long long>(i) * top_k) % experts;
    std::vector<int> nodes;
    for (int j = 0; j < top_k; ++j) {
      const int expert = static_cast<int>((first + j) % experts);
      const int node = (expert / per_rank) / gpus_per_node;
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
    most = std::max(most, static_cast<int>(nodes.size()));
  }
  return most;
}

Result<std::vector<PublishedRun>> load_published_runs(const std::filesystem::path& csv, const Catalogs& catalogs) {
  const std::string file = csv.filename().string();
  auto text = detail::read_text_file(csv, file);
  if (!text) return std::unexpected(std::move(text.error()));
  return parse_published_runs(*text, file, catalogs);
}

Result<std::vector<PublishedRun>> parse_published_runs(std::string_view text, const std::string& file,
                                                       const Catalogs& catalogs) {
  auto rows = parse_csv(text, file);
  if (!rows) return std::unexpected(std::move(rows.error()));
  if (rows->empty()) return fail(file, "malformed CSV: no header line");

  const CsvRow& header = rows->front();
  if (detail::is_vtrain_header(header)) return detail::vtrain_runs(*rows, catalogs, file);
  if (detail::is_finetune_header(header)) return detail::finetune_runs(*rows, catalogs, file);
  if (detail::is_hybrid_runs_header(header)) return detail::hybrid_runs(*rows, catalogs, file);
  std::map<std::string, std::size_t> columns;
  for (std::size_t i = 0; i < header.cells.size(); ++i) columns.emplace(trim(header.cells[i]), i);
  Diagnostics diags;
  for (const char* c : kColumns) {
    if (!columns.contains(c))
      diags.push_back({Diagnostic::Severity::error, file + ":1", "missing column '" + std::string(c) + "'"});
  }
  for (std::size_t i = 1; i < rows->size(); ++i) {
    const auto& r = (*rows)[i];
    if (r.cells.size() != header.cells.size()) {
      diags.push_back({Diagnostic::Severity::error, file + ":" + std::to_string(r.line),
                       "malformed CSV: expected " + std::to_string(header.cells.size()) +
                           " fields (as the header); got " + std::to_string(r.cells.size())});
    }
  }
  if (!diags.empty()) return std::unexpected(std::move(diags));

  std::vector<PublishedRun> runs;
  for (std::size_t i = 1; i < rows->size(); ++i) runs.push_back(read_row((*rows)[i], columns, catalogs, file, diags));
  if (!diags.empty()) return std::unexpected(std::move(diags));
  return runs;
}

}  // namespace capplan::data
