// Iceberg schema ↔ Arrow schema, carrying field ids as "PARQUET:field_id" metadata.
#pragma once

#include <memory>

#include "skade/common/result.h"
#include "skade/format/types.h"

namespace arrow {
class Array;
class DataType;
class Field;
class Schema;
}  // namespace arrow

namespace skade {

inline constexpr const char* kFieldIdKey = "PARQUET:field_id";

/// Arrow type of an Iceberg type (timestamptz → timestamp(us, "UTC"), uuid →
/// fixed_size_binary(16), list elements named "element", map key/value ids kept).
std::shared_ptr<arrow::DataType> ToArrowType(const Type& type);
std::shared_ptr<arrow::Field> ToArrowField(const NestedField& field);
std::shared_ptr<arrow::Schema> ToArrowSchema(const Schema& schema);
/// The schema restricted to the given top-level field ids (in that order).
std::shared_ptr<arrow::Schema> ToArrowSchema(const Schema& schema, const std::vector<int>& ids);

/// Field id stored in an Arrow field's metadata, or -1.
int FieldIdOf(const arrow::Field& field);

/// The child of an Arrow struct, list or map type holding `target`: by field id, else
/// (a child without one) by name; -1 when there is none.
int FindChild(const arrow::DataType& type, const NestedField& target);

/// An array of a table field (its Arrow type, ids kept) cut down to `want`, the same
/// field with fewer struct children (PruneField).
std::shared_ptr<arrow::Array> PruneArray(const std::shared_ptr<arrow::Array>& array, const NestedField& want);

/// An Iceberg type for an Arrow type (for files written without a table schema).
/// Errors: kUnsupported naming the Arrow type.
Result<TypePtr> FromArrowType(const arrow::DataType& type, int* next_id);
/// A schema for an Arrow schema: top-level ids 1..n in order, nested ids after them,
/// required where the field is not nullable. Errors: kUnsupported naming the column.
Result<std::shared_ptr<const Schema>> FromArrowSchema(const arrow::Schema& schema);

}  // namespace skade
