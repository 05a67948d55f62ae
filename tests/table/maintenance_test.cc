// Compaction, manifest rewrite, snapshot expiry and orphan files.
#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "skade/io/file_io.h"
#include "skade/table/scan.h"
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

}  // namespace
}  // namespace skade
