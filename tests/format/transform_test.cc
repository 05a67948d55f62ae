#include "skade/format/transform.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

constexpr int64_t kMicrosPerDay = 86400LL * 1000000;
constexpr int64_t kMicrosPerHour = 3600LL * 1000000;

Value Parsed(const TypePtr& type, std::string_view text) {
  auto v = ParseValue(*type, text);
  EXPECT_THAT(v, IsOk()) << text;
  return v.value_or(Value{});
}

int32_t Hash(const TypePtr& type, std::string_view text) {
  auto h = BucketHash(*type, Parsed(type, text));
  EXPECT_THAT(h, IsOk());
  return h.value_or(0);
}

// Spec appendix B known answers.
TEST(BucketHash, SpecKnownAnswers) {
  EXPECT_EQ(Hash(T(TypeId::kInt), "34"), 2017239379);
  EXPECT_EQ(Hash(T(TypeId::kLong), "34"), 2017239379);
  EXPECT_EQ(Hash(Type::Decimal(4, 2), "14.20"), -500754589);
  EXPECT_EQ(Hash(T(TypeId::kDate), "2017-11-16"), -653330422);
  EXPECT_EQ(Hash(T(TypeId::kTime), "22:31:08"), -662762989);
  EXPECT_EQ(Hash(T(TypeId::kTimestamp), "2017-11-16T22:31:08"), -2047944441);
  EXPECT_EQ(Hash(T(TypeId::kTimestamp), "2017-11-16T22:31:08.000001"), -1207196810);
  EXPECT_EQ(Hash(T(TypeId::kTimestampTz), "2017-11-16T14:31:08-08:00"), -2047944441);
  // Nanosecond timestamps hash as the microsecond they fall in.
  EXPECT_EQ(Hash(T(TypeId::kTimestampNs), "2017-11-16T22:31:08.000001001"), -1207196810);
  EXPECT_EQ(Hash(T(TypeId::kTimestampTzNs), "2017-11-16T14:31:08.000001001-08:00"), -1207196810);
  EXPECT_EQ(Hash(T(TypeId::kTimestampNs), "1969-12-31T23:59:59.999999999"), Hash(T(TypeId::kLong), "-1"));
  EXPECT_EQ(Hash(T(TypeId::kString), "iceberg"), 1210000089);
  EXPECT_EQ(Hash(T(TypeId::kUuid), "f79c3e09-677c-4bbd-a479-3f349cb785e7"), 1488055340);
  EXPECT_EQ(Hash(T(TypeId::kBinary), "0x00010203"), -188683207);
  EXPECT_EQ(Hash(Type::Fixed(4), "0x00010203"), -188683207);
  EXPECT_EQ(Murmur3Hash32("iceberg"), 1210000089);
}

TEST(BucketHash, TailLengthsAndRefusals) {
  // Murmur3 x86_32 seed 0 reference values (all tail lengths).
  EXPECT_EQ(Murmur3Hash32(""), 0);
  EXPECT_EQ(static_cast<uint32_t>(Murmur3Hash32("a")), 0x3c2569b2u);
  EXPECT_EQ(static_cast<uint32_t>(Murmur3Hash32("ab")), 0x9bbfd75fu);
  EXPECT_EQ(static_cast<uint32_t>(Murmur3Hash32("abc")), 0xb3dd93fau);
  EXPECT_EQ(static_cast<uint32_t>(Murmur3Hash32("abcd")), 0x43ed676au);
  EXPECT_THAT(BucketHash(*T(TypeId::kBoolean), Value(true)), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(BucketHash(*T(TypeId::kDouble), Value(1.0)), IsError(ErrorKind::kInvalidArgument));
}

TEST(Transform, BucketApply) {
  Transform b{TransformKind::kBucket, 16};
  auto v = b.Apply(*T(TypeId::kInt), Value(int32_t{34}));
  ASSERT_THAT(v, IsOk());
  EXPECT_EQ(std::get<int32_t>(*v), (2017239379 & 0x7fffffff) % 16);
  // Negative hashes still land in [0, N).
  auto neg = b.Apply(*T(TypeId::kDate), Parsed(T(TypeId::kDate), "2017-11-16"));
  EXPECT_EQ(std::get<int32_t>(*neg), (-653330422 & 0x7fffffff) % 16);
  ValueGen gen(3);
  for (const auto& type : AllPrimitiveTypes()) {
    if (!b.CanApply(*type)) continue;
    for (int i = 0; i < 50; ++i) {
      auto r = b.Apply(*type, gen.Random(*type, false));
      ASSERT_THAT(r, IsOk());
      EXPECT_GE(std::get<int32_t>(*r), 0);
      EXPECT_LT(std::get<int32_t>(*r), 16);
    }
  }
}

TEST(Transform, TruncateIntegers) {
  Transform t{TransformKind::kTruncate, 10};
  auto i = [&](int32_t v) { return std::get<int32_t>(*t.Apply(*T(TypeId::kInt), Value(v))); };
  EXPECT_EQ(i(1), 0);
  EXPECT_EQ(i(10), 10);
  EXPECT_EQ(i(19), 10);
  EXPECT_EQ(i(-1), -10);
  EXPECT_EQ(i(-10), -10);
  EXPECT_EQ(i(-11), -20);
  EXPECT_EQ(i(std::numeric_limits<int32_t>::max()), 2147483640);
  auto l = [&](int64_t v) { return std::get<int64_t>(*t.Apply(*T(TypeId::kLong), Value(v))); };
  EXPECT_EQ(l(-1), -10);
  EXPECT_EQ(l(123456789012), 123456789010);
  // Decimal: the unscaled value, W in unscaled units (spec: 10.65 truncate[50] = 10.50).
  Transform t50{TransformKind::kTruncate, 50};
  auto dec = Type::Decimal(4, 2);
  EXPECT_EQ(std::get<Decimal>(*t50.Apply(*dec, Parsed(dec, "10.65"))).unscaled, 1050);
  EXPECT_EQ(std::get<Decimal>(*t50.Apply(*dec, Parsed(dec, "-0.01"))).unscaled, -50);
}

TEST(Transform, TruncateStringsByCodePointsAndBinaryByBytes) {
  Transform t3{TransformKind::kTruncate, 3};
  auto s = [&](std::string v) {
    return std::get<std::string>(*t3.Apply(*T(TypeId::kString), Value(v)));
  };
  EXPECT_EQ(s("iceberg"), "ice");
  EXPECT_EQ(s("ab"), "ab");
  EXPECT_EQ(s(""), "");
  EXPECT_EQ(s("a\xc3\xb1\xc3\xa9\xe2\x82\xacx"), "a\xc3\xb1\xc3\xa9");  // añé€x → añé
  EXPECT_EQ(s("\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e"),  // 4 × 𝄞
            "\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e\xf0\x9d\x84\x9e");
  auto b = [&](std::string v) {
    return std::get<std::string>(*t3.Apply(*T(TypeId::kBinary), Value(v)));
  };
  EXPECT_EQ(b("\xc3\xb1\xc3\xa9"), "\xc3\xb1\xc3");
  EXPECT_EQ(b("ab"), "ab");
}

TEST(Transform, TimeTransforms) {
  auto date = T(TypeId::kDate), ts = T(TypeId::kTimestamp), tz = T(TypeId::kTimestampTz);
  auto apply = [](TransformKind k, const TypePtr& type, const Value& v) {
    auto r = Transform{k, 0}.Apply(*type, v);
    EXPECT_THAT(r, IsOk());
    return std::get<int32_t>(r.value_or(Value(int32_t{0})));
  };
  Value d = Parsed(date, "2017-11-16");
  EXPECT_EQ(apply(TransformKind::kYear, date, d), 47);
  EXPECT_EQ(apply(TransformKind::kMonth, date, d), 47 * 12 + 10);
  EXPECT_EQ(apply(TransformKind::kDay, date, d), 17486);
  Value t = Parsed(ts, "2017-11-16T22:31:08");
  EXPECT_EQ(apply(TransformKind::kYear, ts, t), 47);
  EXPECT_EQ(apply(TransformKind::kMonth, ts, t), 574);
  EXPECT_EQ(apply(TransformKind::kDay, ts, t), 17486);
  EXPECT_EQ(apply(TransformKind::kHour, ts, t), 17486 * 24 + 22);
  EXPECT_EQ(apply(TransformKind::kHour, tz, Parsed(tz, "2017-11-16T23:31:08+01:00")),
            17486 * 24 + 22);
  // Before the epoch: floor, not truncation toward zero.
  EXPECT_EQ(apply(TransformKind::kYear, date, Value(int32_t{-1})), -1);
  EXPECT_EQ(apply(TransformKind::kMonth, date, Value(int32_t{-1})), -1);
  EXPECT_EQ(apply(TransformKind::kDay, date, Value(int32_t{-1})), -1);
  EXPECT_EQ(apply(TransformKind::kYear, ts, Value(int64_t{-1})), -1);
  EXPECT_EQ(apply(TransformKind::kMonth, ts, Value(int64_t{-1})), -1);
  EXPECT_EQ(apply(TransformKind::kDay, ts, Value(int64_t{-1})), -1);
  EXPECT_EQ(apply(TransformKind::kHour, ts, Value(int64_t{-1})), -1);
  EXPECT_EQ(apply(TransformKind::kHour, ts, Value(-kMicrosPerHour)), -1);
  EXPECT_EQ(apply(TransformKind::kDay, ts, Value(-kMicrosPerDay - 1)), -2);
  // Nanosecond timestamps: the same partitions as the microsecond they fall in.
  auto ns = T(TypeId::kTimestampNs), tz_ns = T(TypeId::kTimestampTzNs);
  Value n = Parsed(ns, "2017-11-16T22:31:08.123456789");
  EXPECT_EQ(apply(TransformKind::kYear, ns, n), 47);
  EXPECT_EQ(apply(TransformKind::kMonth, ns, n), 574);
  EXPECT_EQ(apply(TransformKind::kDay, ns, n), 17486);
  EXPECT_EQ(apply(TransformKind::kHour, ns, n), 17486 * 24 + 22);
  EXPECT_EQ(apply(TransformKind::kHour, tz_ns, Parsed(tz_ns, "2017-11-16T23:31:08.5+01:00")), 17486 * 24 + 22);
  EXPECT_EQ(apply(TransformKind::kDay, ns, Value(int64_t{-1})), -1);
  EXPECT_EQ(apply(TransformKind::kHour, ns, Value(-kMicrosPerHour * 1000)), -1);
  EXPECT_EQ(apply(TransformKind::kYear, date, Parsed(date, "1900-06-01")), -70);
  EXPECT_EQ(apply(TransformKind::kMonth, date, Parsed(date, "1969-01-31")), -12);
}

TEST(Transform, NullsVoidAndIdentity) {
  for (auto kind : {TransformKind::kIdentity, TransformKind::kBucket, TransformKind::kTruncate,
                    TransformKind::kDay, TransformKind::kVoid}) {
    auto r = Transform{kind, 4}.Apply(*T(TypeId::kDate), Value{});
    if (kind == TransformKind::kTruncate) continue;  // not applicable to dates; null anyway
    ASSERT_THAT(r, IsOk());
    EXPECT_TRUE(IsNull(*r));
  }
  Transform void_t{TransformKind::kVoid, 0};
  EXPECT_TRUE(IsNull(*void_t.Apply(*T(TypeId::kString), Value(std::string("x")))));
  auto id =
      Transform{TransformKind::kIdentity, 0}.Apply(*T(TypeId::kString), Value(std::string("x")));
  EXPECT_EQ(std::get<std::string>(*id), "x");
  Transform hour{TransformKind::kHour, 0};
  EXPECT_THAT(hour.Apply(*T(TypeId::kDate), Value(int32_t{1})),
              IsError(ErrorKind::kInvalidArgument));
}

TEST(Transform, CanApplyAndResultTypes) {
  Transform bucket{TransformKind::kBucket, 8}, trunc{TransformKind::kTruncate, 4};
  Transform year{TransformKind::kYear, 0}, day{TransformKind::kDay, 0},
      hour{TransformKind::kHour, 0};
  EXPECT_FALSE(bucket.CanApply(*T(TypeId::kBoolean)));
  EXPECT_FALSE(bucket.CanApply(*T(TypeId::kFloat)));
  EXPECT_FALSE(bucket.CanApply(*T(TypeId::kDouble)));
  EXPECT_TRUE(bucket.CanApply(*T(TypeId::kUuid)));
  EXPECT_TRUE(trunc.CanApply(*Type::Decimal(9, 2)));
  EXPECT_FALSE(trunc.CanApply(*T(TypeId::kDate)));
  EXPECT_FALSE(trunc.CanApply(*Type::Fixed(3)));
  EXPECT_TRUE(year.CanApply(*T(TypeId::kDate)));
  EXPECT_FALSE(year.CanApply(*T(TypeId::kTime)));
  EXPECT_FALSE(hour.CanApply(*T(TypeId::kDate)));
  EXPECT_TRUE(hour.CanApply(*T(TypeId::kTimestampTz)));
  EXPECT_FALSE(Transform{}.CanApply(*Type::Struct({})));
  Transform void_t{TransformKind::kVoid, 0};
  EXPECT_TRUE(void_t.CanApply(*Type::Struct({})));
  EXPECT_EQ(bucket.ResultType(T(TypeId::kString))->id, TypeId::kInt);
  EXPECT_EQ(year.ResultType(T(TypeId::kTimestamp))->id, TypeId::kInt);
  EXPECT_EQ(hour.ResultType(T(TypeId::kTimestamp))->id, TypeId::kInt);
  EXPECT_EQ(day.ResultType(T(TypeId::kTimestamp))->id, TypeId::kDate);
  EXPECT_TRUE(trunc.ResultType(Type::Decimal(9, 2))->Equals(*Type::Decimal(9, 2)));
  EXPECT_EQ(Transform{}.ResultType(T(TypeId::kUuid))->id, TypeId::kUuid);
  EXPECT_TRUE(day.PreservesOrder());
  EXPECT_TRUE(trunc.PreservesOrder());
  EXPECT_FALSE(bucket.PreservesOrder());
}

TEST(Transform, ParseAndToString) {
  for (std::string s :
       {"identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void"}) {
    auto t = Transform::Parse(s);
    ASSERT_THAT(t, IsOk()) << s;
    EXPECT_EQ(t->ToString(), s);
  }
  EXPECT_EQ(Transform::Parse(" Bucket[3] ")->param, 3);
  EXPECT_THAT(Transform::Parse("bucket[0]"), IsErrorWith(ErrorKind::kInvalidArgument, "positive"));
  EXPECT_THAT(Transform::Parse("bucket[x]"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(Transform::Parse("bucket"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(Transform::Parse("truncate[-1]"), IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(Transform::Parse("weekday"), IsErrorWith(ErrorKind::kInvalidArgument, "weekday"));
}

TEST(Transform, PathStrings) {
  auto ts = T(TypeId::kTimestamp);
  auto path = [&](TransformKind k, const Value& v) {
    return Transform{k, 0}.ValueToPathString(*ts, v);
  };
  EXPECT_EQ(path(TransformKind::kYear, Value(int32_t{54})), "2024");
  EXPECT_EQ(path(TransformKind::kMonth, Value(int32_t{54 * 12})), "2024-01");
  EXPECT_EQ(path(TransformKind::kMonth, Value(int32_t{-1})), "1969-12");
  EXPECT_EQ(path(TransformKind::kDay, Value(DaysFromCivil(2024, 1, 31))), "2024-01-31");
  EXPECT_EQ(path(TransformKind::kHour, Value(DaysFromCivil(2024, 1, 31) * 24 + 13)),
            "2024-01-31-13");
  EXPECT_EQ(path(TransformKind::kHour, Value(int32_t{-1})), "1969-12-31-23");
  EXPECT_EQ(path(TransformKind::kDay, Value{}), "null");
  Transform bucket{TransformKind::kBucket, 8}, trunc{TransformKind::kTruncate, 2};
  EXPECT_EQ(bucket.ValueToPathString(*T(TypeId::kString), Value(int32_t{5})), "5");
  EXPECT_EQ(trunc.ValueToPathString(*T(TypeId::kString), Value(std::string("ab"))), "ab");
  EXPECT_EQ(Transform{}.ValueToPathString(*T(TypeId::kDate), Value(int32_t{0})), "1970-01-01");
  EXPECT_EQ(Transform{}.ValueToPathString(*Type::Decimal(5, 2), Value(Decimal{1250})), "12.50");
}

// Time transforms and truncate are monotone; the projection code relies on it.
TEST(Transform, OrderPreservingTransformsAreMonotone) {
  ValueGen gen(4);
  std::vector<std::pair<Transform, TypePtr>> cases = {
      {{TransformKind::kTruncate, 7}, T(TypeId::kInt)},
      {{TransformKind::kTruncate, 7}, T(TypeId::kLong)},
      {{TransformKind::kTruncate, 3}, T(TypeId::kString)},
      {{TransformKind::kTruncate, 2}, T(TypeId::kBinary)},
      {{TransformKind::kTruncate, 50}, Type::Decimal(9, 2)},
      {{TransformKind::kYear, 0}, T(TypeId::kDate)},
      {{TransformKind::kMonth, 0}, T(TypeId::kTimestamp)},
      {{TransformKind::kDay, 0}, T(TypeId::kTimestampTz)},
      {{TransformKind::kHour, 0}, T(TypeId::kTimestamp)},
  };
  for (const auto& [t, type] : cases) {
    for (int i = 0; i < 500; ++i) {
      Value a = gen.Random(*type, i % 2 == 0), b = gen.Random(*type, i % 2 == 0);
      if (CompareValues(a, b) > 0) std::swap(a, b);
      auto ta = t.Apply(*type, a), tb = t.Apply(*type, b);
      ASSERT_THAT(ta, IsOk());
      ASSERT_THAT(tb, IsOk());
      EXPECT_LE(CompareValues(*ta, *tb), 0)
          << t.ToString() << " " << FormatValue(*type, a) << " " << FormatValue(*type, b);
    }
  }
}

}  // namespace
}  // namespace skade
