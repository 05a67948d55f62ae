// The warehouse sink stores events in `_skade.lineage_events`: batched, caught up
// from the commit log, each event once, and never emitting lineage about itself.
#include "skade/lineage/warehouse_sink.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "skade/lineage/lineage_recorder.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/temp_dir.h"

namespace skade::lineage {
namespace {

using skade::testing::IsOk;

std::shared_ptr<arrow::Table> OneRow(int64_t id) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false)});
  return arrow::Table::Make(schema, {arrow::json::ArrayFromJSONString(arrow::int64(), "[" + std::to_string(id) + "]").ValueOrDie()});
}

class WarehouseSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    ASSERT_THAT(cat_->CreateNamespace("t"), IsOk());
  }
  // Attaches a recorder with a capturing and (optionally) a warehouse sink.
  void Attach(bool warehouse, size_t batch_size = 100) {
    recorder_ = std::make_unique<LineageRecorder>(*cat_, LineageRecorder::Options{"tester", batch_size});
    recorder_->AddSink(captured_);
    if (warehouse) recorder_->AddSink(std::make_shared<WarehouseSink>(*cat_));
  }
  void CreateAndAppend(const std::string& name, int appends) {
    ASSERT_THAT(cat_->CreateTable({"t", name}, *ParseSchemaSpec("id:long!"), PartitionSpec(), {}), IsOk());
    auto table = Table::Load(*cat_, {"t", name});
    for (int i = 0; i < appends; ++i) ASSERT_THAT((*table)->Append(OneRow(i)), IsOk());
  }
  std::vector<LineageEvent> Stored() {
    auto events = ReadStoredEvents(*cat_);
    EXPECT_THAT(events, IsOk());
    return events ? *events : std::vector<LineageEvent>{};
  }

  skade::testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  std::shared_ptr<CapturingSink> captured_ = std::make_shared<CapturingSink>();
  std::unique_ptr<LineageRecorder> recorder_;
};

TEST_F(WarehouseSinkTest, StoresEveryEventOnceAndNothingAboutItself) {
  Attach(true);
  CreateAndAppend("a", 3);
  EXPECT_TRUE(Stored().empty()) << "batched: nothing lands before a flush";
  ASSERT_THAT(recorder_->Flush(), IsOk());
  ASSERT_THAT(recorder_->Flush(), IsOk());
  EXPECT_EQ(Stored(), captured_->events());
  EXPECT_EQ(Stored().size(), 4u);
  auto log = cat_->CommitsSince(0, LineageEventsTable());
  ASSERT_THAT(log, IsOk());
  ASSERT_FALSE(log->empty());
  for (const auto& row : *log) EXPECT_TRUE(row.lineage_event.empty()) << "event about _skade at " << row.commit_seq;
}

TEST_F(WarehouseSinkTest, FlushesWhenTheBatchIsFull) {
  Attach(true, 2);
  CreateAndAppend("a", 1);
  EXPECT_EQ(Stored().size(), 2u);
  auto table = Table::Load(*cat_, LineageEventsTable());
  ASSERT_THAT(table, IsOk());
  EXPECT_EQ((*table)->metadata()->snapshots.size(), 1u) << "two events, one append";
}

TEST_F(WarehouseSinkTest, CatchesUpFromTheCommitLogAfterALostFlush) {
  // Commits whose process died before the sink flushed: their events are only in the log.
  Attach(false);
  CreateAndAppend("a", 2);
  auto minted = captured_->events();
  recorder_.reset();
  Attach(true);
  ASSERT_THAT(recorder_->Flush(), IsOk());
  EXPECT_EQ(Stored(), minted);
  // A second process catching up finds nothing left to deliver.
  auto again = std::make_shared<WarehouseSink>(*cat_);
  ASSERT_THAT(again->Flush(), IsOk());
  EXPECT_EQ(Stored(), minted);
  auto through = again->DeliveredThrough();
  ASSERT_THAT(through, IsOk());
  EXPECT_EQ(**through, *minted.back().commit_seq);
}

TEST_F(WarehouseSinkTest, IngestedEventsAreDeduplicatedByEventId) {
  WarehouseSink sink(*cat_);
  LineageEvent spark{NewEventId(), "spark", std::string(op::kExternal),
                     {DatasetRef{"t.a", std::nullopt, std::nullopt}},
                     {DatasetRef{"gold.revenue", std::nullopt, SystemRef{"spark", "spark://cluster"}}},
                     1700000000000, std::nullopt, "0190c0de-0000-7000-8000-000000000001", JobRef{"spark", "agg"},
                     "{}"};
  ASSERT_THAT(sink.Write({spark, spark}), IsOk());
  ASSERT_THAT(sink.Flush(), IsOk());
  ASSERT_THAT(sink.Write({spark}), IsOk());
  ASSERT_THAT(sink.Flush(), IsOk());
  EXPECT_EQ(Stored(), std::vector{spark});
}

}  // namespace
}  // namespace skade::lineage
