// Reading only the data pages of a column chunk that hold rows a scan still needs
// (late materialisation below the row group). Not API.
//
// Arrow 26's Arrow-level Parquet reader reads whole column chunks (no row ranges: see
// apache/arrow#38865, #45284), but its page reader takes a data-page filter, which skips a
// page before decompressing it. For flat columns a data page's value count is its row
// count, so the page's rows are known from its header, with or without a page index.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skade/common/result.h"
#include "skade/expr/expression.h"
#include "skade/format/types.h"

namespace arrow {
class Array;
class DataType;
class MemoryPool;
}  // namespace arrow

namespace parquet {
class ParquetFileReader;
}  // namespace parquet

namespace skade {

/// Whether ReadNeededPages can read leaf column `leaf` of `file` as `type`: a top-level,
/// non-repeated column of fixed-width numbers exactly `type`'s width (ints, floats,
/// dates, times, timestamps; not decimals, booleans or INT96).
bool ReadsNeededPages(parquet::ParquetFileReader& file, int leaf, const arrow::DataType& type);

/// Pages a scan's filter rules out by their bounds in the file's page index (of the column
/// read; Arrow's writer puts none in page headers): they are neither read nor decoded, and
/// their rows are set in `excluded` (an entry per row of the row group), for the caller to
/// drop whatever the filter says of them.
struct PageFilter {
  const expr::Expr* filter;
  const NestedField* field;  // the column read
  std::vector<uint8_t>* excluded;
  // The caller's batches: the rows of a batch whose pages were all skipped are left
  // unwritten (the caller reads none of them), which spares touching their memory.
  int64_t batch_rows;
};

/// Leaf column `leaf` of row group `row_group` as `type`, decoding only the data pages
/// holding a row r with (*needed)[r] != 0 (needed has one entry per row of the row group;
/// null: every row is needed) that `by_stats` (optional) does not rule out; the rows of
/// skipped pages read as null, for the caller to drop. Adds the pages not decoded to
/// `pages_skipped`; the column's memory comes from `pool`. Errors: kCorrupt naming `where`
/// when the pages do not add up to the row group.
Result<std::shared_ptr<arrow::Array>> ReadNeededPages(parquet::ParquetFileReader& file, int row_group,
                                                      int leaf, const std::shared_ptr<arrow::DataType>& type,
                                                      const std::vector<uint8_t>* needed, const PageFilter* by_stats,
                                                      arrow::MemoryPool* pool, const std::string& where,
                                                      int64_t* pages_skipped);

}  // namespace skade
