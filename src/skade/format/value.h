// Single values of Iceberg primitive types: partition values, bounds, literals.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "skade/common/result.h"
#include "skade/format/types.h"

namespace skade {

/// A decimal's unscaled value; the scale lives in the type.
struct Decimal {
  __int128 unscaled = 0;
  bool operator==(const Decimal&) const = default;
};

/// A primitive value, interpreted through its Iceberg type:
/// boolean → bool; int, date (days) → int32_t; long, time, timestamp(tz) (µs) → int64_t;
/// float → float; double → double; string, binary, fixed, uuid (16 raw bytes) →
/// std::string; decimal → Decimal. monostate is null.
using Value = std::variant<std::monostate, bool, int32_t, int64_t, float, double, std::string,
                           Decimal>;

inline bool IsNull(const Value& v) { return std::holds_alternative<std::monostate>(v); }

/// Total order for two non-null values of the same type: <0, 0, >0. Floats order
/// -0.0 before +0.0 and NaN after everything; bytes compare unsigned lexicographically.
int CompareValues(const Value& a, const Value& b);

/// Iceberg's binary single-value serialization (spec appendix D).
/// Errors: kInvalidArgument for nested types or a value that does not fit the type.
Result<std::string> SerializeValue(const Type& type, const Value& value);
/// Inverse of SerializeValue. Accepts the promoted widths the spec allows
/// (4-byte bound for a long/double/timestamp column). Errors: kCorrupt.
Result<Value> DeserializeValue(const Type& type, std::string_view bytes);

/// Human form: 2024-01-31, 2024-01-31T12:00:00.000001, 12.50, uuid text, hex for binary.
std::string FormatValue(const Type& type, const Value& value);
/// Parses the human form (also plain integers for dates/timestamps as days/µs).
/// Errors: kInvalidArgument naming the text and the type.
Result<Value> ParseValue(const Type& type, std::string_view text);

/// Converts a value of one primitive type to another (int→long, long→int if in range,
/// int/long→float/double/decimal, date→timestamp, string↔uuid text...).
/// Errors: kInvalidArgument when it does not fit.
Result<Value> ConvertValue(const Value& value, const Type& from, const Type& to);

/// Days/µs helpers shared by transforms and formatting (proleptic Gregorian, UTC).
int32_t DaysFromCivil(int64_t year, unsigned month, unsigned day);
void CivilFromDays(int64_t days, int64_t* year, unsigned* month, unsigned* day);

}  // namespace skade
