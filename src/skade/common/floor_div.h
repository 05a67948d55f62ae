// Integer division that rounds toward negative infinity, as time units before the epoch need.
#pragma once

#include <cstdint>

namespace skade {

/// a / b rounded down; b > 0.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace skade
