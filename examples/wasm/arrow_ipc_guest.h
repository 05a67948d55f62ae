/* A small Arrow IPC stream reader and writer for freestanding WASM guests (no libc, no
 * allocation: the caller owns every byte). Written from the Arrow columnar format's
 * specification: the encapsulated message framing and the flatbuffer tables of
 * format/Message.fbs and format/Schema.fbs. It covers what a Bifröst guest needs (README,
 * "WASM guests"): flat columns of type int32, int64, float64, bool and utf8, with validity
 * bitmaps, little endian, uncompressed, no dictionaries.
 *
 * A stream is a sequence of encapsulated messages, each
 *   u32 0xFFFFFFFF (continuation), i32 metadata size M,
 *   M bytes: a flatbuffer `Message` padded with zeros so that 8 + M is a multiple of 8,
 *   Message.bodyLength bytes of body (a multiple of 8),
 * and ends with the end-of-stream marker u32 0xFFFFFFFF, i32 0. The first message's header
 * is a `Schema`, each further one a `RecordBatch` whose buffers are (offset, length) pairs
 * into its body.
 *
 * Flatbuffers in brief (all little endian): the buffer starts with a u32 offset to the
 * root table. A table starts with an i32 `s`; its vtable is at (table - s) and holds u16
 * vtable size, u16 table size, then one u16 per field: the field's offset from the table's
 * start, 0 when absent (the field then has its default). A field that refers to a table,
 * vector or string holds a u32 offset counted from the field's own position, always
 * forwards. A vector is a u32 count and its elements (structs inline, tables as u32
 * offsets); a string is a u32 length, its bytes and a NUL. A union is two fields: a u8 type
 * tag (field id n) and the offset of the table (id n + 1). Scalars sit at positions that are
 * multiples of their size. */
#ifndef ARROW_IPC_GUEST_H
#define ARROW_IPC_GUEST_H

#include <stddef.h>
#include <stdint.h>

/* Column types this header reads and writes. */
enum { AI_INT32 = 1, AI_INT64 = 2, AI_FLOAT64 = 3, AI_BOOL = 4, AI_UTF8 = 5 };

#ifndef AI_MAX_COLUMNS
#define AI_MAX_COLUMNS 64
#endif

/* One column of a batch: the reader fills it with pointers into the stream it was given
 * (nothing is copied), the writer copies from it. */
typedef struct {
  const char* name; /* name_len bytes, not NUL-terminated */
  uint32_t name_len;
  uint8_t type;     /* AI_* */
  uint8_t nullable; /* the schema's flag: whether the column may hold nulls */
  int64_t null_count; /* writer: -1 = count them from `validity` */
  /* Bit i (byte i / 8, bit i % 8) set = row i holds a value; 0 = no nulls. */
  const uint8_t* validity;
  /* int32_t, int64_t or double per row; AI_BOOL: a bitmap like `validity`; AI_UTF8: nrows + 1
   * int32_t offsets into `data`, row i being data[offsets[i] .. offsets[i + 1]). */
  const void* values;
  const char* data; /* AI_UTF8 only */
} ai_column;

typedef struct {
  int64_t nrows;
  uint32_t ncols;
  ai_column cols[AI_MAX_COLUMNS];
} ai_batch;

/* --- little-endian scalars at any address ----------------------------------------------- */

static inline uint16_t ai_u16(const uint8_t* p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t ai_u32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline int64_t ai_i64(const uint8_t* p) {
  return (int64_t)((uint64_t)ai_u32(p) | (uint64_t)ai_u32(p + 4) << 32);
}

/* Whether row `r` of a column holds a value; a bool's value. */
static inline int ai_bit(const uint8_t* bitmap, int64_t r) { return (bitmap[r >> 3] >> (r & 7)) & 1; }
static inline int ai_valid(const ai_column* c, int64_t r) { return !c->validity || ai_bit(c->validity, r); }

/* Whether a column's name is the NUL-terminated `name`. */
static inline int ai_named(const ai_column* c, const char* name) {
  uint32_t k = 0;
  while (k < c->name_len && name[k] && c->name[k] == name[k]) ++k;
  return k == c->name_len && !name[k];
}

/* The column named `name` of type `type`, or 0. */
static inline const ai_column* ai_find(const ai_batch* b, const char* name, uint8_t type) {
  for (uint32_t i = 0; i < b->ncols; ++i)
    if (b->cols[i].type == type && ai_named(&b->cols[i], name)) return &b->cols[i];
  return 0;
}

/* --- reading: a flatbuffer checked at every step ---------------------------------------- */

/* One message's flatbuffer. Every read is bounds-checked; the first failure is kept in
 * `err` and turns later reads into no-ops returning 0. */
typedef struct {
  const uint8_t* p;
  uint32_t len;
  const char* err;
} ai_fb;

static inline int ai_has(ai_fb* f, uint32_t at, uint32_t n) {
  if (f->err) return 0;
  if (at > f->len || n > f->len - at) {
    f->err = "a flatbuffer offset points outside its message";
    return 0;
  }
  return 1;
}

/* The position of field `id` of the table at `t`, or 0 when the field is absent. */
static inline uint32_t ai_field(ai_fb* f, uint32_t t, uint32_t id) {
  if (!t || !ai_has(f, t, 4)) return 0;
  uint32_t vt = t - ai_u32(f->p + t); /* i32 arithmetic modulo 2^32 */
  if (!ai_has(f, vt, 4)) return 0;
  uint16_t vsize = ai_u16(f->p + vt);
  if (4 + 2 * id + 2 > vsize) return 0;
  if (!ai_has(f, vt, vsize)) return 0;
  uint16_t off = ai_u16(f->p + vt + 4 + 2 * id);
  return off ? t + off : 0;
}

/* Scalar fields with their defaults. */
static inline int64_t ai_get_int(ai_fb* f, uint32_t t, uint32_t id, uint32_t size, int64_t fallback) {
  uint32_t at = ai_field(f, t, id);
  if (!at || !ai_has(f, at, size)) return fallback;
  const uint8_t* p = f->p + at;
  switch (size) {
    case 1: return p[0];
    case 2: return (int16_t)ai_u16(p);
    case 4: return (int32_t)ai_u32(p);
    default: return ai_i64(p);
  }
}

/* What a table/vector/string field refers to, or 0 when absent. */
static inline uint32_t ai_get_ref(ai_fb* f, uint32_t t, uint32_t id) {
  uint32_t at = ai_field(f, t, id);
  if (!at || !ai_has(f, at, 4)) return 0;
  uint32_t to = at + ai_u32(f->p + at);
  if (to < at || !ai_has(f, to, 4)) return 0;
  return to;
}

/* A vector's element count, checked against the bytes that follow it. */
static inline uint32_t ai_vec_len(ai_fb* f, uint32_t v, uint32_t elem_size) {
  if (!v) return 0;
  uint32_t n = ai_u32(f->p + v);
  if ((uint64_t)n * elem_size > f->len || !ai_has(f, v + 4, n * elem_size)) return 0;
  return n;
}

/* Element i of a vector of tables. */
static inline uint32_t ai_vec_table(ai_fb* f, uint32_t v, uint32_t i) {
  uint32_t at = v + 4 + 4 * i;
  uint32_t to = at + ai_u32(f->p + at);
  return to < at || !ai_has(f, to, 4) ? 0 : to;
}

/* Flatbuffer ids of the fields read here (Message.fbs, Schema.fbs). */
enum {
  AI_MESSAGE_VERSION = 0, AI_MESSAGE_HEADER_TYPE = 1, AI_MESSAGE_HEADER = 2, AI_MESSAGE_BODY_LENGTH = 3,
  AI_SCHEMA_ENDIANNESS = 0, AI_SCHEMA_FIELDS = 1,
  AI_FIELD_NAME = 0, AI_FIELD_NULLABLE = 1, AI_FIELD_TYPE_TYPE = 2, AI_FIELD_TYPE = 3,
  AI_FIELD_DICTIONARY = 4, AI_FIELD_CHILDREN = 5,
  AI_INT_BIT_WIDTH = 0, AI_INT_IS_SIGNED = 1,
  AI_FLOAT_PRECISION = 0,
  AI_BATCH_LENGTH = 0, AI_BATCH_NODES = 1, AI_BATCH_BUFFERS = 2, AI_BATCH_COMPRESSION = 3,
};
/* Union tags: MessageHeader (Schema 1, RecordBatch 3) and Type (Int 2, FloatingPoint 3,
 * Utf8 5, Bool 6); MetadataVersion V4 = 3, V5 = 4; Precision DOUBLE = 2. */
enum { AI_HEADER_SCHEMA = 1, AI_HEADER_RECORD_BATCH = 3 };
enum { AI_TYPE_INT = 2, AI_TYPE_FLOATING_POINT = 3, AI_TYPE_UTF8 = 5, AI_TYPE_BOOL = 6 };

/* One encapsulated message of a stream: its flatbuffer, header and body. */
typedef struct {
  ai_fb fb;
  uint32_t header; /* the header table's position in fb */
  uint8_t header_type;
  const uint8_t* body;
  uint32_t body_len;
} ai_message;

/* Reads the message at *pos and moves past it: returns 0 with *eos = 1 at the end of the
 * stream, 0 with the message in *m, or what is wrong. */
static inline const char* ai_next_message(const uint8_t* p, uint32_t len, uint32_t* pos,
                                          ai_message* m, int* eos) {
  uint32_t at = *pos;
  *eos = at == len; /* a stream may also just stop after its last message */
  if (*eos) return 0;
  if (len - at < 8) return "the stream ends inside a message's prefix";
  if (ai_u32(p + at) != 0xFFFFFFFFu) return "a message does not start with the continuation marker";
  uint32_t meta = ai_u32(p + at + 4);
  if (meta == 0) {
    *pos = at + 8;
    *eos = 1;
    return 0;
  }
  if (meta > len - at - 8) return "a message's metadata runs past the stream's end";
  m->fb.p = p + at + 8;
  m->fb.len = meta;
  m->fb.err = 0;
  uint32_t root = ai_has(&m->fb, 0, 4) ? ai_u32(m->fb.p) : 0;
  if (!ai_has(&m->fb, root, 4)) return m->fb.err;
  if (ai_get_int(&m->fb, root, AI_MESSAGE_VERSION, 2, 0) < 3) return "the stream's metadata version is older than V4";
  m->header_type = (uint8_t)ai_get_int(&m->fb, root, AI_MESSAGE_HEADER_TYPE, 1, 0);
  m->header = ai_get_ref(&m->fb, root, AI_MESSAGE_HEADER);
  int64_t body = ai_get_int(&m->fb, root, AI_MESSAGE_BODY_LENGTH, 8, 0);
  if (m->fb.err) return m->fb.err;
  if (!m->header) return "a message has no header";
  uint32_t body_at = at + 8 + meta;
  if (body < 0 || (uint64_t)body > len - body_at) return "a message's body runs past the stream's end";
  m->body = p + body_at;
  m->body_len = (uint32_t)body;
  *pos = body_at + (uint32_t)body;
  return 0;
}

/* The columns' names and types from a Schema message. */
static inline const char* ai_read_schema(ai_message* m, ai_batch* out) {
  ai_fb* f = &m->fb;
  if (m->header_type != AI_HEADER_SCHEMA) return "the stream does not start with a schema";
  if (ai_get_int(f, m->header, AI_SCHEMA_ENDIANNESS, 2, 0) != 0) return "the stream is big endian";
  uint32_t fields = ai_get_ref(f, m->header, AI_SCHEMA_FIELDS);
  uint32_t n = ai_vec_len(f, fields, 4);
  if (f->err) return f->err;
  if (n > AI_MAX_COLUMNS) return "the schema has more columns than AI_MAX_COLUMNS";
  out->ncols = n;
  for (uint32_t i = 0; i < n; ++i) {
    ai_column* c = &out->cols[i];
    uint32_t field = ai_vec_table(f, fields, i);
    uint32_t name = ai_get_ref(f, field, AI_FIELD_NAME);
    c->name_len = ai_vec_len(f, name, 1);
    c->name = name ? (const char*)f->p + name + 4 : "";
    c->nullable = (uint8_t)ai_get_int(f, field, AI_FIELD_NULLABLE, 1, 0);
    int64_t tag = ai_get_int(f, field, AI_FIELD_TYPE_TYPE, 1, 0);
    uint32_t type = ai_get_ref(f, field, AI_FIELD_TYPE);
    if (ai_field(f, field, AI_FIELD_DICTIONARY)) return "a column is dictionary-encoded";
    if (ai_vec_len(f, ai_get_ref(f, field, AI_FIELD_CHILDREN), 4)) return "a column is nested";
    if (f->err) return f->err;
    if (tag == AI_TYPE_INT) {
      int64_t bits = ai_get_int(f, type, AI_INT_BIT_WIDTH, 4, 0);
      if (!ai_get_int(f, type, AI_INT_IS_SIGNED, 1, 0) || (bits != 32 && bits != 64))
        return "a column is an integer other than int32 or int64";
      c->type = bits == 32 ? AI_INT32 : AI_INT64;
    } else if (tag == AI_TYPE_FLOATING_POINT) {
      if (ai_get_int(f, type, AI_FLOAT_PRECISION, 2, 0) != 2) return "a column is a float other than float64";
      c->type = AI_FLOAT64;
    } else if (tag == AI_TYPE_UTF8) {
      c->type = AI_UTF8;
    } else if (tag == AI_TYPE_BOOL) {
      c->type = AI_BOOL;
    } else {
      return "a column has a type other than int32, int64, float64, bool and utf8";
    }
  }
  return f->err;
}

/* The rows of a RecordBatch message: each column's buffers, checked against the body. */
static inline const char* ai_read_batch(ai_message* m, ai_batch* out) {
  ai_fb* f = &m->fb;
  if (m->header_type != AI_HEADER_RECORD_BATCH) return "a message after the schema is not a record batch";
  if (ai_field(f, m->header, AI_BATCH_COMPRESSION)) return "the batch is compressed";
  int64_t n = ai_get_int(f, m->header, AI_BATCH_LENGTH, 8, 0);
  uint32_t nodes = ai_get_ref(f, m->header, AI_BATCH_NODES);
  uint32_t buffers = ai_get_ref(f, m->header, AI_BATCH_BUFFERS);
  uint32_t nnodes = ai_vec_len(f, nodes, 16), nbuffers = ai_vec_len(f, buffers, 16);
  if (f->err) return f->err;
  /* Rows are at least a bit each, which also keeps the sizes below from overflowing. */
  if (n < 0 || (out->ncols && n > m->body_len * (int64_t)8)) return "the batch's row count cannot fit its body";
  if (nnodes != out->ncols) return "the batch's field nodes do not match the schema";
  out->nrows = n;
  uint32_t b = 0;
  for (uint32_t i = 0; i < out->ncols; ++i) {
    ai_column* c = &out->cols[i];
    const uint8_t* node = f->p + nodes + 4 + 16 * i;
    if (ai_i64(node) != n) return "a column's length is not the batch's";
    c->null_count = ai_i64(node + 8);
    if (c->null_count < 0 || c->null_count > n) return "a column's null count is out of range";
    uint32_t want = c->type == AI_UTF8 ? 3 : 2;
    if (b + want > nbuffers) return "the batch has fewer buffers than its columns need";
    const uint8_t* at[3];
    int64_t size[3];
    for (uint32_t k = 0; k < want; ++k, ++b) {
      const uint8_t* buf = f->p + buffers + 4 + 16 * b;
      int64_t off = ai_i64(buf), len = ai_i64(buf + 8);
      if (off < 0 || len < 0 || off > m->body_len || len > m->body_len - off)
        return "a buffer lies outside its message's body";
      at[k] = m->body + off;
      size[k] = len;
    }
    int64_t bitmap = (n + 7) / 8;
    if (c->null_count == 0) {
      c->validity = 0; /* a writer may leave the bitmap out */
    } else if (size[0] < bitmap) {
      return "a validity bitmap is shorter than its column";
    } else {
      c->validity = at[0];
    }
    int64_t need = c->type == AI_INT32 ? 4 * n
                   : c->type == AI_BOOL ? bitmap
                   : c->type == AI_UTF8 ? 4 * (n + 1)
                   : 8 * n;
    if (size[1] < need && !(c->type == AI_UTF8 && n == 0)) return "a column's values are shorter than the column";
    c->values = at[1];
    c->data = 0;
    if (c->type == AI_UTF8) {
      static const int32_t no_rows = 0; /* an empty column may leave its one offset out */
      if (size[1] < 4) c->values = &no_rows;
      const uint8_t* o = (const uint8_t*)c->values;
      for (int64_t r = 0; r < n; ++r)
        if (ai_u32(o + 4 * r) > ai_u32(o + 4 * r + 4))
          return "a string column's offsets are not ascending";
      if (ai_u32(o + 4 * n) > size[2]) return "a string column's offsets point past its data";
      c->data = (const char*)at[2];
    }
  }
  return 0;
}

/* Reads a stream holding a schema and exactly one record batch (what Bifröst sends) into
 * `out`, whose columns then point into `p`. Returns 0, or what is wrong with the stream. */
static inline const char* ai_read_stream(const uint8_t* p, uint32_t len, ai_batch* out) {
  uint32_t pos = 0;
  int eos;
  ai_message m;
  const char* err = ai_next_message(p, len, &pos, &m, &eos);
  if (err) return err;
  if (eos) return "the stream has no schema";
  if ((err = ai_read_schema(&m, out))) return err;
  if ((err = ai_next_message(p, len, &pos, &m, &eos))) return err;
  if (eos) return "the stream has no record batch";
  if ((err = ai_read_batch(&m, out))) return err;
  if ((err = ai_next_message(p, len, &pos, &m, &eos))) return err;
  return eos ? 0 : "the stream has more than one record batch";
}

/* --- writing ------------------------------------------------------------------------------ */

/* A forward writer. With p == 0 it only counts, so the same calls first size a stream and
 * then write it. Flatbuffer offsets must point forwards, so each table is laid out as
 * [vtable][table][what it refers to], with the referring offsets patched afterwards. */
typedef struct {
  uint8_t* p;
  uint32_t at;
} ai_out;

static inline void ai_put(ai_out* w, uint32_t at, const void* src, uint32_t n) {
  if (!w->p) return;
  const uint8_t* s = (const uint8_t*)src;
  for (uint32_t i = 0; i < n; ++i) w->p[at + i] = s[i];
}
static inline void ai_put_u16(ai_out* w, uint32_t at, uint16_t v) { ai_put(w, at, &v, 2); }
static inline void ai_put_u32(ai_out* w, uint32_t at, uint32_t v) { ai_put(w, at, &v, 4); }
static inline void ai_put_i64(ai_out* w, uint32_t at, int64_t v) { ai_put(w, at, &v, 8); }

/* Zero bytes up to a multiple of `align`. */
static inline void ai_align(ai_out* w, uint32_t align) {
  while (w->at % align) {
    if (w->p) w->p[w->at] = 0;
    ++w->at;
  }
}
static inline uint32_t ai_skip(ai_out* w, uint32_t n) {
  uint32_t at = w->at;
  for (uint32_t i = 0; i < n && w->p; ++i) w->p[at + i] = 0;
  w->at += n;
  return at;
}

/* A table of `nfields` fields and `size` inline bytes (its leading i32 included), 8-byte
 * aligned so that 8-byte fields go at offsets that are multiples of 8, its vtable just
 * before it. Returns its position; *slots gets where the vtable's field offsets are. */
static inline uint32_t ai_table(ai_out* w, uint16_t nfields, uint16_t size, uint32_t* slots) {
  ai_align(w, 2);
  uint32_t vt = ai_skip(w, 4 + 2 * (uint32_t)nfields);
  ai_align(w, 8);
  uint32_t t = ai_skip(w, size);
  ai_put_u16(w, vt, (uint16_t)(4 + 2 * nfields));
  ai_put_u16(w, vt + 2, size);
  ai_put_u32(w, t, t - vt); /* vtable = table - this */
  *slots = vt + 4;
  return t;
}
/* Field `id` is at `off` bytes into its table. */
static inline void ai_slot(ai_out* w, uint32_t slots, uint32_t id, uint16_t off) {
  ai_put_u16(w, slots + 2 * id, off);
}
/* The offset field at `at` refers to what is written next at `to`. */
static inline void ai_ref(ai_out* w, uint32_t at, uint32_t to) { ai_put_u32(w, at, to - at); }

/* A vector of `count` elements of `size` bytes each, its elements aligned to `align`;
 * returns the elements' position. */
static inline uint32_t ai_vector(ai_out* w, uint32_t count, uint32_t size, uint32_t align) {
  while ((w->at + 4) % align) ai_skip(w, 1);
  ai_put_u32(w, ai_skip(w, 4), count);
  return ai_skip(w, count * size);
}

static inline uint32_t ai_string(ai_out* w, const char* s, uint32_t n) {
  ai_align(w, 4);
  uint32_t at = ai_skip(w, 4 + n + 1);
  ai_put_u32(w, at, n);
  ai_put(w, at + 4, s, n);
  return at;
}

/* Starts a message: its prefix, the root offset, the Message table and its header table
 * (tag `type`, `nfields` fields, `size` inline bytes, *slots its field offsets). Returns the
 * header table; *start and *message are for ai_end_metadata. */
static inline uint32_t ai_begin_message(ai_out* w, uint8_t type, uint16_t nfields, uint16_t size,
                                        uint32_t* start, uint32_t* message, uint32_t* slots) {
  *start = w->at; /* a multiple of 8, so alignment within the flatbuffer is absolute */
  ai_skip(w, 8);
  uint32_t root = ai_skip(w, 4);
  /* Message: [0] i32 vtable, [4] header offset, [8] bodyLength, [16] version, [18] header tag */
  uint32_t t = ai_table(w, 4, 24, slots);
  ai_slot(w, *slots, AI_MESSAGE_VERSION, 16);
  ai_slot(w, *slots, AI_MESSAGE_HEADER_TYPE, 18);
  ai_slot(w, *slots, AI_MESSAGE_HEADER, 4);
  ai_slot(w, *slots, AI_MESSAGE_BODY_LENGTH, 8);
  ai_put_u16(w, t + 16, 4); /* MetadataVersion V5 */
  ai_put(w, t + 18, &type, 1);
  ai_ref(w, root, t);
  *message = t;
  uint32_t header = ai_table(w, nfields, size, slots);
  ai_ref(w, t + 4, header);
  return header;
}
/* Pads the metadata, fills in its size and the body length. */
static inline void ai_end_metadata(ai_out* w, uint32_t start, uint32_t message, uint32_t body_len) {
  ai_align(w, 8);
  ai_put_u32(w, start, 0xFFFFFFFFu);
  ai_put_u32(w, start + 4, w->at - start - 8);
  ai_put_i64(w, message + 8, body_len);
}

static inline uint32_t ai_bitmap_len(int64_t n) { return (uint32_t)((n + 7) / 8); }
static inline uint32_t ai_pad8(uint32_t n) { return (n + 7) & ~7u; }

static inline int64_t ai_nulls(const ai_column* c, int64_t n) {
  if (!c->validity) return 0;
  if (c->null_count >= 0) return c->null_count;
  int64_t valid = 0;
  for (int64_t r = 0; r < n; ++r) valid += ai_bit(c->validity, r);
  return n - valid;
}

/* Copies a bitmap of n bits, the unused bits of its last byte cleared. */
static inline void ai_put_bitmap(ai_out* w, uint32_t at, const uint8_t* bits, int64_t n) {
  uint32_t len = ai_bitmap_len(n);
  ai_put(w, at, bits, len);
  if (w->p && n % 8) w->p[at + len - 1] &= (uint8_t)((1u << (n % 8)) - 1);
}

static inline void ai_write_schema(ai_out* w, const ai_column* cols, uint32_t ncols) {
  /* Schema: [0] i32 vtable, [4] fields offset; endianness left at its default, Little */
  uint32_t start, msg, slots;
  uint32_t schema = ai_begin_message(w, AI_HEADER_SCHEMA, 2, 8, &start, &msg, &slots);
  ai_slot(w, slots, AI_SCHEMA_FIELDS, 4);
  uint32_t fields = ai_vector(w, ncols, 4, 4);
  ai_ref(w, schema + 4, fields - 4);
  for (uint32_t i = 0; i < ncols; ++i) {
    const ai_column* c = &cols[i];
    /* Field: [0] i32 vtable, [4] name, [8] type, [12] children, [16] nullable, [17] type tag */
    uint32_t t = ai_table(w, 6, 20, &slots);
    ai_ref(w, fields + 4 * i, t);
    ai_slot(w, slots, AI_FIELD_NAME, 4);
    ai_slot(w, slots, AI_FIELD_TYPE, 8);
    ai_slot(w, slots, AI_FIELD_CHILDREN, 12);
    ai_slot(w, slots, AI_FIELD_NULLABLE, 16);
    ai_slot(w, slots, AI_FIELD_TYPE_TYPE, 17);
    uint8_t nullable = c->nullable ? 1 : 0;
    uint8_t tag = c->type == AI_INT32 || c->type == AI_INT64 ? AI_TYPE_INT
                  : c->type == AI_FLOAT64                     ? AI_TYPE_FLOATING_POINT
                  : c->type == AI_BOOL                        ? AI_TYPE_BOOL
                                                              : AI_TYPE_UTF8;
    ai_put(w, t + 16, &nullable, 1);
    ai_put(w, t + 17, &tag, 1);
    ai_ref(w, t + 4, ai_string(w, c->name, c->name_len));
    uint32_t type;
    if (tag == AI_TYPE_INT) { /* Int: [0] i32 vtable, [4] bitWidth, [8] is_signed */
      type = ai_table(w, 2, 12, &slots);
      ai_slot(w, slots, AI_INT_BIT_WIDTH, 4);
      ai_slot(w, slots, AI_INT_IS_SIGNED, 8);
      uint8_t is_signed = 1;
      ai_put_u32(w, type + 4, c->type == AI_INT32 ? 32 : 64);
      ai_put(w, type + 8, &is_signed, 1);
    } else if (tag == AI_TYPE_FLOATING_POINT) { /* FloatingPoint: [0] i32 vtable, [4] precision */
      type = ai_table(w, 1, 8, &slots);
      ai_slot(w, slots, AI_FLOAT_PRECISION, 4);
      ai_put_u16(w, type + 4, 2); /* DOUBLE */
    } else { /* Utf8 and Bool have no fields */
      type = ai_table(w, 0, 4, &slots);
    }
    ai_ref(w, t + 8, type);
    /* no children, as an empty vector: Arrow C++ refuses a field without one */
    ai_ref(w, t + 12, ai_vector(w, 0, 4, 4) - 4);
  }
  ai_end_metadata(w, start, msg, 0);
}

static inline void ai_write_batch(ai_out* w, const ai_column* cols, uint32_t ncols, int64_t n) {
  /* RecordBatch: [0] i32 vtable, [4] nodes offset, [8] length, [16] buffers offset */
  uint32_t start, msg, slots;
  uint32_t batch = ai_begin_message(w, AI_HEADER_RECORD_BATCH, 3, 24, &start, &msg, &slots);
  ai_slot(w, slots, AI_BATCH_LENGTH, 8);
  ai_slot(w, slots, AI_BATCH_NODES, 4);
  ai_slot(w, slots, AI_BATCH_BUFFERS, 16);
  ai_put_i64(w, batch + 8, n);
  uint32_t nbuffers = 0;
  for (uint32_t i = 0; i < ncols; ++i) nbuffers += cols[i].type == AI_UTF8 ? 3 : 2;
  uint32_t nodes = ai_vector(w, ncols, 16, 8);
  ai_ref(w, batch + 4, nodes - 4);
  uint32_t buffers = ai_vector(w, nbuffers, 16, 8);
  ai_ref(w, batch + 16, buffers - 4);
  /* The body's layout: each buffer at a multiple of 8, in column order. */
  uint32_t body = 0, b = 0;
  for (uint32_t i = 0; i < ncols; ++i) {
    const ai_column* c = &cols[i];
    int64_t nulls = ai_nulls(c, n);
    ai_put_i64(w, nodes + 16 * i, n);
    ai_put_i64(w, nodes + 16 * i + 8, nulls);
    const int32_t* o = (const int32_t*)c->values;
    uint32_t len[3] = {nulls ? ai_bitmap_len(n) : 0,
                       c->type == AI_INT32  ? (uint32_t)(4 * n)
                       : c->type == AI_BOOL ? ai_bitmap_len(n)
                       : c->type == AI_UTF8 ? (uint32_t)(4 * (n + 1))
                                            : (uint32_t)(8 * n),
                       c->type == AI_UTF8 ? (uint32_t)(o[n] - o[0]) : 0};
    for (uint32_t k = 0; k < (c->type == AI_UTF8 ? 3u : 2u); ++k, ++b) {
      ai_put_i64(w, buffers + 16 * b, body);
      ai_put_i64(w, buffers + 16 * b + 8, len[k]);
      body += ai_pad8(len[k]);
    }
  }
  ai_end_metadata(w, start, msg, body);
  /* The body itself. */
  for (uint32_t i = 0; i < ncols; ++i) {
    const ai_column* c = &cols[i];
    if (ai_nulls(c, n)) {
      ai_put_bitmap(w, w->at, c->validity, n);
      w->at += ai_bitmap_len(n);
      ai_align(w, 8);
    }
    uint32_t at = w->at;
    if (c->type == AI_BOOL) {
      ai_put_bitmap(w, at, (const uint8_t*)c->values, n);
      w->at += ai_bitmap_len(n);
    } else if (c->type == AI_UTF8) {
      const int32_t* o = (const int32_t*)c->values;
      for (int64_t r = 0; r <= n; ++r) ai_put_u32(w, at + 4 * (uint32_t)r, (uint32_t)(o[r] - o[0]));
      w->at += 4 * (uint32_t)(n + 1);
      ai_align(w, 8);
      ai_put(w, w->at, c->data + o[0], (uint32_t)(o[n] - o[0]));
      w->at += (uint32_t)(o[n] - o[0]);
    } else {
      uint32_t len = (uint32_t)(n * (c->type == AI_INT32 ? 4 : 8));
      ai_put(w, at, c->values, len);
      w->at += len;
    }
    ai_align(w, 8);
  }
}

/* Writes schema, one record batch and the end-of-stream marker to `out` and returns the
 * length; with out == 0 only returns the length, so a caller sizes its buffer first. */
static inline uint32_t ai_write_stream(uint8_t* out, const ai_column* cols, uint32_t ncols, int64_t nrows) {
  ai_out w = {out, 0};
  ai_write_schema(&w, cols, ncols);
  ai_write_batch(&w, cols, ncols, nrows);
  ai_put_u32(&w, ai_skip(&w, 4), 0xFFFFFFFFu);
  ai_skip(&w, 4);
  return w.at;
}

#endif
