// Iceberg's type system: primitive and nested types, fields and schemas.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"

namespace skade {

enum class TypeId {
  kBoolean, kInt, kLong, kFloat, kDouble, kDecimal, kDate, kTime, kTimestamp,
  kTimestampTz, kTimestampNs, kTimestampTzNs, kString, kUuid, kBinary, kFixed, kStruct, kList, kMap,
};

/// timestamp and timestamptz, in microseconds, and (format v3) timestamp_ns and
/// timestamptz_ns, in nanoseconds: a value is that many units since the epoch (UTC with a zone).
inline bool IsTimestamp(TypeId t) {
  return t == TypeId::kTimestamp || t == TypeId::kTimestampTz || t == TypeId::kTimestampNs ||
         t == TypeId::kTimestampTzNs;
}
inline bool IsNanoTimestamp(TypeId t) { return t == TypeId::kTimestampNs || t == TypeId::kTimestampTzNs; }
inline bool HasZone(TypeId t) { return t == TypeId::kTimestampTz || t == TypeId::kTimestampTzNs; }
/// How many units of a timestamp's value make a microsecond: 1000 for nanoseconds, else 1.
inline int64_t UnitsPerMicro(TypeId t) { return IsNanoTimestamp(t) ? 1000 : 1; }

struct Type;
using TypePtr = std::shared_ptr<const Type>;

/// A named, id-carrying field of a struct (also a list element or a map key/value).
struct NestedField {
  int id = 0;
  std::string name;
  bool required = false;
  TypePtr type;
  std::string doc;
  /// Format v3 column defaults, as the JSON text of the value (empty: none): what rows of
  /// files written before the column existed read as, and what writers fill in.
  std::string initial_default;
  std::string write_default;
};

/// An immutable Iceberg type. Nested types keep their children in `fields`:
/// struct: its fields; list: {element}; map: {key, value}.
struct Type {
  TypeId id = TypeId::kBoolean;
  int precision = 0;  // decimal
  int scale = 0;      // decimal
  int length = 0;     // fixed
  std::vector<NestedField> fields;

  bool is_primitive() const { return id < TypeId::kStruct; }
  bool is_nested() const { return !is_primitive(); }
  const NestedField& element() const { return fields[0]; }
  const NestedField& key() const { return fields[0]; }
  const NestedField& value() const { return fields[1]; }

  /// Iceberg's spelling: "long", "decimal(10,2)", "fixed[16]", "struct<...>".
  std::string ToString() const;
  bool Equals(const Type& other) const;

  static TypePtr Primitive(TypeId id);
  static TypePtr Decimal(int precision, int scale);
  static TypePtr Fixed(int length);
  static TypePtr Struct(std::vector<NestedField> fields);
  static TypePtr List(NestedField element);
  static TypePtr Map(NestedField key, NestedField value);
};

/// Parses a primitive type name as Iceberg spells it in JSON ("long", "decimal(9,2)").
Result<TypePtr> ParsePrimitiveType(std::string_view name);

/// A table schema: top-level fields plus identifier field ids.
class Schema {
 public:
  Schema() = default;
  Schema(int schema_id, std::vector<NestedField> fields, std::vector<int> identifier_field_ids = {});

  int schema_id() const { return schema_id_; }
  const std::vector<NestedField>& fields() const { return fields_; }
  const std::vector<int>& identifier_field_ids() const { return identifier_field_ids_; }

  /// Any field at any depth, by id; nullptr when absent.
  const NestedField* FindField(int id) const;
  /// The top-level field holding field `id` at any depth (the field itself when it is
  /// top-level); nullptr when absent.
  const NestedField* TopLevelOf(int id) const;
  /// Top-level field by name (exact, then case-insensitive); nullptr when absent.
  const NestedField* FindTopLevel(std::string_view name) const;
  /// A field by dotted path ("addr.city"); nullptr when absent.
  const NestedField* FindByPath(std::string_view path) const;
  /// Dotted path of a field id ("addr.city"), empty when absent.
  std::string PathOf(int id) const;
  /// Highest field id used anywhere in the schema.
  int HighestFieldId() const;
  /// Names of the top-level fields, comma separated (for error messages).
  std::string ColumnNames() const;
  bool SameFields(const Schema& other) const;

 private:
  int schema_id_ = 0;
  std::vector<NestedField> fields_;
  std::vector<int> identifier_field_ids_;
};

using SchemaPtr = std::shared_ptr<const Schema>;

/// `field` cut down to what `keep` names (field ids): a kept field whole, a struct to
/// its fields that keep something (in schema order); nullopt when nothing is kept.
std::optional<NestedField> PruneField(const NestedField& field, const std::vector<int>& keep);

/// Nesting levels of a type (a primitive is 0, list<int> is 1) or of a schema's
/// deepest column. Kept within kMaxTypeDepth (skade/common/nesting.h) everywhere.
int TypeDepth(const Type& type);
int SchemaDepth(const Schema& schema);
/// kInvalidArgument naming the deepest column when the schema is nested deeper than
/// kMaxTypeDepth levels.
Status CheckSchemaDepth(const Schema& schema);

/// kInvalidArgument naming the first column whose type needs a later format version than
/// `format_version` (timestamp_ns and timestamptz_ns need 3).
Status CheckTypesForFormat(const Schema& schema, int format_version);

/// Parses the CLI schema language, assigning ids from 1 in order of appearance:
/// `id:long!, name:string, tags:list<string>, addr:struct<city:string,zip:int>,
///  m:map<string,long>, price:decimal(10,2), f:fixed(16)` (`!` = required).
Result<Schema> ParseSchemaSpec(std::string_view spec);

}  // namespace skade
