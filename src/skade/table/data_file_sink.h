// The sink Parquet writes data and delete files into.
//
// Where the file system takes it, the file is written with O_DIRECT: the device reads
// each MiB from one aligned staging buffer, reused for the whole file. A buffered write
// has the kernel copy every byte into page-cache pages it must allocate first, and fresh
// pages are what this class of machine (a VM returning free memory to its host) pays
// most for: the 37 MB file of a 1M-row append took 45-60 ms to copy into the page cache
// at Close, against about 20 ms written direct. A direct write leaves nothing cached;
// the file is read back through the page cache as any other.
//
// Where O_DIRECT is refused (at open, or by a write), the file is written buffered and
// the device is asked to start writeback every few MiB, so the fsync before a commit
// waits only for the tail. The tail that does not fill a sector is always written
// buffered. Durability is the caller's: Finish, then SyncFile(file_descriptor()).
#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <string>

namespace skade {

class DataFileSink final : public arrow::io::OutputStream {
 public:
  /// Creates (or truncates) `path`. Errors name the operation and the reason, not the
  /// file: callers add it, as for every other error on the file.
  static arrow::Result<std::shared_ptr<DataFileSink>> Open(const std::string& path);
  ~DataFileSink() override;

  arrow::Status Write(const void* data, int64_t nbytes) override;
  /// Staged bytes reach the file in Finish: a direct write must be whole sectors.
  arrow::Status Flush() override { return arrow::Status::OK(); }
  /// Writes every staged byte; the file then holds all that was written.
  arrow::Status Finish();
  arrow::Status Close() override;
  bool closed() const override { return fd_ < 0; }
  arrow::Result<int64_t> Tell() const override { return written_ + static_cast<int64_t>(staged_); }

  int file_descriptor() const { return fd_; }
  /// Whether the bytes so far went to the device directly.
  bool direct() const { return direct_; }

 private:
  DataFileSink(int fd, bool direct);
  arrow::Status WriteOut(const uint8_t* data, size_t n);
  arrow::Status StopDirect();

  struct FreeStage {
    void operator()(uint8_t* p) const;
  };
  int fd_;
  bool direct_;
  std::unique_ptr<uint8_t, FreeStage> stage_;  // allocated at the first write
  size_t staged_ = 0;      // bytes in the staging buffer, not yet in the file
  int64_t written_ = 0;    // bytes in the file
  int64_t writeback_ = 0;  // buffered: where the last writeback hint ended
};

}  // namespace skade
