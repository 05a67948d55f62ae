// Out-of-process custom steps at compile time: the mapping round-trips through YAML, the
// projection reads what the step declares (or everything), and the output steps bind to
// the declared reply schema. Running them is tested against real peers in
// tests/bifrost/test_custom_steps.py.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bifrost/transform/transform.h"
#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Mapping(const std::string& step_extra) {
  return R"(graph: g
tables:
  - table: db.accounts
    pipeline:
      - vertex: {label: Account, id_column: id, properties: [name]}
      - custom:
          name: friend_edges
          flight: {endpoint: "grpc://127.0.0.1:1", retries: 0}
)" + step_extra +
         R"(          schema: "src:long!, dst:long!, rank:long"
          output:
            - edge: {type: FRIEND, src: {label: Account, column: src}, dst: {label: Account, column: dst}, properties: [rank]}
)";
}

Result<std::vector<CompiledTable>> Compile(const std::string& text) {
  SKADE_ASSIGN_OR_RETURN(auto spec, MappingSpec::Parse(text, "m.yaml"));
  auto schema = std::make_shared<const skade::Schema>(
      *skade::ParseSchemaSpec("id:long!, name:string, friends:string, score:double"));
  return CompileMapping(
      spec,
      [&](const skade::TableIdent&) -> Result<std::shared_ptr<const skade::Schema>> {
        return schema;
      },
      TransformRegistry());
}

TEST(ExternalStepTest, RoundTripsThroughYaml) {
  auto spec = MappingSpec::Parse(Mapping("          columns: [id, friends]\n"), "m.yaml");
  ASSERT_THAT(spec, IsOk());
  const auto& step = std::get<CustomStep>(spec->tables[0].pipeline[1]);
  EXPECT_EQ(step.runner, "flight");
  EXPECT_EQ(step.settings.at("endpoint"), "grpc://127.0.0.1:1");
  ASSERT_EQ(step.output_edges.size(), 1u);
  auto again = MappingSpec::Parse(spec->ToYaml(), "again");
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->ToYaml(), spec->ToYaml());
}

TEST(ExternalStepTest, ProjectionIsTheDeclaredColumnsOrEverything) {
  auto declared = Compile(Mapping("          columns: [id, friends]\n"));
  ASSERT_THAT(declared, IsOk());
  EXPECT_THAT((*declared)[0].projection, ElementsAre("id", "name", "friends"));
  EXPECT_EQ((*declared)[0].customs.size(), 1u);
  auto undeclared = Compile(Mapping(""));
  ASSERT_THAT(undeclared, IsOk());
  EXPECT_TRUE((*undeclared)[0].projection.empty());  // it may read any column
}

TEST(ExternalStepTest, ReportsEveryProblemOfTheStep) {
  std::string text = Mapping("          columns: [id, nope]\n");
  text.replace(text.find("retries: 0"), 10, "retries: -1, endpiont: x");
  text.replace(text.find("properties: [rank]"), 18, "properties: [weight]");
  auto compiled = Compile(text);
  ASSERT_FALSE(compiled.has_value());
  const std::string& msg = compiled.error().message;
  EXPECT_THAT(msg, HasSubstr("custom step 'friend_edges' column 'nope' is not in the table"));
  EXPECT_THAT(msg, HasSubstr("flight setting 'retries' is '-1', not a whole number from 0 to 10"));
  EXPECT_THAT(msg, HasSubstr("unknown flight setting 'endpiont'"));
  EXPECT_THAT(msg, HasSubstr("edge 'FRIEND' property column 'weight' is not in custom step "
                             "'friend_edges' reply (columns: src, dst, rank)"));
}

TEST(ExternalStepTest, OutOfProcessFieldsNeedARunner) {
  auto spec = MappingSpec::Parse(
      "graph: g\ntables:\n  - table: db.t\n    pipeline:\n      - custom: {name: x, schema: "
      "\"a:long\"}\n",
      "m.yaml");
  ASSERT_FALSE(spec.has_value());
  EXPECT_THAT(spec.error().message,
              HasSubstr("takes 'columns', 'schema' and 'output' only with 'flight' or 'wasm'"));
  spec = MappingSpec::Parse(
      "graph: g\ntables:\n  - table: db.t\n    pipeline:\n      - custom: {name: x, wasm: {module: "
      "m.wasm}, schema: \"a:long\"}\n",
      "m.yaml");
  ASSERT_FALSE(spec.has_value());
  EXPECT_THAT(spec.error().message, HasSubstr("needs an 'output' list of vertex, edge or fk_edges"));
}

}  // namespace
}  // namespace bifrost
