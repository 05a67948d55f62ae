// The calling thread's CPU time, for traces and benchmarks: a system call, so once per
// task or page, never per row.
#pragma once

#include <time.h>

#include <cstdint>

namespace skade {

inline int64_t ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace skade
