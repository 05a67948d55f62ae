#include "skade/common/nesting.h"

#include <string>

namespace skade {

bool JsonDepthScanner::Feed(std::string_view chunk) {
  if (breached_) return false;
  for (char c : chunk) {
    if (c == '\n') ++line_;
    if (in_string_) {
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = false;
      continue;
    }
    switch (c) {
      case '"': in_string_ = true; break;
      case '[':
      case '{':
        if (++depth_ > limit_) {
          breached_ = true;
          return false;
        }
        break;
      case ']':
      case '}':
        if (depth_ > 0) --depth_;
        break;
      default: break;
    }
  }
  return true;
}

Status CheckJsonNesting(std::string_view text, std::string_view what, int limit) {
  JsonDepthScanner scanner(limit);
  if (scanner.Feed(text)) return {};
  return InvalidArgument(std::string(what) + " is nested deeper than " + std::to_string(limit) + " levels");
}

}  // namespace skade
