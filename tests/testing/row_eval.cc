#include "testing/row_eval.h"

#include <cmath>

namespace skade::testing {
namespace {

int IndexOf(const Schema& s, int id) {
  for (size_t i = 0; i < s.fields().size(); ++i)
    if (s.fields()[i].id == id) return static_cast<int>(i);
  return -1;
}

std::optional<bool> Not(std::optional<bool> v) {
  if (!v) return std::nullopt;
  return !*v;
}

bool IsNaN(const Value& v) {
  if (auto* f = std::get_if<float>(&v)) return std::isnan(*f);
  if (auto* d = std::get_if<double>(&v)) return std::isnan(*d);
  return false;
}

std::string Literal(const Type& t, const Value& v) {
  std::string text = FormatValue(t, v);
  switch (t.id) {
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
    case TypeId::kBoolean: return text;
    case TypeId::kBinary:
    case TypeId::kFixed: return "'0x" + text + "'";
    default: {
      std::string q = "'";
      for (char c : text) {
        if (c == '\'') q += '\'';
        q += c;
      }
      return q + "'";
    }
  }
}

}  // namespace

std::optional<bool> EvalRow(const expr::Expr& e, const Schema& schema, const Row& row) {
  using expr::Op;
  switch (e.op) {
    case Op::kTrue: return true;
    case Op::kFalse: return false;
    case Op::kNot: return Not(EvalRow(*e.children[0], schema, row));
    case Op::kAnd: {
      auto a = EvalRow(*e.children[0], schema, row), b = EvalRow(*e.children[1], schema, row);
      if ((a && !*a) || (b && !*b)) return false;
      if (!a || !b) return std::nullopt;
      return true;
    }
    case Op::kOr: {
      auto a = EvalRow(*e.children[0], schema, row), b = EvalRow(*e.children[1], schema, row);
      if ((a && *a) || (b && *b)) return true;
      if (!a || !b) return std::nullopt;
      return false;
    }
    default: break;
  }
  int idx = IndexOf(schema, e.field_id);
  const Cell& c = row[idx];
  if (e.op == Op::kIsNull) return c.null;
  if (e.op == Op::kNotNull) return !c.null;
  if (c.null) return std::nullopt;
  const Value& v = c.value;
  auto cmp = [&](const Value& lit) { return CompareValues(v, lit); };
  bool nan = IsNaN(v);
  switch (e.op) {
    case Op::kEq: return !nan && cmp(e.literals[0]) == 0;
    case Op::kNotEq: return nan || cmp(e.literals[0]) != 0;
    case Op::kLt: return !nan && cmp(e.literals[0]) < 0;
    case Op::kLtEq: return !nan && cmp(e.literals[0]) <= 0;
    case Op::kGt: return !nan && cmp(e.literals[0]) > 0;
    case Op::kGtEq: return !nan && cmp(e.literals[0]) >= 0;
    case Op::kIn:
    case Op::kNotIn: {
      bool found = false;
      for (const auto& l : e.literals) found = found || (!nan && cmp(l) == 0);
      return e.op == Op::kIn ? found : !found;
    }
    default: return std::nullopt;
  }
}

std::string RandomFilter(RandomData& data, const Schema& schema, int depth) {
  if (depth > 0 && data.Chance(0.4)) {
    int k = data.Uniform(0, 2);
    std::string a = RandomFilter(data, schema, depth - 1);
    if (k == 2) return "not (" + a + ")";
    std::string b = RandomFilter(data, schema, depth - 1);
    return "(" + a + (k == 0 ? " and " : " or ") + b + ")";
  }
  std::vector<const NestedField*> prims;
  for (const auto& f : schema.fields())
    if (f.type->is_primitive()) prims.push_back(&f);
  if (prims.empty()) return "true";
  const NestedField& f = *prims[data.Uniform(0, static_cast<int>(prims.size()) - 1)];
  const Type& t = *f.type;
  std::string col = f.name;
  int op = data.Uniform(0, 9);
  if (t.id == TypeId::kBoolean) op = data.Uniform(0, 3) == 0 ? 8 : 0;
  switch (op) {
    case 0: return col + " = " + Literal(t, data.RandomValue(t));
    case 1: return col + " != " + Literal(t, data.RandomValue(t));
    case 2: return col + " < " + Literal(t, data.RandomValue(t));
    case 3: return col + " <= " + Literal(t, data.RandomValue(t));
    case 4: return col + " > " + Literal(t, data.RandomValue(t));
    case 5: return col + " >= " + Literal(t, data.RandomValue(t));
    case 6:
    case 7: {
      std::string list;
      int n = data.Uniform(1, 3);
      for (int i = 0; i < n; ++i) list += (i ? ", " : "") + Literal(t, data.RandomValue(t));
      return col + (op == 6 ? " in (" : " not in (") + list + ")";
    }
    case 8: return col + " is null";
    default: return col + " is not null";
  }
}

}  // namespace skade::testing
