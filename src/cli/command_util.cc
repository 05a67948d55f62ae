// Helpers shared by the command groups: lists, times, integers, outputs.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "commands.h"
#include "skade/format/value.h"
#include "skade/io/file_io.h"
#include "skade/table/table.h"

namespace skade::cli {

Result<std::pair<std::string, std::string>> ParseProperty(const std::string& text, const std::string& what) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return InvalidArgument(what + " takes KEY=VALUE, not '" + text + "'");
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    out.push_back(item);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

Result<int64_t> ParseTimestampMs(const std::string& text) {
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (!text.empty() && text[0] != '-' && ec == std::errc() && end == text.data() + text.size()) return ms;
  if (ec == std::errc::result_out_of_range)
    return InvalidArgument("timestamp '" + text + "' is out of range (epoch milliseconds fit in 64 bits)");
  auto v = ParseValue(*Type::Primitive(TypeId::kTimestampTz), text);
  if (!v) return InvalidArgument("invalid timestamp '" + text + "' (use ISO 8601 or epoch milliseconds)");
  return std::get<int64_t>(*v) / 1000;
}

Result<std::unique_ptr<Table>> LoadTable(Context& ctx, const std::string& name) {
  SKADE_ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(name));
  return Table::Load(*ctx.catalog, ident);
}

void AddSnapshotOptions(CLI::App* sub, SnapshotOptions& o) {
  auto* id = AddInteger(sub, "--snapshot", o.id, 0, "snapshot id");
  auto* as_of = sub->add_option("--as-of", o.as_of, "timestamp (ISO 8601 or epoch ms)");
  auto* ref = sub->add_option("--ref", o.ref, "branch or tag");
  id->excludes(as_of)->excludes(ref);
  as_of->excludes(ref);
}

Result<SnapshotChoice> ChosenSnapshot(const SnapshotOptions& o) {
  SnapshotChoice c;
  if (o.id >= 0) c.id = o.id;
  if (!o.as_of.empty()) {
    SKADE_ASSIGN_OR_RETURN(c.as_of_ms, ParseTimestampMs(o.as_of));
  }
  if (!o.ref.empty()) c.ref = o.ref;
  return c;
}

CLI::Option* AddInteger(CLI::App* sub, const std::string& name, int64_t& target, int64_t min,
                        const std::string& help) {
  std::string flag = name.substr(0, name.find(','));
  return sub->add_option_function<std::string>(
      name,
      [&target, flag, min](const std::string& text) {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        std::string range = min == 0 ? "a whole number >= 0" : min == 1 ? "a whole number >= 1"
                                                                        : "a whole number >= " + std::to_string(min);
        if (ec == std::errc::result_out_of_range)
          throw CLI::ValidationError(flag + " " + text + " is out of range: it must be " + range +
                                     " that fits in 64 bits");
        if (ec != std::errc() || end != text.data() + text.size())
          throw CLI::ValidationError(flag + " must be " + range + ", got '" + text + "'");
        if (v < min) throw CLI::ValidationError(flag + " must be " + range + ", got " + text);
        target = v;
      },
      help);
}

Status CheckOutputPath(const Context& ctx, const std::string& path) {
  if (IsInside(path, ctx.catalog->warehouse()))
    return InvalidArgument("--output " + path + " lies inside the warehouse " + ctx.catalog->warehouse() +
                           "; write it elsewhere (files there belong to tables)");
  return {};
}

Result<std::FILE*> OpenOutput(const Context& ctx, const std::string& path) {
  SKADE_RETURN_IF_ERROR(CheckOutputPath(ctx, path));
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) return IoError("cannot write " + path + ": " + std::strerror(errno));
  return out;
}

Status CheckWritten(std::FILE* out, const std::string& what) {
  if (!std::ferror(out)) return {};
  int e = errno;
  return IoError("writing " + what + " failed: " + std::strerror(e ? e : EIO));
}

Status CloseOutput(std::FILE* out, const std::string& path) {
  bool failed = std::ferror(out) != 0;
  int e = errno;
  if (std::fclose(out) != 0 && !failed) {
    failed = true;
    e = errno;
  }
  if (failed) return IoError("writing " + path + " failed: " + std::strerror(e ? e : EIO));
  return {};
}

}  // namespace skade::cli
