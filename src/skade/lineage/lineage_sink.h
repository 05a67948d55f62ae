// Where lineage events go. Sinks are driven by a LineageRecorder; a sink's failure
// is reported, never turned into a failed or undone write.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "skade/common/result.h"
#include "skade/lineage/lineage_event.h"

namespace skade::lineage {

class LineageSink {
 public:
  virtual ~LineageSink() = default;
  /// A short name for messages (`warehouse`, `openlineage-http`, ...).
  virtual std::string name() const = 0;
  /// Takes events, oldest first; may buffer them until Flush.
  virtual Status Write(const std::vector<LineageEvent>& events) = 0;
  /// Delivers whatever is buffered.
  virtual Status Flush() = 0;
  /// The commit_seq up to which this sink has durably delivered every event, so a
  /// recorder can catch it up from the commit log; nullopt for sinks that do not
  /// keep a watermark (they see only events minted while attached).
  virtual Result<std::optional<int64_t>> DeliveredThrough() { return std::optional<int64_t>(); }
  /// Events a flush would deliver now (for batching across processes).
  virtual Result<size_t> Pending() { return size_t{0}; }
};

/// Keeps every event in memory (tests, live tail). Thread-safe.
class CapturingSink : public LineageSink {
 public:
  std::string name() const override { return "capturing"; }
  Status Write(const std::vector<LineageEvent>& events) override {
    std::lock_guard lock(mu_);
    events_.insert(events_.end(), events.begin(), events.end());
    return {};
  }
  Status Flush() override { return {}; }
  std::vector<LineageEvent> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  void Clear() {
    std::lock_guard lock(mu_);
    events_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::vector<LineageEvent> events_;
};

}  // namespace skade::lineage
