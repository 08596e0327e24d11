// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace capplan::sim {

// GPU-to-GPU speed variability. GPUs of one SKU in one cluster do not run at one speed: power
// management and manufacturing spread make some persistently slower (Sinha et al., SC'22, "Not
// All GPUs Are Created Equal": 8% average spread between the fastest and slowest GPU of a
// cluster, outliers excluded, up to 22%). A synchronous training step waits for its slowest
// GPU: every TP collective, pipeline hand-off and the data-parallel reduction is a barrier, so
// the compute of an N-GPU job runs at the pace of the slowest of N GPUs drawn from the cluster.
//
// Model: relative per-GPU compute time ~ Normal(1, spread). Sinha's 8% is read as the whisker
// range of a box plot of a normal population (Q1 - 1.5 IQR .. Q3 + 1.5 IQR = +-2.698 sigma,
// 5.396 sigma in all), so the default spread is 0.08 / 5.396 = 0.0148, rounded to 0.015.
inline constexpr double kDefaultGpuSpeedSpread = 0.015;

// Expected maximum of n independent standard normal variables, by Blom's (1958) order-statistic
// approximation E[X(n:n)] ~ inverse_normal_cdf((n - 0.375) / (n + 0.25)): within 4.5% of the exact
// value at n = 2 and within 0.75% for n >= 8 (docs/model.md). Returns 0 for n <= 1.
double expected_max_standard_normal(long long n);

// Standard normal quantile (inverse CDF) for p in (0, 1), accurate to ~1e-15 (a rational
// approximation refined by one Halley step on std::erfc).
double inverse_normal_cdf(double p);

// Fractional slowdown of the compute of a synchronous job on `gpus` GPUs: spread x E[max of n].
// Contract: 0 for gpus <= 1 or spread <= 0; finite for any gpus.
double slowest_gpu_slowdown(long long gpus, double spread);

// Load of the busiest of `ep` expert-parallel ranks over the mean when every token picks its
// top_k of `experts` experts uniformly at random (Megatron-Core's moe_router_force_load_balancing
// draws normal logits: moe_utils.py RandomSTE, NVIDIA/Megatron-LM @d98e8a6), each rank holding
// experts / ep of them and sending `tokens_per_rank` tokens. A rank receives the copies of
// ep * tokens_per_rank independent tokens; one token puts a hypergeometric number of its top_k
// copies on it (mean top_k / ep, variance top_k (1/ep)(1 - 1/ep)(experts - top_k)/(experts - 1)),
// so the load is about normal with mean T k and variance T k (1 - 1/ep)(E - k)/(E - 1), and the
// busiest rank sits E[max of ep normals] standard deviations above the mean.
// Contract: 1 for ep <= 1, top_k >= experts or tokens_per_rank <= 0.
double random_routing_busiest_rank(long long tokens_per_rank, int top_k, int experts, int ep);

}  // namespace capplan::sim
