// Schema evolution without rewriting data: columns are tracked by field id, so
// old files read through the new schema (new columns read as null).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/table_metadata.h"
#include "skade/format/types.h"

namespace skade {

/// A list of schema changes, validated together against a table's metadata. Paths name
/// nested fields through structs, lists and maps ("addr.zip", "tags.element", "m.value");
/// a list's element and a map's value are only widened or made optional, a map's key
/// not changed.
class SchemaUpdate {
 public:
  /// Adds an optional column; `path` may name a struct's child ("addr.country").
  /// Nested ids in `type` are reassigned. `after` places it after a sibling. With
  /// `default_text` (format v3 only, a primitive column's value as text) the rows written
  /// before read as it and writes without the column fill it in; such a column may be
  /// `required`.
  SchemaUpdate& AddColumn(std::string path, TypePtr type, std::optional<std::string> after = std::nullopt,
                          std::optional<std::string> default_text = std::nullopt, bool required = false);
  SchemaUpdate& RenameColumn(std::string path, std::string new_name);
  SchemaUpdate& DropColumn(std::string path);
  /// int→long, float→double, decimal(P,S)→decimal(P',S) with P' > P.
  SchemaUpdate& WidenColumn(std::string path, TypePtr type);
  SchemaUpdate& MakeOptional(std::string path);
  /// Makes these columns (names after this update's other changes; none: no identifier)
  /// the identifier fields, the keys of upserts and key deletes (IdentifierFieldIds).
  SchemaUpdate& SetIdentifierFields(std::vector<std::string> columns);

  /// The evolved metadata (a new schema, made current). Errors: kInvalidArgument
  /// listing every change that cannot apply (unknown column, invalid type change,
  /// dropping an identifier or partition source column, duplicate names).
  Result<TableMetadata> Apply(const TableMetadata& base) const;

 private:
  struct Change {
    enum Kind { kAdd, kRename, kDrop, kWiden, kOptional } kind;
    std::string path;
    TypePtr type;
    std::string name;
    std::optional<std::string> after;
    std::optional<std::string> default_text;  // kAdd
    bool required = false;                    // kAdd, with a default
  };
  std::vector<Change> changes_;
  std::optional<std::vector<std::string>> identifiers_;
};

/// The field ids of identifier columns named in `schema`: each a required top-level
/// column of a primitive type other than float and double (Iceberg's rules; skade keeps
/// identifier fields at the top level). Errors: kInvalidArgument naming the column.
Result<std::vector<int>> IdentifierFieldIds(const Schema& schema, const std::vector<std::string>& columns);

/// The identifier fields as the columns upserts and key deletes match by; empty when the
/// table has none. Errors: kInvalidArgument for one inside a struct (Iceberg allows it, in
/// tables other tools make; skade matches keys by top-level columns).
Result<std::vector<const NestedField*>> KeyColumns(const Schema& schema);

/// Whether a type change is an allowed promotion.
bool IsAllowedPromotion(const Type& from, const Type& to);

}  // namespace skade
