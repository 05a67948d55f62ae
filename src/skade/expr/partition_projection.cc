// Inclusive projection of a row filter onto a partition spec (Iceberg's
// Projections.inclusive): for every row r, filter(r) ⇒ projection(partition(r)).
#include <limits>

#include "skade/expr/expression.h"
#include "skade/expr/expression_internal.h"

namespace skade::expr {
namespace {

bool IsTimeTransform(TransformKind k) {
  return k == TransformKind::kYear || k == TransformKind::kMonth || k == TransformKind::kDay ||
         k == TransformKind::kHour;
}

// The neighbour of an integer-like value (int, long, date, time, timestamp, decimal
// unscaled), or nullopt for other kinds or at the edge of the range.
std::optional<Value> Step(const Value& v, int delta) {
  if (auto* i = std::get_if<int32_t>(&v)) {
    int32_t out;
    if (__builtin_add_overflow(*i, delta, &out)) return std::nullopt;
    return Value(out);
  }
  if (auto* l = std::get_if<int64_t>(&v)) {
    int64_t out;
    if (__builtin_add_overflow(*l, static_cast<int64_t>(delta), &out)) return std::nullopt;
    return Value(out);
  }
  if (auto* d = std::get_if<Decimal>(&v)) return Value(Decimal{d->unscaled + delta});
  return std::nullopt;
}

// Characters (code points) of UTF-8 text: what truncate[W] counts for strings.
int64_t CodePoints(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

class Projector {
 public:
  Projector(const PartitionSpec& spec, const Schema& schema) : spec_(spec), schema_(schema) {}

  ExprPtr Project(const Expr& e, bool negated) {
    switch (e.op) {
      case Op::kTrue:
        return negated ? False() : True();
      case Op::kFalse:
        return negated ? True() : False();
      case Op::kNot:
        return e.children.empty() ? True() : Project(*e.children[0], !negated);
      case Op::kAnd:
      case Op::kOr: {
        bool conj = (e.op == Op::kAnd) != negated;  // De Morgan under negation
        ExprPtr out = conj ? True() : False();
        for (const auto& c : e.children) {
          ExprPtr p = Project(*c, negated);
          out = conj ? And(std::move(out), std::move(p)) : Or(std::move(out), std::move(p));
        }
        return out;
      }
      default:
        return ProjectPredicate(e, negated ? internal::NegateOp(e.op) : e.op);
    }
  }

 private:
  ExprPtr ProjectPredicate(const Expr& p, Op op) {
    if (p.field_id < 0 || !p.type) return True();
    // Several partition fields over one column: each projection holds, so their AND does.
    ExprPtr out = True();
    for (const auto& pf : spec_.fields()) {
      if (pf.source_id != p.field_id) continue;
      const NestedField* source = schema_.FindField(pf.source_id);
      const Type& source_type = source ? *source->type : *p.type;
      if (!pf.transform.CanApply(source_type)) continue;
      out = And(std::move(out), ProjectOne(pf, *p.type, op, p.literals));
    }
    return out;
  }

  ExprPtr ProjectOne(const PartitionField& pf, const Type& source, Op op,
                     const std::vector<Value>& literals) {
    const Transform& t = pf.transform;
    TypePtr result_type = t.ResultType(std::make_shared<Type>(source));
    auto make = [&](Op out_op, std::vector<Value> lits) {
      return internal::MakeBoundPredicate(out_op, pf.name, pf.field_id, result_type,
                                          std::move(lits));
    };
    auto apply = [&](const Value& v) -> std::optional<Value> {
      auto r = t.Apply(source, v);
      if (!r || IsNull(*r)) return std::nullopt;
      return std::move(*r);
    };
    if (t.kind == TransformKind::kVoid) return True();
    if (op == Op::kIsNull || op == Op::kNotNull) return make(op, {});  // null ⇔ null
    if (t.kind == TransformKind::kIdentity) return make(op, literals);
    if (op == Op::kLike) {  // its matches start with its literal prefix: project that
      const auto* pattern = literals.empty() ? nullptr : std::get_if<std::string>(&literals[0]);
      if (!pattern || internal::LikePrefix(*pattern).empty()) return True();
      return ProjectOne(pf, source, Op::kStartsWith, {Value(internal::LikePrefix(*pattern))});
    }
    if (op == Op::kNotLike) return True();
    if (op == Op::kStartsWith || op == Op::kNotStartsWith) {
      const auto* prefix = literals.empty() ? nullptr : std::get_if<std::string>(&literals[0]);
      if (t.kind != TransformKind::kTruncate || !prefix) return True();
      // A prefix no longer than the width is a prefix of the truncated value exactly;
      // a longer one fixes the whole truncated value (which says nothing of "not").
      if (CodePoints(*prefix) <= t.param) return make(op, literals);
      if (op == Op::kNotStartsWith) return True();
      auto v = apply(*prefix);
      return v ? make(Op::kEq, {std::move(*v)}) : True();
    }
    if (op == Op::kEq || op == Op::kIn) {
      std::vector<Value> out;
      for (const auto& l : literals) {
        auto v = apply(l);
        if (!v) return True();
        out.push_back(std::move(*v));
      }
      out = internal::SortedUnique(std::move(out));
      if (out.size() == 1) return make(Op::kEq, std::move(out));
      return make(Op::kIn, std::move(out));
    }
    bool monotone = t.kind == TransformKind::kTruncate || IsTimeTransform(t.kind);
    if (!monotone || literals.empty()) return True();  // bucket ranges, not-eq, not-in
    // x < v ⇔ x <= v-1 for integer-like domains, which projects tighter.
    const Value& lit = literals[0];
    Value boundary = lit;
    Op out_op;
    switch (op) {
      case Op::kLt:
        if (auto s = Step(lit, -1)) boundary = *s;
        out_op = Op::kLtEq;
        break;
      case Op::kLtEq:
        out_op = Op::kLtEq;
        break;
      case Op::kGt:
        if (auto s = Step(lit, +1)) boundary = *s;
        out_op = Op::kGtEq;
        break;
      case Op::kGtEq:
        out_op = Op::kGtEq;
        break;
      default:
        return True();
    }
    auto v = apply(boundary);
    if (!v) return True();
    return make(out_op, {std::move(*v)});
  }

  const PartitionSpec& spec_;
  const Schema& schema_;
};

}  // namespace

Result<ExprPtr> ProjectToPartition(const Expr& bound, const PartitionSpec& spec,
                                   const Schema& schema) {
  Projector projector(spec, schema);
  return projector.Project(bound, false);
}

}  // namespace skade::expr
