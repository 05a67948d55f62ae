// LineageEvent ↔ OpenLineage RunEvent (spec 2-0-2), following OpenLineage's dataset
// naming: a skade table is named like Spark names an Iceberg table (namespace `file`,
// name = its location path) with the catalog name `ns.table` as a TABLE symlink, so
// Spark's events about the same table join skade's own nodes.
#pragma once

#include <functional>
#include <map>
#include <memory>
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

/// Whether two catalog URIs are the same (`http://h:1/` is `http://h:1`).
bool SameCatalogUri(std::string_view a, std::string_view b);

/// Maps in both directions for one warehouse. ToRunEvent is not thread-safe (caches
/// table metadata); FromRunEvent is.
class RunEventMapper {
 public:
  /// `catalog` (may be null) supplies the schema and statistics facets of outputs,
  /// and the folders of its tables: a dataset named by a table's location is that
  /// table, whatever layout the engine that made it chose.
  RunEventMapper(std::string warehouse, Catalog* catalog);

  /// Which OpenLineage namespaces are this warehouse's catalog besides `file:<warehouse>`:
  /// a `symlinks` identifier in one of them (Spark names a REST catalog table by the
  /// catalog's `uri`) is the table of that name here.
  void SetOwnCatalog(std::function<bool(std::string_view ns)> is_own);

  /// One COMPLETE RunEvent (compact JSON). Skade's own fields travel in the run facet
  /// `skade`, so FromRunEvent restores the event exactly; an ingested event keeps the
  /// event type it was received with.
  std::string ToRunEvent(const LineageEvent& event);

  /// Parses one RunEvent. The event_id is the `skade` facet's, or derived from the run,
  /// event type, time and job, so ingesting the same event twice gives one id.
  /// Spark ends every SQL statement with a `command_result` pseudo-job naming the
  /// statement's datasets again; such an event is folded into the run it closes (the
  /// latest run of its parent sharing a dataset with it, or the latest if it names none,
  /// among the events this mapper saw and, with a catalog, those it remembers beside the
  /// catalog's lineage inbox, so a restart between a run and its close changes nothing):
  /// it takes that run's id and job, adding no edges.
  /// Without one it counts as a run of its parent job (the Spark application).
  /// Errors: kInvalidArgument naming the missing or mistyped field; the catalog's.
  Result<LineageEvent> FromRunEvent(std::string_view json) const;

 private:
  struct RecentRuns;  // what command_result events are folded into
  std::string warehouse_;  // absolute path, no trailing slash
  Catalog* catalog_;
  std::function<bool(std::string_view)> is_own_catalog_;
  std::map<std::string, TableMetadataPtr> metadata_;  // by table, for facets
  std::shared_ptr<RecentRuns> recent_;
};

}  // namespace skade::lineage
