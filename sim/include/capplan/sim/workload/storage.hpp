// SPDX-License-Identifier: Apache-2.0
// The scenario's `storage` and `data` sections: where checkpoints and the dataset live, and how
// fast data is read.
#pragma once
#include <optional>
#include <string>

#include "capplan/sim/units.hpp"

namespace capplan::sim {

// Bandwidth limits of one direction of a storage tier: a cluster-wide aggregate and a per-node
// cap (the node's storage NIC or local device). Zero means "no limit of this kind known".
struct StorageBandwidth {
  units::BytesPerSecond aggregate;
  units::BytesPerSecond per_node;
  bool known() const { return aggregate.base() > 0 || per_node.base() > 0; }
};

struct StorageTier {
  std::string id;  // catalog id or "custom"
  StorageBandwidth write;
  StorageBandwidth read;
  std::optional<double> usd_per_gb_month;  // decimal GB
  bool local = false;  // node-local (NVMe): a checkpoint is durable only once uploaded
};

struct StorageSpec {
  // false: no storage section. The tier is then the catalog's default tier (`assumed`, said in a
  // finding), or, with no default known, the node's network bandwidth (an optimistic stand-in).
  bool given = false;
  bool assumed = false;  // `tier` is the catalog's default, not the scenario's choice
  StorageTier tier;
  std::optional<StorageTier> upload;  // for a local tier: where checkpoints are uploaded
};

struct DataLoadingSpec {
  // Bytes read per training token. 0 = Megatron's pre-tokenised indexed dataset: 2 bytes (uint16)
  // when the vocabulary has fewer than 65,500 entries, else 4 (int32) (Megatron-LM
  // megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype).
  double bytes_per_token = 0;
  std::optional<double> cpu_tokens_per_s_per_node;  // preprocessing capacity of one node
  std::optional<double> dataset_bytes;               // stored dataset (default: tokens x bytes/token)
};

}  // namespace capplan::sim
