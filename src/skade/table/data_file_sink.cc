#include "skade/table/data_file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace skade {
namespace {

constexpr size_t kSector = 4096;      // a multiple of every logical block size in use
constexpr size_t kStage = 1 << 20;    // 1 MiB writes reach the device's speed (4 MiB: no faster)
constexpr int64_t kWritebackBytes = 4LL << 20;

// Messages leave out the path: callers name the file (as for every Arrow error on it).
arrow::Status Errno(const char* what) { return arrow::Status::IOError(what, ": ", std::strerror(errno)); }

}  // namespace

void DataFileSink::FreeStage::operator()(uint8_t* p) const { std::free(p); }

DataFileSink::DataFileSink(int fd, bool direct) : fd_(fd), direct_(direct) {}

DataFileSink::~DataFileSink() {
  if (fd_ >= 0) ::close(fd_);
}

arrow::Result<std::shared_ptr<DataFileSink>> DataFileSink::Open(const std::string& path) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  bool direct = true;
  int fd = ::open(path.c_str(), kFlags | O_DIRECT, 0644);
  if (fd < 0 && errno == EINVAL) {  // the file system has no direct I/O
    direct = false;
    fd = ::open(path.c_str(), kFlags, 0644);
  }
  if (fd < 0) return Errno("cannot create the file");
  return std::shared_ptr<DataFileSink>(new DataFileSink(fd, direct));
}

arrow::Status DataFileSink::Write(const void* data, int64_t nbytes) {
  if (fd_ < 0) return arrow::Status::Invalid("write to a closed file");
  if (!stage_) {
    void* p = nullptr;
    if (posix_memalign(&p, kSector, kStage) != 0) return arrow::Status::OutOfMemory("no staging buffer");
    stage_.reset(static_cast<uint8_t*>(p));
  }
  auto* in = static_cast<const uint8_t*>(data);
  auto left = static_cast<size_t>(nbytes);
  while (left > 0) {
    size_t n = std::min(left, kStage - staged_);
    std::memcpy(stage_.get() + staged_, in, n);
    staged_ += n;
    in += n;
    left -= n;
    if (staged_ == kStage) {
      ARROW_RETURN_NOT_OK(WriteOut(stage_.get(), kStage));
      staged_ = 0;
    }
  }
  return arrow::Status::OK();
}

arrow::Status DataFileSink::Finish() {
  if (fd_ < 0) return arrow::Status::Invalid("finish of a closed file");
  size_t whole = staged_ / kSector * kSector;
  if (whole > 0) ARROW_RETURN_NOT_OK(WriteOut(stage_.get(), whole));
  if (staged_ > whole) {
    ARROW_RETURN_NOT_OK(StopDirect());
    ARROW_RETURN_NOT_OK(WriteOut(stage_.get() + whole, staged_ - whole));
  }
  staged_ = 0;
  stage_.reset();
  return arrow::Status::OK();
}

arrow::Status DataFileSink::Close() {
  if (fd_ < 0) return arrow::Status::OK();
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return Errno("cannot close the file");
  return arrow::Status::OK();
}

arrow::Status DataFileSink::StopDirect() {
  if (!direct_) return arrow::Status::OK();
  int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) return Errno("cannot turn off O_DIRECT");
  direct_ = false;
  return arrow::Status::OK();
}

arrow::Status DataFileSink::WriteOut(const uint8_t* data, size_t n) {
  while (n > 0) {
    // Sequential writes (not at offsets): the file may be a pipe (scan --output /dev/stdout).
    ssize_t w = ::write(fd_, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      // Accepted at open yet refused here (an alignment the device does not take, a
      // partial write that left the offset unaligned): the rest goes buffered.
      if (errno == EINVAL && direct_) {
        ARROW_RETURN_NOT_OK(StopDirect());
        continue;
      }
      return Errno("cannot write");
    }
    if (w == 0) return arrow::Status::IOError("cannot write: the file system took no bytes");
    data += w;
    n -= static_cast<size_t>(w);
    written_ += w;
  }
  if (!direct_ && written_ - writeback_ >= kWritebackBytes) {
    // Only a hint: the fsync later is what makes the file durable.
    (void)::sync_file_range(fd_, writeback_, written_ - writeback_, SYNC_FILE_RANGE_WRITE);
    writeback_ = written_;
  }
  return arrow::Status::OK();
}

}  // namespace skade
