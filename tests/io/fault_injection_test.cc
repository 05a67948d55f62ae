// The fault-injecting FileIO drives crash checks without processes: a write path
// that fails at its Nth file leaves the table exactly as it was (or committed in
// full), every snapshot readable, no reference to a missing file, and orphans only
// among unreferenced files.
#include "skade/io/fault_injecting_file_io.h"

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "skade/table/scan.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsOk;
using testing::Row;

std::vector<std::string> Rows(Table& t, const Schema& s) {
  auto table = t.NewScan().ToTable();
  EXPECT_THAT(table, IsOk());
  std::vector<std::string> out;
  for (const auto& r : testing::FromArrow(**table, s.fields())) out.push_back(testing::RowToString(r, s.fields()));
  std::sort(out.begin(), out.end());
  return out;
}

// Every file the metadata references exists; returns the referenced set.
std::set<std::string> CheckReferences(Catalog& cat, Table& t) {
  std::set<std::string> refs{LocalPath(t.metadata_location())};
  const TableMetadata& m = *t.metadata();
  for (const auto& s : m.snapshots) {
    EXPECT_TRUE(std::filesystem::exists(LocalPath(s.manifest_list))) << s.manifest_list;
    refs.insert(LocalPath(s.manifest_list));
    auto list = ReadManifestList(*cat.io().ReadFile(s.manifest_list));
    EXPECT_THAT(list, IsOk());
    for (const auto& mf : *list) {
      EXPECT_TRUE(std::filesystem::exists(LocalPath(mf.manifest_path))) << mf.manifest_path;
      refs.insert(LocalPath(mf.manifest_path));
      auto entries = ReadManifest(*cat.io().ReadFile(mf.manifest_path), mf, *m.schema(), *m.SpecById(mf.partition_spec_id));
      EXPECT_THAT(entries, IsOk());
      for (const auto& e : *entries) {
        refs.insert(LocalPath(e.data_file.file_path));
        if (e.status != EntryStatus::kDeleted)
          EXPECT_TRUE(std::filesystem::exists(LocalPath(e.data_file.file_path))) << e.data_file.file_path;
      }
    }
    // Every snapshot scans.
    EXPECT_THAT(t.NewScan().UseSnapshot(s.snapshot_id).ToTable(), IsOk());
  }
  for (const auto& e : m.metadata_log) refs.insert(LocalPath(e.metadata_file));
  return refs;
}

TEST(FaultInjectionTest, FailedWritesNeverCorruptTheTable) {
  testing::RandomData d(99);
  Schema schema(0, {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                    NestedField{2, "grp", false, Type::Primitive(TypeId::kString), ""},
                    NestedField{3, "v", false, Type::Primitive(TypeId::kDouble), ""}},
                {1});
  int failures = 0, successes = 0;
  for (int op = 0; op < 5; ++op) {
    for (int n = 1; n <= 6; ++n) {
      for (bool after_write : {false, true}) {
        testing::TempDir dir;
        auto io = std::make_unique<FaultInjectingFileIO>(MakeLocalFileIO());
        FaultInjectingFileIO* faults = io.get();
        auto cat = std::move(*Catalog::Create(dir.path(), "skade", std::move(io)));
        ASSERT_THAT(cat->CreateNamespace("f"), IsOk());
        ASSERT_THAT(cat->CreateTable({"f", "t"}, schema, *ParsePartitionSpec("grp", schema),
                                     {{"write.delete.mode", op % 2 ? "copy-on-write" : "merge-on-read"}}),
                    IsOk());
        auto t = std::move(*Table::Load(*cat, {"f", "t"}));
        std::vector<Row> rows;
        for (int i = 0; i < 60; ++i) {
          Row r = d.RandomRow(schema, 0.1);
          r[0].value = Value{static_cast<int64_t>(i)};
          r[1].null = false;
          r[1].value = Value{std::string(1, static_cast<char>('a' + i % 3))};
          rows.push_back(r);
        }
        ASSERT_THAT(t->Append(testing::ToArrow(schema, {rows.begin(), rows.begin() + 30})), IsOk());
        ASSERT_THAT(t->Append(testing::ToArrow(schema, {rows.begin() + 30, rows.end()})), IsOk());
        auto before = Rows(*t, schema);
        std::string before_location = t->metadata_location();

        faults->FailWriteAt(n, after_write);
        Result<CommitResult> res;
        std::vector<Row> more(rows.begin(), rows.begin() + 5);
        for (auto& r : more) r[2].value = Value{-1.0};
        switch (op) {
          case 0: res = t->Append(testing::ToArrow(schema, more)); break;
          case 1: res = t->Delete("v > 0 or id < 10"); break;
          case 2: res = t->Upsert(testing::ToArrow(schema, more)); break;
          case 3: res = t->Compact(std::nullopt); break;
          default: res = t->Overwrite(testing::ToArrow(schema, more), std::string("grp = 'a'")); break;
        }
        faults->FailWriteAt(0);
        auto fresh = Table::Load(*cat, {"f", "t"});
        ASSERT_THAT(fresh, IsOk());
        if (!res) {
          ++failures;
          EXPECT_EQ(res.error().kind, ErrorKind::kIoError) << res.error().ToString();
          // Nothing committed: same metadata, same rows.
          EXPECT_EQ((*fresh)->metadata_location(), before_location) << "op " << op << " n " << n;
          EXPECT_EQ(Rows(**fresh, schema), before);
        } else {
          ++successes;
        }
        auto refs = CheckReferences(*cat, **fresh);
        auto orphans = (*fresh)->OrphanFiles(NowMs() + 1000, false);
        ASSERT_THAT(orphans, IsOk());
        for (const auto& o : *orphans) EXPECT_FALSE(refs.contains(o)) << "orphan is referenced: " << o;
        ASSERT_THAT((*fresh)->OrphanFiles(NowMs() + 1000, true), IsOk());
        CheckReferences(*cat, **fresh);
      }
    }
  }
  EXPECT_GT(failures, 20);
  EXPECT_GT(successes, 0);
}

}  // namespace
}  // namespace skade
