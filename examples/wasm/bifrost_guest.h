/* The guest side of Bifröst's WASM ABI (README, "WASM guests"), for C guests built with
 * `clang --target=wasm32 -nostdlib`: no libc, no imports. A guest exports its memory,
 * bifrost_alloc and bifrost_transform, and optionally bifrost_error.
 *
 * A batch (the rows going in, the reply coming out) is one contiguous block of the
 * guest's memory: a header, one descriptor per column, then each column's sections at
 * 8-byte aligned offsets from the block's start. Little endian throughout. */
#ifndef BIFROST_GUEST_H
#define BIFROST_GUEST_H

#include <stddef.h>
#include <stdint.h>

#define BF_MAGIC 0x31424642u /* "BFB1" */
enum { BF_INT64 = 1, BF_FLOAT64 = 2, BF_UTF8 = 3, BF_BOOL = 4 };

typedef struct {
  uint32_t magic, ncols;
  uint64_t nrows;
} bf_header;

/* valid: nrows bytes, 1 = a value, 0 = null. values: int64/float64 nrows * 8 bytes, bool
 * nrows bytes, utf8 (nrows + 1) uint32 offsets into data (data_len bytes). */
typedef struct {
  uint32_t type, name_len, name_off, valid_off, values_off, data_off, data_len, reserved;
} bf_column;

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

/* A bump allocator over linear memory, grown page by page; 0 when the host's memory
 * limit refuses to grow it. Nothing is freed: an instance lives for one call. */
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

static inline const bf_column* bf_columns(const bf_header* b) { return (const bf_column*)(b + 1); }
static inline const void* bf_at(const bf_header* b, uint32_t off) { return (const char*)b + off; }

/* The input column named `name` of type `type`, or 0. */
static inline const bf_column* bf_find(const bf_header* b, const char* name, uint32_t type) {
  for (uint32_t i = 0; i < b->ncols; ++i) {
    const bf_column* c = &bf_columns(b)[i];
    const char* n = bf_at(b, c->name_off);
    uint32_t k = 0;
    while (k < c->name_len && name[k] && n[k] == name[k]) ++k;
    if (k == c->name_len && !name[k] && c->type == type) return c;
  }
  return 0;
}

/* The reply is built in place: bf_reply reserves its header and descriptors, then each
 * bf_reply_* call appends one column's sections right after, so the block stays
 * contiguous as long as nothing else is allocated meanwhile. */
static inline bf_header* bf_reply(uint32_t ncols, uint64_t nrows) {
  bf_header* h = bf_alloc(sizeof(bf_header) + ncols * sizeof(bf_column));
  if (!h) return 0;
  h->magic = BF_MAGIC;
  h->ncols = ncols;
  h->nrows = nrows;
  return h;
}

static inline void* bf_section(bf_header* h, uint32_t size, uint32_t* off) {
  void* p = bf_alloc(size);
  if (p) *off = (uint32_t)((uintptr_t)p - (uintptr_t)h);
  return p;
}

/* A fixed-width column (BF_INT64, BF_FLOAT64, BF_BOOL): returns its values; *valid gets
 * its validity bytes. 0 when memory runs out. */
static inline void* bf_reply_column(bf_header* h, uint32_t i, const char* name, uint32_t type,
                             uint8_t** valid) {
  bf_column* c = (bf_column*)(h + 1) + i;
  c->type = type;
  c->name_len = 0;
  while (name[c->name_len]) ++c->name_len;
  char* n = bf_section(h, c->name_len, &c->name_off);
  if (!n) return 0;
  memcpy(n, name, c->name_len);
  *valid = bf_section(h, (uint32_t)h->nrows, &c->valid_off);
  if (!*valid) return 0;
  return bf_section(h, (uint32_t)h->nrows * (type == BF_BOOL ? 1 : 8), &c->values_off);
}

/* bifrost_transform's answer: where the reply starts and how long it is. */
static inline uint64_t bf_done(bf_header* h) {
  return ((uint64_t)(uintptr_t)h << 32) | (uint64_t)(bf_top - (uintptr_t)h);
}

#endif
