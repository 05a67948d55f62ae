// Helpers shared by the expression evaluators. Not API.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "skade/expr/expression.h"

namespace skade::expr::internal {

/// In-lists longer than this are not checked value by value against bounds.
inline constexpr size_t kInPredicateLimit = 200;

/// The operator such that `not (x op lits)` ≡ `x NegateOp(op) lits` under SQL
/// three-valued logic (unknown stays unknown): = ↔ !=, < ↔ >=, in ↔ not in,
/// is null ↔ not null, true ↔ false. Not valid for and/or/not.
Op NegateOp(Op op);

/// The operator with its operands swapped (5 < x ⇔ x > 5).
Op FlipOp(Op op);

/// Text for an operator as the parser reads it ("=", "<=", "in", "is null"...).
std::string_view OpText(Op op);

ExprPtr MakeUnboundPredicate(Op op, std::string column, std::vector<UnboundLiteral> literals);
ExprPtr MakeBoundPredicate(Op op, std::string column, int field_id, TypePtr type,
                           std::vector<Value> literals);

/// Sorts and de-duplicates literals (CompareValues order).
std::vector<Value> SortedUnique(std::vector<Value> values);

/// Whether a value is a float or double NaN.
bool IsNaN(const Value& v);

/// Comparison as SQL sees it: like CompareValues but -0.0 equals +0.0.
int ComparePredicateValues(const Value& a, const Value& b);

/// Evaluates an and/or/not tree with NOT pushed down to the leaves on the fly:
/// `leaf(predicate, effective_op)` answers each predicate, where effective_op is the
/// predicate's op or its negation. Sound for evaluators that are not closed under
/// negation (metrics, manifest summaries, 2-valued partition evaluation).
template <typename Leaf>
bool EvalPushedDown(const Expr& e, bool negated, const Leaf& leaf) {
  switch (e.op) {
    case Op::kTrue:
      return !negated;
    case Op::kFalse:
      return negated;
    case Op::kNot:
      return e.children.empty() || EvalPushedDown(*e.children[0], !negated, leaf);
    case Op::kAnd:
    case Op::kOr: {
      // De Morgan: a negated AND is an OR of negations and vice versa.
      bool conj = (e.op == Op::kAnd) != negated;
      for (const auto& c : e.children) {
        bool r = EvalPushedDown(*c, negated, leaf);
        if (conj && !r) return false;
        if (!conj && r) return true;
      }
      return conj;
    }
    default:
      return leaf(e, negated ? NegateOp(e.op) : e.op);
  }
}

/// Whether values within [lower, upper] (either bound may be unknown) might satisfy
/// `op literals`. Only for eq, lt, lteq, gt, gteq, in, starts with, not starts with; other
/// ops answer true.
bool BoundsMightMatch(Op op, const std::vector<Value>& literals, const std::optional<Value>& lower,
                      const std::optional<Value>& upper);

/// The text a LIKE pattern's matches all start with: its characters before the first
/// wildcard, escapes undone.
std::string LikePrefix(std::string_view pattern);
/// Whether `text` matches the LIKE pattern (`%` any text, `_` one UTF-8 character, `\`
/// makes the next character plain).
bool LikeMatches(std::string_view pattern, std::string_view text);

/// Deserializes a bound, treating undecodable bytes and NaN as "unknown".
std::optional<Value> DecodeBound(const Type& type, const std::string& bytes);

}  // namespace skade::expr::internal
