#include "skade/format/table_metadata.h"

#include <algorithm>

#include <charconv>

#include "skade/format/value.h"

namespace skade {

const SchemaPtr& TableMetadata::schema() const {
  for (const auto& s : schemas)
    if (s->schema_id() == current_schema_id) return s;
  return schemas.front();
}

SchemaPtr TableMetadata::SchemaById(int id) const {
  for (const auto& s : schemas)
    if (s->schema_id() == id) return s;
  return nullptr;
}

const PartitionSpec& TableMetadata::spec() const {
  for (const auto& s : specs)
    if (s.spec_id() == default_spec_id) return s;
  return specs.front();
}

const PartitionSpec* TableMetadata::SpecById(int id) const {
  for (const auto& s : specs)
    if (s.spec_id() == id) return &s;
  return nullptr;
}

const Snapshot* TableMetadata::SnapshotById(int64_t id) const {
  for (const auto& s : snapshots)
    if (s.snapshot_id == id) return &s;
  return nullptr;
}

const Snapshot* TableMetadata::CurrentSnapshot() const {
  return current_snapshot_id ? SnapshotById(*current_snapshot_id) : nullptr;
}

std::vector<const Snapshot*> TableMetadata::Ancestors(int64_t head) const {
  std::vector<const Snapshot*> out;
  for (const Snapshot* s = SnapshotById(head); s;
       s = s->parent_snapshot_id ? SnapshotById(*s->parent_snapshot_id) : nullptr)
    out.push_back(s);
  return out;
}

bool TableMetadata::IsAncestor(int64_t ancestor, int64_t head) const {
  for (const Snapshot* s : Ancestors(head))
    if (s->snapshot_id == ancestor) return true;
  return false;
}

Result<const Snapshot*> TableMetadata::SnapshotAsOf(int64_t timestamp_ms) const {
  const Snapshot* found = nullptr;
  for (const auto& e : snapshot_log)
    if (e.timestamp_ms <= timestamp_ms)
      if (const Snapshot* s = SnapshotById(e.snapshot_id)) found = s;
  if (!found)
    return NotFound("no snapshot was current at " +
                    FormatValue(*Type::Primitive(TypeId::kTimestampTz), Value{timestamp_ms * 1000}) +
                    " (the table's first snapshot is later)");
  return found;
}

Result<const Snapshot*> TableMetadata::SnapshotForRef(std::string_view ref) const {
  auto it = refs.find(std::string(ref));
  if (it == refs.end()) {
    std::string names;
    for (const auto& [n, r] : refs) names += (names.empty() ? "" : ", ") + n;
    return NotFound("no branch or tag named '" + std::string(ref) + "' (refs: " +
                    (names.empty() ? "none" : names) + ")");
  }
  const Snapshot* s = SnapshotById(it->second.snapshot_id);
  if (!s) return NotFound("ref '" + std::string(ref) + "' points to a missing snapshot");
  return s;
}

const Schema& TableMetadata::SchemaForSpec(const PartitionSpec& spec, const Schema& preferred) const {
  auto binds = [&](const Schema& s) {
    return std::all_of(spec.fields().begin(), spec.fields().end(),
                       [&](const PartitionField& f) { return s.FindField(f.source_id) != nullptr; });
  };
  if (binds(preferred)) return preferred;
  for (auto it = schemas.rbegin(); it != schemas.rend(); ++it)
    if (binds(**it)) return **it;
  return preferred;
}

std::optional<std::pair<int, PartitionField>> TableMetadata::FieldWithDroppedSource() const {
  const Schema& current = *schema();
  for (const auto& spec : specs)
    for (const auto& f : spec.fields())
      if (!current.FindField(f.source_id)) return std::pair{spec.spec_id(), f};
  return std::nullopt;
}

Result<const Snapshot*> TableMetadata::Choose(const SnapshotChoice& c) const {
  if ((c.id ? 1 : 0) + (c.as_of_ms ? 1 : 0) + (c.ref ? 1 : 0) > 1)
    return InvalidArgument("choose one of snapshot id, as-of time and ref");
  if (c.id) {
    const Snapshot* s = SnapshotById(*c.id);
    if (!s) return NotFound("snapshot " + std::to_string(*c.id) + " does not exist");
    return s;
  }
  if (c.as_of_ms) return SnapshotAsOf(*c.as_of_ms);
  if (c.ref) return SnapshotForRef(*c.ref);
  return CurrentSnapshot();
}

std::string TableMetadata::Property(std::string_view key, std::string_view fallback) const {
  auto it = properties.find(std::string(key));
  return it == properties.end() ? std::string(fallback) : it->second;
}

int64_t TableMetadata::PropertyInt(std::string_view key, int64_t fallback) const {
  auto it = properties.find(std::string(key));
  if (it == properties.end()) return fallback;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  return (ec == std::errc() && p == it->second.data() + it->second.size()) ? v : fallback;
}

}  // namespace skade
