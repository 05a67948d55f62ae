// A multi-hop pipeline (raw → clean → aggregate) written through skade, plus a Spark
// job reading the aggregate, ingested as OpenLineage: the graph, downstream and
// upstream sets at each depth, paths, systems and time windows.
#include "skade/lineage/lineage_graph.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "skade/lineage/lineage_recorder.h"
#include "skade/lineage/lineage_scope.h"
#include "skade/lineage/openlineage.h"
#include "skade/lineage/warehouse_sink.h"
#include "skade/table/scan.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/temp_dir.h"

namespace skade::lineage {
namespace {

using skade::testing::IsError;
using skade::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Keys(const std::vector<Reached>& reached, int depth) {
  std::vector<std::string> out;
  for (const auto& r : reached)
    if (r.depth == depth) out.push_back(r.key);
  return out;
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    recorder_ = std::make_unique<LineageRecorder>(*cat_, LineageRecorder::Options{"tester", 100});
    recorder_->AddSink(std::make_shared<WarehouseSink>(*cat_));
    for (const char* ns : {"raw", "clean", "mart"}) ASSERT_THAT(cat_->CreateNamespace(ns), IsOk());
    auto schema = *ParseSchemaSpec("id:long!, amount:double");
    for (TableIdent t : {TableIdent{"raw", "orders"}, TableIdent{"raw", "customers"}, TableIdent{"clean", "orders"},
                         TableIdent{"mart", "daily"}})
      ASSERT_THAT(cat_->CreateTable(t, schema, PartitionSpec(), {}), IsOk());
    auto rows = arrow::Table::Make(
        arrow::schema({arrow::field("id", arrow::int64(), false), arrow::field("amount", arrow::float64())}),
        {arrow::json::ArrayFromJSONString(arrow::int64(), "[1,2]").ValueOrDie(),
         arrow::json::ArrayFromJSONString(arrow::float64(), "[1.5,2.5]").ValueOrDie()});
    AppendOptions from_kafka;
    from_kafka.provenance.inputs = {CommitInput{"kafka", "orders", std::nullopt, "kafka://broker:9092"}};
    ASSERT_THAT(Load("raw.orders")->Append(rows, from_kafka), IsOk());
    ASSERT_THAT(Load("raw.customers")->Append(rows), IsOk());
    {
      LineageScope scope("cleaner");
      auto read = Load("raw.orders")->NewScan().ToTable();
      ASSERT_THAT(read, IsOk());
      ASSERT_THAT(Load("clean.orders")->Append(*read), IsOk());
    }
    {
      LineageScope scope("aggregator");
      auto orders = Load("clean.orders")->NewScan().ToTable();
      auto customers = Load("raw.customers")->NewScan().ToTable();
      ASSERT_THAT(orders, IsOk());
      ASSERT_THAT(customers, IsOk());
      ASSERT_THAT(Load("mart.daily")->Append(*orders), IsOk());
    }
    // Spark names the Iceberg table by its location, as its Iceberg integration does.
    std::string spark = R"({"eventType":"COMPLETE","eventTime":"2030-01-01T00:00:00Z",
      "producer":"https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark",
      "schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
      "run":{"runId":"0190c0de-0000-7000-8000-00000000abcd"},
      "job":{"namespace":"spark-prod","name":"revenue_app.execute_insert_into_hive_table.gold_revenue"},
      "inputs":[{"namespace":"file","name":")" + cat_->warehouse() + R"(/mart.db/daily"}],
      "outputs":[{"namespace":"hive://metastore:9083","name":"gold.revenue"}]})";
    RunEventMapper mapper(cat_->warehouse(), cat_.get());
    auto ingested = mapper.FromRunEvent(spark);
    ASSERT_THAT(ingested, IsOk());
    WarehouseSink sink(*cat_);
    ASSERT_THAT(sink.Write({*ingested}), IsOk());
    ASSERT_THAT(sink.Flush(), IsOk());
    ASSERT_THAT(recorder_->Flush(), IsOk());
    auto events = ReadStoredEvents(*cat_);
    ASSERT_THAT(events, IsOk());
    events_ = *events;
  }
  std::unique_ptr<Table> Load(const std::string& name) { return std::move(*Table::Load(*cat_, *TableIdent::Parse(name))); }

  skade::testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  std::unique_ptr<LineageRecorder> recorder_;
  std::vector<LineageEvent> events_;
};

TEST_F(PipelineTest, DownstreamAndUpstreamAtEachDepth) {
  LineageGraph g = LineageGraph::Build(events_);
  EXPECT_EQ(g.nodes().size(), 6u);  // kafka orders, 4 tables, gold.revenue
  auto down = g.Downstream("raw.orders");
  ASSERT_THAT(down, IsOk());
  EXPECT_THAT(Keys(*down, 1), ElementsAre("clean.orders"));
  EXPECT_THAT(Keys(*down, 2), ElementsAre("mart.daily"));
  EXPECT_THAT(Keys(*down, 3), ElementsAre("hive:gold.revenue"));
  EXPECT_EQ(down->size(), 3u);
  auto shallow = g.Downstream("raw.orders", 2);
  ASSERT_THAT(shallow, IsOk());
  EXPECT_EQ(shallow->size(), 2u);

  auto up = g.Upstream("hive:gold.revenue");
  ASSERT_THAT(up, IsOk());
  EXPECT_THAT(Keys(*up, 1), ElementsAre("mart.daily"));
  EXPECT_THAT(Keys(*up, 2), ElementsAre("clean.orders", "raw.customers"));
  EXPECT_THAT(Keys(*up, 3), ElementsAre("raw.orders"));
  EXPECT_THAT(Keys(*up, 4), ElementsAre("kafka:orders"));
  auto one = g.Upstream("hive:gold.revenue", 1);
  ASSERT_THAT(one, IsOk());
  EXPECT_EQ(one->size(), 1u);
  EXPECT_THAT(g.Downstream("nope.table"), IsError(ErrorKind::kNotFound));
}

TEST_F(PipelineTest, NodesEdgesPathsAndSystems) {
  LineageGraph g = LineageGraph::Build(events_);
  const GraphNode& daily = g.nodes().at("mart.daily");
  EXPECT_EQ(daily.last_writer, "aggregator");
  EXPECT_EQ(daily.latest_snapshot, Load("mart.daily")->metadata()->current_snapshot_id);
  auto edge = std::find_if(g.edges().begin(), g.edges().end(),
                           [](const GraphEdge& e) { return e.to == "hive:gold.revenue"; });
  ASSERT_NE(edge, g.edges().end());
  EXPECT_EQ(edge->from, "mart.daily");
  EXPECT_EQ(edge->job, "revenue_app.execute_insert_into_hive_table.gold_revenue");
  EXPECT_EQ(edge->count, 1);

  auto path = g.Path("kafka:orders", "hive:gold.revenue");
  ASSERT_THAT(path, IsOk());
  EXPECT_THAT(*path, ElementsAre("kafka:orders", "raw.orders", "clean.orders", "mart.daily", "hive:gold.revenue"));
  auto none = g.Path("hive:gold.revenue", "raw.orders");
  ASSERT_THAT(none, IsOk());
  EXPECT_TRUE(none->empty());

  auto systems = g.GroupBySystem();
  EXPECT_THAT(systems["hive"], ElementsAre("hive:gold.revenue"));
  EXPECT_THAT(systems["kafka"], ElementsAre("kafka:orders"));
  EXPECT_EQ(systems["skade"].size(), 4u);

  EXPECT_THAT(g.ToDot(), HasSubstr("label=\"hive\""));
  EXPECT_THAT(g.ToMermaid(), HasSubstr("flowchart LR"));
  EXPECT_THAT(g.ToJson(), HasSubstr("\"from\": \"mart.daily\""));
}

TEST_F(PipelineTest, TimeWindowAndSystemFilter) {
  // The Spark event is dated 2030: a window ending before it leaves it out.
  LineageGraph before = LineageGraph::Build(events_, GraphWindow{std::nullopt, *ParseTimestamp("2029-01-01T00:00:00Z"), std::nullopt});
  EXPECT_FALSE(before.nodes().contains("hive:gold.revenue"));
  EXPECT_TRUE(before.nodes().contains("mart.daily"));
  LineageGraph later = LineageGraph::Build(events_, GraphWindow{*ParseTimestamp("2029-01-01T00:00:00Z"), std::nullopt, std::nullopt});
  EXPECT_EQ(later.nodes().size(), 2u);
  LineageGraph kafka = LineageGraph::Build(events_, GraphWindow{std::nullopt, std::nullopt, "kafka"});
  EXPECT_EQ(kafka.edges().size(), 1u);
}

}  // namespace
}  // namespace skade::lineage
