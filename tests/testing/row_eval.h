// A plain reference evaluator of bound filters over test rows (the oracle of the
// model-based tests): SQL three-valued logic, top-level primitive columns.
#pragma once

#include <optional>
#include <string>

#include "skade/expr/expression.h"
#include "testing/random_data.h"

namespace skade::testing {

std::optional<bool> EvalRow(const expr::Expr& e, const Schema& schema, const Row& row);

/// A random filter over the schema's top-level primitive columns, as text the
/// expression parser accepts (literals drawn from `data`'s value domain).
std::string RandomFilter(RandomData& data, const Schema& schema, int depth);

}  // namespace skade::testing
