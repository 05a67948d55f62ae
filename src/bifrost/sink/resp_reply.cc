#include "bifrost/sink/resp_reply.h"

#include <charconv>

namespace bifrost {
namespace {

// The integer on the line starting after the type byte at `at`, ending at `eol`.
bool LineInteger(std::string_view buffer, size_t at, size_t eol, int64_t& out) {
  auto [end, ec] = std::from_chars(buffer.data() + at + 1, buffer.data() + eol, out);
  return ec == std::errc() && end == buffer.data() + eol;
}

}  // namespace

skade::Result<bool> RespReader::Scan() {
  auto bad = [&](const std::string& why) {
    return skade::IoError("graph server sent a malformed reply: " + why);
  };
  while (scanned_ < buffer_.size()) {
    size_t eol = buffer_.find("\r\n", scanned_);
    if (eol == std::string::npos) return false;
    char type = buffer_[scanned_];
    int64_t n = 0;
    size_t next = eol + 2;
    switch (type) {
      case '+':
      case '-':
        break;
      case ':':
        if (!LineInteger(buffer_, scanned_, eol, n)) return bad("an integer that is not one");
        break;
      case '$':
        if (!LineInteger(buffer_, scanned_, eol, n) || n < -1) return bad("a bad string length");
        if (n >= 0) {
          if (buffer_.size() < next + static_cast<size_t>(n) + 2) return false;
          next += static_cast<size_t>(n);
          if (buffer_.compare(next, 2, "\r\n") != 0) return bad("a string without its end");
          next += 2;
        }
        break;
      case '*':
        if (!LineInteger(buffer_, scanned_, eol, n) || n < -1) return bad("a bad array length");
        if (n > 0) {
          if (static_cast<int>(open_.size()) >= kMaxDepth)
            return bad("arrays nested deeper than " + std::to_string(kMaxDepth) + " levels");
          open_.push_back(n);
          scanned_ = next;
          continue;
        }
        break;
      default:
        return bad("unknown type byte " + std::to_string(static_cast<unsigned char>(type)));
    }
    scanned_ = next;
    // One element done: it may complete the arrays holding it.
    while (!open_.empty() && --open_.back() == 0) open_.pop_back();
    if (open_.empty()) return true;
  }
  return false;
}

Reply RespReader::Build(size_t& at) const {
  Reply r;
  size_t eol = buffer_.find("\r\n", at);
  char type = buffer_[at];
  int64_t n = 0;
  switch (type) {
    case '+':
    case '-':
      r.kind = type == '+' ? Reply::Kind::kStatus : Reply::Kind::kError;
      r.text = buffer_.substr(at + 1, eol - at - 1);
      at = eol + 2;
      return r;
    case ':':
      LineInteger(buffer_, at, eol, r.integer);
      r.kind = Reply::Kind::kInteger;
      at = eol + 2;
      return r;
    case '$':
      LineInteger(buffer_, at, eol, n);
      at = eol + 2;
      if (n < 0) return r;  // nil
      r.kind = Reply::Kind::kString;
      r.text = buffer_.substr(at, static_cast<size_t>(n));
      at += static_cast<size_t>(n) + 2;
      return r;
    default:  // '*', checked by Scan
      LineInteger(buffer_, at, eol, n);
      at = eol + 2;
      if (n < 0) return r;  // nil array
      r.kind = Reply::Kind::kArray;
      r.elements.reserve(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) r.elements.push_back(Build(at));
      return r;
  }
}

skade::Result<std::optional<Reply>> RespReader::Next() {
  SKADE_ASSIGN_OR_RETURN(bool whole, Scan());
  if (!whole) return std::nullopt;
  size_t at = begin_;
  Reply r = Build(at);
  begin_ = scanned_ = at;
  if (begin_ == buffer_.size()) {
    buffer_.clear();
    begin_ = scanned_ = 0;
  } else if (begin_ > (1 << 20)) {
    buffer_.erase(0, begin_);
    scanned_ -= begin_;
    begin_ = 0;
  }
  return r;
}

}  // namespace bifrost
