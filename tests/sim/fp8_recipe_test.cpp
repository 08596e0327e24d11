// SPDX-License-Identifier: Apache-2.0
// FP8 scaling recipes (sim/workload.hpp, Fp8Recipe): the bytes of Transformer Engine's casts.
#include <gtest/gtest.h>

#include <cstring>

#include "capplan/sim/step_model.hpp"
#include "capplan/sim/workload.hpp"
#include "test_support.hpp"

namespace capplan::sim {
namespace {

using test::cluster_of;
using test::job_of;
using test::layout;

double cast_bytes(const StepOps& ops) {
  double total = 0;
  for (const StepOp& so : ops.ops) {
    const auto* m = std::get_if<MemoryOp>(&so.op);
    if (m != nullptr && std::strcmp(m->name, "fp8_cast_transpose") == 0) total += m->bytes.base() * so.count;
  }
  return total;
}

TEST(Fp8Recipe, CurrentScalingReadsEachInputOnceMoreThanDelayedScaling) {
  // Delayed scaling: one fused cast + transpose (read 2, write 1 + 1). Current (tensorwise)
  // scaling computes the tensor's amax in a pass of its own first: 2 + 2 + 1 + 1.
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::delayed), 4.0);
  EXPECT_DOUBLE_EQ(fp8_cast_bytes_per_element(Fp8Recipe::current), 6.0);
  for (Fp8Recipe r : {Fp8Recipe::delayed, Fp8Recipe::current}) EXPECT_EQ(fp8_recipe_from_string(to_string(r)), r);
  EXPECT_FALSE(fp8_recipe_from_string("mxfp8").has_value());
  EXPECT_EQ(job_of(8).fp8_recipe, Fp8Recipe::delayed);  // TE's and Megatron-LM's default
}

TEST(Fp8Recipe, StepCastBytesScaleWithTheRecipe) {
  // The same element count is cast under both recipes, so the step's cast bytes are in the
  // ratio 6 : 4; bf16 training casts nothing.
  const ModelSpec m = test::llama2_70b();
  const Parallelism p = layout(4, 1, 2, 1, Recompute::none, true);
  const Cluster c = cluster_of(test::h100_sxm(), 8);
  TrainingJob delayed = job_of(64, 1e9, Precision::fp8);
  TrainingJob current = delayed;
  current.fp8_recipe = Fp8Recipe::current;
  const double d = cast_bytes(build_step_ops(m, delayed, p, c));
  ASSERT_GT(d, 0.0);
  EXPECT_DOUBLE_EQ(cast_bytes(build_step_ops(m, current, p, c)), 1.5 * d);
  EXPECT_DOUBLE_EQ(cast_bytes(build_step_ops(m, job_of(64), p, c)), 0.0);
}

}  // namespace
}  // namespace capplan::sim
