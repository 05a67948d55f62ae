#include "testing/random_data.h"

#include <arrow/api.h>

#include <algorithm>
#include <cstring>

#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"

namespace skade::testing {

std::string CellToString(const Cell& c, const Type& type) {
  if (c.null) return "null";
  switch (type.id) {
    case TypeId::kStruct: {
      std::string s = "{";
      for (size_t i = 0; i < c.children.size(); ++i)
        s += (i ? "," : "") + CellToString(c.children[i], *type.fields[i].type);
      return s + "}";
    }
    case TypeId::kList: {
      std::string s = "[";
      for (size_t i = 0; i < c.children.size(); ++i)
        s += (i ? "," : "") + CellToString(c.children[i], *type.element().type);
      return s + "]";
    }
    case TypeId::kMap: {
      std::string s = "{";
      for (size_t i = 0; i + 1 < c.children.size(); i += 2)
        s += (i ? "," : "") + CellToString(c.children[i], *type.key().type) + ":" +
             CellToString(c.children[i + 1], *type.value().type);
      return s + "}";
    }
    default:
      return FormatValue(type, c.value);
  }
}

std::string RowToString(const Row& row, const std::vector<NestedField>& fields) {
  std::string s = "(";
  for (size_t i = 0; i < row.size(); ++i) s += (i ? ", " : "") + CellToString(row[i], *fields[i].type);
  return s + ")";
}

TypePtr RandomData::PrimitiveType() {
  switch (Uniform(0, 13)) {
    case 0: return Type::Primitive(TypeId::kBoolean);
    case 1: return Type::Primitive(TypeId::kInt);
    case 2: return Type::Primitive(TypeId::kLong);
    case 3: return Type::Primitive(TypeId::kFloat);
    case 4: return Type::Primitive(TypeId::kDouble);
    case 5: return Type::Decimal(Uniform(3, 20), Uniform(0, 2));
    case 6: return Type::Primitive(TypeId::kDate);
    case 7: return Type::Primitive(TypeId::kTime);
    case 8: return Type::Primitive(TypeId::kTimestamp);
    case 9: return Type::Primitive(TypeId::kTimestampTz);
    case 10: return Type::Primitive(TypeId::kString);
    case 11: return Type::Primitive(TypeId::kUuid);
    case 12: return Type::Primitive(TypeId::kBinary);
    default: return Type::Fixed(Uniform(1, 8));
  }
}

Schema RandomData::RandomSchema(int n, bool nested) {
  int next_id = n + 1;
  std::vector<NestedField> fields;
  for (int i = 0; i < n; ++i) {
    NestedField f;
    f.id = i + 1;
    f.name = "c" + std::to_string(i);
    f.required = Chance(0.2);
    int kind = nested ? Uniform(0, 9) : 0;
    if (kind == 7) {
      NestedField a{next_id++, "a", false, PrimitiveType(), ""};
      NestedField b{next_id++, "b", Chance(0.3), PrimitiveType(), ""};
      f.type = Type::Struct({a, b});
    } else if (kind == 8) {
      f.type = Type::List(NestedField{next_id++, "element", Chance(0.3), PrimitiveType(), ""});
    } else if (kind == 9) {
      auto key = Chance(0.5) ? Type::Primitive(TypeId::kString) : Type::Primitive(TypeId::kInt);
      NestedField k{next_id++, "key", true, key, ""};
      NestedField v{next_id++, "value", false, PrimitiveType(), ""};
      f.type = Type::Map(k, v);
    } else {
      f.type = PrimitiveType();
    }
    fields.push_back(std::move(f));
  }
  return Schema(0, std::move(fields));
}

Value RandomData::RandomValue(const Type& t) {
  int k = Uniform(-6, 6);
  switch (t.id) {
    case TypeId::kBoolean: return Value{Chance(0.5)};
    case TypeId::kInt: return Value{static_cast<int32_t>(k * 7)};
    case TypeId::kLong: return Value{static_cast<int64_t>(k) * 1000003};
    case TypeId::kFloat: return Value{static_cast<float>(k) * 0.5f};
    case TypeId::kDouble: return Value{static_cast<double>(k) * 1.25};
    case TypeId::kDecimal: {
      __int128 max = 1;
      for (int i = 0; i < std::min(t.precision, 6); ++i) max *= 10;
      return Value{Decimal{static_cast<__int128>(k) * (max / 13)}};
    }
    case TypeId::kDate: return Value{static_cast<int32_t>(19000 + k * 40)};
    case TypeId::kTime: return Value{static_cast<int64_t>(43200 + k * 3000) * 1000000};
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return Value{static_cast<int64_t>(1700000000 + k * 5000000LL) * 1000000 + Uniform(0, 999999)};
    case TypeId::kString: {
      static const char* words[] = {"", "a", "ab", "b", "SE", "NO", "över", "zeta", "日本",
                                    "a longer string that exceeds sixteen characters", "Z"};
      return Value{std::string(words[Uniform(0, 10)])};
    }
    case TypeId::kUuid: {
      std::string b(16, '\0');
      b[0] = static_cast<char>(Uniform(0, 3));
      b[15] = static_cast<char>(Uniform(0, 255));
      return Value{b};
    }
    case TypeId::kBinary: {
      std::string b(static_cast<size_t>(Uniform(0, 5)), '\0');
      for (auto& c : b) c = static_cast<char>(Uniform(0, 3) * 80);
      return Value{b};
    }
    case TypeId::kFixed: {
      std::string b(static_cast<size_t>(t.length), '\0');
      b[0] = static_cast<char>(Uniform(0, 4));
      return Value{b};
    }
    default: return Value{};
  }
}

Cell RandomData::RandomCell(const NestedField& f, double null_chance) {
  Cell c;
  if (!f.required && Chance(null_chance)) {
    c.null = true;
    return c;
  }
  const Type& t = *f.type;
  switch (t.id) {
    case TypeId::kStruct:
      for (const auto& child : t.fields) c.children.push_back(RandomCell(child, null_chance));
      break;
    case TypeId::kList: {
      int n = Uniform(0, 3);
      for (int i = 0; i < n; ++i) c.children.push_back(RandomCell(t.element(), null_chance));
      break;
    }
    case TypeId::kMap: {
      int n = Uniform(0, 3);
      std::vector<std::string> seen;
      for (int i = 0; i < n; ++i) {
        Cell key = RandomCell(t.key(), 0);
        std::string ks = CellToString(key, *t.key().type);
        if (std::find(seen.begin(), seen.end(), ks) != seen.end()) continue;
        seen.push_back(ks);
        c.children.push_back(key);
        c.children.push_back(RandomCell(t.value(), null_chance));
      }
      break;
    }
    default:
      c.value = RandomValue(t);
  }
  return c;
}

Row RandomData::RandomRow(const Schema& schema, double null_chance) {
  Row r;
  for (const auto& f : schema.fields()) r.push_back(RandomCell(f, null_chance));
  return r;
}

namespace {

void Check(const arrow::Status& st) {
  if (!st.ok()) throw std::runtime_error(st.ToString());
}

void AppendCell(arrow::ArrayBuilder* b, const Cell& c, const Type& t) {
  if (c.null) {
    Check(b->AppendNull());
    return;
  }
  switch (t.id) {
    case TypeId::kBoolean: Check(static_cast<arrow::BooleanBuilder*>(b)->Append(std::get<bool>(c.value))); break;
    case TypeId::kInt: Check(static_cast<arrow::Int32Builder*>(b)->Append(std::get<int32_t>(c.value))); break;
    case TypeId::kDate: Check(static_cast<arrow::Date32Builder*>(b)->Append(std::get<int32_t>(c.value))); break;
    case TypeId::kLong: Check(static_cast<arrow::Int64Builder*>(b)->Append(std::get<int64_t>(c.value))); break;
    case TypeId::kTime: Check(static_cast<arrow::Time64Builder*>(b)->Append(std::get<int64_t>(c.value))); break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      Check(static_cast<arrow::TimestampBuilder*>(b)->Append(std::get<int64_t>(c.value)));
      break;
    case TypeId::kFloat: Check(static_cast<arrow::FloatBuilder*>(b)->Append(std::get<float>(c.value))); break;
    case TypeId::kDouble: Check(static_cast<arrow::DoubleBuilder*>(b)->Append(std::get<double>(c.value))); break;
    case TypeId::kDecimal: {
      __int128 v = std::get<Decimal>(c.value).unscaled;
      arrow::Decimal128 d(static_cast<int64_t>(v >> 64), static_cast<uint64_t>(v));
      Check(static_cast<arrow::Decimal128Builder*>(b)->Append(d));
      break;
    }
    case TypeId::kString: Check(static_cast<arrow::StringBuilder*>(b)->Append(std::get<std::string>(c.value))); break;
    case TypeId::kBinary: Check(static_cast<arrow::BinaryBuilder*>(b)->Append(std::get<std::string>(c.value))); break;
    case TypeId::kUuid:
    case TypeId::kFixed:
      Check(static_cast<arrow::FixedSizeBinaryBuilder*>(b)->Append(std::get<std::string>(c.value)));
      break;
    case TypeId::kStruct: {
      auto* sb = static_cast<arrow::StructBuilder*>(b);
      Check(sb->Append());
      for (size_t i = 0; i < t.fields.size(); ++i) AppendCell(sb->field_builder(static_cast<int>(i)), c.children[i], *t.fields[i].type);
      break;
    }
    case TypeId::kList: {
      auto* lb = static_cast<arrow::ListBuilder*>(b);
      Check(lb->Append());
      for (const auto& e : c.children) AppendCell(lb->value_builder(), e, *t.element().type);
      break;
    }
    case TypeId::kMap: {
      auto* mb = static_cast<arrow::MapBuilder*>(b);
      Check(mb->Append());
      for (size_t i = 0; i + 1 < c.children.size(); i += 2) {
        AppendCell(mb->key_builder(), c.children[i], *t.key().type);
        AppendCell(mb->item_builder(), c.children[i + 1], *t.value().type);
      }
      break;
    }
  }
}

Cell ReadCell(const arrow::Array& a, int64_t i, const Type& t) {
  Cell c;
  if (a.IsNull(i)) {
    c.null = true;
    return c;
  }
  switch (t.id) {
    case TypeId::kStruct: {
      const auto& sa = static_cast<const arrow::StructArray&>(a);
      for (int k = 0; k < sa.num_fields(); ++k) c.children.push_back(ReadCell(*sa.field(k), i, *t.fields[k].type));
      break;
    }
    case TypeId::kList: {
      const auto& la = static_cast<const arrow::ListArray&>(a);
      for (int64_t k = la.value_offset(i); k < la.value_offset(i + 1); ++k)
        c.children.push_back(ReadCell(*la.values(), k, *t.element().type));
      break;
    }
    case TypeId::kMap: {
      const auto& ma = static_cast<const arrow::MapArray&>(a);
      for (int64_t k = ma.value_offset(i); k < ma.value_offset(i + 1); ++k) {
        c.children.push_back(ReadCell(*ma.keys(), k, *t.key().type));
        c.children.push_back(ReadCell(*ma.items(), k, *t.value().type));
      }
      break;
    }
    default: {
      auto v = ValueAt(a, i, t);
      if (!v) throw std::runtime_error(v.error().message);
      c.value = *v;
    }
  }
  return c;
}

}  // namespace

std::shared_ptr<arrow::Table> ToArrow(const Schema& schema, const std::vector<Row>& rows) {
  auto arrow_schema = ToArrowSchema(schema);
  arrow::ArrayVector columns;
  for (size_t c = 0; c < schema.fields().size(); ++c) {
    auto builder = arrow::MakeBuilder(arrow_schema->field(static_cast<int>(c))->type()).ValueOrDie();
    for (const auto& r : rows) AppendCell(builder.get(), r[c], *schema.fields()[c].type);
    std::shared_ptr<arrow::Array> arr;
    Check(builder->Finish(&arr));
    columns.push_back(arr);
  }
  return arrow::Table::Make(arrow_schema, columns, static_cast<int64_t>(rows.size()));
}

std::vector<Row> FromArrow(const arrow::Table& table, const std::vector<NestedField>& fields) {
  auto combined = table.CombineChunksToBatch().ValueOrDie();
  std::vector<Row> rows(static_cast<size_t>(combined->num_rows()));
  for (int c = 0; c < combined->num_columns(); ++c)
    for (int64_t r = 0; r < combined->num_rows(); ++r)
      rows[r].push_back(ReadCell(*combined->column(c), r, *fields[c].type));
  return rows;
}

}  // namespace skade::testing
