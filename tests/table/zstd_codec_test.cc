#include "skade/table/zstd_codec.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/compression.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/column_reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <numeric>
#include <thread>

#include "skade/common/thread_clock.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

std::shared_ptr<arrow::Table> Numbers(int64_t n) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(ids.Append(i * 7919 % 100003).ok());
    EXPECT_TRUE(names.Append("name-" + std::to_string(i % 977)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  return arrow::Table::Make(schema, {ids.Finish().ValueOrDie(), names.Finish().ValueOrDie()});
}

// Parquet, written and read by libparquet on one fresh thread, reaches zstd through this
// process's codec: the thread makes one compression and one decompression context for
// hundreds of pages (Arrow's own codec makes one per page and none counted here). With
// TimeZstdDecompression on, the CPU time spent decompressing is counted while reading,
// within the read's CPU time, and not while writing.
TEST(ZstdCodecTest, ParquetPagesShareOneContextPerThread) {
  testing::TempDir dir;
  std::string path = dir.path() + "/pages.parquet";
  auto table = Numbers(200000);
  int64_t made = -1, pages = 0, writing_nanos = -1, reading_nanos = -1, read_cpu_nanos = -1;
  std::shared_ptr<arrow::Table> back;
  TimeZstdDecompression(true);
  std::thread worker([&] {
    int64_t before = ZstdContextsMade();
    int64_t nanos = ZstdDecompressNanos();
    auto props = parquet::WriterProperties::Builder()
                     .compression(arrow::Compression::ZSTD)
                     ->data_pagesize(4096)
                     ->disable_dictionary()
                     ->build();
    auto sink = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink, 1 << 20, props).ok());
    ASSERT_TRUE(sink->Close().ok());
    writing_nanos = ZstdDecompressNanos() - nanos;
    auto file = parquet::ParquetFileReader::OpenFile(path);
    for (int c = 0; c < 2; ++c) {
      auto pager = file->RowGroup(0)->GetColumnPageReader(c);
      while (pager->NextPage()) ++pages;
    }
    auto opened = parquet::arrow::OpenFile(arrow::io::ReadableFile::Open(path).ValueOrDie(),
                                           arrow::default_memory_pool());
    ASSERT_TRUE(opened.ok());
    (*opened)->set_use_threads(false);
    nanos = ZstdDecompressNanos();
    const int64_t start = ThreadCpuNanos();
    auto read = (*opened)->ReadTable();
    read_cpu_nanos = ThreadCpuNanos() - start;
    reading_nanos = ZstdDecompressNanos() - nanos;
    ASSERT_TRUE(read.ok()) << read.status();
    back = *read;
    made = ZstdContextsMade() - before;
  });
  worker.join();
  TimeZstdDecompression(false);
  EXPECT_GT(pages, 100);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(writing_nanos, 0);
  EXPECT_GT(reading_nanos, 0);
  EXPECT_LE(reading_nanos, read_cpu_nanos);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->Equals(*table));
  // The file says zstd, so any reader decodes it.
  auto md = parquet::ReadMetaData(arrow::io::ReadableFile::Open(path).ValueOrDie());
  EXPECT_EQ(md->RowGroup(0)->ColumnChunk(0)->compression(), arrow::Compression::ZSTD);
}

TEST(ZstdCodecTest, RoundTripsOnManyThreadsAtTheRequestedLevel) {
  auto codec = arrow::util::Codec::Create(arrow::Compression::ZSTD, 7).ValueOrDie();
  EXPECT_EQ(codec->compression_level(), 7);
  EXPECT_EQ(codec->compression_type(), arrow::Compression::ZSTD);
  std::vector<uint8_t> input(1 << 20);
  std::iota(input.begin(), input.end(), 0);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        std::vector<uint8_t> packed(codec->MaxCompressedLen(input.size(), input.data()));
        auto n = codec->Compress(input.size(), input.data(), packed.size(), packed.data());
        if (!n.ok() || *n >= static_cast<int64_t>(input.size())) return;
        std::vector<uint8_t> out(input.size());
        auto m = codec->Decompress(*n, packed.data(), out.size(), out.data());
        if (!m.ok() || out != input) return;
      }
      ++good;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 4);
}

TEST(ZstdCodecTest, CorruptOrMisSizedPagesAreErrors) {
  auto codec = arrow::util::Codec::Create(arrow::Compression::ZSTD).ValueOrDie();
  std::string text(5000, 'x');
  std::vector<uint8_t> packed(codec->MaxCompressedLen(text.size(), nullptr));
  int64_t n = codec->Compress(text.size(), reinterpret_cast<const uint8_t*>(text.data()), packed.size(),
                              packed.data())
                  .ValueOrDie();
  std::vector<uint8_t> out(8000);
  auto wrong_size = codec->Decompress(n, packed.data(), 8000, out.data());
  ASSERT_FALSE(wrong_size.ok());
  EXPECT_NE(wrong_size.status().message().find("expected 8000"), std::string::npos) << wrong_size.status();
  packed[n / 2] ^= 0xff;
  packed[1] ^= 0xff;  // the magic number
  auto corrupt = codec->Decompress(n, packed.data(), text.size(), out.data());
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find("zstd decompression failed"), std::string::npos) << corrupt.status();
}

// Other codecs are still Arrow's.
TEST(ZstdCodecTest, OtherCodecsComeFromArrow) {
  for (auto type : {arrow::Compression::SNAPPY, arrow::Compression::GZIP, arrow::Compression::LZ4}) {
    auto codec = arrow::util::Codec::Create(type).ValueOrDie();
    EXPECT_EQ(codec->compression_type(), type);
    std::string text = "a page a page a page a page";
    std::vector<uint8_t> packed(codec->MaxCompressedLen(text.size(), nullptr));
    int64_t n = codec->Compress(text.size(), reinterpret_cast<const uint8_t*>(text.data()), packed.size(),
                                packed.data())
                    .ValueOrDie();
    std::string out(text.size(), '\0');
    ASSERT_TRUE(codec->Decompress(n, packed.data(), out.size(), reinterpret_cast<uint8_t*>(out.data())).ok());
    EXPECT_EQ(out, text);
  }
}

}  // namespace
}  // namespace skade
