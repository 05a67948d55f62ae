// A table of the warehouse: its current metadata, appends and scans.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/common/result.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"

namespace arrow {
class Table;
class RecordBatchReader;
}  // namespace arrow

namespace skade {

class TableScan;
class SchemaUpdate;
struct FileChange;

/// Options of one write (append, delete, upsert, overwrite).
struct AppendOptions {
  std::map<std::string, std::string> snapshot_properties;  // extra summary entries
  std::string branch = "main";
  /// Called with rows written so far (for progress on a terminal; rows_total -1), and
  /// once at the end with every row (rows_total then the same).
  std::function<void(int64_t rows_done, int64_t rows_total)> progress;
  /// The actor and the inputs this write was derived from (recorded as lineage).
  CommitProvenance provenance;
  /// StageAppend: the batches end with the row lineage columns (`_row_id`,
  /// `_last_updated_sequence_number`), which the files keep: an upsert's rows taking over
  /// the ids of the rows they replace on a format v3 table.
  bool row_lineage = false;
};

using WriteOptions = AppendOptions;

/// Table property: "true" lets Upsert and DeleteKeys write equality delete files
/// (cheaper writes, for streaming upserts) where the identifier columns determine the
/// partition. Default "false": they write position deletes, which every reader reads
/// (PyIceberg 0.12, for one, refuses tables with equality deletes).
inline constexpr const char* kEqualityDeletesProperty = "skade.write.upsert.equality-deletes";

/// kInvalidArgument naming each property skade honours whose value it could not use (a
/// size that is not a positive number, a codec it cannot write, a mode it does not know,
/// a `format-version` other than 2). Other keys pass as they are.
Status CheckTableProperties(const std::map<std::string, std::string>& properties);

struct CommitResult {
  int64_t snapshot_id = 0;
  int64_t commit_seq = 0;
  int attempts = 1;
  std::vector<DataFile> added_files;
  int64_t rows_added = 0;
  int64_t rows_deleted = 0;  // for equality deletes: the number of keys
  bool committed = true;     // false when there was nothing to change
};

struct ExpireResult {
  std::vector<int64_t> expired_snapshots;
  std::vector<std::string> deleted_files;
  CommitResult commit;
};

/// What an upsert writes of its input, handed to its stage.
struct UpsertRows {
  /// Per input row: whether it is the last of its key, which the upsert writes.
  std::vector<uint8_t> keep;
  /// Format v3 (position deletes or copy-on-write): per kept row, in input order, the
  /// `_row_id` of the row it replaces, which it keeps (Iceberg's row lineage), or -1 for a
  /// key new to the table. Empty when the table tracks no row ids or the old rows go by
  /// equality deletes (which do not say which rows they were).
  std::vector<int64_t> replaced_ids;
};

/// Files a writer produced, ready to commit (written, never yet referenced).
struct StagedAppend {
  std::vector<DataFile> files;
  std::map<std::string, std::string> snapshot_properties;
  std::string branch = "main";
  CommitProvenance provenance;
};

class Table {
 public:
  /// Errors: those of Catalog::LoadTable.
  static Result<std::unique_ptr<Table>> Load(Catalog& catalog, const TableIdent& ident);
  Table(Catalog& catalog, LoadedTable loaded);

  const TableIdent& ident() const { return loaded_.ident; }
  /// The current metadata; every write replaces it, so hold the pointer (not a
  /// reference into it) across writes.
  const TableMetadataPtr& metadata() const { return loaded_.metadata; }
  const std::string& metadata_location() const { return loaded_.metadata_location; }
  /// The catalog the table lives in (not owned).
  Catalog& catalog() const { return *catalog_; }
  /// Reloads the current metadata from the catalog.
  Status Refresh();

  /// Writes `data` as Parquet data files (partitioned, rolled at the target file
  /// size) and commits one `append` snapshot, retrying on conflicts.
  /// Columns are matched by name and converted to the table's types.
  /// Errors: kInvalidArgument naming column and row; kCommitConflict after retries.
  Result<CommitResult> Append(const std::shared_ptr<arrow::Table>& data,
                              const AppendOptions& options = {});
  /// Streaming variant: batches are written as they arrive.
  Result<CommitResult> Append(arrow::RecordBatchReader& reader, const AppendOptions& options = {});

  /// Writes data files for `data` without committing (for multi-table commits).
  Result<StagedAppend> StageAppend(const std::shared_ptr<arrow::Table>& data,
                                   const AppendOptions& options = {});
  Result<StagedAppend> StageAppend(arrow::RecordBatchReader& reader, const AppendOptions& options = {});
  /// Commits staged files as one append snapshot (with retries).
  Result<CommitResult> CommitAppend(const StagedAppend& staged);

  /// Deletes the rows matching `filter`. Files wholly matched are dropped in metadata
  /// only; others get position deletes (`write.delete.mode` = merge-on-read, the
  /// default) or are rewritten (copy-on-write). Errors: kInvalidArgument for a bad filter.
  Result<CommitResult> Delete(const std::string& filter, const WriteOptions& options = {});
  /// Deletes the rows whose identifier columns equal a key row: position deletes found
  /// by reading only the key columns of the files whose partition and key bounds admit
  /// a key (or rewritten files, for copy-on-write); equality deletes only when
  /// kEqualityDeletesProperty is "true" and the key determines the partition.
  /// Errors: kInvalidArgument when the table has no identifier fields or the keys lack
  /// one, or for a bad kEqualityDeletesProperty; kCommitConflict when concurrent
  /// commits kept changing the rows it read (it recomputes a few times first).
  Result<CommitResult> DeleteKeys(const std::shared_ptr<arrow::Table>& keys, const WriteOptions& options = {});
  /// Inserts or replaces rows by the identifier fields, in one snapshot; duplicate keys
  /// within `rows` resolve last-row-wins. Old rows go as in DeleteKeys. On a format v3
  /// table a row that replaces one keeps its `_row_id` (unless equality deletes remove it).
  Result<CommitResult> Upsert(const std::shared_ptr<arrow::Table>& rows, const WriteOptions& options = {});
  /// Streaming variant, holding keys rather than rows: `keys` has the identifier columns
  /// of every input row, in input order (other columns are ignored). `stage` writes the
  /// input rows whose position `rows.keep` marks (the last row of each key) as data files,
  /// with `rows.replaced_ids` when it is not empty (KeepMarkedRows), once per attempt, like
  /// Overwrite's. Errors as above; kCorrupt when the rows staged are not the rows kept (the
  /// input changed between its reads).
  Result<CommitResult> Upsert(const std::shared_ptr<arrow::Table>& keys,
                              const std::function<Result<StagedAppend>(const UpsertRows& rows)>& stage,
                              const WriteOptions& options = {});
  /// Replaces the rows matching `filter` with `rows` in one snapshot; without a filter,
  /// replaces the partitions `rows` touch (dynamic overwrite; all rows if unpartitioned).
  Result<CommitResult> Overwrite(const std::shared_ptr<arrow::Table>& rows, const std::optional<std::string>& filter,
                                 const WriteOptions& options = {});
  /// Streaming variant: `stage` writes the new rows' data files (StageAppend of a reader)
  /// and is called once per attempt, so a commit redone after a conflict reads its input
  /// again instead of the rows being held in memory. Files it staged are removed when the
  /// attempt fails.
  Result<CommitResult> Overwrite(const std::function<Result<StagedAppend>()>& stage,
                                 const std::optional<std::string>& filter, const WriteOptions& options = {});

  /// Sets and removes table properties in one commit (CheckTableProperties first).
  Result<CommitResult> UpdateProperties(const std::map<std::string, std::string>& set,
                                        const std::vector<std::string>& remove);
  /// Evolves the schema (see schema_update.h); no data is rewritten.
  Result<CommitResult> UpdateSchema(const SchemaUpdate& update);
  /// Adds partition fields (CLI partition language, e.g. "bucket(8,id)") to a new
  /// default spec; files already written keep their spec.
  Result<CommitResult> AddPartitionFields(const std::string& fields);
  /// Removes a partition field by name from the default spec (a new spec).
  Result<CommitResult> RemovePartitionField(const std::string& name);
  /// Creates a tag or branch at a snapshot (default: the current one).
  Result<CommitResult> CreateRef(const std::string& name, const std::string& type,
                                 std::optional<int64_t> snapshot_id);
  /// Drops a tag or branch (not `main`). Errors: kNotFound, kInvalidArgument.
  Result<CommitResult> DropRef(const std::string& name, const std::string& type);
  /// Moves `branch` forward to `to` (a branch name) when its head is an ancestor of it.
  Result<CommitResult> FastForward(const std::string& branch, const std::string& to);
  /// Points `main` at an earlier snapshot of its history.
  Result<CommitResult> Rollback(int64_t snapshot_id);

  /// Expires snapshots older than `older_than_ms` (default: 5 days ago) while keeping
  /// the last `retain_last` (default 1) of each branch and every ref's snapshot, then
  /// deletes the files only the expired snapshots referenced. Returns what it did.
  Result<ExpireResult> ExpireSnapshots(std::optional<int64_t> older_than_ms, std::optional<int64_t> retain_last);
  /// Files under the table's location that no snapshot or metadata file references,
  /// last modified before `older_than_ms` (so in-flight writers are safe); deleted
  /// when `remove` is set.
  Result<std::vector<std::string>> OrphanFiles(int64_t older_than_ms, bool remove);
  /// Bin-packs small data files per partition (and files with deletes), folding the
  /// deletes in, as one `replace` snapshot; afterwards no delete file is left (equality
  /// deletes included). With `where` (a filter), only the files that may hold a matching
  /// row, by partition and column bounds, are rewritten (whole); the others keep their
  /// deletes. Rows are unchanged. A commit that deletes rows of the files being
  /// rewritten meanwhile makes it redo the rewrite (kCommitConflict after 5 tries).
  Result<CommitResult> Compact(std::optional<int64_t> target_file_size,
                               const std::optional<std::string>& where = std::nullopt);
  /// Rewrites the current snapshot's manifests into one per content and spec.
  Result<CommitResult> RewriteManifests();

  /// A scan of this table (see scan.h).
  TableScan NewScan() const;

 private:
  Result<CommitResult> CommitFileChange(FileChange change, int64_t rows_added, int64_t rows_deleted);
  Result<CommitResult> CompactOnce(std::optional<int64_t> target_file_size, const std::optional<std::string>& where);
  Result<CommitResult> CommitMetadata(const std::string& operation,
                                      const std::function<Result<TableMetadata>(const TableMetadata&)>& mutate);
  friend Result<std::vector<CommitResult>> CommitAppends(
      std::vector<std::pair<Table*, StagedAppend>>& appends);
  Catalog* catalog_;
  LoadedTable loaded_;
};

/// Atomic release: commits one append snapshot on each table in one catalog
/// transaction, all or nothing, retrying the whole set on conflicts.
Result<std::vector<CommitResult>> CommitAppends(std::vector<std::pair<Table*, StagedAppend>>& appends);

/// After a drop with purge: deletes the files under the dropped table's `location`
/// that no remaining table uses (never another table's folder or the catalog).
/// Returns how many were deleted.
Result<size_t> PurgeDroppedTable(Catalog& catalog, const std::string& location);

}  // namespace skade
