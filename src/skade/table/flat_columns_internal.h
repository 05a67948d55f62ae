// Decoding flat Parquet column chunks page by page, straight into arrays of the table's
// types (the scan's common case). Not API.
//
// Arrow's record reader decodes through general machinery (levels into an int16 array,
// then into a bitmap; values into builders that grow and copy; dictionary strings into
// a dictionary builder, made dense afterwards). For a top-level, non-repeated column of
// numbers or strings, PLAIN or dictionary encoded, none of that is needed: validity bits
// come straight from the definition levels' runs, fixed-width values are one copy out
// of the decompressed page, and dictionary strings are written dense at once, into
// buffers sized before they are filled. Everything else keeps Arrow's reader.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "skade/common/result.h"

namespace arrow {
class Array;
class DataType;
class Field;
class MemoryPool;
class RecordBatchReader;
}  // namespace arrow

namespace parquet {
class FileMetaData;
class ParquetFileReader;
}  // namespace parquet

namespace skade {

/// Room kept past a string buffer's last byte so that CopyString moves strings up to this
/// long as one or two fixed 32-byte copies: a memcpy call per string cost more than its
/// bytes (~5% of a full scan).
inline constexpr int64_t kStringSlack = 64;

/// Copies a string's `len` bytes from `src` to `out`, which has kStringSlack bytes of room
/// past them; `overreadable`: `src` may be read kStringSlack bytes from its start.
inline void CopyString(uint8_t* out, const uint8_t* src, int64_t len, bool overreadable) {
  if (len <= kStringSlack && overreadable) {
    std::memcpy(out, src, 32);
    if (len > 32) std::memcpy(out + 32, src + 32, 32);
  } else {
    std::memcpy(out, src, static_cast<size_t>(len));
  }
}

/// Whether FlatColumnReader reads leaf column `leaf` of row group `row_group` as `type`:
/// a top-level, non-repeated column (required or optional) whose data pages are PLAIN or
/// dictionary encoded, of INT32 as int32 or date32, INT64 as int64, timestamp or time64,
/// FLOAT, DOUBLE, or BYTE_ARRAY as string or binary (below 1 GiB decoded).
bool ReadsFlatColumn(const parquet::FileMetaData& metadata, int row_group, int leaf, const arrow::DataType& type);

/// One column chunk, read a number of rows at a time.
class FlatColumnReader {
 public:
  /// `file` must outlive the reader; ReadsFlatColumn(..., type) must hold. Memory comes
  /// from `pool`; errors name `where`. With `wanted` (an entry per row of the row group),
  /// the reader gives only the rows r with wanted[r] != 0, and data pages holding none of
  /// them are passed over before they are decompressed. With `decided`, only the entries
  /// of the first *decided rows are final (another thread fills in the rest): a page
  /// reaching past them is read, and Next must not be asked for rows past them.
  FlatColumnReader(parquet::ParquetFileReader& file, int row_group, int leaf, std::shared_ptr<arrow::DataType> type,
                   arrow::MemoryPool* pool, std::string where,
                   std::shared_ptr<const std::vector<uint8_t>> wanted = nullptr,
                   const std::atomic<int64_t>* decided = nullptr);
  ~FlatColumnReader();
  FlatColumnReader(const FlatColumnReader&) = delete;
  FlatColumnReader& operator=(const FlatColumnReader&) = delete;

  /// The chunk's next `rows` rows as one array (those wanted, with `wanted`): fewer at
  /// the chunk's end, none past it. Errors: kCorrupt naming the file and column when a
  /// page cannot be decoded, or (with `wanted`) when the pages hold more rows than the
  /// row group or miss a wanted one.
  Result<std::shared_ptr<arrow::Array>> Next(int64_t rows);

  /// Data pages passed over so far (with `wanted`).
  int64_t pages_skipped() const;

  /// Before the first Next, for a string or binary chunk without `wanted` whose data pages
  /// are all dictionary-encoded (its encoding statistics say so; a PLAIN page is then an
  /// error): Next gives dictionary<int32, type> arrays, all over one array of the
  /// chunk's dictionary page, as Arrow's reader does with read_dictionary.
  void KeepDictionary();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Leaves `leaves` of row group `row_group` as batches of `batch_rows` rows (the last
/// shorter), column k a `fields[k]`: what parquet::arrow::FileReader::GetRecordBatchReader
/// gives for them, with each column already of its field's type. ReadsFlatColumn must
/// hold for each leaf and its field's type. With `wanted` (as FlatColumnReader takes it),
/// batch b holds the wanted rows of rows [b * batch_rows, (b + 1) * batch_rows), possibly
/// none (`decided` as FlatColumnReader takes it). `*pages_skipped`, when given, is kept at
/// the number of data pages its columns have passed over.
std::unique_ptr<arrow::RecordBatchReader> MakeFlatBatchReader(std::shared_ptr<parquet::ParquetFileReader> file,
                                                              int row_group, const std::vector<int>& leaves,
                                                              std::vector<std::shared_ptr<arrow::Field>> fields,
                                                              int64_t batch_rows, arrow::MemoryPool* pool,
                                                              const std::string& where,
                                                              std::shared_ptr<const std::vector<uint8_t>> wanted,
                                                              const std::atomic<int64_t>* decided = nullptr,
                                                              int64_t* pages_skipped = nullptr);

}  // namespace skade
