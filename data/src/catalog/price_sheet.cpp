// SPDX-License-Identifier: Apache-2.0
// Price sheets (capplan/data/price_sheet.hpp): reading, merging over the catalog, mapping the
// purchase-model columns onto sim::PricingTerms, and the empty template.
#include "capplan/data/price_sheet.hpp"

#include <algorithm>
#include <cmath>

#include "capplan/data/currency.hpp"
#include "capplan/data/format.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data {
namespace {

using detail::Reader;
using nlohmann::json;

// Prices above these are typos (a per-node-month figure in a per-GPU-hour field, ...), in any
// currency's units (the largest rates to USD in use are well under 1e4 units per dollar).
constexpr double kMaxPerGpuHour = 1e7;
constexpr double kMaxPerNodeMonth = 1e11;

const std::vector<std::string> kSheetKeys = {"schema",  "currency", "usd_per_unit", "usd_per_unit_date", "date",
                                             "region",  "source",   "notes",        "prices"};
const std::vector<std::string> kRowKeys = {"instance", "name",   "on_demand",    "spot",
                                           "reserved", "monthly", "currency",     "usd_per_unit",
                                           "usd_per_unit_date",  "date", "region", "source", "notes"};

class SheetReader {
 public:
  SheetReader(const Catalogs& catalogs, std::string where, Diagnostics& diags)
      : cat_(catalogs), r_(std::move(where), diags) {}

  PriceSheet read(const json& j) {
    PriceSheet out;
    if (!r_.object(j, "")) return out;
    r_.unknown_keys(j, "", kSheetKeys);
    if (const json* s = r_.required(j, "", "schema", std::string(kPriceSheetSchema))) {
      if (!s->is_string() || s->get<std::string>() != kPriceSheetSchema) {
        r_.error("/schema", "must be \"" + std::string(kPriceSheetSchema) + "\"; got " + detail::describe(*s));
      }
    }
    currency(j, "", out.currency, nullptr);
    out.date = text(j, "", "date", true);
    out.region = text(j, "", "region", false);
    out.source = text(j, "", "source", false);
    text(j, "", "notes", false);
    const json* prices = r_.required(j, "", "prices", "a list of {\"instance\": ID, ...}");
    if (prices == nullptr || !r_.array(*prices, "/prices", "of instance rows")) return out;
    detail::for_each_object(*prices, "/prices", r_, [&](const json& row, const std::string& p) {
      if (auto parsed = read_row(row, p, out)) out.rows.push_back(std::move(*parsed));
    });
    return out;
  }

 private:
  // A string field; empty when absent or null. Dates must read YYYY-MM-DD.
  std::string text(const json& j, const std::string& p, std::string_view key, bool is_date) {
    const json* v = Reader::find(j, key);
    if (v == nullptr || v->is_null()) return {};
    auto s = r_.string(*v, detail::child(p, key));
    if (!s) return {};
    if (is_date && !detail::is_date(*s, false)) {
      r_.error(detail::child(p, key), "must be a date YYYY-MM-DD; got " + detail::describe(*v));
      return {};
    }
    return *s;
  }

  // currency / usd_per_unit / usd_per_unit_date at `p`; `inherit` (the sheet's, for a row) when
  // the object names no currency of its own or the same one without a rate.
  void currency(const json& j, const std::string& p, sim::Currency& out, const sim::Currency* inherit) {
    const json* code = Reader::find(j, "currency");
    const json* rate = Reader::find(j, "usd_per_unit");
    if (inherit != nullptr) out = *inherit;
    if (code != nullptr) {
      auto s = r_.string(*code, detail::child(p, "currency"));
      if (!s) return;
      if (!is_currency_code(*s)) {
        r_.error(detail::child(p, "currency"), currency_code_error(*s) + "; got " + detail::describe(*code));
        return;
      }
      if (inherit == nullptr || *s != inherit->code || rate != nullptr) {
        out = sim::Currency{};
        out.code = *s;
      }
    }
    if (const std::string date = text(j, p, "usd_per_unit_date", true); !date.empty()) out.rate_date = date;
    if (rate != nullptr && !rate->is_null()) {
      if (auto v = r_.number(*rate, detail::child(p, "usd_per_unit"), 0, 1e6, true)) {
        if (out.is_usd() && *v != 1.0) {
          r_.error(detail::child(p, "usd_per_unit"),
                   "must be 1 (or absent) with currency USD; got " + detail::describe(*rate));
        } else {
          out.usd_per_unit = *v;
        }
      }
    } else if (!out.is_usd() && (inherit == nullptr || out.code != inherit->code)) {
      out.usd_per_unit = 0;  // unknown: an error once a row gives a price in it (a template has none)
      rate_pointer_ = detail::child(p, "usd_per_unit");
    }
  }
  std::string rate_pointer_ = "/usd_per_unit";  // where the missing rate of the last currency read belongs

  // A price: null = not given; else a positive finite number up to `hi`.
  std::optional<double> price(const json& obj, const std::string& p, std::string_view key, double hi) {
    const json* v = Reader::find(obj, key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    return r_.number(*v, detail::child(p, key), 0, hi, true);
  }

  // {"per_gpu_hour": x} or {"per_node_hour": y} (one of them), per GPU-hour; null = not given.
  std::optional<double> hourly(const json& col, const std::string& p, int gpus_per_node) {
    auto gpu = price(col, p, "per_gpu_hour", kMaxPerGpuHour);
    auto node = price(col, p, "per_node_hour", kMaxPerGpuHour * 1024);
    if (gpu && node) {
      r_.error(p, "give per_gpu_hour or per_node_hour, not both; got " + detail::describe(col));
      return std::nullopt;
    }
    if (node && gpus_per_node > 0) return *node / gpus_per_node;
    return gpu;
  }

  // The column `key` of a row: an object (null = the column is not given).
  const json* column(const json& row, const std::string& p, std::string_view key,
                     const std::vector<std::string>& keys) {
    const json* col = Reader::find(row, key);
    if (col == nullptr || col->is_null()) return nullptr;
    if (!r_.object(*col, detail::child(p, key))) return nullptr;
    r_.unknown_keys(*col, detail::child(p, key), keys);
    return col;
  }

  std::optional<PriceSheetRow> read_row(const json& row, const std::string& p, const PriceSheet& sheet) {
    r_.unknown_keys(row, p, kRowKeys);
    PriceSheetRow out;
    out.pointer = p;
    const json* id = r_.required(row, p, "instance", "a catalog instance id, e.g. tencent-hccpnv5");
    if (id == nullptr) return std::nullopt;
    auto s = r_.string(*id, detail::child(p, "instance"));
    if (!s) return std::nullopt;
    const InstanceEntry* inst = cat_.find_instance(*s);
    if (inst == nullptr) {
      std::vector<std::string> ids;
      for (const auto& i : cat_.instances) ids.push_back(i.id);
      r_.error(detail::child(p, "instance"), "unknown instance '" + *s + "' (" + suggest(*s, ids) + ")");
      return std::nullopt;
    }
    for (const auto& other : sheet.rows) {
      if (other.instance == *s) {
        r_.error(detail::child(p, "instance"), "instance '" + *s + "' already priced at " + other.pointer + "; got " +
                                           detail::describe(*id));
        return std::nullopt;
      }
    }
    out.instance = *s;
    out.gpus_per_node = inst->gpus_per_node;
    text(row, p, "name", false);
    text(row, p, "notes", false);
    rate_pointer_ = "/usd_per_unit";
    currency(row, p, out.currency, &sheet.currency);
    const std::string date = text(row, p, "date", true);
    const std::string region = text(row, p, "region", false);
    const std::string source = text(row, p, "source", false);
    out.date = date.empty() ? sheet.date : date;
    out.region = region.empty() ? sheet.region : region;
    out.source = source.empty() ? sheet.source : source;
    const int g = inst->gpus_per_node;
    if (const json* c = column(row, p, "on_demand", {"per_gpu_hour", "per_node_hour"})) {
      out.on_demand_per_gpu_hour = hourly(*c, detail::child(p, "on_demand"), g);
    }
    if (const json* c = column(row, p, "spot", {"per_gpu_hour", "per_node_hour", "preemptions_per_node_hour"})) {
      out.spot_per_gpu_hour = hourly(*c, detail::child(p, "spot"), g);
      if (const json* v = Reader::find(*c, "preemptions_per_node_hour"); v != nullptr && !v->is_null()) {
        const std::string at = detail::child(detail::child(p, "spot"), "preemptions_per_node_hour");
        out.spot_preemptions_per_node_hour = r_.number(*v, at, 0, 1, false);
      }
    }
    if (const json* c = column(row, p, "reserved", {"per_gpu_hour", "per_node_hour", "term_months"})) {
      out.reserved_per_gpu_hour = hourly(*c, detail::child(p, "reserved"), g);
      out.reserved_term_months = price(*c, detail::child(p, "reserved"), "term_months", 240);
    }
    if (const json* c = column(row, p, "monthly", {"per_node_month"})) {
      out.monthly_per_node_month = price(*c, detail::child(p, "monthly"), "per_node_month", kMaxPerNodeMonth);
    }
    const bool priced = out.on_demand_per_gpu_hour || out.spot_per_gpu_hour || out.reserved_per_gpu_hour ||
                        out.monthly_per_node_month;
    if (priced && !(out.currency.usd_per_unit > 0)) {
      r_.error(rate_pointer_, "required with currency " + out.currency.code + " (US dollars per " + out.currency.code +
                                  ", e.g. 0.14) is missing; " + p + " (" + out.instance + ") gives prices in it");
    }
    return out;
  }

  const Catalogs& cat_;
  Reader r_;
};

// "CNY 12.5 per GPU-hour": a sheet figure in its own currency, for notes.
std::string figure(double v, const sim::Currency& c, std::string_view unit) {
  return c.code + " " + format::in_sentence(v, 4) + " " + std::string(unit);
}

// The note for a purchase model the sheet's row has no column for.
std::string lacks_column(const std::string& instance, const std::string& column, sim::PurchaseModel model) {
  return "the price sheet's row for " + instance + " has no " + column + " column, so the " + sim::to_string(model) +
         " price is unknown";
}

}  // namespace

const PriceSheetRow* PriceSheet::find(std::string_view instance) const {
  for (const auto& r : rows) {
    if (r.instance == instance) return &r;
  }
  return nullptr;
}

Result<PriceSheet> parse_price_sheet(const json& j, const Catalogs& catalogs, std::string_view where) {
  Diagnostics diags;
  PriceSheet out = SheetReader(catalogs, std::string(where), diags).read(j);
  if (!diags.empty()) return std::unexpected(std::move(diags));
  out.file = std::string(where);
  return out;
}

Result<PriceSheet> load_price_sheet(const std::filesystem::path& file, const Catalogs& catalogs) {
  const std::string where = file.string();
  auto text = detail::read_text_file(file, where);
  if (!text) return std::unexpected(std::move(text.error()));
  auto j = detail::parse_json_text(*text, where);
  if (!j) return std::unexpected(std::move(j.error()));
  return parse_price_sheet(*j, catalogs, where);
}

void merge_price_sheet(Catalogs& catalogs, const PriceSheet& sheet) {
  for (auto& inst : catalogs.instances) {
    const PriceSheetRow* row = sheet.find(inst.id);
    if (row == nullptr) continue;
    InstancePrice p;
    p.usd_per_gpu_hour = row->on_demand_per_gpu_hour;  // in row->currency (the catalog's field name)
    p.type = "sheet";
    p.region = row->region;
    p.date = row->date;
    p.currency = row->currency.code;
    if (!row->currency.is_usd()) p.usd_per_unit = row->currency.usd_per_unit;
    p.sources = {sheet.file + (row->source.empty() ? "" : " (" + row->source + ")")};
    p.confidence = "user";
    inst.price = std::move(p);
  }
}

std::vector<std::string> apply_price_sheet_terms(sim::PricingTerms& terms, const PriceSheetRow& row,
                                                 bool take_currency) {
  std::vector<std::string> notes;
  const double rate = row.currency.usd_per_unit;
  const std::string from = "from the price sheet (" + row.instance + ": ";
  auto lacks = [&](const std::string& column) { notes.push_back(lacks_column(row.instance, column, terms.model)); };
  bool took = false;
  switch (terms.model) {
    case sim::PurchaseModel::spot:
      if (!terms.spot.usd_per_gpu_hour) {
        if (row.spot_per_gpu_hour) {
          terms.spot.usd_per_gpu_hour = *row.spot_per_gpu_hour * rate;
          notes.push_back("spot price " + from + figure(*row.spot_per_gpu_hour, row.currency, "per GPU-hour") + ")");
          took = true;
        } else {
          lacks("spot");
        }
      }
      if (!terms.spot.preemptions_per_node_hour && row.spot_preemptions_per_node_hour) {
        terms.spot.preemptions_per_node_hour = row.spot_preemptions_per_node_hour;
        notes.push_back("spot preemptions " + from + format::in_sentence(*row.spot_preemptions_per_node_hour, 4) +
                        " per node-hour)");
      }
      break;
    case sim::PurchaseModel::reserved:
      if (terms.reserved.usd_per_gpu_hour) break;
      if (row.reserved_per_gpu_hour) {
        terms.reserved.usd_per_gpu_hour = *row.reserved_per_gpu_hour * rate;
        if (!terms.reserved.term_hours && row.reserved_term_months) {
          terms.reserved.term_hours = *row.reserved_term_months * sim::kBillingHoursPerMonth;
        }
        notes.push_back("reserved price " + from + figure(*row.reserved_per_gpu_hour, row.currency, "per GPU-hour") +
                        (row.reserved_term_months ? ", " + format::in_sentence(*row.reserved_term_months, 2) + " months"
                                                  : std::string()) +
                        ")");
        took = true;
      } else if (row.monthly_per_node_month && row.gpus_per_node > 0) {
        // A monthly subscription: reserved, bought in whole months (sim/ rounds the run up).
        terms.reserved.usd_per_gpu_hour =
            *row.monthly_per_node_month * rate / row.gpus_per_node / sim::kBillingHoursPerMonth;
        if (!terms.reserved.term_hours) terms.reserved.term_block_hours = sim::kBillingHoursPerMonth;
        notes.push_back("reserved as a monthly subscription " + from +
                        figure(*row.monthly_per_node_month, row.currency, "per node-month") +
                        ", paid in whole months)");
        took = true;
      } else {
        lacks("reserved or monthly");
      }
      break;
    case sim::PurchaseModel::on_demand:
    case sim::PurchaseModel::on_prem: break;  // on demand: merged into the catalog; on premises: not a rental
  }
  if (took && take_currency) terms.currency = row.currency;
  return notes;
}

std::vector<std::string> apply_price_sheet_to_offerings(std::vector<sim::Offering>& offerings,
                                                        const PriceSheet& sheet) {
  std::vector<std::string> notes;
  for (auto& o : offerings) {
    const PriceSheetRow* row = sheet.find(o.instance_id);
    if (row == nullptr) continue;
    if (!o.pricing) o.pricing = sim::PricingTerms{};
    if (o.price_type == "user" && row->on_demand_per_gpu_hour) {
      notes.push_back("the price given for " + o.instance_id + " replaces the price sheet's on-demand " +
                      figure(*row->on_demand_per_gpu_hour, row->currency, "per GPU-hour"));
    }
    if (o.pricing->model == sim::PurchaseModel::on_demand && !o.node.price_per_gpu) {
      notes.push_back(lacks_column(o.instance_id, "on_demand", o.pricing->model));
    }
    const bool currency_set = !o.pricing->currency.is_usd();
    for (auto& n : apply_price_sheet_terms(*o.pricing, *row, !currency_set)) notes.push_back(std::move(n));
  }
  return notes;
}

std::vector<std::string> apply_price_sheet_to_scenario(sim::Scenario& scenario, const PriceSheet& sheet,
                                                       bool currency_given) {
  const sim::Cluster& c = scenario.cluster;
  if (c.instance_id.empty()) {
    return {"the price sheet " + sheet.file + " prices instances; the scenario's cluster names none"};
  }
  const PriceSheetRow* row = sheet.find(c.instance_id);
  if (row == nullptr) {
    return {"the price sheet " + sheet.file + " has no row for " + c.instance_id + ": the catalog's price applies"};
  }
  std::vector<std::string> notes;
  if (c.price_source == "scenario pricing" && c.price_per_gpu) {
    if (row->on_demand_per_gpu_hour) {
      notes.push_back("the scenario's pricing.usd_per_gpu_hour applies, not the price sheet's on-demand " +
                      figure(*row->on_demand_per_gpu_hour, row->currency, "per GPU-hour") + " for " + c.instance_id);
    }
  } else if (row->on_demand_per_gpu_hour) {
    std::string where;
    for (const auto* part : {&row->region, &row->date}) {
      if (!part->empty()) where += ", " + *part;
    }
    notes.push_back("on-demand price of " + c.instance_id + " from the price sheet " + sheet.file + " (" +
                    figure(*row->on_demand_per_gpu_hour, row->currency, "per GPU-hour") + where + ")");
  } else if (scenario.pricing.model == sim::PurchaseModel::on_demand) {
    notes.push_back(lacks_column(c.instance_id, "on_demand", scenario.pricing.model));
  }
  for (auto& n : apply_price_sheet_terms(scenario.pricing, *row, !currency_given)) notes.push_back(std::move(n));
  return notes;
}

std::vector<std::string> apply_price_sheet_rates(sim::Scenario& scenario, const PriceSheet& sheet, bool currency_given) {
  std::vector<std::string> notes = apply_price_sheet_to_scenario(scenario, sheet, currency_given);
  const PriceSheetRow* row = scenario.cluster.instance_id.empty() ? nullptr : sheet.find(scenario.cluster.instance_id);
  if (row == nullptr) return notes;
  for (const sim::PurchaseModel m : {sim::PurchaseModel::spot, sim::PurchaseModel::reserved}) {
    if (m == scenario.pricing.model) continue;  // filled above, with the scenario's own model
    sim::PricingTerms other = scenario.pricing;
    other.model = m;
    for (auto& n : apply_price_sheet_terms(other, *row, false)) notes.push_back(std::move(n));
    if (m == sim::PurchaseModel::spot) scenario.pricing.spot = other.spot;
    if (m == sim::PurchaseModel::reserved) scenario.pricing.reserved = other.reserved;
  }
  return notes;
}

Result<PricedScenario> parse_priced_scenario(const json& doc, const Catalogs& catalogs, std::string_view scenario_file,
                                             const std::string& sheet_file, std::string_view where) {
  PricedScenario out;
  std::optional<std::filesystem::path> file;
  if (!sheet_file.empty()) {
    file = sheet_file;
  } else if (doc.is_object()) {
    file = scenario_price_sheet(doc, scenario_file);
  }
  std::optional<PriceSheet> sheet;
  if (file) {
    out.merged = catalogs;
    auto loaded = load_price_sheet(*file, *out.merged);
    if (!loaded) return std::unexpected(std::move(loaded.error()));
    merge_price_sheet(*out.merged, *loaded);
    out.sheet = file->string();
    sheet = std::move(*loaded);
  }
  auto parsed = parse_scenario(doc, out.catalogs(catalogs), where);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  out.parsed = std::move(*parsed);
  if (sheet) {
    const json* pricing = Reader::find(doc, "pricing");
    const bool currency_given = pricing != nullptr && pricing->is_object() && Reader::find(*pricing, "currency") != nullptr;
    out.sheet_notes = apply_price_sheet_to_scenario(out.parsed.scenario, *sheet, currency_given);
  }
  return out;
}

std::optional<std::filesystem::path> scenario_price_sheet(const json& scenario, std::string_view scenario_file) {
  const json* pricing = Reader::find(scenario, "pricing");
  const json* sheet = pricing == nullptr ? nullptr : Reader::find(*pricing, "sheet");
  if (sheet == nullptr || !sheet->is_string() || sheet->get<std::string>().empty()) return std::nullopt;
  std::filesystem::path p = sheet->get<std::string>();
  if (p.is_absolute() || scenario_file.empty() || scenario_file == "-") return p;
  return std::filesystem::path(scenario_file).parent_path() / p;
}

Result<nlohmann::ordered_json> price_sheet_template(const Catalogs& catalogs, std::string_view provider) {
  using ordered = nlohmann::ordered_json;
  ordered rows = ordered::array();
  std::vector<std::string> providers;
  for (const auto& inst : catalogs.instances) {
    if (std::find(providers.begin(), providers.end(), inst.provider) == providers.end()) {
      providers.push_back(inst.provider);
    }
    if (inst.provider != provider) continue;
    ordered row = ordered::object();
    row["instance"] = inst.id;
    row["name"] = inst.name + " (" + std::to_string(inst.gpus_per_node) + " x " + inst.gpu + ")";
    row["on_demand"] = {{"per_node_hour", nullptr}};
    row["spot"] = {{"per_node_hour", nullptr}, {"preemptions_per_node_hour", nullptr}};
    row["reserved"] = {{"per_node_hour", nullptr}, {"term_months", nullptr}};
    row["monthly"] = {{"per_node_month", nullptr}};
    rows.push_back(std::move(row));
  }
  if (provider.empty()) {
    return fail("--provider", "required: the provider whose instances to list (" + suggest("", providers) + ")");
  }
  if (rows.empty()) {
    return fail("--provider",
                "unknown provider '" + std::string(provider) + "' (" + suggest(provider, providers) + ")");
  }
  ordered out = ordered::object();
  out["schema"] = kPriceSheetSchema;
  out["notes"] =
      "Prices in `currency` units (USD per unit in usd_per_unit, read on usd_per_unit_date); null = not given. "
      "Per row: on_demand/spot/reserved per_node_hour (or per_gpu_hour), spot preemptions_per_node_hour, "
      "reserved term_months, monthly per_node_month (a monthly subscription, paid in whole months); a row may "
      "override currency, usd_per_unit, date, region and source. Use with capplan estimate/search --prices FILE "
      "or the scenario's pricing.sheet (README: Keeping negotiated prices).";
  out["currency"] = provider == "tencent" || provider == "alibaba" ? "CNY" : "USD";
  out["usd_per_unit"] = nullptr;
  out["usd_per_unit_date"] = nullptr;
  out["date"] = nullptr;
  out["region"] = nullptr;
  out["source"] = nullptr;
  out["prices"] = std::move(rows);
  return out;
}

}  // namespace capplan::data
