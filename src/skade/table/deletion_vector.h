// Deletion vectors (Iceberg format v3): the deleted positions of one data file, kept as a
// `deletion-vector-v1` blob of a Puffin file (spec "Deletion Vectors").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"

namespace skade {

/// The positions a deletion vector blob holds, ascending. `blob` is the blob's bytes
/// (content_offset to content_offset + content_size_in_bytes of its Puffin file): its
/// length, magic, a portable 64-bit roaring bitmap and its CRC-32. A position at or past
/// `record_count` (the data file's rows) is refused, so a hostile blob cannot make more
/// positions than the file has rows. Errors: kCorrupt naming `where` and what is wrong.
Result<std::vector<int64_t>> DecodeDeletionVector(std::string_view blob, int64_t record_count, std::string_view where);

/// A Puffin file holding one deletion vector, and where its blob lies in it.
struct PuffinDeletionVector {
  std::string bytes;
  int64_t blob_offset = 0;
  int64_t blob_length = 0;
};

/// The Puffin file of one deletion vector for `data_file` (its path as the manifest names
/// it): `positions` (ascending, distinct, not negative) as roaring array and bitmap
/// containers, uncompressed.
PuffinDeletionVector WriteDeletionVector(const std::string& data_file, const std::vector<int64_t>& positions);

}  // namespace skade
