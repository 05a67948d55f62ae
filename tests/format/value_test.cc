#include "skade/format/value.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "format/format_test_util.h"

namespace skade {
namespace {

using ::skade::format_test::AllPrimitiveTypes;
using ::skade::format_test::IsError;
using ::skade::format_test::IsErrorWith;
using ::skade::format_test::IsOk;
using ::skade::format_test::T;
using ::skade::format_test::ValueGen;
using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

constexpr int64_t kMicrosPerDay = 86400LL * 1000000;

unsigned __int128 Pow10To38() {
  unsigned __int128 r = 1;
  for (int i = 0; i < 38; ++i) r *= 10;
  return r;
}

// --- binary single-value serialization ------------------------------------------------

TEST(SerializeValue, KnownBytes) {
  EXPECT_EQ(*SerializeValue(*T(TypeId::kBoolean), Value(true)), Bytes({1}));
  EXPECT_EQ(*SerializeValue(*T(TypeId::kBoolean), Value(false)), Bytes({0}));
  EXPECT_EQ(*SerializeValue(*T(TypeId::kInt), Value(int32_t{34})), Bytes({34, 0, 0, 0}));
  EXPECT_EQ(*SerializeValue(*T(TypeId::kInt), Value(int32_t{-1})), Bytes({255, 255, 255, 255}));
  EXPECT_EQ(*SerializeValue(*T(TypeId::kLong), Value(int64_t{34})),
            Bytes({34, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(*SerializeValue(*T(TypeId::kFloat), Value(1.0f)), Bytes({0, 0, 0x80, 0x3f}));
  EXPECT_EQ(*SerializeValue(*T(TypeId::kDouble), Value(1.0)),
            Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
  EXPECT_EQ(*SerializeValue(*T(TypeId::kDate), Value(int32_t{17486})), Bytes({0x4e, 0x44, 0, 0}));
  EXPECT_EQ(*SerializeValue(*T(TypeId::kString), Value(std::string("iceberg"))), "iceberg");
  EXPECT_EQ(*SerializeValue(*T(TypeId::kTimestampTz), Value(int64_t{1})),
            Bytes({1, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(SerializeValue, DecimalIsMinimalTwosComplementBigEndian) {
  auto dec = Type::Decimal(10, 2);
  auto ser = [&](__int128 u) { return *SerializeValue(*dec, Value(Decimal{u})); };
  EXPECT_EQ(ser(1420), Bytes({0x05, 0x8c}));  // 14.20
  EXPECT_EQ(ser(0), Bytes({0x00}));
  EXPECT_EQ(ser(-1), Bytes({0xff}));
  EXPECT_EQ(ser(127), Bytes({0x7f}));
  EXPECT_EQ(ser(128), Bytes({0x00, 0x80}));
  EXPECT_EQ(ser(-128), Bytes({0x80}));
  EXPECT_EQ(ser(-129), Bytes({0xff, 0x7f}));
  EXPECT_EQ(ser(255), Bytes({0x00, 0xff}));
  EXPECT_EQ(ser(256), Bytes({0x01, 0x00}));
  __int128 big = static_cast<__int128>(1) << 120;
  EXPECT_EQ(ser(big).size(), 16u);
  EXPECT_EQ(ser(-big).size(), 16u);
}

TEST(SerializeValue, RoundTripsEveryType) {
  ValueGen gen(1);
  for (const auto& type : AllPrimitiveTypes()) {
    for (int i = 0; i < 300; ++i) {
      Value v = gen.Random(*type, i % 2 == 0);
      auto bytes = SerializeValue(*type, v);
      ASSERT_THAT(bytes, IsOk()) << type->ToString();
      auto back = DeserializeValue(*type, *bytes);
      ASSERT_THAT(back, IsOk()) << type->ToString();
      EXPECT_EQ(CompareValues(v, *back), 0) << type->ToString() << " " << FormatValue(*type, v);
      EXPECT_EQ(v.index(), back->index()) << type->ToString();
    }
  }
}

TEST(SerializeValue, Errors) {
  EXPECT_THAT(SerializeValue(*T(TypeId::kInt), Value{}), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(SerializeValue(*Type::List(NestedField{2, "element", false, T(TypeId::kInt), ""}),
                             Value(int32_t{1})),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(SerializeValue(*Type::Fixed(4), Value(std::string("abc"))),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(SerializeValue(*T(TypeId::kUuid), Value(std::string("abc"))),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(SerializeValue(*T(TypeId::kInt), Value(std::string("x"))),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(SerializeValue(*T(TypeId::kInt), Value(int64_t{1} << 40)),
              IsError(ErrorKind::kInvalidArgument));
  // Widening an int into a long column is fine.
  EXPECT_EQ(*SerializeValue(*T(TypeId::kLong), Value(int32_t{-2})),
            std::string(8, '\xff').replace(0, 1, "\xfe"));
}

TEST(DeserializeValue, AcceptsPromotedWidths) {
  EXPECT_EQ(
      std::get<int64_t>(*DeserializeValue(*T(TypeId::kLong), Bytes({0xfe, 0xff, 0xff, 0xff}))), -2);
  EXPECT_EQ(std::get<double>(*DeserializeValue(*T(TypeId::kDouble), Bytes({0, 0, 0x80, 0x3f}))),
            1.0);
  EXPECT_EQ(std::get<int64_t>(*DeserializeValue(*T(TypeId::kTimestamp), Bytes({1, 0, 0, 0}))),
            kMicrosPerDay);
}

TEST(DeserializeValue, WrongLengthsAreCorrupt) {
  EXPECT_THAT(DeserializeValue(*T(TypeId::kInt), Bytes({1, 2})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DeserializeValue(*T(TypeId::kLong), Bytes({1, 2, 3})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DeserializeValue(*T(TypeId::kBoolean), ""), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DeserializeValue(*T(TypeId::kTimestamp), Bytes({0xff, 0xff, 0xff, 0x7f})),
              IsError(ErrorKind::kCorrupt));  // a promoted date beyond the timestamp range
  EXPECT_THAT(DeserializeValue(*T(TypeId::kUuid), "short"), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DeserializeValue(*Type::Fixed(3), "four"), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DeserializeValue(*Type::Decimal(9, 2), ""), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DeserializeValue(*Type::Decimal(9, 2), std::string(17, '\x01')),
              IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DeserializeValue(*Type::Struct({}), ""), IsError(ErrorKind::kCorrupt));
}

// --- ordering ----------------------------------------------------------------------------

TEST(CompareValues, TotalOrder) {
  EXPECT_LT(CompareValues(Value(int32_t{-5}), Value(int32_t{3})), 0);
  EXPECT_EQ(CompareValues(Value(int32_t{3}), Value(int64_t{3})), 0);  // mixed widths
  EXPECT_LT(CompareValues(Value(-0.0), Value(0.0)), 0);
  EXPECT_LT(CompareValues(Value(-0.0f), Value(0.0f)), 0);
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_GT(CompareValues(Value(nan), Value(inf)), 0);
  EXPECT_EQ(CompareValues(Value(nan), Value(nan)), 0);
  EXPECT_LT(CompareValues(Value(-inf), Value(-1e308)), 0);
  // Bytes compare unsigned: 0x80 sorts after 0x7f.
  EXPECT_GT(CompareValues(Value(Bytes({0x80})), Value(Bytes({0x7f}))), 0);
  EXPECT_LT(CompareValues(Value(std::string("ab")), Value(std::string("abc"))), 0);
  EXPECT_LT(CompareValues(Value(std::string("z")), Value(std::string("\xc3\xa9"))), 0);
  EXPECT_LT(CompareValues(Value(Decimal{-100}), Value(Decimal{5})), 0);
  EXPECT_LT(CompareValues(Value(false), Value(true)), 0);
  EXPECT_LT(CompareValues(Value{}, Value(int32_t{0})), 0);  // null first (defensive)
}

// --- human text --------------------------------------------------------------------------

TEST(FormatValue, HumanForms) {
  EXPECT_EQ(FormatValue(*T(TypeId::kDate), Value(int32_t{17486})), "2017-11-16");
  EXPECT_EQ(FormatValue(*T(TypeId::kDate), Value(int32_t{-1})), "1969-12-31");
  EXPECT_EQ(FormatValue(*T(TypeId::kTime), Value(int64_t{81068000000})), "22:31:08");
  EXPECT_EQ(FormatValue(*T(TypeId::kTime), Value(int64_t{81068000001})), "22:31:08.000001");
  int64_t ts = 17486 * kMicrosPerDay + 81068000000;
  EXPECT_EQ(FormatValue(*T(TypeId::kTimestamp), Value(ts)), "2017-11-16T22:31:08");
  EXPECT_EQ(FormatValue(*T(TypeId::kTimestamp), Value(ts + 123456)), "2017-11-16T22:31:08.123456");
  EXPECT_EQ(FormatValue(*T(TypeId::kTimestamp), Value(int64_t{-1})), "1969-12-31T23:59:59.999999");
  EXPECT_EQ(FormatValue(*T(TypeId::kTimestampTz), Value(ts)), "2017-11-16T22:31:08+00:00");
  EXPECT_EQ(FormatValue(*T(TypeId::kTimestampNs), Value(ts * 1000 + 123456789)), "2017-11-16T22:31:08.123456789");
  EXPECT_EQ(FormatValue(*T(TypeId::kTimestampNs), Value(ts * 1000 + 1000)), "2017-11-16T22:31:08.000001000");
  EXPECT_EQ(FormatValue(*T(TypeId::kTimestampNs), Value(int64_t{-1})), "1969-12-31T23:59:59.999999999");
  EXPECT_EQ(FormatValue(*T(TypeId::kTimestampTzNs), Value(ts * 1000)), "2017-11-16T22:31:08+00:00");
  EXPECT_EQ(FormatValue(*Type::Decimal(10, 2), Value(Decimal{1250})), "12.50");
  EXPECT_EQ(FormatValue(*Type::Decimal(10, 2), Value(Decimal{-5})), "-0.05");
  EXPECT_EQ(FormatValue(*Type::Decimal(10, 0), Value(Decimal{-5})), "-5");
  EXPECT_EQ(FormatValue(*T(TypeId::kUuid),
                        Value(Bytes({0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79,
                                     0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7}))),
            "f79c3e09-677c-4bbd-a479-3f349cb785e7");
  EXPECT_EQ(FormatValue(*T(TypeId::kBinary), Value(Bytes({0, 1, 0xab}))), "0001ab");
  EXPECT_EQ(FormatValue(*Type::Fixed(2), Value(Bytes({0xff, 0x10}))), "ff10");
  EXPECT_EQ(FormatValue(*T(TypeId::kInt), Value{}), "null");
  EXPECT_EQ(FormatValue(*T(TypeId::kBoolean), Value(true)), "true");
  EXPECT_EQ(FormatValue(*T(TypeId::kDouble), Value(0.1)), "0.1");
  EXPECT_EQ(FormatValue(*T(TypeId::kDouble), Value(std::nan(""))), "NaN");
  EXPECT_EQ(FormatValue(*T(TypeId::kFloat), Value(-std::numeric_limits<float>::infinity())),
            "-Infinity");
  EXPECT_EQ(FormatValue(*T(TypeId::kDate), Value(DaysFromCivil(12000, 1, 1))), "+12000-01-01");
}

TEST(ParseValue, Dates) {
  EXPECT_EQ(std::get<int32_t>(*ParseValue(*T(TypeId::kDate), "2017-11-16")), 17486);
  EXPECT_EQ(std::get<int32_t>(*ParseValue(*T(TypeId::kDate), "1970-01-01")), 0);
  EXPECT_EQ(std::get<int32_t>(*ParseValue(*T(TypeId::kDate), "2024-02-29")),
            DaysFromCivil(2024, 2, 29));
  EXPECT_EQ(std::get<int32_t>(*ParseValue(*T(TypeId::kDate), "17486")), 17486);  // days
  EXPECT_THAT(ParseValue(*T(TypeId::kDate), "2023-02-29"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseValue(*T(TypeId::kDate), "2024-13-01"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseValue(*T(TypeId::kDate), "2024-1-1"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseValue(*T(TypeId::kDate), "2024-01-31T00:00"),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseValue(*T(TypeId::kDate), "yesterday"),
              IsErrorWith(ErrorKind::kInvalidArgument, "'yesterday'"));
}

TEST(ParseValue, TimesAndTimestamps) {
  auto ts = [](std::string_view s) { return ParseValue(*T(TypeId::kTimestamp), s); };
  auto tz = [](std::string_view s) { return ParseValue(*T(TypeId::kTimestampTz), s); };
  int64_t day = DaysFromCivil(2024, 1, 31) * kMicrosPerDay;
  int64_t noon = 12 * 3600LL * 1000000;
  EXPECT_EQ(std::get<int64_t>(*ts("2024-01-31")), day);
  EXPECT_EQ(std::get<int64_t>(*ts("2024-01-31 12:00:00")), day + noon);
  EXPECT_EQ(std::get<int64_t>(*ts("2024-01-31T12:00")), day + noon);
  EXPECT_EQ(std::get<int64_t>(*ts("2024-01-31T12:00:00.123456")), day + noon + 123456);
  EXPECT_EQ(std::get<int64_t>(*ts("2024-01-31T12:00:00.5")), day + noon + 500000);
  EXPECT_EQ(std::get<int64_t>(*ts("2024-01-31T12:00:00.123456000")), day + noon + 123456);
  EXPECT_THAT(ts("2024-01-31T12:00:00.1234567"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ts("2024-01-31T12:00:00Z"), IsErrorWith(ErrorKind::kInvalidArgument, "timestamptz"));
  EXPECT_THAT(ts("2024-01-31T25:00:00"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(std::get<int64_t>(*tz("2024-01-31T12:00:00Z")), day + noon);
  EXPECT_EQ(std::get<int64_t>(*tz("2024-01-31T12:00:00+00:00")), day + noon);
  EXPECT_EQ(std::get<int64_t>(*tz("2024-01-31T12:00:00+02:00")), day + noon - 2 * 3600LL * 1000000);
  EXPECT_EQ(std::get<int64_t>(*tz("2024-01-31T12:00:00-0130")), day + noon + 90 * 60LL * 1000000);
  EXPECT_EQ(std::get<int64_t>(*tz("2024-01-31 12:00")), day + noon);  // no offset: UTC
  EXPECT_EQ(std::get<int64_t>(*tz("2024-01-31")), day);
  EXPECT_THAT(tz("2024-01-31T12:00:00+2"), IsError(ErrorKind::kInvalidArgument));
  auto time = [](std::string_view s) { return ParseValue(*T(TypeId::kTime), s); };
  EXPECT_EQ(std::get<int64_t>(*time("22:31:08")), 81068000000);
  EXPECT_EQ(std::get<int64_t>(*time("22:31")), 81060000000);
  EXPECT_EQ(std::get<int64_t>(*time("00:00:00.000001")), 1);
  EXPECT_THAT(time("24:00:00"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(time("12:60"), IsError(ErrorKind::kInvalidArgument));
}

// Format v3's nanosecond timestamps: nine fraction digits, offsets, integers as nanoseconds,
// conversions to and from microseconds (down: the microsecond a value falls in).
TEST(ParseValue, NanosecondTimestamps) {
  auto ns = T(TypeId::kTimestampNs), tz_ns = T(TypeId::kTimestampTzNs);
  const int64_t base = (17486 * kMicrosPerDay + 81068000000) * 1000;
  EXPECT_EQ(std::get<int64_t>(*ParseValue(*ns, "2017-11-16T22:31:08.123456789")), base + 123456789);
  EXPECT_EQ(std::get<int64_t>(*ParseValue(*ns, "2017-11-16 22:31:08.1")), base + 100000000);
  EXPECT_EQ(std::get<int64_t>(*ParseValue(*ns, "2017-11-16T22:31:08.1234567890")), base + 123456789);
  EXPECT_EQ(std::get<int64_t>(*ParseValue(*tz_ns, "2017-11-16T23:31:08.000000001+01:00")), base + 1);
  EXPECT_EQ(std::get<int64_t>(*ParseValue(*ns, "42")), 42);
  EXPECT_THAT(ParseValue(*ns, "2017-11-16T22:31:08.1234567891"),
              IsErrorWith(ErrorKind::kInvalidArgument, "more precision than nanoseconds"));
  EXPECT_THAT(ParseValue(*ns, "2017-11-16T22:31:08Z"),
              IsErrorWith(ErrorKind::kInvalidArgument, "(use timestamptz_ns)"));
  EXPECT_THAT(ParseValue(*T(TypeId::kTimestamp), "2017-11-16T22:31:08.123456789"),
              IsErrorWith(ErrorKind::kInvalidArgument, "more precision than microseconds"));
  EXPECT_THAT(ParseValue(*ns, "2400-01-01"), IsErrorWith(ErrorKind::kInvalidArgument, "out of range"));
  for (const char* text : {"2017-11-16T22:31:08.123456789", "1969-12-31T23:59:59.999999999", "1677-09-22T00:12:44"})
    EXPECT_EQ(FormatValue(*ns, *ParseValue(*ns, text)), text);
  auto us = T(TypeId::kTimestamp);
  EXPECT_EQ(std::get<int64_t>(*ConvertValue(Value(base + 999), *ns, *us)), base / 1000);
  EXPECT_EQ(std::get<int64_t>(*ConvertValue(Value(int64_t{-1}), *ns, *us)), -1);
  EXPECT_EQ(std::get<int64_t>(*ConvertValue(Value(base / 1000), *us, *tz_ns)), base);
  EXPECT_EQ(std::get<int64_t>(*ConvertValue(Value(int32_t{1}), *T(TypeId::kDate), *ns)), kMicrosPerDay * 1000);
  auto bytes = SerializeValue(*ns, Value(base + 7));
  ASSERT_THAT(bytes, IsOk());
  EXPECT_EQ(std::get<int64_t>(*DeserializeValue(*ns, *bytes)), base + 7);
  EXPECT_EQ(ParsePrimitiveType("timestamptz_ns").value()->id, TypeId::kTimestampTzNs);
  EXPECT_EQ(ns->ToString(), "timestamp_ns");
}

TEST(ParseValue, Decimals) {
  auto dec = Type::Decimal(10, 2);
  EXPECT_EQ(std::get<Decimal>(*ParseValue(*dec, "12.5")).unscaled, 1250);
  EXPECT_EQ(std::get<Decimal>(*ParseValue(*dec, "12.50")).unscaled, 1250);
  EXPECT_EQ(std::get<Decimal>(*ParseValue(*dec, "-0.05")).unscaled, -5);
  EXPECT_EQ(std::get<Decimal>(*ParseValue(*dec, "12")).unscaled, 1200);
  EXPECT_EQ(std::get<Decimal>(*ParseValue(*dec, "12.500")).unscaled, 1250);  // only zeros dropped
  EXPECT_EQ(std::get<Decimal>(*ParseValue(*dec, "1.25e1")).unscaled, 1250);
  EXPECT_EQ(std::get<Decimal>(*ParseValue(*dec, ".5")).unscaled, 50);
  EXPECT_THAT(ParseValue(*dec, "12.345"), IsErrorWith(ErrorKind::kInvalidArgument, "scale"));
  EXPECT_THAT(ParseValue(*dec, "123456789"), IsErrorWith(ErrorKind::kInvalidArgument, "digits"));
  EXPECT_EQ(std::get<Decimal>(*ParseValue(*dec, "99999999.99")).unscaled, 9999999999);
  EXPECT_THAT(ParseValue(*dec, "abc"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseValue(*dec, "1.2.3"), IsError(ErrorKind::kInvalidArgument));
  auto wide = Type::Decimal(38, 0);
  EXPECT_THAT(ParseValue(*wide, std::string(38, '9')), IsOk());
  EXPECT_THAT(ParseValue(*wide, std::string(39, '9')), IsError(ErrorKind::kInvalidArgument));
}

TEST(ParseValue, OtherTypes) {
  EXPECT_EQ(std::get<int32_t>(*ParseValue(*T(TypeId::kInt), " -42 ")), -42);
  EXPECT_THAT(ParseValue(*T(TypeId::kInt), "3000000000"),
              IsErrorWith(ErrorKind::kInvalidArgument, "out of range"));
  EXPECT_THAT(ParseValue(*T(TypeId::kInt), "4.5"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(std::get<int64_t>(*ParseValue(*T(TypeId::kLong), "3000000000")), 3000000000);
  EXPECT_EQ(std::get<bool>(*ParseValue(*T(TypeId::kBoolean), "TRUE")), true);
  EXPECT_THAT(ParseValue(*T(TypeId::kBoolean), "yes"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(std::get<double>(*ParseValue(*T(TypeId::kDouble), "1.5e3")), 1500.0);
  EXPECT_TRUE(std::isnan(std::get<double>(*ParseValue(*T(TypeId::kDouble), "NaN"))));
  EXPECT_EQ(std::get<float>(*ParseValue(*T(TypeId::kFloat), "-Infinity")),
            -std::numeric_limits<float>::infinity());
  EXPECT_THAT(ParseValue(*T(TypeId::kFloat), "1e300"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(std::get<std::string>(*ParseValue(*T(TypeId::kString), " padded ")), " padded ");
  auto uuid = ParseValue(*T(TypeId::kUuid), "F79C3E09-677C-4BBD-A479-3F349CB785E7");
  ASSERT_THAT(uuid, IsOk());
  EXPECT_EQ(FormatValue(*T(TypeId::kUuid), *uuid), "f79c3e09-677c-4bbd-a479-3f349cb785e7");
  EXPECT_THAT(ParseValue(*T(TypeId::kUuid), "f79c3e09677c-4bbd-a479-3f349cb785e7"),
              IsError(ErrorKind::kInvalidArgument));
  // Binary: raw text unless 0x / X'..' hex.
  EXPECT_EQ(std::get<std::string>(*ParseValue(*T(TypeId::kBinary), "abc")), "abc");
  EXPECT_EQ(std::get<std::string>(*ParseValue(*T(TypeId::kBinary), "0x00ff")), Bytes({0, 255}));
  EXPECT_EQ(std::get<std::string>(*ParseValue(*T(TypeId::kBinary), "X'0A0b'")), Bytes({10, 11}));
  EXPECT_THAT(ParseValue(*T(TypeId::kBinary), "0xabc"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseValue(*Type::Fixed(2), "0x0001"), IsOk());
  EXPECT_THAT(ParseValue(*Type::Fixed(2), "0x000102"),
              IsErrorWith(ErrorKind::kInvalidArgument, "2 bytes"));
}

TEST(ParseValue, ExtremesRoundTrip) {
  auto check = [](const TypePtr& type, const Value& v) {
    std::string text = FormatValue(*type, v);
    auto back = ParseValue(*type, text);
    ASSERT_THAT(back, IsOk()) << text;
    EXPECT_EQ(CompareValues(v, *back), 0) << text;
  };
  for (int32_t d :
       {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 1439382382})
    check(T(TypeId::kDate), Value(d));
  for (auto type : {T(TypeId::kTimestamp), T(TypeId::kTimestampTz)}) {
    check(type, Value(std::numeric_limits<int64_t>::min()));
    check(type, Value(std::numeric_limits<int64_t>::max()));
  }
  EXPECT_EQ(FormatValue(*T(TypeId::kDate), Value(std::numeric_limits<int32_t>::max())),
            "+5881580-07-11");
  EXPECT_THAT(ParseValue(*T(TypeId::kDate), "+5881580-07-12"),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ParseValue(*T(TypeId::kTimestamp), "+294247-01-11"),
              IsError(ErrorKind::kInvalidArgument));
  check(Type::Decimal(38, 0), Value(Decimal{-(static_cast<__int128>(Pow10To38()) - 1)}));
}

TEST(ParseValue, RoundTripsFormatValue) {
  ValueGen gen(2);
  for (const auto& type : AllPrimitiveTypes()) {
    for (int i = 0; i < 300; ++i) {
      Value v = gen.Random(*type, i % 2 == 0);
      std::string text = FormatValue(*type, v);
      if (type->id == TypeId::kBinary || type->id == TypeId::kFixed) text = "0x" + text;
      auto back = ParseValue(*type, text);
      ASSERT_THAT(back, IsOk()) << type->ToString() << " " << text;
      EXPECT_EQ(CompareValues(v, *back), 0) << type->ToString() << " " << text;
    }
  }
}

// --- conversions -------------------------------------------------------------------------

TEST(ConvertValue, NumericConversions) {
  auto i = T(TypeId::kInt), l = T(TypeId::kLong), f = T(TypeId::kFloat), d = T(TypeId::kDouble);
  EXPECT_EQ(std::get<int64_t>(*ConvertValue(Value(int32_t{7}), *i, *l)), 7);
  EXPECT_EQ(std::get<int32_t>(*ConvertValue(Value(int64_t{-7}), *l, *i)), -7);
  EXPECT_THAT(ConvertValue(Value(int64_t{1} << 31), *l, *i),
              IsErrorWith(ErrorKind::kInvalidArgument, "range"));
  EXPECT_EQ(std::get<double>(*ConvertValue(Value(int32_t{3}), *i, *d)), 3.0);
  EXPECT_EQ(std::get<float>(*ConvertValue(Value(0.5), *d, *f)), 0.5f);
  EXPECT_THAT(ConvertValue(Value(1e300), *d, *f), IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(std::get<Decimal>(*ConvertValue(Value(int32_t{12}), *i, *Type::Decimal(5, 2))).unscaled,
            1200);
  EXPECT_THAT(ConvertValue(Value(int32_t{1000}), *i, *Type::Decimal(5, 2)),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ConvertValue(Value(std::numeric_limits<int64_t>::min()), *l, *Type::Decimal(38, 30)),
              IsError(ErrorKind::kInvalidArgument));
  Value huge(Decimal{static_cast<__int128>(Pow10To38() - 1)});
  EXPECT_THAT(ConvertValue(huge, *Type::Decimal(38, 0), *Type::Decimal(38, 37)),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ConvertValue(huge, *Type::Decimal(38, 0), *l), IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(std::get<double>(*ConvertValue(Value(Decimal{-125}), *Type::Decimal(5, 2), *d)), -1.25);
  EXPECT_EQ(std::get<Decimal>(*ConvertValue(Value(0.1), *d, *Type::Decimal(5, 2))).unscaled, 10);
  EXPECT_THAT(ConvertValue(Value(0.125), *d, *Type::Decimal(5, 2)),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(std::get<Decimal>(
                *ConvertValue(Value(Decimal{125}), *Type::Decimal(5, 2), *Type::Decimal(7, 3)))
                .unscaled,
            1250);
  EXPECT_EQ(std::get<Decimal>(
                *ConvertValue(Value(Decimal{1250}), *Type::Decimal(7, 3), *Type::Decimal(5, 2)))
                .unscaled,
            125);
  EXPECT_THAT(ConvertValue(Value(Decimal{1251}), *Type::Decimal(7, 3), *Type::Decimal(5, 2)),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ConvertValue(Value(1.5), *d, *i), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ConvertValue(Value(true), *T(TypeId::kBoolean), *i),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_TRUE(IsNull(*ConvertValue(Value{}, *i, *T(TypeId::kString))));
}

TEST(ConvertValue, TemporalAndText) {
  auto s = T(TypeId::kString);
  EXPECT_EQ(
      std::get<int32_t>(*ConvertValue(Value(std::string("2017-11-16")), *s, *T(TypeId::kDate))),
      17486);
  EXPECT_EQ(std::get<int64_t>(
                *ConvertValue(Value(int32_t{1}), *T(TypeId::kDate), *T(TypeId::kTimestamp))),
            kMicrosPerDay);
  EXPECT_EQ(std::get<int64_t>(
                *ConvertValue(Value(int64_t{5}), *T(TypeId::kTimestamp), *T(TypeId::kTimestampTz))),
            5);
  EXPECT_THAT(ConvertValue(Value(int64_t{5}), *T(TypeId::kTimestamp), *T(TypeId::kDate)),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ConvertValue(Value(std::numeric_limits<int32_t>::max()), *T(TypeId::kDate),
                           *T(TypeId::kTimestamp)),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_EQ(
      std::get<int32_t>(*ConvertValue(Value(int64_t{19000}), *T(TypeId::kLong), *T(TypeId::kDate))),
      19000);
  EXPECT_THAT(ConvertValue(Value(int64_t{-1}), *T(TypeId::kLong), *T(TypeId::kTime)),
              IsError(ErrorKind::kInvalidArgument));
  auto uuid = ConvertValue(Value(std::string("f79c3e09-677c-4bbd-a479-3f349cb785e7")), *s,
                           *T(TypeId::kUuid));
  ASSERT_THAT(uuid, IsOk());
  EXPECT_EQ(std::get<std::string>(*ConvertValue(*uuid, *T(TypeId::kUuid), *s)),
            "f79c3e09-677c-4bbd-a479-3f349cb785e7");
  EXPECT_EQ(std::get<Decimal>(*ConvertValue(Value(std::string("1.5")), *s, *Type::Decimal(4, 1)))
                .unscaled,
            15);
  EXPECT_THAT(ConvertValue(Value(std::string("x")), *s, *T(TypeId::kInt)),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ConvertValue(Value(int32_t{1}), *T(TypeId::kInt), *s),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ConvertValue(Value(Bytes({1, 2})), *T(TypeId::kBinary), *Type::Fixed(3)),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(ConvertValue(Value(Bytes({1, 2, 3})), *T(TypeId::kBinary), *Type::Fixed(3)), IsOk());
}

// --- calendar ----------------------------------------------------------------------------

TEST(Civil, KnownDaysAndRoundTrip) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(2017, 11, 16), 17486);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(1, 1, 1), -719162);
  for (int64_t d = -800000; d <= 800000; d += 37) {
    int64_t y;
    unsigned m, dd;
    CivilFromDays(d, &y, &m, &dd);
    ASSERT_EQ(DaysFromCivil(y, m, dd), d);
    ASSERT_GE(m, 1u);
    ASSERT_LE(m, 12u);
  }
}

}  // namespace
}  // namespace skade
