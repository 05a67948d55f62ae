#include "skade/lineage/lineage_event.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <random>

#include "skade/common/nesting.h"
#include "skade/format/types.h"
#include "skade/format/value.h"
#include "skade/io/file_io.h"

namespace skade::lineage {
namespace {

using nlohmann::json;

json RefToJson(const DatasetRef& ref) {
  json j = {{"table", ref.table}};
  if (ref.snapshot_id) j["snapshot_id"] = *ref.snapshot_id;
  if (ref.system) j["system"] = {{"kind", ref.system->kind}, {"instance", ref.system->instance}};
  return j;
}

// Field readers that name the field when its type is wrong.
Result<std::string> StringField(const json& j, const char* key, bool required) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return Corrupt(std::string("lineage event: missing '") + key + "'");
    return std::string();
  }
  if (!it->is_string()) return Corrupt(std::string("lineage event: '") + key + "' must be a string");
  return it->get<std::string>();
}

Result<std::optional<int64_t>> IntField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer()) return Corrupt(std::string("lineage event: '") + key + "' must be an integer");
  return std::optional<int64_t>(it->get<int64_t>());
}

Result<DatasetRef> RefFromJson(const json& j) {
  if (!j.is_object()) return Corrupt("lineage event: a dataset must be an object");
  DatasetRef ref;
  SKADE_ASSIGN_OR_RETURN(ref.table, StringField(j, "table", true));
  SKADE_ASSIGN_OR_RETURN(ref.snapshot_id, IntField(j, "snapshot_id"));
  if (auto it = j.find("system"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return Corrupt("lineage event: 'system' must be an object");
    SystemRef system;
    SKADE_ASSIGN_OR_RETURN(system.kind, StringField(*it, "kind", true));
    SKADE_ASSIGN_OR_RETURN(system.instance, StringField(*it, "instance", false));
    ref.system = std::move(system);
  }
  return ref;
}

Result<std::vector<DatasetRef>> RefsFromJson(const json& j, const char* key) {
  std::vector<DatasetRef> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return Corrupt(std::string("lineage event: '") + key + "' must be an array");
  for (const auto& item : *it) {
    SKADE_ASSIGN_OR_RETURN(DatasetRef ref, RefFromJson(item));
    out.push_back(std::move(ref));
  }
  return out;
}

}  // namespace

std::string NewEventId() {
  // RFC 9562 version 7: 48-bit Unix milliseconds, then random bits.
  static thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t ms = static_cast<uint64_t>(NowMs());
  uint64_t hi = (ms << 16) | 0x7000 | (rng() & 0x0fff);
  uint64_t lo = (rng() & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::string ToJson(const LineageEvent& e) {
  json j = {{"event_id", e.event_id}, {"actor", e.actor}, {"operation", e.operation}, {"ts", e.ts_ms}};
  j["inputs"] = json::array();
  for (const auto& r : e.inputs) j["inputs"].push_back(RefToJson(r));
  j["outputs"] = json::array();
  for (const auto& r : e.outputs) j["outputs"].push_back(RefToJson(r));
  if (e.commit_seq) j["commit_seq"] = *e.commit_seq;
  if (e.run_id) j["run_id"] = *e.run_id;
  if (e.job) j["job"] = {{"namespace", e.job->ns}, {"name", e.job->name}};
  if (e.raw) j["raw"] = *e.raw;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<LineageEvent> LineageEventFromJson(std::string_view text) {
  if (auto st = CheckJsonNesting(text, "lineage event"); !st) return Corrupt(st.error().message);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Corrupt("lineage event: not a JSON object");
  LineageEvent e;
  SKADE_ASSIGN_OR_RETURN(e.event_id, StringField(j, "event_id", true));
  SKADE_ASSIGN_OR_RETURN(e.actor, StringField(j, "actor", false));
  SKADE_ASSIGN_OR_RETURN(e.operation, StringField(j, "operation", true));
  SKADE_ASSIGN_OR_RETURN(auto ts, IntField(j, "ts"));
  if (!ts) return Corrupt("lineage event: missing 'ts'");
  e.ts_ms = *ts;
  SKADE_ASSIGN_OR_RETURN(e.inputs, RefsFromJson(j, "inputs"));
  SKADE_ASSIGN_OR_RETURN(e.outputs, RefsFromJson(j, "outputs"));
  SKADE_ASSIGN_OR_RETURN(e.commit_seq, IntField(j, "commit_seq"));
  SKADE_ASSIGN_OR_RETURN(std::string run_id, StringField(j, "run_id", false));
  if (!run_id.empty()) e.run_id = run_id;
  if (auto it = j.find("job"); it != j.end() && it->is_object()) {
    JobRef job;
    SKADE_ASSIGN_OR_RETURN(job.ns, StringField(*it, "namespace", true));
    SKADE_ASSIGN_OR_RETURN(job.name, StringField(*it, "name", true));
    e.job = std::move(job);
  }
  SKADE_ASSIGN_OR_RETURN(std::string raw, StringField(j, "raw", false));
  if (!raw.empty()) e.raw = raw;
  return e;
}

Result<DatasetRef> ParseDatasetRef(std::string_view text) {
  DatasetRef ref;
  std::string_view name = text;
  if (auto at = text.rfind('@'); at != std::string_view::npos) {
    std::string_view digits = text.substr(at + 1);
    int64_t id = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size())
      return InvalidArgument("dataset '" + std::string(text) + "': the part after '@' must be a snapshot id");
    ref.snapshot_id = id;
    name = text.substr(0, at);
  }
  if (auto colon = name.find(':'); colon != std::string_view::npos) {
    if (colon == 0 || colon + 1 == name.size())
      return InvalidArgument("dataset '" + std::string(text) + "' must be system:name (e.g. spark:gold.revenue)");
    ref.system = SystemRef{std::string(name.substr(0, colon)), std::string(name.substr(0, colon))};
    ref.table = std::string(name.substr(colon + 1));
    return ref;
  }
  auto dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size())
    return InvalidArgument("dataset '" + std::string(text) +
                           "' must be namespace.table or system:name (e.g. spark:gold.revenue)");
  ref.table = std::string(name);
  return ref;
}

std::string FormatTimestamp(int64_t ts_ms) {
  return FormatValue(*Type::Primitive(TypeId::kTimestampTz), Value{ts_ms * 1000});
}

Result<int64_t> ParseTimestamp(std::string_view text) {
  auto v = ParseValue(*Type::Primitive(TypeId::kTimestampTz), text);
  if (!v) return InvalidArgument("invalid timestamp '" + std::string(text) + "' (use RFC 3339, e.g. 2026-11-29T10:00:00Z)");
  return std::get<int64_t>(*v) / 1000;
}

}  // namespace skade::lineage
