// Late materialisation below the row group: see needed_pages_internal.h.
#include <arrow/api.h>
#include <arrow/util/bit_util.h>
#include <parquet/column_reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/page_index.h>
#include <parquet/statistics.h>
#include <parquet/schema.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

#include "skade/table/arrow_internal.h"
#include "skade/table/needed_pages_internal.h"
#include "skade/table/parquet_stats.h"

namespace skade {
namespace {

constexpr int64_t kLevelsPerRead = 4096;

// The stats of each data page of `leaf` in the file's page index (Arrow's writer keeps page
// bounds there, not in the page headers); empty when the file has no usable index for it.
// The index only saves work: one that cannot be read, or whose pages do not follow each
// other, is ignored rather than failing the scan.
std::vector<expr::ColumnStats> IndexedPageStats(parquet::ParquetFileReader& file, int row_group, int leaf,
                                                const NestedField& field) try {
  std::shared_ptr<parquet::PageIndexReader> index = file.GetPageIndexReader();
  std::shared_ptr<parquet::RowGroupPageIndexReader> group = index ? index->RowGroup(row_group) : nullptr;
  std::shared_ptr<parquet::ColumnIndex> bounds = group ? group->GetColumnIndex(leaf) : nullptr;
  std::shared_ptr<parquet::OffsetIndex> offsets = group ? group->GetOffsetIndex(leaf) : nullptr;
  if (!bounds || !offsets) return {};
  const auto& pages = offsets->page_locations();
  const size_t n = pages.size();
  if (bounds->null_pages().size() != n || bounds->encoded_min_values().size() != n ||
      bounds->encoded_max_values().size() != n || (bounds->has_null_counts() && bounds->null_counts().size() != n))
    return {};
  const int64_t rows = file.metadata()->RowGroup(row_group)->num_rows();
  const int physical = file.metadata()->schema()->Column(leaf)->physical_type();
  if (n == 0 || pages[0].first_row_index != 0) return {};
  std::vector<expr::ColumnStats> out;
  for (size_t k = 0; k < n; ++k) {
    int64_t page_rows = (k + 1 < n ? pages[k + 1].first_row_index : rows) - pages[k].first_row_index;
    if (page_rows <= 0) return {};
    parquet::EncodedStatistics s;
    if (!bounds->null_pages()[k]) s.set_min(bounds->encoded_min_values()[k]).set_max(bounds->encoded_max_values()[k]);
    if (bounds->has_null_counts()) s.set_null_count(bounds->null_counts()[k]);
    out.push_back(PageStats(s, page_rows, field, physical));
  }
  return out;
} catch (const std::exception&) {
  return {};
}

template <typename PType>
Result<std::shared_ptr<arrow::Array>> ReadPages(parquet::RowGroupReader& rg, int leaf,
                                                const std::shared_ptr<arrow::DataType>& type,
                                                const std::vector<uint8_t>* needed, const PageFilter* by_stats,
                                                const std::vector<expr::ColumnStats>& indexed, arrow::MemoryPool* pool,
                                                const std::string& where, int64_t* pages_skipped) {
  using T = typename PType::c_type;
  const parquet::ColumnDescriptor* descr = rg.metadata()->schema()->Column(leaf);
  const int64_t n = rg.metadata()->num_rows();
  if (needed && static_cast<int64_t>(needed->size()) != n) return Internal(where + ": needed rows miscounted");
  if (by_stats && static_cast<int64_t>(by_stats->excluded->size()) != n)
    return Internal(where + ": excluded rows miscounted");
  const int16_t max_def = descr->max_definition_level();
  // Row ranges of the pages decoded, in order: the filter runs as the reader reaches
  // each page header, before the page's values are read.
  std::vector<std::pair<int64_t, int64_t>> kept;
  int64_t pos = 0, skipped = 0;
  size_t page_no = 0;  // data pages seen
  std::unique_ptr<parquet::PageReader> pages = rg.GetColumnPageReader(leaf);
  pages->set_data_page_filter([&](const parquet::DataPageStats& page) {
    int64_t begin = std::min(pos, n), end = std::min(pos + page.num_values, n);
    pos += page.num_values;
    ++page_no;
    if (pos <= n && page.num_values >= 0) {
      bool none_needed =
          needed && std::find(needed->begin() + begin, needed->begin() + end, 1) == needed->begin() + end;
      bool ruled_out = false;
      // An index entry counts for the page only if it has the page's rows.
      if (!none_needed && by_stats && page_no <= indexed.size() && indexed[page_no - 1].record_count == page.num_values)
        ruled_out = !expr::MightMatch(*by_stats->filter, indexed[page_no - 1]);
      if (ruled_out) std::fill(by_stats->excluded->begin() + begin, by_stats->excluded->begin() + end, 1);
      if (none_needed || ruled_out) {
        ++skipped;
        return true;
      }
    }
    kept.emplace_back(begin, end);
    return false;
  });
  auto reader = std::static_pointer_cast<parquet::TypedColumnReader<PType>>(
      parquet::ColumnReader::Make(descr, std::move(pages)));
  SKADE_ARROW_ASSIGN(std::shared_ptr<arrow::Buffer> values, arrow::AllocateBuffer(n * static_cast<int64_t>(sizeof(T)), pool),
                     where);
  SKADE_ARROW_ASSIGN(std::shared_ptr<arrow::Buffer> validity, arrow::AllocateEmptyBitmap(n, pool), where);
  T* out = reinterpret_cast<T*>(values->mutable_data());
  uint8_t* valid = validity->mutable_data();
  std::vector<int16_t> defs(kLevelsPerRead);
  std::vector<T> batch(kLevelsPerRead);
  size_t range = 0;
  int64_t at = 0;  // next row to place, within kept[range]
  while (reader->HasNext()) {
    int64_t got = 0;
    int64_t levels = reader->ReadBatch(kLevelsPerRead, max_def > 0 ? defs.data() : nullptr, nullptr, batch.data(), &got);
    if (levels <= 0) break;
    int64_t v = 0;
    for (int64_t l = 0; l < levels;) {
      while (range < kept.size() && at == kept[range].second) {
        if (++range < kept.size()) at = kept[range].first;
      }
      if (range >= kept.size()) return Corrupt(where + ": column chunk " + descr->name() + " holds more rows than its pages");
      if (kept[range].first > at) at = kept[range].first;
      int64_t run = std::min(levels - l, kept[range].second - at);
      if (max_def == 0 || got == levels) {  // no nulls: one copy
        std::memcpy(out + at, batch.data() + v, static_cast<size_t>(run) * sizeof(T));
        arrow::bit_util::SetBitsTo(valid, at, run, true);
        v += run;
      } else {
        for (int64_t k = 0; k < run; ++k) {
          if (defs[static_cast<size_t>(l + k)] != max_def) continue;
          out[at + k] = batch[static_cast<size_t>(v++)];
          arrow::bit_util::SetBit(valid, at + k);
        }
      }
      at += run;
      l += run;
    }
  }
  if (pos != n) return Corrupt(where + ": column chunk " + descr->name() + " has " + std::to_string(pos) +
                               " rows in its pages, the row group " + std::to_string(n));
  // Skipped rows get defined bytes (they are never read as values), except in the
  // caller's batches that hold no decoded row at all.
  const int64_t block = std::max<int64_t>(1, by_stats && by_stats->batch_rows > 0 ? by_stats->batch_rows : n);
  std::vector<uint8_t> decoded_in_block(static_cast<size_t>(n / block + 1), 0);
  for (const auto& [b, e] : kept)
    for (int64_t k = b / block; b < e && k <= (e - 1) / block; ++k) decoded_in_block[static_cast<size_t>(k)] = 1;
  int64_t gap = 0;  // start of the rows not decoded before the next kept range
  auto zero = [&](int64_t from, int64_t to) {
    for (int64_t r = from; r < to;) {
      const int64_t k = r / block, stop = std::min(to, (k + 1) * block);
      if (!by_stats || decoded_in_block[static_cast<size_t>(k)])
        std::memset(out + r, 0, static_cast<size_t>(stop - r) * sizeof(T));
      r = stop;
    }
  };
  for (const auto& [b, e] : kept) {
    zero(gap, b);
    gap = e;
  }
  zero(gap, n);
  *pages_skipped += skipped;
  return arrow::MakeArray(arrow::ArrayData::Make(type, n, {std::move(validity), std::move(values)}));
}

}  // namespace

bool ReadsNeededPages(parquet::ParquetFileReader& file, int leaf, const arrow::DataType& type) {
  const parquet::ColumnDescriptor* d = file.metadata()->schema()->Column(leaf);
  if (d->max_repetition_level() != 0 || d->max_definition_level() > 1 || d->path()->ToDotVector().size() != 1)
    return false;
  switch (type.id()) {
    case arrow::Type::INT32:
    case arrow::Type::UINT32:
    case arrow::Type::DATE32:
    case arrow::Type::TIME32: return d->physical_type() == parquet::Type::INT32;
    case arrow::Type::INT64:
    case arrow::Type::UINT64:
    case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP: return d->physical_type() == parquet::Type::INT64;
    case arrow::Type::FLOAT: return d->physical_type() == parquet::Type::FLOAT;
    case arrow::Type::DOUBLE: return d->physical_type() == parquet::Type::DOUBLE;
    default: return false;
  }
}

Result<std::shared_ptr<arrow::Array>> ReadNeededPages(parquet::ParquetFileReader& file, int row_group, int leaf,
                                                      const std::shared_ptr<arrow::DataType>& type,
                                                      const std::vector<uint8_t>* needed, const PageFilter* by_stats,
                                                      arrow::MemoryPool* pool, const std::string& where,
                                                      int64_t* pages_skipped) {
  try {
    auto rg = file.RowGroup(row_group);
    const std::vector<expr::ColumnStats> indexed =
        by_stats ? IndexedPageStats(file, row_group, leaf, *by_stats->field) : std::vector<expr::ColumnStats>{};
    switch (rg->metadata()->schema()->Column(leaf)->physical_type()) {
      case parquet::Type::INT32: return ReadPages<parquet::Int32Type>(*rg, leaf, type, needed, by_stats, indexed, pool, where, pages_skipped);
      case parquet::Type::INT64: return ReadPages<parquet::Int64Type>(*rg, leaf, type, needed, by_stats, indexed, pool, where, pages_skipped);
      case parquet::Type::FLOAT: return ReadPages<parquet::FloatType>(*rg, leaf, type, needed, by_stats, indexed, pool, where, pages_skipped);
      case parquet::Type::DOUBLE: return ReadPages<parquet::DoubleType>(*rg, leaf, type, needed, by_stats, indexed, pool, where, pages_skipped);
      default: return Internal(where + ": ReadNeededPages called on a column it does not read");
    }
  } catch (const std::exception& e) {
    return Corrupt(where + ": " + e.what());
  }
}

}  // namespace skade
