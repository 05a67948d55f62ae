// libFuzzer entry point for OpenLineage event bodies (the receiver and `lineage ingest`).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return skade::fuzz::FuzzOpenLineageEvent(data, size);
}
