// Printing listings and scan results as table, csv, jsonl (and parquet for scans).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/types.h"

namespace arrow {
class RecordBatch;
class RecordBatchReader;
}  // namespace arrow

namespace skade::cli {

enum class Format { kTable, kCsv, kJsonl, kParquet, kNone };
Result<Format> ParseFormat(const std::string& name, bool allow_data_formats);

/// A small listing (namespaces, tables, snapshots, log...).
struct Listing {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
  /// Columns whose values are numbers (unquoted in jsonl).
  std::vector<bool> numeric;
  /// Columns whose values are JSON text, written as they are in jsonl.
  std::vector<bool> json = {};
};
void PrintListing(const Listing& listing, Format format, std::FILE* out);

/// Streams a scan to `out` (or to `output_path` for parquet). Returns rows written.
/// With `progress`, a running row count goes to stderr (for terminals).
Result<int64_t> WriteScan(arrow::RecordBatchReader& reader, const Schema& schema, Format format,
                          std::FILE* out, const std::string& output_path, bool progress = false);

/// An epoch-milliseconds instant as ISO 8601 text (UTC).
std::string TimeText(int64_t ms);

/// JSON text of row `row` of `batch` (one object), typed through the schema.
std::string RowToJson(const arrow::RecordBatch& batch, int64_t row, const Schema& schema);

}  // namespace skade::cli
