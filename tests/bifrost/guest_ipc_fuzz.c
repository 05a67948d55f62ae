/* Random corruption of Arrow IPC streams fed to examples/wasm/arrow_ipc_guest.h, built for
 * the host with AddressSanitizer and UBSan by test_custom_steps.py: each corrupted stream is
 * in a block of exactly its size, every value the reader hands out is read and the batch
 * written again, so a bounds check the reader lacks shows as a sanitizer abort. Prints how
 * many streams read and how many were refused. Usage: guest_ipc_fuzz ROUNDS STREAM... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_ipc_guest.h"

static ai_batch batch;

static unsigned long touch(const ai_batch* b) {
  unsigned long sum = 0;
  for (uint32_t c = 0; c < b->ncols; ++c) {
    const ai_column* col = &b->cols[c];
    for (int64_t r = 0; r < b->nrows; ++r) {
      sum += (unsigned long)ai_valid(col, r);
      if (col->type == AI_INT32) {
        sum += (unsigned long)((const int32_t*)col->values)[r];
      } else if (col->type == AI_INT64 || col->type == AI_FLOAT64) {
        sum += (unsigned long)((const int64_t*)col->values)[r];
      } else if (col->type == AI_BOOL) {
        sum += (unsigned long)ai_bit(col->values, r);
      } else {
        const int32_t* o = col->values;
        for (int32_t k = o[r]; k < o[r + 1]; ++k) sum += (unsigned char)col->data[k];
      }
    }
  }
  return sum;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  long rounds = atol(argv[1]);
  srand(16);
  for (int f = 2; f < argc; ++f) {
    FILE* in = fopen(argv[f], "rb");
    if (!in) return 2;
    unsigned char good[1 << 16];
    size_t n = fread(good, 1, sizeof good, in);
    fclose(in);
    long read = 0, refused = 0;
    for (long i = 0; i < rounds; ++i) {
      size_t len = n;
      unsigned char* p = malloc(n);
      memcpy(p, good, n);
      if (i) { /* round 0 is the stream as it is */
        for (int k = 1 + rand() % 6; k > 0; --k) p[(size_t)rand() % n] = (unsigned char)rand();
        if (rand() % 4 == 0) len = (size_t)rand() % n;
      }
      unsigned char* exact = malloc(len ? len : 1);
      memcpy(exact, p, len);
      free(p);
      const char* err = ai_read_stream(exact, (uint32_t)len, &batch);
      if (err) {
        ++refused;
      } else {
        ++read;
        volatile unsigned long sink = touch(&batch);
        (void)sink;
        uint32_t size = ai_write_stream(0, batch.cols, batch.ncols, batch.nrows);
        uint8_t* out = malloc(size);
        if (ai_write_stream(out, batch.cols, batch.ncols, batch.nrows) != size) return 3;
        free(out);
      }
      if (i == 0 && err) {
        fprintf(stderr, "%s does not read: %s\n", argv[f], err);
        return 4;
      }
      free(exact);
    }
    printf("%s: %ld read, %ld refused\n", argv[f], read, refused);
  }
  return 0;
}
