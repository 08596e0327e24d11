// SPDX-License-Identifier: Apache-2.0
// The bookkeeping of a runner whose latest request wins (EstimateRunner, ServeRunner): one job
// runs at a time; a request made while one runs waits, replacing an older waiting one, and a
// result whose request has been superseded is dropped. Only the thread that owns the runner calls
// it, so it needs no lock.
#pragma once
#include <QtGlobal>
#include <optional>
#include <utility>

namespace capplan::gui {

template <class Job>
class LatestRequest {
 public:
  // Numbers a new request: the generation its result will carry.
  quint64 number() { return ++latest_; }
  quint64 latest() const { return latest_; }
  bool running() const { return running_; }
  // The generation of the job started last (the one whose result comes next).
  quint64 running_generation() const { return running_generation_; }

  // `job`, to start now, when nothing runs; otherwise nullopt, and `job` waits instead.
  std::optional<Job> admit(Job job) {
    if (!running_) return std::optional<Job>(std::move(job));
    waiting_ = std::move(job);  // replaces an older waiting request
    return std::nullopt;
  }
  void started(quint64 generation) {
    running_ = true;
    running_generation_ = generation;
  }
  // The job that finished is no longer running: the waiting job to start in its place (its result
  // is then stale), or nullopt.
  std::optional<Job> finished() {
    running_ = false;
    return std::exchange(waiting_, std::nullopt);
  }

 private:
  quint64 latest_ = 0;
  quint64 running_generation_ = 0;
  bool running_ = false;
  std::optional<Job> waiting_;
};

}  // namespace capplan::gui
