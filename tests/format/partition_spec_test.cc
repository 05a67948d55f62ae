#include "skade/format/partition_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "format/format_test_util.h"

namespace skade {
namespace {

using ::skade::format_test::IsError;
using ::skade::format_test::IsErrorWith;
using ::skade::format_test::IsOk;
using ::testing::HasSubstr;

Schema TestSchema() {
  auto s = ParseSchemaSpec(
      "id:long!, name:string, ts:timestamp, tz:timestamptz, d:date, country:string, "
      "price:decimal(10,2), flag:boolean, score:double, addr:struct<city:string,zip:int>, "
      "tags:list<string>");
  EXPECT_TRUE(s.has_value());
  return *s;
}

TEST(ParsePartitionSpec, AllTransformsWithDefaultNames) {
  Schema schema = TestSchema();
  auto spec = ParsePartitionSpec(
      "day(ts), bucket(16,id), truncate(4,name), country, year(d), month(tz), hour(ts2)", schema);
  EXPECT_THAT(spec, IsErrorWith(ErrorKind::kInvalidArgument, "ts2"));

  spec = ParsePartitionSpec("day(ts), bucket(16,id), truncate(4, name), country, year(d), hour(tz)",
                            schema, 3);
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(spec->spec_id(), 3);
  const auto& f = spec->fields();
  ASSERT_EQ(f.size(), 6u);
  EXPECT_EQ(f[0].name, "ts_day");
  EXPECT_EQ(f[0].transform.ToString(), "day");
  EXPECT_EQ(f[0].source_id, schema.FindTopLevel("ts")->id);
  EXPECT_EQ(f[0].field_id, 1000);
  EXPECT_EQ(f[1].name, "id_bucket");
  EXPECT_EQ(f[1].transform.ToString(), "bucket[16]");
  EXPECT_EQ(f[2].name, "name_trunc");
  EXPECT_EQ(f[2].transform.ToString(), "truncate[4]");
  EXPECT_EQ(f[3].name, "country");
  EXPECT_EQ(f[3].transform.kind, TransformKind::kIdentity);
  EXPECT_EQ(f[4].name, "d_year");
  EXPECT_EQ(f[5].name, "tz_hour");
  EXPECT_EQ(f[5].field_id, 1005);
  EXPECT_EQ(spec->LastFieldId(), 1005);

  auto m = ParsePartitionSpec("month(ts), void(score)", schema, 0, 1007);
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(m->fields()[0].name, "ts_month");
  EXPECT_EQ(m->fields()[0].field_id, 1007);
  EXPECT_EQ(m->fields()[1].name, "score_null");
}

TEST(ParsePartitionSpec, PartitionType) {
  Schema schema = TestSchema();
  auto spec = ParsePartitionSpec(
      "day(ts), bucket(16,id), truncate(4,name), country, year(d), month(tz), "
      "truncate(100, price), addr.city",
      schema);
  ASSERT_THAT(spec, IsOk());
  auto type = spec->PartitionType(schema);
  ASSERT_THAT(type, IsOk());
  EXPECT_EQ((*type)->ToString(),
            "struct<ts_day:date,id_bucket:int,name_trunc:string,country:string,d_year:int,"
            "tz_month:int,price_trunc:decimal(10,2),addr.city:string>");
  EXPECT_EQ((*type)->fields[0].id, 1000);
  EXPECT_FALSE((*type)->fields[0].required);
  // A spec whose source column is gone from the schema cannot produce a type.
  PartitionSpec orphan(0, {PartitionField{999, 1000, "x", Transform{}}});
  EXPECT_THAT(orphan.PartitionType(schema), IsErrorWith(ErrorKind::kInvalidArgument, "999"));
  PartitionSpec wrong(0, {PartitionField{schema.FindTopLevel("flag")->id, 1000, "f",
                                         Transform{TransformKind::kBucket, 2}}});
  EXPECT_THAT(wrong.PartitionType(schema), IsErrorWith(ErrorKind::kInvalidArgument, "boolean"));
}

TEST(ParsePartitionSpec, UnpartitionedAndAliases) {
  Schema schema = TestSchema();
  auto empty = ParsePartitionSpec("  ", schema);
  ASSERT_THAT(empty, IsOk());
  EXPECT_TRUE(empty->unpartitioned());
  EXPECT_EQ(empty->LastFieldId(), 999);
  auto aliased = ParsePartitionSpec("bucket(id, 8) as shard, DAY(ts) AS dt", schema);
  ASSERT_THAT(aliased, IsOk());
  EXPECT_EQ(aliased->fields()[0].name, "shard");
  EXPECT_EQ(aliased->fields()[0].transform.param, 8);
  EXPECT_EQ(aliased->fields()[1].name, "dt");
  // Case-insensitive column lookup keeps the schema's spelling for the name.
  auto upper = ParsePartitionSpec("COUNTRY", schema);
  ASSERT_THAT(upper, IsOk());
  EXPECT_EQ(upper->fields()[0].name, "country");
}

TEST(ParsePartitionSpec, Errors) {
  Schema schema = TestSchema();
  auto unknown = ParsePartitionSpec("day(when)", schema);
  EXPECT_THAT(unknown, IsErrorWith(ErrorKind::kInvalidArgument, "unknown column 'when'"));
  EXPECT_THAT(unknown.error().message, HasSubstr("id, name, ts, tz, d, country"));
  auto bad_type = ParsePartitionSpec("bucket(4, flag)", schema);
  EXPECT_THAT(bad_type, IsErrorWith(ErrorKind::kInvalidArgument, "bucket[4]"));
  EXPECT_THAT(bad_type.error().message, HasSubstr("'flag' of type boolean"));
  EXPECT_THAT(ParsePartitionSpec("hour(d)", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "date"));
  EXPECT_THAT(ParsePartitionSpec("truncate(4, ts)", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "timestamp"));
  EXPECT_THAT(ParsePartitionSpec("tags", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "list<string>"));
  EXPECT_THAT(ParsePartitionSpec("country, country", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "duplicate partition field name 'country'"));
  EXPECT_THAT(ParsePartitionSpec("bucket(4,id) as p, truncate(2,name) as p", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "duplicate"));
  EXPECT_THAT(ParsePartitionSpec("day(ts), hour(ts)", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "redundant"));
  EXPECT_THAT(ParsePartitionSpec("bucket(4,id) as name", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "conflicts"));
  EXPECT_THAT(ParsePartitionSpec("weekday(ts)", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "unknown transform 'weekday'"));
  EXPECT_THAT(ParsePartitionSpec("bucket(id)", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "bucket"));
  EXPECT_THAT(ParsePartitionSpec("bucket(0, id)", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "positive"));
  EXPECT_THAT(ParsePartitionSpec("day(ts, d)", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "one column"));
  EXPECT_THAT(ParsePartitionSpec("day(ts", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "position"));
  EXPECT_THAT(ParsePartitionSpec("day(ts),", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "position"));
  EXPECT_THAT(ParsePartitionSpec("country;", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "';'"));
  EXPECT_THAT(ParsePartitionSpec("country id", schema),
              IsErrorWith(ErrorKind::kInvalidArgument, "position 9"));
}

}  // namespace
}  // namespace skade
