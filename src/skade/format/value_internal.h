// Helpers shared by value.cc, value_text.cc and transform.cc. Not API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "skade/common/floor_div.h"
#include "skade/format/value.h"

namespace skade::internal {

inline constexpr int64_t kMicrosPerSecond = 1'000'000;
inline constexpr int64_t kMicrosPerHour = 3'600 * kMicrosPerSecond;
inline constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;

/// DaysFromCivil without the 32-bit narrowing (years beyond ±5.8 million).
int64_t DaysFromCivil64(int64_t year, unsigned month, unsigned day);

/// 10^n for 0 <= n <= 38.
unsigned __int128 Pow10(int n);

/// Unscaled decimal as minimal-length two's-complement big-endian bytes.
std::string DecimalToBytes(__int128 unscaled);
/// Inverse of DecimalToBytes; nullopt for 0 or more than 16 bytes.
std::optional<__int128> DecimalFromBytes(std::string_view bytes);
/// Whether |unscaled| fits in `precision` decimal digits.
bool DecimalFitsPrecision(__int128 unscaled, int precision);
/// "12.50" for unscaled 1250 at scale 2.
std::string DecimalToString(__int128 unscaled, int scale);

std::string ToHex(std::string_view bytes);
/// Lowercase or uppercase hex digits, even length; nullopt otherwise.
std::optional<std::string> FromHex(std::string_view hex);

/// The value as a 64-bit integer when it holds int32_t or int64_t.
std::optional<int64_t> AsInt64(const Value& v);

}  // namespace skade::internal
