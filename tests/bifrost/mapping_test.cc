// Mapping files: parsing reports every problem with its line; compiling against a
// schema names unknown columns, derives the projection, resolves endpoint keys.
#include "bifrost/mapping/mapping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bifrost/mapping/infer.h"
#include "bifrost/transform/transform.h"
#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::ErrorKind;
using skade::testing::IsErrorWith;
using skade::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<const skade::Schema> Schema(const std::string& spec) {
  auto s = skade::ParseSchemaSpec(spec);
  EXPECT_TRUE(s.has_value());
  return std::make_shared<const skade::Schema>(*s);
}

SchemaLookup Lookup(std::map<std::string, std::shared_ptr<const skade::Schema>> tables) {
  return [tables](const skade::TableIdent& id) -> Result<std::shared_ptr<const skade::Schema>> {
    auto it = tables.find(id.ToString());
    if (it == tables.end()) return skade::NotFound("table '" + id.ToString() + "' not found");
    return it->second;
  };
}

constexpr const char* kMapping = R"(graph: social
tables:
  - table: db.people
    mode: cdc
    pipeline:
      - vertex: {label: Person, id_column: id, properties: [name], rename: {name: full_name}}
      - fk_edges: {type: MANAGED_BY, src: {column: id, label: Person}, dst: {column: boss, label: Person}}
  - table: db.member
    pipeline:
      - edge: {type: IN, src: {column: person, label: Person}, dst: {columns: [org, code], label: Team}, key_column: since}
  - table: db.teams
    pipeline:
      - vertex: {label: Team, id_columns: [org, code]}
)";

TEST(MappingTest, ParsesAndRoundTripsThroughYaml) {
  auto spec = MappingSpec::Parse(kMapping, "m.yaml");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->graph, "social");
  ASSERT_EQ(spec->tables.size(), 3u);
  EXPECT_EQ(spec->tables[0].mode, SyncMode::kCdc);
  EXPECT_EQ(spec->tables[1].mode, SyncMode::kFull);
  auto again = MappingSpec::Parse(spec->ToYaml(), "again");
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->ToYaml(), spec->ToYaml());
}

TEST(MappingTest, ReportsEveryProblemWithItsLine) {
  auto spec = MappingSpec::Parse(
      "graph: g\ntables:\n  - table: a.b\n    mode: often\n    pipeline:\n      - node: {}\n",
      "bad.yaml");
  ASSERT_THAT(spec, IsErrorWith(ErrorKind::kInvalidArgument, "bad.yaml:4: mode 'often'"));
  EXPECT_THAT(spec.error().message, HasSubstr("bad.yaml:6: unknown step 'node'"));
  EXPECT_THAT(MappingSpec::Parse("graph: [", "x.yaml"),
              IsErrorWith(ErrorKind::kInvalidArgument, "not valid YAML"));
}

TEST(MappingTest, CompileDerivesProjectionAndEndpointKeys) {
  auto spec = MappingSpec::Parse(kMapping, "m.yaml");
  ASSERT_THAT(spec, IsOk());
  auto compiled = CompileMapping(
      *spec,
      Lookup({{"db.people", Schema("id:long!, name:string, boss:long, notes:string")},
              {"db.member", Schema("person:long, org:string, code:int, since:date")},
              {"db.teams", Schema("org:string!, code:int!")}}),
      TransformRegistry());
  ASSERT_THAT(compiled, IsOk());
  // `notes` is not used by the pipeline: it is not read
  EXPECT_THAT((*compiled)[0].projection, ElementsAre("id", "name", "boss"));
  EXPECT_EQ((*compiled)[0].vertices[0].properties[0].property, "full_name");
  const CompiledEdge& in = (*compiled)[1].edges[0];
  ASSERT_EQ(in.dst.size(), 2u);
  EXPECT_EQ(in.dst[0].property, "org");  // the Team vertex's key names
  EXPECT_EQ(in.dst[1].property, "code");
}

TEST(MappingTest, CompileListsWhatExists) {
  auto spec = MappingSpec::Parse(kMapping, "m.yaml");
  ASSERT_THAT(spec, IsOk());
  auto compiled = CompileMapping(
      *spec,
      Lookup({{"db.people", Schema("id:long!, nme:string, boss:long")},
              {"db.member", Schema("person:long, org:string, code:int, since:map<string,int>")}}),
      TransformRegistry());
  ASSERT_THAT(compiled, IsErrorWith(ErrorKind::kInvalidArgument,
                                    "column 'name' is not in the table (columns: id, nme, boss)"));
  EXPECT_THAT(compiled.error().message, HasSubstr("table 'db.teams' not found"));
  EXPECT_THAT(compiled.error().message, HasSubstr("'since' has type map<"));
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Collections nested `depth` levels deep, in each style the depth check knows.
std::vector<std::pair<std::string, std::string>> NestedTexts(int depth) {
  std::string block_maps, block_seqs;
  for (int i = 0; i < depth; ++i) block_maps += Repeat("  ", i) + "a:\n";
  for (int i = 0; i < depth; ++i) block_seqs += Repeat("  ", i) + "-\n";
  std::string key_seqs = "graph: g\ntables:\n";  // `key:` then `- ` at the key's column
  for (int i = 2; i < depth; i += 2) key_seqs += Repeat("  ", i - 2) + "- t:\n";
  return {
      {"flow sequences", Repeat("[", depth) + Repeat("]", depth)},
      {"flow sequences under the root map", "graph: g\ntables: " + Repeat("[", depth - 1) +
                                                Repeat("]", depth - 1) + "\n"},
      {"flow maps in a table entry", "graph: g\ntables:\n  - table: db.t\n    x: " +
                                         Repeat("{a: ", depth - 3) + "1" +
                                         Repeat("}", depth - 3) + "\n"},
      {"flow over lines", "graph: g\ntables:\n" + Repeat("  [\n", depth - 1) +
                              Repeat("  ]\n", depth - 1)},
      {"block maps", block_maps},
      {"block sequences", block_seqs},
      {"sequences on one line", Repeat("- ", depth) + "x\n"},
      {"sequences as keys' values", key_seqs + Repeat("  ", depth % 2 ? depth - 3 : depth - 2) +
                                        (depth % 2 ? "- x\n" : "x: 1\n")},
  };
}

TEST(MappingParseTest, NestingAtTheDepthLimitIsParsed) {
  for (const auto& [style, text] : NestedTexts(MappingSpec::kMaxDepth)) {
    SCOPED_TRACE(style);
    auto spec = MappingSpec::Parse(text, "m.yaml");
    // Refused, as none is a whole mapping, but by the parser, not for depth.
    if (!spec) EXPECT_THAT(spec.error().message, ::testing::Not(HasSubstr("nested deeper")));
  }
}

TEST(MappingParseTest, NestingPastTheDepthLimitIsRefusedBeforeParsing) {
  for (const auto& [style, text] : NestedTexts(MappingSpec::kMaxDepth + 1)) {
    SCOPED_TRACE(style);
    EXPECT_THAT(MappingSpec::Parse(text, "m.yaml"),
                IsErrorWith(ErrorKind::kInvalidArgument, "nested deeper than 64 levels"));
  }
  // Far past it, where yaml-cpp's own recursion would be the danger.
  EXPECT_THAT(MappingSpec::Parse(Repeat("[", 100000), "m.yaml"),
              IsErrorWith(ErrorKind::kInvalidArgument, "m.yaml:1: nested deeper than 64 levels"));
}

TEST(MappingParseTest, BracketsInScalarsAndCommentsAreNotNesting) {
  std::string deep = Repeat("[{", 100);
  for (const std::string& text :
       {"graph: '" + deep + "'\n", "graph: \"" + deep + "\\\"\"\n", "graph: a " + deep + "\n",
        "graph: g # " + deep + "\n", "graph: |\n" + Repeat("  " + deep + "\n", 3),
        "graph: 'it''s " + deep + "'\n", "graph: \"multi\n  " + deep + "\"\n"}) {
    SCOPED_TRACE(text);
    auto spec = MappingSpec::Parse(text, "m.yaml");
    ASSERT_FALSE(spec.has_value());  // no tables
    EXPECT_THAT(spec.error().message, HasSubstr("needs 'tables:'"));
  }
}

TEST(InferTest, GuessesIdPropertiesAndForeignKeysAndReportsNested) {
  auto inferred = InferMapping(
      {"db", "orders"}, *Schema("id:long!, customer_id:long, total:double, meta:struct<a:int>"));
  ASSERT_THAT(inferred, IsOk());
  const auto& steps = inferred->spec.tables[0].pipeline;
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(std::get<VertexStep>(steps[0]).label, "Order");
  EXPECT_THAT(std::get<VertexStep>(steps[0]).properties, ElementsAre("total"));
  EXPECT_EQ(std::get<EdgeStep>(steps[1]).dst.label, "Customer");
  ASSERT_EQ(inferred->unmapped.size(), 1u);
  EXPECT_THAT(inferred->unmapped[0], HasSubstr("meta"));
  EXPECT_THAT(inferred->ToYaml(), HasSubstr("# unmapped: meta"));
  EXPECT_THAT(MappingSpec::Parse(inferred->ToYaml(), "inferred"), IsOk());
}

}  // namespace
}  // namespace bifrost
