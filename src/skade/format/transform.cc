// Partition transforms per the Iceberg spec ("Partition Transforms", appendix B).
#include "skade/format/transform.h"

#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>

#include "skade/format/value_internal.h"

namespace skade {
namespace {


bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t MixK(uint32_t k) {
  k *= 0xcc9e2d51u;
  k = Rotl(k, 15);
  return k * 0x1b873593u;
}

std::string LongBytes(int64_t v) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &v, 8);  // little-endian host (asserted in value.cc)
  return out;
}

// Years, months, days or hours since the epoch of a date (days) or timestamp (µs).
Result<int32_t> TimeUnits(TransformKind kind, TypeId source, int64_t v) {
  v = FloorDiv(v, UnitsPerMicro(source));  // nanoseconds: their microsecond
  int64_t out;
  if (kind == TransformKind::kHour) {
    out = FloorDiv(v, internal::kMicrosPerHour);
  } else {
    int64_t days = source == TypeId::kDate ? v : FloorDiv(v, internal::kMicrosPerDay);
    if (kind == TransformKind::kDay) {
      out = days;
    } else {
      int64_t y;
      unsigned m, d;
      CivilFromDays(days, &y, &m, &d);
      out = kind == TransformKind::kYear ? y - 1970 : (y - 1970) * 12 + (m - 1);
    }
  }
  if (out < std::numeric_limits<int32_t>::min() || out > std::numeric_limits<int32_t>::max())
    return InvalidArgument("time transform result out of int range");
  return static_cast<int32_t>(out);
}

// v - floormod(v, w). Like Java, the subtraction wraps in the column's own width (only
// values within w of the minimum are affected).
template <typename T, typename U>
T TruncateInteger(T v, T w) {
  T rem = v % w;  // floor modulo, as ((v % w) + w) % w but without overflow
  if (rem < 0) rem += w;
  return static_cast<T>(static_cast<U>(v) - static_cast<U>(rem));
}

// Byte length of the first `n` code points of UTF-8 text (continuation bytes 10xxxxxx
// never start a code point).
size_t Utf8PrefixBytes(std::string_view s, int n) {
  int seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == n) return i;
      ++seen;
    }
  }
  return s.size();
}

}  // namespace

int32_t Murmur3Hash32(std::string_view bytes) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t len = bytes.size();
  uint32_t h = 0;
  size_t i = 0;
  for (; i + 4 <= len; i += 4) {
    uint32_t k = static_cast<uint32_t>(data[i]) | (static_cast<uint32_t>(data[i + 1]) << 8) |
                 (static_cast<uint32_t>(data[i + 2]) << 16) |
                 (static_cast<uint32_t>(data[i + 3]) << 24);
    h ^= MixK(k);
    h = Rotl(h, 13);
    h = h * 5 + 0xe6546b64u;
  }
  uint32_t k = 0;
  switch (len & 3) {
    case 3:
      k ^= static_cast<uint32_t>(data[i + 2]) << 16;
      [[fallthrough]];
    case 2:
      k ^= static_cast<uint32_t>(data[i + 1]) << 8;
      [[fallthrough]];
    case 1:
      k ^= data[i];
      h ^= MixK(k);
  }
  h ^= static_cast<uint32_t>(len);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return static_cast<int32_t>(h);
}

Result<int32_t> BucketHash(const Type& type, const Value& value) {
  auto wrong = [&]() {
    return InvalidArgument("cannot bucket-hash a " + type.ToString() + " value " +
                           FormatValue(type, value));
  };
  switch (type.id) {
    case TypeId::kInt:
    case TypeId::kDate:
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      auto v = internal::AsInt64(value);
      if (!v) return wrong();
      return Murmur3Hash32(LongBytes(*v));
    }
    case TypeId::kTimestampNs:  // hashed as the microsecond it falls in
    case TypeId::kTimestampTzNs: {
      auto v = internal::AsInt64(value);
      if (!v) return wrong();
      return Murmur3Hash32(LongBytes(FloorDiv(*v, UnitsPerMicro(type.id))));
    }
    case TypeId::kDecimal: {
      const auto* d = std::get_if<Decimal>(&value);
      if (!d) return wrong();
      return Murmur3Hash32(internal::DecimalToBytes(d->unscaled));
    }
    case TypeId::kString:
    case TypeId::kUuid:
    case TypeId::kBinary:
    case TypeId::kFixed: {
      const auto* s = std::get_if<std::string>(&value);
      if (!s) return wrong();
      return Murmur3Hash32(*s);
    }
    default:
      return wrong();
  }
}

std::string Transform::ToString() const {
  switch (kind) {
    case TransformKind::kIdentity:
      return "identity";
    case TransformKind::kBucket:
      return "bucket[" + std::to_string(param) + "]";
    case TransformKind::kTruncate:
      return "truncate[" + std::to_string(param) + "]";
    case TransformKind::kYear:
      return "year";
    case TransformKind::kMonth:
      return "month";
    case TransformKind::kDay:
      return "day";
    case TransformKind::kHour:
      return "hour";
    case TransformKind::kVoid:
      return "void";
  }
  return "?";
}

Result<Transform> Transform::Parse(std::string_view text) {
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  static const std::pair<std::string_view, TransformKind> kPlain[] = {
      {"identity", TransformKind::kIdentity}, {"year", TransformKind::kYear},
      {"month", TransformKind::kMonth},       {"day", TransformKind::kDay},
      {"hour", TransformKind::kHour},         {"void", TransformKind::kVoid},
  };
  for (auto& [name, kind] : kPlain)
    if (IEquals(t, name)) return Transform{kind, 0};
  for (auto [name, kind] : {std::pair{std::string_view("bucket"), TransformKind::kBucket},
                            std::pair{std::string_view("truncate"), TransformKind::kTruncate}}) {
    if (t.size() > name.size() + 2 && IEquals(t.substr(0, name.size()), name) &&
        t[name.size()] == '[' && t.back() == ']') {
      std::string_view num = t.substr(name.size() + 1, t.size() - name.size() - 2);
      int n = 0;
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
      if (ec != std::errc() || p != num.data() + num.size() || n <= 0)
        return InvalidArgument("invalid " + std::string(name) + " parameter in transform '" +
                               std::string(text) + "' (expected a positive integer)");
      return Transform{kind, n};
    }
  }
  return InvalidArgument("unknown partition transform '" + std::string(text) +
                         "' (expected identity, bucket[N], truncate[W], year, month, day, "
                         "hour or void)");
}

bool Transform::CanApply(const Type& source) const {
  TypeId t = source.id;
  switch (kind) {
    case TransformKind::kIdentity:
      return source.is_primitive();
    case TransformKind::kVoid:
      return true;
    case TransformKind::kBucket:
      return t == TypeId::kInt || t == TypeId::kLong || t == TypeId::kDecimal || t == TypeId::kDate ||
             t == TypeId::kTime || IsTimestamp(t) || t == TypeId::kString || t == TypeId::kUuid ||
             t == TypeId::kFixed || t == TypeId::kBinary;
    case TransformKind::kTruncate:
      return t == TypeId::kInt || t == TypeId::kLong || t == TypeId::kDecimal ||
             t == TypeId::kString || t == TypeId::kBinary;
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kDay:
      return t == TypeId::kDate || IsTimestamp(t);
    case TransformKind::kHour:
      return IsTimestamp(t);
  }
  return false;
}

TypePtr Transform::ResultType(const TypePtr& source) const {
  switch (kind) {
    case TransformKind::kBucket:
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kHour:
      return Type::Primitive(TypeId::kInt);
    case TransformKind::kDay:
      return Type::Primitive(TypeId::kDate);
    case TransformKind::kIdentity:
    case TransformKind::kTruncate:
    case TransformKind::kVoid:
      return source;
  }
  return source;
}

Result<Value> Transform::Apply(const Type& source, const Value& value) const {
  if (kind == TransformKind::kVoid || IsNull(value)) return Value{};
  if (!CanApply(source))
    return InvalidArgument("transform " + ToString() + " cannot apply to " + source.ToString());
  auto wrong = [&]() {
    return InvalidArgument("transform " + ToString() + ": value " + FormatValue(source, value) +
                           " does not match type " + source.ToString());
  };
  switch (kind) {
    case TransformKind::kIdentity:
      return value;
    case TransformKind::kBucket: {
      SKADE_ASSIGN_OR_RETURN(int32_t h, BucketHash(source, value));
      return Value(static_cast<int32_t>((h & std::numeric_limits<int32_t>::max()) % param));
    }
    case TransformKind::kTruncate: {
      if (auto* i = std::get_if<int32_t>(&value))
        return Value(TruncateInteger<int32_t, uint32_t>(*i, param));
      if (auto* l = std::get_if<int64_t>(&value))
        return Value(TruncateInteger<int64_t, uint64_t>(*l, param));
      if (auto* d = std::get_if<Decimal>(&value))
        return Value(Decimal{TruncateInteger<__int128, unsigned __int128>(d->unscaled, param)});
      if (auto* s = std::get_if<std::string>(&value)) {
        size_t n = source.id == TypeId::kString ? Utf8PrefixBytes(*s, param)
                                                : std::min(s->size(), static_cast<size_t>(param));
        return Value(s->substr(0, n));
      }
      return wrong();
    }
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kDay:
    case TransformKind::kHour: {
      auto v = internal::AsInt64(value);
      if (!v) return wrong();
      SKADE_ASSIGN_OR_RETURN(int32_t units, TimeUnits(kind, source.id, *v));
      return Value(units);
    }
    case TransformKind::kVoid:
      break;
  }
  return Value{};
}

std::string Transform::ValueToPathString(const Type& source, const Value& partition_value) const {
  if (IsNull(partition_value)) return "null";
  auto v = internal::AsInt64(partition_value);
  auto pad = [](int64_t n, int width) {
    std::string s = std::to_string(n < 0 ? -n : n);
    if (static_cast<int>(s.size()) < width) s.insert(0, static_cast<size_t>(width) - s.size(), '0');
    return (n < 0 ? "-" : "") + s;
  };
  switch (kind) {
    case TransformKind::kYear:
      if (v) return pad(1970 + *v, 4);
      break;
    case TransformKind::kMonth:
      if (v) {
        int64_t y = 1970 + FloorDiv(*v, 12);
        return pad(y, 4) + "-" + pad(*v - FloorDiv(*v, 12) * 12 + 1, 2);
      }
      break;
    case TransformKind::kDay:
      return FormatValue(*Type::Primitive(TypeId::kDate), partition_value);
    case TransformKind::kHour:
      if (v) {
        int64_t days = FloorDiv(*v, 24);
        return FormatValue(*Type::Primitive(TypeId::kDate), Value(static_cast<int32_t>(days))) +
               "-" + pad(*v - days * 24, 2);
      }
      break;
    case TransformKind::kBucket:
      break;
    case TransformKind::kIdentity:
    case TransformKind::kTruncate:
    case TransformKind::kVoid:
      return FormatValue(source, partition_value);
  }
  return FormatValue(*Type::Primitive(TypeId::kInt), partition_value);
}

bool Transform::PreservesOrder() const {
  switch (kind) {
    case TransformKind::kIdentity:
    case TransformKind::kTruncate:
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kDay:
    case TransformKind::kHour:
      return true;
    case TransformKind::kBucket:
    case TransformKind::kVoid:
      return false;
  }
  return false;
}

}  // namespace skade
