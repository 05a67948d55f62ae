// libFuzzer entry point for the replies of WASM guests (a corpus replayer otherwise).
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return skade::fuzz::FuzzWasmReply(data, size);
}
