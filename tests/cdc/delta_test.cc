#include "skade/cdc/delta.h"

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;
using testing::Row;

TEST(DeltaTest, AppendsOnlyThenDeletesNeedReload) {
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  ASSERT_THAT(cat->CreateNamespace("d"), IsOk());
  Schema schema(0, {NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""}}, {1});
  ASSERT_THAT(cat->CreateTable({"d", "t"}, schema, PartitionSpec(), {}), IsOk());
  auto t = std::move(*Table::Load(*cat, {"d", "t"}));
  auto rows = [&](int from, int to) {
    std::vector<Row> out;
    for (int i = from; i < to; ++i) {
      Row r(1);
      r[0].value = Value{static_cast<int64_t>(i)};
      out.push_back(r);
    }
    return testing::ToArrow(schema, out);
  };
  ASSERT_THAT(t->Append(rows(0, 10)), IsOk());
  int64_t s1 = *t->metadata()->current_snapshot_id;
  ASSERT_THAT(t->Append(rows(10, 15)), IsOk());
  ASSERT_THAT(t->Append(rows(15, 18)), IsOk());
  int64_t s3 = *t->metadata()->current_snapshot_id;
  cdc::DeltaPlan plan;
  auto delta = cdc::ReadDelta(*t, s1, s3, &plan);
  ASSERT_THAT(delta, IsOk());
  EXPECT_EQ((*delta)->num_rows(), 8);
  EXPECT_EQ(plan.snapshots.size(), 2u);
  EXPECT_EQ(plan.added_files.size(), 2u);
  EXPECT_FALSE(plan.needs_full_reload);
  // From the start: every appended row.
  EXPECT_EQ((*cdc::ReadDelta(*t, std::nullopt, std::nullopt))->num_rows(), 18);
  // Compaction adds files but no rows to a delta.
  ASSERT_THAT(t->Compact(std::nullopt), IsOk());
  auto after_compact = cdc::ReadDelta(*t, s3, std::nullopt, &plan);
  ASSERT_THAT(after_compact, IsOk());
  EXPECT_EQ((*after_compact)->num_rows(), 0);
  EXPECT_FALSE(plan.needs_full_reload);
  // A delete cannot be described by appended rows.
  int64_t s4 = *t->metadata()->current_snapshot_id;
  ASSERT_THAT(t->Delete("id < 3"), IsOk());
  ASSERT_THAT(cdc::PlanDelta(*t, s4, std::nullopt), IsOk());
  EXPECT_TRUE(cdc::PlanDelta(*t, s4, std::nullopt)->needs_full_reload);
  EXPECT_THAT(cdc::PlanDelta(*t, 42, std::nullopt), IsError(ErrorKind::kNotFound));
}

}  // namespace
}  // namespace skade
