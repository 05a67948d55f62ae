#include "server/api_params.h"

#include <charconv>
#include <limits>

#include "skade/lineage/lineage_event.h"

namespace skade::server {
namespace {

std::optional<int64_t> Integer(const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string ShownValue(const std::string& value) {
  return value.size() > 120 ? value.substr(0, 120) + "..." : value;
}

Result<std::optional<int64_t>> TimeParam(const httplib::Request& req, const std::string& name) {
  if (!req.has_param(name)) return std::optional<int64_t>();
  std::string text = req.get_param_value(name);
  if (auto ms = Integer(text)) return std::optional<int64_t>(*ms);
  if (auto ms = lineage::ParseTimestamp(text)) return std::optional<int64_t>(*ms);
  return InvalidArgument(name + " must be milliseconds since the epoch or an RFC 3339 time, got '" +
                         ShownValue(text) + "'");
}

Result<int64_t> IntParam(const httplib::Request& req, const std::string& name, int64_t fallback,
                         int64_t min, int64_t max) {
  if (!req.has_param(name)) return fallback;
  std::string text = req.get_param_value(name);
  auto v = Integer(text);
  if (v && *v >= min && *v <= max) return *v;
  if (min == 0 && max == std::numeric_limits<int64_t>::max())
    return InvalidArgument(name + " must be a non-negative integer, got '" + ShownValue(text) + "'");
  return InvalidArgument(name + " must be an integer from " + std::to_string(min) + " to " +
                         std::to_string(max) + ", got '" + ShownValue(text) + "'");
}

Result<bool> BoolParam(const httplib::Request& req, const std::string& name, bool fallback) {
  if (!req.has_param(name)) return fallback;
  std::string text = req.get_param_value(name);
  if (text == "true") return true;
  if (text == "false") return false;
  return InvalidArgument(name + " must be true or false, got '" + ShownValue(text) + "'");
}

Result<std::optional<int64_t>> SnapshotParam(const httplib::Request& req, const std::string& name) {
  if (!req.has_param(name)) return std::optional<int64_t>();
  std::string text = req.get_param_value(name);
  if (auto id = Integer(text)) return std::optional<int64_t>(*id);
  return InvalidArgument(name + " must be a snapshot id (a 64-bit integer), got '" + ShownValue(text) + "'");
}

std::vector<std::string> ListParam(const httplib::Request& req, const std::string& name) {
  std::vector<std::string> out;
  std::string text = req.get_param_value(name);
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace skade::server
