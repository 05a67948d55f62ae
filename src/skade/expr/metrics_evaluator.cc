// Inclusive evaluation against column metrics (Iceberg's InclusiveMetricsEvaluator):
// answers "might a row of this file / row group match?". Only `false` is a promise.
#include <cmath>

#include "skade/expr/expression.h"
#include "skade/expr/expression_internal.h"

namespace skade::expr {
namespace internal {

std::optional<Value> DecodeBound(const Type& type, const std::string& bytes) {
  auto v = DeserializeValue(type, bytes);
  if (!v) return std::nullopt;
  if (auto* f = std::get_if<float>(&*v); f && std::isnan(*f)) return std::nullopt;
  if (auto* d = std::get_if<double>(&*v); d && std::isnan(*d)) return std::nullopt;
  return std::move(*v);
}

bool BoundsMightMatch(Op op, const std::vector<Value>& literals, const std::optional<Value>& lower,
                      const std::optional<Value>& upper) {
  if (literals.empty()) return true;
  const Value& lit = literals[0];
  // Upper bounds of strings/binary may be truncated-and-incremented: they are still upper
  // bounds, and they are only ever used as such here.
  auto cmp = [](const Value& a, const Value& b) { return ComparePredicateValues(a, b); };
  switch (op) {
    case Op::kLt:
      return !lower || cmp(*lower, lit) < 0;
    case Op::kLtEq:
      return !lower || cmp(*lower, lit) <= 0;
    case Op::kGt:
      return !upper || cmp(*upper, lit) > 0;
    case Op::kGtEq:
      return !upper || cmp(*upper, lit) >= 0;
    case Op::kEq:
      return (!lower || cmp(*lower, lit) <= 0) && (!upper || cmp(*upper, lit) >= 0);
    case Op::kIn:
      if (literals.size() > kInPredicateLimit) return true;
      for (const auto& l : literals)
        if ((!lower || cmp(*lower, l) <= 0) && (!upper || cmp(*upper, l) >= 0)) return true;
      return false;
    case Op::kLike: {  // every match starts with the pattern's literal prefix
      const auto* pattern = std::get_if<std::string>(&lit);
      return !pattern || BoundsMightMatch(Op::kStartsWith, {Value(LikePrefix(*pattern))}, lower, upper);
    }
    case Op::kStartsWith:
    case Op::kNotStartsWith: {
      // Byte order of UTF-8 is code point order, the order of the bounds.
      const auto* prefix = std::get_if<std::string>(&lit);
      const auto* lo = lower ? std::get_if<std::string>(&*lower) : nullptr;
      const auto* hi = upper ? std::get_if<std::string>(&*upper) : nullptr;
      if (!prefix) return true;
      if (op == Op::kNotStartsWith)  // every value between two that start with it does too
        return !(lo && hi && lo->starts_with(*prefix) && hi->starts_with(*prefix));
      if (lo && lo->compare(0, prefix->size(), *prefix) > 0) return false;
      if (hi && hi->compare(0, prefix->size(), *prefix) < 0) return false;
      return true;
    }
    default:
      return true;
  }
}

}  // namespace internal

namespace {

template <typename T>
std::optional<T> Lookup(const std::map<int, T>& m, int id) {
  auto it = m.find(id);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

bool PredicateMightMatch(const Expr& p, Op op, const ColumnStats& stats) {
  int id = p.field_id;
  auto values = Lookup(stats.value_counts, id);
  auto nulls = Lookup(stats.null_value_counts, id);
  bool all_null = values && nulls && *values == *nulls;
  switch (op) {
    case Op::kTrue:
      return true;
    case Op::kFalse:
      return false;
    case Op::kIsNull:
      return !(nulls && *nulls == 0);
    case Op::kNotNull:
      return !all_null;
    case Op::kNotEq:
    case Op::kNotIn:
      return true;  // bounds cannot prove "every value equals the literal" cheaply
    case Op::kIsNaN: {
      auto nans = Lookup(stats.nan_value_counts, id);
      return !all_null && !(nans && *nans == 0);
    }
    case Op::kNotNaN: {  // true for a null too
      auto nans = Lookup(stats.nan_value_counts, id);
      return !(nans && values && *nans == *values);
    }
    default:
      break;
  }
  if (all_null) return false;  // comparisons with null are never true
  if (!p.type) return true;
  if ((p.type->id == TypeId::kFloat || p.type->id == TypeId::kDouble)) {
    // All non-null values NaN: no ordinary comparison is true.
    auto nans = Lookup(stats.nan_value_counts, id);
    if (values && nulls && nans && *nans > 0 && *nans == *values - *nulls) return false;
  }
  std::optional<Value> lower, upper;
  if (auto b = Lookup(stats.lower_bounds, id)) lower = internal::DecodeBound(*p.type, *b);
  if (auto b = Lookup(stats.upper_bounds, id)) upper = internal::DecodeBound(*p.type, *b);
  return internal::BoundsMightMatch(op, p.literals, lower, upper);
}

}  // namespace

bool MightMatch(const Expr& bound, const ColumnStats& stats) {
  if (stats.record_count == 0) return false;
  return internal::EvalPushedDown(bound, false, [&](const Expr& p, Op op) {
    if (p.field_id < 0) return true;  // unbound: cannot judge
    return PredicateMightMatch(p, op, stats);
  });
}

}  // namespace skade::expr
