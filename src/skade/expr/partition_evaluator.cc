// Evaluation of projected partition filters: exactly on one partition tuple, and
// inclusively on a manifest's partition summaries (Iceberg's ManifestEvaluator).
#include "skade/expr/expression.h"
#include "skade/expr/expression_internal.h"

namespace skade::expr {
namespace {

// Index of a partition field id in spec order, or -1.
int FieldIndex(const PartitionSpec& spec, int field_id) {
  const auto& fields = spec.fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].field_id == field_id) return static_cast<int>(i);
  return -1;
}

// Two-valued evaluation of one predicate: comparisons with null are false. Callers push
// NOT down first so that `not (x = 1)` on a null stays false.
bool EvaluatePredicate(Op op, const Value& v, const std::vector<Value>& literals) {
  if (op == Op::kIsNull) return IsNull(v);
  if (op == Op::kNotNull) return !IsNull(v);
  if (op == Op::kIsNaN) return internal::IsNaN(v);
  if (op == Op::kNotNaN) return !internal::IsNaN(v);
  if (IsNull(v)) return false;
  const bool starts = op == Op::kStartsWith || op == Op::kNotStartsWith;
  if (starts || op == Op::kLike || op == Op::kNotLike) {
    const auto* s = std::get_if<std::string>(&v);
    const auto* text = literals.empty() ? nullptr : std::get_if<std::string>(&literals[0]);
    if (!s || !text) return true;
    const bool match = starts ? s->starts_with(*text) : internal::LikeMatches(*text, *s);
    return match == (op == Op::kStartsWith || op == Op::kLike);
  }
  if (op == Op::kIn || op == Op::kNotIn) {
    bool found = false;
    for (const auto& l : literals)
      if (internal::ComparePredicateValues(v, l) == 0) {
        found = true;
        break;
      }
    return found == (op == Op::kIn);
  }
  if (literals.empty()) return true;
  int c = internal::ComparePredicateValues(v, literals[0]);
  switch (op) {
    case Op::kEq:
      return c == 0;
    case Op::kNotEq:
      return c != 0;
    case Op::kLt:
      return c < 0;
    case Op::kLtEq:
      return c <= 0;
    case Op::kGt:
      return c > 0;
    case Op::kGtEq:
      return c >= 0;
    default:
      return true;
  }
}

}  // namespace

bool EvaluatePartition(const Expr& projected, const PartitionSpec& spec,
                       const std::vector<Value>& tuple) {
  return internal::EvalPushedDown(projected, false, [&](const Expr& p, Op op) {
    int i = FieldIndex(spec, p.field_id);
    if (i < 0 || static_cast<size_t>(i) >= tuple.size()) return true;  // unknown: keep
    return EvaluatePredicate(op, tuple[static_cast<size_t>(i)], p.literals);
  });
}

bool ManifestMightMatch(const Expr& projected, const PartitionSpec& spec,
                        const std::vector<TypePtr>& partition_types,
                        const std::vector<PartitionFieldSummary>& summaries) {
  return internal::EvalPushedDown(projected, false, [&](const Expr& p, Op op) {
    int i = FieldIndex(spec, p.field_id);
    if (i < 0 || static_cast<size_t>(i) >= summaries.size()) return true;
    const PartitionFieldSummary& s = summaries[static_cast<size_t>(i)];
    TypePtr type = static_cast<size_t>(i) < partition_types.size()
                       ? partition_types[static_cast<size_t>(i)]
                       : p.type;
    bool no_bounds = !s.lower_bound && !s.upper_bound;
    // Summaries carry bounds whenever a non-null value exists, so a null-containing
    // field without bounds holds only nulls (and perhaps NaNs).
    bool only_nulls = s.contains_null && no_bounds;
    switch (op) {
      case Op::kIsNull:
        return s.contains_null;
      case Op::kNotNull:
        return !(only_nulls && !s.contains_nan.value_or(false));
      case Op::kNotEq:
      case Op::kNotIn:
        return true;
      case Op::kIsNaN:
        return s.contains_nan.value_or(true);
      case Op::kNotNaN:  // true for a null; false only where every value is NaN
        return !(s.contains_nan.value_or(false) && !s.contains_null && no_bounds);
      default:
        break;
    }
    if (only_nulls) return false;
    if (!type) return true;
    std::optional<Value> lower, upper;
    if (s.lower_bound) lower = internal::DecodeBound(*type, *s.lower_bound);
    if (s.upper_bound) upper = internal::DecodeBound(*type, *s.upper_bound);
    return internal::BoundsMightMatch(op, p.literals, lower, upper);
  });
}

}  // namespace skade::expr
