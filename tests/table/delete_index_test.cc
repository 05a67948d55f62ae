// Equality delete key sets: which data rows a set of keys removes, through each of the
// probe's paths (a bitmap for dense integer keys, exact hashes for other one-column keys
// of up to 8 bytes, hashes checked column by column otherwise); nulls match nulls.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <fstream>
#include <optional>
#include <random>

#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/delete_index.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

std::shared_ptr<arrow::Array> Longs(const std::vector<std::optional<int64_t>>& v) {
  arrow::Int64Builder b;
  for (const auto& x : v) EXPECT_TRUE((x ? b.Append(*x) : b.AppendNull()).ok());
  return *b.Finish();
}

template <typename Builder>
std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& v) {
  Builder b;
  for (const auto& x : v) EXPECT_TRUE((x ? b.Append(*x) : b.AppendNull()).ok());
  return *b.Finish();
}

std::vector<bool> Marked(const EqualityProbe& probe, const std::vector<std::shared_ptr<arrow::Array>>& data,
                         std::vector<bool> out = {}) {
  if (out.empty()) out.assign(static_cast<size_t>(data[0]->length()), false);
  auto st = probe.Mark(data, &out);
  EXPECT_TRUE(st.has_value()) << st.error().ToString();
  return out;
}

TEST(EqualityProbe, DenseIntegerKeys) {
  auto probe = EqualityProbe::Make({Longs({5, 7, 1000000, -3, 7})});
  ASSERT_TRUE(probe.has_value());
  auto data = Longs({5, 6, 7, -3, std::nullopt, 1000000, 1000001, -4});
  EXPECT_EQ(Marked(**probe, {data}), (std::vector<bool>{true, false, true, true, false, true, false, false}));
}

TEST(EqualityProbe, NullKeyMatchesNullRows) {
  for (auto keys : {Longs({1, std::nullopt}), Longs({1, int64_t{1} << 50, std::nullopt})}) {  // bitmap, hashes
    auto probe = EqualityProbe::Make({keys});
    ASSERT_TRUE(probe.has_value());
    EXPECT_EQ(Marked(**probe, {Longs({std::nullopt, 1, 2})}), (std::vector<bool>{true, true, false}));
  }
}

TEST(EqualityProbe, SparseIntegerKeysUseExactHashes) {
  int64_t big = int64_t{1} << 40;
  auto probe = EqualityProbe::Make({Longs({0, big, -big * 1000, big})});
  ASSERT_TRUE(probe.has_value());
  auto data = Longs({big, big + 1, 0, -big * 1000, 1, std::nullopt});
  EXPECT_EQ(Marked(**probe, {data}), (std::vector<bool>{true, false, true, true, false, false}));
}

TEST(EqualityProbe, TwoColumnKeysCompareEveryColumn) {
  auto probe = EqualityProbe::Make({Longs({1, 1, 2, 1}),
                                    Strings<arrow::StringBuilder>({"a", std::nullopt, "b", "a"})});
  ASSERT_TRUE(probe.has_value());
  auto ids = Longs({1, 1, 1, 2, 2, 3, 1});
  auto names = Strings<arrow::StringBuilder>({"a", "b", std::nullopt, "b", "a", "a", ""});
  EXPECT_EQ(Marked(**probe, {ids, names}), (std::vector<bool>{true, false, true, true, false, false, false}));
}

TEST(EqualityProbe, DataOfAnotherLayoutIsCastToTheKeys) {
  auto probe = EqualityProbe::Make({Strings<arrow::StringBuilder>({"x", "yy", ""})});
  ASSERT_TRUE(probe.has_value());
  auto data = Strings<arrow::LargeStringBuilder>({"x", "y", "yy", "", std::nullopt});
  EXPECT_EQ(Marked(**probe, {data}), (std::vector<bool>{true, false, true, true, false}));
}

TEST(EqualityProbe, RowsAlreadyDeletedStayDeleted) {
  auto probe = EqualityProbe::Make({Longs({2})});
  ASSERT_TRUE(probe.has_value());
  EXPECT_EQ(Marked(**probe, {Longs({1, 2, 3})}, {true, false, false}), (std::vector<bool>{true, true, false}));
}

TEST(EqualityProbe, SlicedArraysReadFromTheirOffset) {
  auto keys = Longs({100, 1, 2, 3});
  auto probe = EqualityProbe::Make({keys->Slice(1)});  // 100 is not a key
  ASSERT_TRUE(probe.has_value());
  auto data = Longs({9, 9, 100, 2, 3})->Slice(2);
  EXPECT_EQ(Marked(**probe, {data}), (std::vector<bool>{false, true, true}));
}

std::vector<bool> MarkedAfter(const EqualityProbe& probe, const std::vector<std::shared_ptr<arrow::Array>>& data,
                              int64_t after_sequence) {
  std::vector<bool> out(static_cast<size_t>(data[0]->length()), false);
  auto st = probe.Mark(data, &out, after_sequence);
  EXPECT_TRUE(st.has_value()) << st.error().ToString();
  return out;
}

// With sequence numbers a key deletes only rows of data files older than the newest
// delete file that names it, on every path (bitmap, exact hashes, compared columns).
TEST(EqualityProbe, SequencesKeepEachKeysNewest) {
  int64_t big = int64_t{1} << 40;
  struct Case {
    std::vector<std::shared_ptr<arrow::Array>> keys, data;
  };
  std::vector<Case> cases{
      {{Longs({1, 2, 3, 2, std::nullopt})}, {Longs({1, 2, 3, 4, std::nullopt})}},                // bitmap
      {{Longs({big, 2 * big, 3 * big, 2 * big, std::nullopt})}, {Longs({big, 2 * big, 3 * big, 4, std::nullopt})}},
      {{Strings<arrow::StringBuilder>({"a", "b", "c", "b", std::nullopt})},
       {Strings<arrow::StringBuilder>({"a", "b", "c", "d", std::nullopt})}}};
  for (const auto& c : cases) {
    // Keys by file: "1" in sequence 5, "2" in 3 and again in 8, "3" in 6, null in 4.
    auto probe = EqualityProbe::Make(c.keys, {5, 3, 6, 8, 4});
    ASSERT_TRUE(probe.has_value()) << probe.error().ToString();
    EXPECT_EQ(MarkedAfter(**probe, c.data, 2), (std::vector<bool>{true, true, true, false, true}));
    EXPECT_EQ(MarkedAfter(**probe, c.data, 4), (std::vector<bool>{true, true, true, false, false}));
    EXPECT_EQ(MarkedAfter(**probe, c.data, 5), (std::vector<bool>{false, true, true, false, false}));
    EXPECT_EQ(MarkedAfter(**probe, c.data, 7), (std::vector<bool>{false, true, false, false, false}));
    EXPECT_EQ(MarkedAfter(**probe, c.data, 8), (std::vector<bool>(5, false)));
    EXPECT_EQ(Marked(**probe, c.data), (std::vector<bool>{true, true, true, false, true}));  // no threshold
  }
}

// Ranks are kept in 1, 2 or 4 bytes as the count of distinct sequences needs (up to 255,
// 65535, or more): each width, on every path, still deletes exactly the rows older than
// their key's newest file, a key named again later included.
TEST(EqualityProbe, ManyDistinctSequencesKeepTheirOrder) {
  for (int64_t n : {200, 300, 70000}) {
    std::vector<std::optional<int64_t>> dense, sparse;
    std::vector<std::optional<std::string>> text;
    std::vector<int64_t> sequences;
    for (int64_t k = 0; k < n; ++k) {
      dense.push_back(k);
      sparse.push_back(k << 40);
      text.push_back("k" + std::to_string(k));
      sequences.push_back(10 + 2 * k);
    }
    const size_t rows = static_cast<size_t>(n);
    std::vector<std::vector<std::shared_ptr<arrow::Array>>> data{
        {Longs(dense)}, {Longs(sparse)}, {Strings<arrow::StringBuilder>(text)}};
    dense.push_back(0);  // key 0 again, in the newest file of all
    sparse.push_back(0);
    text.push_back("k0");
    sequences.push_back(10 + 2 * n);
    std::vector<std::vector<std::shared_ptr<arrow::Array>>> keys{
        {Longs(dense)}, {Longs(sparse)}, {Strings<arrow::StringBuilder>(text)}};
    for (size_t path = 0; path < keys.size(); ++path) {
      auto probe = EqualityProbe::Make(keys[path], sequences);
      ASSERT_TRUE(probe.has_value()) << probe.error().ToString();
      for (int64_t after : {int64_t{9}, 10 + n, 10 + 2 * n - 1, 10 + 2 * n}) {
        std::vector<bool> want(rows);
        for (size_t k = 0; k < rows; ++k)
          want[k] = (k == 0 ? 10 + 2 * n : 10 + 2 * static_cast<int64_t>(k)) > after;
        EXPECT_EQ(MarkedAfter(**probe, data[path], after), want) << "n " << n << " path " << path << " after " << after;
      }
    }
  }
}

TEST(EqualityProbe, UncomparableTypeIsAnError) {
  arrow::ListBuilder lb(arrow::default_memory_pool(), std::make_shared<arrow::Int64Builder>());
  ASSERT_TRUE(lb.Append().ok());
  auto probe = EqualityProbe::Make({*lb.Finish()});
  ASSERT_FALSE(probe.has_value());
  EXPECT_NE(probe.error().message.find("cannot compare"), std::string::npos) << probe.error().message;
}

// Writes `batch` as a zstd Parquet file at `path`, then overwrites the column chunk of
// column `spoiled` (a leaf index) with garbage: reading that column fails.
void WriteSpoiled(const std::string& path, const std::shared_ptr<arrow::RecordBatch>& batch, int spoiled) {
  auto table = *arrow::Table::FromRecordBatches({batch});
  auto sink = *arrow::io::FileOutputStream::Open(path);
  auto props = parquet::WriterProperties::Builder().compression(parquet::Compression::ZSTD)->build();
  ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink, 1 << 20, props).ok());
  ASSERT_TRUE(sink->Close().ok());
  auto chunk = parquet::ParquetFileReader::OpenFile(path)->metadata()->RowGroup(0)->ColumnChunk(spoiled);
  int64_t start = chunk->has_dictionary_page() ? chunk->dictionary_page_offset() : chunk->data_page_offset();
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(start);
  std::string garbage(static_cast<size_t>(chunk->total_compressed_size()), '\xff');
  f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
}

// Delete files may carry whole rows (Iceberg allows any columns beside the keys, and
// position deletes may add the deleted `row`): the loader reads the key columns alone,
// so a column it must not decode is spoiled here, and the deletes still apply.
TEST(DeleteLoader, ReadsOnlyTheKeyColumnsOfWholeRowDeleteFiles) {
  testing::TempDir dir;
  auto schema = std::make_shared<const Schema>(
      0, std::vector<NestedField>{NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                                  NestedField{2, "v", false, Type::Primitive(TypeId::kString), ""}});
  auto id = ToArrowField(schema->fields()[0]);
  auto v = ToArrowField(schema->fields()[1]);
  std::string eq_path = dir.path() + "/eq.parquet";
  WriteSpoiled(eq_path, arrow::RecordBatch::Make(arrow::schema({id, v}), 3,
                                                 {Longs({2, 4, 9}), Strings<arrow::StringBuilder>({"a", "b", "c"})}),
               1);
  std::string data_path = FileUri(dir.path() + "/data.parquet");
  auto path_field = arrow::field("file_path", arrow::utf8(), false,
                                 arrow::key_value_metadata({kFieldIdKey}, {std::to_string(kDeleteFilePathId)}));
  auto pos_field = arrow::field("pos", arrow::int64(), false,
                                arrow::key_value_metadata({kFieldIdKey}, {std::to_string(kDeletePosId)}));
  auto row_field = arrow::field("row", arrow::struct_({v}), true,
                                arrow::key_value_metadata({kFieldIdKey}, {"2147483544"}));
  auto rows = *arrow::StructArray::Make({Strings<arrow::StringBuilder>({"x", "y"})}, arrow::FieldVector{v});
  std::string pos_path = dir.path() + "/pos.parquet";
  WriteSpoiled(pos_path, arrow::RecordBatch::Make(arrow::schema({path_field, pos_field, row_field}), 2,
                                                  {Strings<arrow::StringBuilder>({data_path, data_path}),
                                                   Longs({0, 5}), rows}),
               2);

  DataFile eq_file;
  eq_file.content = FileContent::kEqualityDeletes;
  eq_file.file_path = FileUri(eq_path);
  eq_file.record_count = 3;
  eq_file.equality_ids = {1};
  DataFile pos_file;
  pos_file.content = FileContent::kPositionDeletes;
  pos_file.file_path = FileUri(pos_path);
  pos_file.record_count = 2;
  DeleteFileEntry eq{std::make_shared<const DataFile>(std::move(eq_file)), 2};
  DeleteFileEntry pos{std::make_shared<const DataFile>(std::move(pos_file)), 2};
  DataFile data;
  data.file_path = data_path;
  auto io = MakeLocalFileIO();
  DeleteLoader loader(io.get(), schema);
  auto deleted = loader.Load(data, 1, {eq, pos});
  ASSERT_TRUE(deleted.has_value()) << deleted.error().ToString();
  auto batch = arrow::RecordBatch::Make(arrow::schema({id, v}), 6,
                                        {Longs({1, 2, 3, 4, 5, 6}), Strings<arrow::StringBuilder>({"", "", "", "", "", ""})});
  auto flags = DeletedFlags(*deleted, *batch, *schema, [](int64_t r) { return r; });
  ASSERT_TRUE(flags.has_value()) << flags.error().ToString();
  EXPECT_EQ(*flags, (std::vector<bool>{true, true, false, true, false, true}));  // pos 0 and 5; ids 2 and 4

  // Files that lack the columns they must have are named, with the column.
  std::string keyless = dir.path() + "/keyless.parquet";
  WriteSpoiled(keyless, arrow::RecordBatch::Make(arrow::schema({v}), 1, {Strings<arrow::StringBuilder>({"a"})}), 0);
  DataFile keyless_file = *eq.file;
  keyless_file.file_path = FileUri(keyless);
  keyless_file.record_count = 1;
  DataFile posless_file = *pos.file;
  posless_file.file_path = FileUri(keyless);
  posless_file.record_count = 1;
  for (const auto& [bad, what] : {std::pair{keyless_file, "lacks equality column id"},
                                  std::pair{posless_file, "lacks file_path/pos"}}) {
    DeleteLoader fresh(io.get(), schema);
    auto loaded = fresh.Load(data, 1, {DeleteFileEntry{std::make_shared<const DataFile>(bad), 2}});
    ASSERT_FALSE(loaded.has_value()) << what;
    EXPECT_EQ(loaded.error().kind, ErrorKind::kCorrupt);
    EXPECT_NE(loaded.error().message.find(what), std::string::npos) << loaded.error().message;
    EXPECT_NE(loaded.error().message.find("keyless.parquet"), std::string::npos) << loaded.error().message;
  }
}

// A batch of every column kind KeepRows handles itself (strings, large strings, fixed
// width, fixed-size binary) or through Arrow (booleans, lists), with nulls.
std::shared_ptr<arrow::RecordBatch> MixedBatch(std::mt19937_64& rng, int64_t n) {
  arrow::StringBuilder s;
  arrow::LargeStringBuilder ls;
  arrow::Int64Builder l;
  arrow::Int32Builder i;
  arrow::DoubleBuilder d;
  arrow::FixedSizeBinaryBuilder fb(arrow::fixed_size_binary(3));
  arrow::BooleanBuilder b;
  arrow::ListBuilder lb(arrow::default_memory_pool(), std::make_shared<arrow::Int64Builder>());
  auto& lv = static_cast<arrow::Int64Builder&>(*lb.value_builder());
  for (int64_t r = 0; r < n; ++r) {
    bool null = rng() % 7 == 0;
    std::string text(rng() % 12, static_cast<char>('a' + r % 26));
    EXPECT_TRUE((null ? s.AppendNull() : s.Append(text)).ok());
    EXPECT_TRUE((null ? ls.AppendNull() : ls.Append(text + "!")).ok());
    EXPECT_TRUE(l.Append(static_cast<int64_t>(rng())).ok());
    EXPECT_TRUE((null ? i.AppendNull() : i.Append(static_cast<int32_t>(r))).ok());
    EXPECT_TRUE(d.Append(static_cast<double>(r) / 3).ok());
    EXPECT_TRUE(fb.Append(std::string(3, static_cast<char>('A' + r % 20))).ok());
    EXPECT_TRUE((null ? b.AppendNull() : b.Append(r % 3 == 0)).ok());
    EXPECT_TRUE(lb.Append().ok());
    EXPECT_TRUE(lv.Append(r).ok());
  }
  arrow::ArrayVector cols = {*s.Finish(), *ls.Finish(), *l.Finish(), *i.Finish(), *d.Finish(), *fb.Finish(),
                             *b.Finish(), *lb.Finish()};
  arrow::FieldVector fields;
  for (size_t c = 0; c < cols.size(); ++c) fields.push_back(arrow::field("c" + std::to_string(c), cols[c]->type()));
  return arrow::RecordBatch::Make(arrow::schema(fields), n, cols);
}

// Keeps all but about one row in `every` (1: all, 0: none).
std::shared_ptr<arrow::BooleanArray> Mask(std::mt19937_64& rng, int64_t rows, int every, int64_t* kept) {
  arrow::BooleanBuilder mb;
  *kept = 0;
  for (int64_t r = 0; r < rows; ++r) {
    bool keep = every > 0 && (every == 1 || rng() % static_cast<uint64_t>(every) != 0);
    *kept += keep;
    EXPECT_TRUE(mb.Append(keep).ok());
  }
  return std::static_pointer_cast<arrow::BooleanArray>(*mb.Finish());
}

// KeepRows against Arrow's own filter: every column kind, sliced inputs, and masks from
// sparse deletes to keeping nothing or everything.
TEST(KeepRows, EqualsArrowFilterForEveryColumnKind) {
  std::mt19937_64 rng(7);
  auto whole = MixedBatch(rng, 3000);
  InitArrowCompute();
  for (int every : {1000, 50, 3, 2, 1, 0}) {
    for (const auto& batch : {whole, whole->Slice(17, 2000)}) {
      int64_t kept;
      auto mask = Mask(rng, batch->num_rows(), every, &kept);
      auto got = KeepRows(batch, *mask, kept);
      ASSERT_TRUE(got.has_value()) << got.error().ToString();
      auto want = arrow::compute::Filter(batch, mask);
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      ASSERT_TRUE((*got)->ValidateFull().ok()) << (*got)->ValidateFull().ToString();
      EXPECT_EQ((*got)->num_rows(), kept);
      EXPECT_TRUE((*got)->Equals(*want->record_batch())) << "every " << every << ", offset " << batch->column(0)->offset();
    }
  }
}

// In place, as the scan keeps the rows of the slices of one decoded row group: each
// slice's survivors move to the front of its own range of the shared buffers, and no
// slice's result is disturbed by keeping the rows of another.
TEST(KeepRows, InPlaceSlicesOfSharedBuffersMatchArrowFilter) {
  std::mt19937_64 rng(11);
  auto whole = MixedBatch(rng, 4000);
  InitArrowCompute();
  std::vector<std::shared_ptr<arrow::RecordBatch>> slices, wants, results(4);
  std::vector<std::shared_ptr<arrow::BooleanArray>> masks;
  std::vector<int64_t> kepts(4);
  for (int k = 0; k < 4; ++k) {
    slices.push_back(whole->Slice(k * 1000, 1000));
    masks.push_back(Mask(rng, 1000, k == 2 ? 2 : 10, &kepts[static_cast<size_t>(k)]));
    auto want = arrow::compute::Filter(slices.back(), masks.back());  // fresh copies, before any move
    ASSERT_TRUE(want.ok());
    wants.push_back(want->record_batch());
  }
  for (size_t k : {2, 0, 3, 1}) {  // any order
    auto got = KeepRows(slices[k], *masks[k], kepts[k], /*in_place=*/true);
    ASSERT_TRUE(got.has_value()) << got.error().ToString();
    EXPECT_EQ((*got)->column(2)->data()->buffers[1], slices[k]->column(2)->data()->buffers[1]) << "not in place";
    results[k] = *got;
  }
  for (size_t k = 0; k < 4; ++k) {
    ASSERT_TRUE(results[k]->ValidateFull().ok()) << results[k]->ValidateFull().ToString();
    EXPECT_TRUE(results[k]->Equals(*wants[k])) << "slice " << k;
  }
}

}  // namespace
}  // namespace skade
