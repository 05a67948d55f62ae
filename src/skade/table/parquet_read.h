// Reading a whole local Parquet file into Arrow (delete files, drop folders).
#pragma once

#include <memory>
#include <string>

#include "skade/common/result.h"

namespace arrow {
class Table;
}

namespace skade {

/// Every row of the Parquet file at `location` (a path or file:// URI).
/// Errors: kCorrupt naming the file when it is missing or not readable Parquet.
Result<std::shared_ptr<arrow::Table>> ReadWholeParquet(const std::string& location);

}  // namespace skade
