// SPDX-License-Identifier: Apache-2.0
// A global batch asked in tokens, resolved to sequences the layout can use (global_batch.hpp), and
// the loud finding for a batch that leaves data parallelism no room.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>

#include "capplan/sim/cost/datasheet_cost.hpp"
#include "capplan/sim/estimate/global_batch.hpp"
#include "capplan/sim/search/search.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

// An 8-layer GPT (hidden 4096, 32 heads: about 1.8B parameters, fits on one H100) with 4096-token
// sequences on `gpus` H100s, the batch asked in tokens, every strategy field searched.
Scenario asked_in_tokens(double tokens, int gpus) {
  Scenario s;
  s.model = test::gpt3_175b();
  s.model.layers = 8;
  s.model.hidden = 4096;
  s.model.heads = 32;
  s.model.kv_heads = 32;
  s.model.ffn_hidden = 4 * 4096;
  s.model.seq_len = 4096;
  s.training.tokens = 2e12;
  s.training.global_batch_tokens = tokens;
  s.training.global_batch = std::llround(tokens / 4096);
  s.cluster = test::cluster_of(test::h100_sxm(), gpus);
  return s;
}

TEST(GlobalBatch, FourMTokensOf4096On512GpusAre1024SequencesNot977) {
  // 4e6 / 4096 = 976.56 sequences; the nearest whole count, 977, is prime (dp = 1 only). The
  // nearest multiple of 512 (all the GPUs) is 2 * 512 = 1024, |1024 - 976.56| / 976.56 = 4.86%,
  // within the 5% tolerance: 1024 sequences = 2^22 tokens, dp up to 512.
  const Scenario s = asked_in_tokens(4e6, 512);
  const BatchChoice c = choose_global_batch(s);
  EXPECT_EQ(c.sequences, 1024);
  EXPECT_NE(c.sequences, 977);
  ASSERT_TRUE(c.finding);
  EXPECT_EQ(c.finding->code, FindingCode::batch_chosen_for_dp);
  EXPECT_EQ(c.finding->field, "training.global_batch_tokens");
  EXPECT_EQ(c.finding->number("tokens"), 4e6);
  EXPECT_EQ(c.finding->number("sequences"), 1024);
  EXPECT_EQ(c.finding->number("used_tokens"), 1024.0 * 4096);
  EXPECT_EQ(c.finding->number("dp"), 512);
  EXPECT_DOUBLE_EQ(c.finding->number("exact"), 4e6 / 4096);
  EXPECT_DOUBLE_EQ(c.finding->number("within_pct"), kBatchTokensTolerance * 100);
  EXPECT_LE(std::fabs(1024 - 4e6 / 4096) / (4e6 / 4096), kBatchTokensTolerance);
}

TEST(GlobalBatch, AutoTakesTheLargestDivisorOfTheGpusWithinTheTolerance) {
  // 768 GPUs = 2^8 * 3: multiples of 768 (768: 21% off) and of 384 (1152: 18%) are too far; the
  // nearest multiple of 256, 4 * 256 = 1024, is 4.86% off: gcd(1024, 768) = 256.
  const BatchChoice on_768 = choose_global_batch(asked_in_tokens(4e6, 768));
  EXPECT_EQ(on_768.sequences, 1024);
  EXPECT_EQ(on_768.finding->number("dp"), std::gcd<std::int64_t>(1024, 768));
  // One node of 8: the nearest multiple of 8, round(976.56 / 8) = 122 -> 976 (0.06% off).
  const BatchChoice on_8 = choose_global_batch(asked_in_tokens(4e6, 8));
  EXPECT_EQ(on_8.sequences, 976);
  EXPECT_EQ(on_8.finding->number("dp"), 8);
}

TEST(GlobalBatch, OneGpuRoundsToTheNearestWholeSequence) {
  const BatchChoice c = choose_global_batch(asked_in_tokens(4e6, 1));
  EXPECT_EQ(c.sequences, std::llround(4e6 / 4096));  // 977: no data parallelism to make room for
  ASSERT_TRUE(c.finding);
  EXPECT_EQ(c.finding->code, FindingCode::batch_rounded_to_layout);
  EXPECT_EQ(c.finding->number("granule"), 1);
}

TEST(GlobalBatch, BinaryTokensThatAreWholeSequencesAreTakenAsAsked) {
  // 4Mi = 4 * 2^20 = 4194304 = 1024 * 4096: no finding, whatever the GPUs.
  for (int gpus : {1, 8, 24, 512}) {
    const BatchChoice c = choose_global_batch(asked_in_tokens(4.0 * 1024 * 1024, gpus));
    EXPECT_EQ(c.sequences, 1024) << gpus;
    EXPECT_FALSE(c.finding) << gpus;
  }
}

TEST(GlobalBatch, ABatchInSequencesIsNeverChanged) {
  Scenario s = asked_in_tokens(4e6, 512);
  s.training.global_batch_tokens = 0;
  s.training.global_batch = 977;
  EXPECT_FALSE(resolve_global_batch(s));
  EXPECT_EQ(s.training.global_batch, 977);
}

TEST(GlobalBatch, FixedDpRoundsToTheNearestMultipleOfDpTimesMicroBatch) {
  // 16e6 / 4096 = 3906.25 sequences (2 * 3^2 * 7 * 31 when rounded: no dp = 128); with dp 128 the
  // nearest multiple is round(3906.25 / 128) = round(30.52) = 31 -> 3968 sequences.
  Scenario s = asked_in_tokens(16e6, 512);
  s.strategy.dp = 128;
  const auto f = resolve_global_batch(s);
  EXPECT_EQ(s.training.global_batch, 31 * 128);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code, FindingCode::batch_rounded_to_layout);
  EXPECT_EQ(f->number("granule"), 128);
  // A fixed micro-batch multiplies the granule: 2 * 128 = 256, round(15.26) = 15 -> 3840.
  s.strategy.micro_batch = 2;
  resolve_global_batch(s);
  EXPECT_EQ(s.training.global_batch, 15 * 256);
  // tp, pp fixed (cp 1 for 4096 tokens) imply dp = 512 / (8 * 4) = 16: round(244.14) -> 244 * 16.
  Scenario implied = asked_in_tokens(16e6, 512);
  implied.strategy.tp = 8;
  implied.strategy.pp = 4;
  resolve_global_batch(implied);
  EXPECT_EQ(implied.training.global_batch, 244 * 16);
}

TEST(GlobalBatch, APrimeBatchOnManyGpusIsALoudFinding) {
  Scenario s = asked_in_tokens(0, 512);
  s.training.global_batch_tokens = 0;
  s.training.global_batch = 977;  // prime: gcd(977, 512) = 1
  const auto f = batch_forces_one_replica(s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->code, FindingCode::batch_forces_one_replica);
  EXPECT_TRUE(loud(f->code));
  EXPECT_EQ(f->number("sequences"), 977);
  EXPECT_EQ(f->number("replicas"), 512);
  EXPECT_EQ(f->number("suggested"), 1024);  // within 5% of 977, a multiple of 512
  // No finding: one GPU, a dp the user fixed, or a batch with a factor in common with the GPUs.
  Scenario one = s;
  one.cluster = test::cluster_of(test::h100_sxm(), 1);
  EXPECT_FALSE(batch_forces_one_replica(one));
  Scenario fixed = s;
  fixed.strategy.dp = 1;
  EXPECT_FALSE(batch_forces_one_replica(fixed));
  Scenario even = s;
  even.training.global_batch = 976;
  EXPECT_FALSE(batch_forces_one_replica(even));
  // A small odd batch: nothing within 5% of 3 shares a factor with 8, so the nearest even count.
  Scenario tiny = s;
  tiny.training.global_batch = 3;
  EXPECT_EQ(batch_forces_one_replica(tiny)->number("suggested"), 4);
}

TEST(GlobalBatch, EstimateResolvesTokensAndReportsTheChoiceFirst) {
  // A scenario that was not resolved yet (global_batch as the nearest whole count, 977): estimate()
  // uses the sequences for its cluster and says so before any other finding.
  Scenario s = asked_in_tokens(4e6, 512);
  const DatasheetCost cost(s.cluster);
  auto e = estimate(s, cost);
  ASSERT_TRUE(e) << to_string(e.error());
  ASSERT_FALSE(e->findings.empty());
  EXPECT_EQ(e->findings.front().code, FindingCode::batch_chosen_for_dp);
  EXPECT_GT(e->layout.strategy.dp, 1);
  EXPECT_DOUBLE_EQ(e->totals.steps, std::ceil(s.training.tokens / (1024.0 * 4096)));  // whole steps
  EXPECT_FALSE(has(e->findings, FindingCode::batch_forces_one_replica));
  // The same batch in sequences (977) stays 977, and forces dp = 1 loudly (on 16 GPUs, where
  // tp 8 x pp 2 can hold the one replica).
  Scenario in_sequences = asked_in_tokens(0, 16);
  in_sequences.training.global_batch_tokens = 0;
  in_sequences.training.global_batch = 977;
  auto prime = estimate(in_sequences, DatasheetCost(in_sequences.cluster));
  ASSERT_TRUE(prime) << to_string(prime.error());
  EXPECT_EQ(prime->layout.strategy.dp, 1);
  EXPECT_TRUE(has(prime->findings, FindingCode::batch_forces_one_replica));
}

TEST(GlobalBatch, SearchResolvesTheTokensForAFixedDp) {
  // 16e6 tokens of 4096 with dp fixed at 8 on 1-4 nodes of 8: 3906.25 -> 3904 (488 * 8), a plan.
  SearchRequest r;
  r.base = asked_in_tokens(16e6, 8);
  r.base.strategy.dp = 8;
  r.node_counts = {1, 2, 4};
  r.threads = 1;
  auto res = search(r);
  ASSERT_TRUE(res) << to_string(res.error());
  ASSERT_FALSE(res->plans.empty());
  const Plan& p = res->plans.front();
  EXPECT_EQ(p.estimate.layout.strategy.dp, 8);
  EXPECT_EQ(plan_scenario(r, p).training.global_batch, 488 * 8);
  EXPECT_DOUBLE_EQ(p.estimate.totals.steps, std::ceil(r.base.training.tokens / (488.0 * 8 * 4096)));
  EXPECT_TRUE(has(p.estimate.findings, FindingCode::batch_rounded_to_layout));
  ASSERT_FALSE(res->notes.empty());
  EXPECT_EQ(res->notes.front().code, FindingCode::batch_rounded_to_layout);
}

TEST(GlobalBatch, SearchResolvesTheTokensPerShapeWhenDpIsSearched) {
  // 4e6 tokens on 1 node (8 GPUs: 976) and on 64 nodes (512 GPUs: 1024): each shape's own count.
  SearchRequest r;
  r.base = asked_in_tokens(4e6, 8);
  r.base.training.global_batch = 0;  // not resolved yet: the tokens are what the search reads
  r.node_counts = {1, 64};
  r.top_k = 5;
  r.threads = 1;
  auto res = search(r);
  ASSERT_TRUE(res) << to_string(res.error());
  ASSERT_EQ(res->plans.size(), 2u);
  for (const Plan& p : res->plans) {
    EXPECT_EQ(plan_scenario(r, p).training.global_batch, p.gpus == 8 ? 976 : 1024) << p.gpus;
    EXPECT_DOUBLE_EQ(p.estimate.totals.steps,
                     std::ceil(r.base.training.tokens / ((p.gpus == 8 ? 976.0 : 1024.0) * 4096))) << p.gpus;
  }
}

}  // namespace
}  // namespace capplan::sim
