// A fixed set of worker threads running submitted tasks in submission order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace skade {

/// Workers for CPU-bound tasks (decoding row groups). A task must not wait for another
/// task of the same pool (that could deadlock once every worker waits).
/// Thread-safe: Submit may be called from any thread.
class TaskPool {
 public:
  explicit TaskPool(size_t threads);
  ~TaskPool();  // runs the tasks already submitted, then joins
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void Submit(std::function<void()> task);
  size_t size() const { return workers_.size(); }

  /// The process-wide pool: one worker per hardware thread (SKADE_THREADS overrides).
  static TaskPool& Shared();

 private:
  void Work();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace skade
