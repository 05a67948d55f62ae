// JSON text written by hand where a DOM would cost more than the document is worth
// (JSON-lines rows, the snapshots of table metadata).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace skade {

/// Appends `s` as a JSON string: `"` and `\` escaped, control characters as nlohmann's
/// dump() writes them (\b \f \n \r \t, the others \u00xx), every other byte as it is.
inline void AppendJsonString(std::string_view s, std::string* out) {
  *out += '"';
  size_t plain = 0;  // start of the run of characters that need no escape
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        *out += buf;
      }
    }
  }
  out->append(s.data() + plain, s.size() - plain);
  *out += '"';
}

}  // namespace skade
