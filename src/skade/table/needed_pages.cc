// Late materialisation below the row group: see needed_pages_internal.h.
#include <arrow/api.h>
#include <arrow/util/bit_util.h>
#include <parquet/column_reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

#include "skade/table/arrow_internal.h"
#include "skade/table/needed_pages_internal.h"

namespace skade {
namespace {

constexpr int64_t kLevelsPerRead = 4096;

template <typename PType>
Result<std::shared_ptr<arrow::Array>> ReadPages(parquet::RowGroupReader& rg, int leaf,
                                                const std::shared_ptr<arrow::DataType>& type,
                                                const std::vector<uint8_t>& needed, arrow::MemoryPool* pool,
                                                const std::string& where, int64_t* pages_skipped) {
  using T = typename PType::c_type;
  const parquet::ColumnDescriptor* descr = rg.metadata()->schema()->Column(leaf);
  const int64_t n = static_cast<int64_t>(needed.size());
  const int16_t max_def = descr->max_definition_level();
  // Row ranges of the pages decoded, in order: the filter runs as the reader reaches
  // each page header, before the page's values are read.
  std::vector<std::pair<int64_t, int64_t>> kept;
  int64_t pos = 0, skipped = 0;
  std::unique_ptr<parquet::PageReader> pages = rg.GetColumnPageReader(leaf);
  pages->set_data_page_filter([&](const parquet::DataPageStats& page) {
    int64_t begin = std::min(pos, n), end = std::min(pos + page.num_values, n);
    pos += page.num_values;
    if (pos <= n && std::find(needed.begin() + begin, needed.begin() + end, 1) == needed.begin() + end) {
      ++skipped;
      return true;
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
  std::memset(out, 0, static_cast<size_t>(n) * sizeof(T));  // skipped rows: defined bytes, never read
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
                                                      const std::vector<uint8_t>& needed, arrow::MemoryPool* pool,
                                                      const std::string& where, int64_t* pages_skipped) {
  try {
    auto rg = file.RowGroup(row_group);
    switch (rg->metadata()->schema()->Column(leaf)->physical_type()) {
      case parquet::Type::INT32: return ReadPages<parquet::Int32Type>(*rg, leaf, type, needed, pool, where, pages_skipped);
      case parquet::Type::INT64: return ReadPages<parquet::Int64Type>(*rg, leaf, type, needed, pool, where, pages_skipped);
      case parquet::Type::FLOAT: return ReadPages<parquet::FloatType>(*rg, leaf, type, needed, pool, where, pages_skipped);
      case parquet::Type::DOUBLE: return ReadPages<parquet::DoubleType>(*rg, leaf, type, needed, pool, where, pages_skipped);
      default: return Internal(where + ": ReadNeededPages called on a column it does not read");
    }
  } catch (const std::exception& e) {
    return Corrupt(where + ": " + e.what());
  }
}

}  // namespace skade
