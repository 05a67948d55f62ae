// Snapshots and refs as table metadata records them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace skade {

struct Snapshot {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  std::string manifest_list;
  std::map<std::string, std::string> summary;  // includes "operation"
  std::optional<int> schema_id;
  /// Format v3 row lineage: the first row id the snapshot's new data files were given, and
  /// how many ids it assigned.
  std::optional<int64_t> first_row_id;
  std::optional<int64_t> added_rows;

  std::string operation() const {
    auto it = summary.find("operation");
    return it == summary.end() ? std::string() : it->second;
  }
};

struct SnapshotRef {
  int64_t snapshot_id = 0;
  std::string type = "branch";  // "branch" | "tag"
  std::optional<int> min_snapshots_to_keep;
  std::optional<int64_t> max_snapshot_age_ms;
  std::optional<int64_t> max_ref_age_ms;
};

struct SnapshotLogEntry {
  int64_t timestamp_ms = 0;
  int64_t snapshot_id = 0;
};

struct MetadataLogEntry {
  int64_t timestamp_ms = 0;
  std::string metadata_file;
};

}  // namespace skade
