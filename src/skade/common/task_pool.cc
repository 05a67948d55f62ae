#include "skade/common/task_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <system_error>

namespace skade {

namespace {

size_t Cores() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace

size_t WorkerCount(const char* skade_threads, size_t cores) {
  if (!skade_threads) return cores;
  try {
    return std::clamp<size_t>(std::stoul(skade_threads), 1, 256);
  } catch (...) {
    return cores;
  }
}

Status RunConcurrently(size_t n, const std::function<Status(size_t)>& fn) {
  static const size_t most = std::min(Cores(), WorkerCount(std::getenv("SKADE_THREADS"), Cores()));
  size_t threads = std::min(n, most);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) SKADE_RETURN_IF_ERROR(fn(i));
    return {};
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first;
  size_t first_index = n;
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      Status st = fn(i);
      std::lock_guard lock(mu);
      if (!st && i < first_index) {
        first = st;
        first_index = i;
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {  // refused more threads (RLIMIT_NPROC): fewer work
  }
  work();
  for (auto& t : pool) t.join();
  return first;
}

TaskPool::TaskPool(size_t threads) {
  threads = std::max<size_t>(1, threads);
  workers_.reserve(threads);
  // A process refused more threads (RLIMIT_NPROC) works with those it got; with none,
  // Submit runs each task in the submitting thread.
  try {
    for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
  } catch (const std::system_error&) {
  }
}

TaskPool::~TaskPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_) w.join();
}

uint64_t TaskPool::Ticket() {
  std::lock_guard lock(mu_);
  return next_ticket_++;
}

void TaskPool::Submit(std::function<void()> task, uint64_t ticket) {
  if (workers_.empty()) return task();
  {
    std::lock_guard lock(mu_);
    tasks_.emplace(std::pair{ticket, next_submission_++}, std::move(task));
  }
  cv_.notify_one();
}

void TaskPool::Work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left
      auto first = tasks_.begin();
      task = std::move(first->second);
      tasks_.erase(first);
    }
    task();
  }
}

TaskPool& TaskPool::Shared() {
  // Never destroyed: tasks may still run at exit.
  static TaskPool* pool = new TaskPool(WorkerCount(std::getenv("SKADE_THREADS"), Cores()));
  return *pool;
}

}  // namespace skade
