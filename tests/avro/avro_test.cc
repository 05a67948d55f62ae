#include "skade/avro/avro.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "skade/avro/avro_internal.h"
#include "testing/matchers.h"

namespace skade::avro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using ::skade::testing::IsError;
using ::skade::testing::IsOk;

MATCHER_P(SameAs, expected, "") { return internal::SameValue(arg, expected); }

NodePtr MustParse(std::string_view json) {
  auto schema = ParseSchema(json);
  EXPECT_THAT(schema, IsOk()) << json;
  return schema.value_or(std::make_shared<Node>());
}

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string EncodeOk(const Node& schema, const Value& value) {
  std::string out;
  EXPECT_THAT(Encode(schema, value, &out), IsOk());
  return out;
}

/// Encodes, checks the bytes, decodes and checks the value and that all bytes were used.
void ExpectRoundTrip(std::string_view schema_json, const Value& value, std::string_view hex) {
  SCOPED_TRACE(std::string(schema_json));
  NodePtr schema = MustParse(schema_json);
  const std::string bytes = EncodeOk(*schema, value);
  if (!hex.empty()) {
    EXPECT_EQ(Hex(bytes), hex);
  }
  size_t pos = 0;
  auto decoded = Decode(*schema, bytes, &pos);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_THAT(*decoded, SameAs(value));
  EXPECT_EQ(pos, bytes.size());
}

Result<Value> DecodeAll(std::string_view schema_json, const std::string& bytes) {
  NodePtr schema = MustParse(schema_json);
  size_t pos = 0;
  auto v = Decode(*schema, bytes, &pos);
  if (v && pos != bytes.size()) return Corrupt("trailing bytes");
  return v;
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// ---- Primitives -------------------------------------------------------------------------

TEST(AvroDatumTest, ZigZagKnownAnswers) {
  ExpectRoundTrip("\"long\"", Value::Long(0), "00");
  ExpectRoundTrip("\"long\"", Value::Long(-1), "01");
  ExpectRoundTrip("\"long\"", Value::Long(1), "02");
  ExpectRoundTrip("\"long\"", Value::Long(-2), "03");
  ExpectRoundTrip("\"long\"", Value::Long(2), "04");
  ExpectRoundTrip("\"long\"", Value::Long(-64), "7f");
  ExpectRoundTrip("\"long\"", Value::Long(64), "80 01");
  ExpectRoundTrip("\"long\"", Value::Long(std::numeric_limits<int64_t>::max()),
                  "fe ff ff ff ff ff ff ff ff 01");
  ExpectRoundTrip("\"long\"", Value::Long(std::numeric_limits<int64_t>::min()),
                  "ff ff ff ff ff ff ff ff ff 01");
  ExpectRoundTrip("\"int\"", Value::Int(0), "00");
  ExpectRoundTrip("\"int\"", Value::Int(-1), "01");
  ExpectRoundTrip("\"int\"", Value::Int(64), "80 01");
  ExpectRoundTrip("\"int\"", Value::Int(std::numeric_limits<int32_t>::max()), "fe ff ff ff 0f");
  ExpectRoundTrip("\"int\"", Value::Int(std::numeric_limits<int32_t>::min()), "ff ff ff ff 0f");
}

TEST(AvroDatumTest, VarintOverflowIsCorrupt) {
  // Eleven continuation bytes, and a 10th byte carrying more than bit 63.
  EXPECT_THAT(DecodeAll("\"long\"", std::string(10, '\xff') + '\x01'),
              IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll("\"long\"", std::string(9, '\xff') + '\x02'), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll("\"long\"", Bytes({0x80})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll("\"long\"", ""), IsError(ErrorKind::kCorrupt));
  // 2^31 does not fit an int.
  EXPECT_THAT(DecodeAll("\"int\"", Bytes({0x80, 0x80, 0x80, 0x80, 0x10})),
              IsError(ErrorKind::kCorrupt));
}

TEST(AvroDatumTest, Primitives) {
  ExpectRoundTrip("\"null\"", Value::Null(), "");
  ExpectRoundTrip("{\"type\":\"null\"}", Value::Null(), "");
  ExpectRoundTrip("\"boolean\"", Value::Bool(true), "01");
  ExpectRoundTrip("\"boolean\"", Value::Bool(false), "00");
  ExpectRoundTrip("\"float\"", Value::Float(1.0f), "00 00 80 3f");
  ExpectRoundTrip("\"float\"", Value::Float(-0.0f), "00 00 00 80");
  ExpectRoundTrip("\"float\"", Value::Float(std::numeric_limits<float>::quiet_NaN()), "");
  ExpectRoundTrip("\"float\"", Value::Float(std::numeric_limits<float>::infinity()), "");
  ExpectRoundTrip("\"double\"", Value::Double(1.0), "00 00 00 00 00 00 f0 3f");
  ExpectRoundTrip("\"double\"", Value::Double(-1e300), "");
  ExpectRoundTrip("\"string\"", Value::Bytes("foo"), "06 66 6f 6f");
  ExpectRoundTrip("\"string\"", Value::Bytes(""), "00");
  ExpectRoundTrip("\"bytes\"", Value::Bytes(std::string("\0\xff", 2)), "04 00 ff");
  ExpectRoundTrip("{\"type\":\"int\",\"logicalType\":\"date\"}", Value::Int(19000), "f0 a8 02");
}

TEST(AvroDatumTest, InvalidPrimitiveBytesAreCorrupt) {
  EXPECT_THAT(DecodeAll("\"boolean\"", Bytes({2})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll("\"float\"", Bytes({0, 0, 0x80})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll("\"double\"", Bytes({0, 0, 0, 0, 0, 0, 0})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll("\"string\"", Bytes({0x06, 'a'})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll("\"string\"", Bytes({0x01})), IsError(ErrorKind::kCorrupt));
  // A length of 2^62 must fail before anything is allocated.
  EXPECT_THAT(
      DecodeAll("\"bytes\"", Bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})),
      IsError(ErrorKind::kCorrupt));
}

TEST(AvroDatumTest, DecodeStartsAtPosAndAdvances) {
  NodePtr schema = MustParse("\"long\"");
  const std::string bytes = Bytes({0x02, 0x80, 0x01, 0x03});
  size_t pos = 1;
  auto v = Decode(*schema, bytes, &pos);
  ASSERT_THAT(v, IsOk());
  EXPECT_THAT(*v, SameAs(Value::Long(64)));
  EXPECT_EQ(pos, 3u);
  pos = 9;
  EXPECT_THAT(Decode(*schema, bytes, &pos), IsError(ErrorKind::kCorrupt));
}

TEST(AvroDatumTest, EncodeRejectsMismatchedValues) {
  std::string out;
  EXPECT_THAT(Encode(*MustParse("\"int\""), Value::Long(1), &out),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(Encode(*MustParse("\"string\""), Value::Int(1), &out),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(Encode(*MustParse("\"null\""), Value::Int(1), &out),
              IsError(ErrorKind::kInvalidArgument));
  auto rec = MustParse(R"({"type":"record","name":"r","fields":[{"name":"a","type":"int"}]})");
  EXPECT_THAT(Encode(*rec, Value::Record({}), &out), IsError(ErrorKind::kInvalidArgument));
  auto err = Encode(*rec, Value::Record({Value::Bytes("x")}), &out);
  ASSERT_THAT(err, IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(err.error().message, HasSubstr("field 'a'"));
  // Widening int → long and float → double is accepted.
  EXPECT_EQ(Hex(EncodeOk(*MustParse("\"long\""), Value::Int(-1))), "01");
  EXPECT_EQ(Hex(EncodeOk(*MustParse("\"double\""), Value::Float(1.0f))), "00 00 00 00 00 00 f0 3f");
}

// ---- Complex types ----------------------------------------------------------------------

TEST(AvroDatumTest, Records) {
  const char* schema = R"({"type":"record","name":"outer","fields":[
      {"name":"a","type":"int","field-id":1},
      {"name":"inner","type":{"type":"record","name":"r2","fields":[
          {"name":"s","type":"string","field-id":3}]},"field-id":2},
      {"name":"again","type":"r2","field-id":4}]})";
  ExpectRoundTrip(schema,
                  Value::Record({Value::Int(1), Value::Record({Value::Bytes("a")}),
                                 Value::Record({Value::Bytes("")})}),
                  "02 02 61 00");
  ExpectRoundTrip(R"({"type":"record","name":"empty","fields":[]})", Value::Record({}), "");
}

TEST(AvroDatumTest, Arrays) {
  const char* schema = R"({"type":"array","items":"int"})";
  ExpectRoundTrip(schema, Value::Array({Value::Int(1), Value::Int(2), Value::Int(3)}),
                  "06 02 04 06 00");
  ExpectRoundTrip(schema, Value::Array({}), "00");
  Value nested = Value::Array({Value::Array({Value::Long(1)}), Value::Array({})});
  ExpectRoundTrip(R"({"type":"array","items":{"type":"array","items":"long"}})", nested,
                  "04 02 02 00 00 00");
}

TEST(AvroDatumTest, ArraysWithNegativeCountsAndManyBlocks) {
  const char* schema = R"({"type":"array","items":"int"})";
  // Block of -3 items (byte size 3), block of 1 item, end.
  auto v = DecodeAll(schema, Bytes({0x05, 0x06, 0x02, 0x04, 0x06, 0x02, 0x08, 0x00}));
  ASSERT_THAT(v, IsOk());
  EXPECT_THAT(*v,
              SameAs(Value::Array({Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4)})));
  // A negative count without its byte size is truncated.
  EXPECT_THAT(DecodeAll(schema, Bytes({0x05})), IsError(ErrorKind::kCorrupt));
  // A byte size larger than what is left.
  EXPECT_THAT(DecodeAll(schema, Bytes({0x01, 0x7e, 0x02, 0x00})), IsError(ErrorKind::kCorrupt));
  // Missing terminator.
  EXPECT_THAT(DecodeAll(schema, Bytes({0x02, 0x02})), IsError(ErrorKind::kCorrupt));

  // 100000 blocks of one item each: must stay linear.
  std::string many;
  Value::List expected;
  for (int i = 0; i < 100000; ++i) {
    std::string item;
    internal::WriteLong(i, &item);
    internal::WriteLong(-1, &many);
    internal::WriteLong(static_cast<int64_t>(item.size()), &many);
    many += item;
    expected.push_back(Value::Int(i));
  }
  many.push_back('\0');
  auto big = DecodeAll(schema, many);
  ASSERT_THAT(big, IsOk());
  EXPECT_THAT(*big, SameAs(Value::Array(std::move(expected))));
}

TEST(AvroDatumTest, HostileCountsFailFast) {
  // 2^60 ints claimed, two bytes present.
  std::string bytes;
  internal::WriteLong(int64_t{1} << 60, &bytes);
  bytes += Bytes({0x02, 0x00});
  EXPECT_THAT(DecodeAll(R"({"type":"array","items":"int"})", bytes), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll(R"({"type":"map","values":"int"})", bytes), IsError(ErrorKind::kCorrupt));
  // 2^60 nulls take no bytes: bounded by the value budget instead.
  std::string nulls;
  internal::WriteLong(int64_t{1} << 60, &nulls);
  nulls.push_back('\0');
  EXPECT_THAT(DecodeAll(R"({"type":"array","items":"null"})", nulls), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(
      DecodeAll(R"({"type":"array","items":{"type":"record","name":"e","fields":[]}})", nulls),
      IsError(ErrorKind::kCorrupt));
  // INT64_MIN as a block count.
  EXPECT_THAT(DecodeAll(R"({"type":"array","items":"int"})", std::string(9, '\xff') + '\x01'),
              IsError(ErrorKind::kCorrupt));
  // A modest number of nulls is fine.
  std::string few;
  internal::WriteLong(1000, &few);
  few.push_back('\0');
  auto v = DecodeAll(R"({"type":"array","items":"null"})", few);
  ASSERT_THAT(v, IsOk());
  EXPECT_EQ(v->list().size(), 1000u);
}

TEST(AvroDatumTest, Maps) {
  const char* schema = R"({"type":"map","values":"long"})";
  Value m{Value::MapEntries{{"a", Value::Long(1)}, {"b", Value::Long(-1)}}};
  ExpectRoundTrip(schema, m, "04 02 61 02 02 62 01 00");
  ExpectRoundTrip(schema, Value{Value::MapEntries{}}, "00");
  // Negative count with byte size, then a second block.
  auto v = DecodeAll(schema, Bytes({0x01, 0x06, 0x02, 'a', 0x02, 0x02, 0x02, 'b', 0x01, 0x00}));
  ASSERT_THAT(v, IsOk());
  EXPECT_THAT(*v, SameAs(m));
}

TEST(AvroDatumTest, Unions) {
  const char* schema = R"(["null","string"])";
  ExpectRoundTrip(schema, Value::Union(0, Value::Null()), "00");
  ExpectRoundTrip(schema, Value::Union(1, Value::Bytes("a")), "02 02 61");
  // A bare null picks the null branch.
  EXPECT_EQ(Hex(EncodeOk(*MustParse(schema), Value::Null())), "00");
  EXPECT_THAT(DecodeAll(schema, Bytes({0x04})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll(schema, Bytes({0x01})), IsError(ErrorKind::kCorrupt));
  std::string out;
  EXPECT_THAT(Encode(*MustParse(schema), Value::Union(2, Value::Null()), &out),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(Encode(*MustParse(schema), Value::Union(1, Value::Int(3)), &out),
              IsError(ErrorKind::kInvalidArgument));
  ExpectRoundTrip(R"(["int",{"type":"array","items":["null","long"]}])",
                  Value::Union(1, Value::Array({Value::Union(1, Value::Long(2)),
                                                Value::Union(0, Value::Null())})),
                  "02 04 02 04 00 00");
}

TEST(AvroDatumTest, FixedAndEnum) {
  const char* fixed = R"({"type":"fixed","name":"f3","size":3})";
  ExpectRoundTrip(fixed, Value::Bytes("abc"), "61 62 63");
  std::string out;
  EXPECT_THAT(Encode(*MustParse(fixed), Value::Bytes("ab"), &out),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(DecodeAll(fixed, "ab"), IsError(ErrorKind::kCorrupt));

  const char* enm = R"({"type":"enum","name":"color","symbols":["RED","GREEN","BLUE"]})";
  ExpectRoundTrip(enm, Value::Int(2), "04");
  EXPECT_THAT(DecodeAll(enm, Bytes({0x06})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(DecodeAll(enm, Bytes({0x01})), IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(Encode(*MustParse(enm), Value::Int(3), &out), IsError(ErrorKind::kInvalidArgument));
}

// ---- Schemas ----------------------------------------------------------------------------

TEST(AvroSchemaTest, PrimitivesAsStringsOrObjects) {
  for (const char* name :
       {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}) {
    auto a = ParseSchema(std::string("\"") + name + "\"");
    auto b = ParseSchema(std::string("{\"type\":\"") + name + "\"}");
    ASSERT_THAT(a, IsOk());
    ASSERT_THAT(b, IsOk());
    EXPECT_EQ((*a)->kind, (*b)->kind);
    EXPECT_EQ(SchemaToJson(**a), std::string("\"") + name + "\"");
  }
}

TEST(AvroSchemaTest, NamedTypesResolveByShortAndFullName) {
  auto schema = MustParse(R"({"type":"record","name":"outer","namespace":"a.b","fields":[
      {"name":"f","type":{"type":"fixed","name":"f4","size":4}},
      {"name":"g","type":"f4"},
      {"name":"h","type":"a.b.f4"},
      {"name":"e","type":{"type":"enum","name":"x.E","symbols":["A"]}},
      {"name":"e2","type":"x.E"},
      {"name":"r","type":{"type":"record","name":"inner","namespace":"","fields":[]}},
      {"name":"r2","type":{"type":"inner"}}]})");
  EXPECT_EQ(schema->name, "a.b.outer");
  EXPECT_EQ(schema->fields[1].type, schema->fields[0].type);
  EXPECT_EQ(schema->fields[2].type, schema->fields[0].type);
  EXPECT_EQ(schema->fields[4].type->symbols.size(), 1u);
  EXPECT_EQ(schema->fields[6].type, schema->fields[5].type);
  EXPECT_EQ(schema->fields[5].type->name, "inner");
  // Round-trips through JSON with the references intact.
  auto again = MustParse(SchemaToJson(*schema));
  EXPECT_EQ(SchemaToJson(*again), SchemaToJson(*schema));
  EXPECT_EQ(again->fields[1].type, again->fields[0].type);
}

TEST(AvroSchemaTest, MalformedSchemasAreCorrupt) {
  for (
      const char* bad :
      {"", "{", "42", "\"nope\"", "{\"type\":\"record\",\"name\":\"r\"}",
       R"({"type":"record","name":"r","fields":[{"name":"a"}]})",
       R"({"type":"record","name":"r","fields":[{"name":"a","type":"int"},{"name":"a","type":"int"}]})",
       R"({"type":"record","name":"r","fields":[{"name":"a","type":"r"}]})",
       R"({"type":"record","name":"r","fields":[{"name":"a","type":"int","field-id":"x"}]})",
       R"({"type":"record","name":"r","fields":[{"name":"a","type":"int","field-id":4294967296}]})",
       R"({"type":"fixed","name":"f"})", R"({"type":"fixed","name":"f","size":-1})",
       R"({"type":"enum","name":"e","symbols":[1]})", R"({"type":"array"})", R"({"type":"map"})",
       R"([["int"]])", R"({"type":{"type":"int"}})",
       R"([{"type":"fixed","name":"f","size":1},{"type":"fixed","name":"f","size":2}])",
       "{\"type\":\"string\",\"logicalType\":\"\xff\"}"}) {
    EXPECT_THAT(ParseSchema(bad), IsError(ErrorKind::kCorrupt)) << bad;
  }
  std::string deep = "\"int\"";
  for (int i = 0; i < 1000; ++i) deep = "{\"type\":\"array\",\"items\":" + deep + "}";
  EXPECT_THAT(ParseSchema(deep), IsError(ErrorKind::kCorrupt));
  std::string deep_union = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THAT(ParseSchema(deep_union), IsError(ErrorKind::kCorrupt));
}

// Manifests of a table repeat one writer schema: its text is parsed once and the node
// shared. A malformed text is refused every time, and past the cache's size every
// schema still parses to itself.
TEST(AvroSchemaTest, RepeatedSchemaTextIsParsedOnce) {
  const std::string text = R"({"type":"record","name":"cached","fields":[{"name":"a","type":"long","field-id":7}]})";
  auto first = MustParse(text);
  auto second = MustParse(std::string(text));  // same text, another buffer
  EXPECT_EQ(first, second);
  EXPECT_NE(MustParse(R"({"type":"record","name":"other","fields":[]})"), first);
  for (int round = 0; round < 2; ++round)
    EXPECT_THAT(ParseSchema(R"({"type":"record","name":"bad","fields":[{"name":"a"}]})"), IsError(ErrorKind::kCorrupt));
  for (int i = 0; i < 200; ++i) {
    std::string name = "r" + std::to_string(i);
    auto node = MustParse(R"({"type":"record","name":")" + name + R"(","fields":[{"name":"x","type":"int","field-id":)" +
                          std::to_string(i) + "}]}");
    ASSERT_EQ(node->name, name);
    ASSERT_EQ(node->fields[0].field_id, i);
  }
  auto again = MustParse(text);
  EXPECT_EQ(again->name, "cached");
  EXPECT_EQ(again->fields[0].field_id, 7);
  // A text larger than any manifest's schema is parsed each time, never held.
  std::string huge = R"({"type":"record","name":"huge","doc":")" + std::string(300 << 10, 'x') + R"(","fields":[]})";
  auto big = MustParse(huge);
  EXPECT_EQ(big->name, "huge");
  EXPECT_NE(MustParse(huge), big);
}

constexpr const char* kIcebergSchema = R"({
  "type": "record", "name": "manifest_entry", "fields": [
    {"name": "status", "type": "int", "field-id": 0},
    {"name": "snapshot_id", "type": ["null", "long"], "default": null, "field-id": "1"},
    {"name": "data_file", "field-id": 2, "type": {"type": "record", "name": "r2", "fields": [
      {"name": "file_path", "type": "string", "doc": "Location URI", "field-id": 100},
      {"name": "partition", "type": {"type": "record", "name": "r102", "fields": [
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "field-id": 1000}]},
       "field-id": 102},
      {"name": "column_sizes", "type": ["null", {"type": "array", "logicalType": "map",
        "items": {"type": "record", "name": "k117_v118", "fields": [
          {"name": "key", "type": "int", "field-id": 117},
          {"name": "value", "type": "long", "field-id": 118}]}}], "default": null, "field-id": 108},
      {"name": "split_offsets", "type": ["null", {"type": "array", "items": "long", "element-id": 133}],
       "field-id": 132},
      {"name": "props", "type": {"type": "map", "values": "string", "key-id": 7, "value-id": "8"},
       "field-id": 6},
      {"name": "price", "type": {"type": "fixed", "name": "decimal_9_2", "size": 4,
        "logicalType": "decimal", "precision": 9, "scale": 2}, "field-id": 9},
      {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros",
        "adjust-to-utc": false}, "field-id": 10},
      {"name": "id", "type": {"type": "fixed", "name": "uuid_fixed", "size": 16,
        "logicalType": "uuid"}, "field-id": 11}]}}]})";

void CheckIcebergAttributes(const Node& root) {
  ASSERT_EQ(root.kind, NodeKind::kRecord);
  EXPECT_EQ(root.fields[0].field_id, 0);
  EXPECT_EQ(root.fields[1].field_id, 1);
  const Node& file = *root.fields[2].type;
  EXPECT_EQ(root.FieldIndexById(2), 2);
  EXPECT_EQ(file.FieldIndex("split_offsets"), 3);
  EXPECT_EQ(file.FieldIndex("nope"), -1);
  EXPECT_EQ(file.FieldIndexById(9999), -1);
  EXPECT_EQ(file.name, "r2");
  const Node& day = *file.fields[1].type->fields[0].type->branches[1];
  EXPECT_EQ(day.logical_type, "date");
  const Node& sizes = *file.fields[2].type->branches[1];
  EXPECT_EQ(sizes.logical_type, "map");
  EXPECT_EQ(sizes.items->fields[0].field_id, 117);
  EXPECT_EQ(sizes.items->fields[1].field_id, 118);
  EXPECT_EQ(file.fields[3].type->branches[1]->element_id, 133);
  EXPECT_EQ(file.fields[4].type->key_id, 7);
  EXPECT_EQ(file.fields[4].type->value_id, 8);
  const Node& price = *file.fields[5].type;
  EXPECT_EQ(price.fixed_size, 4);
  EXPECT_EQ(price.precision, 9);
  EXPECT_EQ(price.scale, 2);
  EXPECT_EQ(price.logical_type, "decimal");
  EXPECT_EQ(file.fields[6].type->adjust_to_utc, false);
  EXPECT_EQ(file.fields[7].type->logical_type, "uuid");
}

TEST(AvroSchemaTest, IcebergAttributesSurviveJsonRoundTrip) {
  NodePtr first = MustParse(kIcebergSchema);
  CheckIcebergAttributes(*first);
  const std::string json = SchemaToJson(*first);
  NodePtr second = MustParse(json);
  CheckIcebergAttributes(*second);
  EXPECT_EQ(SchemaToJson(*second), json);

  // Ids are written as JSON integers, optional fields get "default": null.
  auto j = nlohmann::json::parse(json);
  EXPECT_TRUE(j["fields"][1]["field-id"].is_number_integer());
  EXPECT_TRUE(j["fields"][1]["default"].is_null());
  EXPECT_TRUE(j["fields"][1].contains("default"));
  EXPECT_FALSE(j["fields"][0].contains("default"));
  const auto& file_fields = j["fields"][2]["type"]["fields"];
  EXPECT_TRUE(file_fields[3].contains("default"));  // added where the input lacked it
  EXPECT_EQ(file_fields[3]["type"][1]["element-id"], 133);
  EXPECT_EQ(file_fields[4]["type"]["value-id"], 8);
  EXPECT_EQ(file_fields[6]["type"]["adjust-to-utc"], false);
  EXPECT_EQ(file_fields[5]["type"]["precision"], 9);
}

// ---- Containers -------------------------------------------------------------------------

NodePtr TestRecordSchema() {
  return MustParse(R"({"type":"record","name":"rec","fields":[
      {"name":"id","type":"long","field-id":1},
      {"name":"name","type":["null","string"],"field-id":2},
      {"name":"tags","type":{"type":"array","items":"string","element-id":4},"field-id":3}]})");
}

std::vector<Value> TestRecords(int n) {
  std::vector<Value> out;
  for (int i = 0; i < n; ++i) {
    Value::List tags;
    for (int t = 0; t < i % 4; ++t) tags.push_back(Value::Bytes("t" + std::to_string(t)));
    out.push_back(
        Value::Record({Value::Long(i * 7919LL - 100),
                       i % 3 == 0 ? Value::Union(0, Value::Null())
                                  : Value::Union(1, Value::Bytes("n" + std::to_string(i))),
                       Value::Array(std::move(tags))}));
  }
  return out;
}

void ExpectSameRecords(const std::vector<Value>& a, const std::vector<Value>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_THAT(a[i], SameAs(b[i])) << "record " << i;
}

class ContainerCodecTest : public ::testing::TestWithParam<Codec> {};

TEST_P(ContainerCodecTest, RoundTripKeepsRecordsAndMetadata) {
  NodePtr schema = TestRecordSchema();
  const auto records = TestRecords(1000);
  const std::map<std::string, std::string> meta{
      {"schema", "{}"}, {"format-version", "2"}, {"binary", std::string("\0\1", 2)}};
  auto bytes = WriteContainer(*schema, meta, records, GetParam(), 128);
  ASSERT_THAT(bytes, IsOk());
  EXPECT_EQ(bytes->substr(0, 4), std::string("Obj\x01", 4));
  auto file = ReadContainer(*bytes);
  ASSERT_THAT(file, IsOk());
  ExpectSameRecords(file->records, records);
  EXPECT_EQ(file->metadata.at("avro.codec"), CodecName(GetParam()));
  EXPECT_EQ(file->metadata.at("avro.schema"), file->schema_json);
  for (const auto& [k, v] : meta) EXPECT_EQ(file->metadata.at(k), v);
  EXPECT_EQ(file->schema->fields[2].type->element_id, 4);
  EXPECT_EQ(file->schema->fields[1].field_id, 2);

  auto empty = WriteContainer(*schema, {}, {}, GetParam());
  ASSERT_THAT(empty, IsOk());
  auto empty_file = ReadContainer(*empty);
  ASSERT_THAT(empty_file, IsOk());
  EXPECT_TRUE(empty_file->records.empty());
}

TEST_P(ContainerCodecTest, TruncationAndGarblingNeverCrash) {
  NodePtr schema = TestRecordSchema();
  const auto records = TestRecords(20);
  auto bytes = WriteContainer(*schema, {{"k", "v"}}, records, GetParam(), 7);
  ASSERT_THAT(bytes, IsOk());
  const std::string& good = *bytes;
  const size_t header_end = good.find(good.substr(good.size() - 16));  // first sync marker
  for (size_t len = 0; len < good.size(); ++len) {
    auto file = ReadContainer(std::string_view(good).substr(0, len));
    if (file) {
      // Only a cut exactly between blocks leaves a valid (shorter) file.
      EXPECT_GE(len, header_end + 16);
      EXPECT_LT(file->records.size(), records.size());
    } else {
      EXPECT_EQ(file.error().kind, ErrorKind::kCorrupt) << file.error().ToString();
    }
  }
  std::mt19937 rng(42);
  for (size_t pos = 0; pos < good.size(); ++pos) {
    for (int flip : {0xff, 0x01, 0x80, static_cast<int>(rng() % 255 + 1)}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ flip);
      auto file = ReadContainer(bad);
      if (!file) {
        EXPECT_EQ(file.error().kind, ErrorKind::kCorrupt) << file.error().ToString();
      }
    }
  }
  for (int i = 0; i < 2000; ++i) {
    std::string noise = good.substr(0, rng() % good.size());
    for (int k = 0; k < 4 && !noise.empty(); ++k) {
      noise[rng() % noise.size()] = static_cast<char>(rng());
    }
    auto file = ReadContainer(noise);
    if (!file) {
      EXPECT_EQ(file.error().kind, ErrorKind::kCorrupt);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, ContainerCodecTest,
                         ::testing::Values(Codec::kNull, Codec::kDeflate, Codec::kSnappy,
                                           Codec::kZstandard),
                         [](const auto& info) { return std::string(CodecName(info.param)); });

TEST(AvroContainerTest, CodecNames) {
  for (Codec c : {Codec::kNull, Codec::kDeflate, Codec::kSnappy, Codec::kZstandard}) {
    EXPECT_EQ(ParseCodec(CodecName(c)), c);
  }
  EXPECT_THAT(ParseCodec("zstd"), Not(IsOk()));
}

TEST(AvroContainerTest, SyncMarkersAreRandom) {
  NodePtr schema = MustParse("\"int\"");
  auto a = WriteContainer(*schema, {}, {Value::Int(1)}, Codec::kNull);
  auto b = WriteContainer(*schema, {}, {Value::Int(1)}, Codec::kNull);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_NE(a->substr(a->size() - 16), b->substr(b->size() - 16));
}

TEST(AvroContainerTest, WriteRejectsBadInput) {
  NodePtr schema = MustParse("\"int\"");
  EXPECT_THAT(WriteContainer(*schema, {{"avro.codec", "x"}}, {}),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(WriteContainer(*schema, {}, {Value::Bytes("x")}),
              IsError(ErrorKind::kInvalidArgument));
  EXPECT_THAT(WriteContainer(*schema, {}, {}, Codec::kNull, 0),
              IsError(ErrorKind::kInvalidArgument));
}

std::string Patch(std::string bytes, std::string_view from, std::string_view to) {
  auto pos = bytes.find(from);
  EXPECT_NE(pos, std::string::npos);
  if (pos != std::string::npos) bytes.replace(pos, from.size(), to);
  return bytes;
}

TEST(AvroContainerTest, ReadErrorsNameTheProblem) {
  NodePtr schema = MustParse("\"string\"");
  auto good = WriteContainer(*schema, {}, {Value::Bytes("hello")}, Codec::kNull);
  ASSERT_THAT(good, IsOk());

  auto unknown = ReadContainer(Patch(*good, "\x08null", "\x08lzma"));
  ASSERT_THAT(unknown, IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(unknown.error().message, HasSubstr("lzma"));

  auto magic = ReadContainer("Obj\x02" + good->substr(4));
  ASSERT_THAT(magic, IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(magic.error().message, HasSubstr("magic"));

  std::string bad_sync = *good;
  bad_sync.back() ^= 1;
  auto sync = ReadContainer(bad_sync);
  ASSERT_THAT(sync, IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(sync.error().message, HasSubstr("sync"));

  auto no_schema = ReadContainer(Patch(*good, "avro.schema", "avro.schemx"));
  ASSERT_THAT(no_schema, IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(no_schema.error().message, HasSubstr("avro.schema"));

  auto stray = ReadContainer(Patch(*good, "\x0ahello", "\x08hello"));
  ASSERT_THAT(stray, IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(stray.error().message, HasSubstr("stray"));

  auto snappy = WriteContainer(*schema, {}, {Value::Bytes("hello")}, Codec::kSnappy);
  ASSERT_THAT(snappy, IsOk());
  std::string bad_crc = *snappy;
  bad_crc[bad_crc.size() - 17] ^= 1;  // last byte of the CRC, just before the sync
  auto crc = ReadContainer(bad_crc);
  ASSERT_THAT(crc, IsError(ErrorKind::kCorrupt));
  EXPECT_THAT(crc.error().message, HasSubstr("CRC"));
}

TEST(AvroContainerTest, DecompressionBombsAreRefused) {
  NodePtr schema = MustParse("\"bytes\"");
  std::vector<Value> records(64, Value::Bytes(std::string(1 << 20, '\0')));
  for (Codec codec : {Codec::kDeflate, Codec::kZstandard}) {
    auto bytes = WriteContainer(*schema, {}, records, codec, 64);
    ASSERT_THAT(bytes, IsOk());
    auto file = ReadContainer(*bytes);
    ASSERT_THAT(file, IsError(ErrorKind::kCorrupt)) << CodecName(codec);
    EXPECT_THAT(file.error().message, HasSubstr("decompresses"));
  }
  // The same data in small blocks of a plainly sized file reads back.
  auto plain = WriteContainer(*schema, {}, records, Codec::kNull, 8);
  ASSERT_THAT(plain, IsOk());
  auto file = ReadContainer(*plain);
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(file->records.size(), 64u);
}

TEST(AvroContainerTest, ZeroWidthRecordCountsAreBounded) {
  NodePtr schema = MustParse("\"null\"");
  auto good = WriteContainer(*schema, {}, std::vector<Value>(10, Value::Null()), Codec::kNull);
  ASSERT_THAT(good, IsOk());
  auto file = ReadContainer(*good);
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(file->records.size(), 10u);
  // Replace the block count (10 → 0x14) with 2^60.
  std::string huge = good->substr(0, good->size() - 17);
  ASSERT_EQ(static_cast<uint8_t>(huge.back()), 0x14);
  huge.pop_back();
  internal::WriteLong(int64_t{1} << 60, &huge);
  huge += good->substr(good->size() - 17);
  EXPECT_THAT(ReadContainer(huge), IsError(ErrorKind::kCorrupt));
}

// ---- Files written by fastavro (tests/fuzz/make_avro_corpus.py) ---------------------------

std::string ReadCorpusFile(const std::string& name) {
  const auto path =
      std::filesystem::path(SKADE_SOURCE_DIR) / "tests/fuzz/corpus/avro_container" / name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class FastavroFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FastavroFileTest, ReadsKitchenSink) {
  auto file = ReadContainer(ReadCorpusFile("sink_" + GetParam() + ".avro"));
  ASSERT_THAT(file, IsOk());
  EXPECT_EQ(file->metadata.at("iceberg.note"), "seed");
  const Node& schema = *file->schema;
  EXPECT_EQ(schema.name, "skade.test.sink");
  EXPECT_EQ(schema.fields[10].type->element_id, 12);
  EXPECT_EQ(schema.fields[11].type->key_id, 14);
  EXPECT_EQ(schema.fields[13].type->fields[2].type->adjust_to_utc, true);
  ASSERT_EQ(file->records.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    SCOPED_TRACE(i);
    const auto& f = file->records[i].list();
    EXPECT_THAT(f[0], SameAs(Value::Bool(i % 2 == 0)));
    EXPECT_THAT(f[1], SameAs(Value::Int(i * 1000 - 5)));
    EXPECT_THAT(f[2], SameAs(Value::Long(-(int64_t{1} << 40) * i)));
    EXPECT_THAT(f[3], SameAs(Value::Float(i + 0.5f)));
    EXPECT_THAT(f[4], SameAs(Value::Double(i / 4.0)));
    EXPECT_THAT(f[5], SameAs(Value::Bytes("row-" + std::to_string(i))));
    EXPECT_THAT(f[6], SameAs(Value::Bytes(std::string{static_cast<char>(i), '\0', '\xff'})));
    EXPECT_THAT(f[7],
                SameAs(i % 3 == 0 ? Value::Union(0, Value::Null())
                                  : Value::Union(1, Value::Bytes("opt" + std::to_string(i)))));
    EXPECT_THAT(f[8], SameAs(Value::Bytes(std::string("\0\1\2", 3) + static_cast<char>(i))));
    EXPECT_THAT(f[9], SameAs(Value::Int(i % 3)));
    EXPECT_EQ(f[10].list().size(), static_cast<size_t>(i));
    EXPECT_EQ(std::get<Value::MapEntries>(f[11].data).size(), static_cast<size_t>(i % 4));
    EXPECT_EQ(f[12].branch, i % 2 == 0 ? 1 : 0);
    const auto& nested = f[13].list();
    EXPECT_THAT(nested[1], SameAs(Value::Int(19000 + i)));
    EXPECT_THAT(nested[2], SameAs(Value::Long(1'700'000'000'000'000 + i)));
  }
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, FastavroFileTest,
                         ::testing::Values("null", "deflate", "snappy", "zstandard"));

TEST(AvroContainerTest, ReadsNegativeBlockCountsEverywhere) {
  auto file = ReadContainer(ReadCorpusFile("negative_blocks_null.avro"));
  ASSERT_THAT(file, IsOk());
  ASSERT_EQ(file->records.size(), 2u);
  Value expected = Value::Record(
      {Value::Array({Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4)}),
       Value{Value::MapEntries{{"k1", Value::Bytes("v")}, {"k2", Value::Bytes("")}}}});
  EXPECT_THAT(file->records[0], SameAs(expected));
}

}  // namespace
}  // namespace skade::avro
