// SPDX-License-Identifier: Apache-2.0
// Own versus rent: a three-year case computed by hand, the break-even utilisation, missing inputs.
#include "capplan/sim/tco/tco.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace capplan::sim {
namespace {

// An H800 fleet bought in China, the amounts in CNY (sim computes in one currency; the arithmetic
// is the same in any).
TcoInputs fleet_of(int nodes, int years, double utilisation) {
  TcoInputs in;
  in.nodes = nodes;
  in.gpus_per_node = 8;
  in.years = years;
  in.utilisation = utilisation;
  return in;
}

TcoInputs three_year_h800_fleet() {
  TcoInputs in = fleet_of(16, 3, 0.6);
  in.usd_per_node = 2.2e6;
  in.network_usd_per_node = 0.2e6;
  in.storage_usd = 3e6;
  in.residual_fraction = 0.1;
  in.interest_rate = 0.05;
  in.loan_years = 3;
  in.node_power_w = 10200;
  in.pue = 1.3;
  in.power_factor = 0.8;
  in.usd_per_kwh = 0.8;
  in.space_usd_per_kw_month = 1000;
  in.staff_usd_per_year = 1.5e6;
  in.on_demand_usd_per_gpu_hour = 25;
  in.reserved_usd_per_gpu_hour = 40;
  in.spot_usd_per_gpu_hour = 10;
  return in;
}

TEST(Tco, ThreeYearFleetComputedByHand) {
  const Tco t = tco(three_year_h800_fleet());
  // Capital: 16 x 2,200,000 nodes + 16 x 200,000 network + 3,000,000 storage = 41,400,000.
  EXPECT_DOUBLE_EQ(t.capital, 41.4e6);
  // Residual 10%: 4,140,000; depreciation (41,400,000 - 4,140,000) / 3 = 12,420,000 a year.
  EXPECT_DOUBLE_EQ(t.residual, 4.14e6);
  // Annuity at 5% over 3 years: 41,400,000 x 0.05 / (1 - 1.05^-3)
  //   1.05^3 = 1.157625, 1.05^-3 = 0.8638376, 1 - that = 0.1361624 -> payment 15,202,434.58.
  EXPECT_NEAR(t.loan_payment, 15202434.58, 0.01);
  // Interest by year: balance x 5%.
  //   year 1: 41,400,000.00 x 0.05 = 2,070,000.00; balance 41,400,000 - (15,202,434.58 - 2,070,000) = 28,267,565.42
  //   year 2: 28,267,565.42 x 0.05 = 1,413,378.27; balance 14,478,509.12
  //   year 3: 14,478,509.12 x 0.05 =   723,925.46; balance 0
  //   total 4,207,303.73 (= 3 x 15,202,434.58 - 41,400,000).
  ASSERT_EQ(t.per_year.size(), 3u);
  EXPECT_NEAR(t.per_year[0].interest, 2070000.00, 0.01);
  EXPECT_NEAR(t.per_year[1].interest, 1413378.27, 0.01);
  EXPECT_NEAR(t.per_year[2].interest, 723925.46, 0.01);
  EXPECT_NEAR(t.interest, 4207303.73, 0.01);
  // Power: 16 x 10.2 kW = 163.2 kW provisioned; energy a year at 60%:
  //   163.2 kW x PUE 1.3 x 8,760 h x 0.6 x power factor 0.8 = 892,090.368 kWh, x 0.8 = 713,672.29.
  EXPECT_DOUBLE_EQ(t.provisioned_kw, 163.2);
  EXPECT_NEAR(t.energy_kwh_per_year, 892090.368, 1e-6);
  EXPECT_NEAR(t.per_year[0].energy, 713672.2944, 1e-6);
  // Space: 163.2 kW x 1,000 a kW-month x 12 = 1,958,400 a year. Staff 1,500,000 a year.
  EXPECT_NEAR(t.per_year[0].space, 1958400.0, 1e-6);
  EXPECT_DOUBLE_EQ(t.per_year[0].staff, 1.5e6);
  // Year totals: 12,420,000 + interest + 713,672.29 + 1,958,400 + 1,500,000
  //   year 1: 18,662,072.29; year 2: 18,005,450.57; year 3: 17,315,997.75.
  EXPECT_NEAR(t.per_year[0].total, 18662072.29, 0.01);
  EXPECT_NEAR(t.per_year[1].total, 18005450.57, 0.01);
  EXPECT_NEAR(t.per_year[2].total, 17315997.75, 0.01);
  // Own total: 53,983,520.61; of it energy 3 x 713,672.29 = 2,141,016.88 grows with U, the rest
  // (37,260,000 + 4,207,303.73 + 3 x 1,958,400 + 3 x 1,500,000 = 51,842,503.73) is fixed; energy
  // at U = 1 over 3 years: 2,141,016.88 / 0.6 = 3,568,361.47.
  ASSERT_TRUE(t.own_total.has_value());
  EXPECT_NEAR(*t.own_total, 53983520.61, 0.01);
  EXPECT_NEAR(*t.own_fixed, 51842503.73, 0.01);
  EXPECT_NEAR(*t.own_energy_at_full, 3568361.47, 0.01);
  // Useful GPU-hours: 128 GPUs x 8,760 h x 3 years x 0.6 = 2,018,304; own cost per useful
  // GPU-hour 53,983,520.61 / 2,018,304 = 26.7470.
  EXPECT_DOUBLE_EQ(t.useful_gpu_hours, 2018304.0);
  EXPECT_NEAR(*t.own_usd_per_useful_gpu_hour, 26.7470, 1e-4);
  // Renting the same 2,018,304 GPU-hours: on demand at 25 = 50,457,600 (cheaper than owning at
  // 60%); reserved at 40 = 80,732,160; spot at 10 = 20,183,040.
  ASSERT_EQ(t.rent.size(), 3u);
  EXPECT_EQ(t.rent[0].name, "on_demand");
  EXPECT_NEAR(*t.rent[0].total, 50457600.0, 1e-6);
  EXPECT_NEAR(*t.rent[1].total, 80732160.0, 1e-6);
  EXPECT_NEAR(*t.rent[2].total, 20183040.0, 1e-6);
  // Break-even U* = F / (rate x H - E), H = 128 x 8,760 x 3 = 3,363,840 fleet GPU-hours:
  //   on demand 25: 51,842,503.73 / (84,096,000 - 3,568,361.47) = 0.643785
  //   reserved 40:  51,842,503.73 / (134,553,600 - 3,568,361.47) = 0.395789
  //   spot 10:      51,842,503.73 / (33,638,400 - 3,568,361.47) = 1.72 > 1: owning never breaks even.
  EXPECT_NEAR(*t.rent[0].break_even_utilisation, 0.643785, 1e-6);
  EXPECT_NEAR(*t.rent[1].break_even_utilisation, 0.395789, 1e-6);
  EXPECT_FALSE(t.rent[2].break_even_utilisation.has_value());
  EXPECT_TRUE(t.missing.empty());
}

TEST(Tco, AtTheBreakEvenUtilisationOwningCostsTheRentRate) {
  TcoInputs in = three_year_h800_fleet();
  const Tco at60 = tco(in);
  in.utilisation = *at60.rent[0].break_even_utilisation;
  const Tco at = tco(in);
  EXPECT_NEAR(*at.own_usd_per_useful_gpu_hour, 25.0, 1e-9);
  in.utilisation = 0.9;
  EXPECT_LT(*tco(in).own_usd_per_useful_gpu_hour, 25.0);  // above it, owning is cheaper
}

TEST(Tco, AnnuityWithoutInterestIsEvenRepayment) {
  EXPECT_DOUBLE_EQ(annuity_payment(300.0, 0.0, 3), 100.0);
  EXPECT_NEAR(annuity_payment(1000.0, 0.1, 2), 576.190476, 1e-6);  // 1000 x 0.1 / (1 - 1/1.21)
}

TEST(Tco, BoughtOutrightHasNoInterestAndALoanLongerThanThePeriodStopsAtIt) {
  TcoInputs in = three_year_h800_fleet();
  in.interest_rate.reset();
  EXPECT_DOUBLE_EQ(tco(in).interest, 0.0);
  in.interest_rate = 0.05;
  in.loan_years = 5;  // only the first 3 years' interest; the balance is repaid at the end
  const Tco t = tco(in);
  EXPECT_NEAR(t.per_year[0].interest, 41.4e6 * 0.05, 1e-6);
  EXPECT_NEAR(t.interest, t.per_year[0].interest + t.per_year[1].interest + t.per_year[2].interest, 1e-6);
  EXPECT_LT(t.per_year[2].interest, t.per_year[1].interest);
}

TEST(Tco, PricesNotGivenAreListedNeverInvented) {
  TcoInputs in = fleet_of(4, 3, 0.5);
  in.node_power_w = 10200;
  const Tco t = tco(in);
  EXPECT_FALSE(t.own_total.has_value());
  EXPECT_FALSE(t.own_usd_per_useful_gpu_hour.has_value());
  for (const char* field : {"tco.capex_per_node", "tco.price_per_kwh", "tco.staff_per_year", "tco.space_per_kw_month",
                            "tco.network_capex_per_node", "tco.storage_capex", "pricing.usd_per_gpu_hour",
                            "pricing.reserved.usd_per_gpu_hour", "pricing.spot.usd_per_gpu_hour"}) {
    EXPECT_NE(std::find(t.missing.begin(), t.missing.end(), field), t.missing.end()) << field;
  }
  for (const RentOption& r : t.rent) EXPECT_FALSE(r.total.has_value()) << r.name;
  // The optional parts left out, the own cost is still given (capital and electricity known).
  in.usd_per_node = 2e6;
  in.usd_per_kwh = 0.1;
  const Tco partial = tco(in);
  ASSERT_TRUE(partial.own_total.has_value());
  EXPECT_NE(std::find(partial.missing.begin(), partial.missing.end(), "tco.staff_per_year"), partial.missing.end());
  // Rack units priced without the nodes' height asks for it.
  in.space_usd_per_rack_unit_month = 50;
  const Tco ru = tco(in);
  EXPECT_NE(std::find(ru.missing.begin(), ru.missing.end(), "tco.rack_units_per_node"), ru.missing.end());
  in.rack_units_per_node = 8;
  EXPECT_NEAR(tco(in).per_year[0].space, 4 * 8 * 50 * 12.0, 1e-9);
}

}  // namespace
}  // namespace capplan::sim
