// Moving single values between Arrow arrays and skade Values.
#pragma once

#include <cstdint>
#include <memory>

#include "skade/common/result.h"
#include "skade/format/types.h"
#include "skade/format/value.h"

namespace arrow {
class Array;
class Field;
class RecordBatch;
}  // namespace arrow

namespace skade {

/// The value at row `i` of a primitive array, read as Iceberg type `type`.
/// Errors: kInvalidArgument when the array's type does not fit.
Result<Value> ValueAt(const arrow::Array& array, int64_t i, const Type& type);

/// Whether `column`, a top-level field of a batch, is one ColumnForFieldId may read
/// `field_id` from: the field itself or the struct holding it (by id, else by name).
bool HoldsFieldId(const arrow::Field& column, const Schema& schema, int field_id);

/// The column for a (possibly struct-nested) field id in a batch whose fields carry
/// field ids; nullptr when absent.
std::shared_ptr<arrow::Array> ColumnForFieldId(const arrow::RecordBatch& batch, const Schema& schema,
                                               int field_id);

}  // namespace skade
