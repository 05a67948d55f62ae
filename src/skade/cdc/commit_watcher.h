// Cross-process commit wake-up without polling: every commit by any engine writes
// the catalog's SQLite WAL (or database file), so an inotify watch on those files
// wakes a subscriber in another process within milliseconds; what changed is then
// read from the durable commit log.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "skade/common/result.h"

namespace skade {
class Catalog;
}

namespace skade::cdc {

class CommitWatcher {
 public:
  ~CommitWatcher();
  CommitWatcher(const CommitWatcher&) = delete;
  CommitWatcher& operator=(const CommitWatcher&) = delete;

  /// Watches the catalog files of `catalog`'s warehouse. Errors: kIoError.
  static Result<std::unique_ptr<CommitWatcher>> Make(const Catalog& catalog);
  /// Blocks until the catalog files change or `timeout` passes (nullopt: forever).
  /// Returns whether something changed.
  Result<bool> Wait(std::optional<std::chrono::microseconds> timeout);
  /// Blocks until `arrived` says so or `timeout` passes; returns whether it did.
  /// `arrived` runs now, after every wake, and at growing intervals for 5 s after the
  /// last wake: a reader woken by a commit's last write can look before the writer's
  /// fsync ends and SQLite publishes the commit, and no file event follows that.
  Result<bool> WaitFor(const std::function<Result<bool>()>& arrived,
                       std::optional<std::chrono::milliseconds> timeout);

 private:
  explicit CommitWatcher(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace skade::cdc
