// zstd for Parquet pages with one context per thread instead of one per page
// (zstd_codec.cc). It replaces arrow::util::Codec::Create for the whole process, so it
// is linked whole into every executable (CMakeLists.txt: skade_zstd).
#pragma once

#include <cstdint>

namespace skade {

/// zstd contexts this process has made for Parquet pages so far: one per thread that
/// compressed or decompressed, however many pages it did.
int64_t ZstdContextsMade();

/// Counts the CPU time of zstd page decompression from now on (`on`), for benchmarks: it
/// is what a scan of zstd pages cannot go below, and what every reader of the same pages
/// pays too. Off by default: reading a thread's CPU clock is a system call per page.
void TimeZstdDecompression(bool on);
/// CPU nanoseconds this process's threads have spent in zstd page decompression while
/// TimeZstdDecompression was on.
int64_t ZstdDecompressNanos();

}  // namespace skade
