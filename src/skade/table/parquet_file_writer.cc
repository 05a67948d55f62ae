#include "skade/table/parquet_file_writer.h"

#include <arrow/api.h>
#include <arrow/util/thread_pool.h>
#include <parquet/arrow/schema.h>
#include <parquet/arrow/writer.h>
#include <parquet/column_writer.h>
#include <parquet/exception.h>
#include <parquet/file_writer.h>
#include <parquet/properties.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

namespace skade {
namespace {

// Nested schemas: Arrow's own writer, as it is.
class ArrowFileWriter final : public ParquetFileWriter {
 public:
  explicit ArrowFileWriter(std::unique_ptr<parquet::arrow::FileWriter> w) : w_(std::move(w)) {}
  arrow::Status NewBufferedRowGroup() override { return w_->NewBufferedRowGroup(); }
  arrow::Status WriteRecordBatch(const std::shared_ptr<arrow::RecordBatch>& batch) override {
    return w_->WriteRecordBatch(*batch);
  }
  arrow::Status WriteTable(const arrow::Table& table, int64_t chunk_size) override {
    return w_->WriteTable(table, chunk_size);
  }
  arrow::Status Close() override { return w_->Close(); }
  std::shared_ptr<parquet::FileMetaData> metadata() const override { return w_->metadata(); }

 private:
  std::unique_ptr<parquet::arrow::FileWriter> w_;
};

// Flat schemas: one ordered stream of arrays per column (see the header).
class ColumnStreamWriter final : public ParquetFileWriter {
 public:
  ColumnStreamWriter(std::shared_ptr<arrow::Schema> schema, std::unique_ptr<parquet::ParquetFileWriter> file,
                     arrow::MemoryPool* pool, std::shared_ptr<parquet::ArrowWriterProperties> arrow_props,
                     int64_t max_group_rows)
      : schema_(std::move(schema)),
        file_(std::move(file)),
        arrow_props_(std::move(arrow_props)),
        max_group_rows_(max_group_rows) {
    columns_.resize(static_cast<size_t>(file_->schema()->num_columns()));
    for (size_t i = 0; i < columns_.size(); ++i) {
      columns_[i].ctx = std::make_unique<parquet::ArrowWriteContext>(pool, arrow_props_.get());
      columns_[i].optional = file_->schema()->Column(static_cast<int>(i))->max_definition_level() > 0;
    }
  }
  ~ColumnStreamWriter() override { (void)Drain(); }  // tasks refer to this object

  arrow::Status NewBufferedRowGroup() override {
    ARROW_RETURN_NOT_OK(Drain());
    BEGIN_PARQUET_CATCH_EXCEPTIONS
    group_ = file_->AppendBufferedRowGroup();
    END_PARQUET_CATCH_EXCEPTIONS
    group_rows_ = 0;
    return arrow::Status::OK();
  }

  arrow::Status WriteRecordBatch(const std::shared_ptr<arrow::RecordBatch>& batch) override {
    if (batch->num_columns() != static_cast<int>(columns_.size()))
      return arrow::Status::Invalid("batch has ", batch->num_columns(), " columns, the file ", columns_.size());
    for (int i = 0; i < batch->num_columns(); ++i)
      if (!batch->column(i)->type()->Equals(*schema_->field(i)->type()))
        return arrow::Status::TypeError("column ", schema_->field(i)->name(), " is ",
                                        batch->column(i)->type()->ToString(), ", the file's ",
                                        schema_->field(i)->type()->ToString());
    for (int64_t offset = 0; offset < batch->num_rows();) {
      if (!group_ || group_rows_ >= max_group_rows_) ARROW_RETURN_NOT_OK(NewBufferedRowGroup());
      int64_t n = std::min(batch->num_rows() - offset, max_group_rows_ - group_rows_);
      ARROW_RETURN_NOT_OK(Enqueue(n == batch->num_rows() ? batch : batch->Slice(offset, n)));
      group_rows_ += n;
      offset += n;
    }
    std::lock_guard lock(mu_);
    return error_;
  }

  arrow::Status WriteTable(const arrow::Table& table, int64_t chunk_size) override {
    if (chunk_size <= 0) return arrow::Status::Invalid("row group size must be positive");
    const int64_t group = std::min(chunk_size, max_group_rows_);
    arrow::TableBatchReader reader(table);
    std::shared_ptr<arrow::RecordBatch> batch;
    int64_t rows = 0;  // in the open row group
    while (true) {
      ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
      if (!batch) break;
      for (int64_t offset = 0; offset < batch->num_rows();) {
        if (rows == 0) ARROW_RETURN_NOT_OK(NewBufferedRowGroup());
        int64_t n = std::min(batch->num_rows() - offset, group - rows);
        ARROW_RETURN_NOT_OK(WriteRecordBatch(n == batch->num_rows() ? batch : batch->Slice(offset, n)));
        rows += n;
        offset += n;
        if (rows == group) {
          ARROW_RETURN_NOT_OK(CloseGroup());
          rows = 0;
        }
      }
    }
    return CloseGroup();  // in the file on return, as Arrow's WriteTable leaves it
  }

  arrow::Status Close() override {
    arrow::Status st = Drain();
    if (closed_) return st;
    closed_ = true;
    group_ = nullptr;
    BEGIN_PARQUET_CATCH_EXCEPTIONS
    file_->Close();
    END_PARQUET_CATCH_EXCEPTIONS
    return st;
  }

  std::shared_ptr<parquet::FileMetaData> metadata() const override { return file_->metadata(); }

 private:
  // Batches queued per column before the caller waits: enough to cover one column's
  // slow batch, few enough to hold little memory.
  static constexpr size_t kQueuedBatches = 4;

  struct Column {
    std::deque<std::shared_ptr<arrow::Array>> queue;  // its next arrays, in batch order
    bool running = false;                             // a task is taking the queue
    std::unique_ptr<parquet::ArrowWriteContext> ctx;  // scratch buffers: the column's alone
    bool optional = false;
    std::vector<int16_t> levels;
  };

  arrow::Status Enqueue(const std::shared_ptr<arrow::RecordBatch>& batch) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !error_.ok() || queued_ < kQueuedBatches * columns_.size(); });
    if (!error_.ok()) return error_;
    for (size_t i = 0; i < columns_.size(); ++i) {
      Column& c = columns_[i];
      c.queue.push_back(batch->column(static_cast<int>(i)));
      ++queued_;
      if (c.running) continue;
      c.running = true;
      if (arrow_props_->use_threads() && arrow::internal::GetCpuThreadPool()->Spawn([this, i] { Run(i); }).ok())
        continue;
      lock.unlock();  // on this thread: no threads asked for, or no pool thread to take it
      Run(i);
      lock.lock();
    }
    return arrow::Status::OK();
  }

  // Takes column i's queue in order until it is empty.
  void Run(size_t i) {
    Column& c = columns_[i];
    std::unique_lock lock(mu_);
    while (!c.queue.empty()) {
      std::shared_ptr<arrow::Array> array = std::move(c.queue.front());
      c.queue.pop_front();
      bool skip = !error_.ok();
      lock.unlock();
      arrow::Status st = skip ? arrow::Status::OK() : Encode(c, i, *array);
      array.reset();  // the batch's memory goes before the lock is taken again
      lock.lock();
      if (!st.ok() && error_.ok()) error_ = st;
      --queued_;
      cv_.notify_all();
    }
    c.running = false;
    cv_.notify_all();
  }

  arrow::Status Encode(Column& c, size_t i, const arrow::Array& array) {
    const int64_t n = array.length();
    const int16_t* levels = nullptr;
    if (!c.optional && array.null_count() > 0)
      return arrow::Status::Invalid("column ", schema_->field(static_cast<int>(i))->name(), " is required but has ",
                                    array.null_count(), " nulls");
    if (c.optional) {  // a flat optional column: defined (1) or null (0)
      c.levels.assign(static_cast<size_t>(n), 1);
      if (array.null_count() > 0)
        for (int64_t r = 0; r < n; ++r) c.levels[static_cast<size_t>(r)] = array.IsValid(r) ? 1 : 0;
      levels = c.levels.data();
    }
    BEGIN_PARQUET_CATCH_EXCEPTIONS
    return group_->column(static_cast<int>(i))->WriteArrow(levels, nullptr, n, array, c.ctx.get(), c.optional);
    END_PARQUET_CATCH_EXCEPTIONS
  }

  // Waits until every queued array is encoded; the first encoding error, if any.
  arrow::Status Drain() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] {
      return queued_ == 0 && std::none_of(columns_.begin(), columns_.end(), [](const Column& c) { return c.running; });
    });
    return error_;
  }

  // Writes the open row group to the file.
  arrow::Status CloseGroup() {
    ARROW_RETURN_NOT_OK(Drain());
    if (!group_) return arrow::Status::OK();
    BEGIN_PARQUET_CATCH_EXCEPTIONS
    group_->Close();
    END_PARQUET_CATCH_EXCEPTIONS
    group_ = nullptr;
    return arrow::Status::OK();
  }

  std::shared_ptr<arrow::Schema> schema_;
  std::unique_ptr<parquet::ParquetFileWriter> file_;
  std::shared_ptr<parquet::ArrowWriterProperties> arrow_props_;
  const int64_t max_group_rows_;
  parquet::RowGroupWriter* group_ = nullptr;  // the open buffered row group, if any
  int64_t group_rows_ = 0;
  bool closed_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Column> columns_;
  size_t queued_ = 0;  // arrays queued or being encoded, all columns
  arrow::Status error_;
};

bool Flat(const arrow::Schema& schema) {
  return std::none_of(schema.fields().begin(), schema.fields().end(),
                      [](const auto& f) {
                        auto id = f->type()->id();
                        return arrow::is_nested(id) || id == arrow::Type::EXTENSION;
                      });
}

}  // namespace

arrow::Result<std::unique_ptr<ParquetFileWriter>> ParquetFileWriter::Open(
    const arrow::Schema& schema, arrow::MemoryPool* pool, std::shared_ptr<arrow::io::OutputStream> sink,
    std::shared_ptr<parquet::WriterProperties> props, std::shared_ptr<parquet::ArrowWriterProperties> arrow_props) {
  if (!Flat(schema) || schema.num_fields() == 0 || arrow_props->store_schema()) {
    ARROW_ASSIGN_OR_RAISE(auto w, parquet::arrow::FileWriter::Open(schema, pool, std::move(sink), std::move(props),
                                                                   std::move(arrow_props)));
    return std::make_unique<ArrowFileWriter>(std::move(w));
  }
  // The same Parquet schema and footer metadata Arrow's FileWriter::Open makes (field
  // ids from the fields' metadata; the schema's own metadata, no stored Arrow schema).
  std::shared_ptr<parquet::SchemaDescriptor> descr;
  ARROW_RETURN_NOT_OK(parquet::arrow::ToParquetSchema(&schema, *props, *arrow_props, &descr));
  auto root = std::static_pointer_cast<parquet::schema::GroupNode>(descr->schema_root());
  const int64_t max_rows = props->max_row_group_length();
  std::unique_ptr<parquet::ParquetFileWriter> file;
  BEGIN_PARQUET_CATCH_EXCEPTIONS
  file = parquet::ParquetFileWriter::Open(std::move(sink), root, std::move(props), schema.metadata());
  END_PARQUET_CATCH_EXCEPTIONS
  return std::make_unique<ColumnStreamWriter>(std::make_shared<arrow::Schema>(schema), std::move(file), pool,
                                              std::move(arrow_props), max_rows);
}

}  // namespace skade
