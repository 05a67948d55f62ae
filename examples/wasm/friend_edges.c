/* Example guest: derives edges from a column. Each input row has `id` (int64) and
 * `friends` (utf8, a comma-separated list of ids such as "3, 7,12"); the reply has one
 * row per listed friend: `src` = id, `dst` = the friend, `rank` = its place in the list
 * (from 1). A null or empty list gives no rows; a token that is not a number fails the
 * call with a message naming the row. */
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

__attribute__((export_name("bifrost_transform"))) uint64_t bifrost_transform(uint32_t ptr,
                                                                             uint32_t len) {
  const bf_header* in = (const bf_header*)(uintptr_t)ptr;
  if (len < sizeof(bf_header) || in->magic != BF_MAGIC) return bf_fail("input is not a batch");
  const bf_column* id = bf_find(in, "id", BF_INT64);
  const bf_column* friends = bf_find(in, "friends", BF_UTF8);
  if (!id || !friends) return bf_fail("input needs id (int64) and friends (utf8)");
  const uint8_t* id_valid = bf_at(in, id->valid_off);
  const int64_t* ids = bf_at(in, id->values_off);
  const uint8_t* f_valid = bf_at(in, friends->valid_off);
  const uint32_t* offsets = bf_at(in, friends->values_off);
  const char* text = bf_at(in, friends->data_off);

  uint64_t total = 0;
  for (uint64_t r = 0; r < in->nrows; ++r) {
    if (!id_valid[r] || !f_valid[r]) continue;
    int64_t n = each_friend(text + offsets[r], offsets[r + 1] - offsets[r], 0, 0);
    if (n < 0) return bf_fail(row_error(r));
    total += (uint64_t)n;
  }
  bf_header* out = bf_reply(3, total);
  uint8_t *src_valid, *dst_valid, *rank_valid;
  int64_t* src = out ? bf_reply_column(out, 0, "src", BF_INT64, &src_valid) : 0;
  int64_t* dst = src ? bf_reply_column(out, 1, "dst", BF_INT64, &dst_valid) : 0;
  int64_t* rank = dst ? bf_reply_column(out, 2, "rank", BF_INT64, &rank_valid) : 0;
  if (!rank) return bf_fail("out of memory for the reply");
  uint64_t at = 0;
  for (uint64_t r = 0; r < in->nrows; ++r) {
    if (!id_valid[r] || !f_valid[r]) continue;
    int64_t n = each_friend(text + offsets[r], offsets[r + 1] - offsets[r], dst + at, rank + at);
    for (int64_t k = 0; k < n; ++k) src[at + k] = ids[r];
    at += (uint64_t)n;
  }
  memset(src_valid, 1, (size_t)total);
  memset(dst_valid, 1, (size_t)total);
  memset(rank_valid, 1, (size_t)total);
  return bf_done(out);
}
