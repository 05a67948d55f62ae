// Inclusive metrics evaluation (MightMatch).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "expr/expr_test_util.h"
#include "skade/expr/expression.h"

namespace skade::expr {
namespace {

using ::skade::expr_test::AllTypesSchema;
using ::skade::expr_test::ExprGen;
using ::skade::expr_test::IsOk;
using ::skade::expr_test::Leaf;
using ::skade::expr_test::Leaves;
using ::skade::expr_test::RefEval;
using ::skade::expr_test::Row;
using ::skade::expr_test::ValueGen;

Schema MetricsSchema() {
  return *ParseSchemaSpec(
      "id:int!, all_nulls:string, some_nulls:string, no_stats:long, s:string, f:double, "
      "big:long, x:float, g:double, no_stats_s:string");
}

std::string Ser(const TypePtr& t, const Value& v) { return *SerializeValue(*t, v); }

// 50 rows: id in [30, 79]; all_nulls all null; some_nulls 10 nulls in ["abc", "xyz"]; s in
// ["ab", "abd"] where the upper bound was truncated; f in [-0.0, -0.0]; big (a long column)
// with 4-byte int bounds [1, 10] as after int → long promotion; x all NaN.
ColumnStats Stats() {
  auto I = Type::Primitive(TypeId::kInt), S = Type::Primitive(TypeId::kString);
  auto D = Type::Primitive(TypeId::kDouble);
  ColumnStats st;
  st.record_count = 50;
  st.value_counts = {{1, 50}, {2, 50}, {3, 50}, {5, 50}, {6, 50}, {7, 50}, {8, 50}};
  st.null_value_counts = {{1, 0}, {2, 50}, {3, 10}, {5, 0}, {6, 0}, {7, 0}, {8, 0}};
  st.nan_value_counts = {{8, 50}};
  st.lower_bounds = {{1, Ser(I, Value(int32_t{30}))},
                     {3, "abc"},
                     {5, "ab"},
                     {6, Ser(D, Value(-0.0))},
                     {7, Ser(I, Value(int32_t{1}))}};
  st.upper_bounds = {{1, Ser(I, Value(int32_t{79}))},
                     {3, "xyz"},
                     {5, "abd"},
                     {6, Ser(D, Value(-0.0))},
                     {7, Ser(I, Value(int32_t{10}))}};
  return st;
}

bool Might(std::string_view text, const ColumnStats& stats = Stats()) {
  auto parsed = Parse(text);
  EXPECT_THAT(parsed, IsOk()) << text;
  auto bound = Bind(*parsed, MetricsSchema());
  EXPECT_THAT(bound, IsOk()) << text;
  return MightMatch(**bound, stats);
}

TEST(MightMatch, ComparisonsAgainstBounds) {
  EXPECT_FALSE(Might("id < 5"));
  EXPECT_FALSE(Might("id < 30"));
  EXPECT_TRUE(Might("id < 31"));
  EXPECT_FALSE(Might("id <= 29"));
  EXPECT_TRUE(Might("id <= 30"));
  EXPECT_FALSE(Might("id > 79"));
  EXPECT_TRUE(Might("id > 78"));
  EXPECT_FALSE(Might("id >= 80"));
  EXPECT_TRUE(Might("id >= 79"));
  EXPECT_FALSE(Might("id = 5"));
  EXPECT_FALSE(Might("id = 80"));
  EXPECT_TRUE(Might("id = 30"));
  EXPECT_TRUE(Might("id = 79"));
  EXPECT_TRUE(Might("5 < id"));
  EXPECT_FALSE(Might("100 < id"));
}

TEST(MightMatch, NotEqualAndNotInAlwaysMightMatch) {
  EXPECT_TRUE(Might("id != 5"));
  EXPECT_TRUE(Might("id != 30"));
  EXPECT_TRUE(Might("id not in (30, 31)"));
  EXPECT_TRUE(Might("not (id = 5)"));
}

TEST(MightMatch, InLists) {
  EXPECT_FALSE(Might("id in (5, 6, 80)"));
  EXPECT_TRUE(Might("id in (5, 30)"));
  EXPECT_TRUE(Might("id in (5, 50)"));
  EXPECT_FALSE(Might("all_nulls in ('a', 'b')"));
  // Huge in-lists are not checked value by value.
  std::string big = "id in (";
  for (int i = 0; i < 300; ++i) big += (i ? ", " : "") + std::to_string(1000 + i);
  EXPECT_TRUE(Might(big + ")"));
  std::string small = "id in (";
  for (int i = 0; i < 150; ++i) small += (i ? ", " : "") + std::to_string(1000 + i);
  EXPECT_FALSE(Might(small + ")"));
}

TEST(MightMatch, Nulls) {
  EXPECT_TRUE(Might("all_nulls is null"));
  EXPECT_FALSE(Might("all_nulls is not null"));
  EXPECT_FALSE(Might("all_nulls = 'a'"));
  EXPECT_FALSE(Might("all_nulls < 'a'"));
  EXPECT_TRUE(Might("all_nulls != 'a'"));  // not clever on purpose
  EXPECT_TRUE(Might("some_nulls is null"));
  EXPECT_TRUE(Might("some_nulls is not null"));
  EXPECT_FALSE(Might("s is null"));  // null count known to be 0
  EXPECT_TRUE(Might("no_stats is null"));
  EXPECT_TRUE(Might("no_stats is not null"));
  EXPECT_TRUE(Might("no_stats = 5"));
  EXPECT_TRUE(Might("no_stats < -100"));
}

TEST(MightMatch, NotIsPushedDown) {
  EXPECT_TRUE(Might("not (id < 5)"));                 // id >= 5
  EXPECT_FALSE(Might("not (id >= 5)"));               // id < 5
  EXPECT_FALSE(Might("not (id > 0 and id < 1000)"));  // id <= 0 or id >= 1000
  EXPECT_TRUE(Might("not (id > 0 and id < 50)"));
  EXPECT_FALSE(Might("not (all_nulls is null)"));
  EXPECT_FALSE(Might("not not (id = 5)"));
  EXPECT_FALSE(Might("not (id not in (5, 6))"));  // id in (5, 6)
  EXPECT_FALSE(Might("id < 5 or id > 100"));
  EXPECT_TRUE(Might("id < 5 or id > 70"));
  EXPECT_FALSE(Might("id > 5 and all_nulls = 'x'"));
  EXPECT_TRUE(Might("not false"));
  EXPECT_FALSE(Might("not true"));
}

TEST(MightMatch, TruncatedStringBounds) {
  EXPECT_FALSE(Might("s = 'abz'"));  // above the (truncated, incremented) upper bound
  EXPECT_TRUE(Might("s = 'abcx'"));
  EXPECT_FALSE(Might("s > 'abd'"));
  EXPECT_TRUE(Might("s >= 'abd'"));
  EXPECT_FALSE(Might("s < 'ab'"));
  EXPECT_TRUE(Might("s <= 'ab'"));
  EXPECT_FALSE(Might("s = 'a'"));
}

TEST(MightMatch, StartsWithAgainstBounds) {
  // some_nulls in ["abc", "xyz"]; s in ["ab", "abd"] (upper bound truncated)
  EXPECT_TRUE(Might("some_nulls like 'ab%'"));
  EXPECT_TRUE(Might("some_nulls like 'abc%'"));
  EXPECT_FALSE(Might("some_nulls like 'abb%'"));  // below the lower bound's prefix
  EXPECT_FALSE(Might("some_nulls like 'aa%'"));
  EXPECT_FALSE(Might("some_nulls like 'z%'"));    // above the upper bound's prefix
  EXPECT_TRUE(Might("some_nulls like 'xy%'"));
  EXPECT_TRUE(Might("some_nulls like '%'"));
  EXPECT_FALSE(Might("all_nulls like '%'"));     // unknown on a null
  EXPECT_TRUE(Might("s like 'abcdef%'"));        // longer than both bounds
  EXPECT_FALSE(Might("s like 'abe%'"));
  // not like: only when both bounds start with the prefix is every value ruled out
  EXPECT_FALSE(Might("s not like 'ab%'"));
  EXPECT_FALSE(Might("not (s like 'a%')"));
  EXPECT_TRUE(Might("s not like 'abd%'"));
  EXPECT_TRUE(Might("some_nulls not like 'a%'"));
  EXPECT_FALSE(Might("all_nulls not like 'a%'"));
  EXPECT_TRUE(Might("no_stats_s not like 'a%'"));
  // other patterns: pruned by their literal prefix only
  EXPECT_FALSE(Might("some_nulls like 'abb_%'"));
  EXPECT_TRUE(Might("some_nulls like 'ab_%'"));
  EXPECT_FALSE(Might("some_nulls like 'z%x'"));
  EXPECT_TRUE(Might("some_nulls like '%zzz'"));
  EXPECT_FALSE(Might("all_nulls like '%a_'"));
  EXPECT_TRUE(Might("s not like '%b%'"));  // not clever: `not like` with inner wildcards never prunes
}

TEST(MightMatch, NaNCounts) {
  EXPECT_TRUE(Might("x is nan"));       // all NaN
  EXPECT_FALSE(Might("x is not nan"));
  EXPECT_TRUE(Might("f is nan"));       // no NaN count known
  ColumnStats counted = Stats();
  counted.nan_value_counts[6] = 0;
  EXPECT_FALSE(Might("f is nan", counted));
  EXPECT_TRUE(Might("f is not nan", counted));
  EXPECT_FALSE(Might("not (x is nan)"));
  EXPECT_TRUE(Might("g is not nan"));
  ColumnStats nulls = Stats();           // x: 20 nulls, 30 NaNs: the nulls are not NaN
  nulls.null_value_counts[8] = 20;
  nulls.nan_value_counts[8] = 30;
  EXPECT_TRUE(Might("x is not nan", nulls));
  nulls.null_value_counts[8] = 50;
  nulls.nan_value_counts[8] = 0;
  EXPECT_FALSE(Might("x is nan", nulls));
  EXPECT_TRUE(Might("x is not nan", nulls));
}

TEST(MightMatch, FloatingPointAndPromotedBounds) {
  EXPECT_TRUE(Might("f = 0.0"));  // -0.0 = 0.0 in SQL
  EXPECT_TRUE(Might("f >= 0"));
  EXPECT_TRUE(Might("f <= 0"));
  EXPECT_FALSE(Might("f > 0"));
  EXPECT_FALSE(Might("f < 0"));
  EXPECT_FALSE(Might("x > 0"));  // every value is NaN
  EXPECT_TRUE(Might("x is not null"));
  EXPECT_FALSE(Might("big > 10"));
  EXPECT_TRUE(Might("big >= 10"));
  EXPECT_FALSE(Might("big < 1"));
}

TEST(MightMatch, EdgeCases) {
  ColumnStats empty;
  empty.record_count = 0;
  EXPECT_FALSE(Might("true", empty));
  EXPECT_FALSE(Might("id = 5 or id is null", empty));
  ColumnStats unknown;  // nothing known at all
  EXPECT_TRUE(Might("id = 5 and s > 'x' and all_nulls is null", unknown));
  ColumnStats corrupt = Stats();
  corrupt.lower_bounds[1] = "xx";  // undecodable: treated as missing
  EXPECT_TRUE(Might("id < 5", corrupt));
  EXPECT_FALSE(Might("id > 100", corrupt));
  EXPECT_TRUE(Might("true"));
  EXPECT_FALSE(Might("false"));
}

// --- randomized: never prune a file that has a matching row ------------------------------

std::string Utf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

std::vector<uint32_t> CodePoints(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? c : c & (0xFF >> (n + 1));
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

// Iceberg's truncate(n) metrics: lower = prefix; upper = prefix with its last code point
// (byte for binary) incremented, or no bound when that overflows.
std::optional<std::string> TruncateBound(const Type& type, const std::string& v, size_t n,
                                         bool upper) {
  if (type.id == TypeId::kString) {
    auto cps = CodePoints(v);
    if (cps.size() <= n) return v;
    cps.resize(n);
    if (upper) {
      while (!cps.empty()) {
        uint32_t next = cps.back() + 1;
        if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;
        if (next <= 0x10FFFF) {
          cps.back() = next;
          break;
        }
        cps.pop_back();
      }
      if (cps.empty()) return std::nullopt;
    }
    std::string out;
    for (auto cp : cps) out += Utf8(cp);
    return out;
  }
  if (v.size() <= n) return v;
  std::string out = v.substr(0, n);
  if (upper) {
    while (!out.empty() && static_cast<unsigned char>(out.back()) == 0xFF) out.pop_back();
    if (out.empty()) return std::nullopt;
    out.back() = static_cast<char>(static_cast<unsigned char>(out.back()) + 1);
  }
  return out;
}

ColumnStats StatsOf(const std::vector<Row>& rows, const std::vector<Leaf>& leaves, ValueGen& g) {
  ColumnStats st;
  st.record_count = static_cast<int64_t>(rows.size());
  for (const auto& leaf : leaves) {
    int64_t nulls = 0;
    std::optional<Value> lo, hi;
    for (const auto& row : rows) {
      const Value& v = row.at(leaf.id);
      if (IsNull(v)) {
        ++nulls;
        continue;
      }
      if (!lo || CompareValues(v, *lo) < 0) lo = v;
      if (!hi || CompareValues(v, *hi) > 0) hi = v;
    }
    // Writers may omit any statistic.
    if (!g.Chance(0.1)) st.value_counts[leaf.id] = static_cast<int64_t>(rows.size());
    if (!g.Chance(0.1)) st.null_value_counts[leaf.id] = nulls;
    bool truncatable = leaf.type->id == TypeId::kString || leaf.type->id == TypeId::kBinary;
    size_t width = static_cast<size_t>(g.Int(1, 3));
    if (lo && !g.Chance(0.1)) {
      std::string bytes = *SerializeValue(*leaf.type, *lo);
      if (truncatable && g.Chance(0.5)) {
        if (auto t = TruncateBound(*leaf.type, bytes, width, false)) st.lower_bounds[leaf.id] = *t;
      } else {
        st.lower_bounds[leaf.id] = bytes;
      }
    }
    if (hi && !g.Chance(0.1)) {
      std::string bytes = *SerializeValue(*leaf.type, *hi);
      if (truncatable && g.Chance(0.5)) {
        if (auto t = TruncateBound(*leaf.type, bytes, width, true)) st.upper_bounds[leaf.id] = *t;
      } else {
        st.upper_bounds[leaf.id] = bytes;
      }
    }
  }
  return st;
}

TEST(MightMatch, RandomizedNeverPrunesAMatchingFile) {
  Schema schema = AllTypesSchema();
  ExprGen gen(42, Leaves(schema));
  int pruned = 0, matched = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::vector<Row> rows;
    double null_chance = gen.values().Pick(std::vector<double>{0.0, 0.2, 0.6, 1.0});
    for (int64_t n = gen.values().Int(0, 6); n > 0; --n) rows.push_back(gen.RandomRow(null_chance));
    ColumnStats stats = StatsOf(rows, gen.leaves(), gen.values());
    ExprPtr e = gen.RandomExpr(rows, 3);
    bool any = false;
    for (const auto& row : rows) any = any || RefEval(*e, row).value_or(false);
    bool might = MightMatch(*e, stats);
    if (any) {
      ++matched;
      ASSERT_TRUE(might) << ToString(*e) << " pruned although a row matches";
    }
    if (!might) ++pruned;
  }
  // The property is only meaningful if both sides happen often.
  EXPECT_GT(pruned, 400);
  EXPECT_GT(matched, 400);
}

}  // namespace
}  // namespace skade::expr
