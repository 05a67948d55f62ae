// Exact filtering of Arrow record batches.
#include "skade/expr/arrow_filter.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "expr/expr_test_util.h"
#include "skade/expr/expression.h"

namespace skade::expr {
namespace {

using ::skade::expr_test::AllTypesSchema;
using ::skade::expr_test::ExprGen;
using ::skade::expr_test::IsErrorWith;
using ::skade::expr_test::IsOk;
using ::skade::expr_test::Leaves;
using ::skade::expr_test::RefEval;
using ::skade::expr_test::Row;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::shared_ptr<arrow::KeyValueMetadata> IdMeta(int id) {
  return arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)});
}

std::shared_ptr<arrow::Field> F(const std::string& name, std::shared_ptr<arrow::DataType> type,
                                std::optional<int> id) {
  return arrow::field(name, std::move(type), true, id ? IdMeta(*id) : nullptr);
}

// Builds an Arrow array of `type` from values (monostate = null).
std::shared_ptr<arrow::Array> ToArrow(const std::vector<Value>& values,
                                      const std::shared_ptr<arrow::DataType>& type) {
  std::unique_ptr<arrow::ArrayBuilder> builder;
  EXPECT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), type, &builder).ok());
  for (const auto& v : values) {
    if (IsNull(v)) {
      EXPECT_TRUE(builder->AppendNull().ok());
      continue;
    }
    auto as_int64 = [&]() -> int64_t {
      if (auto* i = std::get_if<int32_t>(&v)) return *i;
      return std::get<int64_t>(v);
    };
    arrow::Status st;
    switch (type->id()) {
      case arrow::Type::BOOL:
        st = static_cast<arrow::BooleanBuilder&>(*builder).Append(std::get<bool>(v));
        break;
      case arrow::Type::INT32:
        st = static_cast<arrow::Int32Builder&>(*builder).Append(static_cast<int32_t>(as_int64()));
        break;
      case arrow::Type::INT64:
        st = static_cast<arrow::Int64Builder&>(*builder).Append(as_int64());
        break;
      case arrow::Type::FLOAT:
        st = static_cast<arrow::FloatBuilder&>(*builder).Append(std::get<float>(v));
        break;
      case arrow::Type::DOUBLE: {
        double d = std::holds_alternative<float>(v) ? std::get<float>(v) : std::get<double>(v);
        st = static_cast<arrow::DoubleBuilder&>(*builder).Append(d);
        break;
      }
      case arrow::Type::DECIMAL128: {
        auto u = static_cast<unsigned __int128>(std::get<Decimal>(v).unscaled);
        st = static_cast<arrow::Decimal128Builder&>(*builder).Append(
            arrow::Decimal128(static_cast<int64_t>(u >> 64), static_cast<uint64_t>(u)));
        break;
      }
      case arrow::Type::DATE32:
        st = static_cast<arrow::Date32Builder&>(*builder).Append(std::get<int32_t>(v));
        break;
      case arrow::Type::TIME64:
        st = static_cast<arrow::Time64Builder&>(*builder).Append(as_int64());
        break;
      case arrow::Type::TIMESTAMP:
        st = static_cast<arrow::TimestampBuilder&>(*builder).Append(as_int64());
        break;
      case arrow::Type::STRING:
        st = static_cast<arrow::StringBuilder&>(*builder).Append(std::get<std::string>(v));
        break;
      case arrow::Type::LARGE_STRING:
        st = static_cast<arrow::LargeStringBuilder&>(*builder).Append(std::get<std::string>(v));
        break;
      case arrow::Type::BINARY:
        st = static_cast<arrow::BinaryBuilder&>(*builder).Append(std::get<std::string>(v));
        break;
      case arrow::Type::LARGE_BINARY:
        st = static_cast<arrow::LargeBinaryBuilder&>(*builder).Append(std::get<std::string>(v));
        break;
      case arrow::Type::FIXED_SIZE_BINARY:
        st = static_cast<arrow::FixedSizeBinaryBuilder&>(*builder).Append(std::get<std::string>(v));
        break;
      default:
        ADD_FAILURE() << "unsupported test type " << type->ToString();
    }
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(builder->Finish(&out).ok());
  return out;
}

std::shared_ptr<arrow::Buffer> Validity(const std::vector<bool>& valid) {
  arrow::BooleanBuilder b;
  for (bool v : valid) EXPECT_TRUE(b.Append(v).ok());
  std::shared_ptr<arrow::Array> arr;
  EXPECT_TRUE(b.Finish(&arr).ok());
  return arr->data()->buffers[1];  // the values bitmap doubles as a validity bitmap
}

std::vector<int64_t> RowIds(const std::shared_ptr<arrow::RecordBatch>& batch) {
  auto ids = std::static_pointer_cast<arrow::Int64Array>(batch->GetColumnByName("rid"));
  std::vector<int64_t> out;
  for (int64_t i = 0; i < ids->length(); ++i) out.push_back(ids->Value(i));
  return out;
}

// The "rid" values of the rows of `batch` that `filter` keeps.
std::vector<int64_t> FilteredRows(const Schema& schema, const std::shared_ptr<arrow::RecordBatch>& batch,
                                  std::string_view filter) {
  auto bound = Bind(*Parse(filter), schema);
  EXPECT_THAT(bound, IsOk()) << filter;
  if (!bound) return {};
  auto out = FilterBatch(**bound, schema, batch);
  EXPECT_THAT(out, IsOk()) << filter;
  return out ? RowIds(*out) : std::vector<int64_t>{};
}

std::shared_ptr<arrow::Array> RidArray(int64_t n) {
  std::vector<Value> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(Value(i));
  return ToArrow(v, arrow::int64());
}

// --- explicit cases ----------------------------------------------------------------------

class SmallBatch : public ::testing::Test {
 protected:
  SmallBatch() : schema_(*ParseSchemaSpec("x:int, y:string, l:long, st:struct<a:int>")) {
    // x: 1, null, 3; y: 'a', null, 'c' (large_string); l stored as int32 (promoted);
    // st: {5}, null (child value 5 hidden by the null parent), {null}.
    auto st_child = ToArrow({Value(int32_t{5}), Value(int32_t{5}), Value{}}, arrow::int32());
    auto st_field = F("a", arrow::int32(), 5);
    auto st = *arrow::StructArray::Make({st_child}, {st_field}, Validity({true, false, true}));
    auto arrow_schema = arrow::schema(
        {F("x", arrow::int32(), 1), F("y", arrow::large_utf8(), 2), F("l", arrow::int32(), 3),
         F("st", st->type(), 4), F("rid", arrow::int64(), std::nullopt)},
        arrow::key_value_metadata({"k"}, {"v"}));
    batch_ = arrow::RecordBatch::Make(
        arrow_schema, 3,
        {ToArrow({Value(int32_t{1}), Value{}, Value(int32_t{3})}, arrow::int32()),
         ToArrow({Value(std::string("a")), Value{}, Value(std::string("c"))}, arrow::large_utf8()),
         ToArrow({Value(int32_t{-7}), Value(int32_t{2}), Value{}}, arrow::int32()), st,
         RidArray(3)});
  }

  std::vector<int64_t> Rows(std::string_view filter) {
    auto bound = Bind(*Parse(filter), schema_);
    EXPECT_THAT(bound, IsOk()) << filter;
    auto out = FilterBatch(**bound, schema_, batch_);
    EXPECT_THAT(out, IsOk()) << filter;
    if (!out) return {};
    EXPECT_TRUE((*out)->schema()->Equals(*batch_->schema(), /*check_metadata=*/true));
    return RowIds(*out);
  }

  Schema schema_;
  std::shared_ptr<arrow::RecordBatch> batch_;
};

TEST_F(SmallBatch, ThreeValuedLogic) {
  EXPECT_THAT(Rows("x = 1"), ElementsAre(0));
  EXPECT_THAT(Rows("not (x = 1)"), ElementsAre(2));
  EXPECT_THAT(Rows("x != 1"), ElementsAre(2));
  EXPECT_THAT(Rows("x in (1, 3)"), ElementsAre(0, 2));
  EXPECT_THAT(Rows("x not in (1, 7)"), ElementsAre(2));
  EXPECT_THAT(Rows("not (x in (1, 7))"), ElementsAre(2));
  EXPECT_THAT(Rows("not (x not in (1, 7))"), ElementsAre(0));
  EXPECT_THAT(Rows("x is null"), ElementsAre(1));
  EXPECT_THAT(Rows("x is not null"), ElementsAre(0, 2));
  EXPECT_THAT(Rows("x = 1 or y is null"), ElementsAre(0, 1));
  EXPECT_THAT(Rows("x = 1 or x != 1"), ElementsAre(0, 2));
  EXPECT_THAT(Rows("not (x = 1 and y = 'z')"), ElementsAre(0, 2));
  EXPECT_THAT(Rows("not (x > 5 or y = 'a')"), ElementsAre(2));
  EXPECT_THAT(Rows("true"), ElementsAre(0, 1, 2));
  EXPECT_THAT(Rows("false"), IsEmpty());
  EXPECT_THAT(Rows("not (x = 1 or true)"), IsEmpty());
}

TEST_F(SmallBatch, LargeStringsPromotedColumnsAndNestedFields) {
  EXPECT_THAT(Rows("y = 'c'"), ElementsAre(2));
  EXPECT_THAT(Rows("y >= 'b'"), ElementsAre(2));
  EXPECT_THAT(Rows("y in ('a', 'c')"), ElementsAre(0, 2));
  EXPECT_THAT(Rows("l < 0"), ElementsAre(0));
  EXPECT_THAT(Rows("l < 3000000000"), ElementsAre(0, 1));  // literal beyond the file's int32
  EXPECT_THAT(Rows("l in (2, 3000000000)"), ElementsAre(1));
  // The parent struct's null hides the child's 5.
  EXPECT_THAT(Rows("st.a = 5"), ElementsAre(0));
  EXPECT_THAT(Rows("st.a is null"), ElementsAre(1, 2));
}

TEST_F(SmallBatch, EvaluateBatchHasNoNulls) {
  auto bound = Bind(*Parse("x = 1"), schema_);
  auto sel = EvaluateBatch(**bound, schema_, batch_);
  ASSERT_THAT(sel, IsOk());
  EXPECT_EQ((*sel)->null_count(), 0);
  EXPECT_EQ((*sel)->length(), 3);
  auto bools = std::static_pointer_cast<arrow::BooleanArray>(*sel);
  EXPECT_EQ(std::vector<bool>({bools->Value(0), bools->Value(1), bools->Value(2)}),
            std::vector<bool>({true, false, false}));
}

TEST_F(SmallBatch, Errors) {
  Schema other = *ParseSchemaSpec("x:int, y:string, l:long, st:struct<a:int>, zz:int");
  auto bound = Bind(*Parse("zz = 1"), other);
  ASSERT_THAT(bound, IsOk());
  EXPECT_THAT(FilterBatch(**bound, other, batch_),
              IsErrorWith(ErrorKind::kInvalidArgument, "'zz'"));
  EXPECT_THAT(FilterBatch(**bound, other, nullptr),
              IsErrorWith(ErrorKind::kInvalidArgument, "batch"));
  // An unbound expression is refused, not crashed on.
  EXPECT_THAT(FilterBatch(**Parse("x = 1"), schema_, batch_),
              IsErrorWith(ErrorKind::kInvalidArgument, "not bound"));
}

TEST(FilterBatch, FallsBackToNamesAndDecodesDictionaries) {
  Schema schema = *ParseSchemaSpec("c:string, n:double");
  auto dict = arrow::DictionaryArray::FromArrays(
      arrow::dictionary(arrow::int32(), arrow::utf8()),
      ToArrow({Value(int32_t{0}), Value(int32_t{1}), Value{}, Value(int32_t{0})}, arrow::int32()),
      ToArrow({Value(std::string("se")), Value(std::string("no"))}, arrow::utf8()));
  ASSERT_TRUE(dict.ok());
  // No field-id metadata: columns are matched by name. n is a float column (promoted).
  auto batch = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("c", (*dict)->type()), arrow::field("n", arrow::float32()),
                     arrow::field("rid", arrow::int64())}),
      4,
      {*dict, ToArrow({Value(0.5f), Value(1.5f), Value(-0.0f), Value{}}, arrow::float32()),
       RidArray(4)});
  auto rows = [&](std::string_view f) { return FilteredRows(schema, batch, f); };
  EXPECT_THAT(rows("c = 'se'"), ElementsAre(0, 3));
  EXPECT_THAT(rows("c != 'se'"), ElementsAre(1));
  EXPECT_THAT(rows("n > 1.0"), ElementsAre(1));
  EXPECT_THAT(rows("n = 0"), ElementsAre(2));  // -0.0 = 0
  EXPECT_THAT(rows("n = 0.5 or c = 'no'"), ElementsAre(0, 1));
}

TEST(FilterBatch, LikeAndNaNWithNullsAndDictionaries) {
  Schema schema = *ParseSchemaSpec("c:string, s:string, n:double, f:float");
  auto dict = arrow::DictionaryArray::FromArrays(
      arrow::dictionary(arrow::int32(), arrow::utf8()),
      ToArrow({Value(int32_t{0}), Value(int32_t{1}), Value{}, Value(int32_t{2}), Value(int32_t{0})}, arrow::int32()),
      ToArrow({Value(std::string("apple")), Value(std::string("apricot")), Value(std::string("a%b"))}, arrow::utf8()));
  ASSERT_TRUE(dict.ok());
  const double nan = std::nan("");
  auto batch = arrow::RecordBatch::Make(
      arrow::schema({F("c", (*dict)->type(), 1), F("s", arrow::utf8(), 2), F("n", arrow::float64(), 3),
                     F("f", arrow::float32(), 4), arrow::field("rid", arrow::int64())}),
      5,
      {*dict,
       ToArrow({Value(std::string("ab")), Value{}, Value(std::string("")), Value(std::string("abc")),
                Value(std::string("b"))},
               arrow::utf8()),
       ToArrow({Value(nan), Value(1.0), Value{}, Value(-nan), Value(2.0)}, arrow::float64()),
       ToArrow({Value{}, Value(static_cast<float>(nan)), Value(0.0f), Value(1.0f), Value(3.0f)}, arrow::float32()),
       RidArray(5)});
  auto rows = [&](std::string_view f) { return FilteredRows(schema, batch, f); };
  EXPECT_THAT(rows("c like 'ap%'"), ElementsAre(0, 1, 4));
  EXPECT_THAT(rows("c like 'apr%'"), ElementsAre(1));
  EXPECT_THAT(rows("c like 'a\\%%'"), ElementsAre(3));
  EXPECT_THAT(rows("c not like 'apr%'"), ElementsAre(0, 3, 4));  // the null row is unknown
  EXPECT_THAT(rows("not (c like 'apr%')"), ElementsAre(0, 3, 4));
  EXPECT_THAT(rows("s like 'ab%'"), ElementsAre(0, 3));
  EXPECT_THAT(rows("s like '%'"), ElementsAre(0, 2, 3, 4));
  EXPECT_THAT(rows("s not like 'ab%'"), ElementsAre(2, 4));
  EXPECT_THAT(rows("s like 'ab'"), ElementsAre(0));
  EXPECT_THAT(rows("c like '%r%'"), ElementsAre(1));
  EXPECT_THAT(rows("c like 'a_p%'"), ElementsAre(0, 4));
  EXPECT_THAT(rows("c like 'a\\%_'"), ElementsAre(3));
  EXPECT_THAT(rows("c not like '%p%'"), ElementsAre(3));
  EXPECT_THAT(rows("s like '_'"), ElementsAre(4));
  // a null is not NaN: never unknown
  EXPECT_THAT(rows("n is nan"), ElementsAre(0, 3));
  EXPECT_THAT(rows("n is not nan"), ElementsAre(1, 2, 4));
  EXPECT_THAT(rows("not (n is nan)"), ElementsAre(1, 2, 4));
  EXPECT_THAT(rows("f is nan"), ElementsAre(1));
  EXPECT_THAT(rows("f is not nan or c like 'apr%'"), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(rows("n is nan and c like 'a%'"), ElementsAre(0, 3));
}

TEST(FilterBatch, EveryTypeEqualityAndRange) {
  Schema schema = AllTypesSchema();
  auto leaves = Leaves(schema);
  ExprGen gen(5, leaves);
  std::vector<Row> rows;
  for (int i = 0; i < 40; ++i) rows.push_back(gen.RandomRow(0.2));
  // Columns in natural Arrow types with field ids.
  arrow::FieldVector fields;
  arrow::ArrayVector arrays;
  for (const auto& leaf : leaves) {
    if (leaf.path.find('.') != std::string::npos) continue;
    std::vector<Value> col;
    for (const auto& r : rows) col.push_back(r.at(leaf.id));
    std::shared_ptr<arrow::DataType> at;
    switch (leaf.type->id) {
      case TypeId::kBoolean:
        at = arrow::boolean();
        break;
      case TypeId::kInt:
        at = arrow::int32();
        break;
      case TypeId::kLong:
        at = arrow::int64();
        break;
      case TypeId::kFloat:
        at = arrow::float32();
        break;
      case TypeId::kDouble:
        at = arrow::float64();
        break;
      case TypeId::kDecimal:
        at = arrow::decimal128(leaf.type->precision, leaf.type->scale);
        break;
      case TypeId::kDate:
        at = arrow::date32();
        break;
      case TypeId::kTime:
        at = arrow::time64(arrow::TimeUnit::MICRO);
        break;
      case TypeId::kTimestamp:
        at = arrow::timestamp(arrow::TimeUnit::MICRO);
        break;
      case TypeId::kTimestampTz:
        at = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
        break;
      case TypeId::kString:
        at = arrow::utf8();
        break;
      case TypeId::kUuid:
        at = arrow::fixed_size_binary(16);
        break;
      case TypeId::kBinary:
        at = arrow::binary();
        break;
      case TypeId::kFixed:
        at = arrow::fixed_size_binary(leaf.type->length);
        break;
      default:
        continue;
    }
    fields.push_back(F(leaf.path, at, leaf.id));
    arrays.push_back(ToArrow(col, at));
  }
  fields.push_back(F("rid", arrow::int64(), std::nullopt));
  arrays.push_back(RidArray(static_cast<int64_t>(rows.size())));
  auto batch =
      arrow::RecordBatch::Make(arrow::schema(fields), static_cast<int64_t>(rows.size()), arrays);
  for (const auto& leaf : leaves) {
    if (leaf.path.find('.') != std::string::npos) continue;
    for (Op op : {Op::kEq, Op::kLt, Op::kGtEq, Op::kIn}) {
      std::vector<Value> lits = {gen.Literal(leaf, rows)};
      if (op == Op::kIn) lits.push_back(gen.Literal(leaf, rows));
      ExprPtr e = expr_test::BoundPredicate(op, leaf, lits);
      auto out = FilterBatch(*e, schema, batch);
      ASSERT_THAT(out, IsOk()) << ToString(*e);
      std::vector<int64_t> expected;
      for (size_t i = 0; i < rows.size(); ++i)
        if (RefEval(*e, rows[i]).value_or(false)) expected.push_back(static_cast<int64_t>(i));
      EXPECT_EQ(RowIds(*out), expected) << ToString(*e);
    }
  }
}

// --- randomized: FilterBatch equals the row-by-row reference ------------------------------

TEST(FilterBatch, RandomizedMatchesReferenceEvaluator) {
  Schema schema = AllTypesSchema();
  auto leaves = Leaves(schema);
  ExprGen gen(99, leaves);
  int nonempty = 0, partial = 0;
  for (int iter = 0; iter < 300; ++iter) {
    int64_t n = gen.values().Int(0, 30);
    std::vector<Row> rows;
    for (int64_t i = 0; i < n; ++i) rows.push_back(gen.RandomRow(0.25));
    bool with_ids = iter % 3 != 0;  // sometimes match columns by name only
    bool large = iter % 2 == 0;     // sometimes large_string / large_binary
    arrow::FieldVector fields;
    arrow::ArrayVector arrays;
    std::vector<bool> struct_valid;
    for (int64_t i = 0; i < n; ++i) struct_valid.push_back(!gen.values().Chance(0.2));
    arrow::ArrayVector struct_children;
    arrow::FieldVector struct_fields;
    for (const auto& leaf : leaves) {
      std::vector<Value> col;
      for (const auto& r : rows) col.push_back(r.at(leaf.id));
      std::shared_ptr<arrow::DataType> at;
      switch (leaf.type->id) {
        case TypeId::kBoolean:
          at = arrow::boolean();
          break;
        case TypeId::kInt:
          at = arrow::int32();
          break;
        case TypeId::kLong:
          at = arrow::int64();
          break;
        case TypeId::kFloat:
          at = arrow::float32();
          break;
        case TypeId::kDouble:
          at = arrow::float64();
          break;
        case TypeId::kDecimal:
          at = arrow::decimal128(leaf.type->precision, leaf.type->scale);
          break;
        case TypeId::kDate:
          at = arrow::date32();
          break;
        case TypeId::kTime:
          at = arrow::time64(arrow::TimeUnit::MICRO);
          break;
        case TypeId::kTimestamp:
          at = arrow::timestamp(arrow::TimeUnit::MICRO);
          break;
        case TypeId::kTimestampTz:
          at = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
          break;
        case TypeId::kString:
          at = large ? arrow::large_utf8() : arrow::utf8();
          break;
        case TypeId::kUuid:
          at = arrow::fixed_size_binary(16);
          break;
        case TypeId::kBinary:
          at = large ? arrow::large_binary() : arrow::binary();
          break;
        case TypeId::kFixed:
          at = arrow::fixed_size_binary(leaf.type->length);
          break;
        default:
          continue;
      }
      std::string name = leaf.path.substr(leaf.path.find('.') + 1);
      auto field = F(leaf.path.find('.') == std::string::npos ? leaf.path : name, at,
                     with_ids ? std::optional<int>(leaf.id) : std::nullopt);
      if (leaf.path.find('.') != std::string::npos) {
        struct_children.push_back(ToArrow(col, at));
        struct_fields.push_back(field);
      } else {
        fields.push_back(field);
        arrays.push_back(ToArrow(col, at));
      }
    }
    auto st = arrow::StructArray::Make(struct_children, struct_fields, Validity(struct_valid));
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    fields.push_back(F("st", (*st)->type(), with_ids ? std::optional<int>(15) : std::nullopt));
    arrays.push_back(*st);
    fields.push_back(F("rid", arrow::int64(), std::nullopt));
    arrays.push_back(RidArray(n));
    auto batch = arrow::RecordBatch::Make(arrow::schema(fields), n, arrays);
    // A null struct makes its children null for the reference evaluator.
    for (int64_t i = 0; i < n; ++i) {
      if (!struct_valid[static_cast<size_t>(i)]) {
        rows[static_cast<size_t>(i)][16] = Value{};
        rows[static_cast<size_t>(i)][17] = Value{};
      }
    }
    for (int k = 0; k < 10; ++k) {
      ExprPtr e = gen.RandomExpr(rows, 3);
      auto out = FilterBatch(*e, schema, batch);
      ASSERT_THAT(out, IsOk()) << ToString(*e);
      std::vector<int64_t> expected;
      for (int64_t i = 0; i < n; ++i)
        if (RefEval(*e, rows[static_cast<size_t>(i)]).value_or(false)) expected.push_back(i);
      ASSERT_EQ(RowIds(*out), expected) << ToString(*e);
      if (!expected.empty()) ++nonempty;
      if (!expected.empty() && static_cast<int64_t>(expected.size()) < n) ++partial;
    }
  }
  EXPECT_GT(nonempty, 500);
  EXPECT_GT(partial, 300);
}

// --- dictionary-encoded columns: the same rows as the dense columns ---------------------

// Evaluated per dictionary entry: every operator, nulls in rows and in entries, unused and
// duplicate entries, empty dictionaries, every index width, sliced arrays, large strings.
TEST(FilterBatch, DictionaryColumnsMatchDenseColumnsAndReference) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  Schema schema = *ParseSchemaSpec("s:string, b:binary, i:int, d:double");
  auto leaves = Leaves(schema);
  ExprGen gen(1313, leaves);
  auto& vg = gen.values();
  const std::shared_ptr<arrow::DataType> index_types[] = {arrow::int8(), arrow::int16(),
                                                          arrow::int32(), arrow::int64()};
  int nonempty = 0, partial = 0, empty_dictionaries = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int64_t n = vg.Int(0, 40), lead = vg.Int(0, 2);  // `lead` rows sliced off the front
    const int64_t total = n + lead + 1;
    bool large = iter % 2 == 0;
    std::vector<Row> rows(static_cast<size_t>(total));
    arrow::FieldVector dict_fields, dense_fields;
    arrow::ArrayVector dict_arrays, dense_arrays;
    for (const auto& leaf : leaves) {
      std::vector<Value> col;
      std::shared_ptr<arrow::DataType> at;
      if (leaf.type->id == TypeId::kString || leaf.type->id == TypeId::kBinary) {
        bool str = leaf.type->id == TypeId::kString;
        at = str ? (large ? arrow::large_utf8() : arrow::utf8())
                 : (large ? arrow::large_binary() : arrow::binary());
        // Entries: a few values (duplicates allowed), sometimes a null entry, sometimes none.
        std::vector<Value> entries;
        for (int64_t k = vg.Int(0, 7); k > 0; --k)
          entries.push_back(vg.Chance(0.1) ? Value{} : vg.Random(*leaf.type, true));
        if (entries.empty()) ++empty_dictionaries;
        std::vector<Value> indices;
        for (int64_t r = 0; r < total; ++r) {
          if (entries.empty() || vg.Chance(0.2)) {
            indices.push_back(Value{});
            col.push_back(Value{});
            continue;
          }
          // Rows use only the first entries at times: the rest stay unused.
          int64_t hi = vg.Chance(0.5) ? static_cast<int64_t>(entries.size()) - 1 : 0;
          int64_t e = vg.Int(0, hi);
          indices.push_back(Value(static_cast<int32_t>(e)));
          col.push_back(entries[static_cast<size_t>(e)]);
        }
        auto index_type = vg.Pick(index_types);
        auto idx = arrow::compute::Cast(*ToArrow(indices, arrow::int32()), index_type);
        ASSERT_TRUE(idx.ok()) << idx.status().ToString();
        auto dict = arrow::DictionaryArray::FromArrays(arrow::dictionary(index_type, at), *idx,
                                                       ToArrow(entries, at));
        ASSERT_TRUE(dict.ok()) << dict.status().ToString();
        dict_fields.push_back(F(leaf.path, (*dict)->type(), leaf.id));
        dict_arrays.push_back(*dict);
      } else {
        at = leaf.type->id == TypeId::kInt ? arrow::int32() : arrow::float64();
        for (int64_t r = 0; r < total; ++r)
          col.push_back(vg.Chance(0.2) ? Value{} : vg.Random(*leaf.type, true));
        dict_fields.push_back(F(leaf.path, at, leaf.id));
        dict_arrays.push_back(ToArrow(col, at));
      }
      dense_fields.push_back(F(leaf.path, at, leaf.id));
      dense_arrays.push_back(ToArrow(col, at));
      for (int64_t r = 0; r < total; ++r) rows[static_cast<size_t>(r)][leaf.id] = col[static_cast<size_t>(r)];
    }
    dict_fields.push_back(F("rid", arrow::int64(), std::nullopt));
    dense_fields.push_back(F("rid", arrow::int64(), std::nullopt));
    dict_arrays.push_back(RidArray(total));
    dense_arrays.push_back(RidArray(total));
    auto dict_batch =
        arrow::RecordBatch::Make(arrow::schema(dict_fields), total, dict_arrays)->Slice(lead, n);
    auto dense_batch =
        arrow::RecordBatch::Make(arrow::schema(dense_fields), total, dense_arrays)->Slice(lead, n);
    std::vector<Row> kept_rows(rows.begin() + lead, rows.begin() + lead + n);
    for (int k = 0; k < 12; ++k) {
      ExprPtr e = gen.RandomExpr(kept_rows, 3);
      std::vector<int64_t> expected;
      for (int64_t r = 0; r < n; ++r)
        if (RefEval(*e, kept_rows[static_cast<size_t>(r)]).value_or(false)) expected.push_back(lead + r);
      auto on_dict = FilterBatch(*e, schema, dict_batch);
      ASSERT_THAT(on_dict, IsOk()) << ToString(*e);
      auto on_dense = FilterBatch(*e, schema, dense_batch);
      ASSERT_THAT(on_dense, IsOk()) << ToString(*e);
      ASSERT_EQ(RowIds(*on_dict), expected) << ToString(*e);
      ASSERT_EQ(RowIds(*on_dense), expected) << ToString(*e);
      // The filtered columns keep their dictionary type.
      EXPECT_TRUE((*on_dict)->schema()->Equals(*dict_batch->schema()));
      auto sel = EvaluateBatch(*e, schema, dict_batch);
      ASSERT_THAT(sel, IsOk());
      EXPECT_EQ((*sel)->null_count(), 0);
      if (!expected.empty()) ++nonempty;
      if (!expected.empty() && static_cast<int64_t>(expected.size()) < n) ++partial;
    }
  }
  EXPECT_GT(nonempty, 1000);
  EXPECT_GT(partial, 700);
  EXPECT_GT(empty_dictionaries, 20);
}

TEST(FilterBatch, DictionaryIndexOutOfRangeIsCorrupt) {
  Schema schema = *ParseSchemaSpec("s:string");
  auto type = arrow::dictionary(arrow::int32(), arrow::utf8());
  auto indices = ToArrow({Value(int32_t{0}), Value(int32_t{2})}, arrow::int32());
  // Not validated (FromArrays would refuse it): what a corrupt file could decode to.
  auto dict = std::make_shared<arrow::DictionaryArray>(
      type, indices, ToArrow({Value(std::string("a")), Value(std::string("b"))}, arrow::utf8()));
  auto batch = arrow::RecordBatch::Make(arrow::schema({F("s", type, 1)}), 2, {dict});
  EXPECT_THAT(FilterBatch(**Bind(*Parse("s = 'a'"), schema), schema, batch),
              IsErrorWith(ErrorKind::kCorrupt, "dictionary index out of range"));
}

}  // namespace
}  // namespace skade::expr
