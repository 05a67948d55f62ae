// Writes Arrow batches as Iceberg data files: conform to the table schema,
// split by partition, roll files at the target size, collect metrics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"

namespace arrow {
class Array;
class MemoryPool;
class RecordBatch;
class RecordBatchReader;
class Schema;
}

namespace skade {

/// Makes an input batch fit `schema`: columns matched by name (exact, then
/// case-insensitive), types converted, required columns checked. `first_row` is the
/// input row number of the batch's first row (for messages, 1-based).
/// Errors: kInvalidArgument naming the column and row that do not fit.
Result<std::shared_ptr<arrow::RecordBatch>> ConformToSchema(
    const std::shared_ptr<arrow::RecordBatch>& batch, const Schema& schema, int64_t first_row);

/// `rows` copies of a column's default value (Iceberg v3 `initial-default` or
/// `write-default`: the JSON text of the value), typed as `field` is written and read.
/// Errors: kInvalidArgument when it does not fit the type; kUnsupported for a nested
/// column's default.
Result<std::shared_ptr<arrow::Array>> DefaultColumn(const NestedField& field, const std::string& json, int64_t rows);

/// The rows of `input`, conformed to `schema` as they come (so an error names the input's
/// row), whose position, counted from `first`, `keep` marks (an upsert's last row of each
/// key). With `replaced_ids` (one per marked row, -1 for none), the batches end with the
/// row lineage columns: `_row_id` those ids (null for -1) and `_last_updated_sequence_number`
/// null, as the spec asks of a modified row. `*rows_read` counts the input's rows as they are
/// read. `schema`, `keep` and `replaced_ids` must outlive the reader. Errors: kCorrupt when
/// the input holds more rows than `keep` covers.
std::shared_ptr<arrow::RecordBatchReader> KeepMarkedRows(std::shared_ptr<arrow::RecordBatchReader> input,
                                                         const Schema& schema, const std::vector<uint8_t>& keep,
                                                         const std::vector<int64_t>& replaced_ids, int64_t first,
                                                         int64_t* rows_read);

/// Writes one Parquet file of the batches of `batches` (whose fields carry the ids of
/// `schema`) at `location` as they come, and describes it; used for delete files. A file
/// left unfinished by an error is removed.
Result<DataFile> WriteParquetFile(const TableMetadata& metadata, const std::string& location,
                                  arrow::RecordBatchReader& batches, const Schema& schema);
/// The same for one batch.
Result<DataFile> WriteParquetFile(const TableMetadata& metadata, const std::string& location,
                                  const std::shared_ptr<arrow::RecordBatch>& batch, const Schema& schema);

/// A Parquet file outside any table (`skade scan --format parquet --output F`), written
/// as data files are: zstd level 1, dictionaries off for columns whose first rows are
/// mostly distinct, the columns of a row group encoded in parallel, O_DIRECT where the
/// file system takes it. A row group is closed every `row_group_bytes` of input, so
/// memory stays bounded whatever the number of rows.
class ParquetExport {
 public:
  ~ParquetExport();
  /// Creates (or truncates) `path`. Errors: kIoError naming it.
  static Result<std::unique_ptr<ParquetExport>> Open(const std::string& path, std::shared_ptr<arrow::Schema> schema,
                                                     int64_t row_group_bytes);
  Status Write(const std::shared_ptr<arrow::RecordBatch>& batch);
  /// Writes what is held and the footer.
  Status Close();

 private:
  struct Impl;
  explicit ParquetExport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class DataWriter {
 public:
  ~DataWriter();
  /// A writer for the table's current schema and default spec. `row_lineage`: batches
  /// also hold the row lineage columns after the table's (ReadRowLineage), which files
  /// then hold too, so moved rows keep their ids (format v3 rewrites).
  static Result<std::unique_ptr<DataWriter>> Make(const TableMetadata& metadata, bool row_lineage = false);
  /// Writes one batch (already conformed to the schema).
  Status Write(const std::shared_ptr<arrow::RecordBatch>& batch);
  /// Deletes every file written so far (they were never referenced).
  void Abort();
  /// Closes all open files; returns what was written.
  Result<std::vector<DataFile>> Finish();
  int64_t rows_written() const;
  /// The pool the encoders allocate from: a rewrite decodes its input into it too
  /// (ScanPlan::pool), so what one side frees the other reuses.
  static arrow::MemoryPool* pool();

 private:
  struct Impl;
  explicit DataWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skade
