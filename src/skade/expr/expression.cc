// Expression nodes: constructors, printing and small shared helpers.
#include "skade/expr/expression.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "skade/expr/expression_internal.h"

namespace skade::expr {
namespace {

ExprPtr MakeConstant(Op op) {
  auto e = std::make_shared<Expr>();
  e->op = op;
  return e;
}

ExprPtr MakeNode(Op op, std::vector<ExprPtr> children) {
  auto e = std::make_shared<Expr>();
  e->op = op;
  e->children = std::move(children);
  return e;
}

}  // namespace

ExprPtr True() {
  static const ExprPtr kTrue = MakeConstant(Op::kTrue);
  return kTrue;
}

ExprPtr False() {
  static const ExprPtr kFalse = MakeConstant(Op::kFalse);
  return kFalse;
}

ExprPtr And(ExprPtr a, ExprPtr b) {
  if (a->op == Op::kFalse || b->op == Op::kFalse) return False();
  if (a->op == Op::kTrue) return b;
  if (b->op == Op::kTrue) return a;
  return MakeNode(Op::kAnd, {std::move(a), std::move(b)});
}

ExprPtr Or(ExprPtr a, ExprPtr b) {
  if (a->op == Op::kTrue || b->op == Op::kTrue) return True();
  if (a->op == Op::kFalse) return b;
  if (b->op == Op::kFalse) return a;
  return MakeNode(Op::kOr, {std::move(a), std::move(b)});
}

ExprPtr Not(ExprPtr a) {
  if (a->op == Op::kTrue) return False();
  if (a->op == Op::kFalse) return True();
  if (a->op == Op::kNot && !a->children.empty()) return a->children[0];
  return MakeNode(Op::kNot, {std::move(a)});
}

ExprPtr BoundPredicate(Op op, const NestedField& field, std::vector<Value> literals) {
  return internal::MakeBoundPredicate(op, field.name, field.id, field.type, std::move(literals));
}

// ---------------------------------------------------------------------------------------
// Printing.

namespace {

bool IsKeyword(std::string_view w) {
  static constexpr std::string_view kKeywords[] = {"and", "or",   "not",  "in",
                                                   "is",  "null", "true", "false"};
  for (auto k : kKeywords) {
    if (w.size() == k.size() && std::equal(w.begin(), w.end(), k.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == b;
        }))
      return true;
  }
  return false;
}

bool IsIdentStart(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;
}
bool IsIdentChar(char c) {
  return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$';
}

// A column path prints bare when the parser reads it back as the same path.
std::string QuoteColumn(const std::string& column) {
  bool plain = !column.empty();
  size_t start = 0;
  while (plain && start <= column.size()) {
    size_t dot = column.find('.', start);
    std::string_view part = std::string_view(column).substr(
        start, dot == std::string::npos ? std::string::npos : dot - start);
    plain = !part.empty() && IsIdentStart(part[0]) &&
            std::all_of(part.begin(), part.end(), IsIdentChar) && !IsKeyword(part);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (plain) return column;
  std::string out = "\"";
  for (char c : column) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string QuoteString(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string LiteralText(const UnboundLiteral& l) {
  switch (l.kind) {
    case UnboundLiteral::Kind::kString:
      return QuoteString(l.text);
    case UnboundLiteral::Kind::kNull:
      return "null";
    default:
      return l.text;
  }
}

std::string LiteralText(const Type& type, const Value& v) {
  switch (type.id) {
    case TypeId::kBoolean:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kDecimal:
      return FormatValue(type, v);
    case TypeId::kFloat:
    case TypeId::kDouble: {
      std::string s = FormatValue(type, v);
      bool finite = true;
      if (auto* f = std::get_if<float>(&v)) finite = std::isfinite(*f);
      if (auto* d = std::get_if<double>(&v)) finite = std::isfinite(*d);
      return finite ? s : QuoteString(s);
    }
    case TypeId::kBinary:
    case TypeId::kFixed:
      return QuoteString("0x" + FormatValue(type, v));
    default:
      return QuoteString(FormatValue(type, v));
  }
}

// A like pattern matching the strings that start with `prefix`.
std::string LikePattern(std::string_view prefix) {
  std::string out;
  for (char c : prefix) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out + "%";
}

std::string Child(const Expr& e) {
  if (e.is_predicate() || e.op == Op::kTrue || e.op == Op::kFalse) return ToString(e);
  return "(" + ToString(e) + ")";
}

}  // namespace

std::string ToString(const Expr& e) {
  switch (e.op) {
    case Op::kTrue:
      return "true";
    case Op::kFalse:
      return "false";
    case Op::kNot:
      return e.children.empty() ? "true" : "not " + Child(*e.children[0]);
    case Op::kAnd:
    case Op::kOr: {
      if (e.children.empty()) return e.op == Op::kAnd ? "true" : "false";
      std::string out;
      for (size_t i = 0; i < e.children.size(); ++i) {
        if (i) out += e.op == Op::kAnd ? " and " : " or ";
        out += Child(*e.children[i]);
      }
      return out;
    }
    default:
      break;
  }
  std::string out = QuoteColumn(e.column);
  if (e.op == Op::kIsNull) return out + " is null";
  if (e.op == Op::kNotNull) return out + " is not null";
  if (e.op == Op::kIsNaN) return out + " is nan";
  if (e.op == Op::kNotNaN) return out + " is not nan";
  const bool starts = e.op == Op::kStartsWith || e.op == Op::kNotStartsWith;
  if (starts || e.op == Op::kLike || e.op == Op::kNotLike) {  // a prefix is written as its pattern
    const std::string* text = !e.literals.empty() ? std::get_if<std::string>(&e.literals[0])
                              : !e.unbound_literals.empty() ? &e.unbound_literals[0].text
                                                            : nullptr;
    std::string pattern = text ? *text : std::string();
    return out + " " + std::string(internal::OpText(e.op)) + " " + QuoteString(starts ? LikePattern(pattern) : pattern);
  }
  std::vector<std::string> lits;
  if (e.field_id >= 0 && e.type) {
    for (const auto& v : e.literals) lits.push_back(LiteralText(*e.type, v));
  } else {
    for (const auto& l : e.unbound_literals) lits.push_back(LiteralText(l));
  }
  if (e.op == Op::kIn || e.op == Op::kNotIn) {
    out += e.op == Op::kIn ? " in (" : " not in (";
    for (size_t i = 0; i < lits.size(); ++i) out += (i ? ", " : "") + lits[i];
    return out + ")";
  }
  return out + " " + std::string(internal::OpText(e.op)) + " " + (lits.empty() ? "null" : lits[0]);
}

std::vector<int> ReferencedFieldIds(const Expr& bound) {
  std::vector<int> ids;
  auto visit = [&](const Expr& e, auto& self) -> void {
    if (e.is_predicate() && e.field_id >= 0) ids.push_back(e.field_id);
    for (const auto& c : e.children) self(*c, self);
  };
  visit(bound, visit);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<std::string> ReferencedColumns(const Expr& e) {
  std::vector<std::string> names;
  auto visit = [&](const Expr& x, auto& self) -> void {
    if (x.is_predicate()) names.push_back(x.column);
    for (const auto& c : x.children) self(*c, self);
  };
  visit(e, visit);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// ---------------------------------------------------------------------------------------
// Internal helpers.

namespace internal {

Op NegateOp(Op op) {
  switch (op) {
    case Op::kTrue:
      return Op::kFalse;
    case Op::kFalse:
      return Op::kTrue;
    case Op::kEq:
      return Op::kNotEq;
    case Op::kNotEq:
      return Op::kEq;
    case Op::kLt:
      return Op::kGtEq;
    case Op::kLtEq:
      return Op::kGt;
    case Op::kGt:
      return Op::kLtEq;
    case Op::kGtEq:
      return Op::kLt;
    case Op::kIn:
      return Op::kNotIn;
    case Op::kNotIn:
      return Op::kIn;
    case Op::kIsNull:
      return Op::kNotNull;
    case Op::kNotNull:
      return Op::kIsNull;
    case Op::kIsNaN:
      return Op::kNotNaN;
    case Op::kNotNaN:
      return Op::kIsNaN;
    case Op::kStartsWith:
      return Op::kNotStartsWith;
    case Op::kNotStartsWith:
      return Op::kStartsWith;
    case Op::kLike:
      return Op::kNotLike;
    case Op::kNotLike:
      return Op::kLike;
    default:
      return op;
  }
}

Op FlipOp(Op op) {
  switch (op) {
    case Op::kLt:
      return Op::kGt;
    case Op::kLtEq:
      return Op::kGtEq;
    case Op::kGt:
      return Op::kLt;
    case Op::kGtEq:
      return Op::kLtEq;
    default:
      return op;
  }
}

std::string_view OpText(Op op) {
  switch (op) {
    case Op::kTrue:
      return "true";
    case Op::kFalse:
      return "false";
    case Op::kAnd:
      return "and";
    case Op::kOr:
      return "or";
    case Op::kNot:
      return "not";
    case Op::kEq:
      return "=";
    case Op::kNotEq:
      return "!=";
    case Op::kLt:
      return "<";
    case Op::kLtEq:
      return "<=";
    case Op::kGt:
      return ">";
    case Op::kGtEq:
      return ">=";
    case Op::kIn:
      return "in";
    case Op::kNotIn:
      return "not in";
    case Op::kIsNull:
      return "is null";
    case Op::kNotNull:
      return "is not null";
    case Op::kIsNaN:
      return "is nan";
    case Op::kNotNaN:
      return "is not nan";
    case Op::kStartsWith:
    case Op::kLike:
      return "like";
    case Op::kNotStartsWith:
    case Op::kNotLike:
      return "not like";
  }
  return "?";
}

std::string LikePrefix(std::string_view pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' || pattern[i] == '_') break;
    if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
    out += pattern[i];
  }
  return out;
}

bool LikeMatches(std::string_view pattern, std::string_view text) {
  // Greedy, with one way back: to the last `%`, which then takes one more character.
  size_t p = 0, t = 0, star_p = std::string_view::npos, star_t = 0;
  auto char_len = [&](size_t at) {  // bytes of the UTF-8 character at text[at]
    size_t n = 1;
    while (at + n < text.size() && (static_cast<unsigned char>(text[at + n]) & 0xC0) == 0x80) ++n;
    return n;
  };
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star_p = ++p;
      star_t = t;
      continue;
    }
    if (p < pattern.size() && pattern[p] == '_') {
      ++p;
      t += char_len(t);
      continue;
    }
    if (p < pattern.size()) {
      const size_t q = pattern[p] == '\\' && p + 1 < pattern.size() ? p + 1 : p;
      if (pattern[q] == text[t]) {
        p = q + 1;
        ++t;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    star_t += char_len(star_t);
    t = star_t;
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

ExprPtr MakeUnboundPredicate(Op op, std::string column, std::vector<UnboundLiteral> literals) {
  auto e = std::make_shared<Expr>();
  e->op = op;
  e->column = std::move(column);
  e->unbound_literals = std::move(literals);
  return e;
}

ExprPtr MakeBoundPredicate(Op op, std::string column, int field_id, TypePtr type,
                           std::vector<Value> literals) {
  auto e = std::make_shared<Expr>();
  e->op = op;
  e->column = std::move(column);
  e->field_id = field_id;
  e->type = std::move(type);
  e->literals = std::move(literals);
  return e;
}

std::vector<Value> SortedUnique(std::vector<Value> values) {
  std::sort(values.begin(), values.end(),
            [](const Value& a, const Value& b) { return CompareValues(a, b) < 0; });
  values.erase(std::unique(values.begin(), values.end(),
                           [](const Value& a, const Value& b) { return CompareValues(a, b) == 0; }),
               values.end());
  return values;
}

bool IsNaN(const Value& v) {
  if (auto* f = std::get_if<float>(&v)) return std::isnan(*f);
  if (auto* d = std::get_if<double>(&v)) return std::isnan(*d);
  return false;
}

int ComparePredicateValues(const Value& a, const Value& b) {
  auto as_double = [](const Value& v) -> std::optional<double> {
    if (auto* f = std::get_if<float>(&v)) return *f;
    if (auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  };
  auto x = as_double(a), y = as_double(b);
  if (x && y && !std::isnan(*x) && !std::isnan(*y)) return *x < *y ? -1 : (*x > *y ? 1 : 0);
  return CompareValues(a, b);
}

}  // namespace internal
}  // namespace skade::expr
