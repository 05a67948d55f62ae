// libFuzzer entry point for the deletion vector decoder.
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return skade::fuzz::FuzzDeletionVector(data, size);
}
