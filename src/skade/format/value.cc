// Values: ordering, binary single-value serialization, conversions between types.
// The human text form lives in value_text.cc.
#include "skade/format/value.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "skade/format/value_internal.h"

namespace skade {
namespace internal {

unsigned __int128 Pow10(int n) {
  unsigned __int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

std::string DecimalToBytes(__int128 unscaled) {
  auto u = static_cast<unsigned __int128>(unscaled);
  unsigned char buf[16];
  for (int i = 0; i < 16; ++i) buf[15 - i] = static_cast<unsigned char>(u >> (8 * i));
  // Drop leading bytes that are pure sign extension of the next byte.
  int start = 0;
  while (start < 15 && ((buf[start] == 0x00 && !(buf[start + 1] & 0x80)) ||
                        (buf[start] == 0xff && (buf[start + 1] & 0x80)))) {
    ++start;
  }
  return std::string(reinterpret_cast<const char*>(buf + start), 16 - start);
}

std::optional<__int128> DecimalFromBytes(std::string_view bytes) {
  if (bytes.empty() || bytes.size() > 16) return std::nullopt;
  unsigned __int128 u =
      (static_cast<unsigned char>(bytes[0]) & 0x80) ? ~static_cast<unsigned __int128>(0) : 0;
  for (char c : bytes) u = (u << 8) | static_cast<unsigned char>(c);
  return static_cast<__int128>(u);
}

bool DecimalFitsPrecision(__int128 unscaled, int precision) {
  if (precision >= 39) return true;
  unsigned __int128 mag = unscaled < 0 ? -static_cast<unsigned __int128>(unscaled)
                                       : static_cast<unsigned __int128>(unscaled);
  return mag < Pow10(precision);
}

std::string DecimalToString(__int128 unscaled, int scale) {
  bool neg = unscaled < 0;
  unsigned __int128 mag =
      neg ? -static_cast<unsigned __int128>(unscaled) : static_cast<unsigned __int128>(unscaled);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(mag % 10)));
    mag /= 10;
  } while (mag != 0);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale)
      digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return neg ? "-" + digits : digits;
}

std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::optional<std::string> FromHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

std::optional<int64_t> AsInt64(const Value& v) {
  if (auto* i = std::get_if<int32_t>(&v)) return *i;
  if (auto* l = std::get_if<int64_t>(&v)) return *l;
  return std::nullopt;
}

}  // namespace internal

using internal::AsInt64;

// ---------------------------------------------------------------------------------------
// Calendar (Howard Hinnant's civil-days algorithms, proleptic Gregorian).

namespace internal {
int64_t DaysFromCivil64(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}
}  // namespace internal

int32_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  return static_cast<int32_t>(internal::DaysFromCivil64(y, m, d));
}

void CivilFromDays(int64_t z, int64_t* year, unsigned* month, unsigned* day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *day = doy - (153 * mp + 2) / 5 + 1;
  *month = mp < 10 ? mp + 3 : mp - 9;
  *year = y + (*month <= 2);
}

// ---------------------------------------------------------------------------------------
// Ordering.

namespace {

template <typename F>
int CompareFloating(F a, F b) {
  bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  if (a < b) return -1;
  if (a > b) return 1;
  // Equal as numbers: only -0.0 vs +0.0 remain distinguishable.
  bool as = std::signbit(a), bs = std::signbit(b);
  return as == bs ? 0 : (as ? -1 : 1);
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace

int CompareValues(const Value& a, const Value& b) {
  if (IsNull(a) || IsNull(b)) return IsNull(a) == IsNull(b) ? 0 : (IsNull(a) ? -1 : 1);
  // Mixed widths (int vs long, float vs double) compare numerically.
  if (a.index() != b.index()) {
    auto ia = AsInt64(a), ib = AsInt64(b);
    if (ia && ib) return Cmp(*ia, *ib);
    auto as_double = [](const Value& v) -> std::optional<double> {
      if (auto* f = std::get_if<float>(&v)) return *f;
      if (auto* d = std::get_if<double>(&v)) return *d;
      return std::nullopt;
    };
    auto da = as_double(a), db = as_double(b);
    if (da && db) return CompareFloating(*da, *db);
    return Cmp(a.index(), b.index());
  }
  switch (a.index()) {
    case 1:
      return Cmp(std::get<bool>(a), std::get<bool>(b));
    case 2:
      return Cmp(std::get<int32_t>(a), std::get<int32_t>(b));
    case 3:
      return Cmp(std::get<int64_t>(a), std::get<int64_t>(b));
    case 4:
      return CompareFloating(std::get<float>(a), std::get<float>(b));
    case 5:
      return CompareFloating(std::get<double>(a), std::get<double>(b));
    case 6: {
      // std::string compares through char_traits<char>, i.e. unsigned bytes.
      int c = std::get<std::string>(a).compare(std::get<std::string>(b));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 7:
      return Cmp(std::get<Decimal>(a).unscaled, std::get<Decimal>(b).unscaled);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------
// Binary single-value serialization.

namespace {

template <typename T>
std::string LittleEndian(T v) {
  static_assert(std::endian::native == std::endian::little);
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &v, sizeof(T));
  return out;
}

template <typename T>
T ReadLittleEndian(std::string_view bytes) {
  T v;
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

std::unexpected<Error> DoesNotFit(const Type& type, const Value& value, std::string_view why) {
  return InvalidArgument("cannot serialize " + FormatValue(type, value) + " as " + type.ToString() +
                         ": " + std::string(why));
}

}  // namespace

Result<std::string> SerializeValue(const Type& type, const Value& value) {
  if (type.is_nested())
    return InvalidArgument("single-value serialization does not support " + type.ToString());
  if (IsNull(value)) return InvalidArgument("cannot serialize null as " + type.ToString());
  switch (type.id) {
    case TypeId::kBoolean:
      if (auto* b = std::get_if<bool>(&value)) return std::string(1, *b ? '\x01' : '\x00');
      break;
    case TypeId::kInt:
    case TypeId::kDate: {
      auto v = AsInt64(value);
      if (!v) break;
      if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max())
        return DoesNotFit(type, value, "out of 32-bit range");
      return LittleEndian(static_cast<int32_t>(*v));
    }
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      if (auto v = AsInt64(value)) return LittleEndian(*v);
      break;
    case TypeId::kFloat:
      if (auto* f = std::get_if<float>(&value)) return LittleEndian(*f);
      break;
    case TypeId::kDouble:
      if (auto* d = std::get_if<double>(&value)) return LittleEndian(*d);
      if (auto* f = std::get_if<float>(&value)) return LittleEndian(static_cast<double>(*f));
      break;
    case TypeId::kDecimal:
      // Precision is not enforced here: truncate[W] may legitimately widen a value.
      if (auto* d = std::get_if<Decimal>(&value)) return internal::DecimalToBytes(d->unscaled);
      break;
    case TypeId::kString:
    case TypeId::kBinary:
      if (auto* s = std::get_if<std::string>(&value)) return *s;
      break;
    case TypeId::kUuid:
    case TypeId::kFixed:
      if (auto* s = std::get_if<std::string>(&value)) {
        size_t want = type.id == TypeId::kUuid ? 16 : static_cast<size_t>(type.length);
        if (s->size() != want)
          return DoesNotFit(
              type, value,
              "expected " + std::to_string(want) + " bytes, got " + std::to_string(s->size()));
        return *s;
      }
      break;
    default:
      break;
  }
  return InvalidArgument("value of the wrong kind for type " + type.ToString());
}

Result<Value> DeserializeValue(const Type& type, std::string_view bytes) {
  auto bad = [&](std::string_view why) {
    return Corrupt("bad " + type.ToString() + " single-value bytes (" +
                   std::to_string(bytes.size()) + " bytes): " + std::string(why));
  };
  switch (type.id) {
    case TypeId::kBoolean:
      if (bytes.size() != 1) return bad("expected 1 byte");
      return Value(bytes[0] != 0);
    case TypeId::kInt:
    case TypeId::kDate:
      if (bytes.size() != 4) return bad("expected 4 bytes");
      return Value(ReadLittleEndian<int32_t>(bytes));
    case TypeId::kLong:
    case TypeId::kTime:
      if (bytes.size() == 8) return Value(ReadLittleEndian<int64_t>(bytes));
      if (bytes.size() == 4 && type.id == TypeId::kLong)  // promoted from int
        return Value(static_cast<int64_t>(ReadLittleEndian<int32_t>(bytes)));
      return bad("expected 8 bytes");
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      if (bytes.size() == 8) return Value(ReadLittleEndian<int64_t>(bytes));
      if (bytes.size() == 4) {  // promoted from date
        int64_t units;
        if (__builtin_mul_overflow(static_cast<int64_t>(ReadLittleEndian<int32_t>(bytes)),
                                   internal::kMicrosPerDay * UnitsPerMicro(type.id), &units))
          return bad("date out of timestamp range");
        return Value(units);
      }
      return bad("expected 8 bytes");
    case TypeId::kFloat:
      if (bytes.size() != 4) return bad("expected 4 bytes");
      return Value(ReadLittleEndian<float>(bytes));
    case TypeId::kDouble:
      if (bytes.size() == 8) return Value(ReadLittleEndian<double>(bytes));
      if (bytes.size() == 4)  // promoted from float
        return Value(static_cast<double>(ReadLittleEndian<float>(bytes)));
      return bad("expected 8 bytes");
    case TypeId::kDecimal: {
      auto d = internal::DecimalFromBytes(bytes);
      if (!d) return bad("expected 1 to 16 bytes");
      return Value(Decimal{*d});
    }
    case TypeId::kString:
    case TypeId::kBinary:
      return Value(std::string(bytes));
    case TypeId::kUuid:
      if (bytes.size() != 16) return bad("expected 16 bytes");
      return Value(std::string(bytes));
    case TypeId::kFixed:
      if (bytes.size() != static_cast<size_t>(type.length))
        return bad("expected " + std::to_string(type.length) + " bytes");
      return Value(std::string(bytes));
    default:
      return Corrupt("single-value serialization does not support " + type.ToString());
  }
}

// ---------------------------------------------------------------------------------------
// Conversions.

namespace {

bool IsIntegral(TypeId id) { return id == TypeId::kInt || id == TypeId::kLong; }

Result<Value> IntegerTo(int64_t v, const Type& from, const Type& to) {
  auto fits32 = [&]() -> Result<Value> {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      return InvalidArgument(std::to_string(v) + " is out of range for " + to.ToString());
    return Value(static_cast<int32_t>(v));
  };
  switch (to.id) {
    case TypeId::kInt:
    case TypeId::kDate:  // days since epoch
      return fits32();
    case TypeId::kLong:
    case TypeId::kTimestamp:  // µs since epoch
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:  // ns since epoch
    case TypeId::kTimestampTzNs:
      return Value(v);
    case TypeId::kTime:
      if (v < 0 || v >= internal::kMicrosPerDay)
        return InvalidArgument(std::to_string(v) + " is out of range for time (µs of a day)");
      return Value(v);
    case TypeId::kFloat:
      return Value(static_cast<float>(v));
    case TypeId::kDouble:
      return Value(static_cast<double>(v));
    case TypeId::kDecimal: {
      __int128 unscaled;
      if (__builtin_mul_overflow(static_cast<__int128>(v),
                                 static_cast<__int128>(internal::Pow10(to.scale)), &unscaled) ||
          !internal::DecimalFitsPrecision(unscaled, to.precision))
        return InvalidArgument(std::to_string(v) + " does not fit " + to.ToString());
      return Value(Decimal{unscaled});
    }
    default:
      return InvalidArgument("cannot convert " + from.ToString() + " to " + to.ToString());
  }
}

Result<Value> DecimalTo(__int128 unscaled, const Type& from, const Type& to) {
  if (to.id == TypeId::kDecimal) {
    __int128 out = unscaled;
    if (to.scale >= from.scale) {
      if (__builtin_mul_overflow(
              unscaled, static_cast<__int128>(internal::Pow10(to.scale - from.scale)), &out))
        return InvalidArgument(internal::DecimalToString(unscaled, from.scale) + " does not fit " +
                               to.ToString());
    } else {
      auto div = static_cast<__int128>(internal::Pow10(from.scale - to.scale));
      if (unscaled % div != 0)
        return InvalidArgument(internal::DecimalToString(unscaled, from.scale) +
                               " has more fractional digits than " + to.ToString() + " allows");
      out = unscaled / div;
    }
    if (!internal::DecimalFitsPrecision(out, to.precision))
      return InvalidArgument(internal::DecimalToString(unscaled, from.scale) + " does not fit " +
                             to.ToString());
    return Value(Decimal{out});
  }
  if (to.id == TypeId::kDouble || to.id == TypeId::kFloat) {
    double d = static_cast<double>(unscaled) / static_cast<double>(internal::Pow10(from.scale));
    if (to.id == TypeId::kFloat) return Value(static_cast<float>(d));
    return Value(d);
  }
  if (IsIntegral(to.id)) {
    auto div = static_cast<__int128>(internal::Pow10(from.scale));
    __int128 whole = unscaled / div;
    if (unscaled % div != 0 || whole < std::numeric_limits<int64_t>::min() ||
        whole > std::numeric_limits<int64_t>::max())
      return InvalidArgument(internal::DecimalToString(unscaled, from.scale) + " is not a whole " +
                             to.ToString());
    return IntegerTo(static_cast<int64_t>(whole), from, to);
  }
  return InvalidArgument("cannot convert " + from.ToString() + " to " + to.ToString());
}

}  // namespace

Result<Value> ConvertValue(const Value& value, const Type& from, const Type& to) {
  if (IsNull(value)) return value;
  if (from.is_nested() || to.is_nested())
    return InvalidArgument("cannot convert " + from.ToString() + " to " + to.ToString());
  auto refuse = [&]() {
    return InvalidArgument("cannot convert " + from.ToString() + " value " +
                           FormatValue(from, value) + " to " + to.ToString());
  };
  if (from.id == TypeId::kString && to.id != TypeId::kString) {
    const auto* s = std::get_if<std::string>(&value);
    if (!s) return refuse();
    return ParseValue(to, *s);
  }
  switch (from.id) {
    case TypeId::kBoolean:
      if (to.id == TypeId::kBoolean && std::holds_alternative<bool>(value)) return value;
      return refuse();
    case TypeId::kInt:
    case TypeId::kLong: {
      auto v = AsInt64(value);
      if (!v) return refuse();
      return IntegerTo(*v, from, to);
    }
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double d;
      if (auto* f = std::get_if<float>(&value))
        d = *f;
      else if (auto* dd = std::get_if<double>(&value))
        d = *dd;
      else
        return refuse();
      if (to.id == TypeId::kDouble) return Value(d);
      if (to.id == TypeId::kFloat) {
        if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max())
          return InvalidArgument(FormatValue(from, value) + " is out of range for float");
        return Value(static_cast<float>(d));
      }
      if (to.id == TypeId::kDecimal && std::isfinite(d)) {
        // Through the shortest round-trip text, so 0.1 stays 0.1 and nothing is rounded.
        char buf[64];
        auto r = std::to_chars(buf, buf + sizeof buf, d);
        return ParseValue(to, std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
      }
      return refuse();
    }
    case TypeId::kDecimal: {
      const auto* d = std::get_if<Decimal>(&value);
      if (!d) return refuse();
      return DecimalTo(d->unscaled, from, to);
    }
    case TypeId::kDate: {
      auto v = AsInt64(value);
      if (!v) return refuse();
      if (to.id == TypeId::kDate) return Value(static_cast<int32_t>(*v));
      if (IsTimestamp(to.id)) {
        int64_t units;
        if (__builtin_mul_overflow(*v, internal::kMicrosPerDay * UnitsPerMicro(to.id), &units))
          return InvalidArgument(FormatValue(from, value) + " is out of range for " +
                                 to.ToString());
        return Value(units);
      }
      if (to.id == TypeId::kString) return Value(FormatValue(from, value));
      return refuse();
    }
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      auto v = AsInt64(value);
      if (!v) return refuse();
      if (to.id == from.id) return Value(*v);
      // Timestamps with and without zone share the representation (UTC for tz); between
      // microseconds and nanoseconds the unit changes (down: floor, as Iceberg truncates).
      if (from.id != TypeId::kTime && IsTimestamp(to.id)) {
        const int64_t from_unit = UnitsPerMicro(from.id), to_unit = UnitsPerMicro(to.id);
        if (from_unit == to_unit) return Value(*v);
        if (from_unit > to_unit) return Value(FloorDiv(*v, from_unit / to_unit));
        int64_t units;
        if (__builtin_mul_overflow(*v, to_unit / from_unit, &units))
          return InvalidArgument(FormatValue(from, value) + " is out of range for " + to.ToString());
        return Value(units);
      }
      if (to.id == TypeId::kString) return Value(FormatValue(from, value));
      return refuse();
    }
    case TypeId::kString:  // to string
      return value;
    case TypeId::kUuid:
    case TypeId::kBinary:
    case TypeId::kFixed: {
      const auto* s = std::get_if<std::string>(&value);
      if (!s) return refuse();
      if (to.id == TypeId::kString) {
        if (from.id == TypeId::kUuid) return Value(FormatValue(from, value));
        return refuse();
      }
      if (to.id == TypeId::kBinary) return value;
      if (to.id == TypeId::kFixed || to.id == TypeId::kUuid) {
        size_t want = to.id == TypeId::kUuid ? 16 : static_cast<size_t>(to.length);
        if (s->size() != want)
          return InvalidArgument(std::to_string(s->size()) + " bytes do not fit " + to.ToString());
        return value;
      }
      return refuse();
    }
    default:
      return refuse();
  }
}

}  // namespace skade
