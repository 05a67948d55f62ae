// CommitWatcher::WaitFor: a commit can become visible well after the last file event
// it caused (the writer's fsync comes between), so the watcher must keep looking for
// a while after a wake instead of going back to sleep.
#include "skade/cdc/commit_watcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "skade/catalog/catalog.h"
#include "testing/matchers.h"
#include "testing/temp_dir.h"

namespace skade {
namespace {

using testing::IsOk;
using Clock = std::chrono::steady_clock;

class CommitWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cat_ = std::move(*Catalog::Create(dir_.path()));
    auto w = cdc::CommitWatcher::Make(*cat_);
    ASSERT_THAT(w, IsOk());
    watcher_ = std::move(*w);
  }
  // One write to the catalog's WAL file, as a commit's last write is.
  void Touch() { std::ofstream(dir_.path() + "/catalog.db-wal", std::ios::app) << "x"; }

  testing::TempDir dir_;
  std::unique_ptr<Catalog> cat_;
  std::unique_ptr<cdc::CommitWatcher> watcher_;
};

TEST_F(CommitWatcherTest, FindsACommitThatBecomesVisibleLongAfterItsLastWrite) {
  std::atomic<int64_t> visible_at{0};  // steady-clock ns; 0 = not yet written
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Touch();
    visible_at = (Clock::now() + std::chrono::milliseconds(700)).time_since_epoch().count();
  });
  int checks = 0;
  auto arrived = [&]() -> Result<bool> {
    ++checks;
    int64_t at = visible_at;
    return at != 0 && Clock::now().time_since_epoch().count() >= at;
  };
  auto start = Clock::now();
  auto got = watcher_->WaitFor(arrived, std::chrono::seconds(20));
  writer.join();
  ASSERT_THAT(got, IsOk());
  EXPECT_TRUE(*got) << "the watcher went back to sleep before the commit became visible";
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_LT(checks, 60) << "re-checks must thin out, not spin";
}

TEST_F(CommitWatcherTest, SleepsWithoutLookingWhenNothingIsWritten) {
  int checks = 0;
  auto arrived = [&]() -> Result<bool> {
    ++checks;
    return false;
  };
  auto got = watcher_->WaitFor(arrived, std::chrono::milliseconds(300));
  ASSERT_THAT(got, IsOk());
  EXPECT_FALSE(*got);
  EXPECT_EQ(checks, 1);  // once on entry, then asleep: no polling loop
}

}  // namespace
}  // namespace skade
