/* Benchmark guest: answers with the batch it was given (the layouts are the same), so a
 * run measures what the WASM ABI costs the host: encoding, instantiating, decoding. */
#include "bifrost_guest.h"

__attribute__((export_name("bifrost_transform"))) uint64_t bifrost_transform(uint32_t ptr,
                                                                             uint32_t len) {
  return ((uint64_t)ptr << 32) | len;
}
