#include "skade/format/table_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/matchers.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;

TableMetadata Sample() {
  TableMetadata m;
  m.table_uuid = "9c12d441-03fe-4693-9a96-a0705ddf69c1";
  m.location = "file:///tmp/wh/ns.db/t";
  m.last_updated_ms = 1700000000000;
  Schema s = *ParseSchemaSpec("id:long!, name:string, tags:list<string>, addr:struct<city:string,zip:int>, "
                              "m:map<string,double>, price:decimal(10,2), f:fixed(16), u:uuid");
  s = Schema(0, s.fields(), {1});
  m.last_column_id = s.HighestFieldId();
  m.schemas.push_back(std::make_shared<Schema>(s));
  m.specs.push_back(*ParsePartitionSpec("bucket(16,id), truncate(4,name)", s));
  m.last_partition_id = 1001;
  m.properties["write.target-file-size-bytes"] = "1000";
  Snapshot snap;
  snap.snapshot_id = 3051729675574597004;
  snap.sequence_number = 1;
  snap.timestamp_ms = 1700000001000;
  snap.manifest_list = "file:///tmp/wh/ns.db/t/metadata/snap-1.avro";
  snap.summary = {{"operation", "append"}, {"added-records", "10"}};
  snap.schema_id = 0;
  m.snapshots.push_back(snap);
  m.current_snapshot_id = snap.snapshot_id;
  m.refs["main"] = SnapshotRef{snap.snapshot_id, "branch", {}, {}, {}};
  m.refs["v1"] = SnapshotRef{snap.snapshot_id, "tag", {}, {}, 86400000};
  m.last_sequence_number = 1;
  m.snapshot_log.push_back({snap.timestamp_ms, snap.snapshot_id});
  m.metadata_log.push_back({1700000000000, "file:///tmp/wh/ns.db/t/metadata/00000-x.metadata.json"});
  return m;
}

TEST(TableMetadataTest, RoundTripsThroughJson) {
  TableMetadata m = Sample();
  std::string json = TableMetadataToJson(m);
  auto back = ParseTableMetadata(json);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(TableMetadataToJson(*back), json);
  EXPECT_TRUE(back->schema()->SameFields(*m.schema()));
  EXPECT_EQ(back->spec().fields().size(), 2u);
  EXPECT_EQ(back->spec().fields()[0].transform.ToString(), "bucket[16]");
  EXPECT_EQ(back->refs.at("v1").type, "tag");
  EXPECT_EQ(back->refs.at("v1").max_ref_age_ms, 86400000);
  EXPECT_EQ(*back->current_snapshot_id, 3051729675574597004);
  // Java's field order: format-version first, then table-uuid.
  EXPECT_EQ(json.find("{\"format-version\":2,\"table-uuid\""), 0u);
}

// The snapshots and the snapshot log are written as text, not through nlohmann's DOM: the
// bytes are what nlohmann writes for the same objects, escapes included, and read back.
TEST(TableMetadataTest, SnapshotsAreWrittenAsNlohmannWouldWriteThem) {
  TableMetadata m = Sample();
  Snapshot odd = m.snapshots[0];
  odd.snapshot_id = 77;
  odd.parent_snapshot_id = m.snapshots[0].snapshot_id;
  odd.sequence_number = 2;
  odd.schema_id.reset();
  odd.manifest_list = "file:///tmp/w h/\"q\"/snap-2.avro";
  odd.summary = {{"operation", "overwrite"}, {"spark.app.id", "local-1"},
                 {"a\\b", std::string("tab\tnl\ncr\rbs\bff\fctl\x01\x1f del\x7f")},
                 {"engine", "skåde \xF0\x9F\x8C\x8A"}, {"empty", ""}};
  m.snapshots.push_back(odd);
  m.snapshot_log.push_back({odd.timestamp_ms + 1, odd.snapshot_id});
  std::string text = TableMetadataToJson(m);

  nlohmann::ordered_json snapshots = nlohmann::ordered_json::array(), log = nlohmann::ordered_json::array();
  for (const auto& s : m.snapshots) {
    nlohmann::ordered_json o, summary;
    o["sequence-number"] = s.sequence_number;
    o["snapshot-id"] = s.snapshot_id;
    if (s.parent_snapshot_id) o["parent-snapshot-id"] = *s.parent_snapshot_id;
    o["timestamp-ms"] = s.timestamp_ms;
    summary["operation"] = s.summary.at("operation");
    for (const auto& [k, v] : s.summary)
      if (k != "operation") summary[k] = v;
    o["summary"] = summary;
    o["manifest-list"] = s.manifest_list;
    if (s.schema_id) o["schema-id"] = *s.schema_id;
    snapshots.push_back(o);
  }
  for (const auto& e : m.snapshot_log) log.push_back({{"timestamp-ms", e.timestamp_ms}, {"snapshot-id", e.snapshot_id}});
  EXPECT_NE(text.find("\"snapshots\":" + snapshots.dump() + ",\"statistics\":"), std::string::npos) << text;
  EXPECT_NE(text.find("\"snapshot-log\":" + log.dump() + ",\"metadata-log\":"), std::string::npos) << text;

  auto back = ParseTableMetadata(text);
  ASSERT_THAT(back, IsOk());
  ASSERT_EQ(back->snapshots.size(), 2u);
  EXPECT_EQ(back->snapshots[1].summary, odd.summary);
  EXPECT_EQ(back->snapshots[1].manifest_list, odd.manifest_list);
  EXPECT_EQ(back->snapshots[1].parent_snapshot_id, odd.parent_snapshot_id);
  EXPECT_FALSE(back->snapshots[1].schema_id.has_value());
  EXPECT_EQ(TableMetadataToJson(*back), text);
}

// Statistics files the table's metadata lists (Puffin, written by other engines) are
// carried from the file read to the file written, as they were.
TEST(TableMetadataTest, StatisticsFilesAreKeptAsRead) {
  std::string stats =
      R"([{"snapshot-id":3051729675574597004,"statistics-path":"s3://b/t/metadata/s.puffin",)"
      R"("file-size-in-bytes":413,"file-footer-size-in-bytes":42,"blob-metadata":[{"type":)"
      R"("apache-datasketches-theta-v1","snapshot-id":3051729675574597004,"sequence-number":1,"fields":[1]}]}])";
  std::string partition_stats =
      R"([{"snapshot-id":3051729675574597004,"statistics-path":"s3://b/t/metadata/p.parquet","file-size-in-bytes":9}])";
  std::string json = TableMetadataToJson(Sample());
  const std::string empty = "\"statistics\":[],\"partition-statistics\":[]";
  ASSERT_NE(json.find(empty), std::string::npos) << json;
  json.replace(json.find(empty), empty.size(),
               "\"statistics\": " + stats + " ,\n \"partition-statistics\":" + partition_stats);
  auto read = ParseTableMetadata(json);
  ASSERT_THAT(read, IsOk());
  auto parsed = nlohmann::ordered_json::parse(stats), parsed_partition = nlohmann::ordered_json::parse(partition_stats);
  std::string written = TableMetadataToJson(*read);
  EXPECT_NE(written.find("\"statistics\":" + parsed.dump() + ",\"partition-statistics\":" + parsed_partition.dump()),
            std::string::npos)
      << written;
  auto again = ParseTableMetadata(written);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(TableMetadataToJson(*again), written);
}

TEST(TableMetadataTest, ReadsVersionOne) {
  const char* v1 = R"({"format-version":1,"table-uuid":"d20125c8-7284-442c-9aea-15fee620737c",
    "location":"s3://b/t","last-updated-ms":1602638573874,"last-column-id":3,
    "schema":{"type":"struct","fields":[{"id":1,"name":"x","required":true,"type":"long"},
      {"id":2,"name":"y","required":true,"type":"long"},{"id":3,"name":"z","required":true,"type":"long"}]},
    "partition-spec":[{"name":"x","transform":"identity","source-id":1,"field-id":1000}],
    "properties":{},"current-snapshot-id":-1,"snapshots":[]})";
  auto m = ParseTableMetadata(v1);
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(m->schema()->fields().size(), 3u);
  EXPECT_EQ(m->spec().fields()[0].field_id, 1000);
  EXPECT_FALSE(m->current_snapshot_id.has_value());
}

// Format v3 (as Spark writes it): row lineage, column defaults and a null current snapshot
// are read and written back as they were; what skade cannot read (encryption) is refused.
TEST(TableMetadataTest, VersionThreeRoundTrips) {
  nlohmann::json v3 = nlohmann::json::parse(TableMetadataToJson(Sample()));
  v3["format-version"] = 3;
  v3["next-row-id"] = 1016;
  v3["snapshots"][0]["first-row-id"] = 1000;
  v3["snapshots"][0]["added-rows"] = 16;
  v3["schemas"][0]["fields"][1]["initial-default"] = "none";
  v3["schemas"][0]["fields"][1]["write-default"] = "unnamed";
  auto m = ParseTableMetadata(v3.dump());
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(m->format_version, 3);
  EXPECT_EQ(m->next_row_id, 1016);
  EXPECT_EQ(m->snapshots[0].first_row_id, 1000);
  EXPECT_EQ(m->snapshots[0].added_rows, 16);
  EXPECT_EQ(m->schema()->fields()[1].initial_default, "\"none\"");
  nlohmann::json back = nlohmann::json::parse(TableMetadataToJson(*m));
  EXPECT_EQ(back["format-version"], 3);
  EXPECT_EQ(back["next-row-id"], 1016);
  EXPECT_EQ(back["snapshots"][0]["first-row-id"], 1000);
  EXPECT_EQ(back["snapshots"][0]["added-rows"], 16);
  EXPECT_EQ(back["schemas"][0]["fields"][1]["initial-default"], "none");
  EXPECT_EQ(back["schemas"][0]["fields"][1]["write-default"], "unnamed");
  m->current_snapshot_id.reset();
  EXPECT_TRUE(nlohmann::json::parse(TableMetadataToJson(*m))["current-snapshot-id"].is_null());

  auto without = v3;
  without.erase("next-row-id");
  EXPECT_THAT(ParseTableMetadata(without.dump()), testing::IsErrorWith(ErrorKind::kCorrupt, "next-row-id"));
  auto encrypted = v3;
  encrypted["encryption-keys"] = nlohmann::json::array({{{"key-id", "k"}, {"encrypted-key-metadata", "AA=="}}});
  EXPECT_THAT(ParseTableMetadata(encrypted.dump()), testing::IsErrorWith(ErrorKind::kCorrupt, "encrypted"));
  auto keyed = v3;
  keyed["snapshots"][0]["key-id"] = "k";
  EXPECT_THAT(ParseTableMetadata(keyed.dump()), testing::IsErrorWith(ErrorKind::kCorrupt, "encrypted"));
}

TEST(TableMetadataTest, CorruptInputIsRefusedWithReason) {
  std::string json = TableMetadataToJson(Sample());
  for (size_t cut : {size_t{0}, size_t{1}, json.size() / 3, json.size() / 2, json.size() - 1}) {
    EXPECT_THAT(ParseTableMetadata(json.substr(0, cut)), IsError(ErrorKind::kCorrupt)) << cut;
  }
  auto missing = ParseTableMetadata(R"({"format-version":2,"location":"x"})");
  ASSERT_THAT(missing, IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(missing.error().message, ::testing::HasSubstr("last-updated-ms"));
  EXPECT_THAT(ParseTableMetadata(R"({"format-version":3})"), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(ParseTableMetadata(R"({"format-version":4})"), testing::IsErrorWith(ErrorKind::kCorrupt, "reads 1 to 3"));
  std::string dangling = json;
  dangling.replace(dangling.find("\"current-snapshot-id\":3051729675574597004"),
                   std::string("\"current-snapshot-id\":3051729675574597004").size(), "\"current-snapshot-id\":5");
  EXPECT_THAT(ParseTableMetadata(dangling), testing::IsErrorWith(ErrorKind::kCorrupt, "names no snapshot"));
}

TEST(TableMetadataTest, SnapshotLookups) {
  TableMetadata m = Sample();
  EXPECT_THAT(m.SnapshotAsOf(1700000001000), IsOk());
  EXPECT_THAT(m.SnapshotAsOf(1700000000999), IsError(ErrorKind::kNotFound));
  EXPECT_THAT(m.SnapshotForRef("v1"), IsOk());
  EXPECT_THAT(m.SnapshotForRef("nope"), testing::IsErrorWith(ErrorKind::kNotFound, "main, v1"));
  EXPECT_EQ(m.PropertyInt("write.target-file-size-bytes", 5), 1000);
  EXPECT_EQ(m.PropertyInt("missing", 5), 5);
}

TEST(SchemaSpecTest, ParsesTheCliLanguage) {
  auto s = ParseSchemaSpec("id:long!, name:string, tags:list<string>, addr:struct<city:string,zip:int!>, "
                           "price:decimal(10,2), m:map<string,long>");
  ASSERT_THAT(s, IsOk());
  ASSERT_EQ(s->fields().size(), 6u);
  EXPECT_TRUE(s->fields()[0].required);
  EXPECT_EQ(s->fields()[0].id, 1);
  EXPECT_EQ(s->fields()[5].id, 6);  // top-level ids first
  EXPECT_EQ(s->FindByPath("addr.zip")->type->id, TypeId::kInt);
  EXPECT_TRUE(s->FindByPath("addr.zip")->required);
  EXPECT_EQ(s->fields()[4].type->ToString(), "decimal(10,2)");
  EXPECT_EQ(s->HighestFieldId(), 11);
  EXPECT_THAT(ParseSchemaSpec("id:lng"), testing::IsErrorWith(ErrorKind::kInvalidArgument, "unknown type 'lng'"));
  EXPECT_THAT(ParseSchemaSpec("id:long, id:int"), testing::IsErrorWith(ErrorKind::kInvalidArgument, "duplicate"));
  EXPECT_THAT(ParseSchemaSpec(""), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseSchemaSpec("a:decimal(50,2)"), IsError(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace skade
