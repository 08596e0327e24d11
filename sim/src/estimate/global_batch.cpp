// SPDX-License-Identifier: Apache-2.0
// A global batch in tokens resolved to sequences the layout can use (contract in global_batch.hpp).
#include "capplan/sim/estimate/global_batch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "estimate/layout_space.hpp"

namespace capplan::sim {

namespace {

// The divisors of n (n >= 1), largest first.
std::vector<std::int64_t> divisors_descending(std::int64_t n) {
  std::vector<std::int64_t> small, large;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  std::vector<std::int64_t> out(large.begin(), large.end());
  out.insert(out.end(), small.rbegin(), small.rend());
  return out;
}

// The nearest multiple of `granule` to `exact` sequences, at least one granule.
std::int64_t nearest_multiple(double exact, std::int64_t granule) {
  const double g = static_cast<double>(granule);
  return std::max<std::int64_t>(1, std::llround(exact / g)) * granule;
}

// The dp a fixed request leaves no choice about: dp itself, or GPUs / (tp x pp x cp) when all three
// are fixed (cp is 1 unless searched: searches_cp).
std::optional<int> fixed_dp(const Scenario& s) {
  const StrategyRequest& r = s.strategy;
  if (r.dp) return r.dp;
  if (r.tp && r.pp && (r.cp || !searches_cp(s.model, s.training.global_batch, s.cluster.gpus))) {
    const long long model_parallel = 1LL * *r.tp * *r.pp * r.cp.value_or(1);
    if (model_parallel > 0 && s.cluster.gpus % model_parallel == 0) {
      return static_cast<int>(s.cluster.gpus / model_parallel);
    }
  }
  return std::nullopt;
}

struct DpChoice {
  std::int64_t sequences = 1;
  std::int64_t dp = 1;  // the most data-parallel ways it allows (a divisor of the room)
};

// Among the multiples of micro_batch within kBatchTokensTolerance of `exact`, the one whose
// sequences / micro_batch share the largest divisor with `room`, the nearest of those. The nearest
// multiple of d x micro_batch is the nearest count that d divides, so the largest divisor d of the
// room whose nearest multiple lies within the tolerance wins (d = 1: the nearest count).
DpChoice choose_for_dp(double exact, std::int64_t micro_batch, std::int64_t room) {
  for (const std::int64_t d : divisors_descending(std::max<std::int64_t>(1, room))) {
    const std::int64_t b = nearest_multiple(exact, d * micro_batch);
    if (d == 1 || std::fabs(static_cast<double>(b) - exact) <= kBatchTokensTolerance * exact) return {b, d};
  }
  return {nearest_multiple(exact, micro_batch), 1};
}

Finding batch_finding(FindingCode code, const Scenario& s, std::int64_t sequences,
                      std::initializer_list<std::pair<std::string_view, double>> extra) {
  const double tokens = s.training.global_batch_tokens, seq = s.model.seq_len;
  Finding f = finding(code, "training.global_batch_tokens",
                      {{"tokens", tokens},
                       {"exact", tokens / seq},
                       {"seq_len", seq},
                       {"sequences", static_cast<double>(sequences)},
                       {"used_tokens", static_cast<double>(sequences) * seq}});
  for (const auto& [name, v] : extra) f.values.push_back({name, v, {}});
  return f;
}

}  // namespace

int data_parallel_room(const Scenario& s) {
  if (const auto dp = fixed_dp(s)) return std::max(1, *dp);
  const StrategyRequest& r = s.strategy;
  const long long model_parallel = 1LL * r.tp.value_or(1) * r.pp.value_or(1) * r.cp.value_or(1);
  if (model_parallel < 1 || s.cluster.gpus % model_parallel != 0) return 1;
  return std::max(1, static_cast<int>(s.cluster.gpus / model_parallel));
}

BatchChoice choose_global_batch(const Scenario& s) {
  const TrainingJob& t = s.training;
  if (!(t.global_batch_tokens > 0) || s.model.seq_len < 1) return {t.global_batch, std::nullopt};
  const double exact = t.global_batch_tokens / s.model.seq_len;
  const std::int64_t micro_batch = std::max(1, s.strategy.micro_batch.value_or(1));
  const bool whole = exact >= 1 && exact == std::floor(exact);
  const auto usable = [&](std::int64_t granule) {
    return whole && static_cast<std::int64_t>(exact) % granule == 0;
  };

  if (const auto dp = fixed_dp(s)) {
    const std::int64_t granule = std::max(1, *dp) * micro_batch;
    if (usable(granule)) return {static_cast<std::int64_t>(exact), std::nullopt};
    const std::int64_t b = nearest_multiple(exact, granule);
    return {b, batch_finding(FindingCode::batch_rounded_to_layout, s, b, {{"granule", static_cast<double>(granule)}})};
  }
  if (usable(micro_batch)) return {static_cast<std::int64_t>(exact), std::nullopt};
  const DpChoice c = choose_for_dp(exact, micro_batch, data_parallel_room(s));
  if (c.dp == 1) {
    return {c.sequences,
            batch_finding(FindingCode::batch_rounded_to_layout, s, c.sequences, {{"granule", static_cast<double>(micro_batch)}})};
  }
  return {c.sequences, batch_finding(FindingCode::batch_chosen_for_dp, s, c.sequences,
                                     {{"dp", static_cast<double>(c.dp)}, {"within_pct", kBatchTokensTolerance * 100}})};
}

std::optional<Finding> resolve_global_batch(Scenario& s) {
  BatchChoice c = choose_global_batch(s);
  s.training.global_batch = c.sequences;
  return std::move(c.finding);
}

std::optional<Finding> batch_forces_one_replica(const Scenario& s) {
  if (s.strategy.dp) return std::nullopt;  // the user's choice, checked by the layout
  const std::int64_t room = data_parallel_room(s);
  const std::int64_t micro_batch = std::max(1, s.strategy.micro_batch.value_or(1));
  const std::int64_t batch = s.training.global_batch;
  if (room < 2 || batch < 1 || batch % micro_batch != 0 || std::gcd(batch / micro_batch, room) != 1) {
    return std::nullopt;
  }
  // A batch near it that leaves DP room: the tolerance's choice, else the nearest multiple of the
  // smallest factor of the room.
  DpChoice c = choose_for_dp(static_cast<double>(batch), micro_batch, room);
  if (c.dp == 1) {
    std::int64_t p = 2;
    while (room % p != 0) ++p;
    c.sequences = nearest_multiple(static_cast<double>(batch), p * micro_batch);
  }
  return finding(FindingCode::batch_forces_one_replica, "training.global_batch",
                 {{"sequences", static_cast<double>(batch)},
                  {"replicas", static_cast<double>(room)},
                  {"suggested", static_cast<double>(c.sequences)}});
}

double training_steps(const Scenario& s) {
  const double tokens_per_step = static_cast<double>(s.training.global_batch) * s.model.seq_len;
  // A ratio a rounding error above a whole number (1e12 / 2^21 x 2^21) stays that number.
  const double ratio = s.training.tokens / tokens_per_step;
  const double whole = std::round(ratio);
  return std::abs(ratio - whole) <= 1e-9 * std::max(1.0, whole) ? whole : std::ceil(ratio);
}

}  // namespace capplan::sim
