#include "skade/table/arrow_schema.h"

#include <arrow/array.h>
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

namespace skade {

std::shared_ptr<arrow::DataType> ToArrowType(const Type& t) {
  switch (t.id) {
    case TypeId::kBoolean: return arrow::boolean();
    case TypeId::kInt: return arrow::int32();
    case TypeId::kLong: return arrow::int64();
    case TypeId::kFloat: return arrow::float32();
    case TypeId::kDouble: return arrow::float64();
    case TypeId::kDecimal: return arrow::decimal128(t.precision, t.scale);
    case TypeId::kDate: return arrow::date32();
    case TypeId::kTime: return arrow::time64(arrow::TimeUnit::MICRO);
    case TypeId::kTimestamp: return arrow::timestamp(arrow::TimeUnit::MICRO);
    case TypeId::kTimestampTz: return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case TypeId::kTimestampNs: return arrow::timestamp(arrow::TimeUnit::NANO);
    case TypeId::kTimestampTzNs: return arrow::timestamp(arrow::TimeUnit::NANO, "UTC");
    case TypeId::kString: return arrow::utf8();
    case TypeId::kUuid: return arrow::fixed_size_binary(16);
    case TypeId::kBinary: return arrow::binary();
    case TypeId::kFixed: return arrow::fixed_size_binary(t.length);
    case TypeId::kStruct: {
      arrow::FieldVector children;
      for (const auto& f : t.fields) children.push_back(ToArrowField(f));
      return arrow::struct_(children);
    }
    case TypeId::kList: return arrow::list(ToArrowField(t.element()));
    case TypeId::kMap: {
      auto key = ToArrowField(t.key());
      auto value = ToArrowField(t.value());
      return std::make_shared<arrow::MapType>(key, value);
    }
  }
  return arrow::null();
}

std::shared_ptr<arrow::Field> ToArrowField(const NestedField& f) {
  auto md = arrow::key_value_metadata({kFieldIdKey}, {std::to_string(f.id)});
  return arrow::field(f.name, ToArrowType(*f.type), !f.required, md);
}

std::shared_ptr<arrow::Schema> ToArrowSchema(const Schema& schema) {
  arrow::FieldVector fields;
  for (const auto& f : schema.fields()) fields.push_back(ToArrowField(f));
  return arrow::schema(fields);
}

std::shared_ptr<arrow::Schema> ToArrowSchema(const Schema& schema, const std::vector<int>& ids) {
  arrow::FieldVector fields;
  for (int id : ids)
    for (const auto& f : schema.fields())
      if (f.id == id) fields.push_back(ToArrowField(f));
  return arrow::schema(fields);
}

int FieldIdOf(const arrow::Field& field) {
  const auto& md = field.metadata();
  if (!md) return -1;
  int idx = md->FindKey(kFieldIdKey);
  if (idx < 0) return -1;
  try {
    return std::stoi(md->value(idx));
  } catch (...) {
    return -1;
  }
}

int FindChild(const arrow::DataType& type, const NestedField& target) {
  const auto& fields = type.fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (FieldIdOf(*fields[i]) == target.id) return static_cast<int>(i);
  for (size_t i = 0; i < fields.size(); ++i)
    if (FieldIdOf(*fields[i]) < 0 && fields[i]->name() == target.name) return static_cast<int>(i);
  return -1;
}

std::shared_ptr<arrow::Array> PruneArray(const std::shared_ptr<arrow::Array>& array, const NestedField& want) {
  if (want.type->id != TypeId::kStruct || array->type_id() != arrow::Type::STRUCT) return array;
  const auto& data = array->data();
  arrow::ArrayVector children;
  for (const auto& child : want.type->fields) {
    const int k = FindChild(*array->type(), child);
    children.push_back(PruneArray(arrow::MakeArray(data->child_data[static_cast<size_t>(k)]), child));
  }
  return std::make_shared<arrow::StructArray>(ToArrowType(*want.type), data->length, children, data->buffers[0],
                                              data->null_count, data->offset);
}

Result<TypePtr> FromArrowType(const arrow::DataType& t, int* next_id) {
  switch (t.id()) {
    case arrow::Type::BOOL: return Type::Primitive(TypeId::kBoolean);
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16: return Type::Primitive(TypeId::kInt);
    case arrow::Type::INT64:
    case arrow::Type::UINT32: return Type::Primitive(TypeId::kLong);
    case arrow::Type::FLOAT:
    case arrow::Type::HALF_FLOAT: return Type::Primitive(TypeId::kFloat);
    case arrow::Type::DOUBLE: return Type::Primitive(TypeId::kDouble);
    case arrow::Type::DECIMAL128: {
      const auto& d = static_cast<const arrow::Decimal128Type&>(t);
      return Type::Decimal(d.precision(), d.scale());
    }
    case arrow::Type::DATE32:
    case arrow::Type::DATE64: return Type::Primitive(TypeId::kDate);
    case arrow::Type::TIME32:
    case arrow::Type::TIME64: return Type::Primitive(TypeId::kTime);
    case arrow::Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(t);
      return Type::Primitive(ts.timezone().empty() ? TypeId::kTimestamp : TypeId::kTimestampTz);
    }
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW: return Type::Primitive(TypeId::kString);
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW: return Type::Primitive(TypeId::kBinary);
    case arrow::Type::FIXED_SIZE_BINARY:
      return Type::Fixed(static_cast<const arrow::FixedSizeBinaryType&>(t).byte_width());
    case arrow::Type::STRUCT: {
      std::vector<NestedField> fields;
      for (const auto& c : t.fields()) {
        NestedField f{(*next_id)++, c->name(), !c->nullable(), nullptr, ""};
        SKADE_ASSIGN_OR_RETURN(f.type, FromArrowType(*c->type(), next_id));
        fields.push_back(std::move(f));
      }
      return Type::Struct(std::move(fields));
    }
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: {
      const auto& vf = t.field(0);
      NestedField e{(*next_id)++, "element", !vf->nullable(), nullptr, ""};
      SKADE_ASSIGN_OR_RETURN(e.type, FromArrowType(*vf->type(), next_id));
      return Type::List(std::move(e));
    }
    case arrow::Type::MAP: {
      const auto& m = static_cast<const arrow::MapType&>(t);
      NestedField k{(*next_id)++, "key", true, nullptr, ""};
      NestedField v{(*next_id)++, "value", !m.item_field()->nullable(), nullptr, ""};
      SKADE_ASSIGN_OR_RETURN(k.type, FromArrowType(*m.key_type(), next_id));
      SKADE_ASSIGN_OR_RETURN(v.type, FromArrowType(*m.item_type(), next_id));
      return Type::Map(std::move(k), std::move(v));
    }
    default:
      return Unsupported("Arrow type " + t.ToString() + " has no Iceberg equivalent");
  }
}

Result<std::shared_ptr<const Schema>> FromArrowSchema(const arrow::Schema& schema) {
  std::vector<NestedField> fields;
  int next_id = schema.num_fields() + 1;
  for (int i = 0; i < schema.num_fields(); ++i) {
    const auto& f = schema.field(i);
    auto type = FromArrowType(*f->type(), &next_id);
    if (!type) return std::unexpected(type.error().WithContext("column " + f->name()));
    fields.push_back(NestedField{i + 1, f->name(), !f->nullable(), *type, ""});
  }
  return std::make_shared<const Schema>(0, std::move(fields));
}

}  // namespace skade
