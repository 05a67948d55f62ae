// A fixed set of worker threads running submitted tasks, earliest ticket first.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "skade/common/result.h"

namespace skade {

/// The workers SKADE_THREADS asks for (its value, 1 to 256), or `cores` when it is unset
/// or not a number.
size_t WorkerCount(const char* skade_threads, size_t cores);

/// Runs fn(0..n-1) on up to one thread per core (fewer when SKADE_THREADS says so), each
/// index once, and returns the error of the lowest index that failed (all run; one
/// thread: in order, stopping at the first error). Own threads, not a TaskPool: fn may
/// wait on another pool (Arrow's column encoding), and the caller may itself be a task of
/// skade's pool.
Status RunConcurrently(size_t n, const std::function<Status(size_t)>& fn);

/// Workers for CPU-bound tasks (decoding column chunks). A task must not wait for another
/// task of the same pool (that could deadlock once every worker waits).
/// Thread-safe: Ticket and Submit may be called from any thread, also from a task.
class TaskPool {
 public:
  explicit TaskPool(size_t threads);
  ~TaskPool();  // runs the tasks already submitted, then joins
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  /// A place in the queue: tasks submitted with an earlier ticket run first, tasks of
  /// one ticket in submission order. A task submitted late under an early ticket (the
  /// next step of work begun earlier) thus overtakes work begun after it.
  uint64_t Ticket();
  void Submit(std::function<void()> task, uint64_t ticket);
  void Submit(std::function<void()> task) { Submit(std::move(task), Ticket()); }
  /// Workers started: fewer than asked where the process was refused threads, and with
  /// none a task runs within Submit (so it must not be submitted under a lock it takes).
  size_t size() const { return workers_.size(); }

  /// The process-wide pool: one worker per hardware thread (SKADE_THREADS overrides).
  static TaskPool& Shared();

 private:
  void Work();
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<uint64_t, uint64_t>, std::function<void()>> tasks_;  // (ticket, submission)
  uint64_t next_ticket_ = 0, next_submission_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace skade
