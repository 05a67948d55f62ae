// Opening input files for append: Parquet, CSV, JSON lines.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/types.h"

namespace arrow {
class RecordBatchReader;
}

namespace skade::cli {

/// Text inputs are read in blocks of this many bytes; a row longer than a block is
/// read again with a larger one (NextBlockBytes), up to kMaxInputBlockBytes.
inline constexpr int64_t kInputBlockBytes = 4 << 20;
inline constexpr int64_t kMaxInputBlockBytes = 1LL << 30;

/// A streaming reader of `path`, chosen by extension (.parquet, .csv, .jsonl/.json/.ndjson).
/// CSV and JSON columns that the table schema names are parsed as its types.
/// Errors: kInvalidArgument (unknown extension, a column named twice, JSON nested
/// deeper than kMaxJsonDepth), kNotFound, kCorrupt naming the file.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInput(const std::string& path, const Schema& schema,
                                                            int64_t block_bytes = kInputBlockBytes);

/// The block size to read `path` again with after `error`, or 0 when the error is
/// not a row longer than `block_bytes` (or no larger block is allowed).
int64_t NextBlockBytes(const Error& error, int64_t block_bytes);

/// The rows of `input` (an input file's, conformed to `schema` as they come, so an error
/// names the file's row) whose position, counted from `first`, `keep` marks. `*rows_read`
/// counts the input's rows as they are read. Errors: kCorrupt when the input holds more
/// rows than `keep` covers.
std::shared_ptr<arrow::RecordBatchReader> KeepMarkedRows(std::shared_ptr<arrow::RecordBatchReader> input,
                                                         const Schema& schema, const std::vector<uint8_t>& keep,
                                                         int64_t first, int64_t* rows_read);

}  // namespace skade::cli
