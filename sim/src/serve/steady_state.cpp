// SPDX-License-Identifier: Apache-2.0
// A replica under load in closed form: the decode batch and the step time at their fixed point,
// the latency percentiles from the length distributions (the event simulation is simulate.cpp).
#include <algorithm>
#include <cmath>

#include "capplan/sim/serve/serve.hpp"

namespace capplan::sim {

namespace {

// Mean tokens a decoding sequence holds over its life, weighted by the steps it spends decoding
// (longer outputs spend more): E[I] + E[O^2] / (2 E[O]), log-normal E[O^2] = E[O]^2 exp(s^2).
double mean_decode_context(const Traffic& t) {
  const double s = t.output.sigma();
  return t.input.mean + t.output.mean * std::exp(s * s) / 2.0;
}

// Mean keys a prompt token attends to: its cached prefix plus the causal half of the rest.
double mean_prefill_keys(const Traffic& t) {
  const double s = t.input.sigma();
  const double weighted = t.input.mean * std::exp(s * s);  // E[I^2] / E[I]
  return t.prefix_hit * weighted + (1.0 - t.prefix_hit) * weighted / 2.0;
}

// The step time's mean and spread over the steps of a Poisson load; whether its prompts overrun
// the token budget.
struct Mix {
  double mean = 0, sd = 0;
  bool over_budget = false;
};

// The closed form of one replica: the traffic's mean request, the batch the engine and the cache
// allow, and the steps that carry them.
struct ClosedForm {
  ClosedForm(const ServeJob& job, const PassModel& pass_model, const ReplicaMemory& memory)
      : tr(job.traffic),
        e(job.engine),
        pass(pass_model),
        I(tr.input.mean),
        O(tr.output.mean),
        fresh(I * (1.0 - tr.prefix_hit)),
        decode_steps(std::max(O - 1.0, 0.0)),
        ctx(mean_decode_context(tr)),
        keys(mean_prefill_keys(tr)),
        // Growing sequences hold their mean context; reserved ones their whole length.
        held(e.reserve_full_sequence ? I + O : ctx),
        cap_kv(static_cast<double>(memory.kv_tokens) / (held + e.kv_block_tokens / 2.0)),
        cap(std::min<double>(e.max_num_seqs, cap_kv)),
        budget(static_cast<double>(e.max_num_batched_tokens)) {}

  StepLoad load_at(double rate, double tau) const;
  void with_load(ServeLoad& out, double rate, double tau, double batch) const;
  const char* batch_limit() const { return cap_kv < e.max_num_seqs ? "kv_cache" : "max_num_seqs"; }
  ServeLoad full_batch() const;
  Mix mixture(double rate, double tau) const;
  ServeLoad at_rate(double rate) const;
  void latencies(ServeLoad& out, double rate, double tau, double batch) const;

  const Traffic& tr;
  const EngineSpec& e;
  const PassModel& pass;
  const double I, O;
  const double fresh;  // prompt tokens computed per request
  const double decode_steps;
  const double ctx;
  const double keys;
  const double held;
  const double cap_kv;
  const double cap;
  const double budget;
};

// One step carrying `rate` requests/s worth of prompts and decodes for a step of `tau`.
StepLoad ClosedForm::load_at(double rate, double tau) const {
  StepLoad l;
  const double batch = std::min(rate * decode_steps * tau, cap);
  const double prompts = rate * tau;
  l.decode_sequences = static_cast<int>(std::lround(batch));
  l.decode_context = batch * ctx;
  l.prefill_tokens = static_cast<std::int64_t>(std::llround(prompts * fresh));
  l.prefill_work = prompts * fresh * keys;
  l.logits_rows = static_cast<int>(std::lround(batch + prompts));
  return l;
}

// The throughput at `rate` with steps of `tau` and a decode batch of `batch`, and the share of the
// step its prompts take.
void ClosedForm::with_load(ServeLoad& out, double rate, double tau, double batch) const {
  out.mean_step_s = tau;
  out.mean_batch = batch;
  out.requests_per_s = rate;
  out.output_tokens_per_s = rate * O;
  out.total_tokens_per_s = rate * (O + I);
  StepLoad l = load_at(rate, tau);
  StepLoad d = l;
  d.prefill_tokens = 0;
  d.prefill_work = 0;
  d.logits_rows = d.decode_sequences;
  const double full = pass.step(l);
  out.prefill_share = full > 0 ? std::clamp((full - (d.decode_sequences > 0 ? pass.step(d) : 0.0)) / full, 0.0, 1.0) : 0.0;
}

// Offline / closed loop: the batch is as large as the engine and the cache allow (closed loop: the
// clients); each step replaces the B / (O - 1) sequences that finish.
ServeLoad ClosedForm::full_batch() const {
  ServeLoad out;
  double B = std::max(1.0, std::floor(cap));
  if (tr.arrival == Arrival::closed_loop) B = std::min<double>(B, tr.concurrency);
  const double per_step = decode_steps > 0 ? B / decode_steps : B;  // prompts started per step
  StepLoad l;
  l.decode_sequences = decode_steps > 0 ? static_cast<int>(B) : 0;
  l.decode_context = l.decode_sequences * ctx;
  l.prefill_tokens = std::max<std::int64_t>(1, std::llround(per_step * fresh));
  l.prefill_work = per_step * fresh * keys;
  l.logits_rows = static_cast<int>(std::lround(B + per_step));
  const double tau = pass.step(l);
  const double rate = per_step / tau;
  with_load(out, rate, tau, B);
  const double ttft = pass.prefill(static_cast<std::int64_t>(std::llround(fresh))) + tau;
  out.ttft = {ttft, ttft, ttft, ttft, ttft};
  out.tpot = {tau, tau, tau, tau, tau};
  const auto e2e = [&](double q) { return ttft + std::max(0.0, tr.output.quantile(q) - 1.0) * tau; };
  out.e2e = {ttft + decode_steps * tau, e2e(0.5), e2e(0.9), e2e(0.95), e2e(0.99)};
  out.limit = batch_limit();
  if (tr.arrival == Arrival::closed_loop && tr.concurrency < cap) out.limit.clear();
  return out;
}

// Steps differ: most carry only decodes, some a prompt (or a chunk of one). The number of prompt
// chunks a step carries is Poisson with mean rate x tau x chunks per prompt, and the mean step is
// the mixture's mean (taking the step at the mean load would miss that a step's time is concave
// in its tokens: memory-bound first, then compute-bound).
Mix ClosedForm::mixture(double rate, double tau) const {
  Mix mx;
  const double B = std::min(rate * decode_steps * tau, cap);
  const double room = std::max(1.0, budget - B);
  const double per_prompt = std::max(1.0, std::ceil(fresh / room));
  const double chunk = fresh / per_prompt;
  const double mu = rate * tau * per_prompt;
  if (mu * chunk + B > budget) mx.over_budget = true;
  StepLoad l;
  // A step that runs has at least the sequence it runs for (at low load the engine idles
  // between requests; a running sequence sees steps of at least one).
  l.decode_sequences = std::max(1, static_cast<int>(std::lround(B)));
  l.decode_context = l.decode_sequences * ctx;
  double p = std::exp(-mu), cum = 0, sq = 0;
  for (int k = 0; k < 200 && cum < 1.0 - 1e-6; ++k) {
    if (k > 0) p *= mu / k;
    const double tokens = std::min(k * chunk, room);
    l.prefill_tokens = static_cast<std::int64_t>(std::llround(tokens));
    l.prefill_work = tokens * keys;
    l.logits_rows = l.decode_sequences + static_cast<int>(std::lround(k / per_prompt));
    const double t = l.prefill_tokens + l.decode_sequences > 0 ? pass.step(l) : 0.0;
    mx.mean += p * t;
    sq += p * t * t;
    cum += p;
  }
  if (cum > 0) {
    mx.mean /= cum;
    mx.sd = std::sqrt(std::max(0.0, sq / cum - mx.mean * mx.mean));
  }
  return mx;
}

// Poisson arrivals at `rate`: the fixed point tau = E[step(tau)]. f(tau) = E[step] - tau falls
// through zero once the steps keep up with the rate; none before the batch or the token budget
// runs out: saturated.
ServeLoad ClosedForm::at_rate(double rate) const {
  ServeLoad out;
  const auto f = [&](double tau) { return mixture(rate, tau).mean - tau; };
  double lo = 0, hi = std::max(1e-4, pass.overhead());
  bool found = false;
  for (int i = 0; i < 60; ++i) {
    const bool over_batch = rate * decode_steps * hi > cap;
    const bool over_budget = mixture(rate, hi).over_budget;
    if (f(hi) <= 0 && !over_batch && !over_budget) {
      found = true;
      break;
    }
    if (over_batch || over_budget) {
      out.limit = over_batch ? batch_limit() : "max_num_batched_tokens";
      break;
    }
    lo = hi;
    hi *= 1.5;
  }
  if (!found) {
    out.saturated = true;
    with_load(out, rate, hi, std::min(rate * decode_steps * hi, cap));
    return out;
  }
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > 0 ? lo : hi) = mid;
  }
  const double tau = hi;
  const double B = rate * decode_steps * tau;
  with_load(out, rate, tau, B);
  latencies(out, rate, tau, B);
  if (B >= 0.95 * cap) out.limit = batch_limit();
  return out;
}

// Latency percentiles at the fixed point: steps of `tau` carrying a decode batch of `batch`.
void ClosedForm::latencies(ServeLoad& out, double rate, double tau, double batch) const {
  const double sd = mixture(rate, tau).sd;
  // Time to first token: wait for the step in flight (half a step), the prompt's chunks at the
  // step's leftover token budget, and the queue of prompts ahead when prefill is busy (an M/G/1
  // wait, Pollaczek-Khinchine, on the budget the decodes leave).
  const double room = std::max(1.0, budget - batch);
  const double rho = std::min(0.99, rate * fresh * tau / room);
  const auto ttft_for = [&](double prompt) {
    const double mine = prompt * (1.0 - tr.prefix_hit);
    const double chunks = std::max(1.0, std::ceil(mine / room));
    StepLoad l = load_at(rate, tau);
    l.prefill_tokens = std::max<std::int64_t>(l.prefill_tokens, std::llround(std::min(mine, room)));
    l.prefill_work = std::max(l.prefill_work, std::min(mine, room) * prompt * (1.0 + tr.prefix_hit) / 2.0);
    const double step = pass.step(l);
    const double service = chunks * step;
    const double wait = rho / (1.0 - rho) * service / 2.0 * (1.0 + tr.input.sigma() * tr.input.sigma());
    return tau / 2.0 + service + wait;
  };
  const auto stats_of = [&](auto fn, const LengthDistribution& d) {
    return LatencyStats{fn(d.mean), fn(d.quantile(0.5)), fn(d.quantile(0.9)), fn(d.quantile(0.95)), fn(d.quantile(0.99))};
  };
  out.ttft = stats_of(ttft_for, tr.input);
  // A request's TPOT averages its O - 1 steps: the step spread shrinks by sqrt(O - 1) (steps
  // taken as independent); z at 50/90/95/99%.
  const double n_steps = std::max(1.0, decode_steps);
  const auto tpot_at = [&](double z) { return tau + z * sd / std::sqrt(n_steps); };
  out.tpot = {tau, tau, tpot_at(1.2816), tpot_at(1.6449), tpot_at(2.3263)};
  const double ttft_mean = out.ttft.mean;
  const auto e2e_of = [&](double o, double z) {
    const double n = std::max(0.0, o - 1.0);
    return ttft_mean + n * tau + z * sd * std::sqrt(n);
  };
  const LengthDistribution& od = tr.output;
  out.e2e = {ttft_mean + decode_steps * tau, e2e_of(od.quantile(0.5), 0), e2e_of(od.quantile(0.9), 1.2816),
             e2e_of(od.quantile(0.95), 1.6449), e2e_of(od.quantile(0.99), 2.3263)};
}

}  // namespace

ServeLoad steady_state(const ServeJob& job, const PassModel& pass, const ReplicaMemory& memory) {
  if (!memory.fits()) {
    ServeLoad out;
    out.saturated = true;
    out.limit = "kv_cache";
    return out;
  }
  const ClosedForm form(job, pass, memory);
  if (form.tr.arrival != Arrival::poisson) return form.full_batch();
  return form.at_rate(form.tr.rate);
}

}  // namespace capplan::sim
