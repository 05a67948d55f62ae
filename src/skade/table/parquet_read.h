// Reading a whole local Parquet file into Arrow (delete files, drop folders).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "skade/common/result.h"

namespace arrow {
class Field;
class Table;
}  // namespace arrow
namespace parquet::arrow {
struct SchemaField;
}  // namespace parquet::arrow

namespace skade {

/// Every row of the Parquet file at `location` (a path or file:// URI); with `keep`,
/// only the top-level columns it accepts (the rest are not decoded; none may be).
/// Errors: kCorrupt naming the file when it is missing, not readable Parquet, or holds
/// another number of rows than `expected_rows` (a manifest's record count).
Result<std::shared_ptr<arrow::Table>> ReadWholeParquet(const std::string& location,
                                                       std::optional<int64_t> expected_rows = std::nullopt,
                                                       const std::function<bool(const arrow::Field&)>& keep = {});

/// Leaf column indices below a Parquet schema field.
void CollectLeaves(const parquet::arrow::SchemaField& f, std::vector<int>* out);

}  // namespace skade
