// Test helpers for values, transforms and expressions: Result matchers and a random
// value generator.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "skade/format/types.h"
#include "skade/format/value.h"
#include "testing/matchers.h"

namespace skade::format_test {

using ::skade::testing::IsError;
using ::skade::testing::IsErrorWith;
using ::skade::testing::IsOk;

inline TypePtr T(TypeId id) { return Type::Primitive(id); }

/// Every primitive type once (decimal and fixed with typical parameters).
inline std::vector<TypePtr> AllPrimitiveTypes() {
  return {T(TypeId::kBoolean), T(TypeId::kInt),       T(TypeId::kLong),        T(TypeId::kFloat),
          T(TypeId::kDouble),  Type::Decimal(9, 2),   Type::Decimal(38, 10),   T(TypeId::kDate),
          T(TypeId::kTime),    T(TypeId::kTimestamp), T(TypeId::kTimestampTz), T(TypeId::kString),
          T(TypeId::kUuid),    T(TypeId::kBinary),    Type::Fixed(4),          T(TypeId::kTimestampNs),
          T(TypeId::kTimestampTzNs)};
}

/// Random values. `narrow` draws from small domains so that random predicates hit
/// equal values often; otherwise values span (most of) the type's range.
class ValueGen {
 public:
  explicit ValueGen(uint64_t seed) : rng_(seed) {}

  std::mt19937_64& rng() { return rng_; }
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename C>
  const auto& Pick(const C& c) {
    return c[static_cast<size_t>(Int(0, static_cast<int64_t>(std::size(c)) - 1))];
  }

  Value Random(const Type& type, bool narrow) {
    switch (type.id) {
      case TypeId::kBoolean:
        return Value(Chance(0.5));
      case TypeId::kInt:
        return Value(static_cast<int32_t>(narrow ? Int(-40, 40) : Int(INT32_MIN, INT32_MAX)));
      case TypeId::kLong:
        return Value(narrow ? Int(-40, 40) : Int(INT64_MIN, INT64_MAX));
      case TypeId::kFloat: {
        static const float kSet[] = {-2.5f, -1.0f, -0.0f, 0.0f, 0.5f, 1.0f, 3.25f, 100.0f};
        if (narrow || Chance(0.3)) return Value(Pick(kSet));
        return Value(static_cast<float>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng_)));
      }
      case TypeId::kDouble: {
        static const double kSet[] = {-2.5, -1.0, -0.0, 0.0, 0.1, 1.0, 3.25, 1e300};
        if (narrow || Chance(0.3)) return Value(Pick(kSet));
        return Value(std::uniform_real_distribution<double>(-1e12, 1e12)(rng_));
      }
      case TypeId::kDecimal: {
        if (narrow) return Value(Decimal{Int(-300, 300) * 10});
        __int128 limit = 1;
        for (int i = 0; i < type.precision && i < 18; ++i) limit *= 10;
        __int128 v = Int(-static_cast<int64_t>(limit - 1), static_cast<int64_t>(limit - 1));
        if (type.precision > 18 && Chance(0.5))
          v = v * 1000000000000000000LL + Int(0, 999999999999999999LL);
        return Value(Decimal{v});
      }
      case TypeId::kDate:
        return Value(static_cast<int32_t>(narrow ? Int(-800, 800) : Int(-1000000, 3000000)));
      case TypeId::kTime:
        return Value(narrow ? Int(0, 47) * 1800LL * 1000000 : Int(0, 86400LL * 1000000 - 1));
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
        if (narrow) {
          constexpr int64_t kSevenHours = 7 * 3600LL * 1000000;
          if (Chance(0.5)) return Value(Int(-20, 20) * kSevenHours);
          return Value(Int(-3000, 3000) * kSevenHours + Int(-5000, 5000));
        }
        return Value(Int(-60000000000000000LL, 60000000000000000LL));
      case TypeId::kTimestampNs:
      case TypeId::kTimestampTzNs:
        if (narrow) return Value(Int(-3000, 3000) * 7 * 3600LL * 1000000000 + Int(-5000, 5000));
        return Value(Int(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
      case TypeId::kString: {
        static const char* kPieces[] = {
            "a", "b", "c", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9d\x84\x9e", "z"};
        std::string s;
        for (int64_t n = Int(0, narrow ? 4 : 12); n > 0; --n) s += Pick(kPieces);
        return Value(s);
      }
      case TypeId::kUuid: {
        std::string s(16, '\0');
        if (narrow) {
          s[15] = static_cast<char>(Int(0, 5));
          s[0] = static_cast<char>(Int(0, 1) * 0x80);
        } else {
          for (auto& c : s) c = static_cast<char>(Int(0, 255));
        }
        return Value(s);
      }
      case TypeId::kBinary:
      case TypeId::kFixed: {
        static const unsigned char kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
        size_t n = type.id == TypeId::kFixed ? static_cast<size_t>(type.length)
                                             : static_cast<size_t>(Int(0, narrow ? 4 : 20));
        std::string s;
        for (size_t i = 0; i < n; ++i)
          s.push_back(static_cast<char>(narrow ? Pick(kBytes) : Int(0, 255)));
        return Value(s);
      }
      default:
        return Value{};
    }
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace skade::format_test
