// Opening input files for append: Parquet, CSV, JSON lines.
#pragma once

#include <memory>
#include <string>

#include "skade/common/result.h"
#include "skade/format/types.h"

namespace arrow {
class RecordBatchReader;
}

namespace skade::cli {

/// A streaming reader of `path`, chosen by extension (.parquet, .csv, .jsonl/.json/.ndjson).
/// CSV and JSON columns that the table schema names are parsed as its types.
/// Errors: kInvalidArgument (unknown extension), kNotFound, kCorrupt naming the file.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInput(const std::string& path, const Schema& schema);

}  // namespace skade::cli
