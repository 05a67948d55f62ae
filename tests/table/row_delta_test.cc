// Row-level writes against an in-memory model: random appends, deletes by filter,
// deletes by key, upserts and overwrites, in both delete modes; every snapshot's
// scans (with random projections and filters) must equal the model.
#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "skade/table/delete_index.h"
#include "skade/table/scan.h"
#include "skade/io/file_io.h"
#include "skade/table/schema_update.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/row_eval.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;
using testing::Row;

std::vector<std::string> Render(const std::vector<Row>& rows, const std::vector<NestedField>& fields) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(testing::RowToString(r, fields));
  std::sort(out.begin(), out.end());
  return out;
}

// Rows only in `got` and only in `want` (sorted inputs), for readable failures.
std::string Diff(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  std::vector<std::string> extra, missing;
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::string out = std::to_string(got.size()) + " rows, expected " + std::to_string(want.size());
  for (const auto& r : extra) out += "\n  unexpected " + r;
  for (const auto& r : missing) out += "\n  missing    " + r;
  return out;
}

std::string KeyOf(const Row& r) { return testing::CellToString(r[0], *Type::Primitive(TypeId::kLong)); }

// Each key's row ids (`_row_id`, format v3), ascending.
using IdsByKey = std::map<std::string, std::vector<int64_t>>;

IdsByKey ReadIds(const Table& t) {
  IdsByKey out;
  auto got = t.NewScan().Select({"id", "_row_id"}).ToTable();
  EXPECT_THAT(got, IsOk());
  if (!got) return out;
  auto combined = (*got)->CombineChunksToBatch();
  EXPECT_TRUE(combined.ok());
  const auto& ids = static_cast<const arrow::Int64Array&>(*(*combined)->column(0));
  const auto& row_ids = static_cast<const arrow::Int64Array&>(*(*combined)->column(1));
  for (int64_t r = 0; r < ids.length(); ++r) {
    EXPECT_FALSE(row_ids.IsNull(r));
    out[std::to_string(ids.Value(r))].push_back(row_ids.Value(r));
  }
  for (auto& [k, v] : out) std::sort(v.begin(), v.end());
  return out;
}

// Row lineage across one step of the model: ids are distinct and below next-row-id; a row
// the step added has an id from its commit's range; every other row keeps its key's id;
// an upsert's row that replaces rows takes the smallest of their ids unless equality
// deletes removed them (those say nothing of the rows they remove).
void CheckRowIds(const IdsByKey& before, const IdsByKey& after, int64_t old_next, int64_t next,
                 const std::set<std::string>& upserted, bool by_equality, bool rows_stay) {
  std::set<int64_t> all;
  size_t count = 0;
  for (const auto& [key, ids] : after) {
    SCOPED_TRACE("key " + key);
    count += ids.size();
    all.insert(ids.begin(), ids.end());
    for (int64_t id : ids) EXPECT_LT(id, next);
    auto was = before.find(key);
    std::vector<int64_t> old = was == before.end() ? std::vector<int64_t>{} : was->second;
    if (rows_stay) {
      EXPECT_EQ(ids, old);
    } else if (upserted.contains(key)) {
      ASSERT_EQ(ids.size(), 1u);
      if (old.empty() || by_equality) EXPECT_GE(ids[0], old_next);
      else EXPECT_EQ(ids[0], old[0]);
    } else {
      for (int64_t id : ids)
        EXPECT_TRUE(id >= old_next || std::binary_search(old.begin(), old.end(), id)) << "id " << id;
    }
  }
  EXPECT_EQ(all.size(), count) << "row ids repeat";
}

class RowDeltaModel {
 public:
  RowDeltaModel(uint64_t seed, const std::string& mode, const std::string& partition, bool equality = false,
                int format_version = 2)
      : d_(seed), mode_(mode), partition_(partition), equality_(equality), format_version_(format_version) {}

  void Run() {
    auto cat = std::move(*Catalog::Create(dir_.path()));
    ASSERT_THAT(cat->CreateNamespace("m"), IsOk());
    Schema base = d_.RandomSchema(4, false);
    std::vector<NestedField> fields{NestedField{100, "id", true, Type::Primitive(TypeId::kLong), ""},
                                    NestedField{101, "grp", false, Type::Primitive(TypeId::kString), ""}};
    for (const auto& f : base.fields()) fields.push_back(f);
    schema_ = Schema(0, fields, {100});
    PartitionSpec spec;
    if (!partition_.empty()) spec = *ParsePartitionSpec(partition_, schema_);
    std::map<std::string, std::string> props{{"write.delete.mode", mode_},
                                             {"write.parquet.row-group-limit", "50"}};
    if (equality_) props[kEqualityDeletesProperty] = "true";
    if (format_version_ == 3) props["format-version"] = "3";
    ASSERT_THAT(cat->CreateTable({"m", "t"}, schema_, spec, props), IsOk());
    auto t = std::move(*Table::Load(*cat, {"m", "t"}));
    struct Seen {
      int64_t snapshot;
      std::vector<Row> rows;
      Schema schema;
    };
    std::vector<Seen> history;
    int added_columns = 0;
    for (int step = 0; step < 18; ++step) {
      // Start with an append, an upsert and a delete; then anything.
      int op = step == 0 ? 0 : step == 1 ? 2 : step == 2 ? 1 : d_.Uniform(0, 8);
      std::string what;
      Result<CommitResult> res;
      const bool v3 = format_version_ == 3;
      const IdsByKey ids_before = v3 ? ReadIds(*t) : IdsByKey{};
      const int64_t next_before = t->metadata()->next_row_id.value_or(0);
      std::set<std::string> upserted;  // keys whose rows an upsert replaced or added
      bool upsert_by_equality = false;
      if (op == 0) {
        auto rows = Batch(d_.Uniform(1, 120), /*unique=*/false);
        what = "append";
        res = t->Append(testing::ToArrow(schema_, rows));
        model_.insert(model_.end(), rows.begin(), rows.end());
      } else if (op == 1) {
        // The first delete matches part of the rows, so copy-on-write must rewrite.
        std::string filter = step == 2 ? std::string("id < 75") : testing::RandomFilter(d_, schema_, 1);
        what = "delete where " + filter;
        auto bound = expr::Bind(*expr::Parse(filter), schema_);
        ASSERT_THAT(bound, IsOk());
        res = t->Delete(filter);
        std::erase_if(model_, [&](const Row& r) {
          auto v = testing::EvalRow(**bound, schema_, r);
          return v && *v;
        });
      } else if (op == 2) {
        auto rows = Batch(d_.Uniform(1, 40), false);
        what = "upsert";
        res = t->Upsert(testing::ToArrow(schema_, rows));
        std::map<std::string, Row> last;
        for (const auto& r : rows) last[KeyOf(r)] = r;
        std::erase_if(model_, [&](const Row& r) { return last.contains(KeyOf(r)); });
        for (const auto& [k, r] : last) {
          model_.push_back(r);
          upserted.insert(k);
        }
        if (res)
          for (const auto& f : res->added_files) upsert_by_equality |= f.content == FileContent::kEqualityDeletes;
      } else if (op == 3) {
        auto rows = Batch(d_.Uniform(1, 20), false);
        what = "delete keys";
        std::vector<Row> keys = rows;
        res = t->DeleteKeys(testing::ToArrow(schema_, keys));
        std::set<std::string> ks;
        for (const auto& r : rows) ks.insert(KeyOf(r));
        std::erase_if(model_, [&](const Row& r) { return ks.contains(KeyOf(r)); });
      } else if (op == 5) {
        what = "compact";
        res = t->Compact(d_.Chance(0.5) ? std::optional<int64_t>(1 << 20) : std::nullopt);
      } else if (op == 6) {
        what = "expire retain-last 3";
        auto expired = t->ExpireSnapshots(std::nullopt, 3);
        ASSERT_THAT(expired, IsOk());
        std::set<int64_t> gone(expired->expired_snapshots.begin(), expired->expired_snapshots.end());
        std::erase_if(history, [&](const Seen& h) { return gone.contains(h.snapshot); });
        EXPECT_LE(t->metadata()->snapshots.size(), 3u);
        res = expired->commit;
        res->committed = false;  // no new snapshot
      } else if (op == 8) {
        // Partition evolution: add a bucket of id, or drop it again.
        bool has = false;
        for (const auto& f : t->metadata()->spec().fields()) has = has || f.name == "id_bucket";
        what = has ? "drop partition id_bucket" : "add partition bucket(3,id)";
        res = has ? t->RemovePartitionField("id_bucket") : t->AddPartitionFields("bucket(3,id)");
        ASSERT_THAT(res, IsOk()) << what;
        res->committed = false;
      } else if (op == 7) {
        what = "add column";
        SchemaUpdate u;
        u.AddColumn("added" + std::to_string(added_columns++), Type::Primitive(TypeId::kString));
        res = t->UpdateSchema(u);
        ASSERT_THAT(res, IsOk());
        schema_ = *t->metadata()->schema();
        for (auto& r : model_) r.push_back(testing::Cell{true, {}, {}});
        res->committed = false;
      } else {
        auto rows = Batch(d_.Uniform(1, 60), false);
        std::string filter = "grp = '" + std::string(d_.Chance(0.5) ? "a" : "b") + "'";
        what = "overwrite where " + filter;
        res = t->Overwrite(testing::ToArrow(schema_, rows), filter);
        std::erase_if(model_, [&](const Row& r) {
          return !r[1].null && std::get<std::string>(r[1].value) == filter.substr(7, 1);
        });
        model_.insert(model_.end(), rows.begin(), rows.end());
      }
      ASSERT_THAT(res, IsOk()) << what;
      for (const auto& f : res->added_files) written_eq_deletes_ += f.content == FileContent::kEqualityDeletes;
      SCOPED_TRACE("step " + std::to_string(step) + ": " + what);
      if (v3) {
        // Steps that move no row leave every id as it was (a compaction rewrites rows with theirs).
        const bool rows_stay = op == 5 || op == 6 || op == 7 || op == 8;
        CheckRowIds(ids_before, ReadIds(*t), next_before, t->metadata()->next_row_id.value_or(0), upserted,
                    upsert_by_equality, rows_stay);
      }
      int64_t snap = t->metadata()->current_snapshot_id.value_or(0);
      if (res->committed) history.push_back(Seen{snap, model_, schema_});
      // Every live snapshot so far reads as its model (time travel keeps its schema),
      // and no metadata references a missing file.
      for (const auto& h : history) {
        const auto& f = h.schema.fields();
        std::vector<Row> want = h.rows;
        for (auto& r : want) r.resize(f.size(), testing::Cell{true, {}, {}});
        auto got = t->NewScan().UseSnapshot(h.snapshot).ToTable();
        ASSERT_THAT(got, IsOk());
        auto got_rows = Render(testing::FromArrow(**got, f), f), want_rows = Render(want, f);
        ASSERT_TRUE(got_rows == want_rows) << "snapshot " << h.snapshot << ": " << Diff(got_rows, want_rows);
        // A random projection and filter on the same snapshot.
        std::vector<std::string> cols;
        std::vector<size_t> idx;
        for (size_t c = 0; c < f.size(); ++c)
          if (c == 0 || d_.Chance(0.5)) {
            cols.push_back(f[c].name);
            idx.push_back(c);
          }
        std::string filter = testing::RandomFilter(d_, h.schema, 2);
        auto part = t->NewScan().UseSnapshot(h.snapshot).Select(cols).Filter(filter).ToTable();
        ASSERT_THAT(part, IsOk()) << filter;
        auto bound = *expr::Bind(*expr::Parse(filter), h.schema);
        std::vector<NestedField> pf;
        for (size_t c : idx) pf.push_back(f[c]);
        std::vector<Row> expect;
        for (const auto& r : want)
          if (auto v = testing::EvalRow(*bound, h.schema, r); v && *v) {
            Row p;
            for (size_t c : idx) p.push_back(r[c]);
            expect.push_back(p);
          }
        auto got_part = Render(testing::FromArrow(**part, pf), pf), want_part = Render(expect, pf);
        ASSERT_TRUE(got_part == want_part)
            << "snapshot " << h.snapshot << " filter " << filter << ": " << Diff(got_part, want_part);
      }
      auto orphans = t->OrphanFiles(NowMs() + 1000, false);
      ASSERT_THAT(orphans, IsOk());
      // And a random filter on the current one.
      std::string filter = testing::RandomFilter(d_, schema_, 2);
      auto got = t->NewScan().Filter(filter).ToTable();
      ASSERT_THAT(got, IsOk()) << filter;
      auto bound = *expr::Bind(*expr::Parse(filter), schema_);
      std::vector<Row> want;
      for (const auto& r : model_)
        if (auto v = testing::EvalRow(*bound, schema_, r); v && *v) want.push_back(r);
      ASSERT_EQ(Render(testing::FromArrow(**got, schema_.fields()), schema_.fields()), Render(want, schema_.fields()))
          << "filter " << filter;
    }
    // The writes really took the path the mode asks for.
    int64_t pos_deletes = 0, eq_deletes = 0, rewrites = 0;
    for (const auto& snap : t->metadata()->snapshots) {
      auto get = [&](const char* k) {
        auto it = snap.summary.find(k);
        return it == snap.summary.end() ? 0 : std::stoll(it->second);
      };
      pos_deletes += get("added-position-delete-files") + get("added-dvs");
      eq_deletes += get("added-equality-delete-files");
      if (snap.operation() == "overwrite" && get("deleted-data-files") > 0 && get("added-data-files") > 0) ++rewrites;
    }
    if (mode_ == "merge-on-read") EXPECT_GT(pos_deletes + eq_deletes, 0);
    else EXPECT_EQ(pos_deletes, 0);
    // Equality deletes only where the table opted in and the key names the partition.
    bool key_partitioned = partition_.empty() || partition_ == "bucket(4,id)";
    if (!equality_ || mode_ == "copy-on-write" || !key_partitioned) EXPECT_EQ(written_eq_deletes_, 0);
    else EXPECT_GT(written_eq_deletes_, 0);
    if (mode_ == "copy-on-write") EXPECT_GT(rewrites, 0);
  }

 private:
  std::vector<Row> Batch(int n, bool) {
    std::vector<Row> rows;
    for (int i = 0; i < n; ++i) {
      Row r = d_.RandomRow(schema_, 0.1);
      r[0].null = false;
      r[0].value = Value{static_cast<int64_t>(d_.Uniform(0, 150))};
      r[1].null = d_.Chance(0.1);
      r[1].value = Value{std::string(1, static_cast<char>('a' + d_.Uniform(0, 2)))};
      rows.push_back(std::move(r));
    }
    return rows;
  }

  testing::TempDir dir_;
  testing::RandomData d_;
  std::string mode_, partition_;
  bool equality_ = false;
  int format_version_ = 2;
  int64_t written_eq_deletes_ = 0;
  Schema schema_;
  std::vector<Row> model_;
};

TEST(RowDeltaTest, MergeOnReadUnpartitioned) { RowDeltaModel(1, "merge-on-read", "").Run(); }
TEST(RowDeltaTest, EqualityDeletesUnpartitioned) { RowDeltaModel(6, "merge-on-read", "", true).Run(); }
TEST(RowDeltaTest, EqualityDeletesPartitionedByKey) {
  RowDeltaModel(7, "merge-on-read", "bucket(4,id)", true).Run();
}
TEST(RowDeltaTest, EqualityPropertyIgnoredForCopyOnWrite) { RowDeltaModel(8, "copy-on-write", "", true).Run(); }
TEST(RowDeltaTest, CopyOnWriteUnpartitioned) { RowDeltaModel(2, "copy-on-write", "").Run(); }
TEST(RowDeltaTest, MergeOnReadPartitionedByKey) { RowDeltaModel(3, "merge-on-read", "bucket(4,id)").Run(); }
TEST(RowDeltaTest, MergeOnReadPartitionedByOther) { RowDeltaModel(4, "merge-on-read", "grp").Run(); }
TEST(RowDeltaTest, CopyOnWritePartitioned) { RowDeltaModel(5, "copy-on-write", "grp, bucket(2,id)").Run(); }
// Format v3: deletion vectors, and row ids that upserts hand on and no other step changes.
TEST(RowDeltaTest, MergeOnReadV3) { RowDeltaModel(21, "merge-on-read", "", false, 3).Run(); }
TEST(RowDeltaTest, MergeOnReadPartitionedV3) { RowDeltaModel(22, "merge-on-read", "grp", false, 3).Run(); }
TEST(RowDeltaTest, CopyOnWriteV3) { RowDeltaModel(23, "copy-on-write", "grp, bucket(2,id)", false, 3).Run(); }
TEST(RowDeltaTest, EqualityDeletesV3) { RowDeltaModel(24, "merge-on-read", "bucket(4,id)", true, 3).Run(); }
TEST(RowDeltaTest, MoreSeeds) {
  for (uint64_t seed = 10; seed < 16; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RowDeltaModel(seed, seed % 2 ? "copy-on-write" : "merge-on-read",
                  seed % 3 == 0 ? "" : seed % 3 == 1 ? "grp" : "bucket(4,id)")
        .Run();
  }
}

TEST(RowDeltaTest, KeysMustNameIdentifierColumns) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  ASSERT_THAT(cat->CreateNamespace("m"), IsOk());
  Schema schema(0, {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                    NestedField{2, "v", false, Type::Primitive(TypeId::kString), ""}}, {1});
  ASSERT_THAT(cat->CreateTable({"m", "t"}, schema, PartitionSpec(), {}), IsOk());
  Schema plain(0, {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""}});
  ASSERT_THAT(cat->CreateTable({"m", "p"}, plain, PartitionSpec(), {}), IsOk());
  auto t = std::move(*Table::Load(*cat, {"m", "t"}));
  auto keys = arrow::Table::Make(arrow::schema({arrow::field("v", arrow::utf8())}),
                                 arrow::ArrayVector{*arrow::MakeArrayOfNull(arrow::utf8(), 1)});
  EXPECT_THAT(t->DeleteKeys(keys), testing::IsErrorWith(ErrorKind::kInvalidArgument, "lack identifier column 'id'"));
  auto p = std::move(*Table::Load(*cat, {"m", "p"}));
  EXPECT_THAT(p->Upsert(keys), testing::IsErrorWith(ErrorKind::kInvalidArgument, "no identifier fields"));
  EXPECT_THAT(t->Delete("nope = 1"), testing::IsErrorWith(ErrorKind::kInvalidArgument, "nope"));
  EXPECT_TRUE(t->metadata()->snapshots.empty());
}

TEST(RowDeltaTest, AStreamedOverwriteWritesItsRowsAgainAfterAConflict) {
  // Overwrite(stage) calls its stager once per attempt. Rows matching the filter that are
  // committed between an attempt's read and its commit make it conflict: that attempt's
  // files go, and the next writes the rows again and replaces the newcomer too.
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  ASSERT_THAT(cat->CreateNamespace("m"), IsOk());
  Schema schema(0, {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                    NestedField{2, "v", false, Type::Primitive(TypeId::kString), ""}});
  ASSERT_THAT(cat->CreateTable({"m", "t"}, schema, PartitionSpec(), {}), IsOk());
  auto t = std::move(*Table::Load(*cat, {"m", "t"}));
  auto other = std::move(*Table::Load(*cat, {"m", "t"}));
  auto cell = [](Value v) {
    testing::Cell c;
    c.value = std::move(v);
    return c;
  };
  auto rows = [&](std::vector<int64_t> ids, const std::string& v) {
    std::vector<Row> out;
    for (int64_t id : ids) out.push_back(Row{cell(Value{id}), cell(Value{v})});
    return testing::ToArrow(schema, out);
  };
  ASSERT_THAT(t->Append(rows({1, 2, 100}, "old")), IsOk());
  int calls = 0;
  std::vector<std::string> staged;
  auto r = t->Overwrite(
      [&]() -> Result<StagedAppend> {
        if (++calls == 1) SKADE_RETURN_IF_ERROR(other->Append(rows({3}, "concurrent")));
        auto s = t->StageAppend(rows({1, 2, 3}, "new"));
        if (s)
          for (const auto& f : s->files) staged.push_back(LocalPath(f.file_path));
        return s;
      },
      std::string("id < 10"));
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(r->rows_added, 3);
  auto plan = t->NewScan().Plan();
  ASSERT_THAT(plan, IsOk());
  auto read = TableScan::Read(*plan, &cat->io());
  ASSERT_THAT(read, IsOk());
  auto table = (*read)->ToTable();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::vector<Row> want;
  for (int64_t id : {1, 2, 3}) want.push_back(Row{cell(Value{id}), cell(Value{std::string("new")})});
  want.push_back(Row{cell(Value{int64_t{100}}), cell(Value{std::string("old")})});
  EXPECT_EQ(Render(testing::FromArrow(**table, schema.fields()), schema.fields()), Render(want, schema.fields()));
  ASSERT_EQ(staged.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(staged[0])) << "the refused attempt's file stayed";
  EXPECT_TRUE(std::filesystem::exists(staged[1]));
}

// Keys are matched on their typed Arrow columns (grouped, hashed, sorted): every type an
// identifier may have, alone and in a composite key, must find exactly its rows, in files
// pruned by key bounds and in files that hold the keys.
TEST(RowDeltaTest, KeysOfEveryIdentifierTypeFindTheirRows) {
  auto key_value = [](TypeId type, int i) -> Value {
    switch (type) {
      case TypeId::kBoolean: return Value{i % 2 == 1};
      case TypeId::kInt:
      case TypeId::kDate: return Value{static_cast<int32_t>(i * 3 - 500)};
      case TypeId::kTime: return Value{static_cast<int64_t>(i) * 1000003};  // within a day
      case TypeId::kLong:
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz: return Value{static_cast<int64_t>(i) * 1000003 - 70000000};
      case TypeId::kDecimal: return Value{Decimal{static_cast<__int128>(i) * 7 - 1000}};
      case TypeId::kString: return Value{"k" + std::to_string(i * 37 % 1000) + std::string(i % 3 * 20, 'x')};
      default: {  // uuid, fixed(16): 16 bytes, differing in the first and last
        std::string b(16, '\0');
        b[0] = static_cast<char>(i % 251);
        b[15] = static_cast<char>(i / 251);
        return Value{b};
      }
    }
  };
  struct Case {
    std::string name;
    std::vector<TypePtr> keys;
  };
  auto P = [](TypeId id) { return Type::Primitive(id); };
  std::vector<Case> cases{{"int", {P(TypeId::kInt)}},
                          {"long", {P(TypeId::kLong)}},
                          {"date", {P(TypeId::kDate)}},
                          {"time", {P(TypeId::kTime)}},
                          {"timestamptz", {P(TypeId::kTimestampTz)}},
                          {"decimal", {Type::Decimal(12, 2)}},
                          {"string", {P(TypeId::kString)}},
                          {"uuid", {P(TypeId::kUuid)}},
                          {"fixed", {Type::Fixed(16)}},
                          {"bool+string", {P(TypeId::kBoolean), P(TypeId::kString)}},
                          {"date+long+decimal", {P(TypeId::kDate), P(TypeId::kLong), Type::Decimal(9, 0)}}};
  for (const auto& mode : {"merge-on-read", "copy-on-write"})
    for (const auto& c : cases) {
      SCOPED_TRACE(c.name + std::string(" ") + mode);
      testing::TempDir dir;
      auto cat = std::move(*Catalog::Create(dir.path()));
      ASSERT_THAT(cat->CreateNamespace("m"), IsOk());
      std::vector<NestedField> fields;
      std::vector<int> ids;
      for (size_t k = 0; k < c.keys.size(); ++k) {
        fields.push_back(NestedField{static_cast<int>(k) + 1, "k" + std::to_string(k), true, c.keys[k], ""});
        ids.push_back(static_cast<int>(k) + 1);
      }
      fields.push_back(NestedField{50, "v", false, Type::Primitive(TypeId::kLong), ""});
      Schema schema(0, fields, ids);
      ASSERT_THAT(cat->CreateTable({"m", "t"}, schema, PartitionSpec(), {{"write.delete.mode", mode}}), IsOk());
      auto t = std::move(*Table::Load(*cat, {"m", "t"}));
      // Key i: one value per key column (a composite key spreads i over its columns).
      auto key_of = [&](int i) {
        Row r;
        for (size_t k = 0; k < c.keys.size(); ++k) {
          int part = c.keys.size() == 1 ? i : k == 0 ? i % 2 : k == 1 ? i / 2 : i % 5;
          r.push_back(testing::Cell{false, key_value(c.keys[k]->id, part), {}});
        }
        return r;
      };
      auto rows = [&](const std::vector<std::pair<int, int64_t>>& kv) {
        std::vector<Row> out;
        for (auto [i, v] : kv) {
          Row r = key_of(i);
          r.push_back(testing::Cell{false, Value{v}, {}});
          out.push_back(std::move(r));
        }
        return testing::ToArrow(schema, out);
      };
      std::map<int, int64_t> model;
      for (int file = 0; file < 3; ++file) {
        std::vector<std::pair<int, int64_t>> kv;
        for (int i = file * 100; i < file * 100 + 100; ++i) kv.push_back({i, i});
        ASSERT_THAT(t->Append(rows(kv)), IsOk());
        for (auto [i, v] : kv) model[i] = v;
      }
      // Updates in every file, new keys, and a key given twice: the last wins. Keys 100 and
      // 200 are the lowest of their files, so for ordered types they equal a file's bound.
      std::vector<std::pair<int, int64_t>> up{{5, 1005}, {250, 1250}, {400, 1400}, {5, 2005}, {100, 1100}, {299, 1299}};
      ASSERT_THAT(t->Upsert(rows(up)), IsOk());
      for (auto [i, v] : up) model[i] = v;
      std::vector<std::pair<int, int64_t>> gone{{6, 0}, {6, 0}, {400, 0}, {150, 0}, {200, 0}, {999, 0}};
      auto deleted = t->DeleteKeys(rows(gone));
      ASSERT_THAT(deleted, IsOk());
      EXPECT_EQ(deleted->rows_deleted, 4);
      for (auto [i, v] : gone) model.erase(i);
      std::vector<Row> want;
      for (auto [i, v] : model) {
        Row r = key_of(i);
        r.push_back(testing::Cell{false, Value{v}, {}});
        want.push_back(std::move(r));
      }
      auto got = t->NewScan().ToTable();
      ASSERT_THAT(got, IsOk());
      auto got_rows = Render(testing::FromArrow(**got, schema.fields()), schema.fields());
      auto want_rows = Render(want, schema.fields());
      ASSERT_TRUE(got_rows == want_rows) << Diff(got_rows, want_rows);
    }
}

}  // namespace
}  // namespace skade

namespace skade {
namespace {

// id (long), grp and v (strings), keyed by `identifier`.
Schema IdGroupValue(std::vector<int> identifier) {
  return Schema(0,
                {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                 NestedField{2, "grp", false, Type::Primitive(TypeId::kString), ""},
                 NestedField{3, "v", false, Type::Primitive(TypeId::kString), ""}},
                std::move(identifier));
}

// Two writers upsert overlapping keys at once: no error, no duplicate key, and each
// key ends with a value one of them wrote.
void ConcurrentUpserts(const std::string& partition, bool equality) {
  testing::TempDir dir;
  {
    auto cat = std::move(*Catalog::Create(dir.path()));
    ASSERT_THAT(cat->CreateNamespace("c"), IsOk());
    Schema schema = IdGroupValue({1});
    PartitionSpec spec;
    if (!partition.empty()) spec = *ParsePartitionSpec(partition, schema);
    std::map<std::string, std::string> props;
    if (equality) props[kEqualityDeletesProperty] = "true";
    ASSERT_THAT(cat->CreateTable({"c", "t"}, schema, spec, props), IsOk());
  }
  auto writer = [&](char who) {
    auto cat = std::move(*Catalog::Create(dir.path()));
    auto t = std::move(*Table::Load(*cat, {"c", "t"}));
    const Schema schema = *t->metadata()->schema();  // a copy: writes replace the metadata
    for (int n = 0; n < 12; ++n) {
      std::vector<Row> rows;
      for (int k = 0; k < 8; ++k) {
        Row r(3);
        r[0].value = Value{static_cast<int64_t>(k)};
        r[1].value = Value{std::string(k % 2 ? "a" : "b")};
        r[2].value = Value{std::string(1, who) + std::to_string(n)};
        rows.push_back(r);
      }
      auto res = t->Upsert(testing::ToArrow(schema, rows));
      EXPECT_THAT(res, IsOk());
    }
  };
  std::thread a(writer, 'A'), b(writer, 'B');
  a.join();
  b.join();
  auto cat = std::move(*Catalog::Create(dir.path()));
  auto t = std::move(*Table::Load(*cat, {"c", "t"}));
  auto table = t->NewScan().ToTable();
  ASSERT_THAT(table, IsOk());
  auto rows = testing::FromArrow(**table, t->metadata()->schema()->fields());
  std::map<int64_t, std::string> seen;
  for (const auto& r : rows) {
    int64_t k = std::get<int64_t>(r[0].value);
    EXPECT_FALSE(seen.contains(k)) << "duplicate key " << k;
    seen[k] = std::get<std::string>(r[2].value);
  }
  EXPECT_EQ(seen.size(), 8u);
  // The last committed upsert wrote every key: all keys carry its value.
  std::set<std::string> values;
  for (const auto& [k, v] : seen) values.insert(v);
  EXPECT_EQ(values.size(), 1u);
  EXPECT_EQ(t->metadata()->snapshots.size(), 24u);
  int64_t eq = 0;
  for (const auto& s : t->metadata()->snapshots)
    if (auto it = s.summary.find("added-equality-delete-files"); it != s.summary.end()) eq += std::stoll(it->second);
  if (equality) EXPECT_GT(eq, 0);
  else EXPECT_EQ(eq, 0);
}

// Upserts with equality deletes, never compacted: data file i is deleted from by every
// later commit. Each data file must not get its own merged key set (their sizes add up
// to the square of the commits): all share one set per scope, read by sequence number,
// and the scan still equals the model.
void EqualityUpsertsShareOneKeySet(const std::string& partition, size_t scopes) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  ASSERT_THAT(cat->CreateNamespace("c"), IsOk());
  Schema schema = IdGroupValue({1, 2});
  PartitionSpec spec;
  if (!partition.empty()) spec = *ParsePartitionSpec(partition, schema);
  ASSERT_THAT(cat->CreateTable({"c", "t"}, schema, spec, {{kEqualityDeletesProperty, "true"}}), IsOk());
  auto t = std::move(*Table::Load(*cat, {"c", "t"}));
  std::map<std::pair<int64_t, std::string>, std::string> model;
  for (int n = 0; n < 12; ++n) {
    std::vector<Row> rows;
    for (int k = 0; k < 6; ++k) {  // half of them keys an earlier commit wrote
      int64_t id = k % 2 ? n * 10 + k : (n * 7 + k) % 40;
      std::string grp = id % 3 ? "a" : "b";
      if (model.contains({id, grp}) && k % 2) continue;
      Row r(3);
      r[0].value = Value{id};
      r[1].value = Value{grp};
      r[2].value = Value{"c" + std::to_string(n)};
      if (std::any_of(rows.begin(), rows.end(), [&](const Row& o) { return o[0].value == r[0].value; })) continue;
      rows.push_back(r);
      model[{id, grp}] = "c" + std::to_string(n);
    }
    ASSERT_THAT(t->Upsert(testing::ToArrow(*t->metadata()->schema(), rows)), IsOk());
  }
  auto plan = t->NewScan().Plan();
  ASSERT_THAT(plan, IsOk());
  DeleteLoader loader(&cat->io(), plan->schema);
  for (const auto& task : plan->tasks) loader.Expect(task.deletes);
  // The plan names each delete file once: tasks share it instead of copying its stats.
  std::map<std::string, std::set<const DataFile*>> copies;
  for (const auto& task : plan->tasks)
    for (const auto& d : task.deletes) copies[d.file->file_path].insert(d.file.get());
  EXPECT_FALSE(copies.empty());
  for (const auto& [path, files] : copies) {
    EXPECT_EQ(files.size(), 1u) << path;
    // An equality delete file holds the keys alone, not the upserted rows.
    auto md = parquet::ParquetFileReader::OpenFile(LocalPath(path))->metadata();
    EXPECT_EQ(md->schema()->num_columns(), 2) << path;
    EXPECT_EQ(md->schema()->Column(0)->name(), "id");
    EXPECT_EQ(md->schema()->Column(1)->name(), "grp");
  }
  std::set<const EqualityProbe*> probes;
  size_t deleted_from = 0;
  for (const auto& task : plan->tasks) {
    auto rows = loader.Load(task.file, task.data_sequence_number, task.deletes);
    ASSERT_THAT(rows, IsOk());
    for (const auto& set : rows->equality()) {
      probes.insert(set.probe);
      EXPECT_EQ(set.after_sequence, task.data_sequence_number);
    }
    deleted_from += !rows->equality().empty();
  }
  EXPECT_GT(deleted_from, 5u);
  EXPECT_EQ(probes.size(), scopes);
  auto table = t->NewScan().ToTable();
  ASSERT_THAT(table, IsOk());
  std::map<std::pair<int64_t, std::string>, std::string> seen;
  for (const auto& r : testing::FromArrow(**table, t->metadata()->schema()->fields())) {
    auto key = std::make_pair(std::get<int64_t>(r[0].value), std::get<std::string>(r[1].value));
    EXPECT_FALSE(seen.contains(key)) << "duplicate key " << key.first;
    seen[key] = std::get<std::string>(r[2].value);
  }
  EXPECT_EQ(seen, model);
}

TEST(EqualityUpsertTest, UnpartitionedShareOneKeySet) { EqualityUpsertsShareOneKeySet("", 1); }
TEST(EqualityUpsertTest, PartitionedShareOneKeySetPerPartition) { EqualityUpsertsShareOneKeySet("grp", 2); }

TEST(ConcurrentUpsertTest, EqualityDeletePath) { ConcurrentUpserts("", true); }
TEST(ConcurrentUpsertTest, PositionDeletesUnpartitioned) { ConcurrentUpserts("", false); }
TEST(ConcurrentUpsertTest, PositionDeletesPartitionedByOther) { ConcurrentUpserts("grp", false); }
TEST(ConcurrentUpsertTest, PositionDeletesPartitionedByKey) { ConcurrentUpserts("bucket(2,id)", false); }

}  // namespace
}  // namespace skade
