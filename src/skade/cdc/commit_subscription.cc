#include "skade/cdc/commit_subscription.h"

namespace skade::cdc {

CommitSubscription::CommitSubscription(Catalog& catalog, int64_t after_seq,
                                       std::optional<TableIdent> table, size_t capacity)
    : catalog_(catalog),
      table_(std::move(table)),
      capacity_(capacity == 0 ? 1 : capacity),
      cursor_(after_seq) {
  catalog_.AddListener(this);
}

CommitSubscription::~CommitSubscription() { catalog_.RemoveListener(this); }

void CommitSubscription::OnCommit(const CommitEvent& event) {
  if (table_ && !(event.table == *table_)) return;
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= capacity_) {
      queue_.clear();  // too slow: drop the hints; the log has every commit
      overflowed_ = true;
    } else {
      queue_.push_back(event);
    }
  }
  cv_.notify_one();
}

Status CommitSubscription::Refill() {
  SKADE_ASSIGN_OR_RETURN(auto entries,
                         catalog_.CommitsSince(cursor_, table_, static_cast<int64_t>(capacity_)));
  more_in_log_ = entries.size() == capacity_;
  for (auto& e : entries) pending_.push_back(std::move(e));
  return {};
}

Result<std::optional<CommitLogEntry>> CommitSubscription::Next(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (!pending_.empty()) {
      CommitLogEntry e = std::move(pending_.front());
      pending_.pop_front();
      if (e.commit_seq <= cursor_) continue;
      cursor_ = e.commit_seq;
      return std::optional<CommitLogEntry>(std::move(e));
    }
    // The log is the truth: catch up on start, after an overflow, while rows
    // remain, and whenever a commit hint arrives.
    bool read_log = !caught_up_ || more_in_log_;
    if (!read_log) {
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, deadline, [&] { return overflowed_ || !queue_.empty(); });
      if (overflowed_) ++resyncs_;
      read_log = overflowed_ || !queue_.empty();
      overflowed_ = false;
      queue_.clear();
    }
    if (read_log) {
      caught_up_ = true;
      SKADE_RETURN_IF_ERROR(Refill());
      if (!pending_.empty()) continue;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::optional<CommitLogEntry>();
  }
}

}  // namespace skade::cdc
