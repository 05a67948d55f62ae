// Exact evaluation of a bound expression on Arrow record batches.
#pragma once

#include <memory>

#include "skade/common/result.h"
#include "skade/expr/expression.h"

namespace arrow {
class RecordBatch;
class Array;
}  // namespace arrow

namespace skade::expr {

/// Filters `batch` to the rows where `bound` is true (SQL three-valued logic: a
/// comparison with null is unknown and unknown rows are dropped; `not unknown` is
/// unknown). Columns are found by field id through the Arrow field metadata key
/// "PARQUET:field_id" (nested fields through their struct parents), falling back to
/// the schema path name. Dictionary-encoded columns stay dictionaries: a part of the
/// filter over one such column is evaluated once per dictionary entry and mapped
/// through the indices. Errors: kInvalidArgument if a referenced column is absent,
/// kCorrupt if a dictionary index is out of range.
Result<std::shared_ptr<arrow::RecordBatch>> FilterBatch(
    const Expr& bound, const Schema& schema, const std::shared_ptr<arrow::RecordBatch>& batch);

/// The boolean selection (true = keep) for `batch`, nulls already turned to false.
Result<std::shared_ptr<arrow::Array>> EvaluateBatch(
    const Expr& bound, const Schema& schema, const std::shared_ptr<arrow::RecordBatch>& batch);

}  // namespace skade::expr
