// The Parquet writer of data files: Arrow's FileWriter, except that the columns of a
// flat schema are encoded as independent streams.
//
// Arrow's FileWriter encodes a batch's columns in parallel and returns when the slowest
// is done, so each batch ends with one core waiting on one column (a string column costs
// several times an integer one): alone, a writer kept 1.55 of 2 cores busy. Here each
// column takes its batches in order on the CPU pool while other columns run ahead, and
// the caller waits only for a row group's end (or when a few batches are queued). At a
// row group's end, each column chunk goes to the file as soon as it and those before it
// are encoded. Without use_threads in the Arrow writer properties, the caller encodes.
// Schemas with nested columns (their levels need Arrow's internal path builder) go
// through Arrow's FileWriter unchanged.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <memory>

namespace arrow {
class MemoryPool;
class RecordBatch;
class Schema;
class Table;
namespace io {
class OutputStream;
}
}  // namespace arrow
namespace parquet {
class ArrowWriterProperties;
class FileMetaData;
class WriterProperties;
}  // namespace parquet

namespace skade {

class ParquetFileWriter {
 public:
  static arrow::Result<std::unique_ptr<ParquetFileWriter>> Open(const arrow::Schema& schema, arrow::MemoryPool* pool,
                                                                std::shared_ptr<arrow::io::OutputStream> sink,
                                                                std::shared_ptr<parquet::WriterProperties> props,
                                                                std::shared_ptr<parquet::ArrowWriterProperties> arrow_props);
  virtual ~ParquetFileWriter() = default;

  /// Starts a row group that batches are added to (and encoded into) as they come; it
  /// reaches the file when the next row group starts or at Close.
  virtual arrow::Status NewBufferedRowGroup() = 0;
  /// Adds a batch to the open buffered row group (starting one if none is open). May
  /// return before the batch is encoded: it is kept until then. An encoding error is
  /// returned by a later call.
  virtual arrow::Status WriteRecordBatch(const std::shared_ptr<arrow::RecordBatch>& batch) = 0;
  /// Writes `table` as row groups of at most `chunk_size` rows, in the file on return.
  virtual arrow::Status WriteTable(const arrow::Table& table, int64_t chunk_size) = 0;
  /// Writes the last row group and the footer (also after an error, to release the file).
  virtual arrow::Status Close() = 0;
  /// The footer written by Close.
  virtual std::shared_ptr<parquet::FileMetaData> metadata() const = 0;
};

}  // namespace skade
