#include "skade/io/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>

namespace skade {
namespace {

namespace fs = std::filesystem;

std::string ErrnoText() { return std::strerror(errno); }

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("write " + path + ": " + ErrnoText());
    }
    done += static_cast<size_t>(n);
  }
  return {};
}

// Writes `data` to a new temporary file beside `path` and syncs it; returns its name.
Result<std::string> WriteSyncedTemp(const std::string& path, std::string_view data) {
  if (fs::path(path).has_parent_path())
    SKADE_RETURN_IF_ERROR(MakeDirs(fs::path(path).parent_path().string()));
  std::string tmp = path + "." + NewUuid().substr(0, 8) + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("create " + tmp + ": " + ErrnoText());
  Status st = WriteAll(fd, data, tmp);
  if (st) st = SyncFile(fd, tmp);
  ::close(fd);
  if (!st) {
    ::unlink(tmp.c_str());
    return std::unexpected(st.error());
  }
  return tmp;
}

// The folder a path resolves to: symlinks and `..` resolved as far as the path exists.
std::string Resolved(std::string_view path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(fs::path(LocalPath(path)), ec), ec);
  if (ec) p = fs::absolute(fs::path(LocalPath(path))).lexically_normal();
  std::string out = p.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// Whether resolved path `p` is the resolved folder `f` or lies under it.
bool ResolvedInside(const std::string& p, const std::string& f) {
  if (f == "/") return true;
  return p == f || (p.size() > f.size() && p.compare(0, f.size(), f) == 0 && p[f.size()] == '/');
}

class LocalFileIO final : public FileIO {
 public:
  void AllowWritesUnder(std::string_view folder) override {
    std::string root = Resolved(folder);
    std::lock_guard lock(mu_);
    confined_ = true;
    for (const auto& r : roots_)
      if (ResolvedInside(root, r)) return;
    roots_.push_back(std::move(root));
  }

  Status CheckWritable(std::string_view location) {
    std::lock_guard lock(mu_);
    if (!confined_) return {};
    // The roots are resolved already: resolving them again took a readlink per folder
    // level of each, on every file a commit writes.
    std::string path = Resolved(location);
    for (const auto& r : roots_)
      if (ResolvedInside(path, r)) return {};
    return InvalidArgument("refusing to write " + LocalPath(location) + ": outside the warehouse " + roots_.front() +
                           " and the table locations in use");
  }

  Result<std::string> ReadFile(std::string_view location) override {
    std::string path = LocalPath(location);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return NotFound("file not found: " + path);
      return IoError("open " + path + ": " + ErrnoText());
    }
    std::string out;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
    char buf[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        ::close(fd);
        return IoError("read " + path + ": " + ErrnoText());
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
  }

  Status WriteNewFile(std::string_view location, std::string_view data) override {
    SKADE_RETURN_IF_ERROR(CheckWritable(location));
    std::string path = LocalPath(location);
    SKADE_ASSIGN_OR_RETURN(std::string tmp, WriteSyncedTemp(path, data));
    // link() publishes without ever replacing an existing file.
    if (::link(tmp.c_str(), path.c_str()) != 0) {
      int e = errno;
      ::unlink(tmp.c_str());
      if (e == EEXIST) return MakeError(ErrorKind::kAlreadyExists, "file already exists: " + path);
      return IoError("publish " + path + ": " + std::strerror(e));
    }
    ::unlink(tmp.c_str());
    // The new name survives a crash only once its folder is synced: a commit must never
    // point at a file the disk does not have.
    return SyncFolder(fs::path(path).parent_path().string());
  }

  Status DeleteFile(std::string_view location) override {
    SKADE_RETURN_IF_ERROR(CheckWritable(location));
    std::string path = LocalPath(location);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return IoError("delete " + path + ": " + ErrnoText());
    return {};
  }

  Result<bool> Exists(std::string_view location) override {
    struct stat st {};
    return ::stat(LocalPath(location).c_str(), &st) == 0;
  }

  Result<std::vector<FileInfo>> ListFiles(std::string_view dir) override {
    std::vector<FileInfo> out;
    std::error_code ec;
    fs::path root(LocalPath(dir));
    if (!fs::exists(root, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      FileInfo info;
      info.path = it->path().string();
      info.size = static_cast<int64_t>(it->file_size(ec));
      struct stat st {};
      if (::stat(info.path.c_str(), &st) == 0)
        info.mtime_ms = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
      out.push_back(std::move(info));
    }
    if (ec) return IoError("list " + root.string() + ": " + ec.message());
    return out;
  }

 private:
  std::mutex mu_;
  bool confined_ = false;
  std::vector<std::string> roots_;
};

}  // namespace

std::unique_ptr<FileIO> MakeLocalFileIO() { return std::make_unique<LocalFileIO>(); }

std::string LocalPath(std::string_view location) {
  if (location.starts_with("file://")) location.remove_prefix(7);
  else if (location.starts_with("file:")) location.remove_prefix(5);
  return std::string(location);
}

bool SamePath(std::string_view a, std::string_view b) { return a == b || LocalPath(a) == LocalPath(b); }

bool IsInside(std::string_view path, std::string_view folder) {
  return ResolvedInside(Resolved(path), Resolved(folder));
}

Status CheckInside(std::string_view path, std::string_view folder) {
  if (IsInside(path, folder)) return {};
  return InvalidArgument("refusing to write " + LocalPath(path) + ": outside " + LocalPath(folder));
}

std::string FileUri(std::string_view path) {
  if (path.starts_with("file:")) return std::string(path);
  return "file://" + std::string(path);
}

Status ReplaceFile(std::string_view location, std::string_view data) {
  std::string path = LocalPath(location);
  SKADE_ASSIGN_OR_RETURN(std::string tmp, WriteSyncedTemp(path, data));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status st = IoError("replace " + path + ": " + ErrnoText());
    ::unlink(tmp.c_str());
    return st;
  }
  // The rename itself is durable once the folder is.
  return SyncFolder(fs::path(path).parent_path().string());
}

Status SyncFile(int fd, std::string_view path) {
  if (::fsync(fd) != 0) return IoError("fsync " + std::string(path) + ": " + ErrnoText());
  return {};
}

Status SyncFolder(std::string_view dir) {
  std::string d = dir.empty() ? "." : LocalPath(dir);
  int dfd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return IoError("open folder " + d + ": " + ErrnoText());
  bool synced = ::fsync(dfd) == 0;
  ::close(dfd);
  if (!synced) return IoError("fsync folder " + d + ": " + ErrnoText());
  return {};
}

Status MakeDirs(std::string_view dir) {
  fs::path path(LocalPath(dir));
  std::error_code ec;
  std::vector<fs::path> missing;  // innermost first
  for (fs::path d = path; !d.empty() && !fs::exists(d, ec); d = d.parent_path()) {
    missing.push_back(d);
    if (d == d.parent_path()) break;
  }
  fs::create_directories(path, ec);
  if (ec) return IoError("create folder " + std::string(dir) + ": " + ec.message());
  // A new folder's name is durable once the folder holding it is synced.
  for (const auto& d : missing) SKADE_RETURN_IF_ERROR(SyncFolder(d.parent_path().string()));
  return {};
}

std::string NewUuid() {
  thread_local std::mt19937_64 rng{std::random_device{}() ^
                                   static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[37];
  snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
           static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
           static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace skade
