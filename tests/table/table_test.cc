#include "skade/table/table.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include "skade/io/file_io.h"
#include "skade/table/data_writer.h"
#include "skade/table/manifest_io.h"
#include "skade/table/scan.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/row_eval.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;
using testing::Row;

std::shared_ptr<arrow::Array> Arr(const std::shared_ptr<arrow::DataType>& t, const std::string& json) {
  return arrow::json::ArrayFromJSONString(t, json).ValueOrDie();
}

std::vector<std::string> Sorted(const std::vector<Row>& rows, const std::vector<NestedField>& fields) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(testing::RowToString(r, fields));
  std::sort(out.begin(), out.end());
  return out;
}

class TableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    ASSERT_THAT(cat_->CreateNamespace("t"), IsOk());
  }
  std::unique_ptr<Table> Create(const std::string& name, const Schema& schema, const std::string& partition = "",
                                std::map<std::string, std::string> props = {}) {
    PartitionSpec spec;
    if (!partition.empty()) {
      auto s = ParsePartitionSpec(partition, schema);
      EXPECT_THAT(s, IsOk());
      spec = *s;
    }
    auto created = cat_->CreateTable({"t", name}, schema, spec, props);
    EXPECT_THAT(created, IsOk());
    return std::move(*Table::Load(*cat_, {"t", name}));
  }
  std::vector<Row> ScanAll(Table& t, TableScan scan) {
    auto table = scan.ToTable();
    EXPECT_THAT(table, IsOk());
    auto plan = scan.Plan();
    std::vector<NestedField> fields;
    for (int id : plan->projected_ids) fields.push_back(*plan->schema->FindField(id));
    return testing::FromArrow(**table, fields);
  }
  testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
};

TEST_F(TableTest, EveryTypeRoundTrips) {
  testing::RandomData data(7);
  for (int round = 0; round < 5; ++round) {
    Schema schema = data.RandomSchema(12, /*nested=*/true);
    auto t = Create("all" + std::to_string(round), schema);
    std::vector<Row> rows;
    for (int i = 0; i < 300; ++i) rows.push_back(data.RandomRow(schema, 0.2));
    ASSERT_THAT(t->Append(testing::ToArrow(schema, rows)), IsOk());
    auto got = ScanAll(*t, t->NewScan());
    EXPECT_EQ(Sorted(got, schema.fields()), Sorted(rows, schema.fields())) << "schema " << Type::Struct(schema.fields())->ToString();
  }
}

TEST_F(TableTest, EachTransformPartitionsAndPrunes) {
  Schema schema = *ParseSchemaSpec(
      "id:long!, name:string, ts:timestamptz, d:date, country:string, amount:decimal(9,2), n:int");
  // Each spec with a filter on its source column that selects a few partitions.
  std::pair<const char*, const char*> specs[] = {
      {"country", "country = 'SE'"},
      {"bucket(8,id)", "id = 1000003"},
      {"truncate(2,name)", "name = 'ab'"},
      {"year(ts)", "ts < '2023-06-01T00:00:00Z'"},
      {"month(ts)", "ts >= '2024-01-01T00:00:00Z'"},
      {"day(d)", "d = '2022-01-14'"},
      {"hour(ts)", "ts > '2024-02-01T00:00:00Z'"},
      {"truncate(10,n)", "n <= -20"},
      {"truncate(100,amount)", "amount > 5"},
      {"day(ts), bucket(4,id), country", "id = 1000003 and country = 'SE'"}};
  testing::RandomData data(11);
  int k = 0;
  for (auto [spec, filter] : specs) {
    auto t = Create("p" + std::to_string(k++), schema, spec);
    std::vector<Row> rows;
    for (int i = 0; i < 400; ++i) rows.push_back(data.RandomRow(schema, 0.1));
    ASSERT_THAT(t->Append(testing::ToArrow(schema, rows)), IsOk()) << spec;
    EXPECT_EQ(Sorted(ScanAll(*t, t->NewScan()), schema.fields()), Sorted(rows, schema.fields())) << spec;
    // An equality filter on the partition source prunes files for identity, bucket, truncate.
    TableScan scan = t->NewScan().Filter(filter);
    auto plan = scan.Plan();
    ASSERT_THAT(plan, IsOk());
    auto want = ScanAll(*t, std::move(t->NewScan().Filter(filter)));
    std::vector<Row> expected;
    auto bound = plan->filter;
    for (const auto& r : rows)
      if (auto keep = testing::EvalRow(*bound, schema, r); keep && *keep) expected.push_back(r);
    EXPECT_EQ(Sorted(want, schema.fields()), Sorted(expected, schema.fields())) << spec << " " << filter;
    EXPECT_GT(plan->stats->files_total, 1) << spec;
    EXPECT_LT(plan->stats->files_planned, plan->stats->files_total) << spec;
  }
}

// A filter on identity partition columns is decided per file by its partition values:
// proven predicates drop out of the row filter (the column need not be read), a null
// partition value keeps its predicate (three-valued logic under NOT), and dictionary
// encoded strings (few distinct values, nulls, many row groups) come out dense and equal.
TEST_F(TableTest, IdentityPartitionDecidesResidualFilter) {
  Schema schema = *ParseSchemaSpec("id:long!, country:string, n:int, tag:string, blob:binary");
  auto t = Create("resid", schema, "country, n", {{"write.parquet.row-group-limit", "1000"}});
  const char* countries[] = {"SE", "NO", nullptr};
  const char* tags[] = {"alpha", "", "bravo-charlie", nullptr, "delta"};
  std::vector<Row> rows;
  for (int64_t i = 0; i < 9000; ++i) {
    auto str = [](const char* v) { return v ? testing::Cell{false, Value{std::string(v)}, {}} : testing::Cell{true, {}, {}}; };
    rows.push_back({testing::Cell{false, Value{i}, {}}, str(countries[i % 3]),
                    testing::Cell{false, Value{static_cast<int32_t>(i % 2)}, {}}, str(tags[(i / 7) % 5]),
                    str(tags[(i / 3) % 5])});
  }
  ASSERT_THAT(t->Append(testing::ToArrow(schema, rows)), IsOk());
  {  // the string columns are dictionary-encoded, so the scans below take the dictionary path
    auto plan = t->NewScan().Plan();
    ASSERT_THAT(plan, IsOk());
    auto reader = parquet::ParquetFileReader::OpenFile(LocalPath(plan->tasks.at(0).file.file_path));
    auto md = reader->metadata();
    ASSERT_GT(md->num_row_groups(), 1);
    for (int leaf : {3, 4}) {
      auto chunk = md->RowGroup(0)->ColumnChunk(leaf);
      const auto& encodings = chunk->encodings();
      EXPECT_NE(std::find(encodings.begin(), encodings.end(), parquet::Encoding::RLE_DICTIONARY), encodings.end());
    }
  }
  // filter -> what the residual of a file with country = 'SE' (or null) must be.
  struct Case {
    const char* filter;
    expr::Op se, null_country;
  };
  Case cases[] = {
      {"country = 'SE'", expr::Op::kTrue, expr::Op::kEq},
      {"country = 'SE' and id > 4000", expr::Op::kGt, expr::Op::kAnd},
      {"not (country = 'NO')", expr::Op::kTrue, expr::Op::kNot},
      {"country is null or n = 1", expr::Op::kTrue, expr::Op::kTrue},
      {"country != 'NO' and n in (0, 1) and tag = 'delta'", expr::Op::kEq, expr::Op::kAnd},
      {"id < 100 or tag is null", expr::Op::kOr, expr::Op::kOr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.filter);
    auto plan = t->NewScan().Filter(c.filter).Plan();
    ASSERT_THAT(plan, IsOk());
    for (const auto& task : plan->tasks) {
      ASSERT_TRUE(task.residual);
      const Value& country = task.file.partition[0];
      if (IsNull(country)) {
        EXPECT_EQ(task.residual->op, c.null_country);
      } else if (std::get<std::string>(country) == "SE") {
        EXPECT_EQ(task.residual->op, c.se);
      }
    }
    std::vector<Row> expected;
    for (const auto& r : rows)
      if (auto keep = testing::EvalRow(*plan->filter, schema, r); keep && *keep) expected.push_back(r);
    for (int parallelism : {0, 1}) {
      ScanPlan run = *plan;
      run.parallelism = parallelism;
      run.stats = std::make_shared<ScanStats>();
      auto reader = TableScan::Read(run, &cat_->io());
      ASSERT_THAT(reader, IsOk());
      auto got = (*reader)->ToTable();
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_TRUE((*got)->schema()->field(3)->type()->Equals(arrow::utf8()));
      EXPECT_TRUE((*got)->schema()->field(4)->type()->Equals(arrow::binary()));
      EXPECT_EQ(Sorted(testing::FromArrow(**got, schema.fields()), schema.fields()), Sorted(expected, schema.fields()));
    }
  }
}

TEST_F(TableTest, TargetFileSizeRollsFiles) {
  Schema schema = *ParseSchemaSpec("id:long!, payload:string");
  auto t = Create("big", schema, "", {{"write.target-file-size-bytes", "65536"}});
  std::vector<Row> rows;
  testing::RandomData data(3);
  for (int i = 0; i < 20000; ++i) {
    Row r(2);
    r[0].value = Value{static_cast<int64_t>(i)};
    std::string payload(40, ' ');
    for (auto& ch : payload) ch = "0123456789abcdef"[data.Uniform(0, 15)];  // incompressible
    r[1].value = Value{payload};
    rows.push_back(r);
  }
  auto res = t->Append(testing::ToArrow(schema, rows));
  ASSERT_THAT(res, IsOk());
  EXPECT_GE(res->added_files.size(), 4u);
  int64_t total = 0;
  for (const auto& f : res->added_files) {
    total += f.record_count;
    EXPECT_LT(f.file_size_in_bytes, 65536 * 3);
  }
  EXPECT_EQ(total, 20000);
  EXPECT_EQ(ScanAll(*t, t->NewScan()).size(), 20000u);
}

// A column whose values are close to random bits is stored uncompressed (zstd would save
// a few percent and cost every reader its decompression); ids and steady values stay
// zstd. The table property sets the saving a column must reach: 0 compresses every one.
TEST_F(TableTest, NearlyRandomColumnsAreStoredUncompressed) {
  Schema schema = *ParseSchemaSpec("id:long!, noise:double, steady:double");
  std::vector<Row> rows;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> noise(0, 1);
  for (int i = 0; i < 20000; ++i) {
    Row r(3);
    r[0].value = Value{static_cast<int64_t>(i)};
    r[1].value = Value{noise(rng)};
    r[2].value = Value{static_cast<double>(i / 10) * 0.5};
    rows.push_back(r);
  }
  auto data = testing::ToArrow(schema, rows);
  for (const char* min_saving : {"", "0"}) {
    SCOPED_TRACE(std::string("min saving '") + min_saving + "'");
    std::map<std::string, std::string> props;
    if (*min_saving) props["skade.write.parquet.compression-min-saving-percent"] = min_saving;
    auto t = Create(std::string("codecs") + min_saving, schema, "", props);
    auto res = t->Append(data);
    ASSERT_THAT(res, IsOk());
    ASSERT_EQ(res->added_files.size(), 1u);
    auto md = parquet::ParquetFileReader::OpenFile(LocalPath(res->added_files[0].file_path))->metadata();
    auto chunk = [&](int c) { return md->RowGroup(0)->ColumnChunk(c)->compression(); };
    EXPECT_EQ(chunk(0), parquet::Compression::ZSTD);
    EXPECT_EQ(chunk(1), *min_saving ? parquet::Compression::ZSTD : parquet::Compression::UNCOMPRESSED);
    EXPECT_EQ(chunk(2), parquet::Compression::ZSTD);
    EXPECT_EQ(Sorted(ScanAll(*t, t->NewScan()), schema.fields()), Sorted(rows, schema.fields()));
  }
}

// Whether a column is dictionary encoded follows from its distinct values, estimated
// from a file's first rows: 20,000 prices in 60,000 rows get a dictionary (though most
// of the first rows differ), unique values, strings whose dictionary would pass 256 KiB
// and unique values beside one that repeats (a 0 in 30% of the rows) do not.
TEST_F(TableTest, DictionaryWhereTheDistinctValuesFitItsPage) {
  Schema schema = *ParseSchemaSpec("id:long!, price:double, unique:double, label:string, skewed:double");
  std::vector<Row> rows;
  std::mt19937_64 rng(9);
  for (int i = 0; i < 60000; ++i) {
    Row r(5);
    r[0].value = Value{static_cast<int64_t>(i)};
    r[1].value = Value{static_cast<double>(rng() % 20000) / 100};
    r[2].value = Value{static_cast<double>(rng()) / 7};
    r[3].value = Value{"a label long enough to fill the page " + std::to_string(rng() % 30000)};
    r[4].value = Value{rng() % 10 < 3 ? 0.0 : static_cast<double>(rng()) / 3};
    rows.push_back(r);
  }
  auto t = Create("dicts", schema, "", {});
  auto res = t->Append(testing::ToArrow(schema, rows));
  ASSERT_THAT(res, IsOk());
  ASSERT_EQ(res->added_files.size(), 1u);
  auto md = parquet::ParquetFileReader::OpenFile(LocalPath(res->added_files[0].file_path))->metadata();
  auto dictionary = [&](int c) {
    auto chunk = md->RowGroup(0)->ColumnChunk(c);  // its encodings live as long as it does
    const auto& e = chunk->encodings();
    return std::find(e.begin(), e.end(), parquet::Encoding::RLE_DICTIONARY) != e.end();
  };
  EXPECT_FALSE(dictionary(0));
  EXPECT_TRUE(dictionary(1));   // 20000 values of 8 bytes
  EXPECT_FALSE(dictionary(2));  // all distinct
  EXPECT_FALSE(dictionary(3));  // 30000 strings of about 45 bytes
  EXPECT_FALSE(dictionary(4));  // ~42,000 values, though 0 repeats
  EXPECT_EQ(Sorted(ScanAll(*t, t->NewScan()), schema.fields()), Sorted(rows, schema.fields()));
}

TEST_F(TableTest, RowGroupStatisticsPrune) {
  Schema schema = *ParseSchemaSpec("id:long!, v:string");
  auto t = Create("rg", schema, "", {{"write.parquet.row-group-limit", "1000"}});
  std::vector<Row> rows;
  for (int i = 0; i < 10000; ++i) {
    Row r(2);
    r[0].value = Value{static_cast<int64_t>(i)};
    r[1].value = Value{std::to_string(i)};
    rows.push_back(r);
  }
  ASSERT_THAT(t->Append(testing::ToArrow(schema, rows)), IsOk());
  TableScan scan = t->NewScan().Filter("id >= 4000 and id < 4010");
  auto plan = scan.Plan();
  ASSERT_THAT(plan, IsOk());
  auto reader = TableScan::Read(*plan, &cat_->io());
  auto table = (*reader)->ToTable();
  ASSERT_TRUE(table.ok());
  EXPECT_EQ((*table)->num_rows(), 10);
  EXPECT_EQ(plan->stats->row_groups_total, 10);
  EXPECT_EQ(plan->stats->row_groups_skipped, 9);
  EXPECT_EQ(plan->stats->rows_read, 1000);
}

TEST_F(TableTest, TimeTravelBySnapshotTimeAndRef) {
  Schema schema = *ParseSchemaSpec("id:long!");
  auto t = Create("tt", schema);
  std::vector<int64_t> snaps;
  std::vector<int64_t> times;
  for (int i = 0; i < 3; ++i) {
    Row r(1);
    r[0].value = Value{static_cast<int64_t>(i)};
    auto res = t->Append(testing::ToArrow(schema, {r}));
    ASSERT_THAT(res, IsOk());
    snaps.push_back(res->snapshot_id);
    times.push_back(t->metadata()->SnapshotById(res->snapshot_id)->timestamp_ms);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ScanAll(*t, std::move(t->NewScan().UseSnapshot(snaps[i]))).size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(ScanAll(*t, std::move(t->NewScan().AsOfTime(times[i]))).size(), static_cast<size_t>(i + 1));
  }
  EXPECT_EQ(ScanAll(*t, std::move(t->NewScan().UseRef("main"))).size(), 3u);
  EXPECT_THAT(t->NewScan().UseSnapshot(12345).Plan(), IsError(ErrorKind::kNotFound));
  EXPECT_THAT(t->NewScan().UseRef("nope").Plan(), IsError(ErrorKind::kNotFound));
  EXPECT_THAT(t->NewScan().AsOfTime(times[0] - 100000).Plan(), IsError(ErrorKind::kNotFound));
}

TEST_F(TableTest, ProjectionAndLimit) {
  Schema schema = *ParseSchemaSpec("a:long!, b:string, c:double");
  auto t = Create("proj", schema);
  testing::RandomData data(5);
  std::vector<Row> rows;
  for (int i = 0; i < 100; ++i) rows.push_back(data.RandomRow(schema, 0.1));
  ASSERT_THAT(t->Append(testing::ToArrow(schema, rows)), IsOk());
  auto table = t->NewScan().Select({"c", "a"}).Limit(7).ToTable();
  ASSERT_THAT(table, IsOk());
  EXPECT_EQ((*table)->num_rows(), 7);
  EXPECT_EQ((*table)->schema()->field(0)->name(), "c");
  EXPECT_EQ((*table)->schema()->field(1)->name(), "a");
  auto bad = t->NewScan().Select({"a", "zzz"}).Filter("nope = 1").Plan();
  ASSERT_THAT(bad, IsError(ErrorKind::kInvalidArgument));
  // Both problems at once, and the columns that exist.
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("zzz"));
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("nope"));
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("a, b, c"));
}

// A table of many commits is planned from manifests read concurrently, a window at a
// time: the plan's files still come in manifest-list order on every run, deletes still
// apply, and of two corrupt manifests the error names the first in list order.
TEST_F(TableTest, ManyManifestsPlanInListOrder) {
  Schema schema = *ParseSchemaSpec("id:long!, tag:string");
  auto t = Create("many", schema);
  constexpr int kCommits = 150;  // more than one window of manifests
  for (int i = 0; i < kCommits; ++i) {
    auto row = [](int64_t id, const char* tag) {
      return Row{testing::Cell{false, Value{id}, {}}, testing::Cell{false, Value{std::string(tag)}, {}}};
    };
    std::vector<Row> rows = {row(2 * i, "a"), row(2 * i + 1, "b")};
    ASSERT_THAT(t->Append(testing::ToArrow(schema, rows)), IsOk());
  }
  ASSERT_THAT(t->Delete("id = 7 or id = 250"), IsOk());
  const TableMetadata& m = *t->metadata();
  auto list = LoadManifestList(*m.CurrentSnapshot(), cat_->io());
  ASSERT_THAT(list, IsOk());
  std::vector<std::string> expected;  // read one manifest after another
  std::vector<std::string> data_manifests;
  for (const auto& mf : *list) {
    if (mf.content != 0) continue;
    data_manifests.push_back(LocalPath(mf.manifest_path));
    auto entries = LoadManifest(mf, m, *m.schema(), cat_->io());
    ASSERT_THAT(entries, IsOk());
    for (const auto& e : *entries)
      if (e.status != EntryStatus::kDeleted) expected.push_back(e.data_file.file_path);
  }
  ASSERT_GE(data_manifests.size(), static_cast<size_t>(kCommits));
  for (int run = 0; run < 3; ++run) {
    auto plan = t->NewScan().Plan();
    ASSERT_THAT(plan, IsOk());
    std::vector<std::string> got;
    size_t with_deletes = 0;
    for (const auto& task : plan->tasks) {
      got.push_back(task.file.file_path);
      with_deletes += !task.deletes.empty();
    }
    EXPECT_EQ(got, expected) << "run " << run;
    EXPECT_GE(with_deletes, 1u);
  }
  auto table = t->NewScan().ToTable();
  ASSERT_THAT(table, IsOk());
  EXPECT_EQ((*table)->num_rows(), 2 * kCommits - 2);
  auto filtered = t->NewScan().Filter("id >= 290").ToTable();
  ASSERT_THAT(filtered, IsOk());
  EXPECT_EQ((*filtered)->num_rows(), 10);

  for (size_t k : {size_t{100}, size_t{70}}) std::ofstream(data_manifests[k], std::ios::trunc) << "not an avro file";
  for (int run = 0; run < 3; ++run) {
    auto bad = t->NewScan().Plan();
    ASSERT_THAT(bad, IsError(ErrorKind::kCorrupt));
    EXPECT_THAT(bad.error().message, ::testing::HasSubstr(data_manifests[70]));
  }
}

TEST_F(TableTest, ConformNamesColumnAndRow) {
  Schema schema = *ParseSchemaSpec("id:long!, n:int");
  auto input = arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("n", arrow::int64())}),
      {Arr(arrow::int64(), "[1, 2, 3]"),
       Arr(arrow::int64(), "[1, 2, 9999999999]")});
  auto t = Create("conform", schema);
  auto res = t->Append(input);
  ASSERT_THAT(res, IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(res.error().message, ::testing::HasSubstr("column 'n' row 3"));
  auto missing = arrow::Table::Make(arrow::schema({arrow::field("n", arrow::int32())}),
                                    {Arr(arrow::int32(), "[1]")});
  EXPECT_THAT(t->Append(missing), testing::IsErrorWith(ErrorKind::kInvalidArgument, "required column 'id'"));
  auto nulls = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64())}),
                                  {Arr(arrow::int64(), "[1, null]")});
  EXPECT_THAT(t->Append(nulls), testing::IsErrorWith(ErrorKind::kInvalidArgument, "row 2 is null"));
  auto extra = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64()), arrow::field("x", arrow::int64())}),
                                  {Arr(arrow::int64(), "[1]"),
                                   Arr(arrow::int64(), "[1]")});
  EXPECT_THAT(t->Append(extra), testing::IsErrorWith(ErrorKind::kInvalidArgument, "'x' is not in the table"));
  // Nothing was committed by any of the failures.
  ASSERT_THAT(t->Refresh(), IsOk());
  EXPECT_TRUE(t->metadata()->snapshots.empty());
}

TEST_F(TableTest, MultiTableAppendCommitsAtomically) {
  Schema schema = *ParseSchemaSpec("id:long!");
  auto a = Create("ra", schema);
  auto b = Create("rb", schema);
  Row r(1);
  r[0].value = Value{int64_t{1}};
  auto sa = a->StageAppend(testing::ToArrow(schema, {r}));
  auto sb = b->StageAppend(testing::ToArrow(schema, {r, r}));
  ASSERT_THAT(sa, IsOk());
  ASSERT_THAT(sb, IsOk());
  // Someone else commits to b meanwhile: the release retries and still lands both.
  auto other = Table::Load(*cat_, {"t", "rb"});
  ASSERT_THAT((*other)->Append(testing::ToArrow(schema, {r})), IsOk());
  std::vector<std::pair<Table*, StagedAppend>> release{{a.get(), *sa}, {b.get(), *sb}};
  auto res = CommitAppends(release);
  ASSERT_THAT(res, IsOk());
  EXPECT_EQ((*res)[1].attempts, 2);
  EXPECT_EQ((*res)[0].commit_seq + 1, (*res)[1].commit_seq);
  EXPECT_EQ(ScanAll(*a, a->NewScan()).size(), 1u);
  EXPECT_EQ(ScanAll(*b, b->NewScan()).size(), 3u);
}

// A write whose commit is refused leaves the table folder as it found it: no data,
// delete or manifest file that nothing refers to (each is removed, not left to `orphans`).
TEST_F(TableTest, RefusedCommitsLeaveNoFilesBehind) {
  Schema schema(0, {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                    NestedField{2, "s", false, Type::Primitive(TypeId::kString), ""}},
                {1});
  auto rows = [&](std::initializer_list<int64_t> ids) {
    std::vector<Row> out;
    for (int64_t id : ids) {
      Row r(2);
      r[0].value = Value{id};
      r[1].value = Value{std::string(id % 2 ? "odd" : "even")};
      out.push_back(r);
    }
    return testing::ToArrow(schema, out);
  };
  for (std::string equality : {"false", "true"}) {
    SCOPED_TRACE("equality deletes " + equality);
    const std::string name = "refused_" + equality;
    auto stale = Create(name, schema, "", {{"commit.retry.num-retries", "0"}, {kEqualityDeletesProperty, equality}});
    auto other = std::move(*Table::Load(*cat_, {"t", name}));
    ASSERT_THAT(other->Append(rows({1, 2, 3, 4})), IsOk());
    ASSERT_THAT(stale->Refresh(), IsOk());
    auto staged = stale->StageAppend(rows({5}));
    ASSERT_THAT(staged, IsOk());
    ASSERT_FALSE(staged->files.empty());
    // Each write below goes through the stale handle after another commit: refused.
    auto conflict = [&]() { return other->Append(rows({6})); };
    ASSERT_THAT(conflict(), IsOk());
    EXPECT_THAT(stale->CommitAppend(*staged), testing::IsErrorWith(ErrorKind::kCommitConflict, "gave up"));
    for (const auto& f : staged->files) EXPECT_FALSE(*cat_->io().Exists(f.file_path)) << f.file_path;
    ASSERT_THAT(conflict(), IsOk());
    EXPECT_THAT(stale->Upsert(rows({2, 9})), IsError(ErrorKind::kCommitConflict));
    ASSERT_THAT(stale->Refresh(), IsOk());
    ASSERT_THAT(conflict(), IsOk());
    EXPECT_THAT(stale->DeleteKeys(rows({3})), IsError(ErrorKind::kCommitConflict));
    ASSERT_THAT(stale->Refresh(), IsOk());
    ASSERT_THAT(conflict(), IsOk());
    EXPECT_THAT(stale->Delete("id = 4"), IsError(ErrorKind::kCommitConflict));
    auto left = other->OrphanFiles(std::numeric_limits<int64_t>::max(), /*remove=*/false);
    ASSERT_THAT(left, IsOk());
    EXPECT_THAT(*left, ::testing::IsEmpty());
    // Nothing was lost either: the committed rows are all there.
    ASSERT_THAT(other->Refresh(), IsOk());
    EXPECT_EQ(ScanAll(*other, other->NewScan()).size(), 8u);  // 1-4 and four 6s
  }
}

TEST_F(TableTest, ConcurrentWritersInOneProcessLoseNothing) {
  Schema schema = *ParseSchemaSpec("id:long!");
  Create("race", schema);
  auto writer = [&](int base) {
    auto cat = Catalog::Create(dir_.path());
    auto t = Table::Load(**cat, {"t", "race"});
    for (int i = 0; i < 15; ++i) {
      Row r(1);
      r[0].value = Value{static_cast<int64_t>(base + i)};
      auto res = (*t)->Append(testing::ToArrow(schema, {r}));
      EXPECT_THAT(res, IsOk());
    }
  };
  std::thread w1(writer, 0), w2(writer, 1000);
  w1.join();
  w2.join();
  auto t = Table::Load(*cat_, {"t", "race"});
  EXPECT_EQ((*t)->metadata()->snapshots.size(), 30u);
  EXPECT_EQ(ScanAll(**t, (*t)->NewScan()).size(), 30u);
  auto log = *cat_->CommitsSince(0, TableIdent{"t", "race"});
  for (size_t i = 1; i < log.size(); ++i) EXPECT_LT(log[i - 1].commit_seq, log[i].commit_seq);
}

}  // namespace
}  // namespace skade
