// Row lineage (format v3): the metadata columns `_row_id` and `_last_updated_sequence_number`.
// A data file may hold them (a rewrite that kept its rows' ids); where it does not, or a
// value is null, a row's id is its file's first_row_id plus its position, and its sequence
// number the file's data sequence number (spec "Row Lineage").
#pragma once

#include <string_view>

#include "skade/format/types.h"

namespace skade {

inline constexpr int kRowIdFieldId = 2147483540;
inline constexpr int kLastUpdatedSequenceNumberFieldId = 2147483539;
inline constexpr std::string_view kRowIdColumn = "_row_id";
inline constexpr std::string_view kLastUpdatedSequenceNumberColumn = "_last_updated_sequence_number";

inline bool IsRowLineageField(int id) { return id == kRowIdFieldId || id == kLastUpdatedSequenceNumberFieldId; }
inline bool IsRowLineageColumn(std::string_view name) {
  return name == kRowIdColumn || name == kLastUpdatedSequenceNumberColumn;
}

/// The two columns as optional longs with their reserved ids.
inline std::vector<NestedField> RowLineageFields() {
  return {NestedField{kRowIdFieldId, std::string(kRowIdColumn), false, Type::Primitive(TypeId::kLong)},
          NestedField{kLastUpdatedSequenceNumberFieldId, std::string(kLastUpdatedSequenceNumberColumn), false,
                      Type::Primitive(TypeId::kLong)}};
}

}  // namespace skade
