// SPDX-License-Identifier: Apache-2.0
// A replica under load: the discrete-event simulation of continuous batching and its closed form.
#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <random>

#include "capplan/sim/serve.hpp"

namespace capplan::sim {

double LatencyStats::at(double percentile) const {
  const double q = std::clamp(percentile, 0.0, 1.0);
  struct Point {
    double q, v;
  };
  const Point pts[] = {{0.5, p50}, {0.9, p90}, {0.95, p95}, {0.99, p99}};
  if (q <= 0.5) return p50;
  for (int i = 1; i < 4; ++i) {
    if (q <= pts[i].q) return pts[i - 1].v + (pts[i].v - pts[i - 1].v) * (q - pts[i - 1].q) / (pts[i].q - pts[i - 1].q);
  }
  return p99;
}

LatencyStats latency_stats(std::vector<double> v) {
  LatencyStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  // Linear interpolation between order statistics (numpy's default).
  const auto q = [&](double p) {
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto i = static_cast<std::size_t>(pos);
    const double f = pos - static_cast<double>(i);
    return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v.back();
  };
  s.p50 = q(0.5);
  s.p90 = q(0.9);
  s.p95 = q(0.95);
  s.p99 = q(0.99);
  return s;
}

namespace {

struct Request {
  double arrival = 0;
  std::int64_t input = 0;    // prompt tokens
  std::int64_t output = 0;   // tokens to generate
  std::int64_t cached = 0;   // prompt tokens found in the prefix cache
  std::int64_t prefilled = 0;  // tokens in the KV cache while prefilling (cached ones count)
  std::int64_t to_prefill = 0; // tokens this (re)prefill must reach: the prompt, or prompt + generated after a preemption
  std::int64_t generated = 0;
  std::int64_t decode_start = 0;  // decode-step counter when the request started decoding
  double first_token = -1;
  double finish = -1;
  std::uint32_t version = 0;  // bumped on preemption: stale heap entries are skipped
  bool decoding = false;
};

std::int64_t draw(const LengthDistribution& d, std::mt19937_64& rng) {
  const double s = d.sigma();
  if (s <= 0) return std::max<std::int64_t>(1, std::llround(d.mean));
  std::lognormal_distribution<double> ln(std::log(d.mean) - s * s / 2.0, s);
  return std::max<std::int64_t>(1, std::llround(ln(rng)));
}

std::int64_t default_requests(const Traffic& t, int max_sequences) {
  if (t.requests > 0) return t.requests;
  switch (t.arrival) {
    // Two minutes of traffic, at least 2,000 requests, for stable p99s; at most 50,000.
    case Arrival::poisson: return std::clamp<std::int64_t>(std::llround(t.rate * 120.0), 2000, 50000);
    case Arrival::closed_loop: return std::max<std::int64_t>(1000, 20LL * t.concurrency);
    case Arrival::offline: return std::max<std::int64_t>(1000, 4LL * max_sequences);
  }
  return 2000;
}

}  // namespace

ServeLoad simulate(const ServeJob& job, const PassModel& pass, const ReplicaMemory& memory, std::uint64_t seed) {
  ServeLoad out;
  const Traffic& tr = job.traffic;
  const EngineSpec& e = job.engine;
  if (!memory.fits()) {
    out.saturated = true;
    out.limit = "kv_cache";
    return out;
  }
  std::mt19937_64 rng(seed);
  const std::int64_t n = default_requests(tr, memory.max_sequences);
  std::vector<Request> reqs(static_cast<std::size_t>(n));
  std::exponential_distribution<double> gap(tr.arrival == Arrival::poisson ? tr.rate : 1.0);
  double clock = 0;
  for (auto& r : reqs) {
    if (tr.arrival == Arrival::poisson) clock += gap(rng);
    r.arrival = tr.arrival == Arrival::poisson ? clock : 0.0;
    r.input = draw(tr.input, rng);
    r.output = draw(tr.output, rng);
    r.cached = static_cast<std::int64_t>(std::floor(r.input * tr.prefix_hit));
    r.prefilled = r.cached;
    r.to_prefill = r.input;
  }
  const std::int64_t kv_cap = memory.kv_tokens;
  const double half_block = e.kv_block_tokens / 2.0;
  // The warm-up (the first tenth of the requests) is left out of the statistics.
  const std::int64_t warm = tr.arrival == Arrival::poisson ? n / 10 : 0;

  std::deque<std::int64_t> waiting;     // FIFO, preempted requests at the front
  std::deque<std::int64_t> prefilling;  // admitted, prompt not finished
  std::vector<std::int64_t> decode_order;  // decoding requests in admission order (newest last; lazy)
  using Entry = std::pair<std::int64_t, std::pair<std::int64_t, std::uint32_t>>;  // finish step, id, version
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> finishing;
  std::int64_t next_arrival = 0, closed_next = 0;
  if (tr.arrival == Arrival::closed_loop) {
    closed_next = std::min<std::int64_t>(n, tr.concurrency);
    for (std::int64_t i = 0; i < closed_next; ++i) waiting.push_back(i);
    next_arrival = n;  // arrivals driven by completions
  }
  double now = 0;
  std::int64_t decode_steps = 0, steps = 0, decoding = 0, kv_used = 0, done = 0, kv_reserved = 0;
  const bool reserve = e.reserve_full_sequence;
  double decode_ctx = 0;  // sum of decoding sequences' cached tokens
  double busy = 0, batch_sum = 0, prefill_time = 0, window_start = -1, window_end = 0;
  double window_out = 0, window_in = 0;
  const auto window_open = [&]() { return window_start >= 0; };

  const auto finish = [&](std::int64_t id) {
    Request& r = reqs[static_cast<std::size_t>(id)];
    if (reserve && r.first_token != -2) kv_reserved -= r.input + r.output + static_cast<std::int64_t>(half_block);
    r.finish = now;
    r.decoding = false;
    ++done;
    if (tr.arrival == Arrival::closed_loop && closed_next < n) {
      reqs[static_cast<std::size_t>(closed_next)].arrival = now;
      waiting.push_back(closed_next++);
    }
  };
  const auto preempt_newest = [&]() {
    while (!decode_order.empty()) {
      const std::int64_t id = decode_order.back();
      decode_order.pop_back();
      Request& r = reqs[static_cast<std::size_t>(id)];
      if (!r.decoding) continue;
      // vLLM's recompute preemption: the sequence's blocks are freed and it prefills its prompt
      // and what it generated again when it is rescheduled.
      const std::int64_t g = r.generated + (decode_steps - r.decode_start);
      const std::int64_t ctx = r.input + g - 1;
      r.generated = g;
      r.decoding = false;
      ++r.version;
      --decoding;
      decode_ctx -= static_cast<double>(ctx);
      kv_used -= ctx;
      r.prefilled = r.cached;
      r.to_prefill = ctx;
      waiting.push_front(id);
      ++out.preemptions;
      return true;
    }
    return false;
  };

  while (done < n) {
    if (tr.arrival != Arrival::closed_loop) {
      while (next_arrival < n && reqs[static_cast<std::size_t>(next_arrival)].arrival <= now) {
        waiting.push_back(next_arrival++);
      }
    }
    if (decoding == 0 && prefilling.empty() && waiting.empty()) {
      if (next_arrival >= n) break;  // nothing left (cannot happen while done < n)
      now = reqs[static_cast<std::size_t>(next_arrival)].arrival;
      continue;
    }
    // 1. Every decoding sequence gets its next token; the newest is preempted while the cache
    // cannot hold one more token for each.
    const auto seqs = [&]() { return decoding + static_cast<std::int64_t>(prefilling.size()); };
    while (!reserve && decoding > 0 && kv_used + decoding + half_block * seqs() > kv_cap && preempt_newest()) {
    }
    std::int64_t budget = e.max_num_batched_tokens - decoding;
    StepLoad load;
    load.decode_sequences = static_cast<int>(decoding);
    load.decode_context = decode_ctx;
    load.logits_rows = static_cast<int>(decoding);
    std::vector<std::pair<std::int64_t, std::int64_t>> chunks;  // id, tokens
    // 2. Prompts being prefilled, then 3. waiting ones, first come first served.
    const auto schedule = [&](std::int64_t id) {
      Request& r = reqs[static_cast<std::size_t>(id)];
      const std::int64_t left = r.to_prefill - r.prefilled;
      if (!e.chunked_prefill && left > budget) return false;
      // A new sequence brings its cached prefix into the cache with its first chunk.
      const bool admitting = r.prefilled == r.cached;
      const std::int64_t prefix = admitting ? r.cached : 0;
      std::int64_t room = kv_cap - kv_used - prefix - decoding - static_cast<std::int64_t>(half_block * (seqs() + 1));
      if (reserve) {
        // The whole sequence is reserved at admission; chunks then fit by construction.
        const std::int64_t need = r.input + r.output + static_cast<std::int64_t>(half_block);
        if (admitting && kv_reserved + need > kv_cap) return false;
        room = left;
        if (admitting) kv_reserved += need;
      }
      const std::int64_t chunk = std::min({left, budget, room});
      if (chunk <= 0) return false;
      const double c = static_cast<double>(chunk);
      load.prefill_tokens += chunk;
      load.prefill_work += c * (static_cast<double>(r.prefilled) + (c + 1.0) / 2.0);
      kv_used += chunk + prefix;  // reserved now: later admissions see it
      chunks.emplace_back(id, chunk);
      budget -= chunk;
      return true;
    };
    for (std::int64_t id : prefilling) {
      if (budget <= 0 || !schedule(id)) break;
    }
    while (budget > 0 && !waiting.empty() && seqs() < e.max_num_seqs) {
      const std::int64_t id = waiting.front();
      const Request& r = reqs[static_cast<std::size_t>(id)];
      // A request whose whole sequence can never fit is served alone as far as it goes: admit it
      // only into an empty engine (it is then preempted and retried; the run reports it).
      if (!schedule(id)) break;
      (void)r;
      waiting.pop_front();
      prefilling.push_back(id);
    }
    if (load.prefill_tokens == 0 && load.decode_sequences == 0) {
      // Blocked: nothing fits (a prompt larger than the whole cache). Drop it as unservable.
      if (!waiting.empty() && decoding == 0 && prefilling.empty()) {
        const std::int64_t id = waiting.front();
        waiting.pop_front();
        reqs[static_cast<std::size_t>(id)].first_token = -2;  // marks "not served"
        finish(id);
        out.saturated = true;
        out.limit = "kv_cache";
        continue;
      }
      if (next_arrival < n) {
        now = std::max(now, reqs[static_cast<std::size_t>(next_arrival)].arrival);
        continue;
      }
      break;
    }
    // Prompts that complete in this step sample their first token.
    int completing = 0;
    for (const auto& [id, chunk] : chunks) {
      const Request& r = reqs[static_cast<std::size_t>(id)];
      if (r.prefilled + chunk >= r.to_prefill) ++completing;
    }
    load.logits_rows += completing;
    const double tau = pass.step(load);
    if (load.prefill_tokens > 0) {
      StepLoad no_prefill = load;
      no_prefill.prefill_tokens = 0;
      no_prefill.prefill_work = 0;
      no_prefill.logits_rows = load.decode_sequences;
      prefill_time += tau - (load.decode_sequences > 0 ? pass.step(no_prefill) : 0.0);
    }
    now += tau;
    busy += tau;
    ++steps;
    batch_sum += load.decode_sequences;
    const bool in_window = window_open() && (tr.arrival != Arrival::poisson || next_arrival < n);
    if (in_window) {
      window_out += static_cast<double>(load.decode_sequences + completing);
      window_in += static_cast<double>(load.prefill_tokens);
      window_end = now;
    }
    // Decodes: each sequence's cache grows by one token.
    if (decoding > 0) {
      ++decode_steps;
      kv_used += decoding;
      decode_ctx += static_cast<double>(decoding);
      while (!finishing.empty() && finishing.top().first <= decode_steps) {
        const auto [step, idv] = finishing.top();
        finishing.pop();
        Request& r = reqs[static_cast<std::size_t>(idv.first)];
        if (r.version != idv.second || !r.decoding) continue;
        const std::int64_t ctx = r.input + r.output - 1;
        --decoding;
        decode_ctx -= static_cast<double>(ctx);
        kv_used -= ctx;
        r.generated = r.output;
        finish(idv.first);
      }
    }
    // Prefill chunks: advance; a finished prompt emits its first token and starts decoding.
    for (const auto& [id, chunk] : chunks) {
      Request& r = reqs[static_cast<std::size_t>(id)];
      r.prefilled += chunk;
      if (r.prefilled < r.to_prefill) continue;
      prefilling.erase(std::find(prefilling.begin(), prefilling.end(), id));
      const bool resumed = r.generated > 0;
      if (!resumed) {
        r.first_token = now;
        r.generated = 1;
        if (!window_open() && id >= warm) window_start = now;
      }
      if (r.generated >= r.output) {
        kv_used -= r.prefilled;
        finish(id);
        continue;
      }
      r.decoding = true;
      ++decoding;
      decode_ctx += static_cast<double>(r.prefilled);
      // The sequence has `generated` tokens; each decode step adds one.
      r.decode_start = decode_steps;
      finishing.push({decode_steps + (r.output - r.generated), {id, r.version}});
      decode_order.push_back(id);
    }
  }

  std::vector<double> ttft, tpot, e2e;
  ttft.reserve(static_cast<std::size_t>(n));
  double out_tokens = 0, in_tokens = 0, first_arrival = -1, last_finish = 0;
  for (std::int64_t i = warm; i < n; ++i) {
    const Request& r = reqs[static_cast<std::size_t>(i)];
    if (r.first_token < 0 || r.finish < 0) continue;
    ttft.push_back(r.first_token - r.arrival);
    if (r.output > 1) tpot.push_back((r.finish - r.first_token) / static_cast<double>(r.output - 1));
    e2e.push_back(r.finish - r.arrival);
    out_tokens += static_cast<double>(r.output);
    in_tokens += static_cast<double>(r.input);
    if (first_arrival < 0 || r.arrival < first_arrival) first_arrival = r.arrival;
    last_finish = std::max(last_finish, r.finish);
  }
  out.requests = static_cast<std::int64_t>(e2e.size());
  out.ttft = latency_stats(std::move(ttft));
  out.tpot = latency_stats(std::move(tpot));
  out.e2e = latency_stats(std::move(e2e));
  if (tr.arrival == Arrival::poisson) {
    // Throughput over the steady window (first measured request to the last arrival).
    const double span = window_end - std::max(0.0, window_start);
    out.output_tokens_per_s = span > 0 ? window_out / span : 0.0;
    out.total_tokens_per_s = span > 0 ? (window_out + window_in) / span : 0.0;
    out.requests_per_s = tr.rate;
    // The queue at the last arrival: a replica that keeps up has a handful waiting.
    const double last_arrival = reqs.back().arrival;
    const double late = reqs.back().first_token >= 0 ? reqs.back().first_token - last_arrival : 0.0;
    if (late > std::max(10.0, 20.0 * out.ttft.p50) || out.output_tokens_per_s < 0.9 * tr.rate * tr.output.mean) {
      out.saturated = true;
    }
  } else {
    const double span = last_finish - std::max(0.0, first_arrival);
    out.output_tokens_per_s = span > 0 ? out_tokens / span : 0.0;
    out.total_tokens_per_s = span > 0 ? (out_tokens + in_tokens) / span : 0.0;
    out.requests_per_s = span > 0 ? static_cast<double>(out.requests) / span : 0.0;
  }
  out.mean_step_s = steps > 0 ? busy / static_cast<double>(steps) : 0.0;
  out.mean_batch = steps > 0 ? batch_sum / static_cast<double>(steps) : 0.0;
  out.prefill_share = busy > 0 ? std::clamp(prefill_time / busy, 0.0, 1.0) : 0.0;
  if (out.limit.empty()) {
    if (out.preemptions > 0) out.limit = "kv_cache";
    else if (out.mean_batch >= 0.95 * e.max_num_seqs) out.limit = "max_num_seqs";
  }
  return out;
}

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

}  // namespace

ServeLoad steady_state(const ServeJob& job, const PassModel& pass, const ReplicaMemory& memory) {
  ServeLoad out;
  const Traffic& tr = job.traffic;
  const EngineSpec& e = job.engine;
  if (!memory.fits()) {
    out.saturated = true;
    out.limit = "kv_cache";
    return out;
  }
  const double I = tr.input.mean, O = tr.output.mean;
  const double fresh = I * (1.0 - tr.prefix_hit);  // prompt tokens computed per request
  const double decode_steps = std::max(O - 1.0, 0.0);
  const double ctx = mean_decode_context(tr);
  const double keys = mean_prefill_keys(tr);
  // Growing sequences hold their mean context; reserved ones their whole length.
  const double held = e.reserve_full_sequence ? I + O : ctx;
  const double cap_kv = static_cast<double>(memory.kv_tokens) / (held + e.kv_block_tokens / 2.0);
  const double cap = std::min<double>(e.max_num_seqs, cap_kv);
  const double budget = static_cast<double>(e.max_num_batched_tokens);
  // One step carrying `rate` requests/s worth of prompts and decodes for a step of `tau`.
  const auto load_at = [&](double rate, double tau) {
    StepLoad l;
    const double batch = std::min(rate * decode_steps * tau, cap);
    const double prompts = rate * tau;
    l.decode_sequences = static_cast<int>(std::lround(batch));
    l.decode_context = batch * ctx;
    l.prefill_tokens = static_cast<std::int64_t>(std::llround(prompts * fresh));
    l.prefill_work = prompts * fresh * keys;
    l.logits_rows = static_cast<int>(std::lround(batch + prompts));
    return l;
  };
  const auto with_load = [&](double rate, double tau, double batch) {
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
  };
  if (tr.arrival != Arrival::poisson) {
    // Offline / closed loop: the batch is as large as the engine and the cache allow (closed
    // loop: the clients); each step replaces the B / (O - 1) sequences that finish.
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
    with_load(rate, tau, B);
    const double ttft = pass.prefill(static_cast<std::int64_t>(std::llround(fresh))) + tau;
    out.ttft = {ttft, ttft, ttft, ttft, ttft};
    out.tpot = {tau, tau, tau, tau, tau};
    const auto e2e = [&](double q) { return ttft + std::max(0.0, tr.output.quantile(q) - 1.0) * tau; };
    out.e2e = {ttft + decode_steps * tau, e2e(0.5), e2e(0.9), e2e(0.95), e2e(0.99)};
    out.limit = cap_kv < e.max_num_seqs ? "kv_cache" : "max_num_seqs";
    if (tr.arrival == Arrival::closed_loop && tr.concurrency < cap) out.limit.clear();
    return out;
  }
  const double rate = tr.rate;
  // Steps differ: most carry only decodes, some a prompt (or a chunk of one). The number of
  // prompt chunks a step carries is Poisson with mean rate x tau x chunks per prompt, and the
  // mean step is the mixture's mean (taking the step at the mean load would miss that a step's
  // time is concave in its tokens: memory-bound first, then compute-bound).
  struct Mix {
    double mean = 0, sd = 0;
    bool over_budget = false;
  };
  const auto mixture = [&](double tau) {
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
  };
  // Fixed point tau = E[step(tau)]: f(tau) = E[step] - tau falls through zero once the steps keep
  // up with the rate; none before the batch or the token budget runs out: saturated.
  const auto f = [&](double tau) { return mixture(tau).mean - tau; };
  double lo = 0, hi = std::max(1e-4, pass.overhead());
  bool found = false;
  for (int i = 0; i < 60; ++i) {
    const bool over_batch = rate * decode_steps * hi > cap;
    const bool over_budget = mixture(hi).over_budget;
    if (f(hi) <= 0 && !over_batch && !over_budget) {
      found = true;
      break;
    }
    if (over_batch || over_budget) {
      out.limit = over_batch ? (cap_kv < e.max_num_seqs ? "kv_cache" : "max_num_seqs") : "max_num_batched_tokens";
      break;
    }
    lo = hi;
    hi *= 1.5;
  }
  if (!found) {
    out.saturated = true;
    with_load(rate, hi, std::min(rate * decode_steps * hi, cap));
    return out;
  }
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > 0 ? lo : hi) = mid;
  }
  const double tau = hi;
  const double sd = mixture(tau).sd;
  const double B = rate * decode_steps * tau;
  with_load(rate, tau, B);
  // Time to first token: wait for the step in flight (half a step), the prompt's chunks at the
  // step's leftover token budget, and the queue of prompts ahead when prefill is busy (an M/G/1
  // wait, Pollaczek-Khinchine, on the budget the decodes leave).
  const double room = std::max(1.0, budget - B);
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
  if (B >= 0.95 * cap) out.limit = cap_kv < e.max_num_seqs ? "kv_cache" : "max_num_seqs";
  return out;
}

}  // namespace capplan::sim
