// A small Avro codec: schemas (keeping Iceberg's field-id attributes), a generic
// datum, and object-container files with the null, deflate, snappy and zstandard codecs.
// Written for Iceberg manifests and manifest lists; not a general Avro library.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "skade/common/result.h"

namespace skade::avro {

enum class NodeKind {
  kNull, kBoolean, kInt, kLong, kFloat, kDouble, kBytes, kString,
  kRecord, kEnum, kArray, kMap, kUnion, kFixed,
};

struct Node;
using NodePtr = std::shared_ptr<const Node>;

/// One field of a record schema. `field_id` is Iceberg's `field-id` attribute.
struct FieldNode {
  std::string name;
  NodePtr type;
  std::optional<int> field_id;
};

/// A parsed Avro schema node. Unknown attributes are ignored except those listed.
struct Node {
  NodeKind kind = NodeKind::kNull;
  std::string name;          // record / enum / fixed name (full name as written)
  std::string logical_type;  // "date", "decimal", "map", "uuid", ... or empty
  int fixed_size = 0;        // fixed
  int precision = 0, scale = 0;          // decimal
  std::optional<bool> adjust_to_utc;     // timestamp-micros
  std::vector<FieldNode> fields;         // record
  std::vector<std::string> symbols;      // enum
  NodePtr items;                         // array items / map values
  std::vector<NodePtr> branches;         // union
  std::optional<int> element_id;         // array: Iceberg `element-id`
  std::optional<int> key_id, value_id;   // map: Iceberg `key-id`, `value-id`

  /// Index of a record field by name, or -1.
  int FieldIndex(std::string_view field_name) const;
  /// Index of a record field by Iceberg field id, or -1.
  int FieldIndexById(int id) const;
};

/// Parses Avro schema JSON (named types may be referenced by name after definition).
/// Errors: kCorrupt naming what is malformed.
Result<NodePtr> ParseSchema(std::string_view json);
/// Canonical-enough JSON for a schema, keeping field-id / element-id / key-id / value-id,
/// logicalType, precision, scale, adjust-to-utc, default null for optional union fields.
std::string SchemaToJson(const Node& node);

/// A generic datum. Records and arrays hold `list`; maps hold `map` entries in file
/// order; unions hold the chosen branch index in `branch` and the value in `list[0]`;
/// enum holds its symbol index in int. bytes/string/fixed all use `bytes`.
struct Value {
  using List = std::vector<Value>;
  using MapEntries = std::vector<std::pair<std::string, Value>>;
  std::variant<std::monostate, bool, int32_t, int64_t, float, double, std::string, List,
               MapEntries>
      data;
  int branch = -1;  // for unions only

  static Value Null() { return Value{}; }
  static Value Bool(bool v) { return Value{v}; }
  static Value Int(int32_t v) { return Value{v}; }
  static Value Long(int64_t v) { return Value{v}; }
  static Value Float(float v) { return Value{v}; }
  static Value Double(double v) { return Value{v}; }
  static Value Bytes(std::string v) { return Value{std::move(v)}; }
  static Value Record(List fields) { return Value{std::move(fields)}; }
  static Value Array(List items) { return Value{std::move(items)}; }
  static Value Union(int branch, Value v) {
    List l;
    l.push_back(std::move(v));  // an initializer list would deep-copy v
    Value u{std::move(l)};
    u.branch = branch;
    return u;
  }

  bool is_null() const { return std::holds_alternative<std::monostate>(data); }
  const List& list() const { return std::get<List>(data); }
  List& list() { return std::get<List>(data); }
};

/// Encodes one datum in Avro binary form. Errors: kInvalidArgument when the value
/// does not match the schema.
Status Encode(const Node& schema, const Value& value, std::string* out);
/// Decodes one datum; `*pos` advances. Errors: kCorrupt on truncated/invalid bytes.
Result<Value> Decode(const Node& schema, std::string_view bytes, size_t* pos);

enum class Codec { kNull, kDeflate, kSnappy, kZstandard };
/// Avro codec name ("null", "deflate", "snappy", "zstandard") to Codec.
Result<Codec> ParseCodec(std::string_view name);
std::string_view CodecName(Codec codec);

/// A whole object-container file held in memory.
struct ContainerFile {
  NodePtr schema;
  std::string schema_json;
  std::map<std::string, std::string> metadata;  // all header keys, including avro.*
  std::vector<Value> records;
};

/// Reads an object-container file. Errors: kCorrupt naming what is wrong
/// (bad magic, truncated block, sync mismatch, unknown codec, bad datum).
Result<ContainerFile> ReadContainer(std::string_view bytes);

/// Writes an object-container file. `metadata` holds user keys (not avro.*).
/// Records go in blocks of up to `block_records`.
Result<std::string> WriteContainer(const Node& schema,
                                   const std::map<std::string, std::string>& metadata,
                                   const std::vector<Value>& records, Codec codec = Codec::kDeflate,
                                   size_t block_records = 4096);

}  // namespace skade::avro
