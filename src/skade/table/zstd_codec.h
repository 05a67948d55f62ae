// zstd for Parquet pages with one context per thread instead of one per page
// (zstd_codec.cc). It replaces arrow::util::Codec::Create for the whole process, so it
// is linked whole into every executable (CMakeLists.txt: skade_zstd).
#pragma once

#include <cstdint>

namespace skade {

/// zstd contexts this process has made for Parquet pages so far: one per thread that
/// compressed or decompressed, however many pages it did.
int64_t ZstdContextsMade();

}  // namespace skade
