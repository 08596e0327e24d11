// SPDX-License-Identifier: Apache-2.0
// The scenario reader (scenario_io.cpp) shared by its sections: one ScenarioParser whose members
// are defined per section under input/scenario/, the absurd-size limits and the small helpers.
#pragma once
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capplan/data/scenario_io.hpp"
#include "capplan/data/fields.hpp"
#include "capplan/data/serve_io.hpp"
#include "input/fields/read_table.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data::scenario_detail {

using detail::child;
using detail::describe;
using detail::fmt;
using detail::json;
using detail::Reader;

// Absurd-size limits: far beyond any real run, low enough that products stay exact in doubles.
constexpr double kMaxTokens = 1e16;
constexpr double kMaxBatchTokens = 1e12;
constexpr double kMaxBatchSequences = 1e9;
constexpr double kMaxGpus = 1e6;
constexpr double kMaxNodes = 1e5;
constexpr double kMaxGpusPerNode = 1024;
constexpr double kMaxLinkGbps = 1e6;
constexpr double kMinLinkGbps = 1e-3;  // 1 Mbit/s: a slower link is no GPU interconnect
constexpr double kMaxParallel = 1e6;
// Why a field's range ends at one of them (the schema's x-bound).
constexpr const char* kAbsurd = "far beyond any real run; low enough that products stay exact in doubles";

// DGX H100 reference design: one 400 Gbit/s NDR NIC per GPU (8 per node).
constexpr double kDefaultInterNodeGbpsPerGpu = 400.0;

inline const json* find(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

inline bool is_auto(const json& v) { return v.is_string() && v.get<std::string>() == "auto"; }

inline double num_of(const json& v) { return v.get<double>(); }

// A goodput section (reliability, storage, data) read through its field table: an object with
// exactly the table's keys.
template <class T>
void read_section(const json& j, const std::string& p, std::span<const Field<T>> rows, T& out, Reader& r) {
  if (!r.object(j, p)) return;
  fields_detail::read_table(j, p, rows, out, r);
  std::vector<std::string> keys;
  fields_detail::add_keys(rows, "", keys);
  r.unknown_keys(j, p, keys);
}

class ScenarioParser {
 public:
  // `fleet`: a scenario read for the fleet it owns (parse_fleet_scenario): without a model, its
  // cluster, pricing and tco terms only.
  ScenarioParser(const Catalogs& catalogs, std::string_view where, bool fleet = false)
      : where_(where), r_(std::string(where), diags_), cat_(catalogs), fleet_(fleet) {}

  // run and the helpers every section uses (scenario_io.cpp)
  Result<ParsedScenario> run(const json& j);

 private:
  const json* required(const json& obj, const char* key, const char* help);
  void warn(const std::string& pointer, const std::string& message);
  void warn_unused(const json& j);
  std::optional<double> si_number(const json& v, const std::string& p, double max);
  // workload and fine-tuning (scenario/workload.cpp)
  void parse_workload(const json& w);
  void parse_finetune(const json& w, sim::TrainingJob& t);
  void check_dataset(const sim::FinetuneData& d, const std::string& dp);

  // model, MoE, attention and MLA (scenario/model.cpp)
  std::optional<sim::ModelSpec> parse_model(const json& j);
  void parse_moe(const json& j, const ModelEntry* preset, sim::ModelSpec& m, bool ffn_given);
  void parse_attention(const json& j, const ModelEntry* preset, sim::ModelSpec& m);

  // training (scenario/training.cpp)
  std::optional<sim::TrainingJob> parse_training(const json& j, const std::optional<sim::ModelSpec>& model);
  const json* required_in(const json& obj, const std::string& p, const char* key, const char* help);
  void check_precision(const sim::Cluster& c, sim::Precision prec);

  // cluster and its catalog price (scenario/cluster.cpp)
  std::optional<sim::Cluster> parse_cluster(const json& j);
  std::optional<std::int64_t> cluster_size(const json& v, const char* key);
  bool size_by_instance(const json& j, const json& instance, sim::Cluster& c, std::optional<sim::Topology>& topo,
                        std::optional<double>& inter);
  bool size_by_gpu(const json& j, const json& gpu, std::size_t before, sim::Cluster& c,
                   const std::optional<sim::Topology>& topo, std::optional<double>& inter);
  void on_prem_power(const sim::Cluster& c);
  void catalog_price(sim::Cluster& c);

  // pricing and currency (scenario/pricing.cpp)
  void parse_pricing(const json& j, std::optional<sim::Cluster>& c);
  double parse_currency(const json& j, const std::string& p, sim::Currency& out);

  // storage (scenario/storage.cpp)
  std::optional<sim::StorageTier> storage_tier(const std::string& id, const std::string& p,
                                               const StorageInput* d);
  static void fill_missing_direction(sim::StorageTier& t);
  void default_storage();
  void parse_storage(const json& j);

  // strategy (scenario/strategy.cpp)
  sim::StrategyRequest parse_strategy(const json& j, const std::optional<sim::Cluster>& c,
                                      const std::optional<sim::ModelSpec>& m);
  void apply_recipe(const json& j, sim::StrategyRequest& s, const std::optional<sim::ModelSpec>& m);
  void check_gpu_count(sim::StrategyRequest& s, int gpus);
  void apply_support(sim::StrategyRequest& s, const sim::TrainingJob& t);

  std::string where_;
  Diagnostics diags_;
  Reader r_;
  const Catalogs& cat_;
  bool serve_ = false;  // workload.kind serve: no training section, the cluster's size optional
  bool fleet_ = false;  // a model (and with it training) may be left out: a fleet to own
  ParsedScenario out_;
  std::optional<sim::FrameworkRecipe> recipe_;  // training.framework's recipe
  bool currency_given_ = false;                 // pricing.currency was given (else the catalog price's)
};

}  // namespace capplan::data::scenario_detail
