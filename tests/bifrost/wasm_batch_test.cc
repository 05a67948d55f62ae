// The WASM batch layout: what the host writes reads back the same (nulls, empty strings,
// narrower integers widened), and a reply whose offsets or lengths point outside it is
// refused with the reason, never read past.
#include "bifrost/transform/wasm_batch.h"

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::testing::IsOk;
using ::testing::HasSubstr;

std::shared_ptr<arrow::Table> Sample() {
  arrow::Int32Builder id;
  arrow::DoubleBuilder score;
  arrow::StringBuilder name;
  arrow::BooleanBuilder ok;
  EXPECT_TRUE(id.AppendValues({1, 2, 3}).ok());
  EXPECT_TRUE(score.Append(0.5).ok() && score.AppendNull().ok() && score.Append(-2).ok());
  EXPECT_TRUE(name.Append("Ada").ok() && name.Append("").ok() && name.AppendNull().ok());
  EXPECT_TRUE(ok.Append(true).ok() && ok.AppendNull().ok() && ok.Append(false).ok());
  return arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int32()), arrow::field("score", arrow::float64()),
                     arrow::field("name", arrow::utf8()), arrow::field("ok", arrow::boolean())}),
      {id.Finish().ValueOrDie(), score.Finish().ValueOrDie(), name.Finish().ValueOrDie(),
       ok.Finish().ValueOrDie()});
}

TEST(WasmBatchTest, RoundTripsEveryType) {
  auto table = Sample();
  auto bytes = EncodeBatch(*table);
  ASSERT_THAT(bytes, IsOk());
  auto back = DecodeBatch(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
  ASSERT_THAT(back, IsOk());
  ASSERT_EQ((*back)->num_rows(), 3);
  auto ids = std::dynamic_pointer_cast<arrow::Int64Array>((*back)->column(0)->chunk(0));
  ASSERT_TRUE(ids) << "int32 arrives widened to int64";
  EXPECT_EQ(ids->Value(0), 1);
  EXPECT_EQ(ids->Value(2), 3);
  for (int c = 1; c < 4; ++c) {
    EXPECT_EQ((*back)->schema()->field(c)->name(), table->schema()->field(c)->name());
    EXPECT_TRUE((*back)->column(c)->Equals(table->column(c))) << c;
  }
}

TEST(WasmBatchTest, SlicedInputEncodesOnlyItsRows) {
  auto bytes = EncodeBatch(*Sample()->Slice(1, 2));
  ASSERT_THAT(bytes, IsOk());
  auto back = DecodeBatch(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
  ASSERT_THAT(back, IsOk());
  ASSERT_EQ((*back)->num_rows(), 2);
  auto names = std::static_pointer_cast<arrow::StringArray>((*back)->column(2)->chunk(0));
  EXPECT_EQ(names->GetString(0), "");
  EXPECT_TRUE(names->IsNull(1));
}

TEST(WasmBatchTest, RefusesWhatPointsOutside) {
  auto bytes = *EncodeBatch(*Sample());
  auto decode = [](const std::string& b) {
    return DecodeBatch(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  };
  EXPECT_THAT(decode(bytes.substr(0, 8)).error().message, HasSubstr("shorter than its header"));
  std::string wrong = bytes;
  wrong[0] = 'X';
  EXPECT_THAT(decode(wrong).error().message, HasSubstr("wrong magic number"));
  // every truncation is refused, none read past the end
  for (size_t cut = 16; cut < bytes.size(); cut += 8) {
    auto r = decode(bytes.substr(0, cut));
    ASSERT_FALSE(r.has_value()) << cut;
    EXPECT_THAT(r.error().message, HasSubstr("the guest's reply is not a batch"));
  }
  std::string huge = bytes;
  uint32_t far = 0xfffffff0u;
  std::memcpy(huge.data() + 16 + 2 * 32 + 16, &far, 4);  // column 2's values_off
  EXPECT_THAT(decode(huge).error().message, HasSubstr("column 'name''s offsets are past its end"));
}

}  // namespace
}  // namespace bifrost
