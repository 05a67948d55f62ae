// Scans: projection, filter pushdown (partitions, manifests, file metrics,
// Parquet row groups), time travel, streamed as Arrow record batches.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/common/result.h"
#include "skade/expr/expression.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"
#include "skade/table/delete_index.h"

namespace arrow {
class MemoryPool;
class RecordBatchReader;
class Schema;
class Status;
class Table;
}  // namespace arrow

namespace skade {

class FileIO;

/// What pruning did: baseline (everything in the snapshot) vs planned vs read.
struct ScanStats {
  int64_t manifests_total = 0;
  int64_t manifests_skipped = 0;
  int64_t files_total = 0;
  int64_t files_skipped_by_partition = 0;
  int64_t files_skipped_by_metrics = 0;
  int64_t files_planned = 0;
  int64_t rows_total = 0;    // records in all data files of the snapshot
  int64_t rows_planned = 0;  // records in planned files
  int64_t row_groups_total = 0;
  int64_t row_groups_skipped = 0;
  int64_t rows_read = 0;      // rows decoded from Parquet
  int64_t pages_skipped = 0;  // data pages not decoded: none of their rows passed the filter and deletes
  int64_t rows_returned = 0;  // rows after the exact filter and limit
  int64_t delete_files = 0;   // delete files applied
  int64_t rows_deleted = 0;   // rows removed by delete files
};

struct FileScanTask {
  DataFile file;
  int64_t data_sequence_number = 0;
  std::vector<DeleteFileEntry> deletes;  // delete files that apply to `file`
  /// What the plan's filter still has to decide for this file's rows once its identity
  /// partition values are known (kTrue: every row matches); null: the plan's filter.
  /// Ignored by a plan without a filter.
  expr::ExprPtr residual;
};

/// A planned scan: immutable once built.
struct ScanPlan {
  TableMetadataPtr metadata;
  const Snapshot* snapshot = nullptr;  // null: empty table
  SchemaPtr schema;                    // the schema rows are read with
  std::vector<int> projected_ids;      // top-level field ids, output order
  /// The output's fields as Plan() made them: those of projected_ids, a struct cut down
  /// to the nested fields selected ("s.a"). The reader takes a projected column's shape
  /// from here by its id (whole when absent or null); projected_ids decide the columns.
  SchemaPtr output_schema;
  expr::ExprPtr filter;                // bound, or null
  std::vector<FileScanTask> tasks;
  std::vector<DataFile> delete_files;  // every live delete file of the snapshot
  std::shared_ptr<ScanStats> stats;    // updated while reading
  int64_t limit = -1;
  /// Adds a last column `_pos` (int64): each row's position in its data file.
  bool emit_positions = false;
  /// Row groups in flight (decoding, or decoded and not yet handed out), their columns
  /// decoded as tasks of the shared pool: 0 = up to four per worker, 1 = one after
  /// another in the reading thread. Output order and batches are the same either way:
  /// planned file order, row groups in file order, rows in file order.
  int parallelism = 0;
  /// Bound on decoded bytes of row groups in flight (read ahead, not yet consumed);
  /// at least one row group is always in flight. 0: 128 MiB, less with more than four
  /// workers (512 MiB / workers, at least 32 MiB).
  int64_t memory_budget_bytes = 0;
  /// The pool decoded batches are allocated from (null: Arrow's default). A rewrite
  /// passes its writer's pool, so the memory a written batch frees is what the next
  /// decoded batch reuses, instead of fresh pages the kernel must zero.
  arrow::MemoryPool* pool = nullptr;
};

/// Builder of a scan. Errors are reported by Plan() (all at once where possible).
class TableScan {
 public:
  TableScan(TableMetadataPtr metadata, FileIO* io) : metadata_(std::move(metadata)), io_(io) {}
  /// A scan of a catalog table: planning it reports the read to the thread's
  /// ProvenanceSource (a lineage scope), if one is installed.
  TableScan(TableMetadataPtr metadata, FileIO* io, TableIdent table)
      : metadata_(std::move(metadata)), io_(io), table_(std::move(table)) {}

  /// Columns to output, in order: top-level names, or dotted paths to fields inside
  /// structs ("s.a": the struct `s` holding only the fields selected). A column named
  /// twice is output once.
  TableScan& Select(std::vector<std::string> columns);
  TableScan& Filter(std::string expression);
  TableScan& Filter(expr::ExprPtr unbound);
  TableScan& UseSnapshot(int64_t snapshot_id);
  TableScan& AsOfTime(int64_t timestamp_ms);
  TableScan& UseRef(std::string ref);
  TableScan& Use(SnapshotChoice choice);
  TableScan& Limit(int64_t rows);

  /// Resolves the snapshot, binds projection and filter, prunes files.
  /// Errors: kInvalidArgument (unknown column, bad filter), kNotFound (snapshot/ref),
  /// kCorrupt naming the manifest or manifest list.
  Result<ScanPlan> Plan() const;
  /// Streams the rows of a plan: row groups of all planned files decode concurrently
  /// (plan.parallelism, plan.memory_budget_bytes), batches come out in plan order. The
  /// reader keeps the plan: a caller done with it moves it in (a copy of many files'
  /// statistics costs as much as planning them).
  static Result<std::shared_ptr<arrow::RecordBatchReader>> Read(ScanPlan plan, FileIO* io);
  Result<std::shared_ptr<arrow::RecordBatchReader>> ToReader() const;
  Result<std::shared_ptr<arrow::Table>> ToTable() const;

 private:
  TableMetadataPtr metadata_;
  FileIO* io_;
  std::optional<TableIdent> table_;
  std::optional<std::vector<std::string>> columns_;
  std::optional<std::string> filter_text_;
  expr::ExprPtr filter_;
  SnapshotChoice choice_;
  int64_t limit_ = -1;
};

/// Columns named for output (top-level names or dotted paths into structs, "s.a") as
/// the top-level field ids to read, in order of first mention, and the output's fields,
/// a struct cut down to the fields named in it. A column named twice is output once.
struct Projection {
  std::vector<int> ids;
  SchemaPtr output;
  std::vector<std::string> unknown;  // names the schema does not have
};
Projection ProjectColumns(const Schema& schema, const std::vector<std::string>& columns);

/// `schema` with the metadata columns that `columns` names and it does not hold itself
/// (`_file`, `_pos`; on format v3 tables `_row_id` and `_last_updated_sequence_number`)
/// after its own fields, to be read as its columns (the reader fills them in). A lineage
/// column named on an older table adds a problem naming it to `problems`.
SchemaPtr WithMetadataColumns(const SchemaPtr& schema, const std::vector<std::string>& columns, int format_version,
                              std::vector<std::string>& problems);

/// Makes `plan` also output the row lineage columns of a format v3 table (`_row_id`,
/// `_last_updated_sequence_number`, after the others): a rewrite writes them so that the
/// rows it moves keep their ids.
void ReadRowLineage(ScanPlan& plan);

/// A skade error from a status a scan's record-batch reader returned.
Error ErrorFromReader(const arrow::Status& status);

}  // namespace skade
