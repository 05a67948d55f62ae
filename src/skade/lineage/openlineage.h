// LineageEvent ↔ OpenLineage RunEvent (spec 2-0-2), following OpenLineage's dataset
// naming: a skade table is named like Spark names an Iceberg table (namespace `file`,
// name = its location path) with the catalog name `ns.table` as a TABLE symlink, so
// Spark's events about the same table join skade's own nodes.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "skade/catalog/catalog.h"
#include "skade/common/result.h"
#include "skade/lineage/lineage_event.h"

namespace skade::lineage {

/// The URI skade names itself by in `producer` and `_producer`.
inline constexpr const char* kSkadeProducer = "https://github.com/skade-warehouse/skade";

/// The system kind of an OpenLineage dataset namespace: its URI scheme
/// (`postgres://db:5432` → postgres, `s3://bucket` → s3, `arn:aws:glue:...` → glue),
/// or the namespace itself when it has none (`bigquery`, `spark`).
std::string SystemKindOf(std::string_view ol_namespace);

/// Maps in both directions for one warehouse. Not thread-safe (caches table metadata).
class RunEventMapper {
 public:
  /// `catalog` (may be null) supplies the schema and statistics facets of outputs,
  /// and the folders of its tables: a dataset named by a table's location is that
  /// table, whatever layout the engine that made it chose.
  RunEventMapper(std::string warehouse, Catalog* catalog);

  /// One COMPLETE RunEvent (compact JSON). Skade's own fields travel in the run facet
  /// `skade`, so FromRunEvent restores the event exactly; an ingested event keeps the
  /// event type it was received with.
  std::string ToRunEvent(const LineageEvent& event);

  /// Parses one RunEvent. The event_id is the `skade` facet's, or derived from the run,
  /// event type, time and job, so ingesting the same event twice gives one id.
  /// Errors: kInvalidArgument naming the missing or mistyped field.
  Result<LineageEvent> FromRunEvent(std::string_view json) const;

 private:
  std::string warehouse_;  // absolute path, no trailing slash
  Catalog* catalog_;
  std::map<std::string, TableMetadataPtr> metadata_;  // by table, for facets
};

}  // namespace skade::lineage
