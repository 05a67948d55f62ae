// CSV fields as RFC 4180 writes them, shared by the CLI's and the server's CSV.
#pragma once

#include <string>
#include <string_view>

namespace skade {

/// `text` as one CSV field: quoted (quotes doubled) when it holds a comma, quote or
/// line break, else as it is.
inline std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace skade
