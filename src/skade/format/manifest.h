// Manifests and manifest lists (written as Iceberg v2 or v3; v1 to v3 read), encoded with skade's Avro codec.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"
#include "skade/expr/expression.h"
#include "skade/format/partition_spec.h"
#include "skade/format/types.h"
#include "skade/format/value.h"

namespace skade {

enum class FileContent { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };
enum class EntryStatus { kExisting = 0, kAdded = 1, kDeleted = 2 };

/// One data or delete file as a manifest describes it.
struct DataFile {
  FileContent content = FileContent::kData;
  std::string file_path;
  std::string file_format = "PARQUET";
  std::vector<Value> partition;  // in spec order
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
  std::map<int, int64_t> column_sizes;
  expr::ColumnStats stats;  // value/null/nan counts and bounds (record_count mirrored)
  std::vector<int64_t> split_offsets;
  std::vector<int> equality_ids;
  std::optional<int> sort_order_id;
  int spec_id = 0;  // not stored in the file: the manifest's spec
  /// Format v3. A deletion vector names the one data file it applies to and where its
  /// blob lies in the Puffin file; data files carry the first row id of their rows.
  std::optional<std::string> referenced_data_file;
  std::optional<int64_t> content_offset;
  std::optional<int64_t> content_size_in_bytes;
  std::optional<int64_t> first_row_id;

  /// A v3 deletion vector: position deletes of one data file, in a Puffin blob.
  bool IsDeletionVector() const { return content == FileContent::kPositionDeletes && content_offset.has_value(); }
  /// What tells this file's entry from others: the path, and for a deletion vector also its
  /// offset (one Puffin file holds the vectors of many data files, each replaced alone).
  std::string EntryKey() const {
    return IsDeletionVector() ? file_path + "#" + std::to_string(*content_offset) : file_path;
  }
};

struct ManifestEntry {
  EntryStatus status = EntryStatus::kAdded;
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> sequence_number;       // data sequence number
  std::optional<int64_t> file_sequence_number;
  DataFile data_file;
};

/// One entry of a manifest list.
struct ManifestFile {
  std::string manifest_path;
  int64_t manifest_length = 0;
  int partition_spec_id = 0;
  int content = 0;  // 0 data, 1 deletes
  int64_t sequence_number = 0;
  int64_t min_sequence_number = 0;
  int64_t added_snapshot_id = 0;
  int added_files_count = 0;
  int existing_files_count = 0;
  int deleted_files_count = 0;
  int64_t added_rows_count = 0;
  int64_t existing_rows_count = 0;
  int64_t deleted_rows_count = 0;
  std::optional<std::vector<expr::PartitionFieldSummary>> partitions;
  std::optional<int64_t> first_row_id;  // format v3: the first row id of its added data files
};

/// What a manifest's header says about its contents.
struct ManifestWriteContext {
  const Schema* schema = nullptr;
  const PartitionSpec* spec = nullptr;
  int content = 0;  // 0 data, 1 deletes
  std::string codec = "deflate";
  int format_version = 2;  // 3 adds row lineage and deletion vector fields
};

/// Encodes a manifest file. Entries whose status is ADDED and snapshot matches
/// inherit sequence numbers (written as null). Errors: kInvalidArgument.
Result<std::string> WriteManifest(const ManifestWriteContext& ctx,
                                  const std::vector<ManifestEntry>& entries);

/// Decodes a manifest, applying sequence-number and snapshot-id inheritance from
/// `manifest` (the list entry). Errors: kCorrupt naming what is wrong.
Result<std::vector<ManifestEntry>> ReadManifest(std::string_view bytes, const ManifestFile& manifest,
                                                const Schema& schema, const PartitionSpec& spec);

/// Encodes a manifest list for a snapshot; format version 3 writes each manifest's
/// first_row_id and the snapshot's `first_row_id`.
Result<std::string> WriteManifestList(int64_t snapshot_id, std::optional<int64_t> parent_id,
                                      int64_t sequence_number,
                                      const std::vector<ManifestFile>& manifests,
                                      const std::string& codec = "deflate", int format_version = 2,
                                      std::optional<int64_t> first_row_id = std::nullopt);
/// Decodes a manifest list (v1 lists read with sequence numbers 0). Errors: kCorrupt.
Result<std::vector<ManifestFile>> ReadManifestList(std::string_view bytes);

/// Partition summaries (for the manifest list) of a set of files of one spec.
std::vector<expr::PartitionFieldSummary> SummarizePartitions(
    const std::vector<TypePtr>& partition_types, const std::vector<ManifestEntry>& entries);

/// Iceberg → Avro schema JSON for a primitive type (date → int + logicalType ...).
std::string PrimitiveAvroSchema(const Type& type);

}  // namespace skade
