// The OpenLineage HTTP sink: POSTs each event as a RunEvent to `<url>/api/v1/lineage`
// (Marquez's path), with an optional bearer token, retrying with backoff.
#pragma once

#include <mutex>
#include <string>

#include "skade/catalog/catalog.h"
#include "skade/lineage/lineage_sink.h"

namespace skade::lineage {

struct OpenLineageHttpOptions {
  std::string url;    // base URL, e.g. http://localhost:5000
  std::string token;  // sent as `Authorization: Bearer <token>` when set
  int max_attempts = 5;        // per event and flush
  int initial_backoff_ms = 100;  // doubled after each failed attempt
  int timeout_ms = 5000;
  /// Where the delivery watermark is kept (the commit_seq of the last delivered event).
  std::string watermark_path;
};

/// Delivers the events of skade commits from the commit log, oldest first, after the
/// watermark; the watermark advances after each accepted event, so a restart resumes
/// where delivery stopped (an event may be sent twice if the process dies between the
/// receiver's answer and the watermark write; none is skipped). Connection failures,
/// 408, 429 and 5xx are retried with backoff; if they persist the flush fails and the
/// next one resumes. Other answers (a receiver rejecting the event) are reported and
/// the event is passed over, so one bad event cannot block the stream. Thread-safe.
class OpenLineageHttpSink : public LineageSink {
 public:
  OpenLineageHttpSink(Catalog& catalog, OpenLineageHttpOptions options);
  std::string name() const override { return "openlineage-http"; }
  /// Events are read from the commit log at Flush; nothing is buffered.
  Status Write(const std::vector<LineageEvent>&) override { return {}; }
  Status Flush() override;
  Result<std::optional<int64_t>> DeliveredThrough() override;
  Result<size_t> Pending() override;

 private:
  Status SaveWatermark(int64_t seq);

  Catalog& catalog_;
  OpenLineageHttpOptions options_;
  std::mutex mu_;
};

}  // namespace skade::lineage
