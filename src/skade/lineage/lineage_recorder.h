// Attaches lineage to a catalog: one event is minted inside each commit's catalog
// transaction (stored in its commit-log row, so it is durable with the commit), then
// handed to the sinks after durability.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/lineage/lineage_event.h"
#include "skade/lineage/lineage_sink.h"

namespace skade::lineage {

/// The namespace of skade's own lineage tables; commits to it emit no lineage.
inline constexpr const char* kLineageNamespace = "_skade";

/// The event a catalog transaction gives, or nullopt when it only touched
/// `_skade` (lineage about lineage would never end).
std::optional<LineageEvent> MintEvent(const CommitRecord& record, const std::string& default_actor);

/// Events recorded in the commit log after `after_seq`, oldest first.
Result<std::vector<LineageEvent>> EventsFromLog(Catalog& catalog, int64_t after_seq);

class LineageRecorder : public CommitAnnotator {
 public:
  struct Options {
    std::string default_actor = "skade";  // for commits that name none
    size_t batch_size = 100;              // sinks are flushed after this many events
    /// Whether destruction flushes. Off for short-lived processes that leave their
    /// events in the commit log for a later, fuller batch (the CLI).
    bool flush_on_close = true;
  };

  /// Registers with `catalog` (which must outlive the recorder).
  LineageRecorder(Catalog& catalog, Options options);
  /// Unregisters, flushing the sinks first if `flush_on_close`.
  ~LineageRecorder() override;
  LineageRecorder(const LineageRecorder&) = delete;
  LineageRecorder& operator=(const LineageRecorder&) = delete;

  void AddSink(std::shared_ptr<LineageSink> sink);
  /// Flushes every sink; sinks that keep a watermark deliver whatever the commit
  /// log holds beyond it (events of commits whose process died before its flush).
  /// Returns the first failure; later sinks are still flushed.
  Status Flush();
  /// Failures sinks reported since the last call (writes never fail because of them).
  std::vector<std::string> TakeSinkErrors();

  std::optional<std::string> Annotate(const CommitRecord& record) override;
  void OnDurable(const CommitRecord& record, const std::string& annotation) override;

 private:
  void NoteError(const LineageSink& sink, const Error& error);

  Catalog& catalog_;
  Options options_;
  std::mutex mu_;
  std::vector<std::shared_ptr<LineageSink>> sinks_;
  size_t unflushed_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace skade::lineage
