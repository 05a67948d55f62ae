// FileIO: how skade reads and publishes files. Local files now; the interface is
// what a fault-injecting or object-store implementation plugs into.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"

namespace skade {

struct FileInfo {
  std::string path;  // local path, no scheme
  int64_t size = 0;
  int64_t mtime_ms = 0;
};

class FileIO {
 public:
  virtual ~FileIO() = default;
  /// Whole contents. Errors: kNotFound, kIoError (both naming the path).
  virtual Result<std::string> ReadFile(std::string_view location) = 0;
  /// Publishes a new file atomically: readers see all of it or nothing, and an
  /// existing file is never replaced (kAlreadyExists). Parent folders are created.
  virtual Status WriteNewFile(std::string_view location, std::string_view data) = 0;
  virtual Status DeleteFile(std::string_view location) = 0;
  virtual Result<bool> Exists(std::string_view location) = 0;
  /// Files below a folder, recursively. A missing folder lists as empty.
  virtual Result<std::vector<FileInfo>> ListFiles(std::string_view dir) = 0;
  /// From now on WriteNewFile and DeleteFile refuse paths that do not lie inside one
  /// of the folders allowed this way (symlinks resolved): the warehouse, and the
  /// location of each table the process writes. Until the first call, none is refused.
  virtual void AllowWritesUnder(std::string_view folder) = 0;
};

/// The local file system; accepts plain paths and file:// URIs.
std::unique_ptr<FileIO> MakeLocalFileIO();

/// `file:///a/b` → `/a/b`; plain paths unchanged.
std::string LocalPath(std::string_view location);
/// Whether two locations name one file however each spells the scheme (`file:/a`,
/// `file:///a`, `/a`).
bool SamePath(std::string_view a, std::string_view b);
/// Whether `path` is `folder` or lies inside it, comparing whole components after
/// resolving symlinks and `..` in the parts that exist.
bool IsInside(std::string_view path, std::string_view folder);
/// kInvalidArgument "refusing to write P: outside F" unless IsInside(path, folder).
Status CheckInside(std::string_view path, std::string_view folder);
/// `/a/b` → `file:///a/b`.
std::string FileUri(std::string_view path);
/// Replaces a local file's contents durably: readers and crashes see the old or the
/// new contents whole. Parent folders are created. Errors: kIoError naming the file.
Status ReplaceFile(std::string_view location, std::string_view data);
/// Creates a folder and its parents, durably (the folders holding new ones are synced).
/// Errors: kIoError naming it.
Status MakeDirs(std::string_view dir);
/// Makes a written file's contents durable (`fd` open on it). Errors: kIoError naming it.
Status SyncFile(int fd, std::string_view path);
/// Makes the names created in a folder durable. Errors: kIoError naming it.
Status SyncFolder(std::string_view dir);
/// A random version-4 UUID in text form.
std::string NewUuid();
/// Milliseconds since the epoch.
int64_t NowMs();

}  // namespace skade
