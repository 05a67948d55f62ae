// JSON serde of table metadata, schemas and partition specs (Iceberg spec appendix C).
#include <nlohmann/json.hpp>

#include <algorithm>

#include "skade/common/json_text.h"
#include "skade/common/nesting.h"
#include "skade/format/table_metadata.h"

namespace skade {
namespace {

using json = nlohmann::ordered_json;
using ordered = nlohmann::ordered_json;

// Thrown only inside this file and caught at the parse entry points.
struct FieldError {
  std::string message;
};

[[noreturn]] void Fail(std::string m) { throw FieldError{std::move(m)}; }

const json& Req(const json& j, const char* key, const char* where) {
  if (!j.is_object()) Fail(std::string(where) + " is not a JSON object");
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) Fail(std::string(where) + " lacks required field '" + key + "'");
  return *it;
}

int64_t ReqInt(const json& j, const char* key, const char* where) {
  const json& v = Req(j, key, where);
  if (!v.is_number_integer())
    Fail(std::string(where) + " field '" + key + "' is not an integer");
  return v.get<int64_t>();
}

std::string ReqStr(const json& j, const char* key, const char* where) {
  const json& v = Req(j, key, where);
  if (!v.is_string()) Fail(std::string(where) + " field '" + key + "' is not a string");
  return v.get<std::string>();
}

std::optional<int64_t> OptInt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) Fail(std::string("field '") + key + "' is not an integer");
  return it->get<int64_t>();
}

TypePtr TypeFromJson(const json& j);

NestedField FieldFromJson(const json& j) {
  NestedField f;
  f.id = static_cast<int>(ReqInt(j, "id", "schema field"));
  f.name = ReqStr(j, "name", "schema field");
  const json& req = Req(j, "required", "schema field");
  if (!req.is_boolean()) Fail("schema field '" + f.name + "': 'required' is not a boolean");
  f.required = req.get<bool>();
  f.type = TypeFromJson(Req(j, "type", "schema field"));
  if (auto d = j.find("doc"); d != j.end() && d->is_string()) f.doc = d->get<std::string>();
  if (auto d = j.find("initial-default"); d != j.end() && !d->is_null()) f.initial_default = d->dump();
  if (auto d = j.find("write-default"); d != j.end() && !d->is_null()) f.write_default = d->dump();
  return f;
}

TypePtr TypeFromJson(const json& j) {
  if (j.is_string()) {
    auto t = ParsePrimitiveType(j.get<std::string>());
    if (!t) Fail(t.error().message);
    return *t;
  }
  if (!j.is_object()) Fail("a type is neither a string nor an object");
  std::string kind = ReqStr(j, "type", "type");
  if (kind == "struct") {
    std::vector<NestedField> fields;
    const json& fs = Req(j, "fields", "struct type");
    if (!fs.is_array()) Fail("struct 'fields' is not an array");
    for (const auto& f : fs) fields.push_back(FieldFromJson(f));
    return Type::Struct(std::move(fields));
  }
  if (kind == "list") {
    NestedField e;
    e.id = static_cast<int>(ReqInt(j, "element-id", "list type"));
    e.type = TypeFromJson(Req(j, "element", "list type"));
    e.required = Req(j, "element-required", "list type").get<bool>();
    return Type::List(std::move(e));
  }
  if (kind == "map") {
    NestedField k, v;
    k.id = static_cast<int>(ReqInt(j, "key-id", "map type"));
    k.type = TypeFromJson(Req(j, "key", "map type"));
    v.id = static_cast<int>(ReqInt(j, "value-id", "map type"));
    v.type = TypeFromJson(Req(j, "value", "map type"));
    v.required = Req(j, "value-required", "map type").get<bool>();
    return Type::Map(std::move(k), std::move(v));
  }
  Fail("unknown nested type '" + kind + "'");
}

ordered TypeToJson(const Type& t);

ordered FieldToJson(const NestedField& f) {
  ordered o;
  o["id"] = f.id;
  o["name"] = f.name;
  o["required"] = f.required;
  o["type"] = TypeToJson(*f.type);
  if (!f.doc.empty()) o["doc"] = f.doc;
  if (!f.initial_default.empty()) o["initial-default"] = ordered::parse(f.initial_default);
  if (!f.write_default.empty()) o["write-default"] = ordered::parse(f.write_default);
  return o;
}

ordered TypeToJson(const Type& t) {
  switch (t.id) {
    case TypeId::kStruct: {
      ordered o;
      o["type"] = "struct";
      o["fields"] = ordered::array();
      for (const auto& f : t.fields) o["fields"].push_back(FieldToJson(f));
      return o;
    }
    case TypeId::kList: {
      ordered o;
      o["type"] = "list";
      o["element-id"] = t.element().id;
      o["element"] = TypeToJson(*t.element().type);
      o["element-required"] = t.element().required;
      return o;
    }
    case TypeId::kMap: {
      ordered o;
      o["type"] = "map";
      o["key-id"] = t.key().id;
      o["key"] = TypeToJson(*t.key().type);
      o["value-id"] = t.value().id;
      o["value"] = TypeToJson(*t.value().type);
      o["value-required"] = t.value().required;
      return o;
    }
    default:
      return t.ToString();
  }
}

Schema SchemaFromJson(const json& j) {
  if (!j.is_object()) Fail("schema is not an object");
  int id = static_cast<int>(OptInt(j, "schema-id").value_or(0));
  std::vector<NestedField> fields;
  const json& fs = Req(j, "fields", "schema");
  if (!fs.is_array()) Fail("schema 'fields' is not an array");
  for (const auto& f : fs) fields.push_back(FieldFromJson(f));
  std::vector<int> ids;
  if (auto it = j.find("identifier-field-ids"); it != j.end() && it->is_array())
    for (const auto& v : *it) ids.push_back(v.get<int>());
  return Schema(id, std::move(fields), std::move(ids));
}

ordered SchemaToOrdered(const Schema& s) {
  ordered o;
  o["type"] = "struct";
  o["schema-id"] = s.schema_id();
  if (!s.identifier_field_ids().empty()) o["identifier-field-ids"] = s.identifier_field_ids();
  o["fields"] = ordered::array();
  for (const auto& f : s.fields()) o["fields"].push_back(FieldToJson(f));
  return o;
}

std::vector<PartitionField> PartitionFieldsFromJson(const json& fs, int* next_id) {
  if (!fs.is_array()) Fail("partition spec 'fields' is not an array");
  std::vector<PartitionField> out;
  for (const auto& f : fs) {
    PartitionField pf;
    pf.source_id = static_cast<int>(ReqInt(f, "source-id", "partition field"));
    // v1 specs may omit field-id: ids were assigned from 1000 in order.
    pf.field_id = static_cast<int>(OptInt(f, "field-id").value_or((*next_id)));
    *next_id = std::max(*next_id, pf.field_id) + 1;
    pf.name = ReqStr(f, "name", "partition field");
    auto t = Transform::Parse(ReqStr(f, "transform", "partition field"));
    if (!t) Fail(t.error().message);
    pf.transform = *t;
    out.push_back(std::move(pf));
  }
  return out;
}

ordered PartitionFieldsOrdered(const PartitionSpec& spec) {
  ordered a = ordered::array();
  for (const auto& f : spec.fields()) {
    ordered o;
    o["name"] = f.name;
    o["transform"] = f.transform.ToString();
    o["source-id"] = f.source_id;
    o["field-id"] = f.field_id;
    a.push_back(o);
  }
  return a;
}

Snapshot SnapshotFromJson(const json& j) {
  Snapshot s;
  s.snapshot_id = ReqInt(j, "snapshot-id", "snapshot");
  s.parent_snapshot_id = OptInt(j, "parent-snapshot-id");
  s.sequence_number = OptInt(j, "sequence-number").value_or(0);
  s.timestamp_ms = ReqInt(j, "timestamp-ms", "snapshot");
  if (j.contains("manifest-list")) {
    s.manifest_list = ReqStr(j, "manifest-list", "snapshot");
  } else {
    Fail("snapshot " + std::to_string(s.snapshot_id) +
         " has no manifest-list (v1 inline manifests are not supported)");
  }
  if (auto it = j.find("summary"); it != j.end() && it->is_object())
    for (auto& [k, v] : it->items()) s.summary[k] = v.is_string() ? v.get<std::string>() : v.dump();
  if (auto id = OptInt(j, "schema-id")) s.schema_id = static_cast<int>(*id);
  s.first_row_id = OptInt(j, "first-row-id");
  s.added_rows = OptInt(j, "added-rows");
  if (j.contains("key-id") && !j["key-id"].is_null())
    Fail("snapshot " + std::to_string(s.snapshot_id) + " has an encrypted manifest list (key-id): skade does not read "
         "encrypted tables");
  return s;
}

TableMetadata MetadataFromJson(const json& j) {
  if (!j.is_object()) Fail("metadata is not a JSON object");
  TableMetadata m;
  m.format_version = static_cast<int>(ReqInt(j, "format-version", "metadata"));
  if (m.format_version < 1 || m.format_version > 3)
    Fail("unsupported format-version " + std::to_string(m.format_version) + " (skade reads 1 to 3)");
  if (auto it = j.find("encryption-keys"); it != j.end() && it->is_array() && !it->empty())
    Fail("the table is encrypted (encryption-keys): skade does not read encrypted tables");
  if (m.format_version >= 3) m.next_row_id = ReqInt(j, "next-row-id", "metadata");
  m.table_uuid = j.contains("table-uuid") ? ReqStr(j, "table-uuid", "metadata") : "";
  m.location = ReqStr(j, "location", "metadata");
  m.last_sequence_number = OptInt(j, "last-sequence-number").value_or(0);
  m.last_updated_ms = ReqInt(j, "last-updated-ms", "metadata");
  m.last_column_id = static_cast<int>(ReqInt(j, "last-column-id", "metadata"));
  if (auto it = j.find("schemas"); it != j.end() && it->is_array()) {
    for (const auto& s : *it) m.schemas.push_back(std::make_shared<Schema>(SchemaFromJson(s)));
    m.current_schema_id = static_cast<int>(ReqInt(j, "current-schema-id", "metadata"));
  } else {
    m.schemas.push_back(std::make_shared<Schema>(SchemaFromJson(Req(j, "schema", "metadata"))));
    m.current_schema_id = m.schemas[0]->schema_id();
  }
  if (!m.SchemaById(m.current_schema_id))
    Fail("current-schema-id " + std::to_string(m.current_schema_id) + " names no schema");
  int next_pid = 1000;
  if (auto it = j.find("partition-specs"); it != j.end() && it->is_array()) {
    for (const auto& s : *it) {
      int id = static_cast<int>(ReqInt(s, "spec-id", "partition spec"));
      m.specs.emplace_back(id, PartitionFieldsFromJson(Req(s, "fields", "partition spec"), &next_pid));
    }
    m.default_spec_id = static_cast<int>(ReqInt(j, "default-spec-id", "metadata"));
  } else {
    m.specs.emplace_back(0, PartitionFieldsFromJson(Req(j, "partition-spec", "metadata"), &next_pid));
    m.default_spec_id = 0;
  }
  if (!m.SpecById(m.default_spec_id))
    Fail("default-spec-id " + std::to_string(m.default_spec_id) + " names no partition spec");
  m.last_partition_id = static_cast<int>(OptInt(j, "last-partition-id").value_or(next_pid - 1));
  m.default_sort_order_id = static_cast<int>(OptInt(j, "default-sort-order-id").value_or(0));
  if (auto it = j.find("sort-orders"); it != j.end() && it->is_array())
    m.sort_orders_json = it->dump();
  if (auto it = j.find("properties"); it != j.end() && it->is_object())
    for (auto& [k, v] : it->items()) m.properties[k] = v.is_string() ? v.get<std::string>() : v.dump();
  m.current_snapshot_id = OptInt(j, "current-snapshot-id");
  if (m.current_snapshot_id && *m.current_snapshot_id == -1) m.current_snapshot_id.reset();
  if (auto it = j.find("snapshots"); it != j.end() && it->is_array())
    for (const auto& s : *it) m.snapshots.push_back(SnapshotFromJson(s));
  if (auto it = j.find("refs"); it != j.end() && it->is_object()) {
    for (auto& [name, r] : it->items()) {
      SnapshotRef ref;
      ref.snapshot_id = ReqInt(r, "snapshot-id", "ref");
      ref.type = ReqStr(r, "type", "ref");
      if (auto v = OptInt(r, "min-snapshots-to-keep")) ref.min_snapshots_to_keep = static_cast<int>(*v);
      ref.max_snapshot_age_ms = OptInt(r, "max-snapshot-age-ms");
      ref.max_ref_age_ms = OptInt(r, "max-ref-age-ms");
      m.refs[name] = ref;
    }
  }
  if (m.current_snapshot_id && !m.refs.contains("main"))
    m.refs["main"] = SnapshotRef{*m.current_snapshot_id, "branch", {}, {}, {}};
  if (m.current_snapshot_id && !m.SnapshotById(*m.current_snapshot_id))
    Fail("current-snapshot-id " + std::to_string(*m.current_snapshot_id) + " names no snapshot");
  if (auto it = j.find("snapshot-log"); it != j.end() && it->is_array())
    for (const auto& e : *it)
      m.snapshot_log.push_back({ReqInt(e, "timestamp-ms", "snapshot-log entry"),
                                ReqInt(e, "snapshot-id", "snapshot-log entry")});
  if (auto it = j.find("metadata-log"); it != j.end() && it->is_array())
    for (const auto& e : *it)
      m.metadata_log.push_back({ReqInt(e, "timestamp-ms", "metadata-log entry"),
                                ReqStr(e, "metadata-file", "metadata-log entry")});
  if (auto it = j.find("statistics"); it != j.end() && it->is_array()) m.statistics_json = it->dump();
  if (auto it = j.find("partition-statistics"); it != j.end() && it->is_array())
    m.partition_statistics_json = it->dump();
  m.format_version = std::max(m.format_version, 2);  // a v1 table read here is written back as v2
  return m;
}

}  // namespace

Result<TableMetadata> ParseTableMetadata(std::string_view text) {
  if (auto deep = CheckJsonNesting(text, "table metadata JSON"); !deep) return Corrupt(deep.error().message);
  try {
    json j = json::parse(text);
    TableMetadata m = MetadataFromJson(j);
    for (const auto& schema : m.schemas)
      if (auto st = CheckSchemaDepth(*schema); !st)
        return Corrupt("invalid table metadata: schema " + std::to_string(schema->schema_id()) + ": " +
                       st.error().message);
    return m;
  } catch (const FieldError& e) {
    return Corrupt("invalid table metadata: " + e.message);
  } catch (const std::exception& e) {
    return Corrupt(std::string("invalid table metadata JSON: ") + e.what());
  }
}

namespace {

// `s` as a JSON string, escaped as nlohmann's dump() escapes it; text that is not ASCII
// goes through nlohmann, which also refuses what is not UTF-8.
void AppendText(std::string& out, std::string_view s) {
  if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
    out += ordered(std::string(s)).dump();
  else
    AppendJsonString(s, &out);
}

void AppendMember(std::string& out, std::string_view key, int64_t value) {
  AppendText(out, key);
  out += ':';
  out += std::to_string(value);
}

// A JSON array of one object per item, `members` writing each object's members.
template <typename T, typename Members>
std::string ObjectArray(const std::vector<T>& items, Members&& members) {
  std::string out = "[";
  for (const auto& item : items) {
    if (out.size() > 1) out += ',';
    out += '{';
    members(out, item);
    out += '}';
  }
  return out + ']';
}

// The snapshots and the snapshot log grow with every commit, and the rest of the
// metadata does not: they are written straight into the text. Built as nlohmann objects
// and dumped, they were a quarter of an append to a table of 2000 snapshots.
std::string SnapshotsJson(const TableMetadata& m) {
  return ObjectArray(m.snapshots, [](std::string& out, const Snapshot& s) {
    AppendMember(out, "sequence-number", s.sequence_number);
    out += ',';
    AppendMember(out, "snapshot-id", s.snapshot_id);
    if (s.parent_snapshot_id) {
      out += ',';
      AppendMember(out, "parent-snapshot-id", *s.parent_snapshot_id);
    }
    out += ',';
    AppendMember(out, "timestamp-ms", s.timestamp_ms);
    out += ",\"summary\":{";
    bool first = true;
    auto member = [&](const std::string& k, const std::string& v) {
      if (!first) out += ',';
      first = false;
      AppendText(out, k);
      out += ':';
      AppendText(out, v);
    };
    if (auto it = s.summary.find("operation"); it != s.summary.end()) member(it->first, it->second);
    for (const auto& [k, v] : s.summary)
      if (k != "operation") member(k, v);
    out += "},\"manifest-list\":";
    AppendText(out, s.manifest_list);
    if (s.schema_id) {
      out += ',';
      AppendMember(out, "schema-id", *s.schema_id);
    }
    for (const auto& [key, value] : {std::pair{"first-row-id", s.first_row_id}, {"added-rows", s.added_rows}})
      if (value) {
        out += ',';
        AppendMember(out, key, *value);
      }
  });
}

std::string SnapshotLogJson(const TableMetadata& m) {
  return ObjectArray(m.snapshot_log, [](std::string& out, const SnapshotLogEntry& e) {
    AppendMember(out, "timestamp-ms", e.timestamp_ms);
    out += ',';
    AppendMember(out, "snapshot-id", e.snapshot_id);
  });
}

}  // namespace

std::string TableMetadataToJson(const TableMetadata& m) {
  ordered o;
  o["format-version"] = m.format_version;
  o["table-uuid"] = m.table_uuid;
  o["location"] = m.location;
  o["last-sequence-number"] = m.last_sequence_number;
  o["last-updated-ms"] = m.last_updated_ms;
  o["last-column-id"] = m.last_column_id;
  o["current-schema-id"] = m.current_schema_id;
  o["schemas"] = ordered::array();
  for (const auto& s : m.schemas) o["schemas"].push_back(SchemaToOrdered(*s));
  o["default-spec-id"] = m.default_spec_id;
  o["partition-specs"] = ordered::array();
  for (const auto& s : m.specs) {
    ordered spec;
    spec["spec-id"] = s.spec_id();
    spec["fields"] = PartitionFieldsOrdered(s);
    o["partition-specs"].push_back(spec);
  }
  o["last-partition-id"] = m.last_partition_id;
  o["default-sort-order-id"] = m.default_sort_order_id;
  o["sort-orders"] = ordered::parse(m.sort_orders_json);
  o["properties"] = ordered::object();
  for (const auto& [k, v] : m.properties) o["properties"][k] = v;
  // Java writes -1 for no snapshot up to v2, null from v3.
  if (m.current_snapshot_id) o["current-snapshot-id"] = *m.current_snapshot_id;
  else if (m.format_version >= 3) o["current-snapshot-id"] = nullptr;
  else o["current-snapshot-id"] = -1;
  if (m.format_version >= 3) o["next-row-id"] = m.next_row_id.value_or(0);
  o["refs"] = ordered::object();
  for (const auto& [name, r] : m.refs) {
    ordered ref;
    ref["snapshot-id"] = r.snapshot_id;
    ref["type"] = r.type;
    if (r.min_snapshots_to_keep) ref["min-snapshots-to-keep"] = *r.min_snapshots_to_keep;
    if (r.max_snapshot_age_ms) ref["max-snapshot-age-ms"] = *r.max_snapshot_age_ms;
    if (r.max_ref_age_ms) ref["max-ref-age-ms"] = *r.max_ref_age_ms;
    o["refs"][name] = ref;
  }
  // The members from here on are written in order into the text, the two that grow with
  // every commit straight from the metadata.
  std::string out = "{";
  auto member = [&](std::string_view key, const std::string& value) {
    if (out.size() > 1) out += ',';
    AppendText(out, key);
    out += ':';
    out += value;
  };
  for (const auto& [key, value] : o.items()) member(key, value.dump());
  member("snapshots", SnapshotsJson(m));
  member("statistics", m.statistics_json);  // compact JSON as parsed: kept verbatim, not parsed again
  member("partition-statistics", m.partition_statistics_json);
  member("snapshot-log", SnapshotLogJson(m));
  ordered metadata_log = ordered::array();
  for (const auto& e : m.metadata_log)
    metadata_log.push_back({{"timestamp-ms", e.timestamp_ms}, {"metadata-file", e.metadata_file}});
  member("metadata-log", metadata_log.dump());
  return out + '}';
}

std::string TableMetadata::SortOrderText() const {
  json orders = json::parse(sort_orders_json, nullptr, /*allow_exceptions=*/false);
  if (!orders.is_array()) return "";
  for (const auto& order : orders) {
    if (!order.is_object() || order.value("order-id", int64_t{-1}) != default_sort_order_id) continue;
    std::string out;
    for (const auto& f : order.value("fields", json::array())) {
      if (!f.is_object()) continue;
      int64_t source = f.value("source-id", int64_t{-1});
      std::string column;
      for (auto it = schemas.rbegin(); it != schemas.rend() && column.empty(); ++it)
        column = (*it)->PathOf(static_cast<int>(source));
      if (column.empty()) column = "column " + std::to_string(source);
      std::string transform = f.value("transform", "identity");
      if (!out.empty()) out += ", ";
      out += (transform == "identity" ? column : transform + "(" + column + ")") + " " + f.value("direction", "asc") +
             " " + f.value("null-order", "nulls-first");
    }
    return out;
  }
  return "";
}

std::string SchemaToJson(const Schema& schema) { return SchemaToOrdered(schema).dump(); }

Result<Schema> ParseSchemaJson(std::string_view text) {
  if (auto deep = CheckJsonNesting(text, "schema JSON"); !deep) return Corrupt(deep.error().message);
  try {
    Schema schema = SchemaFromJson(json::parse(text));
    if (auto deep = CheckSchemaDepth(schema); !deep) return Corrupt("invalid schema: " + deep.error().message);
    return schema;
  } catch (const FieldError& e) {
    return Corrupt("invalid schema: " + e.message);
  } catch (const std::exception& e) {
    return Corrupt(std::string("invalid schema JSON: ") + e.what());
  }
}

std::string PartitionFieldsToJson(const PartitionSpec& spec) {
  return PartitionFieldsOrdered(spec).dump();
}

std::string PartitionSpecToJson(const PartitionSpec& spec) {
  ordered o;
  o["spec-id"] = spec.spec_id();
  o["fields"] = PartitionFieldsOrdered(spec);
  return o.dump();
}

}  // namespace skade
