#include "server/row_json.h"

#include <arrow/api.h>

#include <cmath>

#include "skade/format/value.h"
#include "skade/table/arrow_values.h"

namespace skade::server {
namespace {

constexpr int64_t kExactInJs = int64_t{1} << 53;

template <typename F>
Json Floating(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return static_cast<double>(v);
}

}  // namespace

Json ValueJson(const Value& v, const Type& type) {
  if (const bool* b = std::get_if<bool>(&v); b && type.id == TypeId::kBoolean) return *b;
  if (const int32_t* n = std::get_if<int32_t>(&v); n && type.id == TypeId::kInt) return *n;
  if (const int64_t* n = std::get_if<int64_t>(&v); n && type.id == TypeId::kLong) {
    if (*n > -kExactInJs && *n < kExactInJs) return *n;
    return std::to_string(*n);
  }
  if (const float* f = std::get_if<float>(&v)) return Floating(*f);
  if (const double* d = std::get_if<double>(&v)) return Floating(*d);
  if (const std::string* s = std::get_if<std::string>(&v);
      s && (type.id == TypeId::kBinary || type.id == TypeId::kFixed))
    return Base64(*s);
  std::string text = FormatValue(type, v);  // decimal, date, time, timestamp, string, uuid
  if (HasZone(type.id) && text.ends_with("+00:00")) text.replace(text.size() - 6, 6, "Z");
  return text;
}

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

Json CellJson(const arrow::Array& a, int64_t i, const Type& type) {
  if (a.IsNull(i)) return nullptr;
  switch (type.id) {
    case TypeId::kStruct: {
      if (a.type_id() != arrow::Type::STRUCT) return nullptr;
      const auto& s = static_cast<const arrow::StructArray&>(a);
      Json out = Json::object();
      for (int k = 0; k < s.num_fields() && k < static_cast<int>(type.fields.size()); ++k)
        out[type.fields[k].name] = CellJson(*s.field(k), i, *type.fields[k].type);
      return out;
    }
    case TypeId::kList: {
      if (a.type_id() != arrow::Type::LIST) return nullptr;
      const auto& l = static_cast<const arrow::ListArray&>(a);
      Json out = Json::array();
      for (int64_t k = l.value_offset(i); k < l.value_offset(i) + l.value_length(i); ++k)
        out.push_back(CellJson(*l.values(), k, *type.element().type));
      return out;
    }
    case TypeId::kMap: {
      if (a.type_id() != arrow::Type::MAP) return nullptr;
      const auto& m = static_cast<const arrow::MapArray&>(a);
      Json out = Json::array();
      for (int64_t k = m.value_offset(i); k < m.value_offset(i) + m.value_length(i); ++k)
        out.push_back(Json::array(
            {CellJson(*m.keys(), k, *type.key().type), CellJson(*m.items(), k, *type.value().type)}));
      return out;
    }
    default: {
      auto v = ValueAt(a, i, type);
      if (!v || IsNull(*v)) return nullptr;
      return ValueJson(*v, type);
    }
  }
}

}  // namespace skade::server
