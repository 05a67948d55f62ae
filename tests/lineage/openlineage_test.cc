// LineageEvent ↔ OpenLineage RunEvent: both directions keep every field we model,
// and bad RunEvents are rejected with the field they got wrong.
#include "skade/lineage/openlineage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "skade/lineage/lineage_graph.h"
#include "testing/matchers.h"

namespace skade::lineage {
namespace {

using skade::testing::IsErrorWith;
using skade::testing::IsOk;
using nlohmann::json;

constexpr const char* kWarehouse = "/data/wh";

// A Spark-style event: an Iceberg input named by location with its catalog symlink,
// a Hive output with a version, and facets skade does not model.
const char* kSparkEvent = R"({"eventType":"START","eventTime":"2026-03-01T10:00:00.250+01:00",
  "producer":"https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark",
  "schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
  "run":{"runId":"0190c0de-1111-7000-8000-000000000001","facets":{"processing_engine":{"_producer":"x","_schemaURL":"y","version":"3.5.6","name":"spark"}}},
  "job":{"namespace":"spark-prod","name":"app.execute_insert.gold_revenue"},
  "inputs":[{"namespace":"file","name":"/elsewhere/sales/orders","facets":{"symlinks":{"_producer":"x","_schemaURL":"y",
     "identifiers":[{"namespace":"file:/data/wh","name":"sales.orders","type":"TABLE"}]},
     "version":{"_producer":"x","_schemaURL":"y","datasetVersion":"42"}}},
    {"namespace":"postgres://db:5432","name":"crm.public.customers"}],
  "outputs":[{"namespace":"hive://metastore:9083","name":"gold.revenue","facets":{"version":{"_producer":"x","_schemaURL":"y","datasetVersion":"7"}}}]})";

TEST(OpenLineageTest, IngestedEventMapsDatasetsToSystems) {
  RunEventMapper mapper(kWarehouse, nullptr);
  auto e = mapper.FromRunEvent(kSparkEvent);
  ASSERT_THAT(e, IsOk());
  EXPECT_EQ(e->operation, op::kExternal);
  EXPECT_EQ(e->run_id, "0190c0de-1111-7000-8000-000000000001");
  EXPECT_EQ(e->job, (JobRef{"spark-prod", "app.execute_insert.gold_revenue"}));
  EXPECT_EQ(e->ts_ms, *ParseTimestamp("2026-03-01T09:00:00.250Z"));
  ASSERT_EQ(e->inputs.size(), 2u);
  EXPECT_EQ(e->inputs[0], (DatasetRef{"sales.orders", 42, std::nullopt})) << "joined to the skade table by symlink";
  EXPECT_EQ(e->inputs[1].Key(), "postgres:crm.public.customers");
  EXPECT_EQ(e->inputs[1].system->instance, "postgres://db:5432");
  EXPECT_EQ(e->outputs, std::vector{(DatasetRef{"gold.revenue", 7, SystemRef{"hive", "hive://metastore:9083"}})});
  ASSERT_TRUE(e->raw);
  // The same event ingested again gets the same id (deduplication by event_id).
  EXPECT_EQ(mapper.FromRunEvent(kSparkEvent)->event_id, e->event_id);
}

TEST(OpenLineageTest, RunEventToLineageEventToRunEventKeepsModeledFields) {
  RunEventMapper mapper(kWarehouse, nullptr);
  json original = json::parse(kSparkEvent);
  auto e = mapper.FromRunEvent(kSparkEvent);
  ASSERT_THAT(e, IsOk());
  json back = json::parse(mapper.ToRunEvent(*e));
  EXPECT_EQ(back["eventType"], original["eventType"]);
  EXPECT_EQ(*ParseTimestamp(back["eventTime"].get<std::string>()), *ParseTimestamp(original["eventTime"].get<std::string>()));
  EXPECT_EQ(back["run"]["runId"], original["run"]["runId"]);
  EXPECT_EQ(back["job"]["namespace"], original["job"]["namespace"]);
  EXPECT_EQ(back["job"]["name"], original["job"]["name"]);
  // The skade table comes back under skade's naming, with its catalog name as symlink.
  EXPECT_EQ(back["inputs"][0]["name"], "/data/wh/sales.db/orders");
  EXPECT_EQ(back["inputs"][0]["facets"]["symlinks"]["identifiers"][0]["name"], "sales.orders");
  EXPECT_EQ(back["inputs"][0]["facets"]["version"]["datasetVersion"], "42");
  EXPECT_EQ(back["inputs"][1]["namespace"], original["inputs"][1]["namespace"]);
  EXPECT_EQ(back["inputs"][1]["name"], original["inputs"][1]["name"]);
  EXPECT_EQ(back["outputs"][0]["namespace"], original["outputs"][0]["namespace"]);
  EXPECT_EQ(back["outputs"][0]["name"], original["outputs"][0]["name"]);
  EXPECT_EQ(back["outputs"][0]["facets"]["version"], (json{{"_producer", kSkadeProducer},
      {"_schemaURL", "https://openlineage.io/spec/facets/1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet"},
      {"datasetVersion", "7"}}));
  // And that RunEvent maps to the same LineageEvent again.
  auto again = mapper.FromRunEvent(back.dump());
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->inputs, e->inputs);
  EXPECT_EQ(again->outputs, e->outputs);
  EXPECT_EQ(again->ts_ms, e->ts_ms);
  EXPECT_EQ(again->job, e->job);
}

TEST(OpenLineageTest, SkadeEventRoundTripsExactly) {
  RunEventMapper mapper(kWarehouse, nullptr);
  LineageEvent e{NewEventId(), "nightly", std::string(op::kUpsert),
                 {DatasetRef{"raw.orders", 5, std::nullopt}, DatasetRef{"orders", std::nullopt, SystemRef{"kafka", "kafka://b:9092"}}},
                 {DatasetRef{"clean.orders", 6, std::nullopt}}, 1795968532189, 12, std::nullopt, std::nullopt, std::nullopt};
  auto back = mapper.FromRunEvent(mapper.ToRunEvent(e));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, e);
  json run_event = json::parse(mapper.ToRunEvent(e));
  EXPECT_EQ(run_event["run"]["runId"], e.event_id);
  EXPECT_EQ(run_event["job"]["name"], "nightly");
  EXPECT_EQ(run_event["eventType"], "COMPLETE");
}

TEST(OpenLineageTest, BadRunEventsNameTheProblem) {
  RunEventMapper mapper(kWarehouse, nullptr);
  json good = json::parse(kSparkEvent);
  auto without = [&](const json::json_pointer& ptr) {
    json j = good;
    j[ptr.parent_pointer()].erase(ptr.back());
    return j.dump();
  };
  auto with = [&](const json::json_pointer& ptr, json value) {
    json j = good;
    j[ptr] = std::move(value);
    return j.dump();
  };
  EXPECT_THAT(mapper.FromRunEvent("{\"eventTime\":"), IsErrorWith(ErrorKind::kInvalidArgument, "not valid JSON"));
  EXPECT_THAT(mapper.FromRunEvent("[1,2]"), IsErrorWith(ErrorKind::kInvalidArgument, "must be a JSON object"));
  EXPECT_THAT(mapper.FromRunEvent(without("/job/name"_json_pointer)), IsErrorWith(ErrorKind::kInvalidArgument, "missing job.name"));
  EXPECT_THAT(mapper.FromRunEvent(without("/run"_json_pointer)), IsErrorWith(ErrorKind::kInvalidArgument, "missing run"));
  EXPECT_THAT(mapper.FromRunEvent(without("/eventTime"_json_pointer)), IsErrorWith(ErrorKind::kInvalidArgument, "missing eventTime"));
  EXPECT_THAT(mapper.FromRunEvent(with("/run/runId"_json_pointer, 17)),
              IsErrorWith(ErrorKind::kInvalidArgument, "run.runId must be a string, got number"));
  EXPECT_THAT(mapper.FromRunEvent(with("/inputs"_json_pointer, "x")),
              IsErrorWith(ErrorKind::kInvalidArgument, "inputs must be an array"));
  EXPECT_THAT(mapper.FromRunEvent(with("/outputs/0/name"_json_pointer, json::array())),
              IsErrorWith(ErrorKind::kInvalidArgument, "outputs[0].name must be a string"));
  EXPECT_THAT(mapper.FromRunEvent(with("/eventTime"_json_pointer, "yesterday")),
              IsErrorWith(ErrorKind::kInvalidArgument, "eventTime 'yesterday'"));
  EXPECT_THAT(mapper.FromRunEvent(with("/eventType"_json_pointer, "DONE")),
              IsErrorWith(ErrorKind::kInvalidArgument, "eventType 'DONE'"));
  EXPECT_THAT(mapper.FromRunEvent(with("/outputs/0/name"_json_pointer, std::string(100000, 'x'))),
              IsErrorWith(ErrorKind::kInvalidArgument, "outputs[0].name is longer than"));
}

// One Spark-shaped event of application run `parent` (job `app`), as openlineage-spark
// 1.53.0 sends it through a REST catalog at http://localhost:8181.
std::string SparkRunEvent(const std::string& run_id, const std::string& job, const std::string& time,
                          const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                          const std::string& parent = "01a23127-a12b-7a05-96c1-1102e9abf41a") {
  auto dataset = [](const std::string& table) {
    auto dot = table.find('.');
    return json{{"namespace", "file"},
                {"name", std::string(kWarehouse) + "/" + table.substr(0, dot) + "/" + table.substr(dot + 1)},
                {"facets", {{"symlinks", {{"identifiers", {{{"namespace", "http://localhost:8181"},
                                                             {"name", table}, {"type", "TABLE"}}}}}}}}};
  };
  json e = {{"eventType", "COMPLETE"}, {"eventTime", time}, {"producer", "spark"}, {"schemaURL", "x"},
            {"run", {{"runId", run_id},
                     {"facets", {{"parent", {{"run", {{"runId", parent}}},
                                             {"job", {{"namespace", "spark-check"}, {"name", "app"}}}}}}}}},
            {"job", {{"namespace", "spark-check"}, {"name", job}}},
            {"inputs", json::array()}, {"outputs", json::array()}};
  for (const auto& t : inputs) e["inputs"].push_back(dataset(t));
  for (const auto& t : outputs) e["outputs"].push_back(dataset(t));
  return e.dump();
}

TEST(OpenLineageTest, SymlinkInThisServersCatalogNamesATableInAnyLayout) {
  std::string event = SparkRunEvent("r1", "app.append_data.shop_daily", "2026-12-01T10:30:16Z", {"shop.orders"},
                                    {"shop.daily"});
  RunEventMapper stranger(kWarehouse, nullptr);
  auto e = stranger.FromRunEvent(event);
  ASSERT_THAT(e, IsOk());
  // Another catalog's symlink, and a location in Spark's layout outside a catalog: a file.
  EXPECT_EQ(e->outputs[0].Key(), "file:/data/wh/shop/daily");

  RunEventMapper own(kWarehouse, nullptr);
  own.SetOwnCatalog([](std::string_view ns) { return SameCatalogUri("http://localhost:8181/", ns); });
  e = own.FromRunEvent(event);
  ASSERT_THAT(e, IsOk());
  EXPECT_EQ(e->inputs[0], (DatasetRef{"shop.orders", std::nullopt, std::nullopt}));
  EXPECT_EQ(e->outputs[0], (DatasetRef{"shop.daily", std::nullopt, std::nullopt}));

  // The warehouse folder as a Hadoop catalog names it: file: with one or three slashes.
  for (const char* ns : {"file:/data/wh", "file:///data/wh/"}) {
    json j = json::parse(event);
    j["outputs"][0]["facets"]["symlinks"]["identifiers"][0]["namespace"] = ns;
    e = stranger.FromRunEvent(j.dump());
    ASSERT_THAT(e, IsOk());
    EXPECT_EQ(e->outputs[0].Key(), "shop.daily") << ns;
  }
  EXPECT_TRUE(SameCatalogUri("http://h:1", "http://h:1/"));
  EXPECT_FALSE(SameCatalogUri("http://h:1", "http://h:2"));
}

TEST(OpenLineageTest, CommandResultIsFoldedIntoTheRunItCloses) {
  RunEventMapper mapper(kWarehouse, nullptr);
  mapper.SetOwnCatalog([](std::string_view ns) { return SameCatalogUri("http://localhost:8181", ns); });
  // A CTAS: the statement's run names the output, an inner run only the inputs, then
  // the closing command_result names all of them again under a run of its own.
  auto ctas = mapper.FromRunEvent(SparkRunEvent("ctas", "app.atomic_create_table_as_select.shop_gold",
                                                "2026-12-01T10:30:18.788Z", {"shop.orders"}, {"shop.gold"}));
  auto inner = mapper.FromRunEvent(SparkRunEvent("inner", "app.append_data.skade_shop_gold",
                                                 "2026-12-01T10:30:18.790Z", {"shop.orders"}, {}));
  ASSERT_THAT(ctas, IsOk());
  ASSERT_THAT(inner, IsOk());
  std::string closing = SparkRunEvent("closing", "app.command_result", "2026-12-01T10:30:18.812Z", {"shop.orders"},
                                      {"shop.gold"});
  auto folded = mapper.FromRunEvent(closing);
  ASSERT_THAT(folded, IsOk());
  EXPECT_EQ(folded->run_id, "ctas");
  EXPECT_EQ(folded->job, ctas->job);
  EXPECT_EQ(folded->actor, "app.atomic_create_table_as_select.shop_gold");
  EXPECT_NE(folded->event_id, ctas->event_id);
  EXPECT_EQ(mapper.FromRunEvent(closing)->event_id, folded->event_id) << "the id does not depend on the folding";

  LineageGraph g = LineageGraph::Build({*ctas, *inner, *folded});
  ASSERT_EQ(g.edges().size(), 1u);
  EXPECT_EQ(g.edges()[0].job, "app.atomic_create_table_as_select.shop_gold");

  // One naming no dataset (openlineage-spark through a JDBC catalog) closes the latest run.
  auto bare = mapper.FromRunEvent(SparkRunEvent("bare", "app.command_result", "2026-12-01T10:30:19Z", {}, {}));
  ASSERT_THAT(bare, IsOk());
  EXPECT_EQ(bare->run_id, "inner");

  // A command_result whose statement this mapper never saw counts as its application's.
  RunEventMapper fresh(kWarehouse, nullptr);
  auto orphan = fresh.FromRunEvent(closing);
  ASSERT_THAT(orphan, IsOk());
  EXPECT_EQ(orphan->job, (JobRef{"spark-check", "app"}));
  EXPECT_EQ(orphan->run_id, "01a23127-a12b-7a05-96c1-1102e9abf41a");

  // A parent facet of the wrong shape is no parent: the event stays as it came.
  json odd = json::parse(closing);
  odd["run"]["facets"]["parent"]["job"]["namespace"] = 5;
  auto unparented = fresh.FromRunEvent(odd.dump());
  ASSERT_THAT(unparented, IsOk());
  EXPECT_EQ(unparented->job, (JobRef{"spark-check", "app.command_result"}));
  odd["run"]["facets"]["parent"] = "x";
  EXPECT_THAT(fresh.FromRunEvent(odd.dump()), IsOk());
}

TEST(OpenLineageTest, ReadingAndWritingOneTableIsAnInPlaceUpdateNotAnEdge) {
  RunEventMapper mapper(kWarehouse, nullptr);
  mapper.SetOwnCatalog([](std::string_view ns) { return SameCatalogUri("http://localhost:8181", ns); });
  auto merge = mapper.FromRunEvent(SparkRunEvent("m", "app.replace_data.skade_shop_cow", "2026-12-01T10:30:20Z",
                                                 {"shop.events", "shop.cow"}, {"shop.cow"}));
  ASSERT_THAT(merge, IsOk());
  LineageGraph g = LineageGraph::Build({*merge});
  ASSERT_EQ(g.edges().size(), 1u);
  EXPECT_EQ(g.edges()[0].from, "shop.events");
  EXPECT_EQ(g.edges()[0].to, "shop.cow");
  EXPECT_THAT(*g.Upstream("shop.cow"), ::testing::ElementsAre(Reached{"shop.events", 1}));
  EXPECT_TRUE(g.Downstream("shop.cow")->empty());
}

TEST(OpenLineageTest, SystemKindsFollowNamespaceSchemes) {
  EXPECT_EQ(SystemKindOf("postgres://db:5432"), "postgres");
  EXPECT_EQ(SystemKindOf("s3://bucket"), "s3");
  EXPECT_EQ(SystemKindOf("arn:aws:glue:eu-west-1:123"), "glue");
  EXPECT_EQ(SystemKindOf("bigquery"), "bigquery");
  EXPECT_EQ(SystemKindOf("file"), "file");
}

}  // namespace
}  // namespace skade::lineage
