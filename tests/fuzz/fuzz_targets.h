// Fuzz targets for every parser of untrusted bytes. Each returns 0 and aborts on a
// broken invariant; libFuzzer drivers (*_fuzz.cc) and corpus_replay_test.cc call them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace skade::fuzz {

/// Reads an Avro container; if it parses, writes the records back with WriteContainer
/// and checks that they read back identical.
int FuzzAvroContainer(const uint8_t* data, size_t size);

}  // namespace skade::fuzz
