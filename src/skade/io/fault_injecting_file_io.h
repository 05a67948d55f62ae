// A FileIO that fails on purpose: the Nth publish of a new file, or every delete.
// Used by crash tests to drive the same checks as killing a process, without one.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "skade/io/file_io.h"

namespace skade {

class FaultInjectingFileIO final : public FileIO {
 public:
  explicit FaultInjectingFileIO(std::unique_ptr<FileIO> inner) : inner_(std::move(inner)) {}

  /// The `n`th WriteNewFile from now fails (1 = the next one); 0 disables.
  /// With `after_write`, the bytes land under a temporary name first and the
  /// publish step fails (a failed rename), leaving that temporary behind.
  void FailWriteAt(int n, bool after_write = false) {
    countdown_ = n;
    after_write_ = after_write;
  }
  void FailDeletes(bool on) { fail_deletes_ = on; }
  int writes() const { return writes_; }

  Result<std::string> ReadFile(std::string_view location) override { return inner_->ReadFile(location); }
  Status WriteNewFile(std::string_view location, std::string_view data) override;
  Status DeleteFile(std::string_view location) override;
  Result<bool> Exists(std::string_view location) override { return inner_->Exists(location); }
  Result<std::vector<FileInfo>> ListFiles(std::string_view dir) override { return inner_->ListFiles(dir); }
  void AllowWritesUnder(std::string_view folder) override { inner_->AllowWritesUnder(folder); }

 private:
  std::unique_ptr<FileIO> inner_;
  std::atomic<int> countdown_{0};
  std::atomic<int> writes_{0};
  bool after_write_ = false;
  bool fail_deletes_ = false;
};

}  // namespace skade
