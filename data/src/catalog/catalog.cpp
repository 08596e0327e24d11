// SPDX-License-Identifier: Apache-2.0
// Loads the catalog files (schema in data/README.md) into plain sim structs. Two passes
// (STYLE.md 4.9): per record (required, type, range, unknown keys; the record readers are in
// hardware_records.cpp, model_records.cpp and recipe_records.cpp), then across records (unique
// ids, instance -> gpu, one default storage tier). Every finding is collected.
#include "capplan/data/catalog.hpp"
#include "capplan/data/currency.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>

#include "catalog/catalog_records.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data {

namespace {

using detail::json;
using detail::Reader;

constexpr int kSchema = 1;

// --- One catalog file ---------------------------------------------------------------------

struct Loaded {
  bool readable = false;  // the list itself could be read (records may still have errors)
};

// Reads {"schema": 1, "<list_key>": [records]}, parsing each record with `parse_record` and
// checking that the ids (`id_of`) are unique.
template <class Entry, class ParseRecord, class IdOf>
Loaded load_list(const std::filesystem::path& dir, const std::string& file, const std::string& list_key,
                 std::vector<Entry>& out, Diagnostics& diags, ParseRecord parse_record, IdOf id_of) {
  auto text = detail::read_text_file(dir / file, file);
  if (!text) {
    diags.insert(diags.end(), text.error().begin(), text.error().end());
    return {};
  }
  auto j = detail::parse_json_text(*text, file);
  if (!j) {
    diags.insert(diags.end(), j.error().begin(), j.error().end());
    return {};
  }
  Reader r(file, diags);
  if (!r.object(*j, "")) return {};
  if (const json* s = r.required(*j, "", "schema", "catalog schema version, 1")) {
    r.schema_version(*s, "/schema", kSchema);
  }
  if (const json* n = Reader::find(*j, "notes")) r.string(*n, "/notes");
  r.unknown_keys(*j, "", {"schema", list_key, "notes"});
  const json* list = r.required(*j, "", list_key, "the list of records");
  if (list == nullptr || !r.array(*list, "/" + list_key)) return {};
  std::map<std::string, std::size_t> first_index;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string p = detail::child("/" + list_key, i);
    Entry e = parse_record((*list)[i], p, r);
    if (const std::string& id = id_of(e); !id.empty()) {
      auto [it, inserted] = first_index.emplace(id, i);
      if (!inserted) {
        r.error(detail::child(p, "id"), "duplicate id '" + id + "' (first at #/" + list_key + "/" +
                                            std::to_string(it->second) + ")");
      }
    }
    out.push_back(std::move(e));
  }
  return {true};
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}


}  // namespace

std::optional<double> InstancePrice::per_gpu_hour(int gpus_per_node) const {
  if (usd_per_gpu_hour) return *usd_per_gpu_hour;
  if (usd_per_node_hour && gpus_per_node > 0) return *usd_per_node_hour / gpus_per_node;
  return std::nullopt;
}

std::optional<double> InstancePrice::per_gpu_hour_usd(int gpus_per_node) const {
  const auto amount = per_gpu_hour(gpus_per_node);
  if (!amount || currency == "USD") return amount;
  if (!usd_per_unit) return std::nullopt;  // never compared (nor shown) as if it were dollars
  return *amount * *usd_per_unit;
}

sim::Currency InstancePrice::money() const {
  sim::Currency c;
  c.code = currency.empty() ? "USD" : currency;
  c.usd_per_unit = c.is_usd() ? 1.0 : usd_per_unit.value_or(0.0);
  c.rate_date = c.is_usd() ? std::string() : date;
  return c;
}

std::optional<NodePower> default_node_power(const Catalogs& catalogs, const sim::Cluster& c) {
  const GpuEntry* g = catalogs.find_gpu(c.gpu.id);
  if (g == nullptr) return std::nullopt;
  const std::string gpus = std::to_string(c.gpus_per_node) + " GPUs";
  if (g->system_power && g->system_power->gpus == c.gpus_per_node) {
    return NodePower{g->system_power->w, false,
                     g->system_power->system + " maximum system power " + detail::fmt(g->system_power->w) +
                         " W per node (" + g->system_power->source + ")"};
  }
  if (g->tdp_w <= 0) return std::nullopt;
  const double w = g->tdp_w * c.gpus_per_node;
  std::string why = g->system_power ? "the catalog's system power is for " + std::to_string(g->system_power->gpus) +
                                          " GPUs, not " + std::to_string(c.gpus_per_node)
                                    : "no system power in the catalog for " + g->spec.name;
  return NodePower{w, true,
                   "GPU TDP " + detail::fmt(g->tdp_w) + " W x " + gpus + " = " + detail::fmt(w) +
                       " W per node (GPUs only: CPUs, NICs, fans not counted; " + why + ")"};
}

const GpuEntry* Catalogs::find_gpu(std::string_view id) const {
  auto it = std::find_if(gpus.begin(), gpus.end(), [&](const GpuEntry& g) { return g.spec.id == id; });
  return it == gpus.end() ? nullptr : &*it;
}
namespace {
// "NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3" and " NVIDIA_H100 80GB  HBM3" alike.
std::string device_name_key(std::string_view name) {
  std::string key;
  for (char ch : name) {
    const bool gap = ch == ' ' || ch == '-' || ch == '_' || ch == '\t';
    if (gap) {
      if (!key.empty() && key.back() != ' ') key.push_back(' ');
    } else {
      key.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    }
  }
  while (!key.empty() && key.back() == ' ') key.pop_back();
  return key;
}
}  // namespace

const GpuEntry* Catalogs::gpu_for_device_name(std::string_view reported) const {
  const std::string want = device_name_key(reported);
  if (want.empty()) return nullptr;
  for (const auto& g : gpus) {
    for (const auto& n : g.device_names) {
      if (device_name_key(n) == want) return &g;
    }
  }
  return nullptr;
}

const InstanceEntry* Catalogs::find_instance(std::string_view id) const {
  auto it = std::find_if(instances.begin(), instances.end(), [&](const InstanceEntry& e) { return e.id == id; });
  return it == instances.end() ? nullptr : &*it;
}
const StorageEntry* Catalogs::default_storage() const {
  auto it = std::find_if(storage.begin(), storage.end(), [](const StorageEntry& e) { return e.is_default; });
  return it == storage.end() ? nullptr : &*it;
}

const StorageEntry* Catalogs::find_storage(std::string_view id) const {
  auto it = std::find_if(storage.begin(), storage.end(), [&](const StorageEntry& e) { return e.id == id; });
  return it == storage.end() ? nullptr : &*it;
}
const FrameworkEntry* Catalogs::find_framework(std::string_view id) const {
  auto it = std::find_if(frameworks.begin(), frameworks.end(), [&](const FrameworkEntry& e) { return e.recipe.id == id; });
  return it == frameworks.end() ? nullptr : &*it;
}
std::optional<sim::FrameworkRecipe> Catalogs::framework_recipe(std::string_view id) const {
  if (const auto* e = find_framework(id)) return e->recipe;
  if (id == "megatron") return sim::kernel_style_recipe(sim::Framework::megatron);
  if (id == "pytorch") return sim::kernel_style_recipe(sim::Framework::pytorch);
  return std::nullopt;
}
std::vector<std::string> Catalogs::framework_ids() const {
  std::vector<std::string> ids;
  for (const char* legacy : {"megatron", "pytorch"}) {
    if (find_framework(legacy) == nullptr) ids.emplace_back(legacy);
  }
  for (const auto& e : frameworks) ids.push_back(e.recipe.id);
  return ids;
}
const EngineEntry* Catalogs::find_engine(std::string_view id) const {
  auto it = std::find_if(engines.begin(), engines.end(), [&](const EngineEntry& e) { return e.spec.id == id; });
  return it == engines.end() ? nullptr : &*it;
}
std::vector<std::string> Catalogs::engine_ids() const {
  std::vector<std::string> ids;
  for (const auto& e : engines) ids.push_back(e.spec.id);
  return ids;
}
const ModelEntry* Catalogs::find_model(std::string_view id) const {
  auto it = std::find_if(models.begin(), models.end(), [&](const ModelEntry& m) { return m.id == id; });
  return it == models.end() ? nullptr : &*it;
}

std::filesystem::path default_data_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("CAPPLAN_DATA_DIR"); env != nullptr && *env != '\0') return fs::path(env);
  std::error_code ec;
  fs::path installed = fs::path("share") / "capplan" / "data";
  if (auto exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    installed = exe.parent_path().parent_path() / "share" / "capplan" / "data";
    if (fs::is_regular_file(installed / "gpus.json", ec)) return installed;
    // A build tree in its checkout (build/<preset>/cli/capplan), also one carried with its sources
    // to another machine: the nearest folder above the executable that holds data/gpus.json.
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
      if (fs::is_regular_file(dir / "data" / "gpus.json", ec)) return dir / "data";
    }
  }
#ifdef CAPPLAN_SOURCE_DATA_DIR
  // A build tree outside its checkout.
  if (fs::path src(CAPPLAN_SOURCE_DATA_DIR); fs::is_regular_file(src / "gpus.json", ec)) return src;
#endif
  return installed;
}

std::string suggest(std::string_view got, const std::vector<std::string>& known) {
  const std::string g = lower(got.substr(0, kMaxSuggestedLength + 1));
  std::string best;
  std::size_t best_score = std::string::npos, best_prefix = 0;
  // A name longer than any id is no typo of one: no edit distance (a 10 MB name cost 6 s).
  const bool typo_sized = got.size() <= kMaxSuggestedLength;
  for (const auto& k : known) {
    if (!typo_sized) break;
    const std::string kl = lower(k);
    std::size_t score = edit_distance(g, kl);
    // A typo in the leading part of a long id ("h1000-sxm" for "h100-sxm-80gb").
    if (g.size() >= 4 && kl.size() > g.size()) score = std::min(score, edit_distance(g, kl.substr(0, g.size())) + 1);
    // A known name that contains what was typed is a likely intent ("h100").
    if (!g.empty() && kl.find(g) != std::string::npos) score = std::min<std::size_t>(score, 1);
    // Ties go to the longer common prefix: "llama3-7b" is nearer "llama3-70b" than "llama2-7b".
    std::size_t prefix = 0;
    while (prefix < g.size() && prefix < kl.size() && g[prefix] == kl[prefix]) ++prefix;
    if (score < best_score || (score == best_score && prefix > best_prefix)) {
      best_score = score;
      best_prefix = prefix;
      best = k;
    }
  }
  const std::size_t tolerance = std::max<std::size_t>(2, g.size() / 3);
  std::string out;
  if (!best.empty() && best_score <= tolerance) out = "did you mean '" + best + "'? ";
  std::vector<std::string> unique;
  for (const auto& k : known) {
    if (std::find(unique.begin(), unique.end(), k) == unique.end()) unique.push_back(k);
  }
  out += "known: " + (unique.empty() ? std::string("(none)") : detail::join(unique));
  return out;
}

Result<Catalogs> load_catalogs(const std::filesystem::path& dir) {
  Diagnostics diags;
  Catalogs c;

  const Loaded gpus = load_list(
      dir, "gpus.json", "gpus", c.gpus, diags,
      records::read_gpu,
      [](const GpuEntry& g) -> const std::string& { return g.spec.id; });
  load_list(
      dir, "instances.json", "instances", c.instances, diags,
      records::read_instance,
      [](const InstanceEntry& e) -> const std::string& { return e.id; });
  load_list(
      dir, "models.json", "models", c.models, diags,
      records::read_model,
      [](const ModelEntry& m) -> const std::string& { return m.id; });

  // Storage tiers (optional file: catalogs without it have no tiers to name).
  if (std::error_code ec; std::filesystem::is_regular_file(dir / "storage.json", ec)) {
    load_list(
        dir, "storage.json", "tiers", c.storage, diags,
        records::read_storage_tier,
        [](const StorageEntry& e) -> const std::string& { return e.id; });
    // Across records: one default tier at most.
    Reader r("storage.json", diags);
    bool seen = false;
    for (std::size_t i = 0; i < c.storage.size(); ++i) {
      if (!c.storage[i].is_default) continue;
      if (seen) {
        r.error(detail::child(detail::child("/tiers", i), "default"),
                "a second default tier ('" + c.storage[i].id + "'): at most one tier may be the default");
      }
      seen = true;
    }
  }

  // Framework recipes (optional file: without it, only the kernel styles megatron and pytorch).
  if (std::error_code ec; std::filesystem::is_regular_file(dir / "frameworks.json", ec)) {
    load_list(dir, "frameworks.json", "frameworks", c.frameworks, diags, records::read_framework,
              [](const FrameworkEntry& e) -> const std::string& { return e.recipe.id; });
  }

  // Serving engine recipes (optional file: without it, sim::EngineSpec's own defaults).
  if (std::error_code ec; std::filesystem::is_regular_file(dir / "engines.json", ec)) {
    load_list(dir, "engines.json", "engines", c.engines, diags, records::read_engine,
              [](const EngineEntry& e) -> const std::string& { return e.spec.id; });
  }

  // Across records: every instance names a GPU that gpus.json defines.
  if (gpus.readable) {
    std::vector<std::string> gpu_ids;
    for (const auto& g : c.gpus) gpu_ids.push_back(g.spec.id);
    Reader r("instances.json", diags);
    for (std::size_t i = 0; i < c.instances.size(); ++i) {
      const auto& e = c.instances[i];
      if (!e.gpu.empty() && c.find_gpu(e.gpu) == nullptr) {
        r.error(detail::child(detail::child("/instances", i), "gpu"),
                "unknown GPU '" + e.gpu + "' (not in gpus.json; " + suggest(e.gpu, gpu_ids) + ")");
      }
    }
  }

  if (!diags.empty()) return std::unexpected(std::move(diags));
  return c;
}

}  // namespace capplan::data
