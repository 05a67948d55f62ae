// Exact evaluation of bound expressions on Arrow record batches via arrow::compute.
// Every Arrow status and exception is translated to a skade Error here.
#include "skade/expr/arrow_filter.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/compute/expression.h>
#include <arrow/compute/initialize.h>
#include <arrow/extension_type.h>
#include <arrow/util/bitmap_generate.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <map>

namespace skade::expr {
namespace {

namespace cp = arrow::compute;

constexpr std::string_view kFieldIdKey = "PARQUET:field_id";

Error FromArrow(const arrow::Status& st) {
  std::string msg = "arrow filter: " + st.ToString();
  if (st.IsNotImplemented()) return Error{ErrorKind::kUnsupported, std::move(msg)};
  if (st.IsInvalid() || st.IsTypeError() || st.IsIndexError() || st.IsKeyError())
    return Error{ErrorKind::kInvalidArgument, std::move(msg)};
  return Error{ErrorKind::kInternal, std::move(msg)};
}

#define SKADE_ARROW_RETURN(expr)                                                 \
  do {                                                                           \
    ::arrow::Status skade_arrow_st = (expr);                                     \
    if (!skade_arrow_st.ok()) return std::unexpected(FromArrow(skade_arrow_st)); \
  } while (0)

#define SKADE_ARROW_ASSIGN_IMPL(tmp, lhs, expr)                   \
  auto tmp = (expr);                                              \
  if (!tmp.ok()) return std::unexpected(FromArrow(tmp.status())); \
  lhs = std::move(tmp).ValueUnsafe()

#define SKADE_ARROW_ASSIGN(lhs, expr) \
  SKADE_ARROW_ASSIGN_IMPL(SKADE_CONCAT(skade_arrow_res_, __LINE__), lhs, expr)

// Registers the compute kernels once (Arrow >= 21 keeps them in libarrow_compute).
Status EnsureComputeInitialized() {
  static const arrow::Status kStatus = cp::Initialize();  // thread-safe magic static
  if (!kStatus.ok()) return std::unexpected(FromArrow(kStatus));
  return {};
}

std::shared_ptr<arrow::DataType> ArrowTypeFor(const Type& t) {
  switch (t.id) {
    case TypeId::kBoolean:
      return arrow::boolean();
    case TypeId::kInt:
      return arrow::int32();
    case TypeId::kLong:
      return arrow::int64();
    case TypeId::kFloat:
      return arrow::float32();
    case TypeId::kDouble:
      return arrow::float64();
    case TypeId::kDecimal:
      return arrow::decimal128(t.precision, t.scale);
    case TypeId::kDate:
      return arrow::date32();
    case TypeId::kTime:
      return arrow::time64(arrow::TimeUnit::MICRO);
    case TypeId::kTimestamp:
      return arrow::timestamp(arrow::TimeUnit::MICRO);
    case TypeId::kTimestampTz:
      return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case TypeId::kTimestampNs:
      return arrow::timestamp(arrow::TimeUnit::NANO);
    case TypeId::kTimestampTzNs:
      return arrow::timestamp(arrow::TimeUnit::NANO, "UTC");
    case TypeId::kString:
      return arrow::utf8();
    case TypeId::kUuid:
      return arrow::fixed_size_binary(16);
    case TypeId::kBinary:
      return arrow::binary();
    case TypeId::kFixed:
      return arrow::fixed_size_binary(t.length);
    default:
      return nullptr;
  }
}

Result<std::shared_ptr<arrow::Scalar>> MakeScalar(const Type& t, const Value& v) {
  auto type = ArrowTypeFor(t);
  auto wrong = [&]() {
    return InvalidArgument("arrow filter: literal " + FormatValue(t, v) + " does not match " +
                           t.ToString());
  };
  auto as_int64 = [&]() -> std::optional<int64_t> {
    if (auto* i = std::get_if<int32_t>(&v)) return *i;
    if (auto* l = std::get_if<int64_t>(&v)) return *l;
    return std::nullopt;
  };
  switch (t.id) {
    case TypeId::kBoolean:
      if (auto* b = std::get_if<bool>(&v)) return std::make_shared<arrow::BooleanScalar>(*b);
      return wrong();
    case TypeId::kInt:
    case TypeId::kDate: {
      auto* i = std::get_if<int32_t>(&v);
      if (!i) return wrong();
      if (t.id == TypeId::kInt) return std::make_shared<arrow::Int32Scalar>(*i);
      return std::make_shared<arrow::Date32Scalar>(*i);
    }
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      auto l = as_int64();
      if (!l) return wrong();
      if (t.id == TypeId::kLong) return std::make_shared<arrow::Int64Scalar>(*l);
      if (t.id == TypeId::kTime) return std::make_shared<arrow::Time64Scalar>(*l, type);
      return std::make_shared<arrow::TimestampScalar>(*l, type);
    }
    case TypeId::kFloat:
      if (auto* f = std::get_if<float>(&v)) return std::make_shared<arrow::FloatScalar>(*f);
      return wrong();
    case TypeId::kDouble:
      if (auto* d = std::get_if<double>(&v)) return std::make_shared<arrow::DoubleScalar>(*d);
      return wrong();
    case TypeId::kDecimal: {
      auto* d = std::get_if<Decimal>(&v);
      if (!d) return wrong();
      auto u = static_cast<unsigned __int128>(d->unscaled);
      arrow::Decimal128 dec(static_cast<int64_t>(u >> 64), static_cast<uint64_t>(u));
      return std::make_shared<arrow::Decimal128Scalar>(dec, type);
    }
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kUuid:
    case TypeId::kFixed: {
      auto* s = std::get_if<std::string>(&v);
      if (!s) return wrong();
      auto buf = arrow::Buffer::FromString(*s);
      if (t.id == TypeId::kString) return std::make_shared<arrow::StringScalar>(buf);
      if (t.id == TypeId::kBinary) return std::make_shared<arrow::BinaryScalar>(buf);
      if (static_cast<int64_t>(s->size()) !=
          static_cast<const arrow::FixedSizeBinaryType&>(*type).byte_width())
        return wrong();
      return std::make_shared<arrow::FixedSizeBinaryScalar>(buf, type);
    }
    default:
      return wrong();
  }
}

std::optional<int> FieldIdOf(const arrow::Field& f) {
  const auto& md = f.metadata();
  if (!md) return std::nullopt;
  int i = md->FindKey(std::string(kFieldIdKey));
  if (i < 0) return std::nullopt;
  const std::string& text = md->value(i);
  int id = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return id;
}

// The schema fields from the top level down to field `id`.
bool FieldChain(const std::vector<NestedField>& fields, int id,
                std::vector<const NestedField*>* chain) {
  for (const auto& f : fields) {
    chain->push_back(&f);
    if (f.id == id) return true;
    if (f.type && f.type->id == TypeId::kStruct && FieldChain(f.type->fields, id, chain))
      return true;
    chain->pop_back();
  }
  return false;
}

// Child index per level: the Arrow field carrying the field id, else the one named alike.
std::optional<std::vector<int>> ArrowPath(const arrow::Schema& schema,
                                          const std::vector<const NestedField*>& chain) {
  std::vector<int> path;
  const arrow::FieldVector* level = &schema.fields();
  for (size_t depth = 0; depth < chain.size(); ++depth) {
    int by_id = -1, by_name = -1;
    for (size_t i = 0; i < level->size(); ++i) {
      const arrow::Field& f = *(*level)[i];
      if (FieldIdOf(f) == chain[depth]->id) by_id = static_cast<int>(i);
      if (by_name < 0 && f.name() == chain[depth]->name) by_name = static_cast<int>(i);
    }
    int idx = by_id >= 0 ? by_id : by_name;
    if (idx < 0) return std::nullopt;
    path.push_back(idx);
    if (depth + 1 < chain.size()) {
      const auto& t = (*level)[static_cast<size_t>(idx)]->type();
      if (t->id() != arrow::Type::STRUCT) return std::nullopt;
      level = &t->fields();
    }
  }
  return path;
}

// The column along `path`, with struct parents' nulls folded in and extension types
// unwrapped (dictionaries stay dictionaries: see Translator::OnDictionary).
Result<std::shared_ptr<arrow::Array>> ExtractColumn(const arrow::RecordBatch& batch,
                                                    const std::vector<int>& path) {
  std::shared_ptr<arrow::Array> arr = batch.column(path[0]);
  for (size_t i = 1; i < path.size(); ++i) {
    const auto& st = static_cast<const arrow::StructArray&>(*arr);
    SKADE_ARROW_ASSIGN(arr, st.GetFlattenedField(path[i]));
  }
  if (arr->type_id() == arrow::Type::EXTENSION)
    arr = static_cast<const arrow::ExtensionArray&>(*arr).storage();
  return arr;
}

// Per row of a dictionary array with indices of type CType, the bit of its entry
// (`value`, `known`: one byte per entry; a null row reads entry `size`, the extra
// one). False if an index is out of range.
template <typename CType>
bool LookUpEntries(const arrow::Array& indices, int64_t size, const std::vector<uint8_t>& value,
                   const std::vector<uint8_t>& known, uint8_t* bits, uint8_t* validity) {
  const CType* idx = indices.data()->GetValues<CType>(1);
  const bool nulls = indices.null_count() > 0;
  bool in_range = true;
  auto entry = [&](int64_t r) -> int64_t {
    if (nulls && indices.IsNull(r)) return size;
    auto i = static_cast<int64_t>(idx[r]);
    if (i < 0 || i >= size) {
      in_range = false;
      return size;
    }
    return i;
  };
  int64_t r = 0;
  arrow::internal::GenerateBitsUnrolled(bits, 0, indices.length(),
                                        [&] { return value[entry(r++)] != 0; });
  if (validity) {
    r = 0;
    arrow::internal::GenerateBitsUnrolled(validity, 0, indices.length(),
                                          [&] { return known[entry(r++)] != 0; });
  }
  return in_range;
}

// The rows of `dict` as the answers of their entries: `entries` holds one (three-valued)
// answer per dictionary entry and, last, the answer for a null row. With
// `unknown_is_false` (the answer is the whole filter's) unknown reads as false.
Result<std::shared_ptr<arrow::Array>> LookUp(const arrow::BooleanArray& entries,
                                             const arrow::DictionaryArray& dict,
                                             bool unknown_is_false) {
  const int64_t size = entries.length() - 1, n = dict.length();
  std::vector<uint8_t> value(static_cast<size_t>(entries.length())), known(value.size());
  bool all_known = true;
  for (int64_t e = 0; e < entries.length(); ++e) {
    known[static_cast<size_t>(e)] = entries.IsValid(e);
    value[static_cast<size_t>(e)] = entries.IsValid(e) && entries.Value(e);
    all_known &= entries.IsValid(e) || unknown_is_false;
  }
  SKADE_ARROW_ASSIGN(std::shared_ptr<arrow::Buffer> bits, arrow::AllocateBitmap(n));
  std::shared_ptr<arrow::Buffer> validity;
  if (!all_known) {
    SKADE_ARROW_ASSIGN(validity, arrow::AllocateBitmap(n));
  }
  uint8_t* vbits = validity ? validity->mutable_data() : nullptr;
  std::shared_ptr<arrow::Array> indices = dict.indices();
  if (indices->type_id() != arrow::Type::INT32 && indices->type_id() != arrow::Type::INT64) {
    // Parquet's dictionaries have int32 indices; other widths are widened once.
    SKADE_ARROW_ASSIGN(indices, cp::Cast(*indices, arrow::int64(), cp::CastOptions::Safe()));
  }
  const bool in_range =
      indices->type_id() == arrow::Type::INT32
          ? LookUpEntries<int32_t>(*indices, size, value, known, bits->mutable_data(), vbits)
          : LookUpEntries<int64_t>(*indices, size, value, known, bits->mutable_data(), vbits);
  if (!in_range) return Corrupt("arrow filter: dictionary index out of range");
  const int64_t null_count = validity ? arrow::kUnknownNullCount : 0;
  return std::static_pointer_cast<arrow::Array>(
      std::make_shared<arrow::BooleanArray>(n, std::move(bits), std::move(validity), null_count));
}

bool IsStringOrBinaryFamily(arrow::Type::type id) {
  switch (id) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW:
      return true;
    default:
      return false;
  }
}

// Builds an arrow::compute expression over a compact batch holding just the referenced
// columns (field_ref by index into `columns_`).
class Translator {
 public:
  Translator(const Schema& schema, const arrow::RecordBatch& batch)
      : schema_(schema), batch_(batch), rows_(batch.num_rows()) {}

  // `e` on every row: true, false, or null where unknown (with `unknown_is_false`, unknown
  // may also come out false).
  Result<std::shared_ptr<arrow::BooleanArray>> Run(const Expr& e, bool unknown_is_false = false) {
    if (unknown_is_false) root_ = &e;
    SKADE_ASSIGN_OR_RETURN(cp::Expression expr, Translate(e));
    std::shared_ptr<arrow::RecordBatch> compact = CompactBatch();
    SKADE_ARROW_ASSIGN(cp::Expression bound_expr, expr.Bind(*compact->schema()));
    SKADE_ARROW_ASSIGN(arrow::Datum out, cp::ExecuteScalarExpression(
                                             bound_expr, *compact->schema(), arrow::Datum(compact)));
    std::shared_ptr<arrow::Array> arr;
    if (out.is_scalar()) {
      SKADE_ARROW_ASSIGN(arr, arrow::MakeArrayFromScalar(*out.scalar(), rows_));
    } else if (out.is_array()) {
      arr = out.make_array();
    } else {
      return Internal("arrow filter: unexpected result kind " + out.ToString());
    }
    if (arr->type_id() != arrow::Type::BOOL || arr->length() != rows_)
      return Internal("arrow filter: selection is not a boolean array of the batch's length");
    return std::static_pointer_cast<arrow::BooleanArray>(arr);
  }

 private:
  Result<cp::Expression> Translate(const Expr& e) {
    SKADE_ASSIGN_OR_RETURN(std::optional<cp::Expression> on_dictionary, OnDictionary(e));
    if (on_dictionary) return std::move(*on_dictionary);
    switch (e.op) {
      case Op::kTrue:
        return cp::literal(true);
      case Op::kFalse:
        return cp::literal(false);
      case Op::kNot: {
        if (e.children.size() != 1) return InvalidArgument("arrow filter: bad 'not' node");
        SKADE_ASSIGN_OR_RETURN(cp::Expression c, Translate(*e.children[0]));
        return cp::call("invert", {std::move(c)});
      }
      case Op::kAnd:
      case Op::kOr: {
        // SQL three-valued logic: false and null = false, true or null = true.
        const char* fn = e.op == Op::kAnd ? "and_kleene" : "or_kleene";
        std::optional<cp::Expression> out;
        for (const auto& child : e.children) {
          SKADE_ASSIGN_OR_RETURN(cp::Expression c, Translate(*child));
          out = out ? cp::call(fn, {std::move(*out), std::move(c)}) : std::move(c);
        }
        if (!out) return cp::literal(e.op == Op::kAnd);
        return std::move(*out);
      }
      default:
        return TranslatePredicate(e);
    }
  }

  std::shared_ptr<arrow::RecordBatch> CompactBatch() const {
    arrow::FieldVector fields;
    for (size_t i = 0; i < columns_.size(); ++i)
      fields.push_back(arrow::field("c" + std::to_string(i), columns_[i]->type()));
    return arrow::RecordBatch::Make(arrow::schema(std::move(fields)), rows_, columns_);
  }

  // The column of field `id` as the batch holds it, or null if it cannot be found.
  Result<std::shared_ptr<arrow::Array>> Find(int id) {
    std::vector<const NestedField*> chain;
    if (!FieldChain(schema_.fields(), id, &chain)) return nullptr;
    std::optional<std::vector<int>> path = ArrowPath(*batch_.schema(), chain);
    if (!path) return nullptr;
    return ExtractColumn(batch_, *path);
  }

  // When every predicate below `e` reads one dictionary-encoded column, `e` is evaluated
  // once per dictionary entry (and once for a null row) by the same kernels as dense
  // rows, and each row takes its entry's answer: a boolean column, unknown kept as null.
  // Nullopt otherwise (and for the column given to a sub-translator, already dense).
  Result<std::optional<cp::Expression>> OnDictionary(const Expr& e) {
    if (!e.is_predicate() && e.op != Op::kAnd && e.op != Op::kOr && e.op != Op::kNot)
      return std::nullopt;
    std::vector<int> ids = ReferencedFieldIds(e);
    if (ids.empty() || std::any_of(ids.begin(), ids.end(), [&](int id) { return id != ids[0]; }))
      return std::nullopt;
    if (given_ && given_->first == ids[0]) return std::nullopt;
    SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Array> arr, Find(ids[0]));
    if (!arr || arr->type_id() != arrow::Type::DICTIONARY) return std::nullopt;
    const auto& dict = static_cast<const arrow::DictionaryArray&>(*arr);
    auto& entries = entries_[ids[0]];
    if (!entries) {
      SKADE_ARROW_ASSIGN(auto null_entry, arrow::MakeArrayOfNull(dict.dictionary()->type(), 1));
      SKADE_ARROW_ASSIGN(entries, arrow::Concatenate({dict.dictionary(), null_entry}));
    }
    Translator sub(schema_, batch_);
    sub.rows_ = entries->length();
    sub.given_ = {ids[0], entries};
    SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::BooleanArray> answers, sub.Run(e));
    SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Array> rows, LookUp(*answers, dict, &e == root_));
    int index = static_cast<int>(columns_.size());
    columns_.push_back(std::move(rows));
    return cp::field_ref(index);
  }

  struct Column {
    int index = 0;
    std::shared_ptr<arrow::DataType> literal_type;  // type to give literals
  };

  Result<Column> ColumnFor(const Expr& p) {
    if (auto it = by_field_id_.find(p.field_id); it != by_field_id_.end()) return it->second;
    // A struct, list or map column is only tested for null (the binder's rule): it is
    // taken as it is.
    auto expected = p.type->is_primitive() ? ArrowTypeFor(*p.type) : nullptr;
    if (!expected && p.type->is_primitive())
      return InvalidArgument("arrow filter: cannot evaluate predicates on " + p.type->ToString());
    std::shared_ptr<arrow::Array> arr;
    if (given_ && given_->first == p.field_id) {
      arr = given_->second;
    } else {
      SKADE_ASSIGN_OR_RETURN(arr, Find(p.field_id));
    }
    if (!arr)
      return InvalidArgument(
          "arrow filter: column '" + p.column + "' (field id " + std::to_string(p.field_id) +
          ") is not in the batch (columns: " + batch_.schema()->ToString() + ")");
    Column col;
    col.literal_type = expected;
    if (expected && !arr->type()->Equals(*expected)) {
      if (IsStringOrBinaryFamily(arr->type_id()) && IsStringOrBinaryFamily(expected->id())) {
        col.literal_type = arr->type();  // large_string etc.: give the literal the column's type
      } else {
        // Other physical differences (promoted int/float, decimal width, time unit): bring
        // the column to the type the Iceberg schema promises.
        SKADE_ARROW_ASSIGN(arr, cp::Cast(*arr, expected, cp::CastOptions::Safe()));
      }
    }
    col.index = static_cast<int>(columns_.size());
    columns_.push_back(std::move(arr));
    by_field_id_[p.field_id] = col;
    return col;
  }

  Result<std::shared_ptr<arrow::Scalar>> Literal(const Expr& p, const Value& v, const Column& col) {
    SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Scalar> s, MakeScalar(*p.type, v));
    if (!s->type->Equals(*col.literal_type)) {
      SKADE_ARROW_ASSIGN(arrow::Datum d, cp::Cast(arrow::Datum(s), col.literal_type));
      s = d.scalar();
    }
    return s;
  }

  Result<cp::Expression> TranslatePredicate(const Expr& p) {
    if (p.field_id < 0 || !p.type) return InvalidArgument("arrow filter: expression is not bound");
    SKADE_ASSIGN_OR_RETURN(Column col, ColumnFor(p));
    cp::Expression field = cp::field_ref(col.index);
    switch (p.op) {
      case Op::kIsNull:
        return cp::call("is_null", {field});
      case Op::kNotNull:
        return cp::call("is_valid", {field});
      case Op::kIsNaN:
      case Op::kNotNaN: {
        // Never unknown: a null is not NaN.
        cp::Expression nan = cp::call("coalesce", {cp::call("is_nan", {field}), cp::literal(false)});
        return p.op == Op::kIsNaN ? nan : cp::call("invert", {std::move(nan)});
      }
      case Op::kStartsWith:
      case Op::kNotStartsWith:
      case Op::kLike:
      case Op::kNotLike: {  // Arrow's match_like reads `%`, `_` and backslash escapes as skade does
        const auto* text = p.literals.size() == 1 ? std::get_if<std::string>(&p.literals[0]) : nullptr;
        if (!text) return InvalidArgument("arrow filter: 'like' needs one string");
        const bool starts = p.op == Op::kStartsWith || p.op == Op::kNotStartsWith;
        cp::Expression match =
            cp::call(starts ? "starts_with" : "match_like", {field}, cp::MatchSubstringOptions(*text));
        return p.op == Op::kStartsWith || p.op == Op::kLike ? match : cp::call("invert", {std::move(match)});
      }
      case Op::kIn:
      case Op::kNotIn: {
        std::unique_ptr<arrow::ArrayBuilder> builder;
        SKADE_ARROW_RETURN(
            arrow::MakeBuilder(arrow::default_memory_pool(), col.literal_type, &builder));
        std::vector<Value> set_values = p.literals;
        // is_in hashes bit patterns, but SQL has -0.0 = +0.0: put both zeros in the set.
        for (const auto& v : p.literals) {
          if (auto* f = std::get_if<float>(&v); f && *f == 0.0f) set_values.push_back(Value(-*f));
          if (auto* d = std::get_if<double>(&v); d && *d == 0.0) set_values.push_back(Value(-*d));
        }
        for (const auto& v : set_values) {
          SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Scalar> s, Literal(p, v, col));
          SKADE_ARROW_RETURN(builder->AppendScalar(*s));
        }
        std::shared_ptr<arrow::Array> set;
        SKADE_ARROW_RETURN(builder->Finish(&set));
        // EMIT_NULL: a null row is unknown (dropped) for `in` and, negated, for `not in`.
        cp::SetLookupOptions opts(set, cp::SetLookupOptions::EMIT_NULL);
        cp::Expression in = cp::call("is_in", {field}, std::move(opts));
        return p.op == Op::kIn ? in : cp::call("invert", {std::move(in)});
      }
      default:
        break;
    }
    if (p.literals.size() != 1)
      return InvalidArgument("arrow filter: comparison needs one literal");
    SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Scalar> lit, Literal(p, p.literals[0], col));
    const char* fn = nullptr;
    switch (p.op) {
      case Op::kEq:
        fn = "equal";
        break;
      case Op::kNotEq:
        fn = "not_equal";
        break;
      case Op::kLt:
        fn = "less";
        break;
      case Op::kLtEq:
        fn = "less_equal";
        break;
      case Op::kGt:
        fn = "greater";
        break;
      case Op::kGtEq:
        fn = "greater_equal";
        break;
      default:
        return InvalidArgument("arrow filter: unexpected operator");
    }
    return cp::call(fn, {field, cp::literal(arrow::Datum(lit))});
  }

  const Schema& schema_;
  const arrow::RecordBatch& batch_;
  int64_t rows_;
  const Expr* root_ = nullptr;  // the whole filter, when its unknown rows may read false
  // A sub-translator's rows: the dictionary entries of one field (field id, values).
  std::optional<std::pair<int, std::shared_ptr<arrow::Array>>> given_;
  std::map<int, std::shared_ptr<arrow::Array>> entries_;  // by field id, null entry last
  std::vector<std::shared_ptr<arrow::Array>> columns_;
  std::map<int, Column> by_field_id_;
};

Result<std::shared_ptr<arrow::BooleanArray>> Evaluate(const Expr& bound, const Schema& schema,
                                                      const arrow::RecordBatch& batch) {
  SKADE_RETURN_IF_ERROR(EnsureComputeInitialized());
  Translator translator(schema, batch);
  SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::BooleanArray> sel,
                         translator.Run(bound, /*unknown_is_false=*/true));
  if (sel->null_count() == 0) return sel;
  // Unknown (null) selects nothing.
  SKADE_ARROW_ASSIGN(arrow::Datum known, cp::CallFunction("coalesce", {arrow::Datum(sel),
                                                                       arrow::Datum(false)}));
  return std::static_pointer_cast<arrow::BooleanArray>(known.make_array());
}

}  // namespace

Result<std::shared_ptr<arrow::Array>> EvaluateBatch(
    const Expr& bound, const Schema& schema, const std::shared_ptr<arrow::RecordBatch>& batch) {
  if (!batch) return InvalidArgument("arrow filter: no batch");
  try {
    SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::BooleanArray> sel,
                           Evaluate(bound, schema, *batch));
    return std::shared_ptr<arrow::Array>(std::move(sel));
  } catch (const std::exception& ex) {
    return Internal(std::string("arrow filter: ") + ex.what());
  }
}

Result<std::shared_ptr<arrow::RecordBatch>> FilterBatch(
    const Expr& bound, const Schema& schema, const std::shared_ptr<arrow::RecordBatch>& batch) {
  if (!batch) return InvalidArgument("arrow filter: no batch");
  try {
    SKADE_ASSIGN_OR_RETURN(std::shared_ptr<arrow::BooleanArray> sel,
                           Evaluate(bound, schema, *batch));
    if (sel->true_count() == batch->num_rows()) return batch;
    SKADE_ARROW_ASSIGN(arrow::Datum out, cp::Filter(arrow::Datum(batch), arrow::Datum(sel)));
    return out.record_batch();
  } catch (const std::exception& ex) {
    return Internal(std::string("arrow filter: ") + ex.what());
  }
}

}  // namespace skade::expr
