#include "skade/table/arrow_values.h"

#include <arrow/api.h>

#include "skade/common/floor_div.h"
#include "skade/table/arrow_schema.h"

namespace skade {

Result<Value> ValueAt(const arrow::Array& a, int64_t i, const Type& type) {
  if (a.IsNull(i)) return Value{};
  auto bad = [&]() {
    return InvalidArgument("Arrow " + a.type()->ToString() + " cannot be read as " +
                           type.ToString());
  };
  switch (a.type_id()) {
    case arrow::Type::BOOL:
      return Value{static_cast<const arrow::BooleanArray&>(a).Value(i)};
    case arrow::Type::INT32:
    case arrow::Type::DATE32: {
      int32_t v = a.data()->GetValues<int32_t>(1)[i];  // int32 and date32 share the layout
      if (type.id == TypeId::kLong) return Value{static_cast<int64_t>(v)};
      return Value{v};
    }
    case arrow::Type::INT64:
    case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP: {
      int64_t v = a.data()->GetValues<int64_t>(1)[i];  // int64, time64, timestamp alike
      if (a.type_id() == arrow::Type::TIMESTAMP) {
        // In the column's unit: nanoseconds for timestamp_ns, else microseconds.
        auto unit = static_cast<const arrow::TimestampType&>(*a.type()).unit();
        const int64_t have = unit == arrow::TimeUnit::SECOND  ? 1
                             : unit == arrow::TimeUnit::MILLI ? 1'000
                             : unit == arrow::TimeUnit::MICRO ? 1'000'000
                                                              : 1'000'000'000;
        const int64_t want = IsNanoTimestamp(type.id) ? 1'000'000'000 : 1'000'000;
        if (have < want) v *= want / have;
        if (have > want) v = FloorDiv(v, have / want);
      }
      return Value{v};
    }
    case arrow::Type::FLOAT:
      return Value{static_cast<const arrow::FloatArray&>(a).Value(i)};
    case arrow::Type::DOUBLE:
      return Value{static_cast<const arrow::DoubleArray&>(a).Value(i)};
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return Value{std::string(static_cast<const arrow::BinaryArray&>(a).GetView(i))};
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return Value{std::string(static_cast<const arrow::LargeBinaryArray&>(a).GetView(i))};
    case arrow::Type::FIXED_SIZE_BINARY:
      return Value{std::string(static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(i))};
    case arrow::Type::DECIMAL128: {
      arrow::Decimal128 d(static_cast<const arrow::Decimal128Array&>(a).GetValue(i));
      __int128 v = (static_cast<__int128>(d.high_bits()) << 64) | d.low_bits();
      return Value{Decimal{v}};
    }
    default:
      return bad();
  }
}

namespace {

// The fields from the top level down to `id`, through structs only.
bool PathTo(const std::vector<NestedField>& fields, int id, std::vector<const NestedField*>* path) {
  for (const auto& f : fields) {
    path->push_back(&f);
    if (f.id == id) return true;
    if (f.type->id == TypeId::kStruct && PathTo(f.type->fields, id, path)) return true;
    path->pop_back();
  }
  return false;
}

// Whether an Arrow field carries `want` by name (a file written without field ids).
bool NamedAs(const arrow::Field& field, const NestedField& want) {
  return FieldIdOf(field) < 0 && field.name() == want.name;
}

// The index among `fields` of the Arrow field carrying `want` (by id, else name).
int IndexOf(const arrow::FieldVector& fields, const NestedField& want) {
  for (size_t i = 0; i < fields.size(); ++i)
    if (FieldIdOf(*fields[i]) == want.id) return static_cast<int>(i);
  for (size_t i = 0; i < fields.size(); ++i)
    if (NamedAs(*fields[i], want)) return static_cast<int>(i);
  return -1;
}

}  // namespace

bool HoldsFieldId(const arrow::Field& column, const Schema& schema, int field_id) {
  std::vector<const NestedField*> path;
  if (!PathTo(schema.fields(), field_id, &path)) return false;
  return FieldIdOf(column) == path[0]->id || NamedAs(column, *path[0]);
}

std::shared_ptr<arrow::Array> ColumnForFieldId(const arrow::RecordBatch& batch,
                                               const Schema& schema, int field_id) {
  std::vector<const NestedField*> path;
  if (!PathTo(schema.fields(), field_id, &path)) return nullptr;
  int top = IndexOf(batch.schema()->fields(), *path[0]);
  if (top < 0) return nullptr;
  std::shared_ptr<arrow::Array> arr = batch.column(top);
  for (size_t k = 1; k < path.size(); ++k) {
    if (arr->type_id() != arrow::Type::STRUCT) return nullptr;
    auto sa = std::static_pointer_cast<arrow::StructArray>(arr);
    int child = IndexOf(sa->struct_type()->fields(), *path[k]);
    if (child < 0) return nullptr;
    auto flat = sa->GetFlattenedField(child);  // the parent's nulls apply to the child
    if (!flat.ok()) return nullptr;
    arr = *flat;
  }
  return arr;
}

}  // namespace skade
