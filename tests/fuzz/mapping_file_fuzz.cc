// libFuzzer entry point for Bifröst's mapping files (a corpus replayer otherwise).
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return skade::fuzz::FuzzMappingFile(data, size);
}
