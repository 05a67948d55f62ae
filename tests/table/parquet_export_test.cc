#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <algorithm>
#include <string>

#include "skade/table/data_writer.h"
#include "testing/matchers.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsOk;

std::shared_ptr<arrow::Schema> Schema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("kind", arrow::utf8())});
}

// Rows [first, first + n): a distinct id each, and one of three kinds.
std::shared_ptr<arrow::RecordBatch> Rows(int64_t first, int64_t n) {
  arrow::Int64Builder ids;
  arrow::StringBuilder kinds;
  const char* names[] = {"red", "green", "blue"};
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(ids.Append(i * 7919 % 1000003).ok());
    EXPECT_TRUE(kinds.Append(names[i % 3]).ok());
  }
  return arrow::RecordBatch::Make(Schema(), n, {ids.Finish().ValueOrDie(), kinds.Finish().ValueOrDie()});
}

std::shared_ptr<arrow::Table> ReadBack(const std::string& path, std::shared_ptr<parquet::FileMetaData>* md) {
  auto file = arrow::io::ReadableFile::Open(path).ValueOrDie();
  auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool()).ValueOrDie();
  *md = reader->parquet_reader()->metadata();
  std::shared_ptr<arrow::Table> table;
  EXPECT_TRUE(reader->ReadTable(&table).ok());
  return table;
}

bool UsesDictionary(const parquet::ColumnChunkMetaData& c) {
  const auto& e = c.encodings();
  return std::find(e.begin(), e.end(), parquet::Encoding::RLE_DICTIONARY) != e.end();
}

// The rows come back in order across batches and row groups (closed by input bytes);
// the distinct ids are stored plain, the three kinds as a dictionary, all zstd.
TEST(ParquetExportTest, WritesEveryRowWithEncodingsPickedFromTheFirstRows) {
  testing::TempDir dir;
  std::string path = dir.path() + "/out.parquet";
  auto out = ParquetExport::Open(path, Schema(), /*row_group_bytes=*/256 << 10);
  ASSERT_THAT(out, IsOk());
  arrow::RecordBatchVector written;
  for (int64_t first = 0; first < 100000; first += 1000) written.push_back(Rows(first, 1000));
  for (const auto& b : written) ASSERT_THAT((*out)->Write(b), IsOk());
  ASSERT_THAT((*out)->Close(), IsOk());

  std::shared_ptr<parquet::FileMetaData> md;
  auto back = ReadBack(path, &md);
  auto want = arrow::Table::FromRecordBatches(Schema(), written).ValueOrDie();
  EXPECT_TRUE(back->Equals(*want, /*check_metadata=*/false));
  ASSERT_GT(md->num_row_groups(), 1);  // 1.6 MB of input in row groups of 256 KiB
  for (int rg = 0; rg < md->num_row_groups(); ++rg) {
    auto group = md->RowGroup(rg);
    EXPECT_FALSE(UsesDictionary(*group->ColumnChunk(0))) << "row group " << rg;
    EXPECT_TRUE(UsesDictionary(*group->ColumnChunk(1))) << "row group " << rg;
    EXPECT_EQ(group->ColumnChunk(0)->compression(), parquet::Compression::ZSTD);
  }
}

// Fewer rows than the encodings are picked from, and none at all: still a whole file
// with the schema.
TEST(ParquetExportTest, FewOrNoRowsMakeAWholeFile) {
  testing::TempDir dir;
  for (int64_t n : {int64_t{0}, int64_t{5}}) {
    std::string path = dir.path() + "/out-" + std::to_string(n) + ".parquet";
    auto out = ParquetExport::Open(path, Schema(), 64 << 20);
    ASSERT_THAT(out, IsOk());
    if (n > 0) ASSERT_THAT((*out)->Write(Rows(0, n)), IsOk());
    ASSERT_THAT((*out)->Close(), IsOk());
    std::shared_ptr<parquet::FileMetaData> md;
    auto back = ReadBack(path, &md);
    EXPECT_EQ(back->num_rows(), n);
    EXPECT_TRUE(back->schema()->Equals(*Schema(), /*check_metadata=*/false)) << back->schema()->ToString();
  }
}

TEST(ParquetExportTest, AnOutputThatCannotBeCreatedIsNamed) {
  testing::TempDir dir;
  std::string path = dir.path() + "/missing/out.parquet";
  auto out = ParquetExport::Open(path, Schema(), 64 << 20);
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().ToString().find(path), std::string::npos) << out.error().ToString();
}

}  // namespace
}  // namespace skade
