// Metadata-only changes of a table: schema and partition evolution, refs, rollback.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "skade/io/file_io.h"

#include "skade/table/schema_update.h"
#include "skade/table/snapshot_producer.h"
#include "skade/table/table.h"

namespace skade {
namespace {

// Adds `spec` as the default, re-using an identical existing spec.
TableMetadata WithDefaultSpec(TableMetadata m, std::vector<PartitionField> fields) {
  for (const auto& s : m.specs) {
    bool same = s.fields().size() == fields.size();
    for (size_t i = 0; same && i < fields.size(); ++i)
      same = s.fields()[i].source_id == fields[i].source_id && s.fields()[i].name == fields[i].name &&
             s.fields()[i].transform.ToString() == fields[i].transform.ToString();
    if (same) {
      m.default_spec_id = s.spec_id();
      return m;
    }
  }
  int id = 0;
  for (const auto& s : m.specs) id = std::max(id, s.spec_id() + 1);
  for (const auto& f : fields) m.last_partition_id = std::max(m.last_partition_id, f.field_id);
  m.specs.emplace_back(id, std::move(fields));
  m.default_spec_id = id;
  return m;
}

// What a property skade honours takes (one checker per kind of value).
bool IsInteger(const std::string& v, int64_t lo, int64_t hi) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return !v.empty() && ec == std::errc() && p == v.data() + v.size() && n >= lo && n <= hi;
}

// `fold`: the value is read in any case (codec names are).
bool IsOneOf(const std::string& v, std::initializer_list<const char*> choices, std::string* said, bool fold = false) {
  std::string seen = v;
  if (fold)
    for (char& c : seen) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* c : choices) {
    *said += (said->empty() ? "" : ", ") + std::string(c);
    if (seen == c) return true;
  }
  return false;
}

}  // namespace

Status CheckTableProperties(const std::map<std::string, std::string>& properties) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<std::string> problems;
  for (const auto& [key, value] : properties) {
    std::string wants, choices;
    if (key == "format-version") {
      if (value != "2" && value != "3") wants = "2 or 3: the format versions skade writes";
    } else if (key == "write.target-file-size-bytes" || key == "write.parquet.row-group-limit" ||
               key == "commit.manifest.target-size-bytes") {
      if (!IsInteger(value, 1, kMax)) wants = "a positive whole number";
    } else if (key == "commit.retry.num-retries" || key == "write.metadata.previous-versions-max") {
      if (!IsInteger(value, 0, kMax)) wants = "a whole number, 0 or more";
    } else if (key == "write.parquet.compression-level") {
      if (!IsInteger(value, -131072, 22)) wants = "a zstd level, up to 22";
    } else if (key == "skade.write.parquet.compression-min-saving-percent") {
      if (!IsInteger(value, 0, 100)) wants = "a whole number from 0 to 100";
    } else if (key == kEqualityDeletesProperty || key == "write.metadata.delete-after-commit.enabled") {
      if (!IsOneOf(value, {"true", "false"}, &choices)) wants = choices;
    } else if (key == "write.delete.mode") {
      if (!IsOneOf(value, {"merge-on-read", "copy-on-write"}, &choices)) wants = choices;
    } else if (key == "write.parquet.compression-codec") {
      if (!IsOneOf(value, {"zstd", "snappy", "gzip", "lz4", "uncompressed", "none"}, &choices, true)) wants = choices;
    } else if (key == "write.avro.compression-codec") {
      if (!IsOneOf(value, {"deflate", "gzip", "zstd", "snappy", "uncompressed"}, &choices)) wants = choices;
    }
    if (!wants.empty()) problems.push_back("property " + key + "=" + value + ": it takes " + wants);
  }
  if (problems.empty()) return {};
  return InvalidArgument(JoinProblems(problems));
}

Result<CommitResult> Table::UpdateProperties(const std::map<std::string, std::string>& set,
                                             const std::vector<std::string>& remove) {
  SKADE_RETURN_IF_ERROR(CheckTableProperties(set));
  for (const auto& key : remove)
    if (set.contains(key)) return InvalidArgument("property " + key + " is both set and removed");
  if (std::find(remove.begin(), remove.end(), "format-version") != remove.end())
    return InvalidArgument("format-version cannot be unset: a table always has one");
  // Not a property but the metadata's version (consumed as Java does): 2 to 3 upgrades the
  // table; its files stay valid, and row ids start with the next commit.
  std::optional<int> version;
  if (auto it = set.find("format-version"); it != set.end()) version = it->second == "3" ? 3 : 2;
  return CommitMetadata("set-properties", [&](const TableMetadata& base) -> Result<TableMetadata> {
    TableMetadata next = base;
    if (version && *version < base.format_version)
      return InvalidArgument("format-version " + std::to_string(*version) + ": the table is version " +
                             std::to_string(base.format_version) + ", and a version cannot be lowered");
    if (version && *version > base.format_version) {
      next.format_version = *version;
      next.next_row_id = 0;
    }
    for (const auto& [k, v] : set)
      if (k != "format-version") next.properties[k] = v;
    for (const auto& k : remove) next.properties.erase(k);
    return next;
  });
}

Result<CommitResult> Table::CommitMetadata(const std::string& operation,
                                           const std::function<Result<TableMetadata>(const TableMetadata&)>& mutate) {
  SKADE_ASSIGN_OR_RETURN(auto produced, CommitMetadataChange(*catalog_, loaded_, operation, mutate));
  loaded_ = produced.table;
  CommitResult r;
  r.snapshot_id = produced.snapshot_id;
  r.commit_seq = produced.commit_seq;
  r.attempts = produced.attempts;
  return r;
}

Result<CommitResult> Table::UpdateSchema(const SchemaUpdate& update) {
  return CommitMetadata("schema-change", [&](const TableMetadata& base) { return update.Apply(base); });
}

Result<CommitResult> Table::AddPartitionFields(const std::string& text) {
  return CommitMetadata("partition-change", [&](const TableMetadata& base) -> Result<TableMetadata> {
    std::vector<PartitionField> fields = base.spec().fields();
    SKADE_ASSIGN_OR_RETURN(PartitionSpec added, ParsePartitionSpec(text, *base.schema(), 0, base.last_partition_id + 1));
    for (const auto& f : added.fields()) {
      for (const auto& e : fields) {
        if (e.name == f.name) return InvalidArgument("partition field '" + f.name + "' already exists");
        if (e.source_id == f.source_id && e.transform.ToString() == f.transform.ToString())
          return InvalidArgument("the spec already has " + f.transform.ToString() + " of that column ('" + e.name + "')");
      }
      fields.push_back(f);
    }
    return WithDefaultSpec(base, std::move(fields));
  });
}

Result<CommitResult> Table::RemovePartitionField(const std::string& name) {
  return CommitMetadata("partition-change", [&](const TableMetadata& base) -> Result<TableMetadata> {
    std::vector<PartitionField> fields = base.spec().fields();
    auto it = std::find_if(fields.begin(), fields.end(), [&](const PartitionField& f) { return f.name == name; });
    if (it == fields.end()) {
      std::string names;
      for (const auto& f : fields) names += (names.empty() ? "" : ", ") + f.name;
      return InvalidArgument("no partition field '" + name + "' (fields: " + (names.empty() ? "none" : names) + ")");
    }
    fields.erase(it);
    return WithDefaultSpec(base, std::move(fields));
  });
}

Result<CommitResult> Table::CreateRef(const std::string& name, const std::string& type,
                                      std::optional<int64_t> snapshot_id) {
  return CommitMetadata("create-" + type, [&](const TableMetadata& base) -> Result<TableMetadata> {
    if (name.empty()) return InvalidArgument("a " + type + " needs a name");
    if (base.refs.contains(name)) return MakeError(ErrorKind::kAlreadyExists, "ref '" + name + "' already exists");
    int64_t id;
    if (snapshot_id) {
      if (!base.SnapshotById(*snapshot_id)) return NotFound("snapshot " + std::to_string(*snapshot_id) + " does not exist");
      id = *snapshot_id;
    } else if (base.current_snapshot_id) {
      id = *base.current_snapshot_id;
    } else {
      return InvalidArgument("the table has no snapshot yet to point '" + name + "' at");
    }
    TableMetadata next = base;
    next.refs[name] = SnapshotRef{id, type, {}, {}, {}};
    return next;
  });
}

Result<CommitResult> Table::DropRef(const std::string& name, const std::string& type) {
  return CommitMetadata("drop-" + type, [&](const TableMetadata& base) -> Result<TableMetadata> {
    if (name == "main") return InvalidArgument("the main branch cannot be dropped");
    auto it = base.refs.find(name);
    if (it == base.refs.end()) return NotFound("no " + type + " named '" + name + "'");
    if (it->second.type != type) return InvalidArgument("'" + name + "' is a " + it->second.type + ", not a " + type);
    TableMetadata next = base;
    next.refs.erase(name);
    return next;
  });
}

Result<CommitResult> Table::FastForward(const std::string& branch, const std::string& to) {
  return CommitMetadata("fast-forward", [&](const TableMetadata& base) -> Result<TableMetadata> {
    auto from_it = base.refs.find(branch);
    auto to_it = base.refs.find(to);
    if (from_it == base.refs.end() || from_it->second.type != "branch") return NotFound("no branch named '" + branch + "'");
    if (to_it == base.refs.end()) return NotFound("no branch or tag named '" + to + "'");
    int64_t target = to_it->second.snapshot_id;
    if (!base.IsAncestor(from_it->second.snapshot_id, target))
      return InvalidArgument("cannot fast-forward '" + branch + "': its head is not an ancestor of '" + to + "'");
    TableMetadata next = base;
    next.refs[branch].snapshot_id = target;
    if (branch == "main") {
      next.current_snapshot_id = target;
      next.snapshot_log.push_back({std::max(NowMs(), base.last_updated_ms), target});
    }
    return next;
  });
}

Result<CommitResult> Table::Rollback(int64_t snapshot_id) {
  return CommitMetadata("rollback", [&](const TableMetadata& base) -> Result<TableMetadata> {
    if (!base.SnapshotById(snapshot_id)) return NotFound("snapshot " + std::to_string(snapshot_id) + " does not exist");
    if (!base.current_snapshot_id || !base.IsAncestor(snapshot_id, *base.current_snapshot_id))
      return InvalidArgument("snapshot " + std::to_string(snapshot_id) + " is not in the history of main");
    TableMetadata next = base;
    next.current_snapshot_id = snapshot_id;
    next.refs["main"].snapshot_id = snapshot_id;
    next.refs["main"].type = "branch";
    next.snapshot_log.push_back({std::max(NowMs(), base.last_updated_ms), snapshot_id});
    return next;
  });
}

}  // namespace skade
