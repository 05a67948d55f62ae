/* Benchmark guest: decodes the Arrow IPC stream it is given and writes its columns back as
 * a new stream, so a run measures what the WASM ABI costs: the host's encoding, the
 * instance, a guest's reading and writing of IPC, the host's decoding. */
#include "bifrost_guest.h"

static ai_batch in;

__attribute__((export_name("bifrost_transform"))) uint64_t bifrost_transform(uint32_t ptr,
                                                                             uint32_t len) {
  const char* err = ai_read_stream((const uint8_t*)(uintptr_t)ptr, len, &in);
  if (err) return bf_fail(err);
  return bf_reply(in.cols, in.ncols, in.nrows);
}
