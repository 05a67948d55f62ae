// Human text form of values: FormatValue and ParseValue.
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "skade/format/value.h"
#include "skade/format/value_internal.h"

namespace skade {
namespace {

using internal::kMicrosPerDay;
using internal::kMicrosPerSecond;

std::string Pad(int64_t v, int width) {
  std::string s = std::to_string(v);
  if (static_cast<int>(s.size()) < width) s.insert(0, static_cast<size_t>(width) - s.size(), '0');
  return s;
}

template <typename F>
std::string FormatFloating(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string FormatDate(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  std::string year = y > 9999 ? "+" + std::to_string(y) : (y < 0 ? "-" + Pad(-y, 4) : Pad(y, 4));
  return year + "-" + Pad(m, 2) + "-" + Pad(d, 2);
}

// HH:MM:SS of a time of day in µs, or in ns when `per_micro` is 1000, plus the fraction
// (6 or 9 digits) when it is not zero.
std::string FormatTimeOfDay(int64_t units, int64_t per_micro = 1) {
  const int64_t per_second = kMicrosPerSecond * per_micro;
  int64_t secs = units / per_second, frac = units % per_second;
  std::string s = Pad(secs / 3600, 2) + ":" + Pad(secs / 60 % 60, 2) + ":" + Pad(secs % 60, 2);
  if (frac != 0) s += "." + Pad(frac, per_micro == 1 ? 6 : 9);
  return s;
}

// A timestamp of type `id` (µs or ns since the epoch).
std::string FormatTimestamp(int64_t value, TypeId id) {
  const int64_t per_day = kMicrosPerDay * UnitsPerMicro(id);
  int64_t tod = value % per_day;  // floor modulo; days * units/day may not fit near INT64_MIN
  if (tod < 0) tod += per_day;
  return FormatDate(FloorDiv(value, per_day)) + "T" + FormatTimeOfDay(tod, UnitsPerMicro(id));
}

std::string FormatUuid(const std::string& b) {
  std::string hex = internal::ToHex(b);
  if (hex.size() != 32) return hex;
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

// Formats a value whose kind does not match its type (defensive; should not happen).
std::string FormatByKind(const Value& v) {
  switch (v.index()) {
    case 0:
      return "null";
    case 1:
      return std::get<bool>(v) ? "true" : "false";
    case 2:
      return std::to_string(std::get<int32_t>(v));
    case 3:
      return std::to_string(std::get<int64_t>(v));
    case 4:
      return FormatFloating(std::get<float>(v));
    case 5:
      return FormatFloating(std::get<double>(v));
    case 6:
      return std::get<std::string>(v);
    case 7:
      return internal::DecimalToString(std::get<Decimal>(v).unscaled, 0);
  }
  return "?";
}

}  // namespace

std::string FormatValue(const Type& type, const Value& value) {
  if (IsNull(value)) return "null";
  auto i = internal::AsInt64(value);
  const auto* s = std::get_if<std::string>(&value);
  switch (type.id) {
    case TypeId::kDate:
      if (i) return FormatDate(*i);
      break;
    case TypeId::kTime:
      if (i && *i >= 0 && *i < kMicrosPerDay) return FormatTimeOfDay(*i);
      break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampNs:
      if (i) return FormatTimestamp(*i, type.id);
      break;
    case TypeId::kTimestampTz:
    case TypeId::kTimestampTzNs:
      if (i) return FormatTimestamp(*i, type.id) + "+00:00";
      break;
    case TypeId::kDecimal:
      if (auto* d = std::get_if<Decimal>(&value))
        return internal::DecimalToString(d->unscaled, type.scale);
      break;
    case TypeId::kUuid:
      if (s) return FormatUuid(*s);
      break;
    case TypeId::kBinary:
    case TypeId::kFixed:
      if (s) return internal::ToHex(*s);
      break;
    default:
      break;
  }
  return FormatByKind(value);
}

// ---------------------------------------------------------------------------------------
// Parsing.

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsPlainInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s)
    if (!IsDigit(c)) return false;
  return true;
}

template <typename T>
std::optional<T> ParseInteger(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// A cursor over date/time text; each Read* advances on success.
struct Cursor {
  std::string_view s;
  size_t pos = 0;

  bool AtEnd() const { return pos >= s.size(); }
  char Peek() const { return AtEnd() ? '\0' : s[pos]; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos;
    return true;
  }
  // Between `min` and `max` digits; the value only counts the first 18 (callers that
  // allow more read the text itself).
  std::optional<int64_t> Digits(int min, int max, int* count = nullptr) {
    int64_t v = 0;
    int n = 0;
    while (n < max && IsDigit(Peek())) {
      int digit = s[pos++] - '0';
      if (n < 18) v = v * 10 + digit;
      ++n;
    }
    if (count) *count = n;
    if (n < min) return std::nullopt;
    return v;
  }
};

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// [+-]YYYY[YYY]-MM-DD → days (7 digits cover every date an int32 day count can hold).
std::optional<int64_t> ReadDate(Cursor& c) {
  bool neg = false;
  if (c.Peek() == '-' || c.Peek() == '+') neg = c.s[c.pos++] == '-';
  auto y = c.Digits(4, 7);
  if (!y || !c.Eat('-')) return std::nullopt;
  auto m = c.Digits(2, 2);
  if (!m || !c.Eat('-')) return std::nullopt;
  auto d = c.Digits(2, 2);
  if (!d) return std::nullopt;
  int64_t year = neg ? -*y : *y;
  if (*m < 1 || *m > 12 || *d < 1 || *d > DaysInMonth(year, static_cast<unsigned>(*m)))
    return std::nullopt;
  return internal::DaysFromCivil64(year, static_cast<unsigned>(*m), static_cast<unsigned>(*d));
}

// HH:MM[:SS[.fraction]] → the time of day in µs, or in ns when `per_micro` is 1000.
// Fraction digits past those units must be zeros.
std::optional<int64_t> ReadTime(Cursor& c, std::string* why, int64_t per_micro = 1) {
  auto h = c.Digits(2, 2);
  if (!h || !c.Eat(':')) return std::nullopt;
  auto mi = c.Digits(2, 2);
  if (!mi) return std::nullopt;
  int64_t sec = 0, frac = 0;
  if (c.Eat(':')) {
    auto s = c.Digits(2, 2);
    if (!s) return std::nullopt;
    sec = *s;
    if (c.Eat('.')) {
      int n = 0;
      size_t start = c.pos;
      if (!c.Digits(1, 64, &n)) return std::nullopt;
      std::string_view digits = c.s.substr(start, static_cast<size_t>(n));
      const size_t kept = per_micro == 1 ? 6 : 9;
      for (size_t i = 0; i < digits.size(); ++i) {
        if (i < kept) {
          frac = frac * 10 + (digits[i] - '0');
        } else if (digits[i] != '0') {
          *why = per_micro == 1 ? "more precision than microseconds" : "more precision than nanoseconds";
          return std::nullopt;
        }
      }
      for (size_t i = digits.size(); i < kept; ++i) frac *= 10;
    }
  }
  if (*h > 23 || *mi > 59 || sec > 59) return std::nullopt;
  return ((*h * 60 + *mi) * 60 + sec) * kMicrosPerSecond * per_micro + frac;
}

// Z | [+-]HH[:MM] | [+-]HHMM → offset in µs east of UTC.
std::optional<int64_t> ReadOffset(Cursor& c) {
  if (c.Eat('Z') || c.Eat('z')) return 0;
  if (c.Peek() != '+' && c.Peek() != '-') return std::nullopt;
  bool neg = c.s[c.pos++] == '-';
  auto h = c.Digits(2, 2);
  if (!h) return std::nullopt;
  int64_t m = 0;
  if (c.Eat(':')) {
    auto mm = c.Digits(2, 2);
    if (!mm) return std::nullopt;
    m = *mm;
  } else if (IsDigit(c.Peek())) {
    auto mm = c.Digits(2, 2);
    if (!mm) return std::nullopt;
    m = *mm;
  }
  if (*h > 18 || m > 59) return std::nullopt;
  int64_t off = (*h * 60 + m) * 60 * kMicrosPerSecond;
  return neg ? -off : off;
}

Result<Value> ParseDecimal(const Type& type, std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("cannot parse '" + std::string(text) + "' as " + type.ToString() + ": " +
                           std::string(why));
  };
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) neg = s[0] == '-', s.remove_prefix(1);
  std::string digits;
  int frac_digits = 0;
  bool seen_point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    char ch = s[i];
    if (IsDigit(ch)) {
      digits.push_back(ch);
      if (seen_point) ++frac_digits;
    } else if (ch == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (digits.empty()) return bad("not a number");
  if (i < s.size()) {
    if (s[i] != 'e' && s[i] != 'E') return bad("not a number");
    auto exp = ParseInteger<int>(s.substr(i + 1));
    if (!exp || *exp > 100 || *exp < -100) return bad("bad exponent");
    frac_digits -= *exp;
  }
  // Move the point to the type's scale; dropping digits is only allowed for zeros.
  while (frac_digits > type.scale) {
    if (digits.back() != '0')
      return bad("more fractional digits than the scale " + std::to_string(type.scale) + " allows");
    digits.pop_back();
    --frac_digits;
    if (digits.empty()) digits = "0";
  }
  digits.append(static_cast<size_t>(type.scale - frac_digits), '0');
  size_t first = digits.find_first_not_of('0');
  std::string_view sig = first == std::string::npos ? "" : std::string_view(digits).substr(first);
  if (static_cast<int>(sig.size()) > type.precision)
    return bad("more than " + std::to_string(type.precision) + " digits");
  unsigned __int128 mag = 0;
  for (char ch : sig) mag = mag * 10 + static_cast<unsigned>(ch - '0');
  auto unscaled = static_cast<__int128>(mag);
  return Value(Decimal{neg ? -unscaled : unscaled});
}

Result<Value> ParseTemporal(const Type& type, std::string_view text) {
  std::string why;
  auto bad = [&]() {
    std::string expected = type.id == TypeId::kDate       ? "YYYY-MM-DD"
                           : type.id == TypeId::kTime     ? "HH:MM[:SS[.ffffff]]"
                           : IsNanoTimestamp(type.id) ? "YYYY-MM-DD[( |T)HH:MM[:SS[.fffffffff]]]"
                                                          : "YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]]";
    if (HasZone(type.id)) expected += "[Z|+HH:MM]";
    return InvalidArgument("cannot parse '" + std::string(text) + "' as " + type.ToString() +
                           (why.empty() ? ": expected " + expected : ": " + why));
  };
  if (IsPlainInteger(text)) {  // days, µs or ns as a number
    auto v = ParseInteger<int64_t>(text);
    if (!v) return bad();
    return ConvertValue(Value(*v), *Type::Primitive(TypeId::kLong), type);
  }
  Cursor c{text};
  if (type.id == TypeId::kTime) {
    auto t = ReadTime(c, &why);
    if (!t || !c.AtEnd()) return bad();
    return Value(*t);
  }
  auto days = ReadDate(c);
  if (!days) return bad();
  if (type.id == TypeId::kDate) {
    if (!c.AtEnd()) return bad();
    if (*days < std::numeric_limits<int32_t>::min() || *days > std::numeric_limits<int32_t>::max())
      return bad();
    return Value(static_cast<int32_t>(*days));
  }
  const int64_t per_micro = UnitsPerMicro(type.id);
  int64_t tod = 0;
  if (c.Eat('T') || c.Eat('t') || c.Eat(' ')) {
    auto t = ReadTime(c, &why, per_micro);
    if (!t) return bad();
    tod = *t;
  }
  int64_t offset = 0;
  if (!c.AtEnd()) {
    size_t offset_pos = c.pos;
    auto o = ReadOffset(c);
    if (!o || !c.AtEnd()) return bad();
    if (!HasZone(type.id)) {
      why = "a timestamp without time zone cannot have the offset '" +
            std::string(text.substr(offset_pos)) + "' (use " +
            (type.id == TypeId::kTimestamp ? "timestamptz" : "timestamptz_ns") + ")";
      return bad();
    }
    offset = *o * per_micro;
  }
  // In 128 bits: the day's start may lie below INT64_MIN while the instant does not.
  __int128 units = static_cast<__int128>(*days) * kMicrosPerDay * per_micro + tod - offset;
  if (units < std::numeric_limits<int64_t>::min() || units > std::numeric_limits<int64_t>::max()) {
    why = "out of range";
    return bad();
  }
  return Value(static_cast<int64_t>(units));
}

std::optional<std::string> ParseUuid(std::string_view s) {
  std::string hex;
  if (s.size() == 36) {
    for (size_t i = 0; i < s.size(); ++i) {
      bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash != (s[i] == '-')) return std::nullopt;
      if (!dash) hex.push_back(s[i]);
    }
  } else if (s.size() == 32) {
    hex = s;
  } else {
    return std::nullopt;
  }
  return internal::FromHex(hex);
}

// Binary text: 0x0102 or X'0102' is hex; anything else is taken as the raw bytes.
std::optional<std::string> ParseBytes(std::string_view s) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return internal::FromHex(s.substr(2));
  if (s.size() >= 3 && (s[0] == 'x' || s[0] == 'X') && s[1] == '\'' && s.back() == '\'')
    return internal::FromHex(s.substr(2, s.size() - 3));
  return std::string(s);
}

}  // namespace

Result<Value> ParseValue(const Type& type, std::string_view raw) {
  // Strings and bytes are taken verbatim; everything else tolerates surrounding blanks.
  std::string_view text = raw;
  if (type.id != TypeId::kString && type.id != TypeId::kBinary && type.id != TypeId::kFixed)
    text = Trim(raw);
  auto bad = [&](std::string_view why) {
    return InvalidArgument("cannot parse '" + std::string(raw) + "' as " + type.ToString() +
                           (why.empty() ? "" : ": " + std::string(why)));
  };
  switch (type.id) {
    case TypeId::kBoolean: {
      std::string lower;
      for (char c : text)
        lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      if (lower == "true") return Value(true);
      if (lower == "false") return Value(false);
      return bad("expected true or false");
    }
    case TypeId::kInt: {
      auto v = ParseInteger<int32_t>(text);
      if (!v) return bad(IsPlainInteger(text) ? "out of range" : "not an integer");
      return Value(*v);
    }
    case TypeId::kLong: {
      auto v = ParseInteger<int64_t>(text);
      if (!v) return bad(IsPlainInteger(text) ? "out of range" : "not an integer");
      return Value(*v);
    }
    case TypeId::kFloat:
    case TypeId::kDouble: {
      std::string_view s = text;
      if (!s.empty() && s[0] == '+') s.remove_prefix(1);
      // Parse in the target width so the shortest text of a float round-trips exactly.
      auto parse = [&](auto v) -> Result<Value> {
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range && p == s.data() + s.size())
          return bad("out of range");
        if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return bad("not a number");
        return Value(v);
      };
      if (type.id == TypeId::kDouble) return parse(0.0);
      return parse(0.0f);
    }
    case TypeId::kDecimal:
      return ParseDecimal(type, text);
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return ParseTemporal(type, text);
    case TypeId::kString:
      return Value(std::string(text));
    case TypeId::kUuid: {
      auto u = ParseUuid(text);
      if (!u) return bad("expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
      return Value(*u);
    }
    case TypeId::kBinary:
    case TypeId::kFixed: {
      auto b = ParseBytes(text);
      if (!b) return bad("bad hex digits");
      if (type.id == TypeId::kFixed && b->size() != static_cast<size_t>(type.length))
        return bad("expected " + std::to_string(type.length) + " bytes, got " +
                   std::to_string(b->size()));
      return Value(*b);
    }
    default:
      return bad("not a primitive type");
  }
}

}  // namespace skade
