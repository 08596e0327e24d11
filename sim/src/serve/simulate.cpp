// SPDX-License-Identifier: Apache-2.0
// A replica under load: the discrete-event simulation of continuous batching (its closed form is
// steady_state.cpp), and the latency statistics both report.
#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <queue>
#include <random>

#include "capplan/sim/serve/serve.hpp"

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
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  // Linear interpolation between order statistics (numpy's default): each quantile needs the
  // order statistics i and i + 1 only, placed by selection in increasing order (each selection
  // leaves everything after its place no smaller, so the next one searches only that part).
  const double ps[4] = {0.5, 0.9, 0.95, 0.99};
  std::size_t at[8];
  for (int k = 0; k < 4; ++k) {
    const auto i = static_cast<std::size_t>(ps[k] * static_cast<double>(v.size() - 1));
    at[2 * k] = i;
    at[2 * k + 1] = std::min(i + 1, v.size() - 1);
  }
  auto from = v.begin();
  for (std::size_t i : at) {  // already in increasing order
    if (v.begin() + static_cast<std::ptrdiff_t>(i) < from) continue;
    std::nth_element(from, v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
    from = v.begin() + static_cast<std::ptrdiff_t>(i) + 1;
  }
  const auto q = [&](double p) {
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto i = static_cast<std::size_t>(pos);
    const double f = pos - static_cast<double>(i);
    return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v[i];
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

// One replica's run, event by event: the requests, the engine's queues, its KV cache, the clock,
// and what the statistics need. Each step runs every decoding sequence and fills the rest of the
// token budget with prompt chunks (first come, first served).
struct ContinuousBatching {
  // A step being built: its load, the prompt chunks it carries (id, tokens) and the token budget left.
  struct Step {
    StepLoad load;
    std::vector<std::pair<std::int64_t, std::int64_t>> chunks;
    std::int64_t budget = 0;
  };
  using Entry = std::pair<std::int64_t, std::pair<std::int64_t, std::uint32_t>>;  // finish step, id, version

  ContinuousBatching(const ServeJob& job, const PassModel& pass_model, const ReplicaMemory& memory, ServeLoad& load)
      : tr(job.traffic),
        e(job.engine),
        pass(pass_model),
        out(load),
        n(default_requests(tr, memory.max_sequences)),
        reqs(static_cast<std::size_t>(n)),
        kv_cap(memory.kv_tokens),
        half_block(e.kv_block_tokens / 2.0),
        // The warm-up (the first tenth of the requests) is left out of the statistics.
        warm(tr.arrival == Arrival::poisson ? n / 10 : 0),
        reserve(e.reserve_full_sequence) {}

  void draw_requests(std::uint64_t seed);
  void watch(const Slo& slo);
  void run();
  void report();

  std::int64_t seqs() const { return decoding + static_cast<std::int64_t>(prefilling.size()); }
  bool window_open() const { return window_start >= 0; }
  Request& req(std::int64_t id) { return reqs[static_cast<std::size_t>(id)]; }
  void finish(std::int64_t id);
  bool preempt_newest();
  Step plan_step();
  bool schedule(std::int64_t id, Step& st);
  bool unblock();
  void refuse(std::int64_t id);
  void run_step(Step& st);
  void finish_decodes();
  void advance_prefills(const Step& st);
  enum class Stretch { none, ran, ended };
  Stretch decode_until_event();
  bool thrashing();

  const Traffic& tr;
  const EngineSpec& e;
  const PassModel& pass;
  ServeLoad& out;
  const std::int64_t n;
  std::vector<Request> reqs;
  const std::int64_t kv_cap;
  const double half_block;
  const std::int64_t warm;
  const bool reserve;

  // Early stop (watch): per SLO target (ttft, tpot, e2e), the target, the measured requests over
  // it so far, and the count that makes the percentile over it whatever the others do (0: none).
  struct Watch {
    double target = 0;
    std::int64_t over = 0, enough = 0;
  };
  std::array<Watch, 3> watched{};
  bool certain_miss = false;

  std::deque<std::int64_t> waiting;        // FIFO, preempted requests at the front
  std::deque<std::int64_t> prefilling;     // admitted, prompt not finished
  std::vector<std::int64_t> decode_order;  // decoding requests in admission order (newest last; lazy)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> finishing;
  std::int64_t next_arrival = 0, closed_next = 0;
  double now = 0;
  std::int64_t decode_steps = 0, steps = 0, decoding = 0, kv_used = 0, done = 0, kv_reserved = 0;
  // The steps the requests take with no preemption at all, at most: each step decodes a token of
  // every running sequence or prefills a chunk of up to max_num_batched_tokens.
  std::int64_t unpreempted_steps = 0;
  double decode_ctx = 0;  // sum of decoding sequences' cached tokens
  double busy = 0, batch_sum = 0, prefill_time = 0, window_start = -1, window_end = 0;
  double window_out = 0, window_in = 0;
};

// Every request's arrival, lengths and cached prefix, drawn up front.
void ContinuousBatching::draw_requests(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
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
    unpreempted_steps += r.output + r.input / std::max<std::int64_t>(1, e.max_num_batched_tokens) + 1;
  }
}

// Why a run can stop once `enough` measured requests are over a target, and the verdict stays the
// one the whole run would give (plan.cpp's `missed`: saturated, or a target's percentile over it):
// a finished request's latencies never change, and it stays measured. Of the N samples
// latency_stats orders (v), its quantile at p is v[i] + f (v[i + 1] - v[i]) >= v[i], i =
// floor(p (N - 1)), f >= 0, v sorted; and v[i] > T as soon as N - i samples exceed T.
// LatencyStats::at(q) interpolates upwards from the quantile at the point below q (p50, p90, p95:
// the last under q; p50 at or under 0.5, p99 over 0.99), a + (b - a) w >= a for a <= b, w >= 0,
// so it is at least that quantile: with p that point, N - floor(p (N - 1)) samples over T make at(q) > T. N is not
// known before the end (refused and unfinished requests are not measured), but it is at most M,
// the requests past the warm-up (with more than one output token, for tpot), and N - floor(p (N -
// 1)) does not decrease with N (floor(p N) - floor(p (N - 1)) is 0 or 1 for p <= 1): M's count
// is enough for every N. Were the run saturated instead, `missed` names throughput: still a miss.
void ContinuousBatching::watch(const Slo& slo) {
  const double q = std::clamp(slo.percentile, 0.0, 1.0);
  double p = 0.5;  // the point at(q) interpolates up from (its own is not: p50 + (p90 - p50) may round under p90)
  for (double point : {0.9, 0.95, 0.99}) {
    if (q > point) p = point;
  }
  std::int64_t measured = 0, several = 0;  // requests past the warm-up; of them, those with > 1 output token
  for (std::int64_t i = warm; i < n; ++i) {
    ++measured;
    if (req(i).output > 1) ++several;
  }
  const double targets[3] = {slo.ttft.base(), slo.tpot.base(), slo.e2e.base()};
  const std::int64_t counts[3] = {measured, several, measured};
  for (int m = 0; m < 3; ++m) {
    const std::int64_t N = counts[m];
    if (!(targets[m] > 0) || N <= 0) continue;
    const auto i = static_cast<std::int64_t>(p * static_cast<double>(N - 1));
    watched[static_cast<std::size_t>(m)] = {targets[m], 0, N - i};
  }
}

void ContinuousBatching::finish(std::int64_t id) {
  Request& r = req(id);
  if (reserve && r.first_token != -2) kv_reserved -= r.input + r.output + static_cast<std::int64_t>(half_block);
  r.finish = now;
  if (id >= warm && r.first_token >= 0 && (watched[0].enough | watched[1].enough | watched[2].enough) != 0) {
    // The latencies report() will take of this measured request, computed as it computes them.
    const double lat[3] = {r.first_token - r.arrival,
                           r.output > 1 ? (r.finish - r.first_token) / static_cast<double>(r.output - 1) : 0.0,
                           r.finish - r.arrival};
    for (int m = 0; m < 3; ++m) {
      Watch& w = watched[static_cast<std::size_t>(m)];
      if (w.enough == 0 || (m == 1 && r.output <= 1)) continue;
      if (lat[m] > w.target && ++w.over >= w.enough) certain_miss = true;
    }
  }
  r.decoding = false;
  ++done;
  if (tr.arrival == Arrival::closed_loop && closed_next < n) {
    req(closed_next).arrival = now;
    waiting.push_back(closed_next++);
  }
}

bool ContinuousBatching::preempt_newest() {
  while (!decode_order.empty()) {
    const std::int64_t id = decode_order.back();
    decode_order.pop_back();
    Request& r = req(id);
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
}

// The next prompt chunk of request `id` into the step, as far as the budget and the cache allow;
// false when none fits.
bool ContinuousBatching::schedule(std::int64_t id, Step& st) {
  Request& r = req(id);
  const std::int64_t left = r.to_prefill - r.prefilled;
  if (!e.chunked_prefill && left > st.budget) return false;
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
  const std::int64_t chunk = std::min({left, st.budget, room});
  if (chunk <= 0) return false;
  const double c = static_cast<double>(chunk);
  st.load.prefill_tokens += chunk;
  st.load.prefill_work += c * (static_cast<double>(r.prefilled) + (c + 1.0) / 2.0);
  kv_used += chunk + prefix;  // reserved now: later admissions see it
  st.chunks.emplace_back(id, chunk);
  st.budget -= chunk;
  return true;
}

// 1. Every decoding sequence gets its next token; the newest is preempted while the cache cannot
// hold one more token for each. 2. Prompts being prefilled, then 3. waiting ones, first come
// first served.
ContinuousBatching::Step ContinuousBatching::plan_step() {
  while (!reserve && decoding > 0 && kv_used + decoding + half_block * seqs() > kv_cap && preempt_newest()) {
  }
  Step st;
  st.budget = e.max_num_batched_tokens - decoding;
  st.load.decode_sequences = static_cast<int>(decoding);
  st.load.decode_context = decode_ctx;
  st.load.logits_rows = static_cast<int>(decoding);
  for (std::int64_t id : prefilling) {
    if (st.budget <= 0 || !schedule(id, st)) break;
  }
  while (st.budget > 0 && !waiting.empty() && seqs() < e.max_num_seqs) {
    const std::int64_t id = waiting.front();
    // A request whose whole sequence can never fit the cache is refused, as the engine does: vLLM
    // will not start with a max_model_len above what its KV cache holds, so a longer request is
    // rejected at the door. Served alone it would be preempted and prefilled again for every token
    // past the cache, without end.
    if (const Request& r = req(id); r.input + r.output + static_cast<std::int64_t>(half_block) > kv_cap) {
      waiting.pop_front();
      refuse(id);
      continue;
    }
    if (!schedule(id, st)) break;
    waiting.pop_front();
    prefilling.push_back(id);
  }
  return st;
}

// A step with nothing to run. Blocked: nothing fits (a prompt larger than the whole cache), and
// it is dropped as unservable; else the clock moves to the next arrival. False when nothing is
// left to wait for.
bool ContinuousBatching::unblock() {
  if (!waiting.empty() && decoding == 0 && prefilling.empty()) {
    const std::int64_t id = waiting.front();
    waiting.pop_front();
    refuse(id);
    return true;
  }
  if (next_arrival < n) {
    now = std::max(now, req(next_arrival).arrival);
    return true;
  }
  return false;
}

// Request `id` is not served: the replica cannot hold it.
void ContinuousBatching::refuse(std::int64_t id) {
  req(id).first_token = -2;  // marks "not served"
  finish(id);
  out.saturated = true;
  out.limit = "kv_cache";
}

// Prices the step (prompts that complete in it sample their first token) and moves the clock.
void ContinuousBatching::run_step(Step& st) {
  StepLoad& load = st.load;
  int completing = 0;
  for (const auto& [id, chunk] : st.chunks) {
    const Request& r = req(id);
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
}

// Decodes: each sequence's cache grows by one token; those that reach their output finish.
void ContinuousBatching::finish_decodes() {
  if (decoding == 0) return;
  ++decode_steps;
  kv_used += decoding;
  decode_ctx += static_cast<double>(decoding);
  while (!finishing.empty() && finishing.top().first <= decode_steps) {
    const auto [step, idv] = finishing.top();
    finishing.pop();
    Request& r = req(idv.first);
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
void ContinuousBatching::advance_prefills(const Step& st) {
  for (const auto& [id, chunk] : st.chunks) {
    Request& r = req(id);
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

// Past four times the steps the requests need without any preemption the replica is not keeping
// up at this rate (recompute preemption thrashes: sequences evicted and prefilled again faster than
// they finish), and the run stops there: without the bound it never ends.
bool ContinuousBatching::thrashing() {
  if (steps <= 4 * unpreempted_steps) return false;
  out.saturated = true;
  out.limit = "kv_cache";
  return true;
}

// The steps in which nothing but decoding can happen, run as one stretch: no prompt in flight,
// none that may be admitted (nothing waiting, or the sequence limit reached), no preemption due,
// no sequence finishing and no request arriving. Each is the step run() would build (plan_step,
// run_step and finish_decodes reduced to what a decode-only step does): d sequences, the cache d
// tokens longer each step, so the stretch's time is an arithmetic series (PassModel::DecodeLine)
// and its length the fewest steps that reach the next arrival. It ends at the first of:
// - the step before the next sequence finishes (the finishing heap's earliest step);
// - the last step before the cache must preempt (kv_used grows by d a step);
// - the step whose end passes the next arrival (it then waits, or is admitted next step);
// - the step that ends the run as thrashing.
// `ended` when the run must end there (thrashing).
ContinuousBatching::Stretch ContinuousBatching::decode_until_event() {
  if (decoding == 0 || !prefilling.empty()) return Stretch::none;
  if (seqs() < e.max_num_seqs && !waiting.empty()) return Stretch::none;
  const std::int64_t d = decoding;
  std::int64_t cap = finishing.empty() ? INT64_MAX : finishing.top().first - decode_steps - 1;
  if (!reserve) {
    // Step j (from 0) runs while kv_used + j d + decoding + half_block seqs <= kv_cap; j d is whole.
    const double slack = static_cast<double>(kv_cap - kv_used - decoding) - half_block * static_cast<double>(seqs());
    cap = std::min(cap, slack < 0 ? 0 : static_cast<std::int64_t>(std::floor(slack)) / d + 1);
  }
  cap = std::min(cap, 4 * unpreempted_steps + 1 - steps);  // the step that makes steps exceed the bound
  if (cap <= 0) return Stretch::none;
  const PassModel::DecodeLine line = pass.decode_line(static_cast<int>(d));
  const double dd = static_cast<double>(d);
  const bool arrivals = tr.arrival != Arrival::closed_loop && next_arrival < n;
  const std::int64_t k =
      arrivals ? line.steps_to(decode_ctx, dd, req(next_arrival).arrival - now, cap) : cap;
  const double span = line.time(decode_ctx, dd, k), kk = static_cast<double>(k);
  now += span;
  busy += span;
  steps += k;
  batch_sum += kk * dd;
  if (window_open() && (tr.arrival != Arrival::poisson || next_arrival < n)) {
    window_out += kk * dd;
    window_end = now;
  }
  decode_steps += k;
  kv_used += k * d;
  decode_ctx += kk * dd;
  return thrashing() ? Stretch::ended : Stretch::ran;
}

void ContinuousBatching::run() {
  if (tr.arrival == Arrival::closed_loop) {
    closed_next = std::min<std::int64_t>(n, tr.concurrency);
    for (std::int64_t i = 0; i < closed_next; ++i) waiting.push_back(i);
    next_arrival = n;  // arrivals driven by completions
  }
  while (done < n) {
    if (tr.arrival != Arrival::closed_loop) {
      while (next_arrival < n && req(next_arrival).arrival <= now) waiting.push_back(next_arrival++);
    }
    if (decoding == 0 && prefilling.empty() && waiting.empty()) {
      if (next_arrival >= n) break;  // nothing left (cannot happen while done < n)
      now = req(next_arrival).arrival;
      continue;
    }
    if (const Stretch s = decode_until_event(); s != Stretch::none) {
      if (s == Stretch::ended) break;
      continue;  // arrivals, then the step that ended the stretch
    }
    Step st = plan_step();
    if (st.load.prefill_tokens == 0 && st.load.decode_sequences == 0) {
      if (unblock()) continue;
      break;
    }
    run_step(st);
    finish_decodes();
    advance_prefills(st);
    if (certain_miss || thrashing()) break;
  }
}

// The latencies of the measured requests (after the warm-up), the throughput and what limits it.
void ContinuousBatching::report() {
  std::vector<double> ttft, tpot, e2e;
  ttft.reserve(static_cast<std::size_t>(n));
  double out_tokens = 0, in_tokens = 0, first_arrival = -1, last_finish = 0;
  for (std::int64_t i = warm; i < n; ++i) {
    const Request& r = req(i);
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
}

}  // namespace

ServeLoad simulate(const ServeJob& job, const PassModel& pass, const ReplicaMemory& memory, std::uint64_t seed) {
  ServeLoad out;
  if (!memory.fits()) {
    out.saturated = true;
    out.limit = "kv_cache";
    return out;
  }
  ContinuousBatching run(job, pass, memory, out);
  run.draw_requests(seed);
  run.run();
  run.report();
  return out;
}

std::optional<ServeLoad> simulate_unless_missed(const ServeJob& job, const PassModel& pass, const ReplicaMemory& memory,
                                                std::uint64_t seed) {
  ServeLoad out;
  if (!memory.fits()) return std::nullopt;  // saturated: a miss
  ContinuousBatching run(job, pass, memory, out);
  run.draw_requests(seed);
  if (job.traffic.arrival == Arrival::poisson) run.watch(job.slo);
  run.run();
  if (run.certain_miss) return std::nullopt;
  run.report();
  return out;
}

}  // namespace capplan::sim
