// Helpers for expression tests: a schema with every primitive type, random rows, random
// bound predicates and a tiny row-by-row reference evaluator (SQL three-valued logic).
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/format_test_util.h"
#include "skade/expr/expression.h"

namespace skade::expr_test {

using ::skade::format_test::AllPrimitiveTypes;
using ::skade::format_test::IsError;
using ::skade::format_test::IsErrorWith;
using ::skade::format_test::IsOk;
using ::skade::format_test::T;
using ::skade::format_test::ValueGen;

/// Field ids: 1 bo, 2 i, 3 l, 4 f, 5 d, 6 dec, 7 dt, 8 t, 9 ts, 10 tz, 11 s, 12 u, 13 b,
/// 14 fx, 15 st (struct), 16 st.a, 17 st.c.
inline Schema AllTypesSchema() {
  auto s = ParseSchemaSpec(
      "bo:boolean, i:int, l:long, f:float, d:double, dec:decimal(9,2), dt:date, t:time, "
      "ts:timestamp, tz:timestamptz, s:string, u:uuid, b:binary, fx:fixed(4), "
      "st:struct<a:int,c:string>");
  return *s;
}

/// The primitive fields (including struct children) with their dotted paths.
struct Leaf {
  int id;
  std::string path;
  TypePtr type;
};

inline std::vector<Leaf> Leaves(const Schema& schema) {
  std::vector<Leaf> out;
  auto visit = [&](const std::vector<NestedField>& fields, const std::string& prefix,
                   auto& self) -> void {
    for (const auto& f : fields) {
      if (f.type->id == TypeId::kStruct) {
        self(f.type->fields, prefix + f.name + ".", self);
      } else if (f.type->is_primitive()) {
        out.push_back({f.id, prefix + f.name, f.type});
      }
    }
  };
  visit(schema.fields(), "", visit);
  return out;
}

/// A row: leaf field id → value (monostate = null).
using Row = std::map<int, Value>;

/// Comparison as SQL sees it (-0.0 = +0.0); no NaNs are generated.
inline int SqlCompare(const Value& a, const Value& b) {
  auto as_double = [](const Value& v) -> std::optional<double> {
    if (auto* f = std::get_if<float>(&v)) return *f;
    if (auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  };
  auto x = as_double(a), y = as_double(b);
  if (x && y) return *x < *y ? -1 : (*x > *y ? 1 : 0);
  return CompareValues(a, b);
}

/// Splits UTF-8 text into its characters.
inline std::vector<std::string> Chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80 && !out.empty()) out.back() += s[i];
    else out.push_back(std::string(1, s[i]));
  }
  return out;
}

/// LIKE by the book, recursively over characters: a reference, not fast.
inline bool RefLike(const std::vector<std::string>& p, size_t i, const std::vector<std::string>& t, size_t j) {
  if (i == p.size()) return j == t.size();
  if (p[i] == "%") return RefLike(p, i + 1, t, j) || (j < t.size() && RefLike(p, i, t, j + 1));
  if (j == t.size()) return false;
  if (p[i] == "_") return RefLike(p, i + 1, t, j + 1);
  if (p[i] == "\\" && i + 1 < p.size()) return p[i + 1] == t[j] && RefLike(p, i + 2, t, j + 1);
  return p[i] == t[j] && RefLike(p, i + 1, t, j + 1);
}

/// Reference evaluation: nullopt is SQL's unknown.
inline std::optional<bool> RefEval(const expr::Expr& e, const Row& row) {
  using expr::Op;
  switch (e.op) {
    case Op::kTrue:
      return true;
    case Op::kFalse:
      return false;
    case Op::kNot: {
      auto v = RefEval(*e.children[0], row);
      if (!v) return std::nullopt;
      return !*v;
    }
    case Op::kAnd:
    case Op::kOr: {
      bool is_and = e.op == Op::kAnd;
      bool unknown = false;
      for (const auto& c : e.children) {
        auto v = RefEval(*c, row);
        if (!v)
          unknown = true;
        else if (*v != is_and)
          return !is_and;  // false in AND / true in OR decides
      }
      if (unknown) return std::nullopt;
      return is_and;
    }
    default:
      break;
  }
  auto it = row.find(e.field_id);
  Value v = it == row.end() ? Value{} : it->second;
  if (e.op == Op::kIsNull) return IsNull(v);
  if (e.op == Op::kNotNull) return !IsNull(v);
  auto* f = std::get_if<float>(&v);
  auto* d = std::get_if<double>(&v);
  const bool nan = (f && std::isnan(*f)) || (d && std::isnan(*d));
  if (e.op == Op::kIsNaN) return nan;  // never unknown
  if (e.op == Op::kNotNaN) return !nan;
  if (IsNull(v)) return std::nullopt;
  if (e.op == Op::kStartsWith || e.op == Op::kNotStartsWith)
    return std::get<std::string>(v).starts_with(std::get<std::string>(e.literals[0])) == (e.op == Op::kStartsWith);
  if (e.op == Op::kLike || e.op == Op::kNotLike)
    return RefLike(Chars(std::get<std::string>(e.literals[0])), 0, Chars(std::get<std::string>(v)), 0) ==
           (e.op == Op::kLike);
  if (e.op == Op::kIn || e.op == Op::kNotIn) {
    bool found = false;
    for (const auto& l : e.literals) found = found || SqlCompare(v, l) == 0;
    return found == (e.op == Op::kIn);
  }
  int c = SqlCompare(v, e.literals[0]);
  switch (e.op) {
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
      return std::nullopt;
  }
}

/// Builds a bound predicate directly.
inline expr::ExprPtr BoundPredicate(expr::Op op, const Leaf& leaf, std::vector<Value> literals) {
  auto e = std::make_shared<expr::Expr>();
  e->op = op;
  e->column = leaf.path;
  e->field_id = leaf.id;
  e->type = leaf.type;
  e->literals = std::move(literals);
  return e;
}

/// Random rows and predicates over a fixed set of leaves.
class ExprGen {
 public:
  ExprGen(uint64_t seed, std::vector<Leaf> leaves) : values_(seed), leaves_(std::move(leaves)) {}

  ValueGen& values() { return values_; }
  const std::vector<Leaf>& leaves() const { return leaves_; }

  /// A row with each value null at `null_chance`.
  Row RandomRow(double null_chance) {
    Row row;
    for (const auto& leaf : leaves_)
      row[leaf.id] = values_.Chance(null_chance) ? Value{} : values_.Random(*leaf.type, true);
    return row;
  }

  /// A literal for `leaf`: often a value seen in `rows` so equality predicates hit.
  Value Literal(const Leaf& leaf, const std::vector<Row>& rows) {
    if (!rows.empty() && values_.Chance(0.5)) {
      const Row& r =
          rows[static_cast<size_t>(values_.Int(0, static_cast<int64_t>(rows.size()) - 1))];
      auto it = r.find(leaf.id);
      if (it != r.end() && !IsNull(it->second)) return it->second;
    }
    return values_.Random(*leaf.type, true);
  }

  expr::ExprPtr RandomPredicate(const std::vector<Row>& rows) {
    using expr::Op;
    const Leaf& leaf = values_.Pick(leaves_);
    static const Op kOps[] = {Op::kEq,     Op::kNotEq,   Op::kLt,    Op::kLtEq,       Op::kGt,
                              Op::kGtEq,   Op::kIn,      Op::kNotIn, Op::kIsNull,     Op::kNotNull,
                              Op::kIsNaN,  Op::kNotNaN,  Op::kStartsWith, Op::kNotStartsWith,
                              Op::kLike,   Op::kNotLike};
    Op op = values_.Pick(kOps);
    const bool floating = leaf.type->id == TypeId::kFloat || leaf.type->id == TypeId::kDouble;
    if ((op == Op::kIsNaN || op == Op::kNotNaN) && !floating) op = op == Op::kIsNaN ? Op::kIsNull : Op::kNotNull;
    const bool like = op == Op::kLike || op == Op::kNotLike;
    if ((op == Op::kStartsWith || op == Op::kNotStartsWith || like) && leaf.type->id != TypeId::kString)
      op = op == Op::kStartsWith || op == Op::kLike ? Op::kEq : Op::kNotEq;
    std::vector<Value> lits;
    if (leaf.type->id == TypeId::kString && like) {
      // A value with characters turned into `_`, `%` put in between, wildcards in it escaped.
      std::string pattern;
      for (const auto& c : Chars(std::get<std::string>(Literal(leaf, rows)))) {
        if (values_.Chance(0.1)) pattern += '%';
        if (values_.Chance(0.15)) {
          pattern += '_';
        } else {
          if (c == "%" || c == "_" || c == "\\") pattern += '\\';
          pattern += c;
        }
      }
      if (values_.Chance(0.3)) pattern += '%';
      lits.push_back(Value(pattern));
    } else if (op == Op::kStartsWith || op == Op::kNotStartsWith) {
      // A prefix of a value, cut between characters.
      std::string s = std::get<std::string>(Literal(leaf, rows));
      size_t cut = static_cast<size_t>(values_.Int(0, static_cast<int64_t>(s.size())));
      while (cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) ++cut;
      lits.push_back(Value(s.substr(0, cut)));
    } else if (op == Op::kIn || op == Op::kNotIn) {
      for (int64_t n = values_.Int(1, 4); n > 0; --n) lits.push_back(Literal(leaf, rows));
    } else if (op != Op::kIsNull && op != Op::kNotNull && op != Op::kIsNaN && op != Op::kNotNaN) {
      lits.push_back(Literal(leaf, rows));
    }
    return BoundPredicate(op, leaf, std::move(lits));
  }

  expr::ExprPtr RandomExpr(const std::vector<Row>& rows, int depth) {
    int64_t kind = depth <= 0 ? 0 : values_.Int(0, 5);
    auto node = [](expr::Op op, std::vector<expr::ExprPtr> children) {
      auto e = std::make_shared<expr::Expr>();
      e->op = op;
      e->children = std::move(children);
      return expr::ExprPtr(e);
    };
    switch (kind) {
      case 3:
        return node(expr::Op::kAnd, {RandomExpr(rows, depth - 1), RandomExpr(rows, depth - 1)});
      case 4:
        return node(expr::Op::kOr, {RandomExpr(rows, depth - 1), RandomExpr(rows, depth - 1)});
      case 5:
        return node(expr::Op::kNot, {RandomExpr(rows, depth - 1)});
      default:
        if (values_.Chance(0.03)) return values_.Chance(0.5) ? expr::True() : expr::False();
        return RandomPredicate(rows);
    }
  }

 private:
  ValueGen values_;
  std::vector<Leaf> leaves_;
};

}  // namespace skade::expr_test
