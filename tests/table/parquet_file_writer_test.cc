#include "skade/table/parquet_file_writer.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <arrow/util/key_value_metadata.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>
#include <parquet/statistics.h>

#include <random>
#include <string>

#include "testing/temp_dir.h"

namespace skade {
namespace {

// Arrow's Status and Result: ok, else the message.
MATCHER(ArrowOk, "is ok") {
  if (arg.ok()) return true;
  if constexpr (requires { arg.status(); }) {
    *result_listener << arg.status().ToString();
  } else {
    *result_listener << arg.ToString();
  }
  return false;
}

std::shared_ptr<arrow::Field> WithId(std::shared_ptr<arrow::Field> f, int id) {
  return f->WithMetadata(arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)}));
}

// Every kind of flat column a table has: required and optional, fixed and variable width.
std::shared_ptr<arrow::Schema> FlatSchema() {
  return arrow::schema({WithId(arrow::field("id", arrow::int64(), /*nullable=*/false), 1),
                        WithId(arrow::field("name", arrow::utf8()), 2),
                        WithId(arrow::field("price", arrow::float64()), 3),
                        WithId(arrow::field("at", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")), 4),
                        WithId(arrow::field("key", arrow::fixed_size_binary(16)), 5),
                        WithId(arrow::field("flag", arrow::boolean()), 6),
                        WithId(arrow::field("day", arrow::date32()), 7)});
}

// Rows [first, first + n), with nulls in every optional column and few distinct names.
std::shared_ptr<arrow::RecordBatch> Rows(int64_t first, int64_t n) {
  arrow::Int64Builder id;
  arrow::StringBuilder name;
  arrow::DoubleBuilder price;
  arrow::TimestampBuilder at(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), arrow::default_memory_pool());
  arrow::FixedSizeBinaryBuilder key(arrow::fixed_size_binary(16));
  arrow::BooleanBuilder flag;
  arrow::Date32Builder day;
  std::mt19937_64 rng(static_cast<uint64_t>(first));
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE((i % 7 == 0 ? name.AppendNull() : name.Append("name-" + std::to_string(i % 50))).ok());
    EXPECT_TRUE((i % 5 == 0 ? price.AppendNull() : price.Append(static_cast<double>(rng() % 100000) / 100)).ok());
    EXPECT_TRUE((i % 11 == 0 ? at.AppendNull() : at.Append(1700000000000000 + i)).ok());
    std::string k(16, static_cast<char>('a' + i % 26));
    EXPECT_TRUE((i % 13 == 0 ? key.AppendNull() : key.Append(k)).ok());
    EXPECT_TRUE((i % 3 == 0 ? flag.AppendNull() : flag.Append(i % 2 == 0)).ok());
    EXPECT_TRUE(day.Append(static_cast<int32_t>(19000 + i % 400)).ok());
  }
  return arrow::RecordBatch::Make(FlatSchema(), n,
                                  {id.Finish().ValueOrDie(), name.Finish().ValueOrDie(), price.Finish().ValueOrDie(),
                                   at.Finish().ValueOrDie(), key.Finish().ValueOrDie(), flag.Finish().ValueOrDie(),
                                   day.Finish().ValueOrDie()});
}

std::shared_ptr<parquet::WriterProperties> Props(int64_t max_group_rows) {
  return parquet::WriterProperties::Builder()
      .compression(parquet::Compression::ZSTD)
      ->max_row_group_length(max_group_rows)
      ->enable_statistics()
      ->build();
}

std::shared_ptr<parquet::ArrowWriterProperties> Threads(bool use_threads = true) {
  return parquet::ArrowWriterProperties::Builder().set_use_threads(use_threads)->build();
}

struct ReadBack {
  std::shared_ptr<arrow::Table> table;
  std::shared_ptr<parquet::FileMetaData> md;
};

ReadBack Read(const std::string& path) {
  auto file = arrow::io::ReadableFile::Open(path).ValueOrDie();
  auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool()).ValueOrDie();
  ReadBack r;
  r.md = reader->parquet_reader()->metadata();
  auto table = reader->ReadTable();
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (table.ok()) r.table = *table;
  return r;
}

// Each non-empty row group's column chunks lie in the file in column order (an empty
// group has no pages to place).
void ExpectChunksInColumnOrder(const parquet::FileMetaData& md) {
  for (int g = 0; g < md.num_row_groups(); ++g) {
    auto group = md.RowGroup(g);
    for (int c = 1; c < group->num_columns() && group->num_rows() > 0; ++c)
      EXPECT_LT(group->ColumnChunk(c - 1)->data_page_offset(), group->ColumnChunk(c)->data_page_offset())
          << "row group " << g << " column " << c;
  }
}

// The same calls, in the same order, on either writer: streamed batches into buffered
// row groups (one of them split by the row limit), then a table in row groups of 7000.
template <typename Writer>
void WriteAll(Writer& w, const std::vector<std::shared_ptr<arrow::RecordBatch>>& streamed,
              const std::shared_ptr<arrow::Table>& table) {
  ASSERT_TRUE(w.NewBufferedRowGroup().ok());
  for (size_t i = 0; i < streamed.size(); ++i) {
    if (i == 3) ASSERT_TRUE(w.NewBufferedRowGroup().ok());
    if constexpr (std::is_same_v<Writer, parquet::arrow::FileWriter>) {
      ASSERT_TRUE(w.WriteRecordBatch(*streamed[i]).ok());
    } else {
      ASSERT_THAT(w.WriteRecordBatch(streamed[i]), ArrowOk());
    }
  }
  ASSERT_TRUE(w.WriteTable(*table, 7000).ok());
  ASSERT_TRUE(w.Close().ok());
}

// The column streams write the file Arrow's FileWriter writes from the same calls: the
// same rows, Parquet schema (field ids too), row groups and statistics of every chunk,
// on the CPU pool and, without use_threads, on the caller's thread.
TEST(ParquetFileWriterTest, FlatColumnsWriteWhatArrowsWriterWrites) {
  for (bool use_threads : {true, false}) {
    SCOPED_TRACE(use_threads ? "use_threads" : "caller's thread");
    testing::TempDir dir;
    std::vector<std::shared_ptr<arrow::RecordBatch>> streamed;
    int64_t first = 0;
    for (int64_t n : {1, 999, 30000, 4, 25000, 0, 7}) {
      streamed.push_back(Rows(first, n));
      first += n;
    }
    auto table =
        arrow::Table::FromRecordBatches(FlatSchema(), {Rows(first, 9000), Rows(first + 9000, 8000)}).ValueOrDie();

    std::string ours = dir.path() + "/ours.parquet", arrows = dir.path() + "/arrow.parquet";
    {
      auto sink = arrow::io::FileOutputStream::Open(ours).ValueOrDie();
      auto w = ParquetFileWriter::Open(*FlatSchema(), arrow::default_memory_pool(), sink, Props(20000),
                                       Threads(use_threads));
      ASSERT_THAT(w, ArrowOk());
      WriteAll(**w, streamed, table);
      ASSERT_THAT(sink->Close(), ArrowOk());
    }
    {
      auto sink = arrow::io::FileOutputStream::Open(arrows).ValueOrDie();
      auto w = parquet::arrow::FileWriter::Open(*FlatSchema(), arrow::default_memory_pool(), sink, Props(20000),
                                                Threads(use_threads))
                   .ValueOrDie();
      WriteAll(*w, streamed, table);
      ASSERT_THAT(sink->Close(), ArrowOk());
    }
    ReadBack a = Read(ours), b = Read(arrows);
    ASSERT_EQ(a.table->num_rows(), first + 17000);
    auto all = streamed;
    for (const auto& batch : arrow::TableBatchReader(*table).ToRecordBatches().ValueOrDie()) all.push_back(batch);
    auto input = arrow::Table::FromRecordBatches(FlatSchema(), all).ValueOrDie();
    EXPECT_TRUE(a.table->Equals(*input, /*check_metadata=*/false));
    EXPECT_TRUE(a.table->Equals(*b.table)) << a.table->ToString();
    EXPECT_TRUE(a.md->schema()->Equals(*b.md->schema()));
    for (int c = 0; c < a.md->num_columns(); ++c)
      EXPECT_EQ(a.md->schema()->Column(c)->schema_node()->field_id(), c + 1);
    ASSERT_EQ(a.md->num_row_groups(), b.md->num_row_groups());
    ASSERT_GE(a.md->num_row_groups(), 5);  // two streamed groups, the row limit's split, the table's three
    for (int g = 0; g < a.md->num_row_groups(); ++g) {
      auto ga = a.md->RowGroup(g), gb = b.md->RowGroup(g);
      ASSERT_EQ(ga->num_rows(), gb->num_rows()) << "row group " << g;
      EXPECT_LE(ga->num_rows(), 20000);
      for (int c = 0; c < ga->num_columns(); ++c) {
        auto sa = ga->ColumnChunk(c)->statistics(), sb = gb->ColumnChunk(c)->statistics();
        ASSERT_TRUE(sa && sb) << "row group " << g << " column " << c;
        EXPECT_TRUE(sa->Equals(*sb)) << "row group " << g << " column " << c;
      }
    }
  }
}

// Batches longer than the slices columns are encoded in, in row groups of several
// slices each, give the rows in order and each column chunk the values and statistics
// Arrow's writer gives, with the chunks in column order. (Not the same bytes: a column
// whose dictionary outgrows its limit falls back to plain after the slice that crossed
// it, where Arrow's writer, given the whole batch, falls back after the batch.)
TEST(ParquetFileWriterTest, LongBatchesWriteWhatArrowsWriterWrites) {
  for (bool use_threads : {true, false}) {
    SCOPED_TRACE(use_threads ? "use_threads" : "caller's thread");
    testing::TempDir dir;
    const std::vector<std::shared_ptr<arrow::RecordBatch>> batches = {Rows(0, 150000), Rows(150000, 70001),
                                                                      Rows(220001, 200000)};
    auto write = [&](const std::string& path, bool ours) {
      auto sink = arrow::io::FileOutputStream::Open(path).ValueOrDie();
      if (ours) {
        auto w = ParquetFileWriter::Open(*FlatSchema(), arrow::default_memory_pool(), sink, Props(300000),
                                         Threads(use_threads));
        ASSERT_THAT(w, ArrowOk());
        for (const auto& b : batches) ASSERT_THAT((*w)->WriteRecordBatch(b), ArrowOk());
        ASSERT_THAT((*w)->Close(), ArrowOk());
      } else {
        auto w = parquet::arrow::FileWriter::Open(*FlatSchema(), arrow::default_memory_pool(), sink, Props(300000),
                                                  Threads(use_threads))
                     .ValueOrDie();
        ASSERT_TRUE(w->NewBufferedRowGroup().ok());
        ASSERT_TRUE(w->WriteRecordBatch(*batches[0]).ok());
        ASSERT_TRUE(w->WriteRecordBatch(*batches[1]).ok());
        ASSERT_TRUE(w->WriteRecordBatch(*batches[2]->Slice(0, 79999)).ok());  // the row limit's split
        ASSERT_TRUE(w->NewBufferedRowGroup().ok());
        ASSERT_TRUE(w->WriteRecordBatch(*batches[2]->Slice(79999)).ok());
        ASSERT_TRUE(w->Close().ok());
      }
      ASSERT_THAT(sink->Close(), ArrowOk());
    };
    std::string ours = dir.path() + "/ours.parquet", arrows = dir.path() + "/arrow.parquet";
    write(ours, true);
    write(arrows, false);
    ReadBack a = Read(ours), b = Read(arrows);
    auto input = arrow::Table::FromRecordBatches(FlatSchema(), batches).ValueOrDie();
    EXPECT_TRUE(a.table->Equals(*input, /*check_metadata=*/false));
    ASSERT_EQ(a.md->num_row_groups(), 2);
    ASSERT_EQ(b.md->num_row_groups(), 2);
    for (int g = 0; g < 2; ++g) {
      auto ga = a.md->RowGroup(g), gb = b.md->RowGroup(g);
      EXPECT_EQ(ga->num_rows(), gb->num_rows());
      for (int c = 0; c < ga->num_columns(); ++c) {
        auto ca = ga->ColumnChunk(c), cb = gb->ColumnChunk(c);
        EXPECT_EQ(ca->num_values(), cb->num_values()) << "row group " << g << " column " << c;
        EXPECT_TRUE(ca->statistics()->Equals(*cb->statistics())) << "row group " << g << " column " << c;
      }
    }
    ExpectChunksInColumnOrder(*a.md);
  }
}

// Random batch lengths (some empty, some longer than a slice), row-group limits and
// explicit row-group starts, on the pool and on the caller's thread: every row comes back
// once, in order, no row group passes the limit, and each group's chunks are in column order
// (an explicit start right after another leaves an empty group, as Arrow's writer does).
TEST(ParquetFileWriterTest, RandomBatchesComeBackInOrder) {
  std::mt19937_64 rng(20261206);
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    testing::TempDir dir;
    const bool use_threads = round % 3 != 2;
    const int64_t limit = std::uniform_int_distribution<int64_t>(1000, 250000)(rng);
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    int64_t rows = 0;
    const int n = std::uniform_int_distribution<int>(1, 7)(rng);
    for (int b = 0; b < n; ++b) {
      const int64_t len = b % 3 == 1 ? 0 : std::uniform_int_distribution<int64_t>(1, 150000)(rng);
      batches.push_back(Rows(rows, len));
      rows += len;
    }
    std::string path = dir.path() + "/random.parquet";
    {
      auto sink = arrow::io::FileOutputStream::Open(path).ValueOrDie();
      auto w = ParquetFileWriter::Open(*FlatSchema(), arrow::default_memory_pool(), sink, Props(limit),
                                       Threads(use_threads));
      ASSERT_THAT(w, ArrowOk());
      for (size_t b = 0; b < batches.size(); ++b) {
        if (rng() % 4 == 0) ASSERT_THAT((*w)->NewBufferedRowGroup(), ArrowOk());
        ASSERT_THAT((*w)->WriteRecordBatch(batches[b]), ArrowOk());
      }
      ASSERT_THAT((*w)->Close(), ArrowOk());
      ASSERT_THAT(sink->Close(), ArrowOk());
    }
    ReadBack r = Read(path);
    auto input = arrow::Table::FromRecordBatches(FlatSchema(), batches).ValueOrDie();
    ASSERT_EQ(r.table->num_rows(), rows);
    EXPECT_TRUE(r.table->Equals(*input, /*check_metadata=*/false));
    for (int g = 0; g < r.md->num_row_groups(); ++g) EXPECT_LE(r.md->RowGroup(g)->num_rows(), limit) << g;
    ExpectChunksInColumnOrder(*r.md);
  }
}

// A batch that does not fit the file is refused at once, naming the column; a required
// column with nulls is refused by its encoder, and the error reaches the caller.
TEST(ParquetFileWriterTest, BatchesThatDoNotFitAreRefused) {
  testing::TempDir dir;
  auto sink = arrow::io::FileOutputStream::Open(dir.path() + "/bad.parquet").ValueOrDie();
  auto w = ParquetFileWriter::Open(*FlatSchema(), arrow::default_memory_pool(), sink, Props(1 << 20), Threads());
  ASSERT_THAT(w, ArrowOk());
  auto good = Rows(0, 100);
  auto wrong_type = good->SetColumn(2, arrow::field("price", arrow::utf8()),
                                    arrow::MakeArrayOfNull(arrow::utf8(), 100).ValueOrDie())
                        .ValueOrDie();
  auto st = (*w)->WriteRecordBatch(wrong_type);
  EXPECT_TRUE(st.IsTypeError()) << st.ToString();
  EXPECT_NE(st.ToString().find("column price is string"), std::string::npos) << st.ToString();

  auto null_ids = good->SetColumn(0, arrow::field("id", arrow::int64()),
                                  arrow::MakeArrayOfNull(arrow::int64(), 100).ValueOrDie())
                      .ValueOrDie();
  ASSERT_THAT((*w)->WriteRecordBatch(good), ArrowOk());
  (void)(*w)->WriteRecordBatch(null_ids);  // encoded later: the error may come from the next call
  st = (*w)->NewBufferedRowGroup();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("column id is required but has 100 nulls"), std::string::npos) << st.ToString();
  EXPECT_FALSE((*w)->WriteRecordBatch(good).ok());  // the writer stays failed
  (void)(*w)->Close();                              // releases the file, no crash
}

// An output stream that fails once `limit` bytes are written (a full disk).
class FullDisk final : public arrow::io::OutputStream {
 public:
  explicit FullDisk(int64_t limit) : limit_(limit) {}
  arrow::Status Write(const void*, int64_t n) override {
    if (written_ + n > limit_) return arrow::Status::IOError("no space left on device");
    written_ += n;
    return arrow::Status::OK();
  }
  arrow::Status Close() override {
    closed_ = true;
    return arrow::Status::OK();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return written_; }

 private:
  int64_t limit_, written_ = 0;
  bool closed_ = false;
};

// Row groups reach the stream when they close: a write error there is returned by the
// call that closed it, and Close still returns instead of hanging.
TEST(ParquetFileWriterTest, AFailingStreamIsAnErrorNotAHang) {
  auto w = ParquetFileWriter::Open(*FlatSchema(), arrow::default_memory_pool(), std::make_shared<FullDisk>(64 << 10),
                                   Props(1 << 20), Threads());
  ASSERT_THAT(w, ArrowOk());
  auto table = arrow::Table::FromRecordBatches(FlatSchema(), {Rows(0, 50000)}).ValueOrDie();
  auto st = (*w)->WriteTable(*table, 50000);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("no space left on device"), std::string::npos) << st.ToString();
  (void)(*w)->Close();  // returns (the footer may or may not fit): no hang, no crash
}

// Nested columns go through Arrow's FileWriter: a struct column reads back as written.
TEST(ParquetFileWriterTest, NestedSchemasStillWrite) {
  testing::TempDir dir;
  auto inner = arrow::struct_({arrow::field("x", arrow::int32())});
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("s", inner)});
  arrow::Int64Builder ids;
  ASSERT_TRUE(ids.AppendValues({1, 2, 3}).ok());
  arrow::Int32Builder xs;
  ASSERT_TRUE(xs.Append(10).ok() && xs.AppendNull().ok() && xs.Append(30).ok());
  auto s = arrow::StructArray::Make({xs.Finish().ValueOrDie()}, {arrow::field("x", arrow::int32())}).ValueOrDie();
  auto batch = arrow::RecordBatch::Make(schema, 3, {ids.Finish().ValueOrDie(), s});
  std::string path = dir.path() + "/nested.parquet";
  auto sink = arrow::io::FileOutputStream::Open(path).ValueOrDie();
  auto w = ParquetFileWriter::Open(*schema, arrow::default_memory_pool(), sink, Props(1 << 20), Threads());
  ASSERT_THAT(w, ArrowOk());
  ASSERT_THAT((*w)->WriteRecordBatch(batch), ArrowOk());
  ASSERT_THAT((*w)->Close(), ArrowOk());
  ASSERT_THAT(sink->Close(), ArrowOk());
  ReadBack r = Read(path);
  auto expected = arrow::Table::FromRecordBatches(schema, {batch}).ValueOrDie();
  EXPECT_TRUE(r.table->Equals(*expected)) << r.table->ToString();
}

}  // namespace
}  // namespace skade
