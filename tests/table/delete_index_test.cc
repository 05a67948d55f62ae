// Equality delete key sets: which data rows a set of keys removes, through each of the
// probe's paths (a bitmap for dense integer keys, exact hashes for other one-column keys
// of up to 8 bytes, hashes checked column by column otherwise); nulls match nulls.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <optional>

#include "skade/table/delete_index.h"

namespace skade {
namespace {

std::shared_ptr<arrow::Array> Longs(const std::vector<std::optional<int64_t>>& v) {
  arrow::Int64Builder b;
  for (const auto& x : v) EXPECT_TRUE((x ? b.Append(*x) : b.AppendNull()).ok());
  return *b.Finish();
}

template <typename Builder>
std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& v) {
  Builder b;
  for (const auto& x : v) EXPECT_TRUE((x ? b.Append(*x) : b.AppendNull()).ok());
  return *b.Finish();
}

std::vector<bool> Marked(const EqualityProbe& probe, const std::vector<std::shared_ptr<arrow::Array>>& data,
                         std::vector<bool> out = {}) {
  if (out.empty()) out.assign(static_cast<size_t>(data[0]->length()), false);
  auto st = probe.Mark(data, &out);
  EXPECT_TRUE(st.has_value()) << st.error().ToString();
  return out;
}

TEST(EqualityProbe, DenseIntegerKeys) {
  auto probe = EqualityProbe::Make({Longs({5, 7, 1000000, -3, 7})});
  ASSERT_TRUE(probe.has_value());
  auto data = Longs({5, 6, 7, -3, std::nullopt, 1000000, 1000001, -4});
  EXPECT_EQ(Marked(**probe, {data}), (std::vector<bool>{true, false, true, true, false, true, false, false}));
}

TEST(EqualityProbe, NullKeyMatchesNullRows) {
  for (auto keys : {Longs({1, std::nullopt}), Longs({1, int64_t{1} << 50, std::nullopt})}) {  // bitmap, hashes
    auto probe = EqualityProbe::Make({keys});
    ASSERT_TRUE(probe.has_value());
    EXPECT_EQ(Marked(**probe, {Longs({std::nullopt, 1, 2})}), (std::vector<bool>{true, true, false}));
  }
}

TEST(EqualityProbe, SparseIntegerKeysUseExactHashes) {
  int64_t big = int64_t{1} << 40;
  auto probe = EqualityProbe::Make({Longs({0, big, -big * 1000, big})});
  ASSERT_TRUE(probe.has_value());
  auto data = Longs({big, big + 1, 0, -big * 1000, 1, std::nullopt});
  EXPECT_EQ(Marked(**probe, {data}), (std::vector<bool>{true, false, true, true, false, false}));
}

TEST(EqualityProbe, TwoColumnKeysCompareEveryColumn) {
  auto probe = EqualityProbe::Make({Longs({1, 1, 2, 1}),
                                    Strings<arrow::StringBuilder>({"a", std::nullopt, "b", "a"})});
  ASSERT_TRUE(probe.has_value());
  auto ids = Longs({1, 1, 1, 2, 2, 3, 1});
  auto names = Strings<arrow::StringBuilder>({"a", "b", std::nullopt, "b", "a", "a", ""});
  EXPECT_EQ(Marked(**probe, {ids, names}), (std::vector<bool>{true, false, true, true, false, false, false}));
}

TEST(EqualityProbe, DataOfAnotherLayoutIsCastToTheKeys) {
  auto probe = EqualityProbe::Make({Strings<arrow::StringBuilder>({"x", "yy", ""})});
  ASSERT_TRUE(probe.has_value());
  auto data = Strings<arrow::LargeStringBuilder>({"x", "y", "yy", "", std::nullopt});
  EXPECT_EQ(Marked(**probe, {data}), (std::vector<bool>{true, false, true, true, false}));
}

TEST(EqualityProbe, RowsAlreadyDeletedStayDeleted) {
  auto probe = EqualityProbe::Make({Longs({2})});
  ASSERT_TRUE(probe.has_value());
  EXPECT_EQ(Marked(**probe, {Longs({1, 2, 3})}, {true, false, false}), (std::vector<bool>{true, true, false}));
}

TEST(EqualityProbe, SlicedArraysReadFromTheirOffset) {
  auto keys = Longs({100, 1, 2, 3});
  auto probe = EqualityProbe::Make({keys->Slice(1)});  // 100 is not a key
  ASSERT_TRUE(probe.has_value());
  auto data = Longs({9, 9, 100, 2, 3})->Slice(2);
  EXPECT_EQ(Marked(**probe, {data}), (std::vector<bool>{false, true, true}));
}

TEST(EqualityProbe, UncomparableTypeIsAnError) {
  arrow::ListBuilder lb(arrow::default_memory_pool(), std::make_shared<arrow::Int64Builder>());
  ASSERT_TRUE(lb.Append().ok());
  auto probe = EqualityProbe::Make({*lb.Finish()});
  ASSERT_FALSE(probe.has_value());
  EXPECT_NE(probe.error().message.find("cannot compare"), std::string::npos) << probe.error().message;
}

}  // namespace
}  // namespace skade
