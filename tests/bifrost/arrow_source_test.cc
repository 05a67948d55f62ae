// The in-memory Arrow source: a batch read, not CDC.
#include "bifrost/source/arrow_source.h"

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::testing::IsErrorWith;
using skade::testing::IsOk;

CompiledTable ArrowTable(SyncMode mode) {
  CompiledTable t;
  t.spec.table = "mem.people";
  t.spec.mode = mode;
  return t;
}

std::shared_ptr<arrow::Table> Ids(std::vector<int64_t> ids) {
  arrow::Int64Builder b;
  EXPECT_TRUE(b.AppendValues(ids).ok());
  return arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64())}),
                            {b.Finish().ValueOrDie()});
}

TEST(ArrowSourceTest, FullRereadsIncrementalShipsOnceCdcIsRefused) {
  ArrowSource source;
  source.Put("mem.people", Ids({1, 2}));
  auto full = ArrowTable(SyncMode::kFull);
  auto first = source.FetchNew(full, {});
  ASSERT_THAT(first, IsOk());
  ASSERT_TRUE(first->has_value());
  auto again = source.FetchNew(full, (*first)->next);
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->has_value());  // re-read every round

  auto inc = ArrowTable(SyncMode::kIncremental);
  auto shipped = source.FetchNew(inc, {});
  ASSERT_THAT(shipped, IsOk());
  EXPECT_EQ((*shipped)->rows->num_rows(), 2);
  auto nothing = source.FetchNew(inc, (*shipped)->next);
  ASSERT_THAT(nothing, IsOk());
  EXPECT_FALSE(nothing->has_value());
  source.Put("mem.people", Ids({3}));
  EXPECT_TRUE(source.FetchNew(inc, (*shipped)->next)->has_value());

  EXPECT_THAT(source.FetchNew(ArrowTable(SyncMode::kCdc), {}),
              IsErrorWith(skade::ErrorKind::kUnsupported, "needs the skade warehouse source"));
  auto missing = ArrowTable(SyncMode::kFull);
  missing.spec.table = "mem.nobody";
  EXPECT_THAT(source.FetchNew(missing, {}),
              IsErrorWith(skade::ErrorKind::kNotFound, "(mem.people)"));
}

}  // namespace
}  // namespace bifrost
