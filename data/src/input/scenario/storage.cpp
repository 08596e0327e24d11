// SPDX-License-Identifier: Apache-2.0
// The storage section: a catalog tier and/or explicit bandwidths (sim/workload/storage.hpp).
#include "input/scenario/parser.hpp"

#include <algorithm>

namespace capplan::data::scenario_detail {

// --- storage ----------------------------------------------------------------------------
// A catalog tier (storage.json) and/or explicit bandwidths; explicit values override the tier's.
// The values are checked by the section's field table (input/fields/goodput_fields.cpp).
std::optional<sim::StorageTier> ScenarioParser::storage_tier(const std::string& id, const std::string& p,
                                                           const StorageInput* d) {
  const StorageEntry* e = cat_.find_storage(id);
  if (e == nullptr) {
    std::vector<std::string> ids;
    for (const auto& t : cat_.storage) ids.push_back(t.id);
    r_.error(p, "unknown storage tier '" + id + "' (" + (ids.empty() ? std::string("no storage.json loaded")
                                                                      : suggest(id, ids)) + ")");
    return std::nullopt;
  }
  sim::StorageTier t;
  t.id = e->id;
  t.local = e->kind == "local_nvme";
  // A price in another currency has no rate in storage.json: unknown, never read as dollars.
  if (e->currency == "USD") t.usd_per_gb_month = e->usd_per_gb_month;
  auto set = [](units::BytesPerSecond& bw, std::optional<double> gbs) {
    if (gbs) bw = units::gb_per_s(*gbs);
  };
  set(t.write.aggregate, e->write_gb_per_s);
  set(t.read.aggregate, e->read_gb_per_s);
  set(t.write.per_node, e->write_gb_per_s_per_node);
  set(t.read.per_node, e->read_gb_per_s_per_node);
  // Throughput that scales with the provisioned capacity, per direction, up to the tier's cap.
  const std::optional<double> write_per_tib = e->write_gb_per_s_per_tib ? e->write_gb_per_s_per_tib : e->gb_per_s_per_tib;
  const std::optional<double> read_per_tib = e->read_gb_per_s_per_tib ? e->read_gb_per_s_per_tib : e->gb_per_s_per_tib;
  if (write_per_tib || read_per_tib) {
    if (d != nullptr && d->capacity_tib) {
      auto scaled = [&](units::BytesPerSecond& bw, std::optional<double> per_tib, std::optional<double> cap) {
        if (!per_tib) return;
        const double gbs = *per_tib * *d->capacity_tib;
        bw = units::gb_per_s(cap ? std::min(gbs, *cap) : gbs);
      };
      scaled(t.write.aggregate, write_per_tib, e->max_write_gb_per_s);
      scaled(t.read.aggregate, read_per_tib, e->max_read_gb_per_s);
    } else if (d != nullptr && !(d->write && d->read)) {
      r_.error("/storage/capacity_tib", "required with tier '" + id + "' (its throughput is " +
                                            fmt(write_per_tib.value_or(*read_per_tib)) +
                                            " GB/s per TiB provisioned) is missing");
    }
  }
  return t;
}

// Reads default to the write figures when only writes are known (and the other way round).
void ScenarioParser::fill_missing_direction(sim::StorageTier& t) {
  if (!t.read.known()) t.read = t.write;
  if (!t.write.known()) t.write = t.read;
}

// No storage section: the catalog's default tier (storage.json, "default": true), marked assumed
// so the estimate says so; none in the catalog leaves the network stand-in to sim.
void ScenarioParser::default_storage() {
  const StorageEntry* e = cat_.default_storage();
  if (e == nullptr) return;
  auto t = storage_tier(e->id, "/storage/tier", nullptr);
  if (!t) return;
  fill_missing_direction(*t);
  out_.scenario.storage.tier = *t;
  out_.scenario.storage.assumed = true;
}

void ScenarioParser::parse_storage(const json& j) {
  const std::string p = "/storage";
  StorageInput d;
  const auto before = r_.count();
  read_section(j, p, storage_fields(), d, r_);
  if (r_.count() != before) return;
  sim::StorageSpec& spec = out_.scenario.storage;
  spec.given = true;
  if (d.tier) {
    auto t = storage_tier(*d.tier, child(p, "tier"), &d);
    if (!t) return;
    spec.tier = *t;
  } else {
    spec.tier.id = "custom";
    if (!d.write && !d.write_node) {
      r_.error(child(p, "write_gb_per_s"),
               "required (a tier, or write_gb_per_s / write_gb_per_s_per_node) is missing");
    }
  }
  if (d.write) spec.tier.write.aggregate = units::gb_per_s(*d.write);
  if (d.read) spec.tier.read.aggregate = units::gb_per_s(*d.read);
  if (d.write_node) spec.tier.write.per_node = units::gb_per_s(*d.write_node);
  if (d.read_node) spec.tier.read.per_node = units::gb_per_s(*d.read_node);
  if (d.local) spec.tier.local = *d.local;
  if (d.usd_per_gb_month) spec.tier.usd_per_gb_month = d.usd_per_gb_month;
  fill_missing_direction(spec.tier);
  // A tier whose bandwidth the catalog does not know is refused: unknown is not free (writes
  // at the network's speed), nor the default tier's speed. A serving plan reads no storage.
  if (d.tier && !spec.tier.write.known() && !serve_) {
    r_.error(child(p, "tier"), "tier '" + *d.tier + "' has no published write or read bandwidth in the storage "
                               "catalog: give storage.write_gb_per_s and read_gb_per_s (or write_gb_per_s_per_node "
                               "and read_gb_per_s_per_node) for the capacity you provision, or a tier with figures");
    return;
  }
  if (d.upload_tier) {
    if (!spec.tier.local) {
      r_.error(child(p, "upload_tier"), "only used with a node-local tier (local: true or a local_nvme tier); got " +
                                            describe(*find(j, "upload_tier")));
      return;
    }
    if (auto t = storage_tier(*d.upload_tier, child(p, "upload_tier"), nullptr)) {
      if (!t->write.known()) {
        r_.error(child(p, "upload_tier"), "tier '" + t->id + "' has no published bandwidth to upload at");
      } else {
        spec.upload = *t;
      }
    }
  }
}

}  // namespace capplan::data::scenario_detail
