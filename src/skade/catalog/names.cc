#include "skade/catalog/names.h"

#include <string>

namespace skade {
namespace {

// The length of the UTF-8 sequence starting at `text[i]`, or 0 when invalid. Rejects
// overlong forms, surrogates and code points above U+10FFFF, and C1 controls.
size_t Utf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (len == 0 || c > 0xf4 || i + len > text.size()) return 0;
  uint32_t cp = c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  if (cp >= 0x80 && cp <= 0x9f) return 0;
  return len;
}

// The name as printable text: control bytes and invalid UTF-8 are shown escaped, so
// the message stays one line whatever the name holds.
std::string Shown(std::string_view text) {
  std::string out;
  std::string_view head = text.substr(0, 80);
  for (size_t i = 0; i < head.size();) {
    unsigned char c = static_cast<unsigned char>(head[i]);
    size_t len = c < 0x20 || c == 0x7f ? 0 : Utf8Length(head, i);
    if (len == 0) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else {
      out.append(head.substr(i, len));
      i += len;
    }
  }
  if (text.size() > 80) out += "...";
  return out;
}

Status ValidatePart(std::string_view part, std::string_view whole, const char* what) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid " + std::string(what) + " '" + Shown(whole) + "': " + why);
  };
  if (part.empty()) return bad("a name part is empty");
  for (size_t i = 0; i < part.size();) {
    unsigned char c = static_cast<unsigned char>(part[i]);
    if (c < 0x20 || c == 0x7f) return bad("control characters are not allowed");
    if (c == '/' || c == '\\') return bad("'/' and '\\' are not allowed");
    size_t len = Utf8Length(part, i);
    if (len == 0) return bad("not valid UTF-8 (or a control character)");
    i += len;
  }
  return {};
}

}  // namespace

Status ValidateNamespaceName(std::string_view ns) {
  if (ns.empty()) return InvalidArgument("invalid namespace '': the name is empty");
  if (ns.size() > kMaxNameBytes)
    return InvalidArgument("invalid namespace '" + Shown(ns) + "': longer than " +
                           std::to_string(kMaxNameBytes) + " bytes");
  size_t start = 0;
  while (true) {
    size_t dot = ns.find('.', start);
    std::string_view part = ns.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    SKADE_RETURN_IF_ERROR(ValidatePart(part, ns, "namespace"));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (ns == "catalog")
    return InvalidArgument("invalid namespace 'catalog': reserved (its folder would be the catalog file)");
  return {};
}

Status ValidateTableName(std::string_view name) {
  if (name.size() > kMaxNameBytes)
    return InvalidArgument("invalid table name '" + Shown(name) + "': longer than " +
                           std::to_string(kMaxNameBytes) + " bytes");
  if (name.find('.') != std::string_view::npos)
    return InvalidArgument("invalid table name '" + Shown(name) + "': '.' separates the namespace");
  return ValidatePart(name, name, "table name");
}

}  // namespace skade
