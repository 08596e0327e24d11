// SPDX-License-Identifier: Apache-2.0
// The money: the cost of a run under its purchase terms (on demand, spot, reserved, on premises)
// and its storage, for the expected wall time (docs/model.md, "Cost beyond the sticker price").
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "goodput/goodput_parts.hpp"

namespace capplan::sim {

const char* to_string(PurchaseModel m) {
  switch (m) {
    case PurchaseModel::on_demand: return "on_demand";
    case PurchaseModel::spot: return "spot";
    case PurchaseModel::reserved: return "reserved";
    case PurchaseModel::on_prem: return "on_prem";
  }
  return "on_demand";
}

std::optional<PurchaseModel> purchase_model_from_string(const std::string& s) {
  for (auto m : {PurchaseModel::on_demand, PurchaseModel::spot, PurchaseModel::reserved, PurchaseModel::on_prem}) {
    if (s == to_string(m)) return m;
  }
  return std::nullopt;
}

namespace {

// The breakdown built part by part: each purchase model fills the parts it charges.
class CostBuilder {
 public:
  CostBuilder(const GoodputInputs& in, const Goodput& g, std::vector<Finding>& findings)
      : in_(in), g_(g), c_(*in.cluster), pr_(*in.pricing), rel_(*in.reliability), findings_(findings) {
    out_.model = pr_.model;
  }

  CostBreakdown build() {
    switch (pr_.model) {
      case PurchaseModel::on_demand: on_demand(); break;
      case PurchaseModel::spot:
        if (!pr_.spot.usd_per_gpu_hour) need("pricing.spot.usd_per_gpu_hour");
        rent(pr_.spot.usd_per_gpu_hour);
        break;
      case PurchaseModel::reserved: reserved(); break;
      case PurchaseModel::on_prem: on_prem(); break;
    }
    storage();
    total();
    return out_;
  }

 private:
  // An input the user must supply: listed, and said once (the on-demand price is already said by
  // the steady-state estimate). `excluded`: the total is still given, without this part.
  void need(const std::string& field, bool excluded = false) {
    out_.missing.push_back(field);
    if (field == "pricing.usd_per_gpu_hour") return;
    findings_.push_back(finding(excluded ? FindingCode::cost_part_unknown : FindingCode::cost_input_unknown, field));
  }

  // Rented GPUs at `rate` per GPU-hour, spares included; no rate: no total.
  void rent(std::optional<double> rate) {
    if (!rate) {
      essential_known_ = false;
      return;
    }
    out_.usd_per_gpu_hour = *rate;
    out_.compute = units::usd(*rate * gpus_ * hours_);
    out_.spares = units::usd(*rate * spare_gpus_ * hours_);
  }

  void on_demand() {
    std::optional<double> rate;
    if (c_.price_per_gpu) rate = units::to_usd_per_hour(*c_.price_per_gpu);
    if (!rate) need("pricing.usd_per_gpu_hour");
    rent(rate);
  }

  void reserved() {
    if (!pr_.reserved.usd_per_gpu_hour) need("pricing.reserved.usd_per_gpu_hour");
    rent(pr_.reserved.usd_per_gpu_hour);
    if (out_.compute) reserved_commitment();
  }

  // The commitment behind a reserved rate: its GPUs and term, the idle part of it, the run's share.
  void reserved_commitment() {
    const ReservedTerms& rs = pr_.reserved;
    const double committed = rs.committed_gpus ? *rs.committed_gpus : gpus_ + spare_gpus_;
    if (committed < gpus_ + spare_gpus_) {
      findings_.push_back(finding(FindingCode::reserved_commitment_short, "pricing.reserved.committed_gpus",
                                  {{"committed", committed}, {"used", gpus_ + spare_gpus_}}));
    }
    double term = hours_;
    bool bought_in_blocks = false;  // a subscription bought for this run in whole blocks (months)
    if (rs.term_hours) {
      term = *rs.term_hours;
    } else if (rs.term_block_hours && *rs.term_block_hours > 0) {
      term = std::ceil(hours_ / *rs.term_block_hours) * *rs.term_block_hours;
      bought_in_blocks = true;
    } else {
      need("pricing.reserved.term_months");
    }
    if (term < hours_) {
      findings_.push_back(finding(FindingCode::reserved_term_short, "pricing.reserved.term_months",
                                  {{"run_months", hours_ / kHoursPerMonth}, {"term_months", term / kHoursPerMonth}}));
    }
    // Committed GPU-hours not used by this run, billed at the idle rate (default: the reserved rate).
    const double used = gpus_ + spare_gpus_;
    const double held = std::max(committed, used), whole_hours = std::max(term, hours_);
    const double idle_hours = std::max(0.0, held * whole_hours - used * hours_);
    const double rate = *out_.usd_per_gpu_hour;
    const double idle_rate = rs.idle_usd_per_gpu_hour.value_or(rate);
    out_.idle_commitment = units::usd(idle_rate * idle_hours);
    // The run's share at utilisation u: its GPU-hours, plus (1 - u) / u of them idle at the idle
    // rate; the whole term: the held GPUs for the term, a share u used and 1 - u idle.
    const double u = rs.utilisation;
    out_.utilisation = u;
    out_.term_hours = whole_hours;
    out_.committed_gpus = held;
    if (bought_in_blocks) {
      // Blocks bought for this run: nothing else uses them, so the run pays them whole (the rest of
      // the last block is its idle share) and the whole term is that.
      out_.utilisation = used * hours_ / (held * whole_hours);
      out_.idle_share = out_.idle_commitment;
      out_.whole_term = units::usd(used * hours_ * rate + idle_rate * idle_hours);
    } else {
      out_.idle_share = units::usd(used * hours_ * (1.0 - u) / u * idle_rate);
      out_.whole_term = units::usd(held * whole_hours * (u * rate + (1.0 - u) * idle_rate));
    }
  }

  void on_prem() {
    const OnPremTerms& op = pr_.on_prem;
    if (!op.usd_per_node) need("pricing.on_prem.usd_per_node");
    if (!op.amortisation_years) need("pricing.on_prem.amortisation_years");
    if (!op.usd_per_kwh) need("pricing.on_prem.usd_per_kwh");
    const double util = op.utilisation;
    if (op.usd_per_node && op.amortisation_years) {
      // Capital charged to this run: the owned nodes' amortised price for the wall time, divided
      // by the utilisation (idle owned time is paid by the work that runs).
      const double per_node_hour = *op.usd_per_node / (*op.amortisation_years * kHoursPerYear) / util;
      out_.compute = units::usd(per_node_hour * c_.nodes() * hours_);
      out_.spares = units::usd(per_node_hour * spare_nodes_ * hours_);
      out_.usd_per_gpu_hour = per_node_hour / c_.gpus_per_node;
    } else {
      essential_known_ = false;
    }
    if (op.usd_per_kwh && op.node_power_w) {
      out_.energy = units::usd(c_.nodes() * *op.node_power_w / 1000.0 * op.pue * hours_ * *op.usd_per_kwh);
    } else {
      essential_known_ = false;
      if (!op.node_power_w) need("pricing.on_prem.node_power_w");
    }
    if (op.ops_usd_per_year) {
      out_.operations = units::usd(*op.ops_usd_per_year * hours_ / kHoursPerYear / util);
    } else {
      need("pricing.on_prem.ops_usd_per_year", true);
    }
    out_.utilisation = util;
    out_.committed_gpus = (c_.nodes() + spare_nodes_) * c_.gpus_per_node;
    if (op.amortisation_years) out_.term_hours = *op.amortisation_years * kHoursPerYear;
    if (out_.compute && out_.energy) {
      // The fleet owned for the amortisation period: every node bought, the energy of a share
      // `util` of the period, the operations for all of it.
      const double period = *out_.term_hours;
      double whole = *op.usd_per_node * (c_.nodes() + spare_nodes_);
      whole += c_.nodes() * *op.node_power_w / 1000.0 * op.pue * util * period * *op.usd_per_kwh;
      if (op.ops_usd_per_year) whole += *op.ops_usd_per_year * *op.amortisation_years;
      out_.whole_term = units::usd(whole);
    }
  }

  // Storage: the retained checkpoints and the dataset, for the wall time.
  void storage() {
    const StorageTier& tier = in_.storage->tier;
    const std::optional<double> price = in_.storage->given ? tier.usd_per_gb_month : std::nullopt;
    if (price) {
      const double months = hours_ / kHoursPerMonth;
      out_.checkpoint_storage = units::usd(rel_.checkpoints_kept * g_.checkpoint.total.base() / 1e9 * *price * months);
      const double data_bytes =
          in_.data->dataset_bytes ? *in_.data->dataset_bytes : in_.training->tokens * g_.data.bytes_per_token;
      out_.data_storage = units::usd(data_bytes / 1e9 * *price * months);
    } else if (in_.storage->given) {
      need("storage.usd_per_gb_month", true);
    } else {
      out_.missing.push_back("storage.tier");  // said once, with the bandwidth fallback
    }
  }

  void total() {
    if (!essential_known_ || !std::isfinite(hours_)) return;
    double sum = 0;
    for (const auto* part : {&out_.compute, &out_.spares, &out_.idle_share, &out_.energy, &out_.operations,
                             &out_.checkpoint_storage, &out_.data_storage}) {
      if (*part) sum += (*part)->base();
    }
    out_.total = units::usd(sum);
  }

  const GoodputInputs& in_;
  const Goodput& g_;
  const Cluster& c_;
  const PricingTerms& pr_;
  const ReliabilitySpec& rel_;
  std::vector<Finding>& findings_;
  CostBreakdown out_;
  const double hours_ = units::to_hours(g_.wall);
  const double gpus_ = c_.gpus;
  const double spare_nodes_ = rel_.hot_spare_nodes;
  const double spare_gpus_ = spare_nodes_ * c_.gpus_per_node;
  bool essential_known_ = true;
};

}  // namespace

CostBreakdown run_cost(const GoodputInputs& in, const Goodput& g, std::vector<Finding>& findings) {
  return CostBuilder(in, g, findings).build();
}

}  // namespace capplan::sim
