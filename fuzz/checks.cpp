// SPDX-License-Identifier: Apache-2.0
#include "checks.hpp"

#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "capplan/calibrate/fit.hpp"
#include "capplan/data/catalog.hpp"
#include "capplan/data/price_sheet.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/published_runs.hpp"
#include "capplan/data/runs_io.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/data/serve_io.hpp"
#include "capplan/data/serving_validation.hpp"
#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/estimate.hpp"
#include "capplan/sim/workload/result.hpp"
#include "reading/json_reader.hpp"

namespace capplan::fuzz {
namespace {

namespace fs = std::filesystem;

void require(bool ok, const std::string& what) {
  if (!ok) throw InvariantBroken("capplan fuzz: invariant broken: " + what);
}

void require_finite(double v, const std::string& what) { require(std::isfinite(v), what + " is not finite"); }

// A failed parse names its problems: at least one diagnostic, each with a message (or a finding
// that says it).
void require_named(const Diagnostics& diags) {
  require(!diags.empty(), "a failed parse returned no diagnostic");
  for (const auto& d : diags) require(!d.message.empty() || d.finding.has_value(), "a diagnostic without a message");
  require(!to_string(diags).empty(), "the diagnostics print as nothing");
}

template <class T>
bool ok_or_named(const Result<T>& r) {
  if (!r) require_named(r.error());
  return r.has_value();
}

// The shipped catalogs (data/), read once per process.
const data::Catalogs& catalogs() {
  static const data::Catalogs c = [] {
    auto loaded = data::load_catalogs(fs::path(CAPPLAN_FUZZ_SOURCE_DIR) / "data");
    if (!loaded) throw std::runtime_error("capplan fuzz: cannot load data/: " + to_string(loaded.error()));
    return std::move(*loaded);
  }();
  return c;
}

void write_file(const fs::path& file, std::string_view text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("capplan fuzz: cannot write " + file.string());
}

// The text of tests/fixtures/data/good/<file>, read once (nullptr when there is no such file).
// Restoring a catalog by writing this text, not with fs::copy_file: the kernel copy under
// copy_file fails with EINTR when libFuzzer's timer signal lands in it, and copy_file does not
// retry (a harness failure at 6,181 executions, not a finding); ofstream's writes do.
const std::string* fixture_text(std::string_view file) {
  static std::map<std::string, std::optional<std::string>, std::less<>> cache;
  auto it = cache.find(file);
  if (it == cache.end()) {
    const fs::path good = fs::path(CAPPLAN_FUZZ_SOURCE_DIR) / "tests" / "fixtures" / "data" / "good" / file;
    std::optional<std::string> text;
    if (std::ifstream in(good, std::ios::binary); in) {
      text.emplace(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    it = cache.emplace(std::string(file), std::move(text)).first;
  }
  return it->second ? &*it->second : nullptr;
}

// A scratch folder with the small consistent catalogs of tests/fixtures/data/good, made once.
const fs::path& catalog_dir() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "capplan-fuzz-catalog-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("capplan fuzz: mkdtemp failed");
    for (const char* file : {"gpus.json", "instances.json", "models.json"}) {
      const std::string* text = fixture_text(file);
      if (text == nullptr) throw std::runtime_error(std::string("capplan fuzz: no fixture ") + file);
      write_file(fs::path(tmpl) / file, *text);
    }
    return fs::path(tmpl);
  }();
  return dir;
}

// A scenario accepted: finite, positive token counts and link bandwidths; with a complete layout
// (an "auto" one is a search, too slow per input) an estimate whose output has a number wherever
// the contract promises one (CONTRACT.md: estimate_to_json writes NaN and Inf as null) and an
// MFU in (0, 1].
void check_accepted(const data::ParsedScenario& parsed) {
  const sim::Scenario& s = parsed.scenario;
  // A serving scenario has no training section (`capplan serve` reads it; estimate refuses it):
  // its cluster is checked, the training figures are not promised.
  const bool serve = s.workload.kind == sim::WorkloadKind::serve;
  require(s.cluster.gpus > 0 && s.cluster.gpus_per_node > 0, "GPU counts");
  for (double bw : {s.cluster.intra_node_bandwidth.base(), s.cluster.inter_node_bandwidth.base()}) {
    require(std::isfinite(bw) && bw >= 0, "a link bandwidth");
  }
  if (serve) return;
  require(std::isfinite(s.training.tokens) && s.training.tokens >= 1, "training tokens");
  require_finite(s.training.global_batch_tokens, "global_batch_tokens");
  require(s.training.global_batch >= 0, "a negative global batch");
  if (!s.strategy.fully_specified()) return;
  const sim::DatasheetCost cost(s.cluster);
  const auto e = sim::estimate(s, cost);
  if (!ok_or_named(e)) return;
  const nlohmann::json out = data::estimate_to_json(*e, parsed);
  for (const char* key : {"step_time_s", "tokens_per_s", "mfu", "time_to_train_days", "gpu_hours",
                          "memory_per_gpu_bytes", "model_tflops_per_gpu"}) {
    require(out.contains(key) && out[key].is_number(), std::string("output ") + key + " is not a number");
  }
  const double mfu = out["mfu"].get<double>();
  require(mfu > 0 && mfu <= 1, "MFU " + std::to_string(mfu) + " outside (0, 1]");
}

void runs_as(std::string_view text, const char* name) {
  // The file lies in examples/from-runs, so the seeds' scenario paths name the shipped scenarios.
  const fs::path file = fs::path(CAPPLAN_FUZZ_SOURCE_DIR) / "examples" / "from-runs" / name;
  const auto runs = data::parse_runs(text, file, catalogs());
  if (!ok_or_named(runs)) return;
  for (const auto& run : runs->runs) {
    require(std::isfinite(run.value) && run.value > 0, "a run's measurement");
    require(run.scenario.cluster.gpu.id == runs->gpu_id, "a run on another GPU type than the file's");
  }
}

// What `parse` accepts, `write` writes and `parse` accepts again (a non-finite number written as
// null is refused there).
template <class Parse, class Write>
void reads_back(std::string_view text, const std::string& kind, Parse parse, Write write) {
  const auto first = parse(std::string(text), kind + ".json");
  if (!ok_or_named(first)) return;
  const auto again = parse(write(*first), "again.json");
  require(again.has_value(), kind + " accepted is refused after it is written: " +
                                 (again ? std::string() : to_string(again.error())));
}

}  // namespace

void check_json_reader(std::string_view text) {
  const auto j = data::detail::parse_json_text(text, "fuzz.json");
  if (!ok_or_named(j)) return;
  // What was read is written back and read again to the same document.
  const auto again = data::detail::parse_json_text(j->dump(), "again.json");
  require(again.has_value(), "a document read is not read again after dump()");
  require(*again == *j, "a document changes when written and read again");
}

// A serving scenario's workload as `capplan serve` reads it (not planned: a simulation per input
// is too slow): a rate, lengths and shares that are finite and in range, a replica of whole GPUs.
void check_serve(const nlohmann::json& doc, const data::ParsedScenario& parsed) {
  const auto request = data::serve_request(doc, parsed, catalogs());
  if (!ok_or_named(request)) return;
  const sim::ServeJob& j = request->job;
  const sim::Traffic& t = j.traffic;
  require(std::isfinite(t.rate) && t.rate >= 0, "a serving rate");
  for (double v : {t.input.mean, t.input.p95, t.output.mean, t.output.p95}) {
    require(std::isfinite(v) && v >= 0, "a serving length");
  }
  require(std::isfinite(t.prefix_hit) && t.prefix_hit >= 0 && t.prefix_hit < 1, "a prefix hit share");
  for (double h : t.hourly_load) require(std::isfinite(h) && h >= 0 && h <= 1, "an hourly load share");
  require(j.tp >= 1 && j.pp >= 1 && j.ep >= 1, "a replica's parallel sizes");
  require(std::isfinite(j.headroom) && j.headroom >= 0 && j.headroom < 1, "a serving headroom");
}

void check_scenario(std::string_view text) {
  const auto doc = data::parse_scenario_document(text, "scenario");
  if (!ok_or_named(doc)) return;
  const auto parsed = data::parse_scenario(*doc, catalogs(), "scenario");
  if (!ok_or_named(parsed)) return;
  check_accepted(*parsed);
  if (parsed->scenario.workload.kind == sim::WorkloadKind::serve) check_serve(*doc, *parsed);
}

void check_serving_runs(std::string_view text) {
  const auto runs = data::parse_serving_runs(text, "serving.csv", catalogs());
  if (!ok_or_named(runs)) return;
  for (const auto& run : *runs) {
    if (!run.usable) {
      require(!run.skip_reason.empty(), "an unusable serving row without a reason");
      continue;
    }
    require(!run.metrics.empty(), "a usable serving row without a measured figure");
    for (const auto& m : run.metrics) require(std::isfinite(m.value) && m.value > 0, "a measured serving figure");
  }
}

void check_profile(std::string_view text) {
  // profile_to_json writes a non-finite number as null, which parse_profile refuses.
  reads_back(text, "profile", data::parse_profile, data::profile_to_json);
}

void check_records(std::string_view text) {
  reads_back(text, "records", calib::parse_measurements, calib::measurements_to_json);
}

void check_published_runs(std::string_view text) {
  const auto runs = data::parse_published_runs(text, "runs.csv", catalogs());
  if (!ok_or_named(runs)) return;
  for (const auto& run : *runs) {
    if (run.usable) {
      // A fine-tuning row may be compared on its peak memory alone (no throughput published, or
      // a throughput cell that is no number): one of the two, each finite and never negative.
      const double tps = run.measured_tokens_per_s_per_gpu, mem = run.measured_peak_memory_gib;
      require(std::isfinite(tps) && tps >= 0 && std::isfinite(mem) && mem >= 0, "a usable row's measurements");
      require(tps > 0 || mem > 0, "a usable row without a measured throughput or peak memory");
      require(run.num_gpus > 0, "a usable row's GPU count");
    } else {
      require(!run.skip_reason.empty(), "an unusable row without a reason");
    }
    if (run.whole_run_usable) require_finite(run.measured_gpu_hours, "a whole run's GPU-hours");
  }
}

void check_price_sheet(std::string_view text) {
  const auto j = data::detail::parse_json_text(text, "prices.json");
  if (!ok_or_named(j)) return;
  const auto sheet = data::parse_price_sheet(*j, catalogs(), "prices.json");
  if (!ok_or_named(sheet)) return;
  auto price = [](const std::optional<double>& v, const char* what) {
    if (v) require(std::isfinite(*v) && *v >= 0, what);
  };
  for (const auto& row : sheet->rows) {
    price(row.on_demand_per_gpu_hour, "an on-demand price per GPU-hour");
    price(row.spot_per_gpu_hour, "a spot price per GPU-hour");
    price(row.spot_preemptions_per_node_hour, "spot preemptions per node-hour");
    price(row.reserved_per_gpu_hour, "a reserved price per GPU-hour");
    price(row.reserved_term_months, "a reserved term");
    price(row.monthly_per_node_month, "a monthly price per node");
    // 0: no rate given, which only a row without prices may have (the template's rows).
    const bool priced = row.on_demand_per_gpu_hour || row.spot_per_gpu_hour || row.reserved_per_gpu_hour ||
                        row.monthly_per_node_month;
    const double rate = row.currency.usd_per_unit;
    require(std::isfinite(rate) && (priced ? rate > 0 : rate >= 0), "an exchange rate");
  }
}

void check_runs(std::string_view text) {
  runs_as(text, "runs.json");
  runs_as(text, "runs.csv");
}

void check_catalog(std::string_view file, std::string_view text) {
  const fs::path& dir = catalog_dir();
  write_file(dir / file, text);
  const auto c = data::load_catalogs(dir);
  // The fixture file again, or no file (storage.json and frameworks.json are optional).
  if (const std::string* good = fixture_text(file)) {
    write_file(dir / file, *good);
  } else {
    std::error_code ec;
    fs::remove(dir / file, ec);
  }
  if (!ok_or_named(c)) return;
  for (const auto& g : c->gpus) {
    const double hbm = g.spec.hbm_capacity.base(), bw = g.spec.hbm_bandwidth.base();
    require(std::isfinite(hbm) && hbm > 0, "a GPU's memory");
    require(std::isfinite(bw) && bw > 0, "a GPU's memory bandwidth");
  }
}

std::span<const Target> targets() {
  static constexpr std::array<Target, 14> kTargets{{
      {"json_reader", check_json_reader},
      {"scenario", check_scenario},
      {"profile", check_profile},
      {"records", check_records},
      {"published_runs", check_published_runs},
      {"price_sheet", check_price_sheet},
      {"runs", check_runs},
      {"serving_runs", check_serving_runs},
      {"catalog_gpus", [](std::string_view t) { check_catalog("gpus.json", t); }},
      {"catalog_instances", [](std::string_view t) { check_catalog("instances.json", t); }},
      {"catalog_models", [](std::string_view t) { check_catalog("models.json", t); }},
      {"catalog_storage", [](std::string_view t) { check_catalog("storage.json", t); }},
      {"catalog_frameworks", [](std::string_view t) { check_catalog("frameworks.json", t); }},
      {"catalog_engines", [](std::string_view t) { check_catalog("engines.json", t); }},
  }};
  return kTargets;
}

}  // namespace capplan::fuzz
