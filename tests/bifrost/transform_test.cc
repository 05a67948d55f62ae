// The compiled pipeline over changelog rows: last change per key wins, a delete
// after an upsert is gone, an update re-wires a foreign key, null keys give no edge.
#include "bifrost/transform/transform.h"

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bifrost/sync/round.h"
#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::testing::IsOk;

std::vector<int64_t> Ints(const arrow::Table& t, int col) {
  std::vector<int64_t> out;
  auto arr = std::static_pointer_cast<arrow::Int64Array>(t.column(col)->chunk(0));
  for (int64_t i = 0; i < arr->length(); ++i) out.push_back(arr->Value(i));
  std::sort(out.begin(), out.end());
  return out;
}

class TransformTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = MappingSpec::Parse(R"(graph: g
tables:
  - table: db.people
    mode: cdc
    pipeline:
      - vertex: {label: Person, id_column: id, properties: [name]}
      - fk_edges: {type: MANAGED_BY, src: {column: id, label: Person}, dst: {column: boss, label: Person}}
)",
                                   "m.yaml");
    ASSERT_THAT(spec, IsOk());
    schema_ = std::make_shared<const skade::Schema>(
        *skade::ParseSchemaSpec("id:long!, name:string, boss:long"));
    auto compiled = CompileMapping(
        *spec,
        [&](const skade::TableIdent&) -> Result<std::shared_ptr<const skade::Schema>> {
          return schema_;
        },
        TransformRegistry());
    ASSERT_THAT(compiled, IsOk());
    table_ = (*compiled)[0];
  }

  // Rows of (id, name, boss, _change_type, _change_ordinal); boss < 0 is null.
  std::shared_ptr<arrow::Table> Changes(
      const std::vector<std::tuple<int64_t, std::string, int64_t, std::string, int>>& rows) {
    arrow::Int64Builder id, boss;
    arrow::StringBuilder name, type;
    arrow::Int32Builder ord;
    for (const auto& [i, n, b, t, o] : rows) {
      EXPECT_TRUE(id.Append(i).ok());
      EXPECT_TRUE(name.Append(n).ok());
      EXPECT_TRUE((b < 0 ? boss.AppendNull() : boss.Append(b)).ok());
      EXPECT_TRUE(type.Append(t).ok());
      EXPECT_TRUE(ord.Append(o).ok());
    }
    auto schema = arrow::schema(
        {arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
         arrow::field("boss", arrow::int64()), arrow::field("_change_type", arrow::utf8()),
         arrow::field("_change_ordinal", arrow::int32())});
    return arrow::Table::Make(
        schema, {id.Finish().ValueOrDie(), name.Finish().ValueOrDie(), boss.Finish().ValueOrDie(),
                 type.Finish().ValueOrDie(), ord.Finish().ValueOrDie()});
  }

  std::shared_ptr<const skade::Schema> schema_;
  CompiledTable table_;
};

TEST_F(TransformTest, LastChangePerKeyWins) {
  // 1: updated (delete + insert in one commit); 2: inserted then deleted; 3: a root (no boss);
  // 4: re-pointed from boss 1 to boss 3 (Spark's spelling of the update pair)
  auto m = table_.Apply(Changes({{1, "old", -1, "DELETE", 0},
                                 {1, "new", -1, "INSERT", 0},
                                 {2, "x", 1, "INSERT", 0},
                                 {2, "x", 1, "DELETE", 1},
                                 {3, "root", -1, "INSERT", 1},
                                 {4, "d", 1, "update_preimage", 1},
                                 {4, "d", 3, "update_postimage", 1}}));
  ASSERT_THAT(m, IsOk());
  ASSERT_EQ(m->vertices.size(), 1u);
  EXPECT_EQ(Ints(*m->vertices[0].rows, 0), (std::vector<int64_t>{1, 3, 4}));
  ASSERT_EQ(m->vertex_deletes.size(), 1u);
  EXPECT_EQ(Ints(*m->vertex_deletes[0].rows, 0), (std::vector<int64_t>{2}));
  // edges: 4→3 merged; 2→1 (deleted row) and 4→1 (old image) retracted; no edge for null bosses
  ASSERT_EQ(m->edges.size(), 1u);
  EXPECT_EQ(Ints(*m->edges[0].rows, 0), (std::vector<int64_t>{4}));
  EXPECT_EQ(Ints(*m->edges[0].rows, 1), (std::vector<int64_t>{3}));
  ASSERT_EQ(m->edge_deletes.size(), 1u);
  EXPECT_EQ(Ints(*m->edge_deletes[0].rows, 0), (std::vector<int64_t>{2, 4}));
}

TEST_F(TransformTest, UnknownChangeTypeIsAnError) {
  EXPECT_THAT(table_.Apply(Changes({{1, "a", -1, "MERGE", 0}})),
              skade::testing::IsErrorWith(skade::ErrorKind::kInvalidArgument,
                                          "unknown _change_type 'MERGE'"));
}

RoundReport Round(std::initializer_list<TableRound::Outcome> outcomes) {
  RoundReport r;
  for (auto o : outcomes) r.tables.push_back(TableRound{"t", o});
  return r;
}

TEST(RoundTest, IdleIsNotFailureAndBackoffDoublesUpToTheCap) {
  using O = TableRound::Outcome;
  using std::chrono::milliseconds;
  EXPECT_FALSE(Round({O::kIdle, O::kBusy}).IsFailure());
  EXPECT_FALSE(Round({O::kSynced, O::kFailed}).IsFailure());
  EXPECT_TRUE(Round({O::kFailed, O::kIdle}).IsFailure());
  Backoff b(milliseconds(100), milliseconds(350));
  EXPECT_EQ(b.Next(Round({O::kFailed})), milliseconds(100));
  EXPECT_EQ(b.Next(Round({O::kFailed})), milliseconds(200));
  EXPECT_EQ(b.Next(Round({O::kFailed})), milliseconds(350));
  EXPECT_EQ(b.Next(Round({O::kFailed})), milliseconds(350));
  EXPECT_EQ(b.Next(Round({O::kIdle})), milliseconds(100));
  EXPECT_EQ(b.Next(Round({O::kFailed})), milliseconds(100));
}

// Emits every row's id as a Tagged vertex: stands for a user's registered transform.
class TagAll : public Transform {
 public:
  Result<GraphMutation> Apply(const TransformContext& ctx,
                              const std::shared_ptr<arrow::Table>& rows) const override {
    GraphMutation m;
    auto ids = rows->SelectColumns({rows->schema()->GetFieldIndex("id")}).ValueOrDie();
    m.vertices.push_back({"Tagged", {"id"}, {}, {ctx.schema->FindTopLevel("id")->type}, ids});
    return m;
  }
};

TEST(CustomStepTest, RegisteredTransformRunsAndReadsEveryColumn) {
  auto spec = MappingSpec::Parse(
      "graph: g\ntables:\n  - table: db.t\n    pipeline:\n      - custom: {name: tag_all}\n",
      "m.yaml");
  ASSERT_THAT(spec, IsOk());
  auto schema =
      std::make_shared<const skade::Schema>(*skade::ParseSchemaSpec("id:long!, note:string"));
  TransformRegistry registry;
  registry.Register("tag_all", std::make_shared<TagAll>());
  auto compiled = CompileMapping(
      *spec,
      [&](const skade::TableIdent&) -> Result<std::shared_ptr<const skade::Schema>> {
        return schema;
      },
      registry);
  ASSERT_THAT(compiled, IsOk());
  EXPECT_TRUE((*compiled)[0].projection.empty());  // an opaque step may need any column
  arrow::Int64Builder id;
  arrow::StringBuilder note;
  ASSERT_TRUE(id.AppendValues({7, 8}).ok());
  ASSERT_TRUE(note.AppendValues({"a", "b"}).ok());
  auto rows = arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("note", arrow::utf8())}),
      {id.Finish().ValueOrDie(), note.Finish().ValueOrDie()});
  auto m = (*compiled)[0].Apply(rows);
  ASSERT_THAT(m, IsOk());
  ASSERT_EQ(m->vertices.size(), 1u);
  EXPECT_EQ(m->vertices[0].label, "Tagged");
  EXPECT_EQ(m->VertexRows(), 2);
}

}  // namespace
}  // namespace bifrost
