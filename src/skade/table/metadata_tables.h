// Iceberg's metadata tables of a snapshot (Spark's `t.partitions`, PyIceberg's
// `inspect.partitions()` and friends): what a snapshot reads, summed per partition, and
// partition tuples and manifest summaries as text a person reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"
#include "skade/table/manifest_io.h"

namespace skade {

/// The files of one partition of one spec, summed as Iceberg's partitions table sums
/// them: data files' records and bytes, delete files' records by kind, and the newest
/// snapshot that added one of its files.
struct PartitionSummary {
  int spec_id = 0;
  std::vector<Value> partition;
  int64_t record_count = 0;  // records in data files (deletes not subtracted)
  int64_t file_count = 0;    // data files
  int64_t data_bytes = 0;
  int64_t position_delete_records = 0, position_delete_files = 0;
  int64_t equality_delete_records = 0, equality_delete_files = 0;
  std::optional<int64_t> last_updated_ms = std::nullopt, last_updated_snapshot_id = std::nullopt;
};

/// The columns of Iceberg's partitions table, in the order a summary lists them.
inline constexpr const char* kPartitionSummaryColumns[] = {
    "partition", "spec_id", "record_count", "file_count", "total_data_file_size_in_bytes",
    "position_delete_record_count", "position_delete_file_count", "equality_delete_record_count",
    "equality_delete_file_count", "last_updated_at", "last_updated_snapshot_id"};

/// One summary per (spec, partition tuple) of `files`, by spec and then by value
/// (nulls first).
std::vector<PartitionSummary> PartitionSummaries(const TableMetadata& metadata, const std::vector<LiveFile>& files);

/// A partition tuple as text, the form of a data file's folder:
/// "ts_day=2024-03-01/id_bucket=3"; empty for an unpartitioned spec.
std::string PartitionText(const TableMetadata& metadata, int spec_id, const std::vector<Value>& partition);
/// The same tuple as a JSON object of the values Iceberg keeps, as Spark's and PyIceberg's
/// partitions tables give them: {"ts_day":"2024-03-01","ts_month":650,"id_bucket":3}.
/// Numbers and booleans are bare; dates, times, decimals and strings are their text.
std::string PartitionJson(const TableMetadata& metadata, int spec_id, const std::vector<Value>& partition);

/// A manifest's partition summaries as text: "ts_day=2024-02-28..2024-03-02, id_bucket=0..15"
/// (a field holding nulls says so: "country=DE..SE+null"; only nulls: "country=null").
/// Empty when the manifest has none or its spec is unpartitioned.
std::string PartitionRangeText(const TableMetadata& metadata, const ManifestFile& manifest);

}  // namespace skade
