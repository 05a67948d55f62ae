// Compaction, manifest rewrite, snapshot expiry and orphan files.
#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "skade/io/file_io.h"
#include "skade/table/scan.h"
#include "skade/table/snapshot_producer.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsOk;
using testing::Row;

class MaintenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    ASSERT_THAT(cat_->CreateNamespace("m"), IsOk());
    schema_ = Schema(0, {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
                         NestedField{2, "v", false, Type::Primitive(TypeId::kString), ""}},
                     {1});
    ASSERT_THAT(cat_->CreateTable({"m", "t"}, schema_, PartitionSpec(), {}), IsOk());
    t_ = std::move(*Table::Load(*cat_, {"m", "t"}));
  }
  void AppendIds(int from, int to) {
    std::vector<Row> rows;
    for (int i = from; i < to; ++i) {
      Row r(2);
      r[0].value = Value{static_cast<int64_t>(i)};
      r[1].value = Value{"v" + std::to_string(i)};
      rows.push_back(r);
    }
    ASSERT_THAT(t_->Append(testing::ToArrow(schema_, rows)), IsOk());
  }
  int64_t Count() { return (*t_->NewScan().ToTable())->num_rows(); }
  int64_t Summary(const char* key) {
    const auto& s = t_->metadata()->CurrentSnapshot()->summary;
    auto it = s.find(key);
    return it == s.end() ? 0 : std::stoll(it->second);
  }

  testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  Schema schema_;
  std::unique_ptr<Table> t_;
};

TEST_F(MaintenanceTest, CompactionFoldsDeletesAndKeepsRows) {
  for (int i = 0; i < 5; ++i) AppendIds(i * 20, i * 20 + 20);
  ASSERT_THAT(t_->Delete("id % 1 = 0 and id < 10"), ::testing::Not(IsOk()));  // no modulo in the language
  ASSERT_THAT(t_->Delete("id < 10 or id = 55"), IsOk());
  std::vector<Row> keys(1, Row(2));
  keys[0][0].value = Value{int64_t{70}};
  keys[0][1].null = true;
  ASSERT_THAT(t_->DeleteKeys(testing::ToArrow(schema_, keys)), IsOk());
  EXPECT_GT(Summary("total-delete-files"), 0);
  auto before = *t_->NewScan().ToTable();
  auto res = t_->Compact(std::nullopt);
  ASSERT_THAT(res, IsOk());
  EXPECT_EQ(t_->metadata()->CurrentSnapshot()->operation(), "replace");
  EXPECT_EQ(Summary("total-data-files"), 1);
  EXPECT_EQ(Summary("total-delete-files"), 0);
  EXPECT_EQ(Summary("total-records"), 88);
  auto after = *t_->NewScan().ToTable();
  EXPECT_EQ(after->num_rows(), before->num_rows());
  EXPECT_EQ(after->num_rows(), 88);
  // Nothing left to do the second time.
  auto again = t_->Compact(std::nullopt);
  ASSERT_THAT(again, IsOk());
  EXPECT_FALSE(again->committed);
}

TEST_F(MaintenanceTest, RewriteManifestsMergesThem) {
  for (int i = 0; i < 6; ++i) AppendIds(i * 10, i * 10 + 10);
  auto list = [&] {
    return *ReadManifestList(*cat_->io().ReadFile(t_->metadata()->CurrentSnapshot()->manifest_list));
  };
  EXPECT_EQ(list().size(), 6u);
  ASSERT_THAT(t_->RewriteManifests(), IsOk());
  EXPECT_EQ(list().size(), 1u);
  EXPECT_EQ(list()[0].existing_files_count, 6);
  EXPECT_EQ(Count(), 60);
}

// Each manifest a commit writes is a synced file: a rewrite writes one per (content,
// spec), not one per manifest it touched, unless one would outgrow the target size.
TEST_F(MaintenanceTest, CompactionWritesOneManifestPerContent) {
  auto list = [&] {
    return *ReadManifestList(*cat_->io().ReadFile(t_->metadata()->CurrentSnapshot()->manifest_list));
  };
  auto compact_and_count = [&](int64_t* data_manifests, int64_t* delete_manifests) {
    for (int i = 0; i < 6; ++i) AppendIds(i * 10, i * 10 + 10);
    ASSERT_THAT(t_->Delete("id = 5 or id = 15 or id = 25"), IsOk());
    ASSERT_THAT(t_->Compact(std::nullopt), IsOk());
    EXPECT_EQ(Count(), 57);
    *data_manifests = *delete_manifests = 0;
    int64_t deleted_data = 0, deleted_deletes = 0;
    for (const auto& mf : list()) {
      if (mf.added_files_count > 0) continue;  // the compacted file
      EXPECT_EQ(mf.existing_files_count, 0);
      (mf.content == 0 ? *data_manifests : *delete_manifests) += 1;
      (mf.content == 0 ? deleted_data : deleted_deletes) += mf.deleted_files_count;
    }
    EXPECT_EQ(deleted_data, 6);
    EXPECT_EQ(deleted_deletes, Summary("removed-delete-files"));
    EXPECT_GT(deleted_deletes, 0);
  };
  int64_t data = 0, deletes = 0;
  compact_and_count(&data, &deletes);
  EXPECT_EQ(data, 1);
  EXPECT_EQ(deletes, 1);

  // A target smaller than any manifest splits each group into one manifest per file;
  // zero reads as the smallest target.
  for (const char* target : {"1", "0"}) {
    SCOPED_TRACE(target);
    ASSERT_THAT(cat_->CreateTable({"m", std::string("small") + target}, schema_, PartitionSpec(),
                                  {{"commit.manifest.target-size-bytes", target}}),
                IsOk());
    t_ = std::move(*Table::Load(*cat_, {"m", std::string("small") + target}));
    compact_and_count(&data, &deletes);
    EXPECT_EQ(data, 6);
    EXPECT_EQ(deletes, Summary("removed-delete-files"));
  }
}

TEST_F(MaintenanceTest, ExpireKeepsRefsAndDeletesOnlyUnreferencedFiles) {
  AppendIds(0, 10);
  ASSERT_THAT(t_->CreateRef("first", "tag", std::nullopt), IsOk());
  int64_t tagged = *t_->metadata()->current_snapshot_id;
  AppendIds(10, 20);
  ASSERT_THAT(t_->Delete("id >= 10 and id < 20"), IsOk());  // drops the second file whole
  AppendIds(20, 30);
  AppendIds(30, 40);
  auto res = t_->ExpireSnapshots(std::nullopt, 2);
  ASSERT_THAT(res, IsOk());
  EXPECT_EQ(res->expired_snapshots.size(), 2u);  // 5 snapshots: keep last 2 + the tag
  EXPECT_EQ(t_->metadata()->snapshots.size(), 3u);
  EXPECT_NE(t_->metadata()->SnapshotById(tagged), nullptr);
  EXPECT_FALSE(res->deleted_files.empty());
  for (const auto& f : res->deleted_files) EXPECT_FALSE(std::filesystem::exists(f)) << f;
  // Every remaining snapshot still scans; current rows unchanged.
  for (const auto& s : t_->metadata()->snapshots) EXPECT_THAT(t_->NewScan().UseSnapshot(s.snapshot_id).ToTable(), IsOk());
  EXPECT_EQ(Count(), 30);
  EXPECT_EQ((*t_->NewScan().UseRef("first").ToTable())->num_rows(), 10);
  // The expired snapshots' files that are gone leave no orphans behind them.
  auto orphans = t_->OrphanFiles(NowMs() + 1000, false);
  ASSERT_THAT(orphans, IsOk());
  for (const auto& o : *orphans) EXPECT_EQ(o.find(".parquet"), std::string::npos) << o;
}

TEST_F(MaintenanceTest, OrphansRespectTheirAge) {
  AppendIds(0, 10);
  std::string stray = LocalPath(t_->metadata()->location) + "/data/stray.parquet";
  std::ofstream(stray) << "junk";
  auto young = t_->OrphanFiles(NowMs() - 60000, false);
  ASSERT_THAT(young, IsOk());
  EXPECT_TRUE(young->empty());  // too new: could be an in-flight writer's
  auto old = t_->OrphanFiles(NowMs() + 1000, true);
  ASSERT_THAT(old, IsOk());
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0], stray);
  EXPECT_FALSE(std::filesystem::exists(stray));
  EXPECT_EQ(Count(), 10);
}


// Rows of `t` as sorted "id:v" strings.
std::vector<std::string> IdValues(const Table& t) {
  auto table = *t.NewScan().ToTable();
  auto batch = *table->CombineChunksToBatch();
  const auto& ids = static_cast<const arrow::Int64Array&>(*batch->column(0));
  const auto& vs = static_cast<const arrow::StringArray&>(*batch->column(1));
  std::vector<std::string> out;
  for (int64_t r = 0; r < batch->num_rows(); ++r) out.push_back(std::to_string(ids.Value(r)) + ":" + vs.GetString(r));
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(MaintenanceTest, CompactionFoldsEqualityDeletesAway) {
  ASSERT_THAT(cat_->CreateTable({"m", "eq"}, schema_, PartitionSpec(), {{kEqualityDeletesProperty, "true"}}),
              IsOk());
  auto t = std::move(*Table::Load(*cat_, {"m", "eq"}));
  auto rows = [&](int from, int to, const std::string& v) {
    std::vector<Row> out;
    for (int i = from; i < to; ++i) {
      Row r(2);
      r[0].value = Value{static_cast<int64_t>(i)};
      r[1].value = Value{v + std::to_string(i)};
      out.push_back(r);
    }
    return testing::ToArrow(schema_, out);
  };
  ASSERT_THAT(t->Append(rows(0, 30, "a")), IsOk());
  ASSERT_THAT(t->Append(rows(30, 60, "a")), IsOk());
  ASSERT_THAT(t->Upsert(rows(25, 35, "u")), IsOk());
  ASSERT_THAT(t->DeleteKeys(rows(0, 5, "")), IsOk());
  const auto& s = t->metadata()->CurrentSnapshot()->summary;
  ASSERT_EQ(s.at("total-equality-deletes"), "15");
  ASSERT_EQ(s.at("total-position-deletes"), "0");
  auto before = IdValues(*t);
  ASSERT_EQ(before.size(), 55u);
  EXPECT_TRUE(std::ranges::binary_search(before, std::string("25:u25")));
  EXPECT_FALSE(std::ranges::binary_search(before, std::string("25:a25")));
  EXPECT_FALSE(std::ranges::binary_search(before, std::string("3:a3")));
  ASSERT_THAT(t->Compact(std::nullopt), IsOk());
  const auto& after = t->metadata()->CurrentSnapshot()->summary;
  EXPECT_EQ(after.at("total-delete-files"), "0");
  EXPECT_EQ(after.at("total-equality-deletes"), "0");
  EXPECT_EQ(IdValues(*t), before);
}

// A rewrite that read the table before a commit deleted rows of its files must not
// commit over that delete (the rows would come back).
TEST_F(MaintenanceTest, RewriteConflictsWithDeletesCommittedSinceItRead) {
  AppendIds(0, 20);
  AppendIds(20, 40);
  auto read = *t_->NewScan().Plan();
  int64_t read_snapshot = read.snapshot->snapshot_id;
  LoadedTable stale{t_->ident(), t_->metadata_location(), t_->metadata()};
  auto other = std::move(*Table::Load(*cat_, {"m", "t"}));
  ASSERT_THAT(other->Delete("id = 3"), IsOk());  // a position delete on the first file
  ASSERT_EQ(other->metadata()->CurrentSnapshot()->summary.at("added-position-delete-files"), "1");
  auto rewrite = [&](bool validate) {
    FileChange change;
    change.operation = "replace";
    for (const auto& task : read.tasks) change.removed.insert(task.file.file_path);
    if (validate) change.validate_no_new_deletes_since = read_snapshot;
    std::vector<std::pair<LoadedTable, FileChange>> changes;
    changes.emplace_back(stale, std::move(change));
    return CommitChanges(*cat_, std::move(changes));
  };
  EXPECT_THAT(rewrite(true), testing::IsErrorWith(ErrorKind::kCommitConflict, "deleted by a concurrent commit"));
  ASSERT_THAT(t_->Refresh(), IsOk());
  EXPECT_EQ(Count(), 39);
  // Compact itself re-reads and folds the delete in.
  ASSERT_THAT(t_->Compact(std::nullopt), IsOk());
  EXPECT_EQ(Count(), 39);
  EXPECT_EQ(Summary("total-delete-files"), 0);
}

// Position deletes computed against a file a concurrent commit removed are recomputed
// (here: the row is gone, so nothing is left to change).
TEST_F(MaintenanceTest, StaleKeyDeleteRecomputesWhenItsFileWasRemoved) {
  AppendIds(0, 20);
  AppendIds(20, 40);
  auto other = std::move(*Table::Load(*cat_, {"m", "t"}));
  ASSERT_THAT(other->Delete("id < 20"), IsOk());  // drops the first file in metadata only
  ASSERT_EQ(other->metadata()->CurrentSnapshot()->summary.at("deleted-data-files"), "1");
  ASSERT_EQ(other->metadata()->CurrentSnapshot()->summary.count("added-data-files"), 0u);
  std::vector<Row> keys(1, Row(2));
  keys[0][0].value = Value{int64_t{5}};
  keys[0][1].null = true;
  auto res = t_->DeleteKeys(testing::ToArrow(schema_, keys));  // t_ still sees the first file
  ASSERT_THAT(res, IsOk());
  EXPECT_FALSE(res->committed);
  EXPECT_EQ(Summary("total-delete-files"), 0);
  EXPECT_EQ(Count(), 20);
}

}  // namespace
}  // namespace skade
