#include "skade/table/flat_columns_internal.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/memory.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/column_page.h>
#include <parquet/column_reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>

#include <cstring>
#include <optional>
#include <random>
#include <string>

#include "testing/matchers.h"

namespace skade {
namespace {

using skade::testing::IsError;
using skade::testing::IsOk;

struct Column {
  std::shared_ptr<arrow::DataType> type;
  bool nullable = true;
  double null_chance = 0;
  int distinct = 0;  // values drawn from this many (0: unbounded)
};

// A random array of `type`: nulls at `null_chance` (where nullable), values from a
// small domain when `distinct` > 0 (so dictionaries form), strings of 0-80 bytes.
std::shared_ptr<arrow::Array> RandomArray(const Column& c, int64_t n, std::mt19937_64& rng) {
  std::bernoulli_distribution is_null(c.nullable ? c.null_chance : 0);
  auto draw = [&] {
    return c.distinct > 0 ? static_cast<int64_t>(rng() % c.distinct) : static_cast<int64_t>(rng());
  };
  std::unique_ptr<arrow::ArrayBuilder> builder;
  EXPECT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), c.type, &builder).ok());
  for (int64_t i = 0; i < n; ++i) {
    if (is_null(rng)) {
      EXPECT_TRUE(builder->AppendNull().ok());
      continue;
    }
    int64_t v = draw();
    arrow::Status st;
    switch (c.type->id()) {
      case arrow::Type::INT32:
        st = static_cast<arrow::Int32Builder&>(*builder).Append(static_cast<int32_t>(v));
        break;
      case arrow::Type::DATE32:
        st = static_cast<arrow::Date32Builder&>(*builder).Append(static_cast<int32_t>(v % 100000));
        break;
      case arrow::Type::INT64: st = static_cast<arrow::Int64Builder&>(*builder).Append(v); break;
      case arrow::Type::TIMESTAMP: st = static_cast<arrow::TimestampBuilder&>(*builder).Append(v >> 8); break;
      case arrow::Type::TIME64:
        st = static_cast<arrow::Time64Builder&>(*builder).Append((v & 0x7FFFFFFFFFFF) % 86400000000LL);
        break;
      case arrow::Type::FLOAT:
        st = static_cast<arrow::FloatBuilder&>(*builder).Append(static_cast<float>(v % 1000003) / 7);
        break;
      case arrow::Type::DOUBLE:
        st = static_cast<arrow::DoubleBuilder&>(*builder).Append(static_cast<double>(v) / 3);
        break;
      case arrow::Type::STRING:
      case arrow::Type::BINARY: {
        std::mt19937_64 value_rng(static_cast<uint64_t>(v));  // the same value, the same bytes
        std::string s(value_rng() % 81, '\0');
        for (auto& ch : s) ch = static_cast<char>('a' + value_rng() % 26);
        st = static_cast<arrow::BaseBinaryBuilder<arrow::BinaryType>&>(*builder).Append(s);
        break;
      }
      default: ADD_FAILURE() << "no generator for " << c.type->ToString();
    }
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(builder->Finish(&out).ok());
  return out;
}

std::shared_ptr<arrow::Buffer> WriteParquet(const arrow::Table& table,
                                            const std::shared_ptr<parquet::WriterProperties>& props) {
  auto sink = arrow::io::BufferOutputStream::Create().ValueOrDie();
  auto st = parquet::arrow::WriteTable(table, arrow::default_memory_pool(), sink, 1 << 20, props,
                                       parquet::ArrowWriterProperties::Builder().store_schema()->build());
  EXPECT_TRUE(st.ok()) << st.ToString();
  return sink->Finish().ValueOrDie();
}

std::unique_ptr<parquet::ParquetFileReader> Open(const std::shared_ptr<arrow::Buffer>& file) {
  return parquet::ParquetFileReader::Open(std::make_shared<arrow::io::BufferReader>(file));
}

// Whether an array's buffers hold together (offsets within their data, and so on);
// strings are looked at as bytes (Arrow's reader does not check UTF-8 either).
::testing::AssertionResult Sound(const arrow::Array& a) {
  auto st = a.type_id() == arrow::Type::STRING ? a.View(arrow::binary()).ValueOrDie()->ValidateFull()
                                                : a.ValidateFull();
  if (st.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << st.ToString();
}

// Every row of leaf `leaf` of row group `rg`, read `batch` rows at a time (varying
// when `rng` is given); checks the reader gives nothing past the chunk's end.
Result<std::shared_ptr<arrow::Array>> ReadFlat(parquet::ParquetFileReader& file, int rg, int leaf,
                                               const std::shared_ptr<arrow::DataType>& type, int64_t batch,
                                               std::mt19937_64* rng = nullptr,
                                               std::shared_ptr<const std::vector<uint8_t>> wanted = nullptr) {
  FlatColumnReader reader(file, rg, leaf, type, arrow::default_memory_pool(), "test", wanted);
  arrow::ArrayVector parts;
  // With `wanted`, batches stand for the rows asked for, however many of them are wanted.
  for (int64_t left = wanted ? static_cast<int64_t>(wanted->size()) : -1; left != 0;) {
    int64_t n = rng ? 1 + static_cast<int64_t>((*rng)() % static_cast<uint64_t>(batch)) : batch;
    SKADE_ASSIGN_OR_RETURN(auto part, reader.Next(n));
    if (wanted) {
      const int64_t from = static_cast<int64_t>(wanted->size()) - left, to = from + std::min(left, n);
      if (part->length() != to - from - std::count(wanted->begin() + from, wanted->begin() + to, 0))
        return Internal("a batch of other than the wanted rows asked for");
      left -= to - from;
    } else if (part->length() == 0) {
      break;
    }
    if (part->length() > n) return Internal("a batch longer than asked for");
    EXPECT_TRUE(Sound(*part));
    parts.push_back(part);
  }
  SKADE_ASSIGN_OR_RETURN(auto again, reader.Next(batch));
  if (again->length() != 0) return Internal("rows past the chunk's end");
  if (parts.empty()) return arrow::MakeEmptyArray(type).ValueOrDie();
  return arrow::Concatenate(parts).ValueOrDie();
}

// Which of n rows a selective read wants: none, all, scattered at some density, or in
// long runs (so whole pages hold none).
std::vector<uint8_t> RandomWanted(int64_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> wanted(static_cast<size_t>(n));
  const int shape = static_cast<int>(rng() % 5);
  const double densities[] = {0.01, 0.5, 0.99};
  const double density = densities[rng() % 3];
  bool on = rng() % 2;
  int64_t left = 0;
  for (auto& w : wanted) {
    switch (shape) {
      case 0: w = 0; break;
      case 1: w = 1; break;
      case 2: w = std::bernoulli_distribution(density)(rng); break;
      default:
        if (left-- <= 0) {
          on = !on;
          left = static_cast<int64_t>(rng() % 6000);
        }
        w = on;
    }
  }
  return wanted;
}

// Arrow's filter of `all` by `wanted`: what ReadSelected must give.
std::shared_ptr<arrow::Array> Wanted(const std::shared_ptr<arrow::Array>& all, const std::vector<uint8_t>& wanted) {
  arrow::BooleanBuilder b;
  for (uint8_t w : wanted) EXPECT_TRUE(b.Append(w != 0).ok());
  auto mask = b.Finish().ValueOrDie();
  return arrow::compute::Filter(all, mask).ValueOrDie().make_array();
}

const std::vector<std::shared_ptr<arrow::DataType>>& FlatTypes() {
  static const std::vector<std::shared_ptr<arrow::DataType>> types = {
      arrow::int32(),   arrow::int64(),  arrow::float32(), arrow::float64(), arrow::date32(),
      arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), arrow::time64(arrow::TimeUnit::MICRO),
      arrow::utf8(),    arrow::binary()};
  return types;
}

// Random tables written with random page sizes, dictionary limits (so chunks turn from
// dictionary to PLAIN part way), page versions and codecs: every flat column reads back
// as Arrow's reader reads it, in batches of random sizes.
TEST(FlatColumnReader, DecodesWhatArrowsReaderDecodes) {
  std::mt19937_64 rng(20261206);
  const double null_chances[] = {0, 0, 0.05, 0.5, 1.0};
  const int distincts[] = {0, 1, 7, 300, 100000};
  const parquet::Compression::type codecs[] = {parquet::Compression::UNCOMPRESSED, parquet::Compression::ZSTD,
                                               parquet::Compression::SNAPPY};
  int64_t pages_skipped = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    arrow::FieldVector fields;
    arrow::ArrayVector arrays;
    const int64_t rows = round % 10 == 0 ? static_cast<int64_t>(rng() % 3) : static_cast<int64_t>(rng() % 40000);
    for (const auto& type : FlatTypes()) {
      Column c{type, rng() % 4 != 0, null_chances[rng() % 5], distincts[rng() % 5]};
      fields.push_back(arrow::field(type->ToString() + std::to_string(fields.size()), type, c.nullable));
      arrays.push_back(RandomArray(c, rows, rng));
    }
    auto table = arrow::Table::Make(arrow::schema(fields), arrays, rows);
    parquet::WriterProperties::Builder b;
    b.compression(codecs[rng() % 3]);
    b.data_pagesize(static_cast<int64_t>(64 + rng() % 20000));
    b.dictionary_pagesize_limit(rng() % 2 ? static_cast<int64_t>(64 + rng() % 4000) : 1 << 20);
    b.write_batch_size(static_cast<int64_t>(1 + rng() % 3000));
    b.max_row_group_length(static_cast<int64_t>(1 + rng() % 30000));
    b.data_page_version(rng() % 2 ? parquet::ParquetDataPageVersion::V2 : parquet::ParquetDataPageVersion::V1);
    if (rng() % 4 == 0) b.disable_dictionary();
    auto file = WriteParquet(*table, b.build());
    auto pq = Open(file);
    auto made = parquet::arrow::FileReader::Make(arrow::default_memory_pool(), Open(file));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    std::unique_ptr<parquet::arrow::FileReader> arrow_reader = std::move(made).ValueOrDie();
    const auto& md = *pq->metadata();
    for (int rg = 0; rg < md.num_row_groups(); ++rg) {
      for (int leaf = 0; leaf < md.num_columns(); ++leaf) {
        SCOPED_TRACE("row group " + std::to_string(rg) + ", " + fields[leaf]->ToString());
        const auto& type = fields[leaf]->type();
        ASSERT_TRUE(ReadsFlatColumn(md, rg, leaf, *type));
        auto expected = arrow_reader->ReadRowGroup(rg, {leaf});
        ASSERT_TRUE(expected.ok()) << expected.status().ToString();
        auto want = arrow::Concatenate((*expected)->column(0)->chunks()).ValueOrDie();
        auto got = ReadFlat(*pq, rg, leaf, type, 1 + static_cast<int64_t>(rng() % 5000), &rng);
        ASSERT_THAT(got, IsOk());
        ASSERT_EQ((*got)->length(), md.RowGroup(rg)->num_rows());
        EXPECT_TRUE((*got)->Equals(*want)) << (*got)->Diff(*want);
        // The same chunk read for some of its rows only.
        auto wanted = std::make_shared<std::vector<uint8_t>>(RandomWanted(md.RowGroup(rg)->num_rows(), rng));
        auto some = ReadFlat(*pq, rg, leaf, type, 1 + static_cast<int64_t>(rng() % 5000), &rng, wanted);
        ASSERT_THAT(some, IsOk());
        auto want_some = Wanted(want, *wanted);
        EXPECT_TRUE((*some)->Equals(*want_some)) << (*some)->Diff(*want_some);
        FlatColumnReader whole(*pq, rg, leaf, type, arrow::default_memory_pool(), "test", wanted);
        ASSERT_THAT(whole.Next(md.RowGroup(rg)->num_rows()), IsOk());
        pages_skipped += whole.pages_skipped();
      }
    }
  }
  EXPECT_GT(pages_skipped, 100);  // pages holding no wanted row were passed over
}

// A selective read skips exactly the data pages that hold no wanted row, whatever their
// encoding, and decodes the others.
TEST(FlatColumnReader, SelectiveReadSkipsThePagesWithoutWantedRows) {
  std::mt19937_64 rng(3);
  const int64_t rows = 20000;
  auto table = arrow::Table::Make(arrow::schema({arrow::field("i", arrow::int64()), arrow::field("s", arrow::utf8())}),
                                  {RandomArray({arrow::int64(), true, 0.1, 0}, rows, rng),
                                   RandomArray({arrow::utf8(), true, 0.1, 30}, rows, rng)},
                                  rows);
  auto props = parquet::WriterProperties::Builder().data_pagesize(1000)->write_batch_size(500)->build();
  auto file = WriteParquet(*table, props);
  auto pq = Open(file);
  for (int leaf = 0; leaf < 2; ++leaf) {
    SCOPED_TRACE(table->schema()->field(leaf)->name());
    // The page boundaries, from a read of every page.
    auto pages = pq->RowGroup(0)->GetColumnPageReader(leaf);
    std::vector<int64_t> starts;
    int64_t at = 0;
    while (auto page = pages->NextPage()) {
      if (page->type() == parquet::PageType::DICTIONARY_PAGE) continue;
      starts.push_back(at);
      at += static_cast<const parquet::DataPage&>(*page).num_values();
    }
    ASSERT_EQ(at, rows);
    ASSERT_GT(starts.size(), 10u);
    // One row wanted in every third page.
    std::vector<uint8_t> wanted(rows, 0);
    int64_t want_pages = 0;
    for (size_t p = 0; p < starts.size(); p += 3, ++want_pages) wanted[static_cast<size_t>(starts[p])] = 1;
    auto shared = std::make_shared<const std::vector<uint8_t>>(wanted);
    FlatColumnReader reader(*pq, 0, leaf, table->schema()->field(leaf)->type(), arrow::default_memory_pool(), "test",
                            shared);
    auto got = reader.Next(rows);
    ASSERT_THAT(got, IsOk());
    EXPECT_EQ(reader.pages_skipped(), static_cast<int64_t>(starts.size()) - want_pages);
    auto all = arrow::Concatenate(table->column(leaf)->chunks()).ValueOrDie();
    EXPECT_TRUE((*got)->Equals(*Wanted(all, wanted)));
  }
}

// The same reader over a row group whose columns are wanted in batches: what the scan's
// streamed path reads, columns cut at the same rows.
TEST(FlatColumnReader, BatchReaderCutsEveryColumnAtTheSameRows) {
  std::mt19937_64 rng(7);
  const int64_t rows = 10007;
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("a", arrow::int64()), arrow::field("s", arrow::utf8())}),
      {RandomArray({arrow::int64(), true, 0.1, 0}, rows, rng), RandomArray({arrow::utf8(), true, 0.1, 20}, rows, rng)},
      rows);
  auto file = WriteParquet(*table, parquet::WriterProperties::Builder().data_pagesize(4000)->build());
  auto read = [&](std::shared_ptr<const std::vector<uint8_t>> wanted) {
    auto batches = MakeFlatBatchReader(std::shared_ptr(Open(file)), 0, {0, 1}, table->schema()->fields(), 1000,
                                       arrow::default_memory_pool(), "test", std::move(wanted));
    arrow::RecordBatchVector got;
    for (;;) {
      std::shared_ptr<arrow::RecordBatch> batch;
      EXPECT_TRUE(batches->ReadNext(&batch).ok());
      if (!batch) break;
      got.push_back(batch);
    }
    return got;
  };
  auto got = read(nullptr);
  ASSERT_EQ(got.size(), 11u);
  EXPECT_EQ(got.back()->num_rows(), 7);
  auto joined = arrow::Table::FromRecordBatches(got).ValueOrDie();
  EXPECT_TRUE(joined->Equals(*table));
  // With rows wanted (none of batches 2 to 4): a batch per 1000 rows still, each of
  // their wanted rows.
  auto wanted = std::make_shared<std::vector<uint8_t>>(RandomWanted(rows, rng));
  std::fill(wanted->begin() + 2000, wanted->begin() + 5000, 0);
  got = read(wanted);
  ASSERT_EQ(got.size(), 11u);
  for (size_t b = 0; b < got.size(); ++b) {
    const auto from = wanted->begin() + static_cast<int64_t>(b) * 1000;
    const auto to = b + 1 == got.size() ? wanted->end() : from + 1000;
    EXPECT_EQ(got[b]->num_rows(), to - from - std::count(from, to, 0)) << "batch " << b;
  }
  for (size_t c = 0; c < 2; ++c) {
    auto column = arrow::Concatenate(arrow::Table::FromRecordBatches(got).ValueOrDie()->column(c)->chunks());
    auto all = arrow::Concatenate(table->column(c)->chunks()).ValueOrDie();
    EXPECT_TRUE(column.ValueOrDie()->Equals(*Wanted(all, *wanted)));
  }
}

// Whether every data page of a chunk is dictionary-encoded, by its encoding statistics.
bool DictionaryThroughout(const parquet::FileMetaData& md, int rg, int leaf) {
  bool data = false, all = true;
  const auto stats = md.RowGroup(rg)->ColumnChunk(leaf)->encoding_stats();  // a copy: the chunk is a temporary
  for (const auto& e : stats) {
    if (e.page_type != parquet::PageType::DATA_PAGE && e.page_type != parquet::PageType::DATA_PAGE_V2) continue;
    data = true;
    all &= e.encoding == parquet::Encoding::RLE_DICTIONARY || e.encoding == parquet::Encoding::PLAIN_DICTIONARY;
  }
  return data && all;
}

// A string chunk kept as a dictionary: batches of random sizes, each dictionary<int32>
// over the one array of the chunk's dictionary page, which read densely are the rows
// Arrow's reader gives; a chunk that turns PLAIN part way is refused, naming it.
TEST(FlatColumnReader, KeepDictionaryGivesIndicesIntoTheChunksDictionary) {
  std::mt19937_64 rng(1207);
  int kept = 0, refused = 0;
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const int64_t rows = round % 10 == 0 ? static_cast<int64_t>(rng() % 3) : static_cast<int64_t>(rng() % 30000);
    const double null_chances[] = {0, 0.1, 1.0};
    const int distincts[] = {1, 7, 300, 5000};
    arrow::FieldVector fields;
    arrow::ArrayVector arrays;
    for (const auto& type : {arrow::utf8(), arrow::binary()}) {
      Column c{type, rng() % 4 != 0, null_chances[rng() % 3], distincts[rng() % 4]};
      fields.push_back(arrow::field("c" + std::to_string(fields.size()), type, c.nullable));
      arrays.push_back(RandomArray(c, rows, rng));
    }
    auto table = arrow::Table::Make(arrow::schema(fields), arrays, rows);
    parquet::WriterProperties::Builder b;
    b.data_pagesize(static_cast<int64_t>(64 + rng() % 20000));
    b.dictionary_pagesize_limit(rng() % 3 == 0 ? static_cast<int64_t>(64 + rng() % 4000) : 1 << 22);
    b.max_row_group_length(static_cast<int64_t>(1 + rng() % 20000));
    b.data_page_version(rng() % 2 ? parquet::ParquetDataPageVersion::V2 : parquet::ParquetDataPageVersion::V1);
    auto file = WriteParquet(*table, b.build());
    auto pq = Open(file);
    auto arrow_reader = parquet::arrow::FileReader::Make(arrow::default_memory_pool(), Open(file)).ValueOrDie();
    const auto& md = *pq->metadata();
    for (int rg = 0; rg < md.num_row_groups(); ++rg) {
      for (int leaf = 0; leaf < md.num_columns(); ++leaf) {
        SCOPED_TRACE("row group " + std::to_string(rg) + ", column " + std::to_string(leaf));
        const auto& type = fields[leaf]->type();
        auto want = arrow::Concatenate(arrow_reader->ReadRowGroup(rg, {leaf}).ValueOrDie()->column(0)->chunks())
                        .ValueOrDie();
        FlatColumnReader reader(*pq, rg, leaf, type, arrow::default_memory_pool(), "test");
        reader.KeepDictionary();
        const bool throughout = DictionaryThroughout(md, rg, leaf);
        arrow::ArrayVector dense;
        std::shared_ptr<arrow::Array> dictionary;
        std::optional<Error> error;
        for (;;) {
          auto part = reader.Next(1 + static_cast<int64_t>(rng() % 4000));
          if (!part) {
            error = part.error();
            break;
          }
          if ((*part)->length() == 0) break;
          ASSERT_TRUE((*part)->type()->Equals(*arrow::dictionary(arrow::int32(), type))) << (*part)->type()->ToString();
          ASSERT_TRUE((*part)->ValidateFull().ok());
          const auto& d = static_cast<const arrow::DictionaryArray&>(**part);
          if (dictionary) EXPECT_EQ(d.dictionary()->data().get(), dictionary->data().get()) << "one for the chunk";
          dictionary = d.dictionary();
          dense.push_back(arrow::compute::Take(d.dictionary(), d.indices()).ValueOrDie().make_array());
        }
        if (error) {
          ++refused;
          EXPECT_FALSE(throughout) << error->message;
          EXPECT_EQ(error->kind, ErrorKind::kCorrupt);
          EXPECT_THAT(error->message, ::testing::HasSubstr("PLAIN data page"));
          continue;
        }
        ++kept;
        auto got = dense.empty() ? arrow::MakeEmptyArray(type).ValueOrDie() : arrow::Concatenate(dense).ValueOrDie();
        EXPECT_TRUE(got->Equals(*want)) << got->Diff(*want);
      }
    }
  }
  EXPECT_GT(kept, 20);
  EXPECT_GT(refused, 0);
}

// What the reader leaves to Arrow's: nested, repeated, boolean, decimal and fixed-size
// columns, other encodings, types it would have to convert, and dictionary-encoded
// strings whose decoded size the file does not state.
TEST(FlatColumnReader, LeavesToArrowWhatItDoesNotRead) {
  std::mt19937_64 rng(3);
  const int64_t rows = 200;
  auto ints = RandomArray({arrow::int64(), true, 0.1, 5}, rows, rng);
  auto strings = RandomArray({arrow::utf8(), true, 0.1, 5}, rows, rng);
  auto nested = arrow::StructArray::Make({ints}, {arrow::field("x", arrow::int64())}).ValueOrDie();
  auto lists = arrow::MakeArrayOfNull(arrow::list(arrow::int64()), rows).ValueOrDie();
  auto bools = arrow::MakeArrayOfNull(arrow::boolean(), rows).ValueOrDie();
  auto decimals = arrow::MakeArrayOfNull(arrow::decimal128(10, 2), rows).ValueOrDie();
  auto fixed = arrow::MakeArrayOfNull(arrow::fixed_size_binary(16), rows).ValueOrDie();
  auto millis = arrow::MakeArrayOfNull(arrow::timestamp(arrow::TimeUnit::MILLI), rows).ValueOrDie();
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("nested", nested->type()), arrow::field("lists", lists->type()),
                     arrow::field("bools", arrow::boolean()), arrow::field("decimals", decimals->type()),
                     arrow::field("fixed", fixed->type()), arrow::field("millis", millis->type()),
                     arrow::field("delta", arrow::int64()), arrow::field("ints", arrow::int64()),
                     arrow::field("strings", arrow::utf8())}),
      {nested, lists, bools, decimals, fixed, millis, ints, ints, strings}, rows);
  auto props = parquet::WriterProperties::Builder()
                   .disable_dictionary("delta")
                   ->encoding("delta", parquet::Encoding::DELTA_BINARY_PACKED)
                   ->build();
  auto file = WriteParquet(*table, props);
  auto pq = Open(file);
  const auto& md = *pq->metadata();
  ASSERT_EQ(md.num_columns(), 9);
  EXPECT_FALSE(ReadsFlatColumn(md, 0, 0, *arrow::int64()));                                // a struct's child
  EXPECT_FALSE(ReadsFlatColumn(md, 0, 1, *arrow::int64()));                                // a list's element
  EXPECT_FALSE(ReadsFlatColumn(md, 0, 2, *arrow::boolean()));                              // booleans
  EXPECT_FALSE(ReadsFlatColumn(md, 0, 3, *arrow::decimal128(10, 2)));                      // decimals
  EXPECT_FALSE(ReadsFlatColumn(md, 0, 4, *arrow::fixed_size_binary(16)));                  // fixed-size binary
  EXPECT_FALSE(ReadsFlatColumn(md, 0, 5, *arrow::timestamp(arrow::TimeUnit::MICRO)));      // millis, as micros
  EXPECT_TRUE(ReadsFlatColumn(md, 0, 5, *arrow::timestamp(arrow::TimeUnit::MILLI)));
  EXPECT_FALSE(ReadsFlatColumn(md, 0, 6, *arrow::int64()));                                // DELTA_BINARY_PACKED
  EXPECT_FALSE(ReadsFlatColumn(md, 0, 7, *arrow::int32()));                                // INT64 as int32
  EXPECT_TRUE(ReadsFlatColumn(md, 0, 7, *arrow::int64()));
  EXPECT_TRUE(ReadsFlatColumn(md, 0, 8, *arrow::utf8()));
  // Without size statistics a dictionary's strings have no stated decoded size.
  auto no_sizes = WriteParquet(*table, parquet::WriterProperties::Builder()
                                           .set_size_statistics_level(parquet::SizeStatisticsLevel::None)
                                           ->build());
  EXPECT_FALSE(ReadsFlatColumn(*Open(no_sizes)->metadata(), 0, 8, *arrow::utf8()));
  EXPECT_TRUE(ReadsFlatColumn(*Open(no_sizes)->metadata(), 0, 7, *arrow::int64()));
}

// Bytes of the pages overwritten at random: every read ends in an error naming the
// column, or in arrays that validate; none crashes or reads out of bounds.
TEST(FlatColumnReader, DamagedPagesFailCleanly) {
  std::mt19937_64 rng(11);
  const int64_t rows = 3000;
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("i", arrow::int64()), arrow::field("s", arrow::utf8()),
                     arrow::field("d", arrow::utf8()), arrow::field("f", arrow::float64())}),
      {RandomArray({arrow::int64(), true, 0.2, 50}, rows, rng),
       RandomArray({arrow::utf8(), true, 0.2, 0}, rows, rng),
       RandomArray({arrow::utf8(), true, 0.2, 40}, rows, rng),
       RandomArray({arrow::float64(), true, 0.2, 0}, rows, rng)},
      rows);
  auto props = parquet::WriterProperties::Builder()
                   .compression(parquet::Compression::UNCOMPRESSED)
                   ->data_pagesize(2000)
                   ->build();
  auto good = WriteParquet(*table, props);
  auto good_metadata = Open(good)->metadata();
  uint32_t footer = 0;
  std::memcpy(&footer, good->data() + good->size() - 8, 4);
  const int64_t data_begin = 4, data_end = good->size() - 8 - footer;  // between "PAR1" and the footer
  int errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto bad = arrow::AllocateBuffer(good->size()).ValueOrDie();
    std::memcpy(bad->mutable_data(), good->data(), static_cast<size_t>(good->size()));
    for (int k = 0; k < 1 + trial % 4; ++k) {
      int64_t at = data_begin + static_cast<int64_t>(rng() % static_cast<uint64_t>(data_end - data_begin));
      bad->mutable_data()[at] = static_cast<uint8_t>(rng());
    }
    std::shared_ptr<arrow::Buffer> damaged = std::move(bad);
    auto pq = parquet::ParquetFileReader::Open(std::make_shared<arrow::io::BufferReader>(damaged),
                                               parquet::default_reader_properties(), good_metadata);
    for (int leaf = 0; leaf < 4; ++leaf) {
      const auto& type = table->schema()->field(leaf)->type();
      Result<std::shared_ptr<arrow::Array>> got;
      if (trial % 2 == 0) {
        got = ReadFlat(*pq, 0, leaf, type, 700);
      } else {  // for some rows only
        auto wanted = std::make_shared<std::vector<uint8_t>>(RandomWanted(rows, rng));
        got = ReadFlat(*pq, 0, leaf, type, 700, nullptr, std::move(wanted));
      }
      if (!got) {
        ++errors;
        EXPECT_THAT(got, IsError(ErrorKind::kCorrupt));
        EXPECT_THAT(got.error().message, ::testing::HasSubstr("column " + table->schema()->field(leaf)->name()));
      } else {
        EXPECT_TRUE(Sound(**got));
      }
    }
  }
  EXPECT_GT(errors, 20);
}

}  // namespace
}  // namespace skade
