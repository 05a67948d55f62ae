// Binding: resolve columns against a schema and type the literals.
#include "skade/expr/expression.h"
#include "skade/expr/expression_internal.h"

namespace skade::expr {
namespace {

std::string LiteralForMessage(const UnboundLiteral& l) {
  return l.kind == UnboundLiteral::Kind::kString ? "'" + l.text + "'" : l.text;
}

bool IsNumericOrTemporal(TypeId id) {
  switch (id) {
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return true;
    default:
      return false;
  }
}

// Converts one literal to the column's type; numbers only go to numeric/temporal columns
// (an integer for a date is days, for a time/timestamp µs, for a timestamp_ns ns), strings go through ParseValue.
Result<Value> ConvertLiteral(const UnboundLiteral& lit, const Type& type,
                             const std::string& column) {
  auto fail = [&](const std::string& why) {
    return InvalidArgument("cannot compare column '" + column + "' of type " + type.ToString() +
                           " with literal " + LiteralForMessage(lit) + ": " + why);
  };
  using K = UnboundLiteral::Kind;
  switch (lit.kind) {
    case K::kNull:
      return fail("null can only be used in 'is null' / 'is not null'");
    case K::kBool:
      if (type.id != TypeId::kBoolean)
        return fail("a boolean does not convert to " + type.ToString());
      return Value(lit.text == "true");
    case K::kInteger:
      if (!IsNumericOrTemporal(type.id))
        return fail("a number does not convert to " + type.ToString() +
                    (type.id == TypeId::kString ? " (quote it: '" + lit.text + "')" : ""));
      break;
    case K::kFloat:
      if (type.id != TypeId::kFloat && type.id != TypeId::kDouble && type.id != TypeId::kDecimal)
        return fail("a fractional number does not convert to " + type.ToString());
      break;
    case K::kString:
      break;
  }
  auto v = ParseValue(type, lit.text);
  if (!v) return fail(v.error().message);
  return v;
}

Result<ExprPtr> BindPredicate(const Expr& e, const Schema& schema) {
  const NestedField* field = schema.FindByPath(e.column);
  if (!field)
    return InvalidArgument("unknown column '" + e.column +
                           "' in filter (columns: " + schema.ColumnNames() + ")");
  std::string path = schema.PathOf(field->id);
  // A struct, list or map is null or not, as a whole; its values are compared field by
  // field (`s.a = 1`).
  if (!field->type->is_primitive() && e.op != Op::kIsNull && e.op != Op::kNotNull)
    return InvalidArgument("cannot compare column '" + path + "' of type " + field->type->ToString() +
                           ": a struct, list or map column takes only 'is null' and 'is not null'");
  // A required top-level column is never null. (A required field inside an optional
  // struct can still be null, so nested fields are left alone.)
  bool top_level_required = field->required && schema.FindTopLevel(path) == field;
  if (e.op == Op::kIsNull && top_level_required) return False();
  if (e.op == Op::kNotNull && top_level_required) return True();

  const bool nan_test = e.op == Op::kIsNaN || e.op == Op::kNotNaN;
  if (nan_test && field->type->id != TypeId::kFloat && field->type->id != TypeId::kDouble)
    return InvalidArgument("'" + std::string(internal::OpText(e.op)) + "' needs a float or double column; '" + path +
                           "' is " + field->type->ToString());
  const bool like = e.op == Op::kStartsWith || e.op == Op::kNotStartsWith || e.op == Op::kLike || e.op == Op::kNotLike;
  if (like && field->type->id != TypeId::kString)
    return InvalidArgument("'like' needs a string column; '" + path + "' is " + field->type->ToString());

  std::vector<Value> values;
  for (const auto& lit : e.unbound_literals) {
    SKADE_ASSIGN_OR_RETURN(Value v, ConvertLiteral(lit, *field->type, path));
    values.push_back(std::move(v));
  }
  // NaN equals nothing, itself included: `x = 'NaN'` would quietly match no row (Iceberg
  // refuses NaN literals the same way).
  for (const auto& v : values) {
    if (internal::IsNaN(v))
      return InvalidArgument("cannot compare column '" + path + "' with NaN, which equals no value, not even NaN: use '" +
                             path + " is nan' or '" + path + " is not nan'");
  }
  Op op = e.op;
  switch (op) {
    case Op::kIsNull:
    case Op::kNotNull:
    case Op::kIsNaN:
    case Op::kNotNaN:
      values.clear();
      break;
    case Op::kStartsWith:
    case Op::kNotStartsWith:
    case Op::kLike:
    case Op::kNotLike:
      if (values.size() != 1 || !std::holds_alternative<std::string>(values[0]))
        return InvalidArgument("'like' on '" + path + "' needs one string pattern");
      break;
    case Op::kIn:
    case Op::kNotIn:
      values = internal::SortedUnique(std::move(values));
      if (values.empty()) return op == Op::kIn ? False() : True();
      if (values.size() == 1) op = op == Op::kIn ? Op::kEq : Op::kNotEq;
      break;
    default:
      if (values.size() != 1)
        return InvalidArgument("predicate on '" + path + "' needs exactly one literal");
  }
  return internal::MakeBoundPredicate(op, path, field->id, field->type, std::move(values));
}

}  // namespace

Result<ExprPtr> Bind(const ExprPtr& unbound, const Schema& schema) {
  const Expr& e = *unbound;
  switch (e.op) {
    case Op::kTrue:
    case Op::kFalse:
      return unbound;
    case Op::kNot: {
      if (e.children.size() != 1) return InvalidArgument("'not' needs exactly one operand");
      SKADE_ASSIGN_OR_RETURN(ExprPtr c, Bind(e.children[0], schema));
      return Not(std::move(c));
    }
    case Op::kAnd:
    case Op::kOr: {
      ExprPtr out = e.op == Op::kAnd ? True() : False();
      for (const auto& child : e.children) {
        SKADE_ASSIGN_OR_RETURN(ExprPtr c, Bind(child, schema));
        out =
            e.op == Op::kAnd ? And(std::move(out), std::move(c)) : Or(std::move(out), std::move(c));
      }
      return out;
    }
    default:
      if (e.field_id >= 0) return unbound;  // already bound
      return BindPredicate(e, schema);
  }
}

}  // namespace skade::expr
