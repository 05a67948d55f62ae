#include "skade/common/nesting.h"

#include <gtest/gtest.h>

#include <string>

#include "skade/avro/avro.h"
#include "skade/format/types.h"
#include "testing/matchers.h"

namespace skade {
namespace {

using testing::IsError;
using testing::IsOk;

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(NestingTest, JsonAtTheLimitPassesAndPastItFails) {
  EXPECT_THAT(CheckJsonNesting(Nested(kMaxJsonDepth), "doc"), IsOk());
  EXPECT_THAT(CheckJsonNesting(Nested(kMaxJsonDepth + 1), "doc"), IsError(ErrorKind::kInvalidArgument));
  // Brackets inside strings (escaped quotes too) are text, not nesting.
  std::string in_string = "{\"a\":\"\\\"" + std::string(1000, '[') + "\"}";
  EXPECT_THAT(CheckJsonNesting(in_string, "doc"), IsOk());
}

TEST(NestingTest, ScannerNamesTheLineAcrossChunks) {
  JsonDepthScanner s(3);
  EXPECT_TRUE(s.Feed("{\"a\":1}\n[["));
  EXPECT_FALSE(s.Feed("[[]]]]\n"));
  EXPECT_EQ(s.line(), 2);
}

TEST(NestingTest, SchemaTextDepth) {
  std::string at, past;
  for (int i = 0; i < kMaxTypeDepth; ++i) at += "list<";
  at += "int" + std::string(kMaxTypeDepth, '>');
  past = "list<" + at + ">";
  auto ok = ParseSchemaSpec("a:" + at);
  ASSERT_THAT(ok, IsOk());
  EXPECT_EQ(SchemaDepth(*ok), kMaxTypeDepth);
  EXPECT_THAT(ParseSchemaSpec("a:" + past), IsError(ErrorKind::kInvalidArgument));
  std::string very_deep;
  for (int i = 0; i < 20000; ++i) very_deep += "struct<x:";
  EXPECT_THAT(ParseSchemaSpec("a:" + very_deep), IsError(ErrorKind::kInvalidArgument));
}

TEST(NestingTest, AvroSchemaDepth) {
  auto nested = [](int depth) {
    std::string s = "\"int\"";
    for (int i = 0; i < depth; ++i) s = "{\"type\":\"array\",\"items\":" + s + "}";
    return s;
  };
  EXPECT_THAT(avro::ParseSchema(nested(40)), IsOk());
  EXPECT_THAT(avro::ParseSchema(nested(5000)), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(avro::ParseSchema(std::string(100000, '[')), IsError(ErrorKind::kCorrupt));
}

}  // namespace
}  // namespace skade
