// Reading a whole local Parquet file into Arrow (delete files, drop folders).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "skade/common/result.h"

namespace arrow {
class Table;
}

namespace skade {

/// Every row of the Parquet file at `location` (a path or file:// URI).
/// Errors: kCorrupt naming the file when it is missing, not readable Parquet, or
/// holds another number of rows than `expected_rows` (a manifest's record count).
Result<std::shared_ptr<arrow::Table>> ReadWholeParquet(const std::string& location,
                                                       std::optional<int64_t> expected_rows = std::nullopt);

}  // namespace skade
