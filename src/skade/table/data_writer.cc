#include "skade/table/data_writer.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/compression.h>
#include <arrow/util/utf8.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "skade/common/task_pool.h"
#include "skade/format/metadata_columns.h"
#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"
#include "skade/table/data_file_sink.h"
#include "skade/table/delete_index.h"
#include "skade/table/parquet_file_writer.h"
#include "skade/table/parquet_stats.h"

namespace skade {
namespace {

bool IEq(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string ShowValue(const arrow::Array& a, int64_t i) {
  auto s = a.GetScalar(i);
  if (!s.ok()) return "?";
  std::string text = (*s)->ToString();
  // A decimal read at a wider scale than its column's (JSON input) shows without the
  // zeros that scale added.
  if (arrow::is_decimal(a.type_id()) && text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// Binary and fixed values in text inputs are hex (as scans print them), "0x" optional.
Result<Value> HexValue(std::string_view text) {
  if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
  if (text.size() % 2 != 0) return InvalidArgument("binary values are written as hex digits, got an odd count");
  std::string out;
  out.reserve(text.size() / 2);
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < text.size(); i += 2) {
    int hi = nibble(text[i]), lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("binary values are written as hex digits, got '" + std::string(text) + "'");
    out += static_cast<char>(hi * 16 + lo);
  }
  return Value{out};
}

// The input row (counted from 1) that value i of an array being converted belongs to:
// the array's own index at the top, the row of the list holding it further down.
using RowOf = std::function<int64_t(int64_t)>;

std::string RowText(const RowOf& row_of, int64_t i) { return std::to_string(row_of(i)); }

// Strings that Arrow's cast cannot parse (uuid text, times, hex bytes) are converted here.
Result<std::shared_ptr<arrow::Array>> ParseStrings(const arrow::Array& in, const Type& type, const std::string& column,
                                                   const RowOf& row_of) {
  auto target = ToArrowType(type);
  std::unique_ptr<arrow::ArrayBuilder> builder;
  SKADE_ARROW_ASSIGN(builder, arrow::MakeBuilder(target), column);
  for (int64_t i = 0; i < in.length(); ++i) {
    if (in.IsNull(i)) {
      SKADE_ARROW_RETURN(builder->AppendNull(), column);
      continue;
    }
    std::string_view text = in.type_id() == arrow::Type::LARGE_STRING
                                ? static_cast<const arrow::LargeStringArray&>(in).GetView(i)
                                : static_cast<const arrow::StringArray&>(in).GetView(i);
    Result<Value> v = (type.id == TypeId::kBinary || type.id == TypeId::kFixed) ? HexValue(text)
                                                                                : ParseValue(type, text);
    if (!v) return InvalidArgument("column '" + column + "' row " + RowText(row_of, i) + ": " + v.error().message);
    if (type.id == TypeId::kFixed && std::get<std::string>(*v).size() != static_cast<size_t>(type.length))
      return InvalidArgument("column '" + column + "' row " + RowText(row_of, i) + ": " +
                             std::to_string(std::get<std::string>(*v).size()) + " bytes do not fit " +
                             type.ToString());
    if (type.id == TypeId::kBinary) {
      SKADE_ARROW_RETURN(static_cast<arrow::BinaryBuilder&>(*builder).Append(std::get<std::string>(*v)), column);
    } else if (type.id == TypeId::kTime) {
      SKADE_ARROW_RETURN(static_cast<arrow::Time64Builder&>(*builder).Append(std::get<int64_t>(*v)), column);
    } else {
      const std::string& b = std::get<std::string>(*v);
      SKADE_ARROW_RETURN(static_cast<arrow::FixedSizeBinaryBuilder&>(*builder).Append(b), column);
    }
  }
  std::shared_ptr<arrow::Array> out;
  SKADE_ARROW_RETURN(builder->Finish(&out), column);
  return out;
}

// Each float as the shortest text that reads back as the same number ("2.999").
Result<std::shared_ptr<arrow::Array>> FloatsAsText(const arrow::Array& in, const std::string& column) {
  arrow::StringBuilder b;
  SKADE_ARROW_RETURN(b.Reserve(in.length()), column);
  char buf[64];
  for (int64_t r = 0; r < in.length(); ++r) {
    if (in.IsNull(r)) {
      SKADE_ARROW_RETURN(b.AppendNull(), column);
      continue;
    }
    double v = in.type_id() == arrow::Type::DOUBLE ? static_cast<const arrow::DoubleArray&>(in).Value(r)
                                                   : static_cast<const arrow::FloatArray&>(in).Value(r);
    auto [end, ec] = in.type_id() == arrow::Type::DOUBLE
                         ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), std::chars_format::fixed);
    // NaN, infinities and numbers too long for the buffer fail the cast that follows.
    SKADE_ARROW_RETURN(ec == std::errc() ? b.Append(buf, static_cast<int32_t>(end - buf)) : b.Append("nan"), column);
  }
  std::shared_ptr<arrow::Array> out;
  SKADE_ARROW_RETURN(b.Finish(&out), column);
  return out;
}

// Finds the first row whose cast fails, by bisection over slices.
int64_t FirstBadRow(const std::shared_ptr<arrow::Array>& a, const std::shared_ptr<arrow::DataType>& t) {
  int64_t lo = 0, hi = a->length();
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    bool ok = arrow::compute::Cast(*a->Slice(lo, mid - lo), t, arrow::compute::CastOptions::Safe()).ok();
    if (ok) lo = mid;
    else hi = mid;
  }
  return lo;
}

Result<std::shared_ptr<arrow::Array>> ConvertValues(const std::shared_ptr<arrow::Array>& in, const Type& type,
                                                    const std::string& path, const RowOf& row_of);

// A string column holds UTF-8 text (Iceberg's string): bytes that are not would be
// written as they are, and readers that decode them (PyIceberg's rows) fail on the whole
// table. The values' bytes are checked at once, and that no value starts inside another's
// character; the first bad value is then looked for one by one (bytes of null slots are
// not looked at).
template <typename Offset>
Status CheckUtf8(const arrow::Array& in, const std::string& path, const RowOf& row_of) {
  const auto& data = *in.data();
  const Offset* offsets = data.GetValues<Offset>(1);
  const uint8_t* bytes = data.buffers[2] ? data.buffers[2]->data() : nullptr;
  const int64_t n = in.length();
  if (n == 0 || !bytes || offsets[n] == offsets[0]) return {};
  static const bool tables = (arrow::util::InitializeUTF8(), true);  // the validator's lookup tables
  (void)tables;
  bool ok = arrow::util::ValidateUTF8(bytes + offsets[0], static_cast<int64_t>(offsets[n] - offsets[0]));
  for (int64_t i = 0; ok && i < n; ++i) ok = offsets[i] == offsets[i + 1] || (bytes[offsets[i]] & 0xC0) != 0x80;
  if (ok) return {};
  for (int64_t i = 0; i < n; ++i)
    if (in.IsValid(i) && !arrow::util::ValidateUTF8(bytes + offsets[i], static_cast<int64_t>(offsets[i + 1] - offsets[i])))
      return InvalidArgument("column '" + path + "' row " + RowText(row_of, i) +
                             ": the value is not UTF-8 text, which a string column holds (use a binary column "
                             "for bytes)");
  return {};
}

// The error for input values of a type that does not convert to the field's.
std::unexpected<Error> Unconvertible(const std::string& path, const arrow::Array& in, const Type& type,
                                     const std::string& why = "") {
  return InvalidArgument("column '" + path + "': values of type " + in.type()->ToString() + " cannot be converted to " +
                         type.ToString() + why);
}

Result<std::shared_ptr<arrow::Array>> ConvertPrimitive(const std::shared_ptr<arrow::Array>& in, const Type& type,
                                                       const std::string& path, const RowOf& row_of) {
  auto target = ToArrowType(type);
  const bool is_text = in->type_id() == arrow::Type::STRING || in->type_id() == arrow::Type::LARGE_STRING;
  const TypeId tid = type.id;
  if (is_text && (tid == TypeId::kUuid || tid == TypeId::kTime || tid == TypeId::kBinary || tid == TypeId::kFixed))
    return ParseStrings(*in, type, path, row_of);
  if (tid == TypeId::kDecimal && (in->type_id() == arrow::Type::DOUBLE || in->type_id() == arrow::Type::FLOAT)) {
    // A binary float goes through its shortest exact text, so it is refused when it
    // has more digits than the scale, exactly like the same number given as text.
    SKADE_ASSIGN_OR_RETURN(auto text, FloatsAsText(*in, path));
    return ConvertPrimitive(text, type, path, row_of);
  }
  if (tid == TypeId::kString && in->type_id() == arrow::Type::STRING)
    SKADE_RETURN_IF_ERROR(CheckUtf8<int32_t>(*in, path, row_of));
  if (tid == TypeId::kString && in->type_id() == arrow::Type::LARGE_STRING)
    SKADE_RETURN_IF_ERROR(CheckUtf8<int64_t>(*in, path, row_of));
  if (in->type()->Equals(*target, /*check_metadata=*/false)) return in;
  // Casts Arrow makes that would guess: a number as a date, time or timestamp (in which
  // unit?), numbers and booleans as one another.
  const auto in_id = in->type_id();
  const bool number = arrow::is_integer(in_id) || arrow::is_floating(in_id) || arrow::is_decimal(in_id);
  const bool temporal = tid == TypeId::kDate || tid == TypeId::kTime || IsTimestamp(tid);
  if ((number && temporal) || (number && tid == TypeId::kBoolean) ||
      (in_id == arrow::Type::BOOL && tid != TypeId::kBoolean && tid != TypeId::kString))
    return Unconvertible(path, *in, type,
                         temporal ? " (a number does not say its unit: give dates and times as such, or as text)" : "");
  // Times with a zone into a column without one: Arrow would keep their UTC wall time,
  // not the zone's (text with an offset is refused the same way, as PyIceberg does).
  if (IsTimestamp(tid) && !HasZone(tid) && in_id == arrow::Type::TIMESTAMP)
    if (const auto& zone = static_cast<const arrow::TimestampType&>(*in->type()).timezone(); !zone.empty())
      return Unconvertible(path, *in, type,
                           " (the values carry zone '" + zone +
                               "' and the column has none: make the column " +
                               (tid == TypeId::kTimestamp ? "timestamptz" : "timestamptz_ns") + ", or drop the zone)");
  InitArrowCompute();
  auto cast = arrow::compute::Cast(*in, target, arrow::compute::CastOptions::Safe());
  if (!cast.ok() && cast.status().IsNotImplemented())
    return Unconvertible(path, *in, type);
  if (!cast.ok()) {
    int64_t i = FirstBadRow(in, target);
    return InvalidArgument("column '" + path + "' row " + RowText(row_of, i) + ": value " + ShowValue(*in, i) +
                           " does not fit type " + type.ToString() + " (" + cast.status().message() + ")");
  }
  std::shared_ptr<arrow::Array> out = *cast;
  // Arrow turns a number too large for the type into an infinity; only an infinity's
  // own spelling ("inf", "Infinity") may give one.
  if (is_text && (tid == TypeId::kFloat || tid == TypeId::kDouble)) {
    const auto& text = static_cast<const arrow::StringArray&>(*in);
    for (int64_t r = 0; r < out->length(); ++r) {
      if (out->IsNull(r)) continue;
      double v = tid == TypeId::kFloat ? static_cast<const arrow::FloatArray&>(*out).Value(r)
                                       : static_cast<const arrow::DoubleArray&>(*out).Value(r);
      if (!std::isinf(v)) continue;
      std::string t(text.GetView(r));
      for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (t.find("inf") == std::string::npos)
        return InvalidArgument("column '" + path + "' row " + RowText(row_of, r) + ": value " +
                               std::string(text.GetView(r)) + " does not fit type " + type.ToString());
    }
  }
  return out;
}

// The validity bitmap of `in` starting at its first value (nested arrays are rebuilt at offset 0).
Result<std::shared_ptr<arrow::Buffer>> Validity(const arrow::Array& in, const std::string& path) {
  if (in.null_count() == 0 || !in.data()->buffers[0]) return std::shared_ptr<arrow::Buffer>();
  if (in.offset() == 0) return in.data()->buffers[0];
  SKADE_ARROW_ASSIGN(auto copy,
                     arrow::internal::CopyBitmap(arrow::default_memory_pool(), in.data()->buffers[0]->data(),
                                                 in.offset(), in.length()),
                     path);
  return std::shared_ptr<arrow::Buffer>(std::move(copy));
}

// A child that must hold a value: a null is an error unless its parent is null there
// (Parquet then stores nothing, and refuses a required column with nulls: the child's
// validity goes). `parent` null: every null of the child is an error.
Result<std::shared_ptr<arrow::Array>> Required(const std::shared_ptr<arrow::Array>& child, const arrow::Array* parent,
                                               const std::string& path, const RowOf& row_of) {
  if (child->null_count() == 0) return child;
  for (int64_t i = 0; i < child->length(); ++i)
    if (child->IsNull(i) && (!parent || parent->IsValid(i)))
      return InvalidArgument("field '" + path + "' is required but row " + RowText(row_of, i) + " is null");
  auto data = child->data()->Copy();
  data->buffers[0] = nullptr;
  data->null_count = 0;
  return arrow::MakeArray(data);
}

Result<std::shared_ptr<arrow::Array>> ConvertStruct(const std::shared_ptr<arrow::Array>& in, const Type& type,
                                                    const std::string& path, const RowOf& row_of) {
  const int64_t n = in->length();
  const bool all_null = in->type_id() == arrow::Type::NA;
  if (!all_null && in->type_id() != arrow::Type::STRUCT)
    return Unconvertible(path, *in, type);
  const auto* sa = all_null ? nullptr : static_cast<const arrow::StructArray*>(in.get());
  std::vector<bool> used(sa ? static_cast<size_t>(sa->num_fields()) : 0, false);
  arrow::ArrayVector children;
  for (const NestedField& f : type.fields) {
    int idx = sa ? sa->struct_type()->GetFieldIndex(f.name) : -1;
    for (int k = 0; sa && idx < 0 && k < sa->num_fields(); ++k)
      if (IEq(sa->struct_type()->field(k)->name(), f.name)) idx = k;
    std::shared_ptr<arrow::Array> child = std::make_shared<arrow::NullArray>(n);
    const std::string child_path = path + "." + f.name;
    if (idx >= 0) {
      used[static_cast<size_t>(idx)] = true;
      SKADE_ASSIGN_OR_RETURN(child, ConvertValues(sa->field(idx), *f.type, child_path, row_of));
    } else if (!f.write_default.empty()) {  // format v3: what a value without the field holds
      SKADE_ASSIGN_OR_RETURN(child, DefaultColumn(f, f.write_default, n));
    } else {
      SKADE_ASSIGN_OR_RETURN(child, ConvertValues(child, *f.type, child_path, row_of));
    }
    if (f.required) {
      SKADE_ASSIGN_OR_RETURN(child, Required(child, all_null ? in.get() : sa, child_path, row_of));
    }
    children.push_back(std::move(child));
  }
  for (size_t k = 0; k < used.size(); ++k)
    if (!used[k])
      return InvalidArgument("field '" + path + "." + sa->struct_type()->field(static_cast<int>(k))->name() +
                             "' is not in the table (fields of '" + path + "': " + [&] {
                               std::string names;
                               for (const auto& f : type.fields) names += (names.empty() ? "" : ", ") + f.name;
                               return names;
                             }() + ")");
  std::shared_ptr<arrow::Buffer> validity;
  int64_t nulls = n;
  if (all_null) {
    SKADE_ARROW_ASSIGN(validity, arrow::AllocateEmptyBitmap(n), path);
  } else {
    SKADE_ASSIGN_OR_RETURN(validity, Validity(*in, path));
    nulls = in->null_count();
  }
  return std::make_shared<arrow::StructArray>(ToArrowType(type), n, std::move(children), std::move(validity), nulls);
}

// The offsets (from 0) and values of a list or map array's rows, with the row each value is in.
struct Entries {
  std::shared_ptr<arrow::Buffer> offsets;
  std::shared_ptr<arrow::Array> values;
  RowOf row_of;
};

Result<Entries> ListEntries(const arrow::ListArray& in, const std::string& path, const RowOf& row_of) {
  const int64_t n = in.length();
  const int32_t base = in.value_offset(0);
  SKADE_ARROW_ASSIGN(auto offsets, arrow::AllocateBuffer((n + 1) * static_cast<int64_t>(sizeof(int32_t))), path);
  auto* o = reinterpret_cast<int32_t*>(offsets->mutable_data());
  for (int64_t i = 0; i <= n; ++i) o[i] = in.raw_value_offsets()[i] - base;
  Entries e;
  e.values = in.values()->Slice(base, o[n]);
  e.offsets = std::shared_ptr<arrow::Buffer>(std::move(offsets));
  e.row_of = [o, n, row_of](int64_t j) {
    return row_of(static_cast<int64_t>(std::upper_bound(o, o + n + 1, static_cast<int32_t>(j)) - o) - 1);
  };
  return e;
}

Result<std::shared_ptr<arrow::Array>> ConvertList(const std::shared_ptr<arrow::Array>& in, const Type& type,
                                                  const std::string& path, const RowOf& row_of) {
  std::shared_ptr<arrow::Array> list = in;
  if (in->type_id() != arrow::Type::LIST && arrow::is_list_like(in->type_id()) && in->type_id() != arrow::Type::MAP) {
    // large, fixed-size and view lists: as a list of the same values
    InitArrowCompute();
    auto elem = static_cast<const arrow::BaseListType&>(*in->type()).value_type();
    SKADE_ARROW_ASSIGN(list, arrow::compute::Cast(*in, arrow::list(elem)), path);
  }
  if (list->type_id() != arrow::Type::LIST)
    return Unconvertible(path, *in, type);
  const auto& la = static_cast<const arrow::ListArray&>(*list);
  SKADE_ASSIGN_OR_RETURN(Entries e, ListEntries(la, path, row_of));
  const NestedField& element = type.element();
  const std::string element_path = path + ".element";
  SKADE_ASSIGN_OR_RETURN(auto values, ConvertValues(e.values, *element.type, element_path, e.row_of));
  if (element.required) {
    SKADE_ASSIGN_OR_RETURN(values, Required(values, nullptr, element_path, e.row_of));
  }
  SKADE_ASSIGN_OR_RETURN(auto validity, Validity(la, path));
  return std::make_shared<arrow::ListArray>(ToArrowType(type), la.length(), e.offsets, values, validity,
                                            la.null_count());
}

// A key may appear once in a map (Spark refuses maps with repeated keys, other readers keep
// one of the values): a repeated one is an error naming it and its row. Keys compare by
// their bytes (text, or the fixed-width value); booleans, the one other key type, by value.
Status UniqueKeys(const arrow::Array& keys, const Entries& e, int64_t rows, const std::string& path) {
  const auto* offsets = reinterpret_cast<const int32_t*>(e.offsets->data());
  const auto* binary = dynamic_cast<const arrow::BinaryArray*>(&keys);
  const int width = arrow::is_fixed_width(keys.type_id()) ? keys.type()->byte_width() : -1;
  auto bytes = [&](int32_t j) -> std::string_view {
    if (binary) return binary->GetView(j);
    if (width > 0)
      return {reinterpret_cast<const char*>(keys.data()->buffers[1]->data()) + (keys.offset() + j) * width,
              static_cast<size_t>(width)};
    return static_cast<const arrow::BooleanArray&>(keys).Value(j) ? "1" : "0";
  };
  std::unordered_set<std::string_view> seen;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t begin = offsets[r], end = offsets[r + 1];
    if (end - begin < 2) continue;
    seen.clear();
    for (int32_t j = begin; j < end; ++j) {
      if (seen.insert(bytes(j)).second) continue;
      return InvalidArgument("column '" + path + "' row " + RowText(e.row_of, j) + ": key " + ShowValue(keys, j) +
                             " appears twice in one map");
    }
  }
  return {};
}

// A map takes Arrow maps and lists of key/value structs (as JSON objects are read).
Result<std::shared_ptr<arrow::Array>> ConvertMap(const std::shared_ptr<arrow::Array>& in, const Type& type,
                                                 const std::string& path, const RowOf& row_of) {
  const bool entry_list = in->type_id() == arrow::Type::LIST &&
                          static_cast<const arrow::ListType&>(*in->type()).value_type()->id() == arrow::Type::STRUCT &&
                          static_cast<const arrow::ListType&>(*in->type()).value_type()->num_fields() == 2;
  if (in->type_id() != arrow::Type::MAP && !entry_list)
    return Unconvertible(path, *in, type);
  const auto& la = static_cast<const arrow::ListArray&>(*in);  // a MapArray is a ListArray
  SKADE_ASSIGN_OR_RETURN(Entries e, ListEntries(la, path, row_of));
  const auto& pairs = static_cast<const arrow::StructArray&>(*e.values);
  const std::string key_path = path + ".key", value_path = path + ".value";
  SKADE_ASSIGN_OR_RETURN(auto keys, ConvertValues(pairs.field(0), *type.key().type, key_path, e.row_of));
  SKADE_ASSIGN_OR_RETURN(keys, Required(keys, nullptr, key_path, e.row_of));
  SKADE_RETURN_IF_ERROR(UniqueKeys(*keys, e, la.length(), path));
  SKADE_ASSIGN_OR_RETURN(auto items, ConvertValues(pairs.field(1), *type.value().type, value_path, e.row_of));
  if (type.value().required) {
    SKADE_ASSIGN_OR_RETURN(items, Required(items, nullptr, value_path, e.row_of));
  }
  SKADE_ASSIGN_OR_RETURN(auto validity, Validity(la, path));
  return std::make_shared<arrow::MapArray>(ToArrowType(type), la.length(), e.offsets, keys, items, validity,
                                           la.null_count());
}

// `in` as values of `type`, nested types field by field (matched by name; a field the
// table does not have is an error), every value converted as a column's would be.
Result<std::shared_ptr<arrow::Array>> ConvertValues(const std::shared_ptr<arrow::Array>& in, const Type& type,
                                                    const std::string& path, const RowOf& row_of) {
  // All null (an absent column or field): a struct still needs its required fields marked.
  if (in->type_id() == arrow::Type::NA && type.id != TypeId::kStruct) {
    SKADE_ARROW_ASSIGN(auto nulls, arrow::MakeArrayOfNull(ToArrowType(type), in->length()), path);
    return nulls;
  }
  switch (type.id) {
    case TypeId::kStruct: return ConvertStruct(in, type, path, row_of);
    case TypeId::kList: return ConvertList(in, type, path, row_of);
    case TypeId::kMap: return ConvertMap(in, type, path, row_of);
    default: return ConvertPrimitive(in, type, path, row_of);
  }
}

Result<std::shared_ptr<arrow::Array>> ConvertColumn(const std::shared_ptr<arrow::Array>& in,
                                                    const NestedField& field, int64_t first_row) {
  RowOf row_of = [first_row](int64_t i) { return first_row + i; };
  SKADE_ASSIGN_OR_RETURN(auto out, ConvertValues(in, *field.type, field.name, row_of));
  if (field.required && out->null_count() > 0) {
    int64_t row = 0;
    while (row < out->length() && !out->IsNull(row)) ++row;
    return InvalidArgument("column '" + field.name + "' is required but row " +
                           std::to_string(first_row + row) + " is null");
  }
  return out;
}

std::string PathSegment(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.') out += static_cast<char>(c);
    else {
      char buf[4];
      snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

parquet::Compression::type CodecFromProperty(const std::string& name) {
  std::string n;
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "snappy") return parquet::Compression::SNAPPY;
  if (n == "gzip") return parquet::Compression::GZIP;
  if (n == "uncompressed" || n == "none") return parquet::Compression::UNCOMPRESSED;
  if (n == "lz4") return parquet::Compression::LZ4;
  return parquet::Compression::ZSTD;
}

}  // namespace

Result<std::shared_ptr<arrow::Array>> DefaultColumn(const NestedField& field, const std::string& json, int64_t rows) {
  const std::string where = "the default of column '" + field.name + "'";
  if (field.type->is_nested())
    return Unsupported(where + " (" + field.type->ToString() + "): skade fills in defaults of other types only");
  auto value = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || value.is_structured() || value.is_null())
    return InvalidArgument(where + " is not a single JSON value: " + json);
  // Iceberg's JSON form of a value is the text form input takes, as a string or a number.
  arrow::StringBuilder text;
  SKADE_ARROW_RETURN(text.Append(value.is_string() ? value.get<std::string>() : value.dump()), where);
  SKADE_ARROW_ASSIGN(auto one, text.Finish(), where);
  SKADE_ASSIGN_OR_RETURN(auto typed, ConvertValues(one, *field.type, where, [](int64_t) { return int64_t{1}; }));
  SKADE_ARROW_ASSIGN(auto scalar, typed->GetScalar(0), where);
  SKADE_ARROW_ASSIGN(auto out, arrow::MakeArrayFromScalar(*scalar, rows), where);
  return out;
}

Result<std::shared_ptr<arrow::RecordBatch>> ConformToSchema(
    const std::shared_ptr<arrow::RecordBatch>& batch, const Schema& schema, int64_t first_row) {
  const auto& in_schema = *batch->schema();
  std::vector<bool> used(in_schema.num_fields(), false);
  arrow::ArrayVector columns;
  for (const auto& field : schema.fields()) {
    int idx = in_schema.GetFieldIndex(field.name);
    if (idx < 0)
      for (int i = 0; i < in_schema.num_fields(); ++i)
        if (IEq(in_schema.field(i)->name(), field.name)) idx = i;
    if (idx < 0) {
      if (!field.write_default.empty()) {  // format v3: what a row without the column holds
        SKADE_ASSIGN_OR_RETURN(auto filled, DefaultColumn(field, field.write_default, batch->num_rows()));
        columns.push_back(std::move(filled));
        continue;
      }
      if (field.required)
        return InvalidArgument("required column '" + field.name + "' is missing from the input");
      SKADE_ASSIGN_OR_RETURN(auto nulls,
                             ConvertColumn(std::make_shared<arrow::NullArray>(batch->num_rows()), field, first_row));
      columns.push_back(std::move(nulls));
      continue;
    }
    used[idx] = true;
    SKADE_ASSIGN_OR_RETURN(auto col, ConvertColumn(batch->column(idx), field, first_row));
    columns.push_back(std::move(col));
  }
  for (int i = 0; i < in_schema.num_fields(); ++i)
    if (!used[i])
      return InvalidArgument("input column '" + in_schema.field(i)->name() +
                             "' is not in the table (columns: " + schema.ColumnNames() + ")");
  return arrow::RecordBatch::Make(ToArrowSchema(schema), batch->num_rows(), std::move(columns));
}

namespace {

// Dictionary encoding pays for columns with few distinct values: smaller files, and
// readers gather from the dictionary instead of decompressing every value. Up to a
// dictionary of kDictionaryBytes: the encoder's hash table then stays in cache (a
// dictionary of 100,000 prices, 800 KB, made 1M-row appends 10-25% slower, for 6 ms
// less per 1M rows read). Larger ones would also outgrow the page, after which the
// encoder falls back to plain anyway. Decided per file from its first kPlainSample
// rows; a column whose estimate is within a factor of two of the bound is counted again
// on up to kDistinctSample rows where the first batches hold them (simulated, the
// estimate of 20,000 equally likely values errs by 4.6% from 4096 rows, 1.2% from 16384).
constexpr int64_t kPlainSample = 4096;
constexpr int64_t kDistinctSample = 16384;
constexpr double kDictionaryBytes = 256 << 10;

// The number of distinct values a column holds, estimated from a sample that showed
// `seen` of them, `once` seen exactly once and `twice` exactly twice (Chao's estimator:
// the values not yet seen grow with those seen once). Unlike one that assumes every
// value equally likely, it is not fooled by a frequent value repeating beside values
// that never repeat (an empty string among unique ones).
double EstimatedDistinct(int64_t seen, int64_t once, int64_t twice) {
  const double f1 = static_cast<double>(once), f2 = static_cast<double>(twice);
  return static_cast<double>(seen) + (twice > 0 ? f1 * f1 / (2 * f2) : f1 * (f1 - 1) / 2);
}

// The columns to write without a dictionary: those whose dictionary, estimated from the
// first rows' distinct values and their sizes (`batch`: up to kDistinctSample rows),
// would be larger than kDictionaryBytes.
std::vector<std::string> PlainColumns(const arrow::RecordBatch& batch) {
  std::vector<std::string> plain;
  if (batch.num_rows() < kPlainSample) return plain;
  InitArrowCompute();
  for (int c = 0; c < batch.num_columns(); ++c) {
    const auto& type = *batch.column(c)->type();
    if (!arrow::is_primitive(type.id()) && !arrow::is_base_binary_like(type.id())) continue;
    if (type.id() == arrow::Type::BOOL) continue;
    // The dictionary's estimated bytes from the first `rows` rows (or -1).
    auto dictionary_bytes = [&](int64_t rows) -> double {
      const auto column = batch.column(c)->Slice(0, rows);
      auto counted = arrow::compute::ValueCounts(column);
      if (!counted.ok()) return -1;
      const auto& values = *(*counted)->field(0);
      const auto& counts = static_cast<const arrow::Int64Array&>(*(*counted)->field(1));
      int64_t seen = 0, once = 0, twice = 0;  // nulls are no dictionary entry
      for (int64_t k = 0; k < counts.length(); ++k) {
        if (values.IsNull(k)) continue;
        ++seen;
        once += counts.Value(k) == 1;
        twice += counts.Value(k) == 2;
      }
      if (seen <= rows / 2) return 0;
      // An entry's bytes: the value's width, or a string's average plus its length.
      double entry = type.byte_width() > 0 ? type.byte_width() : 4;
      if (arrow::is_binary_like(type.id()))
        entry += static_cast<double>(static_cast<const arrow::BinaryArray&>(*column).total_values_length()) / rows;
      if (arrow::is_large_binary_like(type.id()))
        entry += static_cast<double>(static_cast<const arrow::LargeBinaryArray&>(*column).total_values_length()) / rows;
      return EstimatedDistinct(seen, once, twice) * entry;
    };
    double bytes = dictionary_bytes(kPlainSample);
    if (bytes > kDictionaryBytes / 2 && bytes < kDictionaryBytes * 2 && batch.num_rows() > kPlainSample)
      bytes = dictionary_bytes(batch.num_rows());
    if (bytes > kDictionaryBytes) plain.push_back(batch.schema()->field(c)->name());
  }
  return plain;
}

// The table's codec for data pages, and its level (zstd's; other codecs take their default).
struct PageCodec {
  parquet::Compression::type codec;
  int level;
};

PageCodec PageCodecOf(const TableMetadata& metadata) {
  const auto codec = CodecFromProperty(metadata.Property("write.parquet.compression-codec", "zstd"));
  const int level = codec == parquet::Compression::ZSTD
                        ? static_cast<int>(metadata.PropertyInt("write.parquet.compression-level", 1))
                        : arrow::util::kUseDefaultCompressionLevel;
  return {codec, level};
}

parquet::WriterProperties::Builder WriterPropsBuilder(const TableMetadata& metadata, int64_t row_group_rows) {
  parquet::WriterProperties::Builder b;
  b.memory_pool(DataWriter::pool());
  const PageCodec page = PageCodecOf(metadata);
  b.compression(page.codec);
  b.compression_level(page.level);
  b.max_row_group_length(row_group_rows);
  b.enable_statistics();
  // Each page's bounds in the footer's page index: scans (skade's, Spark's) skip the data
  // pages of a filter column that cannot match, before decompressing them.
  b.enable_write_page_index();
  return b;
}

std::shared_ptr<parquet::WriterProperties> WriterProps(const TableMetadata& metadata, int64_t row_group_rows) {
  return WriterPropsBuilder(metadata, row_group_rows).build();
}

// Of the columns written PLAIN (`plain`), those the file's codec shrinks by less than
// `min_saving_percent` (values whose bits are close to random: measured prices, scores,
// hashes). Every reader of such a column would pay for its decompression to save a few
// percent of its bytes, so it is stored uncompressed. Decided from the plain bytes of
// the file's first rows, compressed as the file's pages would be.
std::vector<std::string> IncompressibleColumns(const arrow::RecordBatch& sample, const std::vector<std::string>& plain,
                                               PageCodec page, int64_t min_saving_percent) {
  std::vector<std::string> out;
  if (page.codec == parquet::Compression::UNCOMPRESSED || min_saving_percent <= 0) return out;
  auto made = arrow::util::Codec::Create(page.codec, page.level);
  if (!made.ok()) return out;
  auto& compressor = **made;
  std::vector<uint8_t> scratch;
  for (const auto& name : plain) {
    const auto& column = sample.GetColumnByName(name);
    if (!column) continue;
    const auto& data = *column->data();
    const uint8_t* bytes = nullptr;
    int64_t size = 0;
    if (arrow::is_fixed_width(column->type_id()) && column->type_id() != arrow::Type::BOOL) {
      const int64_t width = column->type()->byte_width();
      if (width <= 0 || !data.buffers[1]) continue;
      bytes = data.buffers[1]->data() + data.offset * width;
      size = data.length * width;
    } else if (column->type_id() == arrow::Type::STRING || column->type_id() == arrow::Type::BINARY) {
      const auto& strings = static_cast<const arrow::BinaryArray&>(*column);
      bytes = strings.raw_data() + strings.value_offset(0);
      size = strings.value_offset(strings.length()) - strings.value_offset(0);
    } else {
      continue;
    }
    if (size < 1024) continue;
    scratch.resize(static_cast<size_t>(compressor.MaxCompressedLen(size, bytes)));
    auto compressed = compressor.Compress(size, bytes, static_cast<int64_t>(scratch.size()), scratch.data());
    if (compressed.ok() && *compressed * 100 > (100 - min_saving_percent) * size) out.push_back(name);
  }
  return out;
}

// The properties of a file whose first rows are `sample`: no dictionaries for the
// columns PlainColumns names, and no compression for those of them it would not shrink.
std::shared_ptr<parquet::WriterProperties> FileProps(const TableMetadata& metadata, int64_t row_group_rows,
                                                     const arrow::RecordBatch& sample) {
  auto b = WriterPropsBuilder(metadata, row_group_rows);
  const auto plain = PlainColumns(sample);
  for (const auto& name : plain) b.disable_dictionary(name);
  const int64_t min_saving = metadata.PropertyInt("skade.write.parquet.compression-min-saving-percent", 10);
  const auto first = sample.Slice(0, kPlainSample);  // enough to judge the codec, cheaper than all
  for (const auto& name : IncompressibleColumns(*first, plain, PageCodecOf(metadata), min_saving)) {
    b.compression(name, parquet::Compression::UNCOMPRESSED);
    b.compression_level(name, arrow::util::kUseDefaultCompressionLevel);  // the table's is zstd's
  }
  return b.build();
}

// Columns are encoded in parallel on the Arrow CPU pool (ParquetFileWriter: flat schemas
// as independent column streams, nested ones by Arrow's FileWriter).
std::shared_ptr<parquet::ArrowWriterProperties> ParallelColumns() {
  return parquet::ArrowWriterProperties::Builder().set_use_threads(true)->build();
}

// Adds the NaNs among `a`'s values to `nans` under their field ids (an entry, maybe 0, for
// every float and double field that has one): Parquet's statistics leave NaN out of
// min/max and count none, so a data file's nan_value_counts come from here.
template <typename FloatArray>
int64_t NaNsIn(const FloatArray& a) {
  const auto* v = a.raw_values();
  int64_t n = 0;
  if (a.null_count() == 0) {
    for (int64_t r = 0; r < a.length(); ++r) n += v[r] != v[r];
  } else {
    for (int64_t r = 0; r < a.length(); ++r) n += v[r] != v[r] && a.IsValid(r);
  }
  return n;
}

void CountNaNs(const arrow::Array& a, int field_id, std::map<int, int64_t>* nans) {
  switch (a.type_id()) {
    case arrow::Type::FLOAT:
      if (field_id >= 0) (*nans)[field_id] += NaNsIn(static_cast<const arrow::FloatArray&>(a));
      return;
    case arrow::Type::DOUBLE:
      if (field_id >= 0) (*nans)[field_id] += NaNsIn(static_cast<const arrow::DoubleArray&>(a));
      return;
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(a);
      for (int k = 0; k < s.num_fields(); ++k) CountNaNs(*s.field(k), FieldIdOf(*s.type()->field(k)), nans);
      return;
    }
    case arrow::Type::LIST:
    case arrow::Type::MAP: {  // a map is a list of key-value structs
      const auto& l = static_cast<const arrow::ListArray&>(a);
      if (l.length() == 0) return;
      const int32_t first = l.value_offset(0);
      CountNaNs(*l.values()->Slice(first, l.value_offset(l.length()) - first),
                FieldIdOf(*l.list_type()->value_field()), nans);
      return;
    }
    default: return;
  }
}

void CountNaNs(const arrow::RecordBatch& batch, std::map<int, int64_t>* nans) {
  for (int c = 0; c < batch.num_columns(); ++c)
    CountNaNs(*batch.column(c), FieldIdOf(*batch.schema()->field(c)), nans);
}

// The first rows of a file, joined: what its encodings are picked from.
Result<std::shared_ptr<arrow::RecordBatch>> FirstRows(const std::shared_ptr<arrow::Schema>& schema,
                                                      const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                                                      const std::string& path) {
  SKADE_ARROW_ASSIGN(auto rows, arrow::Table::FromRecordBatches(schema, batches), path);
  SKADE_ARROW_ASSIGN(auto sample, rows->Slice(0, kDistinctSample)->CombineChunksToBatch(), path);
  return sample;
}

}  // namespace

Result<DataFile> WriteParquetFile(const TableMetadata& metadata, const std::string& location,
                                  arrow::RecordBatchReader& batches, const Schema& schema) {
  std::string path = LocalPath(location);
  SKADE_RETURN_IF_ERROR(MakeDirs(std::filesystem::path(path).parent_path().string()));
  SKADE_RETURN_IF_ERROR(CheckInside(path, metadata.location));
  SKADE_ARROW_ASSIGN(auto sink, DataFileSink::Open(path), path);
  int64_t rows = 0;
  std::map<int, int64_t> nans;
  std::shared_ptr<ParquetFileWriter> writer;
  auto write = [&]() -> arrow::Status {
    auto props = WriterProps(metadata, metadata.PropertyInt("write.parquet.row-group-limit", 1 << 20));
    ARROW_ASSIGN_OR_RAISE(writer, ParquetFileWriter::Open(*batches.schema(), DataWriter::pool(), sink, props,
                                                          parquet::ArrowWriterProperties::Builder().build()));
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ARROW_RETURN_NOT_OK(batches.ReadNext(&batch));
      if (!batch) break;
      rows += batch->num_rows();
      CountNaNs(*batch, &nans);
      ARROW_RETURN_NOT_OK(writer->WriteRecordBatch(batch));
    }
    ARROW_RETURN_NOT_OK(writer->Close());
    return sink->Finish();
  };
  if (auto st = write(); !st.ok()) {
    if (writer) (void)writer->Close();
    (void)sink->Close();
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return std::unexpected(FromArrow(st, path));
  }
  SKADE_ARROW_ASSIGN(int64_t size, sink->Tell(), path);
  // On disk, name and contents, before any commit can refer to it.
  SKADE_RETURN_IF_ERROR(SyncFile(sink->file_descriptor(), path));
  SKADE_ARROW_RETURN(sink->Close(), path);
  SKADE_RETURN_IF_ERROR(SyncFolder(std::filesystem::path(path).parent_path().string()));
  FileMetrics m = ComputeFileMetrics(*writer->metadata(), schema);
  DataFile df;
  df.file_path = FileUri(path);
  df.record_count = rows;
  df.file_size_in_bytes = size;
  df.column_sizes = std::move(m.column_sizes);
  df.stats = std::move(m.stats);
  df.stats.nan_value_counts = std::move(nans);
  df.split_offsets = std::move(m.split_offsets);
  return df;
}

Result<DataFile> WriteParquetFile(const TableMetadata& metadata, const std::string& location,
                                  const std::shared_ptr<arrow::RecordBatch>& batch, const Schema& schema) {
  SKADE_ARROW_ASSIGN(auto one, arrow::RecordBatchReader::Make({batch}), location);
  return WriteParquetFile(metadata, location, *one, schema);
}

namespace {

// KeepMarkedRows' reader.
class MarkedRows final : public arrow::RecordBatchReader {
 public:
  MarkedRows(std::shared_ptr<arrow::RecordBatchReader> input, const Schema& schema, const std::vector<uint8_t>& keep,
             const std::vector<int64_t>& replaced_ids, int64_t first, int64_t* rows_read)
      : input_(std::move(input)), schema_(schema),
        arrow_schema_(ToArrowSchema(replaced_ids.empty() ? schema : WithRowLineage(schema))),
        keep_(keep), replaced_ids_(replaced_ids), first_(first), rows_read_(rows_read) {
    *rows_read_ = 0;
    const auto upto = keep_.begin() + std::min<int64_t>(first_, static_cast<int64_t>(keep_.size()));
    kept_ = std::count_if(keep_.begin(), upto, [](uint8_t k) { return k != 0; });
  }
  std::shared_ptr<arrow::Schema> schema() const override { return arrow_schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    while (true) {
      ARROW_RETURN_NOT_OK(input_->ReadNext(out));
      if (!*out) return arrow::Status::OK();
      const int64_t n = (*out)->num_rows(), at = first_ + *rows_read_;
      if (at + n > static_cast<int64_t>(keep_.size()))
        return arrow::Status::IOError("the input holds more rows than when its keys were read (did it change?)");
      auto conformed = ConformToSchema(*out, schema_, *rows_read_ + 1);
      if (!conformed) return arrow::Status::Invalid(conformed.error().message);
      *rows_read_ += n;
      auto bits = arrow::AllocateBitmap(n);
      if (!bits.ok()) return bits.status();
      int64_t kept = 0;
      for (int64_t r = 0; r < n; ++r) {
        const bool k = keep_[static_cast<size_t>(at + r)] != 0;
        arrow::bit_util::SetBitTo((*bits)->mutable_data(), r, k);
        kept += k;
      }
      if (kept == 0) continue;
      *out = *conformed;
      if (kept < n) {
        auto some = KeepRows(*out, arrow::BooleanArray(n, *std::move(bits)), kept);
        if (!some) return arrow::Status::Invalid(some.error().message);
        *out = *some;
      }
      if (!replaced_ids_.empty()) {
        ARROW_ASSIGN_OR_RAISE(*out, WithReplacedIds(**out));
      }
      kept_ += kept;
      return arrow::Status::OK();
    }
  }

 private:
  // `batch` (the next kept rows) with the ids of the rows they replace.
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> WithReplacedIds(const arrow::RecordBatch& batch) const {
    const int64_t n = batch.num_rows();
    if (kept_ + n > static_cast<int64_t>(replaced_ids_.size()))
      return arrow::Status::IOError("the input holds more rows than when its keys were read (did it change?)");
    arrow::Int64Builder ids;
    ARROW_RETURN_NOT_OK(ids.Reserve(n));
    for (int64_t r = 0; r < n; ++r) {
      const int64_t id = replaced_ids_[static_cast<size_t>(kept_ + r)];
      if (id < 0) ids.UnsafeAppendNull();
      else ids.UnsafeAppend(id);
    }
    ARROW_ASSIGN_OR_RAISE(auto id_column, ids.Finish());
    ARROW_ASSIGN_OR_RAISE(auto sequence_column, arrow::MakeArrayOfNull(arrow::int64(), n));
    arrow::ArrayVector columns = batch.columns();
    columns.push_back(std::move(id_column));
    columns.push_back(std::move(sequence_column));
    return arrow::RecordBatch::Make(arrow_schema_, n, std::move(columns));
  }

  std::shared_ptr<arrow::RecordBatchReader> input_;
  const Schema& schema_;
  std::shared_ptr<arrow::Schema> arrow_schema_;
  const std::vector<uint8_t>& keep_;
  const std::vector<int64_t>& replaced_ids_;
  const int64_t first_;
  int64_t* rows_read_;
  int64_t kept_ = 0;  // marked rows before the next batch's, counted over all inputs
};

}  // namespace

std::shared_ptr<arrow::RecordBatchReader> KeepMarkedRows(std::shared_ptr<arrow::RecordBatchReader> input,
                                                         const Schema& schema, const std::vector<uint8_t>& keep,
                                                         const std::vector<int64_t>& replaced_ids, int64_t first,
                                                         int64_t* rows_read) {
  return std::make_shared<MarkedRows>(std::move(input), schema, keep, replaced_ids, first, rows_read);
}

struct DataWriter::Impl {
  const TableMetadata* metadata = nullptr;
  SchemaPtr schema;
  PartitionSpec spec;
  std::vector<TypePtr> partition_types;
  std::vector<TypePtr> source_types;
  std::shared_ptr<arrow::Schema> arrow_schema;
  std::shared_ptr<parquet::WriterProperties> props;
  std::shared_ptr<parquet::ArrowWriterProperties> arrow_props;
  arrow::MemoryPool* pool = DataWriter::pool();
  int64_t target_file_bytes = 0;
  int64_t row_group_rows = 0;
  std::string write_id = NewUuid();

  // Several partitions are written at once: `mu` guards what they share (the
  // fields below); each thread works on the open file of its own partition.
  std::mutex mu;
  int64_t rows_written = 0;
  int file_counter = 0;
  int64_t pending_total = 0;  // bytes held for row groups not yet written, all files

  struct OpenFile {
    std::vector<Value> partition;
    std::string path;
    std::shared_ptr<DataFileSink> sink;
    std::unique_ptr<ParquetFileWriter> writer;
    int64_t rows = 0;  // written to the file
    // Rows of the current row group not yet handed to Parquet: the first rows of a
    // file (its encodings are picked from them) and row groups that may reach the target
    // size (written at once, then measured). Otherwise a row group is buffered by Parquet
    // and each batch encoded as it arrives, so decoded input is not held.
    std::vector<std::shared_ptr<arrow::RecordBatch>> pending;
    int64_t pending_rows = 0, pending_bytes = 0;
    int64_t group_rows = 0, group_limit = 0;  // rows of the current row group (incl. pending), its cap
    bool streaming = false;      // the current row group is a buffered one batches go into
    int64_t buffered_bytes = 0;  // decoded size of the row group the writer holds, not yet in the file
    std::map<int, int64_t> nans;  // by field id, of the rows written so far
  };
  std::unordered_map<std::string, OpenFile> open;  // node-based: an entry stays put while others come and go
  std::vector<DataFile> done;

  // Decoded bytes of pending row groups (all files) above which the largest are written early.
  static constexpr int64_t kPendingBytes = 128LL << 20;

  Result<OpenFile*> FileFor(const std::string& key, const std::vector<Value>& tuple) {
    int counter;
    {
      std::lock_guard lock(mu);
      auto it = open.find(key);
      if (it != open.end()) return &it->second;
      counter = file_counter++;
    }
    OpenFile f;
    f.partition = tuple;
    std::string dir = LocalPath(metadata->location) + "/data";
    for (size_t i = 0; i < spec.fields().size(); ++i)
      dir += "/" + PathSegment(spec.fields()[i].name) + "=" +
             PathSegment(spec.fields()[i].transform.ValueToPathString(*source_types[i], tuple[i]));
    SKADE_RETURN_IF_ERROR(MakeDirs(dir));
    char name[64];
    snprintf(name, sizeof name, "%05d-0-", counter);
    f.path = dir + "/" + name + write_id + ".parquet";
    SKADE_RETURN_IF_ERROR(CheckInside(f.path, metadata->location));
    SKADE_ARROW_ASSIGN(f.sink, DataFileSink::Open(f.path), f.path);
    std::lock_guard lock(mu);
    return &open.emplace(key, std::move(f)).first->second;
  }

  // Bytes of the file so far, counting a row group the writer still holds by its decoded size.
  Result<int64_t> FileBytes(OpenFile& f) {
    SKADE_ARROW_ASSIGN(int64_t on_disk, f.sink->Tell(), f.path);
    return on_disk + f.buffered_bytes;
  }

  Status OpenWriter(OpenFile& f) {
    if (f.writer) return {};
    // The encodings are chosen from the file's first rows (not its first input batch,
    // which may be a few rows of a small file being compacted).
    SKADE_ASSIGN_OR_RETURN(auto sample, FirstRows(f.pending[0]->schema(), f.pending, f.path));
    SKADE_ARROW_ASSIGN(f.writer,
                       ParquetFileWriter::Open(*arrow_schema, pool, f.sink,
                                               FileProps(*metadata, props->max_row_group_length(), *sample),
                                               arrow_props),
                       f.path);
    return {};
  }

  // The pending rows are Parquet's now: counted as written, their memory released.
  void Handed(OpenFile& f) {
    f.rows += f.pending_rows;
    f.pending.clear();
    std::lock_guard lock(mu);
    rows_written += f.pending_rows;
    pending_total -= f.pending_bytes;
    f.pending_rows = f.pending_bytes = 0;
  }

  // Hands the pending rows to the buffered row group (Parquet encodes them now).
  Status WritePending(OpenFile& f) {
    for (const auto& b : f.pending) SKADE_ARROW_RETURN(f.writer->WriteRecordBatch(b), f.path);
    f.buffered_bytes += f.pending_bytes;
    Handed(f);
    return {};
  }

  // Called as rows join a row group that is not full yet. Parquet encodes the columns
  // of a row group in parallel only through its buffered row groups, which reach the
  // file later (at the next row group or at Close): used while even the decoded size of
  // a full row group keeps the file below the target, so the roll decision never needs
  // the unwritten size.
  Status Stream(OpenFile& f, int64_t bytes_per_row) {
    if (!f.streaming) {
      if (!f.writer && f.pending_rows < kPlainSample) return {};
      SKADE_RETURN_IF_ERROR(OpenWriter(f));
      SKADE_ASSIGN_OR_RETURN(int64_t bytes, FileBytes(f));
      if (bytes + f.group_limit * bytes_per_row >= target_file_bytes) return {};
      SKADE_ARROW_RETURN(f.writer->NewBufferedRowGroup(), f.path);
      f.buffered_bytes = 0;
      f.streaming = true;
    }
    return WritePending(f);
  }

  // Ends the current row group: its pending rows go into the buffered row group, or
  // (not streaming) into a buffered one when it keeps the file below the target, else
  // are written at once and the file measured (`*measured`).
  Status Flush(OpenFile& f, bool* measured) {
    *measured = false;
    bool streaming = std::exchange(f.streaming, false);
    f.group_rows = 0;
    if (f.pending_rows == 0) return {};
    SKADE_RETURN_IF_ERROR(OpenWriter(f));
    if (streaming) return WritePending(f);
    SKADE_ASSIGN_OR_RETURN(int64_t bytes, FileBytes(f));
    if (bytes + f.pending_bytes < target_file_bytes) {
      SKADE_ARROW_RETURN(f.writer->NewBufferedRowGroup(), f.path);
      f.buffered_bytes = 0;
      return WritePending(f);
    }
    SKADE_ARROW_ASSIGN(auto table, arrow::Table::FromRecordBatches(f.pending[0]->schema(), f.pending), f.path);
    SKADE_ARROW_RETURN(f.writer->WriteTable(*table, f.pending_rows), f.path);
    f.buffered_bytes = 0;
    *measured = true;
    Handed(f);
    return {};
  }

  // Flushes and closes the file of `key` and records it as written.
  Status Close(const std::string& key, OpenFile& f) {
    bool measured;
    SKADE_RETURN_IF_ERROR(Flush(f, &measured));
    SKADE_ARROW_RETURN(f.writer->Close(), f.path);
    SKADE_ARROW_RETURN(f.sink->Finish(), f.path);
    auto md = f.writer->metadata();
    SKADE_ARROW_ASSIGN(int64_t size, f.sink->Tell(), f.path);
    // A commit may refer to the file only once its contents are on disk (its name: Finish).
    SKADE_RETURN_IF_ERROR(SyncFile(f.sink->file_descriptor(), f.path));
    SKADE_ARROW_RETURN(f.sink->Close(), f.path);
    FileMetrics m = ComputeFileMetrics(*md, *schema);
    DataFile df;
    df.file_path = FileUri(f.path);
    df.partition = f.partition;
    df.record_count = md->num_rows();
    df.file_size_in_bytes = size;
    df.column_sizes = std::move(m.column_sizes);
    df.stats = std::move(m.stats);
    df.stats.nan_value_counts = std::move(f.nans);
    df.split_offsets = std::move(m.split_offsets);
    df.sort_order_id = 0;
    df.spec_id = spec.spec_id();
    std::lock_guard lock(mu);
    done.push_back(std::move(df));
    open.erase(key);
    return {};
  }

  // Adds `batch`'s rows to the partition's file: row groups of up to `group_rows`
  // rows, files rolled at the target size. Threads call this for distinct keys.
  Status WriteTo(const std::string& key, const std::vector<Value>& tuple,
                 const std::shared_ptr<arrow::RecordBatch>& batch, int64_t group_rows, int64_t bytes_per_row) {
    int64_t offset = 0;
    while (offset < batch->num_rows()) {
      SKADE_ASSIGN_OR_RETURN(OpenFile * f, FileFor(key, tuple));
      if (f->group_rows == 0) {
        f->group_limit = group_rows;
        if (f->rows > 0) {
          // Size the row group by what rows really cost on disk so far in this file.
          SKADE_ASSIGN_OR_RETURN(int64_t written, FileBytes(*f));
          int64_t per_row = std::max<int64_t>(1, written / f->rows);
          f->group_limit = std::clamp<int64_t>((target_file_bytes - written) / per_row, 1, group_rows);
        }
      }
      int64_t n = std::min(f->group_limit - f->group_rows, batch->num_rows() - offset);
      f->pending.push_back(batch->Slice(offset, n));
      CountNaNs(*f->pending.back(), &f->nans);
      f->pending_rows += n;
      f->pending_bytes += n * bytes_per_row;
      f->group_rows += n;
      {
        std::lock_guard lock(mu);
        pending_total += n * bytes_per_row;
      }
      offset += n;
      if (f->group_rows < f->group_limit) {
        SKADE_RETURN_IF_ERROR(Stream(*f, bytes_per_row));
        continue;
      }
      bool measured;
      SKADE_RETURN_IF_ERROR(Flush(*f, &measured));
      if (!measured) continue;  // buffered: below the target by construction
      SKADE_ARROW_ASSIGN(int64_t pos, f->sink->Tell(), f->path);
      if (pos >= target_file_bytes) SKADE_RETURN_IF_ERROR(Close(key, *f));
    }
    return {};
  }

  // Writes the largest pending row groups early while they hold too much memory.
  Status Bound() {
    while (pending_total > kPendingBytes) {
      OpenFile* largest = nullptr;
      for (auto& [k, f] : open)
        if (!largest || f.pending_bytes > largest->pending_bytes) largest = &f;
      if (!largest || largest->pending_bytes == 0) break;
      bool measured;
      SKADE_RETURN_IF_ERROR(Flush(*largest, &measured));
    }
    return {};
  }
};

struct ParquetExport::Impl {
  std::string path;
  std::shared_ptr<arrow::Schema> schema;
  int64_t row_group_bytes = 0;
  std::shared_ptr<DataFileSink> sink;
  std::unique_ptr<ParquetFileWriter> writer;
  std::vector<std::shared_ptr<arrow::RecordBatch>> first;  // held until the encodings are picked
  int64_t first_rows = 0;
  int64_t group_bytes = 0;  // input bytes in the open row group

  // Opens the Parquet writer with encodings picked from the rows held, then writes them.
  Status Start() {
    SKADE_ASSIGN_OR_RETURN(auto sample, FirstRows(schema, first, path));
    TableMetadata defaults;  // no table: the table properties' defaults (zstd, level 1)
    SKADE_ARROW_ASSIGN(writer,
                       ParquetFileWriter::Open(*schema, DataWriter::pool(), sink, FileProps(defaults, 1 << 20, *sample),
                                               ParallelColumns()),
                       path);
    for (auto& b : std::exchange(first, {})) SKADE_RETURN_IF_ERROR(Put(b));
    return {};
  }

  Status Put(const std::shared_ptr<arrow::RecordBatch>& batch) {
    SKADE_ARROW_ASSIGN(int64_t bytes, arrow::util::ReferencedBufferSize(*batch), path);
    if (group_bytes > 0 && group_bytes + bytes > row_group_bytes) {
      SKADE_ARROW_RETURN(writer->NewBufferedRowGroup(), path);
      group_bytes = 0;
    }
    group_bytes += bytes;
    SKADE_ARROW_RETURN(writer->WriteRecordBatch(batch), path);
    return {};
  }
};

ParquetExport::ParquetExport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ParquetExport::~ParquetExport() = default;

Result<std::unique_ptr<ParquetExport>> ParquetExport::Open(const std::string& path,
                                                           std::shared_ptr<arrow::Schema> schema,
                                                           int64_t row_group_bytes) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->schema = std::move(schema);
  impl->row_group_bytes = row_group_bytes;
  SKADE_ARROW_ASSIGN(impl->sink, DataFileSink::Open(path), path);
  return std::unique_ptr<ParquetExport>(new ParquetExport(std::move(impl)));
}

Status ParquetExport::Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
  Impl& d = *impl_;
  if (d.writer) return d.Put(batch);
  d.first.push_back(batch);
  d.first_rows += batch->num_rows();
  return d.first_rows >= kPlainSample ? d.Start() : Status{};
}

Status ParquetExport::Close() {
  Impl& d = *impl_;
  if (!d.writer) SKADE_RETURN_IF_ERROR(d.Start());
  SKADE_ARROW_RETURN(d.writer->Close(), d.path);
  SKADE_ARROW_RETURN(d.sink->Finish(), d.path);
  SKADE_ARROW_RETURN(d.sink->Close(), d.path);
  return {};
}

DataWriter::DataWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DataWriter::~DataWriter() {
  // Unfinished files stay unreferenced; close them so no descriptor leaks.
  for (auto& [k, f] : impl_->open) {
    if (f.writer) (void)f.writer->Close();
    (void)f.sink->Close();
  }
}

Result<std::unique_ptr<DataWriter>> DataWriter::Make(const TableMetadata& metadata, bool row_lineage) {
  auto impl = std::make_unique<Impl>();
  impl->metadata = &metadata;
  impl->schema = metadata.schema();
  impl->spec = metadata.spec();
  SKADE_ASSIGN_OR_RETURN(TypePtr ptype, impl->spec.PartitionType(*impl->schema));
  for (size_t i = 0; i < ptype->fields.size(); ++i) {
    impl->partition_types.push_back(ptype->fields[i].type);
    impl->source_types.push_back(impl->schema->FindField(impl->spec.fields()[i].source_id)->type);
  }
  impl->arrow_schema = ToArrowSchema(row_lineage ? WithRowLineage(*impl->schema) : *impl->schema);
  impl->target_file_bytes = metadata.PropertyInt("write.target-file-size-bytes", 512LL << 20);
  if (impl->target_file_bytes <= 0) return InvalidArgument("write.target-file-size-bytes must be positive");
  impl->row_group_rows = metadata.PropertyInt("write.parquet.row-group-limit", 1 << 20);
  if (impl->row_group_rows <= 0) return InvalidArgument("write.parquet.row-group-limit must be positive");
  impl->props = WriterProps(metadata, impl->row_group_rows);
  impl->arrow_props = ParallelColumns();
  return std::unique_ptr<DataWriter>(new DataWriter(std::move(impl)));
}

Status DataWriter::Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
  Impl& d = *impl_;
  if (batch->num_rows() == 0) return {};
  // Rows per chunk so that one chunk is roughly the target file size in memory. A slice
  // counts only the bytes it references (scan batches are slices of whole row groups).
  auto referenced = arrow::util::ReferencedBufferSize(*batch);
  int64_t mem = referenced.ok() ? *referenced : arrow::util::TotalBufferSize(*batch);
  int64_t bytes_per_row = std::max<int64_t>(1, mem / batch->num_rows());
  int64_t group_rows = std::clamp<int64_t>(d.target_file_bytes / bytes_per_row, 1, d.row_group_rows);
  Status st;
  if (d.spec.unpartitioned()) {
    st = d.WriteTo("", {}, batch, group_rows, bytes_per_row);
  } else {
    // Group rows by partition tuple, keeping input order within a group.
    std::vector<std::shared_ptr<arrow::Array>> sources;
    for (const auto& f : d.spec.fields()) {
      auto col = ColumnForFieldId(*batch, *d.schema, f.source_id);
      if (!col) return Internal("partition source column " + std::to_string(f.source_id) + " missing");
      sources.push_back(col);
    }
    // Transforms run once per distinct source value (dictionary-encode the source),
    // not once per row; rows then group by small integer ids.
    InitArrowCompute();
    std::vector<std::vector<int32_t>> field_ids(sources.size());  // per field: row → partition value id
    std::vector<std::vector<Value>> field_values(sources.size());  // per field: id → partition value
    for (size_t i = 0; i < sources.size(); ++i) {
      const Type& src_type = *d.source_types[i];
      SKADE_ARROW_ASSIGN(auto encoded, arrow::compute::DictionaryEncode(sources[i]), "partitioning");
      auto dict_array = std::static_pointer_cast<arrow::DictionaryArray>(encoded.make_array());
      const auto& dict = *dict_array->dictionary();
      std::unordered_map<std::string, int32_t> id_of;  // partition value key → id
      std::vector<int32_t> dict_to_id(static_cast<size_t>(dict.length()));
      for (int64_t k = 0; k < dict.length(); ++k) {
        SKADE_ASSIGN_OR_RETURN(Value v, ValueAt(dict, k, src_type));
        SKADE_ASSIGN_OR_RETURN(Value p, d.spec.fields()[i].transform.Apply(src_type, v));
        std::string key = PartitionTupleKey(0, {p});
        auto [it, inserted] = id_of.try_emplace(key, static_cast<int32_t>(field_values[i].size()));
        if (inserted) field_values[i].push_back(std::move(p));
        dict_to_id[static_cast<size_t>(k)] = it->second;
      }
      // Nulls are not in the dictionary: they get their own id.
      int32_t null_id = -1;
      auto& ids = field_ids[i];
      ids.resize(static_cast<size_t>(batch->num_rows()));
      for (int64_t r = 0; r < batch->num_rows(); ++r) {
        if (dict_array->IsNull(r)) {
          if (null_id < 0) {
            SKADE_ASSIGN_OR_RETURN(Value p, d.spec.fields()[i].transform.Apply(src_type, Value{}));
            null_id = static_cast<int32_t>(field_values[i].size());
            field_values[i].push_back(std::move(p));
          }
          ids[static_cast<size_t>(r)] = null_id;
        } else {
          ids[static_cast<size_t>(r)] = dict_to_id[static_cast<size_t>(dict_array->GetValueIndex(r))];
        }
      }
    }
    // Each row's group: its combination of value ids, as a mixed-radix number indexing
    // a table when the combinations are few (the common case), else through a map.
    const int64_t rows = batch->num_rows();
    std::vector<std::vector<Value>> tuples;
    std::vector<std::string> keys;
    std::vector<int32_t> group_of_row(static_cast<size_t>(rows));
    auto group_for = [&](auto&& ids_at) {
      std::vector<Value> tuple;
      for (size_t i = 0; i < sources.size(); ++i) tuple.push_back(field_values[i][static_cast<size_t>(ids_at(i))]);
      keys.push_back(PartitionTupleKey(d.spec.spec_id(), tuple));
      tuples.push_back(std::move(tuple));
      return static_cast<int32_t>(tuples.size() - 1);
    };
    int64_t combos = 1;
    for (const auto& v : field_values) combos = std::min<int64_t>(combos * static_cast<int64_t>(v.size()), 1 << 21);
    if (combos < (1 << 20)) {
      std::vector<int32_t> slot(static_cast<size_t>(combos), -1);
      for (int64_t r = 0; r < rows; ++r) {
        int64_t code = 0;
        for (size_t i = 0; i < sources.size(); ++i)
          code = code * static_cast<int64_t>(field_values[i].size()) + field_ids[i][static_cast<size_t>(r)];
        int32_t& g = slot[static_cast<size_t>(code)];
        if (g < 0) g = group_for([&](size_t i) { return field_ids[i][static_cast<size_t>(r)]; });
        group_of_row[static_cast<size_t>(r)] = g;
      }
    } else {
      std::map<std::vector<int32_t>, int32_t> group_of;
      std::vector<int32_t> combo(sources.size());
      for (int64_t r = 0; r < rows; ++r) {
        for (size_t i = 0; i < sources.size(); ++i) combo[i] = field_ids[i][static_cast<size_t>(r)];
        auto it = group_of.find(combo);
        if (it == group_of.end()) it = group_of.emplace(combo, group_for([&](size_t i) { return combo[i]; })).first;
        group_of_row[static_cast<size_t>(r)] = it->second;
      }
    }
    // Each group's rows are gathered (input order kept) on the thread that encodes its
    // partition, so the copies run in parallel too, a slice at a time: the writer encodes
    // one while the next is gathered, and the copy of the whole input is never held.
    std::vector<int64_t> starts(tuples.size() + 1, 0);
    for (int32_t g : group_of_row) ++starts[static_cast<size_t>(g) + 1];
    for (size_t g = 1; g < starts.size(); ++g) starts[g] += starts[g - 1];
    SKADE_ARROW_ASSIGN(auto order_buf, arrow::AllocateBuffer(rows * static_cast<int64_t>(sizeof(int64_t))),
                       "partitioning");
    auto* order = reinterpret_cast<int64_t*>(order_buf->mutable_data());
    std::vector<int64_t> next(starts.begin(), starts.end() - 1);
    for (int64_t r = 0; r < rows; ++r) order[next[static_cast<size_t>(group_of_row[static_cast<size_t>(r)])]++] = r;
    auto order_array = std::make_shared<arrow::Int64Array>(rows, std::move(order_buf));
    InitArrowCompute();
    // Partitions are encoded concurrently (each thread its own partition's file).
    // The gathered slices come from the writer's pool, which keeps freed memory for a
    // second: each slice reuses the pages of one already encoded. From the default pool,
    // which returns them at once, every slice was fresh memory, and after another process
    // freed its memory (the bench's peer) a partitioned 1M append took 0.33 s, not 0.30 s.
    arrow::compute::ExecContext gather(d.pool);
    const auto unchecked = arrow::compute::TakeOptions::NoBoundsCheck();  // the batch's own row numbers
    st = RunConcurrently(tuples.size(), [&](size_t g) -> Status {
      if (tuples.size() == 1) return d.WriteTo(keys[g], tuples[g], batch, group_rows, bytes_per_row);
      constexpr int64_t kTakeRows = 64 * 1024;
      for (int64_t at = starts[g]; at < starts[g + 1]; at += kTakeRows) {
        auto indices = order_array->Slice(at, std::min(kTakeRows, starts[g + 1] - at));
        SKADE_ARROW_ASSIGN(auto taken, arrow::compute::Take(batch, indices, unchecked, &gather), "partitioning");
        SKADE_RETURN_IF_ERROR(d.WriteTo(keys[g], tuples[g], taken.record_batch(), group_rows, bytes_per_row));
      }
      return {};
    });
  }
  if (st) st = d.Bound();
  return st;
}

void DataWriter::Abort() {
  for (auto& [k, f] : impl_->open) {
    if (f.writer) (void)f.writer->Close();
    (void)f.sink->Close();
    std::remove(f.path.c_str());
  }
  impl_->open.clear();
  for (const auto& f : impl_->done) std::remove(LocalPath(f.file_path).c_str());
  impl_->done.clear();
}

Result<std::vector<DataFile>> DataWriter::Finish() {
  // The last row groups of all open files are encoded concurrently.
  std::vector<std::pair<std::string, Impl::OpenFile*>> files;
  for (auto& [k, f] : impl_->open) files.emplace_back(k, &f);
  SKADE_RETURN_IF_ERROR(RunConcurrently(files.size(), [&](size_t i) { return impl_->Close(files[i].first, *files[i].second); }));
  // Files in the order they were opened, whichever thread closed them first.
  std::sort(impl_->done.begin(), impl_->done.end(),
            [](const DataFile& a, const DataFile& b) { return a.file_path < b.file_path; });
  // The new files' names on disk, a sync per folder (their contents were synced on close).
  std::set<std::string> folders;
  for (const auto& f : impl_->done) folders.insert(std::filesystem::path(LocalPath(f.file_path)).parent_path().string());
  for (const auto& folder : folders) SKADE_RETURN_IF_ERROR(SyncFolder(folder));
  return std::move(impl_->done);
}

int64_t DataWriter::rows_written() const {
  std::lock_guard lock(impl_->mu);
  return impl_->rows_written;
}

// The encoders' pool. Their page and column buffers come and go per
// page; the default pool (mimalloc) hands freed memory back to the kernel within
// milliseconds, which zeroes it again on the next touch (perf: clear_page_erms was up to
// 40% of a compaction). jemalloc, in the wheel beside it, keeps freed memory for a
// second (Arrow's decay setting): about 20% less CPU per write, measured.
arrow::MemoryPool* DataWriter::pool() {
  static arrow::MemoryPool* pool = [] {
    arrow::MemoryPool* p = nullptr;
    return arrow::jemalloc_memory_pool(&p).ok() ? p : arrow::default_memory_pool();
  }();
  return pool;
}

}  // namespace skade
