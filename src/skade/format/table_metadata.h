// Iceberg table metadata (format versions 1 to 3): the immutable document a table's metadata file holds.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/partition_spec.h"
#include "skade/format/snapshot.h"
#include "skade/format/types.h"

namespace skade {

/// Which snapshot a read names: at most one of an id, a time and a ref; none names the
/// current snapshot.
struct SnapshotChoice {
  std::optional<int64_t> id;
  std::optional<int64_t> as_of_ms;
  std::optional<std::string> ref;
};

struct TableMetadata {
  int format_version = 2;
  std::string table_uuid;
  std::string location;
  int64_t last_sequence_number = 0;
  int64_t last_updated_ms = 0;
  int last_column_id = 0;
  std::vector<SchemaPtr> schemas;
  int current_schema_id = 0;
  std::vector<PartitionSpec> specs;
  int default_spec_id = 0;
  int last_partition_id = 999;
  int default_sort_order_id = 0;
  std::string sort_orders_json = R"([{"order-id":0,"fields":[]}])";  // kept verbatim
  std::map<std::string, std::string> properties;
  std::optional<int64_t> current_snapshot_id;
  std::map<std::string, SnapshotRef> refs;
  std::vector<Snapshot> snapshots;
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::string statistics_json = "[]";            // kept verbatim
  std::string partition_statistics_json = "[]";  // kept verbatim
  /// Format v3: the next row id to assign (row lineage).
  std::optional<int64_t> next_row_id;

  const SchemaPtr& schema() const;
  /// Schema by id; nullptr when absent.
  SchemaPtr SchemaById(int id) const;
  const PartitionSpec& spec() const;
  const PartitionSpec* SpecById(int id) const;
  /// The schema to bind `spec` with: `preferred` when it has every source column of the
  /// spec, else the newest schema that does (a spec no longer the default may name a
  /// column dropped since, as PyIceberg allows), else `preferred`.
  const Schema& SchemaForSpec(const PartitionSpec& spec, const Schema& preferred) const;
  /// A field of any partition spec whose source column the current schema lacks, with its
  /// spec's id; nullopt when every spec binds with the current schema.
  std::optional<std::pair<int, PartitionField>> FieldWithDroppedSource() const;
  /// The default sort order as text, "cat desc nulls-last, day(ts) asc nulls-first" (a
  /// column no schema has shows as its id); empty when the table is unsorted.
  std::string SortOrderText() const;
  const Snapshot* SnapshotById(int64_t id) const;
  const Snapshot* CurrentSnapshot() const;
  /// Snapshot `head` and its ancestors, newest first, as far as they are still here.
  std::vector<const Snapshot*> Ancestors(int64_t head) const;
  /// Whether `ancestor` is `head` or one of its ancestors still here.
  bool IsAncestor(int64_t ancestor, int64_t head) const;
  /// The snapshot current at `timestamp_ms` per the snapshot log. Errors: kNotFound.
  Result<const Snapshot*> SnapshotAsOf(int64_t timestamp_ms) const;
  /// The snapshot a branch or tag points to. Errors: kNotFound listing the refs.
  Result<const Snapshot*> SnapshotForRef(std::string_view ref) const;
  /// The snapshot `choice` names; nullptr for the current one of a table without
  /// snapshots. Errors: kInvalidArgument when it names more than one way, kNotFound.
  Result<const Snapshot*> Choose(const SnapshotChoice& choice) const;
  std::string Property(std::string_view key, std::string_view fallback) const;
  int64_t PropertyInt(std::string_view key, int64_t fallback) const;
};

using TableMetadataPtr = std::shared_ptr<const TableMetadata>;

/// Parses a metadata JSON document (format versions 1 to 3; v1 fields upgraded to v2).
/// Errors: kCorrupt naming the missing/invalid field, or what of v3 skade cannot read
/// (encryption).
Result<TableMetadata> ParseTableMetadata(std::string_view json);
/// Serializes metadata (v2, or v3 with its row lineage) in the order Java writes it.
std::string TableMetadataToJson(const TableMetadata& m);

/// Iceberg JSON of a schema / partition spec (also used in manifest headers).
std::string SchemaToJson(const Schema& schema);
Result<Schema> ParseSchemaJson(std::string_view json);
std::string PartitionFieldsToJson(const PartitionSpec& spec);
std::string PartitionSpecToJson(const PartitionSpec& spec);

}  // namespace skade
