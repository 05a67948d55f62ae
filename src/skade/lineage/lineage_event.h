// The lineage model: one LineageEvent per commit (or per ingested OpenLineage run
// event), naming the datasets it read and wrote.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"

namespace skade::lineage {

/// Where a dataset lives: `kind` is the system (`spark`, `kafka`, `postgres`, ...) and
/// `instance` the OpenLineage namespace it came from (e.g. `postgres://db:5432`).
struct SystemRef {
  std::string kind;
  std::string instance;
  bool operator==(const SystemRef&) const = default;
};

/// A dataset read or written. No system: a table of this warehouse.
struct DatasetRef {
  std::string table;
  std::optional<int64_t> snapshot_id;
  std::optional<SystemRef> system;
  bool operator==(const DatasetRef&) const = default;

  /// `spark` for external datasets, `skade` for this warehouse's tables.
  std::string SystemKind() const { return system ? system->kind : "skade"; }
  /// The CLI spelling: `ns.table`, or `system:name` outside the warehouse.
  std::string Key() const { return system ? system->kind + ":" + table : table; }
};

/// The operation vocabulary of skade's own events; ingested events keep their job's
/// name in `job` and carry operation `external`.
namespace op {
inline constexpr std::string_view kCreate = "create";
inline constexpr std::string_view kAppend = "append";
inline constexpr std::string_view kOverwrite = "overwrite";
inline constexpr std::string_view kDelete = "delete";
inline constexpr std::string_view kUpsert = "upsert";
inline constexpr std::string_view kSchemaChange = "schema_change";
inline constexpr std::string_view kMetadataChange = "metadata_change";  // refs, specs, rollback
inline constexpr std::string_view kMaintenance = "maintenance";         // compact, expire, ...
inline constexpr std::string_view kDrop = "drop";
inline constexpr std::string_view kRename = "rename";
inline constexpr std::string_view kRelease = "release";  // multi-table atomic commit
inline constexpr std::string_view kExternal = "external";
}  // namespace op

struct JobRef {
  std::string ns;
  std::string name;
  bool operator==(const JobRef&) const = default;
};

struct LineageEvent {
  std::string event_id;  // UUIDv7: unique and ordered by creation time
  std::string actor;
  std::string operation;
  std::vector<DatasetRef> inputs;
  std::vector<DatasetRef> outputs;
  int64_t ts_ms = 0;
  std::optional<int64_t> commit_seq;  // absent for ingested events
  std::optional<std::string> run_id;
  std::optional<JobRef> job;
  /// For ingested events: the OpenLineage event as received.
  std::optional<std::string> raw;

  bool operator==(const LineageEvent&) const = default;
};

/// A new time-ordered UUID (version 7).
std::string NewEventId();

/// Compact JSON of an event (the form stored in the commit log and the events table).
std::string ToJson(const LineageEvent& event);
/// Errors: kCorrupt naming the problem.
Result<LineageEvent> LineageEventFromJson(std::string_view json);

/// Parses a CLI dataset name: `ns.table[@snapshot]` (this warehouse) or
/// `system:name[@snapshot]`. Errors: kInvalidArgument naming the text.
Result<DatasetRef> ParseDatasetRef(std::string_view text);

/// Milliseconds since the epoch as RFC 3339 UTC with milliseconds (`...T10:00:00.123Z`).
std::string FormatTimestamp(int64_t ts_ms);
/// Parses RFC 3339 (`Z` or `±hh:mm` offset, optional fraction) or a bare date.
/// Errors: kInvalidArgument naming the text.
Result<int64_t> ParseTimestamp(std::string_view text);

}  // namespace skade::lineage
