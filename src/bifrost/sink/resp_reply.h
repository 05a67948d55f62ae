// RESP2 replies as plain values, and an incremental reader for them. Ours rather than
// hiredis's, whose reader (0.14, as Debian ships it) refuses replies nested deeper than
// 7 levels: FalkorDB's compact results for paths and for nodes with list properties
// nest 9 and more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"

namespace bifrost {

/// A RESP2 reply.
struct Reply {
  enum class Kind { kNil, kString, kInteger, kArray, kStatus, kError } kind = Kind::kNil;
  std::string text;
  int64_t integer = 0;
  std::vector<Reply> elements;
};

/// Reads replies from bytes as they arrive, in linear time however they are split.
/// Not thread-safe.
class RespReader {
 public:
  /// How deep arrays may nest; deeper is a protocol error (it bounds the recursion
  /// of building the reply and of everything that walks it).
  static constexpr int kMaxDepth = 256;

  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  /// The next whole reply, or nullopt until more bytes are fed.
  /// Errors: kIoError for bytes that are not RESP2 (the stream cannot be resumed).
  skade::Result<std::optional<Reply>> Next();

 private:
  /// Advances scanned_ over whole elements; true once a top-level reply is complete.
  skade::Result<bool> Scan();
  /// The reply starting at `at` (whole, as Scan found), moving `at` past it.
  Reply Build(size_t& at) const;

  std::string buffer_;
  size_t begin_ = 0;    // where the reply being read starts
  size_t scanned_ = 0;  // how far its elements have been checked
  std::vector<int64_t> open_;  // elements still missing in each array being read
};

}  // namespace bifrost
