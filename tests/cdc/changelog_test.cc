// Oracle test of read_changelog over random histories: per-snapshot changes equal
// the multiset difference of consecutive full scans, net changes over any range
// equal the difference of its two ends, and updates pair by identifier.
#include "skade/cdc/changelog.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "skade/table/arrow_internal.h"
#include "skade/table/scan.h"
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

using Multiset = std::map<std::string, int>;

Multiset Count(const std::vector<std::string>& rows) {
  Multiset m;
  for (const auto& r : rows) ++m[r];
  return m;
}

// a − b as multisets.
Multiset Minus(const Multiset& a, const Multiset& b) {
  Multiset out;
  for (const auto& [k, n] : a) {
    auto it = b.find(k);
    int left = n - (it == b.end() ? 0 : it->second);
    if (left > 0) out[k] = left;
  }
  return out;
}

struct Changes {
  Multiset inserted, deleted, update_before, update_after;
};

// Changes per _commit_snapshot_id.
std::map<int64_t, Changes> SplitBySnapshot(const std::shared_ptr<arrow::Table>& t, const Schema& schema);

Changes Split(const arrow::Table& t, const Schema& schema) {
  std::vector<NestedField> fields = schema.fields();
  fields.push_back(NestedField{-1, "_change_type", true, Type::Primitive(TypeId::kString), ""});
  fields.push_back(NestedField{-2, "_change_ordinal", true, Type::Primitive(TypeId::kInt), ""});
  fields.push_back(
      NestedField{-3, "_commit_snapshot_id", true, Type::Primitive(TypeId::kLong), ""});
  Changes c;
  size_t n = schema.fields().size();
  std::vector<NestedField> data_fields(fields.begin(), fields.begin() + static_cast<long>(n));
  for (auto r : testing::FromArrow(t, fields)) {
    std::string type = std::get<std::string>(r[n].value);
    r.resize(n);
    std::string text = testing::RowToString(r, data_fields);
    if (type == "INSERT")
      ++c.inserted[text];
    else if (type == "DELETE")
      ++c.deleted[text];
    else if (type == "UPDATE_BEFORE")
      ++c.update_before[text];
    else
      ++c.update_after[text];
  }
  return c;
}

std::map<int64_t, Changes> SplitBySnapshot(const std::shared_ptr<arrow::Table>& t, const Schema& schema) {
  std::map<int64_t, Changes> out;
  auto ids = t->GetColumnByName("_commit_snapshot_id");
  std::set<int64_t> seen;
  for (int64_t r = 0; r < t->num_rows(); ++r)
    seen.insert(std::static_pointer_cast<arrow::Int64Scalar>(*ids->GetScalar(r))->value);
  for (int64_t id : seen) {
    arrow::Int64Builder keep;
    for (int64_t r = 0; r < t->num_rows(); ++r)
      if (std::static_pointer_cast<arrow::Int64Scalar>(*ids->GetScalar(r))->value == id) (void)keep.Append(r);
    auto idx = *keep.Finish();
    auto taken = *arrow::compute::Take(t, idx);
    out[id] = Split(*taken.table(), schema);
  }
  return out;
}

void RunHistory(uint64_t seed, const std::string& mode, const std::string& partition) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  ASSERT_THAT(cat->CreateNamespace("c"), IsOk());
  Schema schema(0,
                {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                 NestedField{2, "grp", false, Type::Primitive(TypeId::kString), ""},
                 NestedField{3, "v", false, Type::Primitive(TypeId::kInt), ""}},
                {1});
  PartitionSpec spec;
  if (!partition.empty()) spec = *ParsePartitionSpec(partition, schema);
  ASSERT_THAT(cat->CreateTable({"c", "t"}, schema, spec, {{"write.delete.mode", mode}}), IsOk());
  auto t = std::move(*Table::Load(*cat, {"c", "t"}));
  testing::RandomData d(seed);
  auto batch = [&](int n) {
    std::vector<Row> rows;
    for (int i = 0; i < n; ++i) {
      Row r(3);
      r[0].value = Value{static_cast<int64_t>(d.Uniform(0, 60))};
      r[1].null = d.Chance(0.1);
      r[1].value = Value{std::string(1, static_cast<char>('a' + d.Uniform(0, 2)))};
      r[2].value = Value{static_cast<int32_t>(d.Uniform(0, 9))};
      rows.push_back(r);
    }
    return rows;
  };
  std::vector<int64_t> snaps;
  std::vector<Multiset> states;
  auto scan_state = [&](int64_t snapshot) {
    auto table = *t->NewScan().UseSnapshot(snapshot).ToTable();
    std::vector<std::string> rows;
    for (const auto& r : testing::FromArrow(*table, schema.fields()))
      rows.push_back(testing::RowToString(r, schema.fields()));
    return Count(rows);
  };
  for (int step = 0; step < 16; ++step) {
    int op = step == 0 ? 0 : d.Uniform(0, 6);
    Result<CommitResult> res;
    if (op == 0)
      res = t->Append(testing::ToArrow(schema, batch(d.Uniform(5, 40))));
    else if (op == 1)
      res = t->Delete(testing::RandomFilter(d, schema, 1));
    else if (op == 2)
      res = t->Upsert(testing::ToArrow(schema, batch(d.Uniform(1, 15))));
    else if (op == 3)
      res = t->DeleteKeys(testing::ToArrow(schema, batch(d.Uniform(1, 8))));
    else if (op == 4)
      res =
          t->Overwrite(testing::ToArrow(schema, batch(d.Uniform(1, 10))), std::string("grp = 'a'"));
    else if (op == 5)
      res = t->Compact(std::nullopt);
    else  // carries entries into new manifests: not changes
      res = t->RewriteManifests();
    ASSERT_THAT(res, IsOk()) << "op " << op;
    if (!res->committed) continue;
    snaps.push_back(*t->metadata()->current_snapshot_id);
    states.push_back(scan_state(snaps.back()));
  }
  // Per snapshot: the changes are exactly what the snapshot did.
  for (size_t i = 0; i < snaps.size(); ++i) {
    std::optional<int64_t> from = i ? std::optional<int64_t>(snaps[i - 1]) : std::nullopt;
    auto log = cdc::ReadChangelog(*t, from, snaps[i]);
    ASSERT_THAT(log, IsOk());
    Changes c = Split(**log, schema);
    Multiset before = i ? states[i - 1] : Multiset{};
    EXPECT_EQ(c.deleted, Minus(before, states[i])) << "snapshot #" << i;
    EXPECT_EQ(c.inserted, Minus(states[i], before)) << "snapshot #" << i;
    if (t->metadata()->SnapshotById(snaps[i])->operation() == "replace") {
      EXPECT_EQ((*log)->num_rows(), 0);
    }
    // With a projection (pushed into the reads where no row can be carried over) the
    // rows are the full changelog's rows cut to those columns.
    cdc::ChangelogOptions cols;
    cols.columns = {"grp", "v"};
    auto narrow = cdc::ReadChangelog(*t, from, snaps[i], cols);
    ASSERT_THAT(narrow, IsOk());
    auto full_cut = (*log)->SelectColumns({1, 2, 3, 4, 5});
    ASSERT_TRUE(full_cut.ok());
    Schema projected(0, {schema.fields()[1], schema.fields()[2]});
    Changes n = Split(**narrow, projected), f = Split(**full_cut, projected);
    EXPECT_EQ(n.deleted, f.deleted) << "projected, snapshot #" << i;
    EXPECT_EQ(n.inserted, f.inserted) << "projected, snapshot #" << i;
  }
  // One read of the whole history splits into the same per-snapshot changes (the
  // plans and decoded files carried from snapshot to snapshot change nothing).
  InitArrowCompute();
  auto whole = cdc::ReadChangelog(*t, std::nullopt, snaps.back());
  ASSERT_THAT(whole, IsOk());
  auto per = SplitBySnapshot(*whole, schema);
  for (size_t i = 0; i < snaps.size(); ++i) {
    Multiset before = i ? states[i - 1] : Multiset{};
    EXPECT_EQ(per[snaps[i]].deleted, Minus(before, states[i])) << "whole range, snapshot #" << i;
    EXPECT_EQ(per[snaps[i]].inserted, Minus(states[i], before)) << "whole range, snapshot #" << i;
  }
  // Net changes over every range equal the difference of its ends.
  for (size_t i = 0; i < snaps.size(); ++i)
    for (size_t j = i + 1; j < snaps.size(); ++j) {
      cdc::ChangelogOptions net;
      net.net_changes = true;
      auto log = cdc::ReadChangelog(*t, snaps[i], snaps[j], net);
      ASSERT_THAT(log, IsOk());
      Changes c = Split(**log, schema);
      EXPECT_EQ(c.deleted, Minus(states[i], states[j])) << i << ".." << j;
      EXPECT_EQ(c.inserted, Minus(states[j], states[i])) << i << ".." << j;
      // With updates computed, every UPDATE_BEFORE has an UPDATE_AFTER of its key.
      net.compute_updates = true;
      auto upd = cdc::ReadChangelog(*t, snaps[i], snaps[j], net);
      ASSERT_THAT(upd, IsOk());
      Changes u = Split(**upd, schema);
      auto key_of = [](const std::string& row) { return row.substr(0, row.find(',')); };
      std::multiset<std::string> before_keys, after_keys;
      for (const auto& [r, n] : u.update_before)
        for (int k = 0; k < n; ++k) before_keys.insert(key_of(r));
      for (const auto& [r, n] : u.update_after)
        for (int k = 0; k < n; ++k) after_keys.insert(key_of(r));
      EXPECT_EQ(before_keys, after_keys);
    }
}

TEST(ChangelogTest, MergeOnReadUnpartitioned) { RunHistory(1, "merge-on-read", ""); }
TEST(ChangelogTest, CopyOnWriteUnpartitioned) { RunHistory(2, "copy-on-write", ""); }
TEST(ChangelogTest, MergeOnReadPartitioned) { RunHistory(3, "merge-on-read", "grp"); }
TEST(ChangelogTest, CopyOnWritePartitioned) { RunHistory(4, "copy-on-write", "bucket(3,id)"); }

// Table c.t (id long required, v string) in a fresh catalog.
struct IdValueTable {
  explicit IdValueTable(const std::map<std::string, std::string>& properties = {}) {
    cat = std::move(*Catalog::Create(dir.path()));
    EXPECT_THAT(cat->CreateNamespace("c"), IsOk());
    EXPECT_THAT(cat->CreateTable({"c", "t"}, schema, PartitionSpec(), properties), IsOk());
    table = std::move(*Table::Load(*cat, {"c", "t"}));
  }
  testing::TempDir dir;
  Schema schema{0, {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                    NestedField{2, "v", false, Type::Primitive(TypeId::kString), ""}}};
  std::unique_ptr<Catalog> cat;
  std::unique_ptr<Table> table;
};

TEST(ChangelogTest, ProjectionFilterAndErrors) {
  IdValueTable fixture;
  const Schema& schema = fixture.schema;
  auto& t = fixture.table;
  std::vector<Row> rows;
  for (int i = 0; i < 10; ++i) {
    Row r(2);
    r[0].value = Value{static_cast<int64_t>(i)};
    r[1].value = Value{"x" + std::to_string(i)};
    rows.push_back(r);
  }
  ASSERT_THAT(t->Append(testing::ToArrow(schema, rows)), IsOk());
  int64_t first = *t->metadata()->current_snapshot_id;
  ASSERT_THAT(t->Delete("id < 3"), IsOk());
  cdc::ChangelogOptions o;
  o.columns = {"v"};
  o.filter = "id >= 1";
  auto log = cdc::ReadChangelog(*t, first, std::nullopt, o);
  ASSERT_THAT(log, IsOk());
  EXPECT_EQ((*log)->num_rows(), 2);  // ids 1 and 2
  EXPECT_EQ((*log)->num_columns(), 4);
  EXPECT_EQ((*log)->schema()->field(1)->name(), "_change_type");
  o.compute_updates = true;
  EXPECT_THAT(cdc::ReadChangelog(*t, first, std::nullopt, o),
              testing::IsErrorWith(ErrorKind::kInvalidArgument, "identifier"));
  EXPECT_THAT(cdc::ReadChangelog(*t, 12345, std::nullopt), IsError(ErrorKind::kNotFound));
  o = {};
  o.columns = {"nope"};
  EXPECT_THAT(cdc::ReadChangelog(*t, first, std::nullopt, o), IsError(ErrorKind::kInvalidArgument));
}

// Net changes stamp each surviving row as Spark's net_changes does: with the ordinal
// and snapshot of its first change since its changes last cancelled out, so a row a
// copy-on-write rewrite carried over shows that rewrite.
TEST(ChangelogTest, NetChangesKeepTheSurvivingChangesSnapshot) {
  IdValueTable fixture(std::map<std::string, std::string>{{"write.delete.mode", "copy-on-write"}});
  const Schema& schema = fixture.schema;
  auto& t = fixture.table;
  auto append = [&](std::vector<int64_t> ids) {
    std::vector<Row> rows;
    for (int64_t id : ids) {
      Row r(2);
      r[0].value = Value{id};
      r[1].value = Value{"v" + std::to_string(id)};
      rows.push_back(r);
    }
    ASSERT_THAT(t->Append(testing::ToArrow(schema, rows)), IsOk());
  };
  append({0, 1, 2, 3});
  int64_t start = *t->metadata()->current_snapshot_id;
  append({10});                              // ordinal 0: survives
  append({11});                              // ordinal 1: deleted at 2
  ASSERT_THAT(t->Delete("id = 11"), IsOk());  // ordinal 2
  ASSERT_THAT(t->Delete("id = 0"), IsOk());   // ordinal 3: rewrites 1..3 (carried over, no change)
  append({12, 13});                          // ordinal 4
  ASSERT_THAT(t->Delete("id = 13"), IsOk());  // ordinal 5: carries 12 over
  std::vector<int64_t> snaps;
  for (const Snapshot* s : t->metadata()->Ancestors(*t->metadata()->current_snapshot_id))
    snaps.insert(snaps.begin(), s->snapshot_id);
  ASSERT_EQ(snaps.size(), 7u);
  cdc::ChangelogOptions net;
  net.net_changes = true;
  auto log = cdc::ReadChangelog(*t, start, std::nullopt, net);
  ASSERT_THAT(log, IsOk());
  ASSERT_GT((*log)->num_rows(), 0);
  auto flat = (*log)->CombineChunks().ValueOrDie();
  auto column = [&](const char* name) { return flat->GetColumnByName(name)->chunk(0); };
  auto id = std::static_pointer_cast<arrow::Int64Array>(column("id"));
  auto type = std::static_pointer_cast<arrow::StringArray>(column("_change_type"));
  auto ord = std::static_pointer_cast<arrow::Int32Array>(column("_change_ordinal"));
  auto snap = std::static_pointer_cast<arrow::Int64Array>(column("_commit_snapshot_id"));
  std::set<std::tuple<int64_t, std::string, int32_t, int64_t>> got;
  for (int64_t r = 0; r < flat->num_rows(); ++r)
    got.insert({id->Value(r), type->GetString(r), ord->Value(r), snap->Value(r)});
  std::set<std::tuple<int64_t, std::string, int32_t, int64_t>> want = {
      {10, "INSERT", 0, snaps[1]}, {0, "DELETE", 3, snaps[4]}, {12, "INSERT", 5, snaps[6]}};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace skade
