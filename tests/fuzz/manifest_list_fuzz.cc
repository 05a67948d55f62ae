// libFuzzer entry point for the manifest list reader.
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return skade::fuzz::FuzzManifestList(data, size);
}
