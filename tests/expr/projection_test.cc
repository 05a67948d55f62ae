// Inclusive projection onto partition specs, partition-tuple evaluation and manifest
// summary evaluation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "expr/expr_test_util.h"
#include "skade/expr/expression.h"

namespace skade::expr {
namespace {

using ::skade::expr_test::AllTypesSchema;
using ::skade::expr_test::ExprGen;
using ::skade::expr_test::IsOk;
using ::skade::expr_test::Leaves;
using ::skade::expr_test::RefEval;
using ::skade::expr_test::Row;

Schema ProjSchema() {
  return *ParseSchemaSpec(
      "id:long, name:string, ts:timestamp, d:date, price:decimal(10,2), b:binary, n:int");
}

struct Projected {
  PartitionSpec spec;
  ExprPtr expr;
  std::string text;
};

Projected Project(std::string_view partitioning, std::string_view filter) {
  Schema schema = ProjSchema();
  auto spec = ParsePartitionSpec(partitioning, schema);
  EXPECT_THAT(spec, IsOk()) << partitioning;
  auto bound = Bind(*Parse(filter), schema);
  EXPECT_THAT(bound, IsOk()) << filter;
  auto projected = ProjectToPartition(**bound, *spec, schema);
  EXPECT_THAT(projected, IsOk());
  return {*spec, *projected, ToString(**projected)};
}

std::string ProjText(std::string_view partitioning, std::string_view filter) {
  return Project(partitioning, filter).text;
}

TEST(ProjectToPartition, Identity) {
  EXPECT_EQ(ProjText("name", "name = 'x' and id > 3"), "name = 'x'");
  EXPECT_EQ(ProjText("name", "name in ('b', 'a')"), "name in ('a', 'b')");
  EXPECT_EQ(ProjText("name", "name != 'x'"), "name != 'x'");
  EXPECT_EQ(ProjText("name", "name is null"), "name is null");
  auto p = Project("n", "n < 3");
  EXPECT_EQ(p.expr->field_id, 1000);
  EXPECT_EQ(p.expr->type->id, TypeId::kInt);
}

TEST(ProjectToPartition, Bucket) {
  int32_t b34 = (2017239379 & 0x7fffffff) % 16;
  EXPECT_EQ(ProjText("bucket(16, id)", "id = 34"), "id_bucket = " + std::to_string(b34));
  auto in = Project("bucket(16, id)", "id in (34, 35)");
  EXPECT_EQ(in.expr->op, Op::kIn);
  EXPECT_EQ(in.expr->literals.size(), 2u);
  EXPECT_EQ(ProjText("bucket(16, id)", "id < 34"), "true");
  EXPECT_EQ(ProjText("bucket(16, id)", "id != 34"), "true");
  EXPECT_EQ(ProjText("bucket(16, id)", "id not in (34)"), "true");
  EXPECT_EQ(ProjText("bucket(16, id)", "id is null"), "id_bucket is null");
  EXPECT_EQ(ProjText("bucket(16, id)", "id is not null"), "id_bucket is not null");
  // NOT is pushed down before projecting.
  EXPECT_EQ(ProjText("bucket(16, id)", "not (id != 34)"), "id_bucket = " + std::to_string(b34));
  EXPECT_EQ(ProjText("bucket(16, id)", "not (id = 34)"), "true");
}

TEST(ProjectToPartition, TruncateIntegersAndDecimals) {
  EXPECT_EQ(ProjText("truncate(10, id)", "id = 25"), "id_trunc = 20");
  EXPECT_EQ(ProjText("truncate(10, id)", "id < 25"), "id_trunc <= 20");
  EXPECT_EQ(ProjText("truncate(10, id)", "id < 20"), "id_trunc <= 10");  // x < 20 ⇔ x <= 19
  EXPECT_EQ(ProjText("truncate(10, id)", "id <= 20"), "id_trunc <= 20");
  EXPECT_EQ(ProjText("truncate(10, id)", "id > 29"), "id_trunc >= 30");  // x > 29 ⇔ x >= 30
  EXPECT_EQ(ProjText("truncate(10, id)", "id >= 25"), "id_trunc >= 20");
  EXPECT_EQ(ProjText("truncate(10, id)", "id > -1"), "id_trunc >= 0");
  EXPECT_EQ(ProjText("truncate(10, id)", "id in (1, 5, 12)"), "id_trunc in (0, 10)");
  EXPECT_EQ(ProjText("truncate(10, id)", "id != 5"), "true");
  EXPECT_EQ(ProjText("truncate(10, id)", "not (id < 25)"), "id_trunc >= 20");
  EXPECT_EQ(ProjText("truncate(100, price)", "price = 12.34"), "price_trunc = 12.00");
  EXPECT_EQ(ProjText("truncate(100, price)", "price < 12.00"), "price_trunc <= 11.00");
}

TEST(ProjectToPartition, TruncateStringsAndBinary) {
  EXPECT_EQ(ProjText("truncate(2, name)", "name = 'abcd'"), "name_trunc = 'ab'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name < 'abcd'"), "name_trunc <= 'ab'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name >= 'abcd'"), "name_trunc >= 'ab'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name > 'a'"), "name_trunc >= 'a'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name in ('abc', 'abd', 'x')"),
            "name_trunc in ('ab', 'x')");
  EXPECT_EQ(ProjText("truncate(2, b)", "b = '0x010203'"), "b_trunc = '0x0102'");
  // like: a prefix no longer than the width carries over; a longer one fixes the value
  EXPECT_EQ(ProjText("truncate(2, name)", "name like 'a%'"), "name_trunc like 'a%'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name like 'ab%'"), "name_trunc like 'ab%'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name like 'abc%'"), "name_trunc = 'ab'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name like 'åäö%'"), "name_trunc = 'åä'");  // characters, not bytes
  EXPECT_EQ(ProjText("truncate(3, name)", "name like 'åäö%'"), "name_trunc like 'åäö%'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name not like 'ab%'"), "name_trunc not like 'ab%'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name not like 'abc%'"), "true");
  EXPECT_EQ(ProjText("truncate(2, name)", "not (name like 'a%')"), "name_trunc not like 'a%'");
  EXPECT_EQ(ProjText("name", "name like 'a\\%%'"), "name like 'a\\%%'");
  EXPECT_EQ(ProjText("bucket(4, name)", "name like 'a%'"), "true");
  // other patterns project their literal prefix
  EXPECT_EQ(ProjText("truncate(2, name)", "name like 'a_c%'"), "name_trunc like 'a%'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name like 'abc%d'"), "name_trunc = 'ab'");
  EXPECT_EQ(ProjText("truncate(2, name)", "name like '%abc'"), "true");
  EXPECT_EQ(ProjText("truncate(2, name)", "name not like 'a_c%'"), "true");
  EXPECT_EQ(ProjText("name", "name like 'a_c%'"), "name like 'a_c%'");
}

TEST(ProjectToPartition, TimeTransforms) {
  EXPECT_EQ(ProjText("day(ts)", "ts = '2024-01-31T12:00:00'"), "ts_day = '2024-01-31'");
  EXPECT_EQ(ProjText("day(ts)", "ts < '2024-01-31T00:00:00'"), "ts_day <= '2024-01-30'");
  EXPECT_EQ(ProjText("day(ts)", "ts <= '2024-01-31T00:00:00'"), "ts_day <= '2024-01-31'");
  EXPECT_EQ(ProjText("day(ts)", "ts > '2024-01-31T23:59:59.999999'"), "ts_day >= '2024-02-01'");
  EXPECT_EQ(ProjText("day(ts)", "ts >= '2024-01-31T12:00:00'"), "ts_day >= '2024-01-31'");
  EXPECT_EQ(ProjText("day(ts)", "ts != '2024-01-31T12:00:00'"), "true");
  EXPECT_EQ(ProjText("hour(ts)", "ts >= '1970-01-01T01:30'"), "ts_hour >= 1");
  EXPECT_EQ(ProjText("hour(ts)", "ts < '1970-01-01'"), "ts_hour <= -1");
  EXPECT_EQ(ProjText("month(ts)", "ts < '1970-03-01'"), "ts_month <= 1");
  EXPECT_EQ(ProjText("year(d)", "d < '2024-01-01'"), "d_year <= 53");
  EXPECT_EQ(ProjText("year(d)", "d >= '2024-06-01'"), "d_year >= 54");
  EXPECT_EQ(ProjText("month(d)", "d in ('2024-01-01', '2024-01-31', '2024-02-01')"),
            "d_month in (648, 649)");
  EXPECT_EQ(ProjText("day(d)", "d > '2024-01-31'"), "d_day >= '2024-02-01'");
}

TEST(ProjectToPartition, SeveralFieldsAndCombinations) {
  EXPECT_EQ(ProjText("day(ts), bucket(4, ts) as tb", "ts = '1970-01-02T00:00:00'"),
            "ts_day = '1970-01-02' and tb = " +
                std::to_string((*BucketHash(*Type::Primitive(TypeId::kTimestamp),
                                            Value(int64_t{86400000000})) &
                                0x7fffffff) %
                               4));
  EXPECT_EQ(ProjText("bucket(4, id)", "id = 1 or name = 'x'"), "true");
  EXPECT_EQ(ProjText("truncate(10, id), name", "id > 5 and name = 'x' and d is null"),
            "id_trunc >= 0 and name = 'x'");
  EXPECT_EQ(ProjText("truncate(10, id), name", "not (id <= 5 or name != 'x')"),
            "id_trunc >= 0 and name = 'x'");
  EXPECT_EQ(ProjText("void(id)", "id = 5"), "true");
  EXPECT_EQ(ProjText("void(id)", "id is null"), "true");
  EXPECT_EQ(ProjText("name", "false or name = 'x'"), "name = 'x'");
  EXPECT_EQ(ProjText("name", "id = 1"), "true");
  EXPECT_EQ(ProjText("", "id = 1"), "true");
}

TEST(EvaluatePartition, TwoValuedWithPushedDownNot) {
  auto p = Project("name, truncate(10, id)", "name = 'x' and id >= 25");
  EXPECT_TRUE(EvaluatePartition(*p.expr, p.spec, {Value(std::string("x")), Value(int64_t{20})}));
  EXPECT_FALSE(EvaluatePartition(*p.expr, p.spec, {Value(std::string("y")), Value(int64_t{20})}));
  EXPECT_FALSE(EvaluatePartition(*p.expr, p.spec, {Value(std::string("x")), Value(int64_t{10})}));
  EXPECT_FALSE(EvaluatePartition(*p.expr, p.spec, {Value{}, Value(int64_t{30})}));
  auto nulls = Project("name", "name is null");
  EXPECT_TRUE(EvaluatePartition(*nulls.expr, nulls.spec, {Value{}}));
  EXPECT_FALSE(EvaluatePartition(*nulls.expr, nulls.spec, {Value(std::string("x"))}));
  // NOT over a partition predicate keeps "null compares false".
  auto eq = Project("name", "name = 'x'");
  ExprPtr negated = Not(eq.expr);
  EXPECT_FALSE(EvaluatePartition(*negated, eq.spec, {Value{}}));
  EXPECT_TRUE(EvaluatePartition(*negated, eq.spec, {Value(std::string("y"))}));
  auto ne = Project("name", "name not in ('a', 'b')");
  EXPECT_FALSE(EvaluatePartition(*ne.expr, ne.spec, {Value{}}));
  EXPECT_TRUE(EvaluatePartition(*ne.expr, ne.spec, {Value(std::string("c"))}));
  EXPECT_FALSE(EvaluatePartition(*ne.expr, ne.spec, {Value(std::string("a"))}));
}

TEST(ManifestMightMatch, Summaries) {
  auto p = Project("truncate(10, id)", "id >= 25");
  auto L = Type::Primitive(TypeId::kLong);
  std::vector<TypePtr> types = {L};
  auto summary = [&](std::optional<int64_t> lo, std::optional<int64_t> hi, bool nulls) {
    PartitionFieldSummary s;
    s.contains_null = nulls;
    if (lo) s.lower_bound = *SerializeValue(*L, Value(*lo));
    if (hi) s.upper_bound = *SerializeValue(*L, Value(*hi));
    return std::vector<PartitionFieldSummary>{s};
  };
  EXPECT_TRUE(ManifestMightMatch(*p.expr, p.spec, types, summary(0, 30, false)));
  EXPECT_TRUE(ManifestMightMatch(*p.expr, p.spec, types, summary(0, 20, false)));
  EXPECT_FALSE(ManifestMightMatch(*p.expr, p.spec, types, summary(0, 10, true)));
  EXPECT_FALSE(
      ManifestMightMatch(*p.expr, p.spec, types, summary(std::nullopt, std::nullopt, true)));
  EXPECT_TRUE(
      ManifestMightMatch(*p.expr, p.spec, types, summary(std::nullopt, std::nullopt, false)));
  auto isnull = Project("truncate(10, id)", "id is null");
  EXPECT_FALSE(ManifestMightMatch(*isnull.expr, isnull.spec, types, summary(0, 10, false)));
  EXPECT_TRUE(ManifestMightMatch(*isnull.expr, isnull.spec, types, summary(0, 10, true)));
  auto notnull = Project("truncate(10, id)", "id is not null");
  EXPECT_FALSE(ManifestMightMatch(*notnull.expr, notnull.spec, types,
                                  summary(std::nullopt, std::nullopt, true)));
  EXPECT_TRUE(ManifestMightMatch(*notnull.expr, notnull.spec, types, summary(0, 0, true)));
  auto in = Project("truncate(10, id)", "id in (5, 99)");
  EXPECT_FALSE(ManifestMightMatch(*in.expr, in.spec, types, summary(10, 80, false)));
  EXPECT_TRUE(ManifestMightMatch(*in.expr, in.spec, types, summary(10, 90, false)));
  auto ne = Project("name", "name != 'x'");
  PartitionFieldSummary only_x;
  only_x.contains_null = false;
  only_x.lower_bound = only_x.upper_bound = "x";
  EXPECT_TRUE(ManifestMightMatch(*ne.expr, ne.spec, {Type::Primitive(TypeId::kString)}, {only_x}));
  EXPECT_TRUE(ManifestMightMatch(*True(), ne.spec, {}, {}));
  EXPECT_FALSE(ManifestMightMatch(*False(), ne.spec, {}, {}));
}

// --- randomized: projection is inclusive for every transform -----------------------------

PartitionSpec EveryTransformSpec(const Schema& schema) {
  struct F {
    const char* column;
    Transform t;
  };
  using K = TransformKind;
  const F fields[] = {
      {"bo", {K::kIdentity, 0}},    {"i", {K::kIdentity, 0}}, {"i", {K::kBucket, 3}},
      {"i", {K::kTruncate, 5}},     {"l", {K::kBucket, 4}},   {"l", {K::kTruncate, 7}},
      {"l", {K::kVoid, 0}},         {"f", {K::kIdentity, 0}}, {"d", {K::kIdentity, 0}},
      {"dec", {K::kTruncate, 100}}, {"dec", {K::kBucket, 5}}, {"dec", {K::kIdentity, 0}},
      {"dt", {K::kYear, 0}},        {"dt", {K::kMonth, 0}},   {"dt", {K::kDay, 0}},
      {"dt", {K::kBucket, 4}},      {"t", {K::kIdentity, 0}}, {"t", {K::kBucket, 3}},
      {"ts", {K::kYear, 0}},        {"ts", {K::kMonth, 0}},   {"ts", {K::kDay, 0}},
      {"ts", {K::kHour, 0}},        {"tz", {K::kDay, 0}},     {"tz", {K::kHour, 0}},
      {"tz", {K::kBucket, 2}},      {"s", {K::kTruncate, 2}}, {"s", {K::kBucket, 4}},
      {"s", {K::kIdentity, 0}},     {"u", {K::kBucket, 4}},   {"u", {K::kIdentity, 0}},
      {"b", {K::kTruncate, 2}},     {"b", {K::kBucket, 3}},   {"b", {K::kIdentity, 0}},
      {"fx", {K::kIdentity, 0}},    {"fx", {K::kBucket, 2}},  {"st.a", {K::kTruncate, 3}},
      {"st.c", {K::kTruncate, 1}},
  };
  std::vector<PartitionField> out;
  for (const auto& f : fields) {
    const NestedField* src = schema.FindByPath(f.column);
    EXPECT_NE(src, nullptr) << f.column;
    int id = 1000 + static_cast<int>(out.size());
    out.push_back(PartitionField{src->id, id, "p" + std::to_string(id), f.t});
  }
  return PartitionSpec(0, std::move(out));
}

std::vector<Value> TupleOf(const Row& row, const PartitionSpec& spec, const Schema& schema) {
  std::vector<Value> tuple;
  for (const auto& f : spec.fields()) {
    auto v = f.transform.Apply(*schema.FindField(f.source_id)->type, row.at(f.source_id));
    EXPECT_THAT(v, IsOk());
    tuple.push_back(v.value_or(Value{}));
  }
  return tuple;
}

TEST(ProjectToPartition, RandomizedProjectionIsInclusive) {
  Schema schema = AllTypesSchema();
  PartitionSpec spec = EveryTransformSpec(schema);
  auto ptype = spec.PartitionType(schema);
  ASSERT_THAT(ptype, IsOk());
  std::vector<TypePtr> types;
  for (const auto& f : (*ptype)->fields) types.push_back(f.type);
  ExprGen gen(7, Leaves(schema));
  int rejected_rows = 0, rejected_manifests = 0, matching_rows = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<Row> rows;
    for (int64_t n = gen.values().Int(1, 6); n > 0; --n) rows.push_back(gen.RandomRow(0.15));
    ExprPtr e = gen.RandomExpr(rows, 3);
    auto projected = ProjectToPartition(*e, spec, schema);
    ASSERT_THAT(projected, IsOk());
    // Manifest summary over the partition tuples of all rows (one file per row).
    std::vector<PartitionFieldSummary> summaries(spec.fields().size());
    for (auto& s : summaries) s.contains_null = false;
    std::vector<std::optional<Value>> lo(spec.fields().size()), hi(spec.fields().size());
    bool any = false;
    for (const auto& row : rows) {
      std::vector<Value> tuple = TupleOf(row, spec, schema);
      bool matches = RefEval(*e, row).value_or(false);
      bool part = EvaluatePartition(**projected, spec, tuple);
      if (matches) {
        ++matching_rows;
        any = true;
        ASSERT_TRUE(part) << "row matches " << ToString(*e) << " but its partition fails "
                          << ToString(**projected);
      }
      if (!part) ++rejected_rows;
      for (size_t k = 0; k < tuple.size(); ++k) {
        if (IsNull(tuple[k])) {
          summaries[k].contains_null = true;
          continue;
        }
        if (!lo[k] || CompareValues(tuple[k], *lo[k]) < 0) lo[k] = tuple[k];
        if (!hi[k] || CompareValues(tuple[k], *hi[k]) > 0) hi[k] = tuple[k];
      }
    }
    for (size_t k = 0; k < summaries.size(); ++k) {
      if (lo[k]) summaries[k].lower_bound = *SerializeValue(*types[k], *lo[k]);
      if (hi[k]) summaries[k].upper_bound = *SerializeValue(*types[k], *hi[k]);
    }
    bool manifest = ManifestMightMatch(**projected, spec, types, summaries);
    if (any) {
      ASSERT_TRUE(manifest) << ToString(*e) << " → " << ToString(**projected);
    }
    if (!manifest) ++rejected_manifests;
  }
  EXPECT_GT(matching_rows, 1000);
  EXPECT_GT(rejected_rows, 1000);
  EXPECT_GT(rejected_manifests, 100);
}

}  // namespace
}  // namespace skade::expr
