// Push subscription to commits with durable catch-up: events arrive through the
// catalog's post-commit hook into a bounded queue; a subscriber that falls behind
// (queue full) resyncs from the commit log, so nothing is lost, duplicated or
// reordered. Writers never wait for subscribers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/common/result.h"

namespace skade::cdc {

class CommitSubscription final : public CommitListener {
 public:
  /// Subscribes to `catalog` (which must outlive the subscription), delivering
  /// commits with commit_seq > `after_seq`, optionally of one table only.
  CommitSubscription(Catalog& catalog, int64_t after_seq,
                     std::optional<TableIdent> table = std::nullopt, size_t capacity = 1024);
  ~CommitSubscription() override;
  CommitSubscription(const CommitSubscription&) = delete;
  CommitSubscription& operator=(const CommitSubscription&) = delete;

  /// The next commit in commit_seq order, waiting up to `timeout`; nullopt on
  /// timeout. Errors: those of reading the commit log.
  Result<std::optional<CommitLogEntry>> Next(std::chrono::milliseconds timeout);
  /// The last commit_seq delivered (a cursor to resume from).
  int64_t cursor() const { return cursor_; }
  /// How many times the queue overflowed and the subscriber resynced from the log.
  int64_t resyncs() const { return resyncs_; }

  void OnCommit(const CommitEvent& event) override;

 private:
  Status Refill();

  Catalog& catalog_;
  std::optional<TableIdent> table_;
  size_t capacity_;
  int64_t cursor_;
  int64_t resyncs_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<CommitEvent> queue_;
  bool overflowed_ = false;
  bool caught_up_ = false;              // the first Next() reads the log from the cursor
  bool more_in_log_ = false;            // the last log read was full: read again before waiting
  std::deque<CommitLogEntry> pending_;  // read from the log, not yet delivered
};

}  // namespace skade::cdc
