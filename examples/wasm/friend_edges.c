/* Example guest: derives edges from a column. Each input row has `id` (int64) and
 * `friends` (utf8, a comma-separated list of ids such as "3, 7,12"); the reply has one
 * row per listed friend: `src` = id, `dst` = the friend, `rank` = its place in the list
 * (from 1), all three int64. A null or empty list gives no rows; a token that is not a
 * number fails the call with a message naming the row. */
#include "bifrost_guest.h"

static int is_space(char c) { return c == ' ' || c == '\t'; }

/* Walks one row's list, entries split at commas and trimmed of blanks; an empty entry
 * is skipped. Writes each friend and its rank when dst is given; returns the count, or
 * -1 when an entry is not a (possibly negative) whole number. */
static int64_t each_friend(const char* s, uint32_t len, int64_t* dst, int64_t* rank) {
  int64_t count = 0;
  uint32_t i = 0;
  while (i <= len) {
    uint32_t end = i;
    while (end < len && s[end] != ',') ++end;
    uint32_t a = i, b = end;
    while (a < b && is_space(s[a])) ++a;
    while (b > a && is_space(s[b - 1])) --b;
    if (a < b) {
      int negative = s[a] == '-';
      if (negative) ++a;
      if (a == b) return -1;
      int64_t v = 0;
      for (; a < b; ++a) {
        if (s[a] < '0' || s[a] > '9') return -1;
        v = v * 10 + (s[a] - '0');
      }
      if (dst) dst[count] = negative ? -v : v, rank[count] = count + 1;
      ++count;
    }
    i = end + 1;
  }
  return count;
}

static char message[64];

static const char* row_error(uint64_t row) {
  const char prefix[] = "row ";
  const char suffix[] = ": friends holds something that is not a number";
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + row % 10), row /= 10;
  while (row);
  int k = 0;
  for (int i = 0; prefix[i]; ++i) message[k++] = prefix[i];
  while (n) message[k++] = digits[--n];
  for (int i = 0; suffix[i] && k < (int)sizeof message - 1; ++i) message[k++] = suffix[i];
  message[k] = 0;
  return message;
}

static ai_batch in;

__attribute__((export_name("bifrost_transform"))) uint64_t bifrost_transform(uint32_t ptr,
                                                                             uint32_t len) {
  const char* err = ai_read_stream((const uint8_t*)(uintptr_t)ptr, len, &in);
  if (err) return bf_fail(err);
  const ai_column* id = ai_find(&in, "id", AI_INT64);
  const ai_column* friends = ai_find(&in, "friends", AI_UTF8);
  if (!id || !friends) return bf_fail("input needs id (int64) and friends (utf8)");
  const int64_t* ids = id->values;
  const int32_t* offsets = friends->values;

  uint64_t total = 0;
  for (int64_t r = 0; r < in.nrows; ++r) {
    if (!ai_valid(id, r) || !ai_valid(friends, r)) continue;
    int64_t n = each_friend(friends->data + offsets[r], (uint32_t)(offsets[r + 1] - offsets[r]), 0, 0);
    if (n < 0) return bf_fail(row_error((uint64_t)r));
    total += (uint64_t)n;
  }
  int64_t* src = bf_alloc((uint32_t)(total * 8));
  int64_t* dst = bf_alloc((uint32_t)(total * 8));
  int64_t* rank = bf_alloc((uint32_t)(total * 8));
  if (!src || !dst || !rank) return bf_fail("out of memory for the reply");
  uint64_t at = 0;
  for (int64_t r = 0; r < in.nrows; ++r) {
    if (!ai_valid(id, r) || !ai_valid(friends, r)) continue;
    int64_t n = each_friend(friends->data + offsets[r], (uint32_t)(offsets[r + 1] - offsets[r]),
                            dst + at, rank + at);
    for (int64_t k = 0; k < n; ++k) src[at + k] = ids[r];
    at += (uint64_t)n;
  }
  ai_column out[3] = {bf_column("src", AI_INT64, src, 0), bf_column("dst", AI_INT64, dst, 0),
                      bf_column("rank", AI_INT64, rank, 0)};
  return bf_reply(out, 3, (int64_t)total);
}
