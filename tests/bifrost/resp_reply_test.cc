// The RESP2 reader: whole replies however the bytes are split, nesting far past
// hiredis 0.14's 7 levels up to its own limit, and malformed bytes refused.
#include "bifrost/sink/resp_reply.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/matchers.h"

namespace bifrost {
namespace {

using skade::ErrorKind;
using skade::testing::IsErrorWith;

constexpr std::string_view kTwo =
    "*3\r\n$5\r\nhello\r\n:-42\r\n*2\r\n$-1\r\n+OK\r\n-ERR no\r\n";

TEST(RespReaderTest, ReadsRepliesFedOneByteAtATime) {
  RespReader reader;
  std::vector<Reply> replies;
  for (char c : kTwo) {
    reader.Feed(std::string_view(&c, 1));
    auto next = reader.Next();
    ASSERT_TRUE(next.has_value()) << next.error().message;
    if (*next) replies.push_back(std::move(**next));
  }
  ASSERT_EQ(replies.size(), 2u);
  const Reply& a = replies[0];
  ASSERT_EQ(a.kind, Reply::Kind::kArray);
  ASSERT_EQ(a.elements.size(), 3u);
  EXPECT_EQ(a.elements[0].text, "hello");
  EXPECT_EQ(a.elements[1].integer, -42);
  EXPECT_EQ(a.elements[2].elements[0].kind, Reply::Kind::kNil);
  EXPECT_EQ(a.elements[2].elements[1].kind, Reply::Kind::kStatus);
  EXPECT_EQ(replies[1].kind, Reply::Kind::kError);
  EXPECT_EQ(replies[1].text, "ERR no");
}

TEST(RespReaderTest, ReadsTwoRepliesFedTogetherAndBinaryStrings) {
  RespReader reader;
  reader.Feed(std::string("$5\r\na\r\n\0b\r\n*0\r\n", 15));
  auto first = reader.Next();
  ASSERT_TRUE(first.has_value() && *first);
  EXPECT_EQ((*first)->text, std::string("a\r\n\0b", 5));
  auto second = reader.Next();
  ASSERT_TRUE(second.has_value() && *second);
  EXPECT_EQ((*second)->kind, Reply::Kind::kArray);
  EXPECT_TRUE((*second)->elements.empty());
  auto none = reader.Next();
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(*none);
}

std::string Nested(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "*1\r\n";
  return s + ":7\r\n";
}

TEST(RespReaderTest, NestsUpToItsLimitAndNoFurther) {
  RespReader deep;
  deep.Feed(Nested(RespReader::kMaxDepth));
  auto reply = deep.Next();
  ASSERT_TRUE(reply.has_value() && *reply) << (reply ? "" : reply.error().message);
  const Reply* r = &**reply;
  for (int i = 0; i < RespReader::kMaxDepth; ++i) r = &r->elements.at(0);
  EXPECT_EQ(r->integer, 7);

  RespReader deeper;
  deeper.Feed(Nested(RespReader::kMaxDepth + 1));
  EXPECT_THAT(deeper.Next(), IsErrorWith(ErrorKind::kIoError, "nested deeper than 256 levels"));
}

TEST(RespReaderTest, RefusesMalformedBytes) {
  for (std::string_view bad : {"?x\r\n", ":12a\r\n", "$-2\r\n", "$2\r\nabcd\r\n", "*x\r\n"}) {
    SCOPED_TRACE(bad);
    RespReader reader;
    reader.Feed(bad);
    EXPECT_THAT(reader.Next(), IsErrorWith(ErrorKind::kIoError, "malformed reply"));
  }
}

}  // namespace
}  // namespace bifrost
