// The Iceberg REST catalog's table changes: a create request and a commit's
// requirements and updates, applied to table metadata as the spec defines them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "skade/common/result.h"
#include "skade/format/table_metadata.h"

namespace skade::server {

/// The metadata a create request describes (`schema`, `partition-spec`,
/// `write-order`, `properties`), with fresh field ids assigned from 1 and the spec
/// and sort order remapped to them, at `location`. Errors: kInvalidArgument.
Result<TableMetadata> MetadataForCreate(const nlohmann::ordered_json& request,
                                        const std::string& location);

/// Checks `requirements` against `base` (null: the table does not exist, as
/// `assert-create` requires) and applies `updates` on top of it. A requirement that
/// does not hold is kCommitConflict naming it; a malformed update kInvalidArgument;
/// an update kind skade does not store (encryption keys, format v3) kUnsupported.
/// `new_location` is where a table created by the commit lives unless it sets one.
Result<TableMetadata> ApplyCommit(const TableMetadata* base,
                                  const nlohmann::ordered_json& requirements,
                                  const nlohmann::ordered_json& updates,
                                  const std::string& new_location);

/// The operation a commit's updates amount to, for the commit log ("append" for
/// an added snapshot, else "metadata-change", or the schema/spec kinds).
std::string CommitOperation(const nlohmann::ordered_json& updates);

}  // namespace skade::server
