// The warehouse sink: lineage events as rows of the Iceberg table
// `_skade.lineage_events` (partitioned by day), readable by any Iceberg engine.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/lineage/lineage_sink.h"

namespace skade::lineage {

/// `_skade.lineage_events`.
TableIdent LineageEventsTable();

/// Filters for reading stored events.
struct EventFilter {
  std::optional<int64_t> since_ms;  // ts >= since
  std::optional<int64_t> until_ms;  // ts < until
  std::optional<std::string> dataset;  // events naming it (CLI spelling) as input or output
};

/// The events stored in `_skade.lineage_events`, each event_id once, ordered by time
/// then event_id. An absent table holds no events. Errors: those of the scan, or
/// kCorrupt naming a row whose event does not parse.
Result<std::vector<LineageEvent>> ReadStoredEvents(Catalog& catalog, const EventFilter& filter = {});

/// Appends in batches. Events of skade commits are taken from the commit log, after
/// the commit_seq the table's current snapshot records as delivered, so a batch lost
/// with a killed process is delivered by the next flush of any process, once (the
/// append is validated against concurrent appends and recomputed if one landed).
/// Ingested events (no commit_seq) are buffered and deduplicated by event_id against
/// the table. Thread-safe.
class WarehouseSink : public LineageSink {
 public:
  explicit WarehouseSink(Catalog& catalog) : catalog_(catalog) {}
  std::string name() const override { return "warehouse"; }
  Status Write(const std::vector<LineageEvent>& events) override;
  Status Flush() override;
  Result<std::optional<int64_t>> DeliveredThrough() override;
  /// Events a flush would deliver now: the commit log's beyond the watermark plus
  /// buffered ingested ones.
  Result<size_t> Pending() override;

 private:
  Status FlushOnce(bool& conflicted);

  Catalog& catalog_;
  std::mutex mu_;
  std::vector<LineageEvent> ingested_;
};

}  // namespace skade::lineage
