// The Arrow IPC streams of the WASM step: what the host sends reads back as the guest
// sees it (the five guest types, narrower and wider types converted, nulls kept), and a
// reply that is not a well-formed stream (garbage, a truncated body, buffers outside the
// body, offsets outside the data, bytes after the end, random corruption) is refused with
// the reason, never read past.
#include "bifrost/transform/wasm_ipc.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::ErrorKind;
using skade::testing::IsErrorWith;
using skade::testing::IsOk;
using ::testing::HasSubstr;

template <typename Builder, typename T>
std::shared_ptr<arrow::Array> Column(std::vector<std::optional<T>> values) {
  Builder b;
  for (const auto& v : values) EXPECT_TRUE((v ? b.Append(*v) : b.AppendNull()).ok());
  return b.Finish().ValueOrDie();
}

std::shared_ptr<arrow::Table> Sample() {
  auto schema = arrow::schema({arrow::field("i32", arrow::int32()), arrow::field("i8", arrow::int8()),
                               arrow::field("f32", arrow::float32()), arrow::field("name", arrow::utf8()),
                               arrow::field("big", arrow::large_utf8()),
                               arrow::field("ok", arrow::boolean(), false)});
  return arrow::Table::Make(
      schema, {Column<arrow::Int32Builder, int32_t>({1, std::nullopt, 3}),
               Column<arrow::Int8Builder, int8_t>({-1, 2, std::nullopt}),
               Column<arrow::FloatBuilder, float>({0.5f, std::nullopt, -2}),
               Column<arrow::StringBuilder, std::string>({"Ada", "", std::nullopt}),
               Column<arrow::LargeStringBuilder, std::string>({std::nullopt, "x", "yz"}),
               Column<arrow::BooleanBuilder, bool>({true, false, true})});
}

skade::Result<std::shared_ptr<arrow::Table>> Decode(const std::string& bytes) {
  return DecodeGuestReply(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

std::string Encoded(const arrow::Table& table) {
  auto buffer = EncodeGuestInput(table);
  EXPECT_THAT(buffer, IsOk());
  return buffer ? (*buffer)->ToString() : "";
}

// Replaces the only occurrence of `from` in `bytes` (a pattern the test knows is there).
void Patch(std::string& bytes, const std::string& from, const std::string& to) {
  auto at = bytes.find(from);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.find(from, at + 1), std::string::npos);
  bytes.replace(at, from.size(), to);
}

template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

TEST(WasmIpcTest, SendsTheFiveGuestTypesAndWidensTheRest) {
  auto back = Decode(Encoded(*Sample()));
  ASSERT_THAT(back, IsOk());
  auto expected = arrow::schema(
      {arrow::field("i32", arrow::int32()), arrow::field("i8", arrow::int64()),
       arrow::field("f32", arrow::float64()), arrow::field("name", arrow::utf8()),
       arrow::field("big", arrow::utf8()), arrow::field("ok", arrow::boolean(), false)});
  EXPECT_TRUE((*back)->schema()->Equals(*expected)) << (*back)->schema()->ToString();
  ASSERT_EQ((*back)->num_rows(), 3);
  auto original = Sample();
  for (int c = 0; c < original->num_columns(); ++c) {
    auto cast = arrow::compute::Cast(original->column(c), expected->field(c)->type());
    ASSERT_TRUE(cast.ok()) << cast.status().ToString();
    EXPECT_TRUE((*back)->column(c)->Equals(*cast->chunked_array())) << c;
  }
}

TEST(WasmIpcTest, SlicedAndEmptyInputs) {
  auto sliced = Decode(Encoded(*Sample()->Slice(1, 2)));
  ASSERT_THAT(sliced, IsOk());
  ASSERT_EQ((*sliced)->num_rows(), 2);
  auto names = std::static_pointer_cast<arrow::StringArray>((*sliced)->column(3)->chunk(0));
  EXPECT_EQ(names->GetString(0), "");
  EXPECT_TRUE(names->IsNull(1));
  auto empty = Decode(Encoded(*Sample()->Slice(0, 0)));
  ASSERT_THAT(empty, IsOk());
  EXPECT_EQ((*empty)->num_rows(), 0);
  EXPECT_EQ((*empty)->num_columns(), 6);
}

TEST(WasmIpcTest, RefusesColumnsAGuestCannotBeGiven) {
  auto table = arrow::Table::Make(arrow::schema({arrow::field("day", arrow::date32())}),
                                  {Column<arrow::Date32Builder, int32_t>({1})});
  EXPECT_THAT(EncodeGuestInput(*table),
              IsErrorWith(ErrorKind::kInvalidArgument,
                          "column 'day' has type date32[day], which a WASM guest cannot be given"));
}

TEST(WasmIpcTest, RefusesWhatIsNotAStream) {
  const std::string prefix = "the guest's reply is not an Arrow IPC stream: ";
  EXPECT_THAT(Decode(""), IsErrorWith(ErrorKind::kInvalidArgument, prefix + "it is empty"));
  EXPECT_THAT(Decode(std::string(64, 'x')), IsErrorWith(ErrorKind::kInvalidArgument, prefix));
  // the end-of-stream marker alone: no schema
  EXPECT_THAT(Decode(Bytes<uint32_t>({0xFFFFFFFFu, 0})), IsErrorWith(ErrorKind::kInvalidArgument, prefix));
  const std::string good = Encoded(*Sample());
  ASSERT_THAT(Decode(good), IsOk());
  EXPECT_THAT(Decode(good + "\x01\x02\x03"),
              IsErrorWith(ErrorKind::kInvalidArgument, "3 bytes follow its end-of-stream marker"));
  // cut inside the batch's body (the last 8 bytes are the end-of-stream marker)
  auto truncated = Decode(good.substr(0, good.size() - 24));
  ASSERT_FALSE(truncated.has_value());
  EXPECT_THAT(truncated.error().message, HasSubstr(prefix));
  EXPECT_THAT(truncated.error().message, HasSubstr("body"));
  // every cut is refused or reads as a shorter, valid stream: never past the end
  for (size_t cut = 0; cut < good.size(); ++cut) {
    auto r = Decode(good.substr(0, cut));
    if (r) {
      EXPECT_TRUE((*r)->ValidateFull().ok()) << cut;
    }
  }
}

TEST(WasmIpcTest, RefusesBuffersOutsideTheBody) {
  // one int64 column of three rows and no nulls: buffers (0, 0) validity, (0, 24) values
  auto table = arrow::Table::Make(arrow::schema({arrow::field("v", arrow::int64())}),
                                  {Column<arrow::Int64Builder, int64_t>({1, 2, 3})});
  std::string bytes = Encoded(*table);
  Patch(bytes, Bytes<int64_t>({0, 0, 0, 24}), Bytes<int64_t>({0, 0, 4096, 24}));
  auto r = Decode(bytes);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("the guest's reply is not an Arrow IPC stream: "));
  EXPECT_THAT(r.error().message, HasSubstr("out of bounds"));
}

TEST(WasmIpcTest, RefusesStringOffsetsOutsideTheData) {
  auto table = arrow::Table::Make(arrow::schema({arrow::field("s", arrow::utf8())}),
                                  {Column<arrow::StringBuilder, std::string>({"a", "bc"})});
  std::string bytes = Encoded(*table);
  Patch(bytes, Bytes<int32_t>({0, 1, 3}), Bytes<int32_t>({0, 1, 300}));
  auto r = Decode(bytes);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("the guest's reply is not an Arrow IPC stream: batch 0: "));
}

// Random corruption of a valid stream: every result is an error or a table that passes
// full validation; none crashes (run under ASan this also catches overreads).
TEST(WasmIpcTest, SurvivesRandomCorruption) {
  const std::string good = Encoded(*Sample());
  std::mt19937 rng(16);
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k)
      bytes[rng() % bytes.size()] = static_cast<char>(rng() % 2 ? rng() : bytes[rng() % bytes.size()] ^ 0xff);
    auto r = Decode(bytes);
    if (!r) {
      ++refused;
      EXPECT_THAT(r.error().message, HasSubstr("the guest's reply is not an Arrow IPC stream: "));
      EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
    } else {
      EXPECT_TRUE((*r)->ValidateFull().ok()) << round;
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace bifrost
