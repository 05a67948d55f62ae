// Every write path emits exactly one lineage event, minted inside the commit's
// transaction (stored in its commit-log row) and handed to the sinks afterwards.
#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "skade/io/file_io.h"
#include "skade/lineage/lineage_recorder.h"
#include "skade/lineage/lineage_scope.h"
#include "skade/table/scan.h"
#include "skade/table/schema_update.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/temp_dir.h"

namespace skade::lineage {
namespace {

using skade::testing::IsOk;

std::shared_ptr<arrow::Table> Rows(const std::string& ids, const std::string& values) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("v", arrow::utf8())});
  return arrow::Table::Make(schema, {arrow::json::ArrayFromJSONString(arrow::int64(), ids).ValueOrDie(),
                                     arrow::json::ArrayFromJSONString(arrow::utf8(), values).ValueOrDie()});
}

DatasetRef Out(const std::string& table, std::optional<int64_t> snapshot) {
  return DatasetRef{table, snapshot, std::nullopt};
}

class LineageEmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    recorder_ = std::make_unique<LineageRecorder>(*cat_, LineageRecorder::Options{"tester", 100});
    recorder_->AddSink(sink_);
    ASSERT_THAT(cat_->CreateNamespace("t"), IsOk());
  }
  std::unique_ptr<Table> Create(const std::string& name) {
    auto schema = ParseSchemaSpec("id:long!, v:string");
    Schema keyed(0, schema->fields(), {1});
    EXPECT_THAT(cat_->CreateTable({"t", name}, keyed, PartitionSpec(), {}), IsOk());
    return std::move(*Table::Load(*cat_, {"t", name}));
  }
  // The one event emitted since the last call, checked against its commit-log row.
  LineageEvent OnlyNewEvent() {
    auto events = sink_->events();
    sink_->Clear();
    EXPECT_EQ(events.size(), 1u);
    if (events.size() != 1) return {};
    auto logged = EventsFromLog(*cat_, *events[0].commit_seq - 1);
    EXPECT_THAT(logged, IsOk());
    EXPECT_FALSE(logged->empty());
    if (!logged->empty()) EXPECT_EQ(logged->front(), events[0]);
    return events[0];
  }

  skade::testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  std::shared_ptr<CapturingSink> sink_ = std::make_shared<CapturingSink>();
  std::unique_ptr<LineageRecorder> recorder_;
};

TEST_F(LineageEmissionTest, EveryWritePathEmitsOneEvent) {
  auto t = Create("a");
  LineageEvent created = OnlyNewEvent();
  EXPECT_EQ(created.operation, op::kCreate);
  EXPECT_EQ(created.actor, "tester");
  EXPECT_EQ(created.outputs, std::vector{Out("t.a", std::nullopt)});

  AppendOptions opts;
  opts.provenance.actor = "loader";
  opts.provenance.inputs = {CommitInput{"spark", "raw.clicks", 42, "spark"}};
  auto appended = t->Append(Rows("[1,2]", R"(["x","y"])"), opts);
  ASSERT_THAT(appended, IsOk());
  LineageEvent append = OnlyNewEvent();
  EXPECT_EQ(append.operation, op::kAppend);
  EXPECT_EQ(append.actor, "loader");
  EXPECT_EQ(append.commit_seq, appended->commit_seq);
  EXPECT_EQ(append.outputs, std::vector{Out("t.a", appended->snapshot_id)});
  ASSERT_EQ(append.inputs.size(), 1u);
  EXPECT_EQ(append.inputs[0].Key(), "spark:raw.clicks");
  EXPECT_EQ(append.inputs[0].snapshot_id, 42);

  auto upserted = t->Upsert(Rows("[2]", R"(["z"])"));
  ASSERT_THAT(upserted, IsOk());
  LineageEvent upsert = OnlyNewEvent();
  EXPECT_EQ(upsert.operation, op::kUpsert);
  EXPECT_EQ(upsert.actor, "tester");
  EXPECT_EQ(upsert.outputs, std::vector{Out("t.a", upserted->snapshot_id)});
  EXPECT_TRUE(upsert.inputs.empty()) << "an upsert reading its own keys is no input";

  auto overwritten = t->Overwrite(Rows("[3]", R"(["w"])"), "id = 1");
  ASSERT_THAT(overwritten, IsOk());
  EXPECT_EQ(OnlyNewEvent().operation, op::kOverwrite);

  auto deleted = t->Delete("id = 3");
  ASSERT_THAT(deleted, IsOk());
  LineageEvent del = OnlyNewEvent();
  EXPECT_EQ(del.operation, op::kDelete);
  EXPECT_EQ(del.commit_seq, deleted->commit_seq);

  ASSERT_THAT(t->DeleteKeys(Rows("[2]", R"([null])")), IsOk());
  EXPECT_EQ(OnlyNewEvent().operation, op::kDelete);

  SchemaUpdate update;
  update.AddColumn("note", Type::Primitive(TypeId::kString));
  auto evolved = t->UpdateSchema(update);
  ASSERT_THAT(evolved, IsOk());
  EXPECT_EQ(OnlyNewEvent().operation, op::kSchemaChange);

  ASSERT_THAT(t->Compact(std::nullopt), IsOk());
  EXPECT_EQ(OnlyNewEvent().operation, op::kMaintenance);
  ASSERT_THAT(t->ExpireSnapshots(NowMs() + 1000, 1), IsOk());
  EXPECT_EQ(OnlyNewEvent().operation, op::kMaintenance);

  ASSERT_THAT(cat_->RenameTable({"t", "a"}, {"t", "b"}), IsOk());
  LineageEvent renamed = OnlyNewEvent();
  EXPECT_EQ(renamed.operation, op::kRename);
  EXPECT_EQ(renamed.outputs, std::vector{Out("t.b", std::nullopt)});
  EXPECT_EQ(renamed.inputs, std::vector{Out("t.a", std::nullopt)});

  ASSERT_THAT(cat_->DropTable({"t", "b"}), IsOk());
  EXPECT_EQ(OnlyNewEvent().operation, op::kDrop);
}

TEST_F(LineageEmissionTest, MultiTableReleaseIsOneEventNamingEveryOutput) {
  auto a = Create("a");
  auto b = Create("b");
  sink_->Clear();
  auto sa = a->StageAppend(Rows("[1]", R"(["x"])"));
  auto sb = b->StageAppend(Rows("[2]", R"(["y"])"));
  ASSERT_THAT(sa, IsOk());
  ASSERT_THAT(sb, IsOk());
  std::vector<std::pair<Table*, StagedAppend>> release{{a.get(), *sa}, {b.get(), *sb}};
  auto committed = CommitAppends(release);
  ASSERT_THAT(committed, IsOk());
  LineageEvent e = OnlyNewEvent();
  EXPECT_EQ(e.operation, op::kRelease);
  EXPECT_EQ(e.outputs, (std::vector{Out("t.a", (*committed)[0].snapshot_id), Out("t.b", (*committed)[1].snapshot_id)}));
  EXPECT_EQ(e.commit_seq, (*committed)[1].commit_seq);
}

TEST_F(LineageEmissionTest, ScopeRecordsScannedTablesAsInputs) {
  auto raw = Create("raw");
  auto clean = Create("clean");
  ASSERT_THAT(raw->Append(Rows("[1]", R"(["x"])")), IsOk());
  int64_t raw_snapshot = *raw->metadata()->current_snapshot_id;
  sink_->Clear();
  {
    LineageScope scope("cleaner", {DatasetRef{"orders", std::nullopt, SystemRef{"kafka", "kafka://broker:9092"}}});
    auto rows = raw->NewScan().ToTable();
    ASSERT_THAT(rows, IsOk());
    ASSERT_THAT(clean->Append(*rows), IsOk());
  }
  LineageEvent e = OnlyNewEvent();
  EXPECT_EQ(e.actor, "cleaner");
  EXPECT_EQ(e.inputs, (std::vector{DatasetRef{"orders", std::nullopt, SystemRef{"kafka", "kafka://broker:9092"}},
                                   Out("t.raw", raw_snapshot)}));
  // Outside the scope, reads are no longer recorded.
  ASSERT_THAT(raw->NewScan().ToTable(), IsOk());
  ASSERT_THAT(clean->Append(Rows("[2]", R"(["y"])")), IsOk());
  EXPECT_TRUE(OnlyNewEvent().inputs.empty());
}

TEST_F(LineageEmissionTest, CommitsWithoutRecorderStoreNoEvent) {
  recorder_.reset();
  auto t = Create("quiet");
  ASSERT_THAT(t->Append(Rows("[1]", R"(["x"])")), IsOk());
  auto logged = EventsFromLog(*cat_, 0);
  ASSERT_THAT(logged, IsOk());
  EXPECT_TRUE(logged->empty());
}

TEST(DatasetRefTest, ParsesCliNames) {
  auto local = ParseDatasetRef("sales.orders@17");
  ASSERT_THAT(local, IsOk());
  EXPECT_EQ(local->table, "sales.orders");
  EXPECT_EQ(local->snapshot_id, 17);
  EXPECT_FALSE(local->system);
  auto spark = ParseDatasetRef("spark:gold.revenue");
  ASSERT_THAT(spark, IsOk());
  EXPECT_EQ(spark->Key(), "spark:gold.revenue");
  EXPECT_THAT(ParseDatasetRef("orders"), skade::testing::IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseDatasetRef("a.b@x"), skade::testing::IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseDatasetRef(":x"), skade::testing::IsError(ErrorKind::kInvalidArgument));
}

TEST(LineageEventJsonTest, RoundTripsEveryField) {
  LineageEvent e{NewEventId(), "job", "append", {DatasetRef{"a.b", 1, std::nullopt}},
                 {DatasetRef{"x", std::nullopt, SystemRef{"spark", "spark://h"}}}, 1700000000123, 9,
                 "0190c0de-0000-7000-8000-000000000000", JobRef{"ns", "name"}, "{\"raw\":1}"};
  auto back = LineageEventFromJson(ToJson(e));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, e);
  EXPECT_THAT(LineageEventFromJson("{\"event_id\":1}"), skade::testing::IsError(ErrorKind::kCorrupt));
}

TEST(LineageEventIdTest, IdsAreUniqueAndTimeOrdered) {
  std::string previous = NewEventId();
  EXPECT_EQ(previous[14], '7');
  for (int i = 0; i < 1000; ++i) {
    std::string next = NewEventId();
    EXPECT_NE(next, previous);
    EXPECT_LE(previous.substr(0, 13), next.substr(0, 13)) << "the millisecond prefix never goes back";
    previous = next;
  }
}

}  // namespace
}  // namespace skade::lineage
