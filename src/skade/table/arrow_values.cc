#include "skade/table/arrow_values.h"

#include <arrow/api.h>

#include "skade/table/arrow_schema.h"

namespace skade {

Result<Value> ValueAt(const arrow::Array& a, int64_t i, const Type& type) {
  if (a.IsNull(i)) return Value{};
  auto bad = [&]() {
    return InvalidArgument("Arrow " + a.type()->ToString() + " cannot be read as " + type.ToString());
  };
  switch (a.type_id()) {
    case arrow::Type::BOOL: return Value{static_cast<const arrow::BooleanArray&>(a).Value(i)};
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
        auto unit = static_cast<const arrow::TimestampType&>(*a.type()).unit();
        if (unit == arrow::TimeUnit::SECOND) v *= 1000000;
        else if (unit == arrow::TimeUnit::MILLI) v *= 1000;
        else if (unit == arrow::TimeUnit::NANO) v /= 1000;
      }
      return Value{v};
    }
    case arrow::Type::FLOAT: return Value{static_cast<const arrow::FloatArray&>(a).Value(i)};
    case arrow::Type::DOUBLE: return Value{static_cast<const arrow::DoubleArray&>(a).Value(i)};
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

std::shared_ptr<arrow::Array> ColumnForFieldId(const arrow::RecordBatch& batch, const Schema& schema,
                                               int field_id) {
  // Walk down from the top-level field holding the id through struct children.
  for (int c = 0; c < batch.num_columns(); ++c) {
    const auto& f = batch.schema()->field(c);
    std::shared_ptr<arrow::Array> arr = batch.column(c);
    std::shared_ptr<arrow::Field> field = f;
    while (true) {
      if (FieldIdOf(*field) == field_id) return arr;
      if (arr->type_id() != arrow::Type::STRUCT) break;
      auto sa = std::static_pointer_cast<arrow::StructArray>(arr);
      bool descended = false;
      for (int k = 0; k < sa->num_fields(); ++k) {
        const auto& child = sa->struct_type()->field(k);
        std::string path = schema.PathOf(field_id);
        // Only descend into a child on the path to field_id.
        if (FieldIdOf(*child) == field_id ||
            (child->type()->id() == arrow::Type::STRUCT && !path.empty())) {
          auto flat = sa->GetFlattenedField(k);
          if (!flat.ok()) return nullptr;
          if (FieldIdOf(*child) == field_id) return *flat;
          // Check whether the field id lies below this child.
          std::function<bool(const arrow::Field&)> below = [&](const arrow::Field& fl) {
            if (FieldIdOf(fl) == field_id) return true;
            for (const auto& ch : fl.type()->fields())
              if (below(*ch)) return true;
            return false;
          };
          if (below(*child)) {
            arr = *flat;
            field = child;
            descended = true;
            break;
          }
        }
      }
      if (!descended) break;
    }
  }
  return nullptr;
}

}  // namespace skade
