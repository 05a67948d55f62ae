// Parsing, binding and printing of row filters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "expr/expr_test_util.h"
#include "skade/expr/expression.h"

namespace skade::expr {
namespace {

using ::skade::expr_test::AllTypesSchema;
using ::skade::expr_test::ExprGen;
using ::skade::expr_test::IsError;
using ::skade::expr_test::IsErrorWith;
using ::skade::expr_test::IsOk;
using ::skade::expr_test::Leaves;
using ::testing::HasSubstr;

ExprPtr P(std::string_view text) {
  auto e = Parse(text);
  EXPECT_THAT(e, IsOk()) << text;
  return e.value_or(True());
}

std::string Reprint(std::string_view text) { return ToString(*P(text)); }

TEST(Parse, PrecedenceNotAndOr) {
  ExprPtr e = P("a = 1 or b = 2 and c = 3");
  ASSERT_EQ(e->op, Op::kOr);
  EXPECT_EQ(e->children[0]->column, "a");
  EXPECT_EQ(e->children[1]->op, Op::kAnd);
  e = P("not a = 1 and b = 2");
  ASSERT_EQ(e->op, Op::kAnd);
  EXPECT_EQ(e->children[0]->op, Op::kNot);
  e = P("(a = 1 or b = 2) and c = 3");
  ASSERT_EQ(e->op, Op::kAnd);
  EXPECT_EQ(e->children[0]->op, Op::kOr);
  EXPECT_EQ(Reprint("a = 1 or b = 2 and c = 3"), "a = 1 or (b = 2 and c = 3)");
  EXPECT_EQ(Reprint("not not a = 1"), "not (not a = 1)");
  EXPECT_EQ(Reprint("a = 1 AND b = 2 And c = 3"), "(a = 1 and b = 2) and c = 3");
}

TEST(Parse, PredicatesAndLiterals) {
  ExprPtr e = P("country = 'SE'");
  EXPECT_EQ(e->op, Op::kEq);
  EXPECT_EQ(e->column, "country");
  ASSERT_EQ(e->unbound_literals.size(), 1u);
  EXPECT_EQ(e->unbound_literals[0].kind, UnboundLiteral::Kind::kString);
  EXPECT_EQ(e->unbound_literals[0].text, "SE");
  EXPECT_EQ(P("x >= -12")->unbound_literals[0].text, "-12");
  EXPECT_EQ(P("x >= -12")->unbound_literals[0].kind, UnboundLiteral::Kind::kInteger);
  EXPECT_EQ(P("x < 1.5e-3")->unbound_literals[0].kind, UnboundLiteral::Kind::kFloat);
  EXPECT_EQ(P("x < 1.5e-3")->unbound_literals[0].text, "1.5e-3");
  EXPECT_EQ(P("x < .5")->unbound_literals[0].text, ".5");
  EXPECT_EQ(P("x < +7")->unbound_literals[0].text, "7");
  EXPECT_EQ(P("x = 'it''s'")->unbound_literals[0].text, "it's");
  EXPECT_EQ(P("x = ''")->unbound_literals[0].text, "");
  EXPECT_EQ(P("x = TRUE")->unbound_literals[0].kind, UnboundLiteral::Kind::kBool);
  EXPECT_EQ(P("x != 1")->op, Op::kNotEq);
  EXPECT_EQ(P("x <> 1")->op, Op::kNotEq);
  EXPECT_EQ(P("x == 1")->op, Op::kEq);
  EXPECT_EQ(P("x<=1")->op, Op::kLtEq);
  EXPECT_EQ(P("x is null")->op, Op::kIsNull);
  EXPECT_EQ(P("x IS NOT NULL")->op, Op::kNotNull);
  e = P("id in (1, 2, 3)");
  EXPECT_EQ(e->op, Op::kIn);
  EXPECT_EQ(e->unbound_literals.size(), 3u);
  EXPECT_EQ(P("id not in ('a')")->op, Op::kNotIn);
  // A bare column is a boolean test.
  e = P("vip");
  EXPECT_EQ(e->op, Op::kEq);
  EXPECT_EQ(e->unbound_literals[0].kind, UnboundLiteral::Kind::kBool);
  // Literal first: 5 < x ⇒ x > 5.
  e = P("5 < x");
  EXPECT_EQ(e->op, Op::kGt);
  EXPECT_EQ(e->column, "x");
  EXPECT_EQ(P("true")->op, Op::kTrue);
  EXPECT_EQ(P("false or x = 1")->op, Op::kOr);
  EXPECT_EQ(P("addr.city = 'Oslo'")->column, "addr.city");
  EXPECT_EQ(P("\"my col\" = 1")->column, "my col");
  EXPECT_EQ(P("`and` = 1")->column, "and");
  EXPECT_EQ(P("\"a\"\"b\" = 1")->column, "a\"b");
}

TEST(Parse, Errors) {
  auto err = [](std::string_view text) {
    auto e = Parse(text);
    EXPECT_THAT(e, IsError(ErrorKind::kInvalidArgument)) << text;
    return e.has_value() ? std::string() : e.error().message;
  };
  EXPECT_THAT(err(""), HasSubstr("empty"));
  EXPECT_THAT(err("a = "), HasSubstr("position 5: expected a literal"));
  EXPECT_THAT(err("a = 1 and"), HasSubstr("position 10"));
  EXPECT_THAT(err("a = 1 and"), HasSubstr("end of input"));
  EXPECT_THAT(err("(a = 1"), HasSubstr("expected ')'"));
  EXPECT_THAT(err("a = 'x"), HasSubstr("unterminated string"));
  EXPECT_THAT(err("a = null"), HasSubstr("is null"));
  EXPECT_THAT(err("a in (1, null)"), HasSubstr("is null"));
  EXPECT_THAT(err("a in ()"), HasSubstr("expected a literal"));
  EXPECT_THAT(err("a not 5"), HasSubstr("expected 'in', 'between' or 'like' after 'not'"));
  EXPECT_THAT(err("= 5"), HasSubstr("position 1"));
  EXPECT_THAT(err("a = 1 b = 2"), HasSubstr("position 7"));
  EXPECT_THAT(err("a is 5"), HasSubstr("'null' or 'nan' after 'is'"));
  EXPECT_THAT(err("a between 1"), HasSubstr("'and' between the two ends"));
  EXPECT_THAT(err("a between 1 and"), HasSubstr("expected a literal"));
  EXPECT_THAT(err("a like 5"), HasSubstr("a 'pattern' after 'like'"));
  EXPECT_THAT(err("a like 'x\\'"), HasSubstr("lone '\\'"));
  EXPECT_THAT(err("a = 1 ; drop"), HasSubstr("unexpected character ';'"));
  EXPECT_THAT(err("a ! 1"), HasSubstr("'!='"));
  EXPECT_THAT(err("a = 12abc"), HasSubstr("in number"));
  EXPECT_THAT(err("a = -'x'"), HasSubstr("number after the sign"));
  EXPECT_THAT(err("and = 1"), HasSubstr("expected a column"));
  EXPECT_THAT(err("a = 1)"), HasSubstr("end of the filter"));
  EXPECT_THAT(err("\"\" = 1"), HasSubstr("empty quoted"));
  EXPECT_THAT(err(std::string(1000, '(') + "a = 1" + std::string(1000, ')')), HasSubstr("deeply"));
  std::string nots;
  for (int i = 0; i < 1000; ++i) nots += "not ";
  EXPECT_THAT(err(nots + "a"), HasSubstr("deeply"));
}

TEST(Parse, BetweenLikeAndNaN) {
  EXPECT_EQ(Reprint("x between 1 and 5"), "x >= 1 and x <= 5");
  EXPECT_EQ(Reprint("x not between -1 and 'b' and y = 2"), "(x < -1 or x > 'b') and y = 2");
  EXPECT_EQ(Reprint("x BETWEEN 1 AND 5 or y"), "(x >= 1 and x <= 5) or y = true");
  ExprPtr e = P("name like 'ab%'");
  EXPECT_EQ(e->op, Op::kStartsWith);
  EXPECT_EQ(e->unbound_literals[0].text, "ab");
  EXPECT_EQ(P("name NOT LIKE 'ab%'")->op, Op::kNotStartsWith);
  EXPECT_EQ(P("name like '%'")->unbound_literals[0].text, "");
  // without a wildcard: equality; escapes make wildcards plain characters
  EXPECT_EQ(P("name like 'ab'")->op, Op::kEq);
  EXPECT_EQ(P("name not like 'ab'")->op, Op::kNotEq);
  EXPECT_EQ(P("name like 'a\\_b\\%c\\\\%'")->unbound_literals[0].text, "a_b%c\\");
  EXPECT_EQ(Reprint("name like 'a\\_b\\%%'"), "name like 'a\\_b\\%%'");
  EXPECT_EQ(Reprint("name like 'it''s%'"), "name like 'it''s%'");
  // any other pattern is SQL's like, kept as written
  e = P("name like 'a_b%'");
  EXPECT_EQ(e->op, Op::kLike);
  EXPECT_EQ(e->unbound_literals[0].text, "a_b%");
  EXPECT_EQ(P("name not like '%x'")->op, Op::kNotLike);
  EXPECT_EQ(P("name like 'x%%'")->op, Op::kLike);
  EXPECT_EQ(P("name like 'x\\%y_'")->unbound_literals[0].text, "x\\%y_");
  EXPECT_EQ(Reprint("not (name like '%a\\_b%')"), "not name like '%a\\_b%'");
  EXPECT_EQ(P("x is nan")->op, Op::kIsNaN);
  EXPECT_EQ(P("x IS NOT NaN")->op, Op::kNotNaN);
  EXPECT_EQ(Reprint("not (x is nan)"), "not x is nan");
  // the words stay usable as column names
  EXPECT_EQ(P("like like 'a%'")->column, "like");
  EXPECT_EQ(P("between between 1 and 2")->children[0]->column, "between");
  EXPECT_EQ(P("nan is not nan")->column, "nan");
}

TEST(Parse, ToStringReparses) {
  for (std::string text :
       {"name like 'x\\%%' and not (name not like '%')", "a is nan or b is not nan","country = 'SE' and (age >= 18 or vip) and name is not null and id in (1, 2, 3)",
        "not (a = 1 or b < -2.5)", "x not in ('a', 'b''c')", "\"weird name\" = 1",
        "\"or\" = 1 or \"x.y\" is null", "a.b.c > 1e10", "true and false", "5 >= x"}) {
    std::string once = Reprint(text);
    EXPECT_EQ(Reprint(once), once) << text;
  }
}

// --- binding -------------------------------------------------------------------------------

Schema BindSchema() {
  return *ParseSchemaSpec(
      "id:long!, name:string, price:decimal(10,2), d:date, ts:timestamp, tz:timestamptz, "
      "vip:boolean, score:float, u:uuid, raw:binary, addr:struct<city:string!,zip:int>, "
      "tags:list<string>, n:int, t:time");
}

ExprPtr B(std::string_view text) {
  auto e = Bind(P(text), BindSchema());
  EXPECT_THAT(e, IsOk()) << text;
  return e.value_or(True());
}

TEST(Bind, ConvertsLiteralsToColumnTypes) {
  ExprPtr e = B("price = 12.5");
  EXPECT_EQ(e->field_id, 3);
  EXPECT_EQ(std::get<Decimal>(e->literals[0]).unscaled, 1250);
  EXPECT_EQ(B("price < 12")->literals[0], Value(Decimal{1200}));
  EXPECT_EQ(std::get<int32_t>(B("d >= '2024-01-31'")->literals[0]), DaysFromCivil(2024, 1, 31));
  EXPECT_EQ(std::get<int64_t>(B("ts < '2024-01-31 12:00:00'")->literals[0]),
            DaysFromCivil(2024, 1, 31) * 86400LL * 1000000 + 12 * 3600LL * 1000000);
  EXPECT_EQ(std::get<int64_t>(B("tz < '1970-01-01T02:00:00+02:00'")->literals[0]), 0);
  EXPECT_EQ(std::get<int64_t>(B("id = 5")->literals[0]), 5);
  EXPECT_EQ(std::get<int32_t>(B("n = -5")->literals[0]), -5);
  EXPECT_EQ(std::get<float>(B("score > 1")->literals[0]), 1.0f);
  EXPECT_EQ(std::get<float>(B("score > 0.5")->literals[0]), 0.5f);
  EXPECT_EQ(B("vip")->literals[0], Value(true));
  EXPECT_EQ(B("vip = 'false'")->literals[0], Value(false));
  EXPECT_EQ(std::get<int64_t>(B("t = '01:00'")->literals[0]), 3600LL * 1000000);
  EXPECT_EQ(std::get<std::string>(B("raw = '0x00ff'")->literals[0]), std::string("\x00\xff", 2));
  EXPECT_EQ(
      std::get<std::string>(B("u = 'f79c3e09-677c-4bbd-a479-3f349cb785e7'")->literals[0]).size(),
      16u);
  e = B("ADDR.CITY = 'Oslo'");
  EXPECT_EQ(e->field_id, BindSchema().FindByPath("addr.city")->id);
  EXPECT_EQ(e->column, "addr.city");
  EXPECT_EQ(e->type->id, TypeId::kString);
}

TEST(Bind, InListsAndNullChecks) {
  ExprPtr e = B("id in (3, 1, 3, 2, 1)");
  EXPECT_EQ(e->op, Op::kIn);
  EXPECT_EQ(e->literals.size(), 3u);  // sorted, de-duplicated
  EXPECT_EQ(std::get<int64_t>(e->literals[0]), 1);
  EXPECT_EQ(B("id in (4, 4)")->op, Op::kEq);
  EXPECT_EQ(B("id not in (4)")->op, Op::kNotEq);
  // A required top-level column is never null; a required field in an optional struct can be.
  EXPECT_EQ(B("id is null")->op, Op::kFalse);
  EXPECT_EQ(B("id is not null")->op, Op::kTrue);
  EXPECT_EQ(B("id is null or n = 1")->op, Op::kEq);
  EXPECT_EQ(B("addr.city is null")->op, Op::kIsNull);
  EXPECT_EQ(B("name is null")->op, Op::kIsNull);
}

TEST(Bind, Errors) {
  Schema schema = BindSchema();
  auto bind = [&](std::string_view text) { return Bind(P(text), schema); };
  auto unknown = bind("nmae = 'x'");
  EXPECT_THAT(unknown, IsErrorWith(ErrorKind::kInvalidArgument, "unknown column 'nmae'"));
  EXPECT_THAT(unknown.error().message, HasSubstr("id, name, price, d, ts"));
  auto bad = bind("d = '2024-13-01'");
  EXPECT_THAT(bad, IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(bad.error().message, HasSubstr("'d'"));
  EXPECT_THAT(bad.error().message, HasSubstr("date"));
  EXPECT_THAT(bad.error().message, HasSubstr("'2024-13-01'"));
  EXPECT_THAT(bind("price = 12.345"), IsErrorWith(ErrorKind::kInvalidArgument, "decimal(10,2)"));
  EXPECT_THAT(bind("n = 3000000000"), IsErrorWith(ErrorKind::kInvalidArgument, "3000000000"));
  EXPECT_THAT(bind("n = 1.5"), IsErrorWith(ErrorKind::kInvalidArgument, "'n' of type int"));
  EXPECT_THAT(bind("name = 5"), IsErrorWith(ErrorKind::kInvalidArgument, "quote it"));
  EXPECT_THAT(bind("vip = 1"), IsErrorWith(ErrorKind::kInvalidArgument, "boolean"));
  EXPECT_THAT(bind("id = true"), IsErrorWith(ErrorKind::kInvalidArgument, "long"));
  EXPECT_THAT(bind("name"), IsErrorWith(ErrorKind::kInvalidArgument, "string"));
  EXPECT_THAT(bind("tags = 'x'"), IsErrorWith(ErrorKind::kInvalidArgument, "list<string>"));
  EXPECT_THAT(bind("addr = 1"), IsErrorWith(ErrorKind::kInvalidArgument, "takes only 'is null' and 'is not null'"));
  EXPECT_THAT(bind("tags in ('x')"), IsErrorWith(ErrorKind::kInvalidArgument, "list<string>"));
  EXPECT_THAT(bind("addr is null"), IsOk());
  EXPECT_THAT(bind("tags is not null"), IsOk());
  EXPECT_THAT(bind("id = 1 and (x = 2 or n = 3)"), IsErrorWith(ErrorKind::kInvalidArgument, "'x'"));
  EXPECT_THAT(bind("id in (1, 'two')"), IsErrorWith(ErrorKind::kInvalidArgument, "'two'"));
  EXPECT_THAT(bind("name is nan"), IsErrorWith(ErrorKind::kInvalidArgument, "'is nan' needs a float or double column"));
  EXPECT_THAT(bind("n is not nan"), IsErrorWith(ErrorKind::kInvalidArgument, "'n' is int"));
  EXPECT_THAT(bind("id like '1%'"), IsErrorWith(ErrorKind::kInvalidArgument, "'like' needs a string column; 'id' is long"));
  EXPECT_THAT(bind("score is nan"), IsOk());
  for (const char* nan : {"score = 'NaN'", "score != 'nan'", "score < 'NaN'", "score in (1.5, 'NaN')",
                          "score not between 'NaN' and 2"})
    EXPECT_THAT(bind(nan), IsErrorWith(ErrorKind::kInvalidArgument, "use 'score is nan' or 'score is not nan'")) << nan;
  EXPECT_THAT(bind("score < 'Infinity'"), IsOk());
  EXPECT_THAT(bind("addr.city not like 'Os%'"), IsOk());
}

TEST(Bind, ToStringOfBoundReparsesToTheSameExpression) {
  Schema schema = BindSchema();
  for (std::string text :
       {"price >= 12.5 and d < '2024-02-01'", "not (ts > '2024-01-31T12:00:00.000001' or vip)",
        "tz = '2024-01-31T12:00:00+02:00'", "u in ('f79c3e09-677c-4bbd-a479-3f349cb785e7')",
        "raw = '0x00ff' or raw = 'abc'", "score < -0.25", "name = 'it''s'", "t < '12:30'",
        "id not in (1, 2)", "addr.city is not null"}) {
    ExprPtr bound = B(text);
    std::string printed = ToString(*bound);
    auto again = Bind(P(printed), schema);
    ASSERT_THAT(again, IsOk()) << printed;
    EXPECT_EQ(ToString(**again), printed) << text;
  }
  EXPECT_EQ(ToString(*B("price >= 12.5")), "price >= 12.50");
  EXPECT_EQ(ToString(*B("d < '2024-02-01'")), "d < '2024-02-01'");
}

TEST(Bind, RandomBoundExpressionsRoundTripThroughText) {
  Schema schema = expr_test::AllTypesSchema();
  ExprGen gen(11, Leaves(schema));
  std::vector<expr_test::Row> rows;
  for (int i = 0; i < 5; ++i) rows.push_back(gen.RandomRow(0.1));
  for (int i = 0; i < 500; ++i) {
    ExprPtr e = gen.RandomExpr(rows, 3);
    std::string printed = ToString(*e);
    auto parsed = Parse(printed);
    ASSERT_THAT(parsed, IsOk()) << printed;
    auto bound = Bind(*parsed, schema);
    ASSERT_THAT(bound, IsOk()) << printed;
    // Binding folds and de-duplicates, so compare semantics on the sample rows.
    for (const auto& row : rows) {
      EXPECT_EQ(expr_test::RefEval(*e, row), expr_test::RefEval(**bound, row)) << printed;
    }
  }
}

TEST(ReferencedFieldIds, SortedUnique) {
  ExprPtr e = B("n = 1 and (id > 2 or n < 0) and addr.city = 'x'");
  int city = BindSchema().FindByPath("addr.city")->id;
  EXPECT_EQ(ReferencedFieldIds(*e), (std::vector<int>{1, 13, city}));
}

TEST(Constructors, Simplify) {
  ExprPtr p = P("a = 1");
  EXPECT_EQ(And(True(), p), p);
  EXPECT_EQ(And(p, False())->op, Op::kFalse);
  EXPECT_EQ(Or(False(), p), p);
  EXPECT_EQ(Or(p, True())->op, Op::kTrue);
  EXPECT_EQ(Not(Not(p)), p);
  EXPECT_EQ(Not(True())->op, Op::kFalse);
  EXPECT_EQ(And(p, p)->op, Op::kAnd);
}

}  // namespace
}  // namespace skade::expr
