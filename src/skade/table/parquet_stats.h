// Parquet footer statistics → Iceberg column metrics (keyed by field id).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "skade/expr/expression.h"
#include "skade/format/types.h"

namespace parquet {
class EncodedStatistics;
class FileMetaData;
}

namespace skade {

/// Metrics of one row group; bounds untruncated (exact pruning input).
expr::ColumnStats RowGroupStats(const parquet::FileMetaData& md, int row_group, const Schema& schema);

/// Metrics of one data page of `field` (flat: its values are its rows) from its statistics
/// (as its page index entry gives them); only that column is known.
expr::ColumnStats PageStats(const parquet::EncodedStatistics& page, int64_t values, const NestedField& field,
                            int physical_type);

/// File-level metrics for a manifest entry: counts for every leaf, bounds for
/// primitive leaves outside lists and maps, strings/binary truncated to
/// `truncate_length` (upper bounds incremented so they stay upper bounds).
struct FileMetrics {
  expr::ColumnStats stats;
  std::map<int, int64_t> column_sizes;
  std::vector<int64_t> split_offsets;
};
FileMetrics ComputeFileMetrics(const parquet::FileMetaData& md, const Schema& schema,
                               int truncate_length = 16);

}  // namespace skade
