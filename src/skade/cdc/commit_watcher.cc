#include "skade/cdc/commit_watcher.h"

#include <poll.h>
#include <time.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "skade/catalog/catalog.h"

namespace skade::cdc {

CommitWatcher::~CommitWatcher() { ::close(fd_); }

Result<std::unique_ptr<CommitWatcher>> CommitWatcher::Make(const Catalog& catalog) {
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return IoError(std::string("inotify: ") + std::strerror(errno));
  // The folder, not the files: the WAL file comes and goes with connections.
  std::string dir = catalog.warehouse();
  if (::inotify_add_watch(fd, dir.c_str(), IN_MODIFY | IN_CREATE | IN_MOVED_TO) < 0) {
    int e = errno;
    ::close(fd);
    return IoError("watch " + dir + ": " + std::strerror(e));
  }
  return std::unique_ptr<CommitWatcher>(new CommitWatcher(fd));
}

Result<bool> CommitWatcher::Wait(std::optional<std::chrono::microseconds> timeout) {
  using std::chrono::microseconds;
  auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                          : std::chrono::steady_clock::time_point::max();
  while (true) {
    timespec ts{};
    if (timeout) {
      auto left = std::chrono::duration_cast<microseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      ts.tv_sec = static_cast<time_t>(left.count() / 1000000);
      ts.tv_nsec = static_cast<long>(left.count() % 1000000) * 1000;
    }
    pollfd p{fd_, POLLIN, 0};
    int rc = ::ppoll(&p, 1, timeout ? &ts : nullptr, nullptr);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return IoError(std::string("poll: ") + std::strerror(errno));
    }
    if (rc == 0) return false;
    alignas(inotify_event) char buf[4096];
    bool catalog_changed = false;
    while (true) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      for (char* at = buf; at < buf + n;) {
        auto* ev = reinterpret_cast<inotify_event*>(at);
        std::string name = ev->len ? ev->name : "";
        // A commit writes the WAL (or the database/journal); -shm changes on reads.
        if (name == "catalog.db" || name == "catalog.db-wal" || name == "catalog.db-journal")
          catalog_changed = true;
        at += sizeof(inotify_event) + ev->len;
      }
    }
    if (catalog_changed) return true;
  }
}

Result<bool> CommitWatcher::WaitFor(const std::function<Result<bool>()>& arrived,
                                    std::optional<std::chrono::milliseconds> timeout) {
  using std::chrono::microseconds;
  auto deadline = timeout ? std::chrono::steady_clock::now() + *timeout
                          : std::chrono::steady_clock::time_point::max();
  auto left = [&]() -> std::optional<microseconds> {
    if (!timeout) return std::nullopt;
    return std::max(microseconds(0), std::chrono::duration_cast<microseconds>(
                                         deadline - std::chrono::steady_clock::now()));
  };
  SKADE_ASSIGN_OR_RETURN(bool done, arrived());
  while (!done) {
    SKADE_ASSIGN_OR_RETURN(bool woke, Wait(left()));
    if (!woke) return false;
    SKADE_ASSIGN_OR_RETURN(done, arrived());
    // Settle: a commit's last write can precede its visibility by as long as its
    // fsync takes (no file event marks the end), so look again after 0.1, 0.2, 0.4 …
    // ms, then every 200 ms, for 5 s after the last event; another event restarts it.
    auto settle_until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    microseconds step(100);
    while (!done && std::chrono::steady_clock::now() < settle_until) {
      auto l = left();
      if (l && l->count() == 0) return false;
      SKADE_ASSIGN_OR_RETURN(bool again, Wait(l ? std::min(step, *l) : step));
      if (again) {
        settle_until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        step = microseconds(100);
      } else {
        step = std::min(step * 2, microseconds(200000));
      }
      SKADE_ASSIGN_OR_RETURN(done, arrived());
    }
  }
  return true;
}

}  // namespace skade::cdc
