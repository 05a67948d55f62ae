// RON mapping files: the same model as YAML (round trips both ways), the seed system's
// dialect, and bad RON refused with line:column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bifrost/mapping/infer.h"
#include "bifrost/mapping/mapping.h"
#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::ErrorKind;
using skade::testing::IsErrorWith;
using skade::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kYaml = R"(graph: social
tables:
  - table: db.people
    mode: cdc
    columns: [id, name, boss]
    filter: "id > 3"
    pipeline:
      - vertex: {label: Person, id_column: id, properties: [name], rename: {name: "full \"name\""}}
      - fk_edges: {type: MANAGED_BY, src: {column: id, label: Person}, dst: {column: boss, label: Person}}
  - table: db.member
    source: parquet:/tmp/drops
    mode: incremental
    allow_empty: true
    pipeline:
      - edge: {type: IN, src: {column: person, label: Person}, dst: {columns: [org, code], label: Team, keys: [o, c]}, key_column: since, properties: [w]}
  - table: db.teams
    prune: true
    pipeline:
      - vertex: {label: "Tëam\ttab", id_columns: [org, code]}
      - custom: {name: mine}
)";

TEST(RonMappingTest, YamlToRonAndBackIsTheSameMapping) {
  auto spec = MappingSpec::Parse(kYaml, "m.yaml");
  ASSERT_THAT(spec, IsOk());
  const std::string ron = spec->ToRon();
  auto from_ron = MappingSpec::ParseRon(ron, "m.ron");
  ASSERT_THAT(from_ron, IsOk()) << ron;
  EXPECT_EQ(from_ron->ToYaml(), spec->ToYaml());
  EXPECT_EQ(from_ron->ToRon(), ron);
  // the same lines for the same entries: errors point at the same place in either file
  EXPECT_EQ(from_ron->tables[1].table, "db.member");
  EXPECT_EQ(from_ron->tables[1].mode, SyncMode::kIncremental);
  EXPECT_THAT(ron, HasSubstr("mode: Cdc,"));
  EXPECT_THAT(ron, HasSubstr("FkEdges(type: \"MANAGED_BY\""));
}

TEST(RonMappingTest, EveryCorpusMappingRoundTrips) {
  // The checked-in mapping corpus holds every shape the YAML reader accepts.
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(SKADE_SOURCE_DIR) / "tests/fuzz/corpus/mapping_file")) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    bool ron = entry.path().extension() == ".ron";
    auto spec = ron ? MappingSpec::ParseRon(text.str(), "c.ron") : MappingSpec::Parse(text.str(), "c.yaml");
    if (!spec) continue;
    SCOPED_TRACE(entry.path().string());
    ++loaded;
    auto via_ron = MappingSpec::ParseRon(spec->ToRon(), "again.ron");
    ASSERT_THAT(via_ron, IsOk());
    EXPECT_EQ(via_ron->ToYaml(), spec->ToYaml());
    auto via_yaml = MappingSpec::Parse(via_ron->ToYaml(), "again.yaml");
    ASSERT_THAT(via_yaml, IsOk());
    EXPECT_EQ(via_yaml->ToRon(), spec->ToRon());
  }
  EXPECT_GE(loaded, 5);
}

TEST(RonMappingTest, ReadsTheSeedDialect) {
  // Enum variants for steps and modes, Option wrappers, struct names, a structured filter.
  auto spec = MappingSpec::ParseRon(R"(#![enable(implicit_some)]
// the seed system's spelling
MappingSpec(
  graph: "g",
  tables: [
    TableMapping(
      table: "db.people",
      mode: Incremental,
      filter: Some((column: "country", in: ["SE", "it's"], ge: 3)),
      columns: None,
      pipeline: [
        Vertex(label: "Person", id_column: "id", properties: ["name"]),
        FkEdges(type: "KNOWS", src: Endpoint(column: "id", label: "Person"),
                dst: (column: "friend", label: "Person")),
        Custom((name: "x")),
        (vertex: (label: "Other", id_columns: ["id"])),
        {"custom": {"name": r#"raw "quoted""#}},
      ],
    ),
  ],
))",
                                    "seed.ron");
  ASSERT_THAT(spec, IsOk());
  const TableMapping& t = spec->tables[0];
  EXPECT_EQ(t.mode, SyncMode::kIncremental);
  EXPECT_EQ(t.filter, "\"country\" in ('SE', 'it''s') and \"country\" >= 3");
  ASSERT_EQ(t.pipeline.size(), 5u);
  EXPECT_EQ(std::get<VertexStep>(t.pipeline[0]).label, "Person");
  EXPECT_TRUE(std::get<EdgeStep>(t.pipeline[1]).fk);
  EXPECT_THAT(std::get<EdgeStep>(t.pipeline[1]).dst.columns, ElementsAre("friend"));
  EXPECT_EQ(std::get<CustomStep>(t.pipeline[2]).name, "x");
  EXPECT_EQ(std::get<VertexStep>(t.pipeline[3]).label, "Other");
  EXPECT_EQ(std::get<CustomStep>(t.pipeline[4]).name, "raw \"quoted\"");
}

TEST(RonMappingTest, SeedFieldsThisModelNamesOtherwiseAreRefusedByName) {
  // A field the model spells differently: the same message YAML gets, on the RON line.
  auto spec = MappingSpec::ParseRon(R"((
  graph: "g",
  tables: [(table: "db.t", mode: Full, pipeline: [
    Vertex(label: "P", id_column: "id", columns: ["name"]),
  ])],
))",
                                    "seed.ron");
  ASSERT_THAT(spec, IsErrorWith(ErrorKind::kInvalidArgument, "seed.ron:4: unknown key 'columns'"));
  EXPECT_THAT(spec.error().message, HasSubstr("allowed: id_column, id_columns, label, properties, rename"));
  // and the same errors as the YAML file with the same content
  auto yaml = MappingSpec::Parse("graph: g\ntables:\n  - table: db.t\n    mode: often\n    pipeline: []\n", "m.yaml");
  auto ron = MappingSpec::ParseRon("(graph: \"g\",\ntables: [\n  (table: \"db.t\",\n    mode: Often,\n    pipeline: [])])", "m.ron");
  ASSERT_FALSE(yaml.has_value());
  ASSERT_FALSE(ron.has_value());
  auto strip = [](std::string msg, const std::string& origin) {
    for (size_t at; (at = msg.find(origin)) != std::string::npos;) msg.erase(at, origin.size());
    return msg;
  };
  EXPECT_EQ(strip(ron.error().message, "m.ron"), strip(yaml.error().message, "m.yaml"));
  EXPECT_THAT(ron.error().message, HasSubstr("m.ron:4: mode 'often'"));
}

TEST(RonMappingTest, BadRonIsRefusedWithLineAndColumn) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"(graph: \"g\"\n tables: [])", "m.ron:2:2: expected ',' or ')' after field 'graph', found 'tables'"},
      {"(graph: \"g, tables: [])", "m.ron:1:9: string not closed"},
      {"(graph: g)", "m.ron:1:9: 'g' is a bare name: write text in quotes (\"g\")"},
      {"(graph: \"g\", graph: \"h\")", "m.ron:1:14: field 'graph' is given twice"},
      {"(graph: \"a\\q\")", "m.ron:1:11: unknown escape '\\q'"},
      {"/* open (graph: \"g\")", "m.ron:1:1: comment not closed"},
      {"(graph: \"g\") x", "m.ron:1:14: unexpected 'x' after the mapping's value"},
      {"(graph: 12abc)", "m.ron:1:11: unexpected 'abc' in a number"},
      {"(graph: \"\\u{D800}\")", "names no character"},
      {"(graph: \"\xff\")", "m.ron:1:10: not valid UTF-8"},
      {"#![enable(magic)] ()", "unknown RON extension 'magic'"},
      {"(graph: b\"x\")", "byte strings have no place"},
      {"(filter: (eq: 1))", "a structured filter needs 'column'"},
      {"(tables: [(table: \"t\", filter: (column: \"c\", like: \"x\"))])", "unknown key 'like' in the filter"},
      {"", "m.ron:1:1: expected a value, found end of file"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(MappingSpec::ParseRon(c.text, "m.ron"), IsErrorWith(ErrorKind::kInvalidArgument, c.error));
  }
}

TEST(RonMappingTest, NestingPastTheDepthLimitIsRefused) {
  std::string deep(MappingSpec::kMaxDepth + 1, '[');
  EXPECT_THAT(MappingSpec::ParseRon(deep, "m.ron"),
              IsErrorWith(ErrorKind::kInvalidArgument, "m.ron:1:65: nested deeper than 64 levels"));
  EXPECT_THAT(MappingSpec::ParseRon(std::string(100000, '('), "m.ron"),
              IsErrorWith(ErrorKind::kInvalidArgument, "nested deeper than 64 levels"));
}

TEST(RonMappingTest, LoadPicksTheFormatByName) {
  auto dir = std::filesystem::temp_directory_path() / ("ron_load_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto spec = MappingSpec::Parse(kYaml, "m.yaml");
  ASSERT_THAT(spec, IsOk());
  std::ofstream(dir / "m.ron") << spec->ToRon();
  std::ofstream(dir / "m.yaml") << spec->ToYaml();
  auto ron = MappingSpec::Load((dir / "m.ron").string());
  auto yaml = MappingSpec::Load((dir / "m.yaml").string());
  ASSERT_THAT(ron, IsOk());
  ASSERT_THAT(yaml, IsOk());
  EXPECT_EQ(ron->ToYaml(), yaml->ToYaml());
  std::filesystem::remove_all(dir);
}

TEST(RonMappingTest, InferWritesRonThatLoads) {
  auto schema = skade::ParseSchemaSpec("id:long!, customer_id:long, meta:struct<a:int>");
  ASSERT_TRUE(schema.has_value());
  auto inferred = InferMapping({"db", "orders"}, *schema);
  ASSERT_THAT(inferred, IsOk());
  EXPECT_THAT(inferred->ToRon(), HasSubstr("// unmapped: meta"));
  auto spec = MappingSpec::ParseRon(inferred->ToRon(), "inferred.ron");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->ToYaml(), inferred->spec.ToYaml());
}

}  // namespace
}  // namespace bifrost
