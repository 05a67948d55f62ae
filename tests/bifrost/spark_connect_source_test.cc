// The Spark Connect source's parts that need no server: a mapping's filter as the Spark
// SQL condition sent in the plan, and the addresses it accepts. (Reads through a real
// server: tests/bifrost/test_spark_connect.py.)
#include "bifrost/source/spark_connect_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::ErrorKind;
using skade::testing::IsErrorWith;

TEST(SparkSqlFilter, QuotesColumnsAndStrings) {
  auto sql = SparkSqlFilter("id <= 10 and (name = 'O''Brien' or addr.city in ('a', 'b'))");
  ASSERT_TRUE(sql.has_value()) << sql.error().ToString();
  EXPECT_EQ(*sql, "(`id` <= 10 AND (`name` = 'O\\'Brien' OR `addr`.`city` IN ('a', 'b')))");
  EXPECT_EQ(SparkSqlFilter("p = 'C:\\tmp'").value(), "`p` = 'C:\\\\tmp'");
}

TEST(SparkSqlFilter, LikeNaNAndBetween) {
  EXPECT_EQ(SparkSqlFilter("name like 'O''B%' and name not like 'x\\%%'").value(),
            "(startswith(`name`, 'O\\'B') AND (NOT startswith(`name`, 'x%')))");
  EXPECT_EQ(SparkSqlFilter("s is nan or s is not nan").value(), "(isnan(`s`) OR (NOT isnan(`s`)))");
  EXPECT_EQ(SparkSqlFilter("id between 1 and 5").value(), "(`id` >= 1 AND `id` <= 5)");
  EXPECT_EQ(SparkSqlFilter("name like '%a\\_b%' or name not like '_x'").value(),
            "(`name` LIKE '%a\\\\_b%' OR `name` NOT LIKE '_x')");
}

TEST(SparkSqlFilter, NullsNegationsAndBareColumns) {
  EXPECT_EQ(SparkSqlFilter("x is not null and not (y != -2.5)").value(),
            "(`x` IS NOT NULL AND (NOT `y` <> -2.5))");
  EXPECT_EQ(SparkSqlFilter("\"odd`name\" not in (1, 2) or z is null").value(),
            "(`odd``name` NOT IN (1, 2) OR `z` IS NULL)");
  EXPECT_EQ(SparkSqlFilter("active").value(), "`active` = true");
}

TEST(SparkSqlFilter, BadFilterIsRefused) {
  EXPECT_THAT(SparkSqlFilter("id <="), IsErrorWith(ErrorKind::kInvalidArgument, ""));
}

TEST(SparkConnectSource, AddressMustBeScHostPort) {
  EXPECT_TRUE(SparkConnectSource::Open("sc://127.0.0.1:15002").has_value());
  EXPECT_TRUE(SparkConnectSource::Open("sc://spark.local:15002/;user_id=x").has_value());
  for (const char* bad : {"127.0.0.1:15002", "sc://", "sc://host", "sc://host:", "sc://:15002",
                          "sc://host:12ab"})
    EXPECT_THAT(SparkConnectSource::Open(bad),
                IsErrorWith(ErrorKind::kInvalidArgument, "is not sc://HOST:PORT"))
        << bad;
}

}  // namespace
}  // namespace bifrost
