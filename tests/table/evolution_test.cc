// Schema and partition evolution, refs and rollback.
#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "skade/table/scan.h"
#include "skade/table/schema_update.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;
using testing::Row;

std::vector<std::string> Rendered(const arrow::Table& t, const Schema& schema) {
  std::vector<NestedField> fields;
  for (const auto& f : t.schema()->fields()) fields.push_back(*schema.FindTopLevel(f->name()));
  std::vector<std::string> out;
  for (const auto& r : testing::FromArrow(t, fields)) out.push_back(testing::RowToString(r, fields));
  std::sort(out.begin(), out.end());
  return out;
}

class EvolutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    ASSERT_THAT(cat_->CreateNamespace("e"), IsOk());
    Schema s = *ParseSchemaSpec("id:long!, n:int, f:float, price:decimal(6,2), addr:struct<city:string>, note:string");
    s = Schema(0, s.fields(), {1});
    ASSERT_THAT(cat_->CreateTable({"e", "t"}, s, PartitionSpec(), {}), IsOk());
    t_ = std::move(*Table::Load(*cat_, {"e", "t"}));
  }
  Row MakeRow(const Schema& s, int64_t id) {
    testing::RandomData d(static_cast<uint64_t>(id));
    Row r = d.RandomRow(s, 0.0);
    r[0].value = Value{id};
    return r;
  }
  testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  std::unique_ptr<Table> t_;
};

TEST_F(EvolutionTest, OldFilesReadThroughEvolvedSchema) {
  Schema s0 = *t_->metadata()->schema();
  std::vector<Row> before{MakeRow(s0, 1), MakeRow(s0, 2)};
  ASSERT_THAT(t_->Append(testing::ToArrow(s0, before)), IsOk());
  int64_t first = *t_->metadata()->current_snapshot_id;
  SchemaUpdate u;
  u.AddColumn("extra", Type::Primitive(TypeId::kString), "id")
      .AddColumn("addr.zip", Type::Primitive(TypeId::kInt))
      .RenameColumn("note", "comment")
      .DropColumn("f")
      .WidenColumn("n", Type::Primitive(TypeId::kLong))
      .WidenColumn("price", Type::Decimal(12, 2))
      .MakeOptional("addr");
  ASSERT_THAT(t_->UpdateSchema(u), IsOk());
  const Schema& s1 = *t_->metadata()->schema();
  EXPECT_EQ(s1.schema_id(), 1);
  EXPECT_EQ(s1.fields()[1].name, "extra");
  EXPECT_EQ(s1.FindTopLevel("n")->type->id, TypeId::kLong);
  EXPECT_EQ(s1.FindTopLevel("f"), nullptr);
  EXPECT_NE(s1.FindByPath("addr.zip"), nullptr);
  std::vector<Row> after{MakeRow(s1, 3)};
  ASSERT_THAT(t_->Append(testing::ToArrow(s1, after)), IsOk());

  auto all = t_->NewScan().ToTable();
  ASSERT_THAT(all, IsOk());
  // Old rows: same values through renamed/widened columns, nulls for new ones.
  std::vector<Row> expected = after;
  for (const auto& old : before) {
    Row r(s1.fields().size());
    r[0] = old[0];                                    // id
    r[1].null = true;                                 // extra (new)
    r[2] = old[1];                                    // n: int → long
    if (!r[2].null) r[2].value = Value{static_cast<int64_t>(std::get<int32_t>(old[1].value))};
    r[3] = old[3];                                    // price: decimal(6,2) → (12,2), same unscaled
    r[4] = old[4];                                    // addr gains zip (null)
    if (!r[4].null) r[4].children.push_back(testing::Cell{true, {}, {}});
    r[5] = old[5];                                    // note → comment
    expected.push_back(r);
  }
  std::vector<NestedField> fields = s1.fields();
  std::vector<std::string> want;
  for (const auto& r : expected) want.push_back(testing::RowToString(r, fields));
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Rendered(**all, s1), want);
  // Filters bind to the new names and use old files' metrics through ids.
  auto filtered = t_->NewScan().Filter("comment is not null and n >= -1000000000000").ToTable();
  ASSERT_THAT(filtered, IsOk());
  // Time travel reads with the schema of that snapshot.
  auto old = t_->NewScan().UseSnapshot(first).ToTable();
  ASSERT_THAT(old, IsOk());
  EXPECT_EQ((*old)->schema()->GetFieldIndex("f"), 2);
  EXPECT_EQ((*old)->num_rows(), 2);
}

TEST_F(EvolutionTest, InvalidChangesAreRefusedTogetherAndNothingChanges) {
  std::string before = t_->metadata_location();
  SchemaUpdate u;
  u.WidenColumn("note", Type::Primitive(TypeId::kInt))
      .DropColumn("id")
      .RenameColumn("missing", "x")
      .WidenColumn("n", Type::Primitive(TypeId::kFloat));
  auto r = t_->UpdateSchema(u);
  ASSERT_THAT(r, IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("cannot change 'note' from string to int"));
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("identifier column"));
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("unknown column 'missing'"));
  ASSERT_THAT(t_->Refresh(), IsOk());
  EXPECT_EQ(t_->metadata_location(), before);
}

// Unknown columns in a projection and a filter are all named, with the table's columns listed once.
TEST_F(EvolutionTest, UnknownScanColumnsListTheTableColumnsOnce) {
  auto count = [](const std::string& text) {
    size_t n = 0;
    for (size_t at = text.find("(columns: "); at != text.npos; at = text.find("(columns: ", at + 1)) ++n;
    return n;
  };
  auto both = t_->NewScan().Select({"id", "nope"}).Filter("gone > 1").Plan();
  ASSERT_THAT(both, IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(both.error().message, ::testing::HasSubstr("unknown column 'nope'"));
  EXPECT_THAT(both.error().message, ::testing::HasSubstr("unknown column 'gone' in filter"));
  EXPECT_EQ(count(both.error().message), 1u) << both.error().message;
  // A filter that fails for another reason leaves the listing to the projection.
  auto literal = t_->NewScan().Select({"nope"}).Filter("id = 'x'").Plan();
  ASSERT_THAT(literal, IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(literal.error().message, ::testing::HasSubstr("unknown column 'nope'"));
  EXPECT_EQ(count(literal.error().message), 1u) << literal.error().message;
  auto filter_only = t_->NewScan().Filter("gone > 1").Plan();
  ASSERT_THAT(filter_only, IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(count(filter_only.error().message), 1u) << filter_only.error().message;
}

TEST_F(EvolutionTest, PartitionEvolutionScansBothSpecs) {
  const Schema& s = *t_->metadata()->schema();
  std::vector<Row> a, b;
  for (int i = 0; i < 40; ++i) a.push_back(MakeRow(s, i));
  ASSERT_THAT(t_->Append(testing::ToArrow(s, a)), IsOk());
  ASSERT_THAT(t_->AddPartitionFields("bucket(4,id)"), IsOk());
  EXPECT_EQ(t_->metadata()->spec().fields().size(), 1u);
  EXPECT_EQ(t_->metadata()->spec().fields()[0].field_id, 1000);
  for (int i = 40; i < 80; ++i) b.push_back(MakeRow(s, i));
  ASSERT_THAT(t_->Append(testing::ToArrow(s, b)), IsOk());
  ASSERT_THAT(t_->RemovePartitionField("id_bucket"), IsOk());
  EXPECT_TRUE(t_->metadata()->spec().unpartitioned());
  EXPECT_EQ(t_->metadata()->specs.size(), 2u);  // the unpartitioned spec was re-used
  ASSERT_THAT(t_->Append(testing::ToArrow(s, {MakeRow(s, 99)})), IsOk());
  auto all = t_->NewScan().ToTable();
  ASSERT_THAT(all, IsOk());
  EXPECT_EQ((*all)->num_rows(), 81);
  auto plan = t_->NewScan().Filter("id = 50").Plan();
  ASSERT_THAT(plan, IsOk());
  EXPECT_GT(plan->stats->files_skipped_by_partition + plan->stats->files_skipped_by_metrics, 0);
  auto one = TableScan::Read(*plan, &cat_->io());
  EXPECT_EQ((*(*one)->ToTable())->num_rows(), 1);
  EXPECT_THAT(t_->RemovePartitionField("nope"), testing::IsErrorWith(ErrorKind::kInvalidArgument, "no partition field"));
}

TEST_F(EvolutionTest, TagsBranchesFastForwardAndRollback) {
  const Schema& s = *t_->metadata()->schema();
  ASSERT_THAT(t_->CreateRef("v0", "tag", std::nullopt), IsError(ErrorKind::kInvalidArgument));  // no snapshot yet
  ASSERT_THAT(t_->Append(testing::ToArrow(s, {MakeRow(s, 1)})), IsOk());
  int64_t s1 = *t_->metadata()->current_snapshot_id;
  ASSERT_THAT(t_->CreateRef("v1", "tag", std::nullopt), IsOk());
  ASSERT_THAT(t_->CreateRef("dev", "branch", std::nullopt), IsOk());
  EXPECT_THAT(t_->CreateRef("dev", "branch", std::nullopt), IsError(ErrorKind::kAlreadyExists));
  WriteOptions on_dev;
  on_dev.branch = "dev";
  ASSERT_THAT(t_->Append(testing::ToArrow(s, {MakeRow(s, 2), MakeRow(s, 3)}), on_dev), IsOk());
  EXPECT_EQ(*t_->metadata()->current_snapshot_id, s1);  // main untouched
  EXPECT_EQ((*t_->NewScan().ToTable())->num_rows(), 1);
  EXPECT_EQ((*t_->NewScan().UseRef("dev").ToTable())->num_rows(), 3);
  EXPECT_EQ((*t_->NewScan().UseRef("v1").ToTable())->num_rows(), 1);
  on_dev.branch = "v1";
  EXPECT_THAT(t_->Append(testing::ToArrow(s, {MakeRow(s, 4)}), on_dev), IsError(ErrorKind::kInvalidArgument));
  ASSERT_THAT(t_->FastForward("main", "dev"), IsOk());
  EXPECT_EQ((*t_->NewScan().ToTable())->num_rows(), 3);
  ASSERT_THAT(t_->Append(testing::ToArrow(s, {MakeRow(s, 5)})), IsOk());
  EXPECT_THAT(t_->FastForward("dev", "v1"), IsError(ErrorKind::kInvalidArgument));
  ASSERT_THAT(t_->Rollback(s1), IsOk());
  EXPECT_EQ((*t_->NewScan().ToTable())->num_rows(), 1);
  EXPECT_THAT(t_->Rollback(12345), IsError(ErrorKind::kNotFound));
  ASSERT_THAT(t_->DropRef("v1", "tag"), IsOk());
  EXPECT_THAT(t_->DropRef("v1", "tag"), IsError(ErrorKind::kNotFound));
  EXPECT_THAT(t_->DropRef("main", "branch"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(t_->DropRef("dev", "tag"), IsError(ErrorKind::kInvalidArgument));
}

}  // namespace
}  // namespace skade
