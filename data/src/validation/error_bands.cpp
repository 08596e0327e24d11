// SPDX-License-Identifier: Apache-2.0
// Reads, validates and writes data/error_bands.json (format in capplan/data/error_bands.hpp).
#include "capplan/data/error_bands.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>

#include "reading/json_reader.hpp"

namespace capplan::data {

namespace {

using detail::json;
using detail::Reader;

// 3: each category's band (log_ratio_low/high, sim::band_quantiles) beside its p10/p90.
// 2: categories cut by scale ("dense/megatron/<=8", "dense/<=8"). Schema-1 and -2 files read as
// well: their categories are among schema 3's, and a category without a band takes p10-p90 as
// its band (what those versions did).
constexpr int kSchema = 3;
constexpr int kOldSchemas[] = {1, 2};
// |ln(measured/predicted)| beyond 5 (a factor of ~150) is a broken file, not a residual.
constexpr detail::Range kLogRatio{-5, 5, false};

constexpr const char* kArchs[] = {"dense", "moe"};
constexpr sim::Framework kFrameworks[] = {sim::Framework::megatron, sim::Framework::pytorch};

// Every category a table can hold: all, and each arch's fallback chain over framework x scale.
const std::vector<std::string>& known_categories() {
  static const std::vector<std::string> kKnown = [] {
    std::vector<std::string> known = {sim::kAllCategory};
    for (const char* arch : kArchs) {
      for (const sim::Framework f : kFrameworks) {
        for (const char* scale : sim::kScaleBuckets) {
          for (auto& c : sim::category_fallbacks(std::string(arch) + "/" + sim::to_string(f) + "/" + scale)) {
            if (std::find(known.begin(), known.end(), c) == known.end()) known.push_back(std::move(c));
          }
        }
      }
    }
    return known;
  }();
  return kKnown;
}

bool valid_category(const std::string& c) {
  const auto& known = known_categories();
  return std::find(known.begin(), known.end(), c) != known.end();
}

constexpr detail::Field<sim::ResidualQuantiles> kCategoryFields[] = {
    {"category", detail::Kind::string, detail::Need::required, false, {},
     "all, <arch>, <arch>/<scale>, <arch>/<framework> or <arch>/<framework>/<scale>",
     [](sim::ResidualQuantiles& q, const json& v, Reader& r, const std::string& p) {
       q.category = v.get<std::string>();
       if (!valid_category(q.category)) {
         r.error(p, "unknown category '" + q.category + "' (" + suggest(q.category, known_categories()) + ")");
       }
     }},
    {"n", detail::Kind::integer, detail::Need::required, false, {1, 1e9, false}, "validated runs in this category",
     [](sim::ResidualQuantiles& q, const json& v, Reader&, const std::string&) {
       q.n = static_cast<int>(v.get<double>());
     }},
    {"log_ratio_p10", detail::Kind::number, detail::Need::required, false, kLogRatio, "p10 of ln(measured/predicted)",
     detail::store<&sim::ResidualQuantiles::log_ratio_p10>},
    {"log_ratio_p90", detail::Kind::number, detail::Need::required, false, kLogRatio, "p90 of ln(measured/predicted)",
     detail::store<&sim::ResidualQuantiles::log_ratio_p90>},
    {"log_ratio_low", detail::Kind::number, detail::Need::optional, false, kLogRatio,
     "the band's low end: the 80% of runs nearest the model where p10-p90 lies on one side of it (default p10)",
     detail::store<&sim::ResidualQuantiles::log_ratio_low>},
    {"log_ratio_high", detail::Kind::number, detail::Need::optional, false, kLogRatio,
     "the band's high end (default p90)", detail::store<&sim::ResidualQuantiles::log_ratio_high>},
};

void read_categories(ErrorBands& bands, const json& list, Reader& r, const std::string& path) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = detail::child(path, i);
    const auto before = r.count();
    sim::ResidualQuantiles q;
    q.log_ratio_low = q.log_ratio_high = std::numeric_limits<double>::quiet_NaN();  // absent until read
    detail::read_fields<sim::ResidualQuantiles>(list[i], p, kCategoryFields, q, r);
    if (r.count() != before) continue;
    if (q.log_ratio_p10 > q.log_ratio_p90) {
      r.error(detail::child(p, "log_ratio_p90"),
              "must be >= log_ratio_p10 (" + detail::fmt(q.log_ratio_p10) + "); got " + detail::fmt(q.log_ratio_p90));
      continue;
    }
    if (std::isnan(q.log_ratio_low)) q.log_ratio_low = q.log_ratio_p10;
    if (std::isnan(q.log_ratio_high)) q.log_ratio_high = q.log_ratio_p90;
    if (q.log_ratio_low > q.log_ratio_high) {
      r.error(detail::child(p, "log_ratio_high"), "must be >= log_ratio_low (" + detail::fmt(q.log_ratio_low) +
                                                      "); got " + detail::fmt(q.log_ratio_high));
      continue;
    }
    auto [it, inserted] = first.emplace(q.category, i);
    if (!inserted) {
      r.error(detail::child(p, "category"), "duplicate category '" + q.category + "' (first at #" + path + "/" +
                                                std::to_string(it->second) + ")");
      continue;
    }
    bands.table.categories.push_back(std::move(q));
  }
}

constexpr detail::Field<ErrorBands> kTopFields[] = {
    {"schema", detail::Kind::integer, detail::Need::required, false, {1, 1e9, false},
     "file schema version, 3 (1 and 2 read too)",
     [](ErrorBands&, const json& v, Reader& r, const std::string& p) {
       const bool old = v.is_number_integer() && std::find(std::begin(kOldSchemas), std::end(kOldSchemas),
                                                           v.get<std::int64_t>()) != std::end(kOldSchemas);
       if (!old) r.schema_version(v, p, kSchema);
     }},
    {"generated", detail::Kind::string, detail::Need::required, false, {}, "date the table was generated, YYYY-MM-DD",
     [](ErrorBands& b, const json& v, Reader& r, const std::string& p) {
       b.generated = v.get<std::string>();
       if (!detail::is_date(b.generated, false)) r.error(p, "must be a date YYYY-MM-DD; got " + detail::describe(v));
     }},
    {"source", detail::Kind::string, detail::Need::required, false, {},
     "the command and data set that produced the table",
     detail::store<&ErrorBands::source>},
    {"method", detail::Kind::string, detail::Need::required, false, {}, "how the quantiles were computed",
     detail::store<&ErrorBands::method>},
    {"leave_one_out_coverage", detail::Kind::number, detail::Need::optional, true, {0, 1, false},
     "share of validated rows inside their leave-one-out p10-p90 interval, 0-1",
     detail::store<&ErrorBands::leave_one_out_coverage>},
    {"categories", detail::Kind::array, detail::Need::required, false, {},
     "one {category, n, log_ratio_p10, log_ratio_p90, log_ratio_low, log_ratio_high} per category",
     read_categories},
};

}  // namespace

std::filesystem::path error_bands_path(const std::filesystem::path& data_dir) { return data_dir / kErrorBandsFile; }

Result<ErrorBands> error_bands_from_json(const json& doc, const std::string& where) {
  Diagnostics diags;
  Reader r(where, diags);
  ErrorBands bands;
  detail::read_fields<ErrorBands>(doc, "", kTopFields, bands, r);
  if (has_errors(diags)) return std::unexpected(std::move(diags));
  return bands;
}

Result<ErrorBands> parse_error_bands_text(std::string_view text, const std::string& where) {
  auto doc = detail::parse_json_text(text, where);
  if (!doc) return std::unexpected(std::move(doc.error()));
  return error_bands_from_json(*doc, where);
}

Result<std::optional<ErrorBands>> load_error_bands(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::optional<ErrorBands>{};
  const std::string where = file.filename().string();
  auto text = detail::read_text_file(file, where);
  if (!text) return std::unexpected(std::move(text.error()));
  auto bands = parse_error_bands_text(*text, where);
  if (!bands) return std::unexpected(std::move(bands.error()));
  return std::optional<ErrorBands>(std::move(*bands));
}

nlohmann::ordered_json error_bands_to_json(const ErrorBands& bands) {
  using ojson = nlohmann::ordered_json;
  ojson categories = ojson::array();
  for (const auto& q : bands.table.categories) {
    categories.push_back(
        {{"category", q.category},
         {"n", q.n},
         {"log_ratio_p10", q.log_ratio_p10},
         {"log_ratio_p90", q.log_ratio_p90},
         {"log_ratio_low", q.log_ratio_low},
         {"log_ratio_high", q.log_ratio_high}});
  }
  return {{"schema", kSchema},
          {"generated", bands.generated},
          {"source", bands.source},
          {"method", bands.method},
          {"leave_one_out_coverage",
           bands.leave_one_out_coverage && std::isfinite(*bands.leave_one_out_coverage)
               ? ojson(*bands.leave_one_out_coverage)
               : ojson(nullptr)},
          {"categories", categories}};
}

}  // namespace capplan::data
