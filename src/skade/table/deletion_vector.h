// Deletion vectors (Iceberg format v3): the deleted positions of one data file, kept as a
// `deletion-vector-v1` blob of a Puffin file (spec "Deletion Vectors").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skade/common/result.h"

namespace skade {

/// The positions a deletion vector blob holds, ascending. `blob` is the blob's bytes
/// (content_offset to content_offset + content_size_in_bytes of its Puffin file): its
/// length, magic, a portable 64-bit roaring bitmap and its CRC-32. A position at or past
/// `record_count` (the data file's rows) is refused, so a hostile blob cannot make more
/// positions than the file has rows. Errors: kCorrupt naming `where` and what is wrong.
Result<std::vector<int64_t>> DecodeDeletionVector(std::string_view blob, int64_t record_count, std::string_view where);

/// The deleted positions of one data file (its path as the manifest names it), ascending,
/// distinct and not negative.
struct DeletionVector {
  std::string data_file;
  std::vector<int64_t> positions;
};

/// A Puffin file of deletion vectors, and where each one's blob lies in it (in order).
struct PuffinFile {
  std::string bytes;
  std::vector<std::pair<int64_t, int64_t>> blobs;  // offset, length
};

/// One Puffin file holding `vectors`, each as roaring array and bitmap containers,
/// uncompressed: one file for a write's vectors, as Spark writes one per task.
PuffinFile WriteDeletionVectors(const std::vector<DeletionVector>& vectors);

}  // namespace skade
