// CSV fields as RFC 4180 writes them, shared by the CLI's and the server's CSV.
#pragma once

#include <string>
#include <string_view>

namespace skade {

/// Appends `text` as one CSV field: quoted (quotes doubled) when it holds a comma, quote
/// or line break, else as it is.
inline void AppendCsvField(std::string_view text, std::string* out) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) {
    out->append(text);
    return;
  }
  *out += '"';
  for (char c : text) {
    if (c == '"') *out += '"';
    *out += c;
  }
  *out += '"';
}

inline std::string CsvField(std::string_view text) {
  std::string out;
  AppendCsvField(text, &out);
  return out;
}

}  // namespace skade
