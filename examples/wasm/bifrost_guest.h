/* The guest side of Bifröst's WASM ABI (README, "WASM guests"), for C guests built with
 * `clang --target=wasm32 -nostdlib`: no libc, no imports. A guest exports its memory,
 * bifrost_alloc and bifrost_transform, and optionally bifrost_error.
 *
 * The rows come in and the reply goes out as Arrow IPC streams in the guest's memory
 * (arrow_ipc_guest.h reads and writes them): the host asks bifrost_alloc for room, writes
 * the input stream there and calls bifrost_transform(ptr, len), which answers with where
 * its reply stream lies. */
#ifndef BIFROST_GUEST_H
#define BIFROST_GUEST_H

#include <stddef.h>
#include <stdint.h>

/* freestanding: the compiler may call these for struct copies and loops */
void* memcpy(void* dst, const void* src, size_t n) {
  unsigned char* d = dst;
  const unsigned char* s = src;
  while (n--) *d++ = *s++;
  return dst;
}
void* memset(void* dst, int c, size_t n) {
  unsigned char* d = dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}

#include "arrow_ipc_guest.h"

/* A bump allocator over linear memory, grown page by page, 8-byte aligned; 0 when the
 * host's memory limit refuses to grow it. Nothing is freed: an instance lives for one call. */
extern unsigned char __heap_base;
static uintptr_t bf_top;

static inline void* bf_alloc(uint32_t size) {
  if (!bf_top) bf_top = (uintptr_t)&__heap_base;
  uintptr_t at = (bf_top + 7) & ~(uintptr_t)7;
  uint64_t end = (uint64_t)at + size;
  uint64_t have = (uint64_t)__builtin_wasm_memory_size(0) * 65536;
  if (end > have) {
    uint64_t pages = (end - have + 65535) / 65536;
    if (__builtin_wasm_memory_grow(0, (size_t)pages) == (size_t)-1) return 0;
  }
  bf_top = (uintptr_t)end;
  return (void*)at;
}

__attribute__((export_name("bifrost_alloc"))) uint32_t bifrost_alloc(uint32_t size) {
  return (uint32_t)(uintptr_t)bf_alloc(size);
}

static const char* bf_message = "";
__attribute__((export_name("bifrost_error"))) uint32_t bifrost_error(void) {
  return (uint32_t)(uintptr_t)bf_message;
}
/* What bifrost_transform returns after setting the message Bifröst reports. */
static inline uint64_t bf_fail(const char* message) {
  bf_message = message;
  return 0;
}

/* bifrost_transform's answer for a reply of `len` bytes at `p`. */
static inline uint64_t bf_done(const void* p, uint32_t len) {
  return ((uint64_t)(uintptr_t)p << 32) | len;
}

/* The reply: `ncols` columns of `nrows` rows written as one IPC stream in fresh memory,
 * and bifrost_transform's answer for it (0 with a message when memory runs out). */
static inline uint64_t bf_reply(const ai_column* cols, uint32_t ncols, int64_t nrows) {
  uint32_t len = ai_write_stream(0, cols, ncols, nrows);
  uint8_t* out = bf_alloc(len);
  if (!out) return bf_fail("out of memory for the reply");
  ai_write_stream(out, cols, ncols, nrows);
  return bf_done(out, len);
}

/* A reply column of `type` named by the NUL-terminated `name`, nullable, its nulls
 * counted from `validity` (0: none). */
static inline ai_column bf_column(const char* name, uint8_t type, const void* values,
                                  const uint8_t* validity) {
  ai_column c = {name, 0, type, 1, -1, validity, values, 0};
  while (name[c.name_len]) ++c.name_len;
  return c;
}

#endif
