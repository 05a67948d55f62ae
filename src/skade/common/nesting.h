// Depth limits for every recursive parser and converter: input deeper than these
// is refused by name before any recursion could overflow the stack.
#pragma once

#include <cstdint>
#include <string_view>

#include "skade/common/result.h"

namespace skade {

/// Types (schema text, metadata JSON, Avro schemas, Arrow input): struct, list and
/// map levels, the top-level struct not counted.
inline constexpr int kMaxTypeDepth = 32;
/// JSON documents (metadata, manifests' Avro schemas, OpenLineage events, JSON-lines
/// input rows): `[` and `{` levels.
inline constexpr int kMaxJsonDepth = 128;

/// Follows JSON text chunk by chunk (strings and escapes understood) and notes the
/// first place where `[`/`{` nesting passes the limit.
class JsonDepthScanner {
 public:
  explicit JsonDepthScanner(int limit = kMaxJsonDepth) : limit_(limit) {}
  /// false once the limit was passed (then line() is where).
  bool Feed(std::string_view chunk);
  /// The 1-based line of the last byte fed (or of the breach).
  int64_t line() const { return line_; }
  int limit() const { return limit_; }

 private:
  int limit_;
  int depth_ = 0;
  int64_t line_ = 1;
  bool in_string_ = false;
  bool escaped_ = false;
  bool breached_ = false;
};

/// kInvalidArgument "<what> is nested deeper than N levels" when `text` is.
Status CheckJsonNesting(std::string_view text, std::string_view what, int limit = kMaxJsonDepth);

}  // namespace skade
