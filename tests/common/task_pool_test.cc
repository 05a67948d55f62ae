#include "skade/common/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace skade {
namespace {

TEST(WorkerCount, SkadeThreadsChoosesElseOnePerCore) {
  EXPECT_EQ(WorkerCount(nullptr, 2), 2u);
  EXPECT_EQ(WorkerCount("1", 2), 1u);
  EXPECT_EQ(WorkerCount("8", 2), 8u);
  EXPECT_EQ(WorkerCount("0", 4), 1u);
  EXPECT_EQ(WorkerCount("100000", 4), 256u);
  EXPECT_EQ(WorkerCount("many", 4), 4u);
  EXPECT_EQ(WorkerCount("", 3), 3u);
}

TEST(RunConcurrently, RunsEveryIndexOnceAndReportsTheLowestFailure) {
  std::vector<std::atomic<int>> runs(200);
  Status st = RunConcurrently(runs.size(), [&](size_t i) -> Status {
    runs[i]++;
    if (i == 150 || i == 70) return InvalidArgument("index " + std::to_string(i));
    return {};
  });
  ASSERT_FALSE(st);
  // With one thread (a one-core machine) the run stops at the first failure.
  EXPECT_EQ(st.error().message, "index 70");
  for (size_t i = 0; i <= 70; ++i) EXPECT_EQ(runs[i].load(), 1) << i;
  for (size_t i = 71; i < runs.size(); ++i) EXPECT_LE(runs[i].load(), 1) << i;
  EXPECT_TRUE(RunConcurrently(0, [](size_t) -> Status { return InvalidArgument("never"); }));
}

}  // namespace
}  // namespace skade
