// Metadata columns a scan can output beside a table's own (as Spark's `SELECT _file, _pos,
// _row_id ...`): where a row lies (`_file`, `_pos`) and, in format v3 tables, its row lineage
// (`_row_id`, `_last_updated_sequence_number`). A data file may hold the lineage columns (a
// rewrite that kept its rows' ids); where it does not, or a value is null, a row's id is its
// file's first_row_id plus its position, and its sequence number the file's data sequence
// number (spec "Row Lineage").
#pragma once

#include <optional>
#include <string_view>

#include "skade/format/types.h"

namespace skade {

inline constexpr int kFilePathFieldId = 2147483646;
inline constexpr int kPositionFieldId = 2147483645;
inline constexpr int kRowIdFieldId = 2147483540;
inline constexpr int kLastUpdatedSequenceNumberFieldId = 2147483539;

inline bool IsRowLineageField(int id) { return id == kRowIdFieldId || id == kLastUpdatedSequenceNumberFieldId; }
inline bool IsMetadataField(int id) { return id == kFilePathFieldId || id == kPositionFieldId || IsRowLineageField(id); }

/// The metadata column of a name (`_file`, `_pos`, `_row_id`, `_last_updated_sequence_number`).
inline std::optional<NestedField> MetadataColumn(std::string_view name) {
  auto field = [&](int id, TypeId type, bool required) {
    return NestedField{id, std::string(name), required, Type::Primitive(type)};
  };
  if (name == "_file") return field(kFilePathFieldId, TypeId::kString, true);
  if (name == "_pos") return field(kPositionFieldId, TypeId::kLong, true);
  if (name == "_row_id") return field(kRowIdFieldId, TypeId::kLong, false);
  if (name == "_last_updated_sequence_number") return field(kLastUpdatedSequenceNumberFieldId, TypeId::kLong, false);
  return std::nullopt;
}

/// `schema` with the two row lineage columns after its own fields (optional longs with
/// their reserved ids): what a rewrite that keeps its rows' ids reads and writes.
inline Schema WithRowLineage(const Schema& schema) {
  std::vector<NestedField> fields = schema.fields();
  fields.push_back(*MetadataColumn("_row_id"));
  fields.push_back(*MetadataColumn("_last_updated_sequence_number"));
  return Schema(schema.schema_id(), std::move(fields), schema.identifier_field_ids());
}

}  // namespace skade
