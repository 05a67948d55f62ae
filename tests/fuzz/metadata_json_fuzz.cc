// libFuzzer entry point for the table metadata JSON parser.
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return skade::fuzz::FuzzMetadataJson(data, size);
}
