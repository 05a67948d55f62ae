// libFuzzer entry point for REST commit and create bodies (the server's table updates).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return skade::fuzz::FuzzRestCommit(data, size);
}
