// Model-based test: random appends (random types, nulls, partitions) against an
// in-memory model; at every snapshot, random projections and filters must give
// exactly the model's rows.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "skade/format/metadata_columns.h"
#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/data_writer.h"
#include "skade/table/scan.h"
#include "skade/table/schema_update.h"
#include "skade/table/snapshot_producer.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/row_eval.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsOk;
using testing::Row;

std::string RandomPartition(testing::RandomData& d, const Schema& s) {
  std::vector<std::string> parts;
  for (const auto& f : s.fields()) {
    if (!f.type->is_primitive() || !d.Chance(0.3)) continue;
    switch (f.type->id) {
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz: {
        const char* t[] = {"year", "month", "day", "hour"};
        parts.push_back(std::string(t[d.Uniform(0, 3)]) + "(" + f.name + ")");
        break;
      }
      case TypeId::kDate: parts.push_back(std::string(d.Chance(0.5) ? "month(" : "day(") + f.name + ")"); break;
      case TypeId::kInt:
      case TypeId::kLong:
      case TypeId::kString: {
        int kind = d.Uniform(0, 2);  // identity: the scan drops the predicates a partition proves
        parts.push_back(kind == 0   ? "bucket(" + std::to_string(d.Uniform(2, 5)) + "," + f.name + ")"
                        : kind == 1 ? "truncate(" + std::to_string(d.Uniform(1, 3)) + "," + f.name + ")"
                                    : f.name);
        break;
      }
      case TypeId::kFloat:
      case TypeId::kDouble:
        break;  // identity on floats is legal but NaN-free data makes it dull
      default: parts.push_back(f.name);
    }
    if (parts.size() == 3) break;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

TEST(ModelTest, RandomAppendsScansEqualModel) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    testing::TempDir dir;
    auto cat = std::move(*Catalog::Create(dir.path()));
    ASSERT_THAT(cat->CreateNamespace("m"), IsOk());
    testing::RandomData d(seed * 7919);
    Schema schema = d.RandomSchema(d.Uniform(3, 9), /*nested=*/seed % 2 == 0);
    std::string pspec = RandomPartition(d, schema);
    auto spec = pspec.empty() ? Result<PartitionSpec>(PartitionSpec()) : ParsePartitionSpec(pspec, schema);
    ASSERT_THAT(spec, IsOk()) << pspec;
    std::map<std::string, std::string> props{{"write.parquet.row-group-limit", std::to_string(d.Uniform(20, 200))}};
    ASSERT_THAT(cat->CreateTable({"m", "t"}, schema, *spec, props), IsOk());
    auto table = std::move(*Table::Load(*cat, {"m", "t"}));
    SCOPED_TRACE("seed " + std::to_string(seed) + " schema " + Type::Struct(schema.fields())->ToString() +
                 " partition [" + pspec + "]");

    std::vector<std::vector<Row>> model_at;  // rows visible at each snapshot
    std::vector<int64_t> snapshots;
    std::vector<Row> model;
    for (int step = 0; step < 5; ++step) {
      std::vector<Row> batch;
      int n = d.Uniform(1, 300);
      for (int i = 0; i < n; ++i) batch.push_back(d.RandomRow(schema, 0.15));
      auto res = table->Append(testing::ToArrow(schema, batch));
      ASSERT_THAT(res, IsOk());
      model.insert(model.end(), batch.begin(), batch.end());
      model_at.push_back(model);
      snapshots.push_back(res->snapshot_id);

      // Check every snapshot so far with random projections and filters.
      for (size_t s = 0; s < snapshots.size(); ++s) {
        for (int q = 0; q < 4; ++q) {
          std::vector<std::string> cols;
          std::vector<size_t> idx;
          for (size_t c = 0; c < schema.fields().size(); ++c)
            if (d.Chance(0.6)) {
              cols.push_back(schema.fields()[c].name);
              idx.push_back(c);
            }
          if (cols.empty()) {
            cols.push_back(schema.fields()[0].name);
            idx.push_back(0);
          }
          std::string filter = testing::RandomFilter(d, schema, 2);
          TableScan scan = table->NewScan().Select(cols).Filter(filter).UseSnapshot(snapshots[s]);
          auto plan = scan.Plan();
          ASSERT_THAT(plan, IsOk()) << filter;
          ScanPlan run = *plan;
          run.parallelism = static_cast<int>(d.Uniform(0, 3));  // 0: the pool; 1: sequential
          run.stats = std::make_shared<ScanStats>();
          auto reader = TableScan::Read(run, &cat->io());
          auto got_table = (*reader)->ToTable();
          ASSERT_TRUE(got_table.ok()) << got_table.status().ToString() << " filter " << filter;
          std::vector<NestedField> fields;
          for (size_t c : idx) fields.push_back(schema.fields()[c]);
          std::vector<std::string> got, want;
          for (const auto& r : testing::FromArrow(**got_table, fields)) got.push_back(testing::RowToString(r, fields));
          for (const auto& r : model_at[s]) {
            auto keep = testing::EvalRow(*plan->filter, schema, r);
            if (!keep || !*keep) continue;
            Row proj;
            for (size_t c : idx) proj.push_back(r[c]);
            want.push_back(testing::RowToString(proj, fields));
          }
          std::sort(got.begin(), got.end());
          std::sort(want.begin(), want.end());
          ASSERT_EQ(got, want) << "filter: " << filter << " snapshot #" << s;
          EXPECT_LE(plan->stats->files_planned, plan->stats->files_total);
        }
      }
    }
  }
}


// How one scan came out: its rows in output order and its batch sizes.
struct ScanOutput {
  std::vector<std::string> rows;
  std::vector<int64_t> batch_rows;
};

ScanOutput ReadAll(ScanPlan plan, FileIO& io, int parallelism, int64_t budget,
                   const std::vector<NestedField>& fields) {
  plan.parallelism = parallelism;
  plan.memory_budget_bytes = budget;
  plan.stats = std::make_shared<ScanStats>();
  ScanOutput out;
  auto reader = TableScan::Read(plan, &io);
  EXPECT_THAT(reader, IsOk());
  if (!reader) return out;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto st = (*reader)->ReadNext(&batch);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok() || !batch) break;
    out.batch_rows.push_back(batch->num_rows());
    auto t = *arrow::Table::FromRecordBatches({batch});
    for (const auto& r : testing::FromArrow(*t, fields)) out.rows.push_back(testing::RowToString(r, fields));
  }
  return out;
}

// The concurrent scan path against the sequential one and the model, on files with
// many small row groups, an empty file, and position/equality deletes spanning row
// groups: same rows in the same order, in the same batches, every run.
TEST(ModelTest, ConcurrentScanEqualsSequentialAndModel) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    testing::TempDir dir;
    auto cat = std::move(*Catalog::Create(dir.path()));
    ASSERT_THAT(cat->CreateNamespace("m"), IsOk());
    testing::RandomData d(seed * 104729);
    Schema extra = d.RandomSchema(d.Uniform(2, 5), /*nested=*/seed % 2 == 0);
    std::vector<NestedField> fields{NestedField{900, "id", true, Type::Primitive(TypeId::kLong), ""}};
    for (const auto& f : extra.fields()) fields.push_back(f);
    Schema schema(0, fields, {900});
    bool equality = seed % 2 == 1;
    std::map<std::string, std::string> props{{"write.parquet.row-group-limit", std::to_string(d.Uniform(5, 40))}};
    if (equality) props[kEqualityDeletesProperty] = "true";
    ASSERT_THAT(cat->CreateTable({"m", "t"}, schema, PartitionSpec(), props), IsOk());
    auto table = std::move(*Table::Load(*cat, {"m", "t"}));
    SCOPED_TRACE("seed " + std::to_string(seed) + (equality ? " (equality deletes)" : ""));
    std::map<int64_t, Row> model;
    int64_t next_id = 0;
    auto rows = [&](int n, bool fresh) {
      std::vector<Row> out;
      for (int i = 0; i < n; ++i) {
        Row r = d.RandomRow(schema, 0.15);
        r[0].null = false;
        r[0].value = Value{fresh ? next_id++ : static_cast<int64_t>(d.Uniform(0, static_cast<int>(next_id) - 1))};
        out.push_back(r);
      }
      return out;
    };
    auto append = [&](int n) {
      auto batch = rows(n, true);
      ASSERT_THAT(table->Append(testing::ToArrow(schema, batch)), IsOk());
      for (auto& r : batch) model[std::get<int64_t>(r[0].value)] = r;
    };
    auto check = [&](const std::string& after) {
      SCOPED_TRACE("after " + after);
      for (int q = 0; q < 4; ++q) {
        std::vector<std::string> cols{"id"};
        std::vector<NestedField> out_fields{schema.fields()[0]};
        for (size_t c = 1; c < schema.fields().size(); ++c)
          if (d.Chance(0.5)) {
            cols.push_back(schema.fields()[c].name);
            out_fields.push_back(schema.fields()[c]);
          }
        std::string filter = q == 0 ? "true" : testing::RandomFilter(d, schema, 2);
        auto plan = table->NewScan().Select(cols).Filter(filter).Plan();
        ASSERT_THAT(plan, IsOk()) << filter;
        ScanOutput seq = ReadAll(*plan, cat->io(), 1, 256LL << 20, out_fields);
        for (auto [par, budget] : {std::pair<int, int64_t>{0, 256LL << 20}, {4, 256LL << 20}, {3, 1}}) {
          ScanOutput con = ReadAll(*plan, cat->io(), par, budget, out_fields);
          ASSERT_EQ(con.rows, seq.rows) << "parallelism " << par << " budget " << budget << " filter " << filter;
          ASSERT_EQ(con.batch_rows, seq.batch_rows) << "parallelism " << par << " filter " << filter;
        }
        for (int64_t n : seq.batch_rows) {
          EXPECT_GT(n, 0) << "empty batch";
          EXPECT_LE(n, 64 * 1024);
        }
        // Each row's position (`_pos`) is the same on every path, also where a streamed row
        // group's readers skip the rows deleted by position as they decode.
        std::vector<std::string> pos_cols = cols;
        pos_cols.push_back("_pos");
        std::vector<NestedField> pos_fields = out_fields;
        pos_fields.push_back(*MetadataColumn("_pos"));
        auto pos_plan = table->NewScan().Select(pos_cols).Filter(filter).Plan();
        ASSERT_THAT(pos_plan, IsOk()) << filter;
        ScanOutput seq_pos = ReadAll(*pos_plan, cat->io(), 1, 256LL << 20, pos_fields);
        ASSERT_EQ(seq_pos.rows.size(), seq.rows.size()) << filter;
        for (auto [par, budget] : {std::pair<int, int64_t>{4, 256LL << 20}, {3, 1}})
          ASSERT_EQ(ReadAll(*pos_plan, cat->io(), par, budget, pos_fields).rows, seq_pos.rows)
              << "parallelism " << par << " budget " << budget << " filter " << filter;
        std::vector<std::string> want;
        auto bound = *expr::Bind(*expr::Parse(filter), schema);
        for (const auto& [id, r] : model) {
          auto keep = testing::EvalRow(*bound, schema, r);
          if (!keep || !*keep) continue;
          Row proj{r[0]};
          for (size_t c = 1; c < schema.fields().size(); ++c)
            if (std::find(cols.begin(), cols.end(), schema.fields()[c].name) != cols.end()) proj.push_back(r[c]);
          want.push_back(testing::RowToString(proj, out_fields));
        }
        std::vector<std::string> got = seq.rows;
        std::sort(got.begin(), got.end());
        std::sort(want.begin(), want.end());
        ASSERT_EQ(got, want) << "filter " << filter;
      }
    };
    append(d.Uniform(300, 700));
    check("append");
    {  // an empty data file, committed like any other
      auto empty = testing::ToArrow(schema, {});
      auto batch = *empty->CombineChunksToBatch();
      const TableMetadata& m = *table->metadata();
      auto df = WriteParquetFile(m, m.location + "/data/empty-" + std::to_string(seed) + ".parquet", batch, schema);
      ASSERT_THAT(df, IsOk());
      FileChange change;
      change.added = {*df};
      std::vector<std::pair<LoadedTable, FileChange>> changes;
      changes.emplace_back(LoadedTable{table->ident(), table->metadata_location(), table->metadata()}, change);
      ASSERT_THAT(CommitChanges(*cat, std::move(changes)), IsOk());
      ASSERT_THAT(table->Refresh(), IsOk());
    }
    append(d.Uniform(100, 400));
    check("empty file and append");
    int64_t lo = d.Uniform(0, static_cast<int>(next_id / 2)), hi = lo + d.Uniform(20, 150);
    ASSERT_THAT(table->Delete("id >= " + std::to_string(lo) + " and id < " + std::to_string(hi)), IsOk());
    std::erase_if(model, [&](const auto& kv) { return kv.first >= lo && kv.first < hi; });
    check("delete spanning row groups");
    auto keys = rows(d.Uniform(10, 60), false);
    ASSERT_THAT(table->DeleteKeys(testing::ToArrow(schema, keys)), IsOk());
    for (const auto& k : keys) model.erase(std::get<int64_t>(k[0].value));
    auto ups = rows(d.Uniform(10, 80), false);
    auto fresh = rows(5, true);
    ups.insert(ups.end(), fresh.begin(), fresh.end());
    ASSERT_THAT(table->Upsert(testing::ToArrow(schema, ups)), IsOk());
    for (auto& r : ups) model[std::get<int64_t>(r[0].value)] = r;
    check("delete keys and upsert");
    int64_t eq = 0;
    for (const auto& f : table->metadata()->snapshots)
      if (auto it = f.summary.find("added-equality-delete-files"); it != f.summary.end()) eq += std::stoll(it->second);
    EXPECT_EQ(eq > 0, equality);
  }
}

// Rows [first, first + n) of the wide table below: numbers, a low-cardinality string
// (dictionary-encoded in the file), a unique one (plain), a column added later.
std::shared_ptr<arrow::Table> WideRows(int64_t first, int64_t n, bool with_late) {
  arrow::Int64Builder id, qty, late;
  arrow::Int32Builder small;
  arrow::DoubleBuilder b, c, e;
  arrow::StringBuilder dict, plain;
  for (int64_t i = first; i < first + n; ++i) {
    EXPECT_TRUE(id.Append(i).ok() && qty.Append(i * 31 % 977).ok());
    EXPECT_TRUE(small.Append(static_cast<int32_t>(i % 1000)).ok());
    EXPECT_TRUE(b.Append(static_cast<double>(i * 7919 % 1000) / 1000).ok() && c.Append(i * 0.5).ok());
    EXPECT_TRUE(i % 13 == 0 ? e.AppendNull().ok() : e.Append(-static_cast<double>(i)).ok());
    EXPECT_TRUE(dict.Append("k" + std::to_string(i % 20)).ok());
    EXPECT_TRUE(plain.Append("row-" + std::to_string(i * 2654435761 % 100000007)).ok());
    if (with_late) EXPECT_TRUE(late.Append(i * 3).ok());
  }
  arrow::FieldVector fields{arrow::field("id", arrow::int64(), false), arrow::field("qty", arrow::int64()),
                            arrow::field("small", arrow::int32()),       arrow::field("b", arrow::float64()),
                            arrow::field("c", arrow::float64()),         arrow::field("e", arrow::float64()),
                            arrow::field("dict", arrow::utf8()),         arrow::field("plain", arrow::utf8())};
  arrow::ArrayVector cols{*id.Finish(), *qty.Finish(), *small.Finish(), *b.Finish(),
                          *c.Finish(),  *e.Finish(),   *dict.Finish(),  *plain.Finish()};
  if (with_late) {
    fields.push_back(arrow::field("late", arrow::int64()));
    cols.push_back(*late.Finish());
  }
  return arrow::Table::Make(arrow::schema(fields), cols);
}

// An empty table m.wide with WideRows' columns (`keyed`: id its identifier field).
std::unique_ptr<Table> WideTable(Catalog& cat, const std::map<std::string, std::string>& properties,
                                 bool keyed = false) {
  EXPECT_THAT(cat.CreateNamespace("m"), IsOk());
  Schema schema = *ParseSchemaSpec(
      "id:long!, qty:long, small:int, b:double, c:double, e:double, dict:string, plain:string");
  if (keyed) schema = Schema(0, schema.fields(), {schema.fields()[0].id});
  EXPECT_THAT(cat.CreateTable({"m", "wide"}, schema, PartitionSpec(), properties), IsOk());
  return std::move(*Table::Load(cat, {"m", "wide"}));
}

std::shared_ptr<arrow::Table> Collect(ScanPlan plan, FileIO& io, int parallelism, int64_t budget,
                                      std::vector<int64_t>* batch_rows, ScanStats* stats = nullptr) {
  plan.parallelism = parallelism;
  plan.memory_budget_bytes = budget;
  plan.stats = std::make_shared<ScanStats>();
  struct Report {
    const ScanPlan& plan;
    ScanStats* out;
    ~Report() {
      if (out) *out = *plan.stats;
    }
  } report{plan, stats};
  auto reader = TableScan::Read(plan, &io);
  EXPECT_THAT(reader, IsOk());
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto st = (*reader)->ReadNext(&batch);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok() || !batch) break;
    batch_rows->push_back(batch->num_rows());
    batches.push_back(batch);
  }
  return *arrow::Table::FromRecordBatches((*reader)->schema(), batches);
}

// Row groups large enough that each decodes as one task per column (the path the
// model test's small row groups never take), read ahead within a budget that holds two
// of them, or streamed (its column groups read ahead on the pool, or in the reading
// thread): the same rows in the same order and batches as the sequential
// path, equal to the rows written, through a filter, deletes spanning row groups and a
// column the older files lack.
TEST(ModelTest, ColumnTasksEqualSequentialScan) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  auto table = WideTable(*cat, {{"write.parquet.row-group-limit", "150000"}});
  ASSERT_THAT(table->Append(WideRows(0, 450000, false)), IsOk());
  SchemaUpdate add;
  add.AddColumn("late", Type::Primitive(TypeId::kLong));
  ASSERT_THAT(table->UpdateSchema(add), IsOk());
  ASSERT_THAT(table->Append(WideRows(450000, 300000, true)), IsOk());
  ASSERT_THAT(table->Delete("id >= 140000 and id < 160000"), IsOk());  // across row groups 0 and 1

  InitArrowCompute();
  auto call = [](const char* function, std::vector<arrow::Datum> args) {
    auto r = arrow::compute::CallFunction(function, args);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  };
  auto by_id = [](const std::shared_ptr<arrow::Table>& t) {
    auto order = arrow::compute::SortIndices(*t->GetColumnByName("id"));
    EXPECT_TRUE(order.ok()) << order.status().ToString();
    return (*arrow::compute::Take(t, *order)).table()->CombineChunks().ValueOrDie();
  };
  // What the full scan must return: every row written, bar the deleted ones; `late`
  // is null in the rows written before it existed.
  auto older = WideRows(0, 450000, false);
  older = *older->AddColumn(older->num_columns(), arrow::field("late", arrow::int64()),
                            std::make_shared<arrow::ChunkedArray>(*arrow::MakeArrayOfNull(arrow::int64(), 450000)));
  auto written = *arrow::ConcatenateTables({older, WideRows(450000, 300000, true)});
  auto ids = written->GetColumnByName("id");
  auto gone = call("and", {call("greater_equal", {ids, arrow::Datum(int64_t{140000})}),
                           call("less", {ids, arrow::Datum(int64_t{160000})})});
  auto want = (*arrow::compute::Filter(written, call("invert", {gone}))).table();

  auto col = [&](const char* name) { return arrow::Datum(want->GetColumnByName(name)); };
  auto k3_low = call("and", {call("equal", {col("dict"), arrow::Datum(std::string("k3"))}),
                             call("less", {col("b"), arrow::Datum(0.5)})});
  auto late_or_null = call("or_kleene", {call("greater", {col("late"), arrow::Datum(int64_t{1000000})}),
                                         call("is_null", {col("e")})});
  const std::vector<std::pair<std::string, arrow::Datum>> filters{{"", arrow::Datum()},
                                                                  {"dict = 'k3' and b < 0.5", k3_low},
                                                                  {"late > 1000000 or e is null", late_or_null}};
  for (const auto& [filter, keep] : filters) {
    SCOPED_TRACE("filter: " + filter);
    TableScan scan = table->NewScan();
    std::shared_ptr<arrow::Table> expected = want;
    if (!filter.empty()) {
      scan.Select({"id", "plain", "late", "qty"}).Filter(filter);
      expected = *(*arrow::compute::Filter(want, keep)).table()->SelectColumns({0, 7, 8, 1});
      ASSERT_GT(expected->num_rows(), 0);
    }
    auto plan = scan.Plan();
    ASSERT_THAT(plan, IsOk());
    std::vector<int64_t> seq_batches;
    auto seq = Collect(*plan, cat->io(), 1, 256LL << 20, &seq_batches);
    EXPECT_TRUE(by_id(seq)->Equals(*by_id(expected), /*check_metadata=*/false));
    for (auto [par, budget] : {std::pair<int, int64_t>{0, 256LL << 20}, {0, 30LL << 20}, {2, 30LL << 20}, {0, 1}, {1, 1}}) {
      std::vector<int64_t> con_batches;
      auto con = Collect(*plan, cat->io(), par, budget, &con_batches);
      EXPECT_TRUE(con->Equals(*seq, /*check_metadata=*/false)) << "parallelism " << par << " budget " << budget;
      EXPECT_EQ(con_batches, seq_batches) << "parallelism " << par << " budget " << budget;
    }
  }
}

// Equality deletes over row groups read whole or streamed, where a streamed row group's
// key column decides each batch's surviving rows before its other columns are read (for
// those rows only), whether or not the key is projected, with position deletes beside
// them: the rows left, in the same order and batches on every path.
TEST(ModelTest, EqualityDeletesDecidedABatchAtATime) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  auto table =
      WideTable(*cat, {{"write.parquet.row-group-limit", "150000"}, {kEqualityDeletesProperty, "true"}}, true);
  ASSERT_THAT(table->Append(WideRows(0, 450000, false)), IsOk());
  // A run of keys longer than a batch, keys scattered after it, and rows deleted by position.
  arrow::Int64Builder keys;
  for (int64_t i = 100000; i < 250000; ++i) ASSERT_TRUE(keys.Append(i).ok());
  for (int64_t i = 300000; i < 450000; i += 997) ASSERT_TRUE(keys.Append(i).ok());
  auto key_table = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64(), false)}), {*keys.Finish()});
  ASSERT_THAT(table->DeleteKeys(key_table), IsOk());
  ASSERT_GT(table->metadata()->CurrentSnapshot()->summary.count("added-equality-delete-files"), 0u);
  ASSERT_THAT(table->Delete("qty = 5"), IsOk());
  auto gone = [](int64_t i) {
    return (i >= 100000 && i < 250000) || (i >= 300000 && (i - 300000) % 997 == 0) || i * 31 % 977 == 5;
  };
  int64_t deleted = 0;
  std::vector<int64_t> kept_rows;
  for (int64_t i = 0; i < 450000; ++i) {
    if (gone(i)) {
      ++deleted;
    } else {
      kept_rows.push_back(i);
    }
  }
  arrow::Int64Builder take;
  ASSERT_TRUE(take.AppendValues(kept_rows).ok());
  auto want = (*arrow::compute::Take(WideRows(0, 450000, false), *take.Finish())).table();
  for (const std::vector<std::string>& cols : {std::vector<std::string>{}, {"plain", "qty", "dict"}}) {
    SCOPED_TRACE(cols.empty() ? "every column" : "without the key");
    TableScan scan = table->NewScan();
    std::shared_ptr<arrow::Table> expected = want;
    if (!cols.empty()) {
      scan.Select(cols);
      expected = *want->SelectColumns({7, 1, 6});
    }
    auto plan = scan.Plan();
    ASSERT_THAT(plan, IsOk());
    std::vector<int64_t> seq_batches;
    auto seq = Collect(*plan, cat->io(), 1, 256LL << 20, &seq_batches);
    EXPECT_TRUE(seq->Equals(*expected, /*check_metadata=*/false));
    for (auto [par, budget] : {std::pair<int, int64_t>{0, 256LL << 20}, {0, 1}, {1, 1}, {2, 1}}) {
      std::vector<int64_t> con_batches;
      ScanStats stats;
      auto con = Collect(*plan, cat->io(), par, budget, &con_batches, &stats);
      EXPECT_TRUE(con->Equals(*seq, /*check_metadata=*/false)) << "parallelism " << par << " budget " << budget;
      EXPECT_EQ(con_batches, seq_batches) << "parallelism " << par << " budget " << budget;
      EXPECT_EQ(stats.rows_deleted, deleted) << "parallelism " << par << " budget " << budget;
    }
  }
}

// Position deletes covering whole pages: each path passes over the same data pages, and
// counts them, row groups streamed included.
TEST(ModelTest, PagesPassedOverAreCountedOnEveryPath) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  auto table = WideTable(*cat, {{"write.parquet.row-group-limit", "150000"}});
  ASSERT_THAT(table->Append(WideRows(0, 450000, false)), IsOk());
  ASSERT_THAT(table->Delete("id >= 20000 and id < 280000"), IsOk());
  ASSERT_GT(table->metadata()->CurrentSnapshot()->summary.count("added-position-delete-files"), 0u);
  auto plan = table->NewScan().Plan();
  ASSERT_THAT(plan, IsOk());
  std::vector<int64_t> seq_batches;
  ScanStats seq_stats;
  auto seq = Collect(*plan, cat->io(), 1, 256LL << 20, &seq_batches, &seq_stats);
  EXPECT_EQ(seq->num_rows(), 450000 - 260000);
  EXPECT_GT(seq_stats.pages_skipped, 0);
  for (auto [par, budget] : {std::pair<int, int64_t>{0, 256LL << 20}, {0, 1}, {1, 1}}) {
    std::vector<int64_t> con_batches;
    ScanStats stats;
    auto con = Collect(*plan, cat->io(), par, budget, &con_batches, &stats);
    EXPECT_TRUE(con->Equals(*seq, /*check_metadata=*/false)) << "parallelism " << par << " budget " << budget;
    EXPECT_EQ(stats.pages_skipped, seq_stats.pages_skipped) << "parallelism " << par << " budget " << budget;
  }
}

// A limit, over row groups streamed (budget 1: they stop reading ahead when the limit
// ends within their first batch, and read on when a row group shorter than the batch
// does not reach it) or fitting the budget (read whole unless the limit ends inside
// one, which is then streamed): the first rows of the unlimited scan, in order, for
// limits inside, at and past a batch, a row group, a file and the table, with and
// without a filter or deletes. Within the budget, where no filter or delete can drop
// rows, no row group is read past the batch the limit ends in.
TEST(ModelTest, LimitsGiveTheFirstRowsReadingNoFurtherThanTheirBatch) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  auto table = WideTable(*cat, {{"write.parquet.row-group-limit", "150000"}});
  ASSERT_THAT(table->Append(WideRows(0, 300000, false)), IsOk());
  ASSERT_THAT(table->Append(WideRows(300000, 1000, false)), IsOk());  // a row group shorter than a batch
  ASSERT_THAT(table->Append(WideRows(301000, 100000, false)), IsOk());
  constexpr int64_t kMaxBatch = 64 * 1024;
  for (bool deleted : {false, true}) {
    if (deleted) ASSERT_THAT(table->Delete("id >= 10 and id < 20"), IsOk());
    for (const char* filter : {"", "dict = 'k3'"}) {
      SCOPED_TRACE(std::string("filter '") + filter + "' deletes " + (deleted ? "yes" : "no"));
      TableScan all = table->NewScan();
      if (*filter) all.Filter(filter);
      auto full_plan = all.Plan();
      ASSERT_THAT(full_plan, IsOk());
      std::vector<int64_t> ignored;
      auto full = Collect(*full_plan, cat->io(), 1, 256LL << 20, &ignored);
      for (int64_t limit : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{5000}, int64_t{65535}, int64_t{65536},
                            int64_t{65537}, int64_t{150001}, int64_t{300500}, int64_t{305000}, int64_t{350000},
                            int64_t{500000}}) {
        ScanPlan plan = *full_plan;
        plan.limit = limit;
        for (int64_t budget : {int64_t{1}, int64_t{256} << 20})
          for (int par : {0, 1}) {
            ScanStats stats;
            auto got = Collect(plan, cat->io(), par, budget, &ignored, &stats);
            auto want = full->Slice(0, std::min(limit, full->num_rows()));
            EXPECT_TRUE(got->Equals(*want, /*check_metadata=*/false))
                << "limit " << limit << " parallelism " << par << " budget " << budget;
            if (budget > 1 && !*filter && !deleted)
              EXPECT_LT(stats.rows_read, limit + kMaxBatch) << "limit " << limit << " parallelism " << par;
          }
      }
    }
  }
}

// A streamed row group whose pages are garbled: the scan fails naming the file, in
// whichever column group's read ahead hits the damage, and closing it early (mid
// stream, tasks still reading ahead) neither crashes nor hangs.
TEST(ModelTest, StreamedRowGroupWithGarbledPagesFailsNamingTheFile) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  auto table = WideTable(*cat, {});
  auto appended = table->Append(WideRows(0, 300000, false));
  ASSERT_THAT(appended, IsOk());
  ASSERT_EQ(appended->added_files.size(), 1u);
  auto plan = table->NewScan().Plan();
  ASSERT_THAT(plan, IsOk());

  // Closed after the first batch, with the stream's groups reading ahead.
  for (int round = 0; round < 5; ++round) {
    ScanPlan p = *plan;
    p.memory_budget_bytes = 1;
    p.stats = std::make_shared<ScanStats>();
    auto reader = TableScan::Read(p, &cat->io());
    ASSERT_THAT(reader, IsOk());
    std::shared_ptr<arrow::RecordBatch> batch;
    ASSERT_TRUE((*reader)->ReadNext(&batch).ok());
    ASSERT_NE(batch, nullptr);
  }

  std::string path = LocalPath(appended->added_files[0].file_path);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t i = bytes.size() / 4; i < bytes.size() * 3 / 4; i += 7) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  for (int parallelism : {0, 1}) {
    ScanPlan p = *plan;
    p.parallelism = parallelism;
    p.memory_budget_bytes = 1;
    p.stats = std::make_shared<ScanStats>();
    auto reader = TableScan::Read(p, &cat->io());
    ASSERT_THAT(reader, IsOk());
    arrow::Status st;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      st = (*reader)->ReadNext(&batch);
      if (!st.ok() || !batch) break;
    }
    ASSERT_FALSE(st.ok()) << "parallelism " << parallelism;
    auto err = ErrorFromReader(st);
    EXPECT_EQ(err.kind, ErrorKind::kCorrupt) << err.ToString();
    EXPECT_THAT(err.message, ::testing::HasSubstr(path));
  }
}

}  // namespace
}  // namespace skade
