// A flood of 5,000 commits from two writers to a deliberately slow subscriber in
// another process (`skade watch`, whose output nobody reads until the writers are
// done, so it stalls on a full pipe): writers finish regardless, and the
// subscriber then delivers every commit of the log once, in commit_seq order.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arrow/api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <thread>

#include "skade/catalog/catalog.h"
#include "skade/table/table.h"
#include "testing/matchers.h"
#include "testing/random_data.h"
#include "testing/temp_dir.h"

extern char** environ;

namespace skade {
namespace {

using testing::IsOk;

// A child process whose stdout is a pipe we read from.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Child() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::close(fd_);
  }
  // The next line, or nullopt when none comes within `timeout_ms`.
  std::optional<std::string> ReadLine(int timeout_ms) {
    while (true) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
      char chunk[65536];
      ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buf_;
};

TEST(WatchFloodTest, FiveThousandCommitsReachASlowSubscriberOnceAndInOrder) {
  const char* bin = std::getenv("SKADE_BIN");
  ASSERT_NE(bin, nullptr) << "SKADE_BIN must name the skade binary (ctest sets it)";
  testing::TempDir dir;
  auto cat = std::move(*Catalog::Create(dir.path()));
  ASSERT_THAT(cat->CreateNamespace("f"), IsOk());
  Schema schema = *ParseSchemaSpec("id:long!");
  constexpr int kTables = 20, kWriters = 2, kCommits = 5000;
  for (int t = 0; t < kTables; ++t)
    ASSERT_THAT(cat->CreateTable({"f", "t" + std::to_string(t)}, schema, PartitionSpec(), {}), IsOk());

  // Replays from the first commit, so nothing depends on when it starts watching.
  Child watch({bin, "--warehouse", dir.path(), "watch", "--from-seq", "1"});
  ASSERT_TRUE(watch.ReadLine(10000).has_value()) << "watch printed nothing";

  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      auto c = std::move(*Catalog::Create(dir.path()));  // each writer its own connection
      std::vector<std::unique_ptr<Table>> tables;
      for (int t = w; t < kTables; t += kWriters)
        tables.push_back(std::move(*Table::Load(*c, {"f", "t" + std::to_string(t)})));
      for (int i = 0; i < kCommits / kWriters; ++i) {
        testing::Row r(1);
        r[0].value = Value{static_cast<int64_t>(i)};
        ASSERT_THAT(tables[static_cast<size_t>(i) % tables.size()]->Append(testing::ToArrow(schema, {r})),
                    IsOk());
      }
    });
  for (auto& w : writers) w.join();

  auto log = cat->CommitsSince(0);
  ASSERT_THAT(log, IsOk());
  ASSERT_EQ(log->size(), static_cast<size_t>(kTables + kCommits));
  // The first line (create of t0) was read above; the rest must follow exactly.
  for (size_t i = 1; i < log->size(); ++i) {
    auto line = watch.ReadLine(60000);
    ASSERT_TRUE(line.has_value()) << "subscriber stopped after " << i << " of " << log->size();
    auto j = nlohmann::json::parse(*line);
    ASSERT_EQ(j["commit_seq"].get<int64_t>(), (*log)[i].commit_seq) << "line " << i;
    EXPECT_EQ(j["table"].get<std::string>(), (*log)[i].table.ToString());
  }
  EXPECT_FALSE(watch.ReadLine(300).has_value()) << "a commit was delivered twice";
}

}  // namespace
}  // namespace skade
