// SPDX-License-Identifier: Apache-2.0
// The published-runs table's cells: the conventions every column follows (numbers with notes,
// weak-source markers) and the free-text columns read as catalog ids and settings.
#include "validation/published_cells.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>

namespace capplan::data {
namespace published {

using detail::trim;

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
namespace {

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
}  // namespace

// The leading number of a cell ("8 (assumed)" -> 8, "50257 (padded 50432)" -> 50257); nullopt for
// "unknown", "n/a", "up to 147", "yes (...)". `out_of_range` is set for a number that does not
// fit a double.
std::optional<double> leading_number(const std::string& cell, bool* out_of_range) {
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
std::optional<int> leading_int(const std::string& cell, bool* out_of_range) {
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
namespace {

// Era default when the fabric is not published: HDR (200 Gbit/s per GPU) for A100, NDR (400)
// for Hopper and Blackwell, EDR (100) for Volta.
double default_network_gbps(const std::string& gpu_id) {
  if (gpu_id.starts_with("v100")) return 100;
  if (gpu_id.starts_with("a100") || gpu_id.starts_with("a800")) return 200;
  return 400;
}
}  // namespace

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


}  // namespace published

std::optional<std::string> framework_recipe_for(const std::string& framework, std::optional<int> year,
                                                const std::string& model_name) {
  for (const auto& f : published::kFrameworkNames) {
    if (!published::contains(framework, f.needle)) continue;
    if (f.until_year > 0 && !(year && *year <= f.until_year)) continue;
    // Megatron-Bridge's GPT-OSS presets carry their own recompute (a recipe of their own).
    if (std::string_view(f.recipe) == "megatron-bridge-perf" && published::contains(model_name, "gpt-oss")) {
      return "megatron-bridge-perf-gpt-oss";
    }
    return std::string(f.recipe);
  }
  return std::nullopt;
}

}  // namespace capplan::data
