#include "server/table_updates.h"

#include <algorithm>
#include <map>

#include "skade/io/file_io.h"
#include "skade/table/table.h"

namespace skade::server {
namespace {

using Json = nlohmann::ordered_json;

std::unexpected<Error> Bad(const std::string& what) { return InvalidArgument(what); }
// Iceberg's clients (and its compatibility kit) read these words.
std::unexpected<Error> Conflict(const std::string& what) {
  return MakeError(ErrorKind::kCommitConflict, "Requirement failed: " + what);
}

Result<const Json*> Member(const Json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) return Bad(where + " lacks '" + key + "'");
  return &*it;
}

Result<int64_t> IntMember(const Json& j, const char* key, const std::string& where) {
  SKADE_ASSIGN_OR_RETURN(const Json* v, Member(j, key, where));
  if (!v->is_number_integer()) return Bad(where + ": '" + key + "' must be an integer");
  return v->get<int64_t>();
}

Result<std::string> StringMember(const Json& j, const char* key, const std::string& where) {
  SKADE_ASSIGN_OR_RETURN(const Json* v, Member(j, key, where));
  if (!v->is_string()) return Bad(where + ": '" + key + "' must be a string");
  return v->get<std::string>();
}

int64_t MaxOf(const Json& array, const char* key, int64_t floor) {
  int64_t m = floor;
  if (array.is_array())
    for (const auto& e : array)
      if (e.is_object() && e.contains(key) && e[key].is_number_integer())
        m = std::max(m, e[key].get<int64_t>());
  return m;
}

int64_t HighestFieldId(const Json& type) {
  int64_t m = 0;
  if (!type.is_object()) return 0;
  for (const char* key : {"id", "element-id", "key-id", "value-id"})
    if (type.contains(key) && type[key].is_number_integer())
      m = std::max(m, type[key].get<int64_t>());
  for (const char* key : {"type", "element", "key", "value"})
    if (type.contains(key)) m = std::max(m, HighestFieldId(type[key]));
  if (type.contains("fields") && type["fields"].is_array())
    for (const auto& f : type["fields"]) m = std::max(m, HighestFieldId(f));
  return m;
}

// Iceberg's fresh-id order: a struct's fields take consecutive ids first, then the
// ids inside each field's type follow; lists number their element, maps key then value.
void Renumber(Json& type, int& next, std::map<int64_t, int64_t>& ids) {
  if (!type.is_object()) return;
  std::string kind = type.value("type", "");
  if (kind == "struct" && type.contains("fields")) {
    for (auto& f : type["fields"]) {
      ids[f.value("id", int64_t{-1})] = next;
      f["id"] = next++;
    }
    for (auto& f : type["fields"]) Renumber(f["type"], next, ids);
  } else if (kind == "list") {
    type["element-id"] = next++;
    Renumber(type["element"], next, ids);
  } else if (kind == "map") {
    type["key-id"] = next++;
    type["value-id"] = next++;
    Renumber(type["key"], next, ids);
    Renumber(type["value"], next, ids);
  }
}

int64_t Remapped(const std::map<int64_t, int64_t>& ids, const Json& v) {
  auto it = ids.find(v.get<int64_t>());
  return it == ids.end() ? v.get<int64_t>() : it->second;
}

// The metadata document a commit edits; a new table starts from this.
Json Skeleton(const std::string& location) {
  return Json{{"format-version", 2},
              {"table-uuid", NewUuid()},
              {"location", location},
              {"last-sequence-number", 0},
              {"last-updated-ms", NowMs()},
              {"last-column-id", 0},
              {"current-schema-id", 0},
              {"schemas", Json::array()},
              {"default-spec-id", 0},
              {"partition-specs", Json::array()},
              {"last-partition-id", 999},
              {"default-sort-order-id", 0},
              {"sort-orders", Json::array()},
              {"properties", Json::object()},
              {"current-snapshot-id", -1},
              {"refs", Json::object()},
              {"snapshots", Json::array()},
              {"statistics", Json::array()},
              {"partition-statistics", Json::array()},
              {"snapshot-log", Json::array()},
              {"metadata-log", Json::array()}};
}

// Each failed requirement is worded as Iceberg's clients (and its compatibility kit) expect.
Status CheckRequirement(const Json* doc, const Json& r) {
  if (!r.is_object()) return Bad("a requirement must be an object");
  SKADE_ASSIGN_OR_RETURN(std::string type, StringMember(r, "type", "requirement"));
  if (type == "assert-create") {
    if (doc) return Conflict("table already exists");
    return {};
  }
  if (!doc) return Conflict("table does not exist (" + type + ")");
  auto equal_int = [&](const char* field, const char* meta_key, const char* what) -> Status {
    SKADE_ASSIGN_OR_RETURN(int64_t want, IntMember(r, field, type));
    int64_t have = (*doc).value(meta_key, int64_t{-1});
    if (want != have)
      return Conflict(std::string(what) + " changed: expected id " + std::to_string(want) + " != " +
                      std::to_string(have));
    return {};
  };
  if (type == "assert-table-uuid") {
    SKADE_ASSIGN_OR_RETURN(std::string uuid, StringMember(r, "uuid", type));
    std::string have = (*doc)["table-uuid"].get<std::string>();
    if (uuid != have) return Conflict("UUID does not match: expected " + have + " != " + uuid);
    return {};
  }
  if (type == "assert-ref-snapshot-id") {
    SKADE_ASSIGN_OR_RETURN(std::string ref, StringMember(r, "ref", type));
    const Json& refs = (*doc)["refs"];
    bool has = refs.contains(ref);
    auto want = r.find("snapshot-id");
    if (want == r.end() || want->is_null()) {
      if (has) return Conflict(ref + " was created concurrently");
      return {};
    }
    if (!has) return Conflict("branch or tag " + ref + " is missing, expected " + want->dump());
    if (refs[ref]["snapshot-id"] != *want)
      return Conflict("branch or tag " + ref + " has changed: expected id " + want->dump() + " != " +
                      refs[ref]["snapshot-id"].dump());
    return {};
  }
  if (type == "assert-last-assigned-field-id")
    return equal_int("last-assigned-field-id", "last-column-id", "last assigned field id");
  if (type == "assert-current-schema-id")
    return equal_int("current-schema-id", "current-schema-id", "current schema");
  if (type == "assert-last-assigned-partition-id")
    return equal_int("last-assigned-partition-id", "last-partition-id", "last assigned partition id");
  if (type == "assert-default-spec-id")
    return equal_int("default-spec-id", "default-spec-id", "default partition spec");
  if (type == "assert-default-sort-order-id")
    return equal_int("default-sort-order-id", "default-sort-order-id", "default sort order");
  return Bad("unknown requirement type '" + type + "'");
}

// Adds an element with an id to `array` (reusing an equal one), returning its id.
int64_t AddWithId(Json& array, Json element, const char* id_key) {
  Json without = element;
  without.erase(id_key);
  for (const auto& e : array) {
    Json other = e;
    other.erase(id_key);
    if (other == without) return e[id_key].get<int64_t>();
  }
  int64_t id = element.contains(id_key) && element[id_key].is_number_integer()
                   ? element[id_key].get<int64_t>()
                   : -1;
  bool taken = id < 0 || std::any_of(array.begin(), array.end(),
                                     [&](const Json& e) { return e[id_key] == id; });
  if (taken) id = MaxOf(array, id_key, -1) + 1;
  element[id_key] = id;
  array.push_back(std::move(element));
  return id;
}

struct Added {
  int64_t schema = -1, spec = -1, order = -1;
};

Status ApplyUpdate(Json& doc, const Json& u, Added& added) {
  if (!u.is_object()) return Bad("an update must be an object");
  SKADE_ASSIGN_OR_RETURN(std::string action, StringMember(u, "action", "update"));
  if (action == "assign-uuid") {
    SKADE_ASSIGN_OR_RETURN(doc["table-uuid"], StringMember(u, "uuid", action));
  } else if (action == "upgrade-format-version") {
    SKADE_ASSIGN_OR_RETURN(int64_t v, IntMember(u, "format-version", action));
    if (v > 3)
      return Unsupported("format version " + std::to_string(v) + " is not supported by skade (1 to 3 are)");
    if (v < doc["format-version"].get<int64_t>()) return Bad("cannot downgrade the format version");
    doc["format-version"] = v;
    if (v >= 3 && !doc.contains("next-row-id")) doc["next-row-id"] = 0;  // row lineage starts
  } else if (action == "add-schema") {
    SKADE_ASSIGN_OR_RETURN(const Json* schema, Member(u, "schema", action));
    if (!schema->is_object()) return Bad("add-schema: 'schema' must be an object");
    added.schema = AddWithId(doc["schemas"], *schema, "schema-id");
    int64_t last = std::max(doc["last-column-id"].get<int64_t>(), HighestFieldId(*schema));
    if (u.contains("last-column-id") && u["last-column-id"].is_number_integer())
      last = std::max(last, u["last-column-id"].get<int64_t>());
    doc["last-column-id"] = last;
  } else if (action == "set-current-schema") {
    SKADE_ASSIGN_OR_RETURN(int64_t id, IntMember(u, "schema-id", action));
    if (id == -1) id = added.schema;
    if (id < 0 || !std::any_of(doc["schemas"].begin(), doc["schemas"].end(),
                               [&](const Json& s) { return s["schema-id"] == id; }))
      return Bad("set-current-schema: no schema " + std::to_string(id));
    doc["current-schema-id"] = id;
  } else if (action == "add-spec") {
    SKADE_ASSIGN_OR_RETURN(const Json* spec, Member(u, "spec", action));
    if (!spec->is_object()) return Bad("add-spec: 'spec' must be an object");
    Json s = *spec;
    int64_t last = doc["last-partition-id"].get<int64_t>();
    if (s.contains("fields") && s["fields"].is_array())
      for (auto& f : s["fields"]) {
        if (!f.contains("field-id")) f["field-id"] = ++last;
        last = std::max(last, f["field-id"].get<int64_t>());
      }
    added.spec = AddWithId(doc["partition-specs"], s, "spec-id");
    doc["last-partition-id"] = last;
  } else if (action == "set-default-spec") {
    SKADE_ASSIGN_OR_RETURN(int64_t id, IntMember(u, "spec-id", action));
    if (id == -1) id = added.spec;
    if (id < 0) return Bad("set-default-spec: no spec was added");
    doc["default-spec-id"] = id;
  } else if (action == "add-sort-order") {
    SKADE_ASSIGN_OR_RETURN(const Json* order, Member(u, "sort-order", action));
    if (!order->is_object()) return Bad("add-sort-order: 'sort-order' must be an object");
    Json o = *order;
    // The unsorted order is always order 0.
    if (!o.contains("fields") || o["fields"].empty()) o["order-id"] = 0;
    added.order = AddWithId(doc["sort-orders"], o, "order-id");
  } else if (action == "set-default-sort-order") {
    SKADE_ASSIGN_OR_RETURN(int64_t id, IntMember(u, "sort-order-id", action));
    if (id == -1) id = added.order;
    if (id < 0) return Bad("set-default-sort-order: no sort order was added");
    doc["default-sort-order-id"] = id;
  } else if (action == "add-snapshot") {
    SKADE_ASSIGN_OR_RETURN(const Json* snap, Member(u, "snapshot", action));
    if (!snap->is_object() || !snap->contains("snapshot-id"))
      return Bad("add-snapshot: a snapshot needs 'snapshot-id'");
    for (const auto& s : doc["snapshots"])
      if (s["snapshot-id"] == (*snap)["snapshot-id"])
        return Bad("snapshot " + (*snap)["snapshot-id"].dump() + " exists");
    int64_t seq = snap->value("sequence-number", int64_t{0});
    if (doc["format-version"].get<int64_t>() >= 2 &&
        seq <= doc["last-sequence-number"].get<int64_t>() && snap->contains("parent-snapshot-id"))
      return Conflict("snapshot sequence number " + std::to_string(seq) +
                      " is not after the table's " + doc["last-sequence-number"].dump());
    doc["last-sequence-number"] = std::max(doc["last-sequence-number"].get<int64_t>(), seq);
    if (doc["format-version"].get<int64_t>() >= 3) {
      // Row lineage: the snapshot's row ids start at or after the table's next one, and
      // the table's next one moves past those it assigned (as Java's catalogs do).
      const Json& first = snap->contains("first-row-id") ? (*snap)["first-row-id"] : Json();
      const Json& added_rows = snap->contains("added-rows") ? (*snap)["added-rows"] : Json();
      if (!first.is_number_integer() || !added_rows.is_number_integer() || added_rows.get<int64_t>() < 0)
        return Bad("add-snapshot: a format version 3 snapshot needs integer 'first-row-id' and 'added-rows'");
      int64_t next = doc.value("next-row-id", int64_t{0});
      if (first.get<int64_t>() < next)
        return Conflict("snapshot first-row-id " + first.dump() + " is behind the table's next-row-id " +
                        std::to_string(next));
      doc["next-row-id"] = next + added_rows.get<int64_t>();
    }
    doc["snapshots"].push_back(*snap);
  } else if (action == "set-snapshot-ref") {
    SKADE_ASSIGN_OR_RETURN(std::string name, StringMember(u, "ref-name", action));
    SKADE_ASSIGN_OR_RETURN(int64_t id, IntMember(u, "snapshot-id", action));
    const Json* snap = nullptr;
    for (const auto& s : doc["snapshots"])
      if (s["snapshot-id"] == id) snap = &s;
    if (!snap) return Bad("set-snapshot-ref: no snapshot " + std::to_string(id));
    Json ref{{"snapshot-id", id}, {"type", u.value("type", "branch")}};
    for (const char* k : {"min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms"})
      if (u.contains(k) && !u[k].is_null()) ref[k] = u[k];
    doc["refs"][name] = ref;
    if (name == "main") {
      doc["current-snapshot-id"] = id;
      doc["snapshot-log"].push_back(
          Json{{"timestamp-ms", (*snap).value("timestamp-ms", NowMs())}, {"snapshot-id", id}});
    }
  } else if (action == "remove-snapshots") {
    SKADE_ASSIGN_OR_RETURN(const Json* ids, Member(u, "snapshot-ids", action));
    if (!ids->is_array()) return Bad("remove-snapshots: 'snapshot-ids' must be an array");
    auto gone = [&](const Json& e) {
      return std::find(ids->begin(), ids->end(), e["snapshot-id"]) != ids->end();
    };
    Json& snaps = doc["snapshots"];
    snaps.erase(std::remove_if(snaps.begin(), snaps.end(), gone), snaps.end());
    Json& log = doc["snapshot-log"];
    log.erase(std::remove_if(log.begin(), log.end(), gone), log.end());
    for (auto it = doc["refs"].begin(); it != doc["refs"].end();)
      it = gone(*it) ? doc["refs"].erase(it) : std::next(it);
    if (!doc["refs"].contains("main")) doc["current-snapshot-id"] = -1;
  } else if (action == "remove-snapshot-ref") {
    SKADE_ASSIGN_OR_RETURN(std::string name, StringMember(u, "ref-name", action));
    doc["refs"].erase(name);
    if (name == "main") doc["current-snapshot-id"] = -1;
  } else if (action == "set-location") {
    SKADE_ASSIGN_OR_RETURN(doc["location"], StringMember(u, "location", action));
  } else if (action == "set-properties") {
    SKADE_ASSIGN_OR_RETURN(const Json* updates, Member(u, "updates", action));
    if (!updates->is_object()) return Bad("set-properties: 'updates' must be an object");
    std::map<std::string, std::string> set;
    for (const auto& [k, v] : updates->items()) {
      if (!v.is_string()) return Bad("set-properties: the value of '" + k + "' must be a string");
      set[k] = v.get<std::string>();
    }
    if (set.contains("format-version"))
      return Bad("set-properties: format-version is not a property to set (upgrade-format-version changes it)");
    // The values skade's own writes honour are checked as `create --property` does.
    if (auto st = CheckTableProperties(set); !st) return Bad("set-properties: " + st.error().message);
    for (const auto& [k, v] : set) doc["properties"][k] = v;
  } else if (action == "remove-properties") {
    SKADE_ASSIGN_OR_RETURN(const Json* removals, Member(u, "removals", action));
    if (!removals->is_array()) return Bad("remove-properties: 'removals' must be an array");
    for (const auto& k : *removals)
      if (k.is_string()) doc["properties"].erase(k.get<std::string>());
  } else if (action == "set-statistics" || action == "set-partition-statistics") {
    bool partition = action == "set-partition-statistics";
    SKADE_ASSIGN_OR_RETURN(const Json* stats,
                           Member(u, partition ? "partition-statistics" : "statistics", action));
    if (!stats->is_object() || !stats->contains("snapshot-id"))
      return Bad(action + ": statistics need 'snapshot-id'");
    Json& list = doc[partition ? "partition-statistics" : "statistics"];
    list.erase(
        std::remove_if(list.begin(), list.end(),
                       [&](const Json& e) { return e["snapshot-id"] == (*stats)["snapshot-id"]; }),
        list.end());
    list.push_back(*stats);
  } else if (action == "remove-statistics" || action == "remove-partition-statistics") {
    SKADE_ASSIGN_OR_RETURN(int64_t id, IntMember(u, "snapshot-id", action));
    Json& list = doc[action == "remove-statistics" ? "statistics" : "partition-statistics"];
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const Json& e) { return e["snapshot-id"] == id; }),
               list.end());
  } else if (action == "remove-partition-specs" || action == "remove-schemas") {
    bool specs = action == "remove-partition-specs";
    SKADE_ASSIGN_OR_RETURN(const Json* ids, Member(u, specs ? "spec-ids" : "schema-ids", action));
    if (!ids->is_array()) return Bad(action + ": the ids must be an array");
    const char* key = specs ? "spec-id" : "schema-id";
    int64_t current = doc[specs ? "default-spec-id" : "current-schema-id"].get<int64_t>();
    if (std::find(ids->begin(), ids->end(), current) != ids->end())
      return Bad(action + ": cannot remove the current one (" + std::to_string(current) + ")");
    Json& list = doc[specs ? "partition-specs" : "schemas"];
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const Json& e) {
                                return std::find(ids->begin(), ids->end(), e[key]) != ids->end();
                              }),
               list.end());
  } else if (action == "add-encryption-key" || action == "remove-encryption-key") {
    return Unsupported(action + " is not supported by skade");
  } else {
    return Bad("unknown update action '" + action + "'");
  }
  return {};
}

Result<TableMetadata> Parsed(Json doc) {
  doc["last-updated-ms"] = std::max(NowMs(), doc.value("last-updated-ms", int64_t{0}));
  if (doc["sort-orders"].empty())
    doc["sort-orders"].push_back(Json{{"order-id", 0}, {"fields", Json::array()}});
  if (doc["partition-specs"].empty())
    doc["partition-specs"].push_back(Json{{"spec-id", 0}, {"fields", Json::array()}});
  if (doc["schemas"].empty()) return Bad("the table has no schema (add-schema)");
  auto m = ParseTableMetadata(doc.dump());
  if (!m) return Bad(m.error().message);
  if (auto schema = m->schema(); schema)
    if (auto old_format = CheckTypesForFormat(*schema, m->format_version); !old_format)
      return Bad(old_format.error().message);
  return m;
}

}  // namespace

Result<TableMetadata> MetadataForCreate(const Json& request, const std::string& location) {
  SKADE_ASSIGN_OR_RETURN(const Json* schema_in, Member(request, "schema", "create request"));
  if (!schema_in->is_object() || !schema_in->contains("fields"))
    return Bad("create request: 'schema' must be a struct");
  Json schema = *schema_in;
  std::map<int64_t, int64_t> ids;
  int next = 1;
  Renumber(schema, next, ids);
  schema["schema-id"] = 0;
  if (schema.contains("identifier-field-ids") && schema["identifier-field-ids"].is_array())
    for (auto& id : schema["identifier-field-ids"]) id = Remapped(ids, id);
  Json doc = Skeleton(location);
  Json updates = Json::array();
  updates.push_back(
      Json{{"action", "add-schema"}, {"schema", schema}, {"last-column-id", next - 1}});
  updates.push_back(Json{{"action", "set-current-schema"}, {"schema-id", -1}});
  Json spec{{"spec-id", 0}, {"fields", Json::array()}};
  if (auto it = request.find("partition-spec");
      it != request.end() && it->is_object() && it->contains("fields")) {
    int64_t field_id = 1000;
    for (const auto& f : (*it)["fields"]) {
      if (!f.is_object() || !f.contains("source-id") || !f["source-id"].is_number_integer())
        return Bad("create request: a partition field needs 'source-id'");
      Json pf = f;
      pf["source-id"] = Remapped(ids, f["source-id"]);
      pf["field-id"] = field_id++;
      spec["fields"].push_back(pf);
    }
  }
  updates.push_back(Json{{"action", "add-spec"}, {"spec", spec}});
  updates.push_back(Json{{"action", "set-default-spec"}, {"spec-id", -1}});
  Json order{{"order-id", 0}, {"fields", Json::array()}};
  if (auto it = request.find("write-order"); it != request.end() && it->is_object() &&
                                             it->contains("fields") && !(*it)["fields"].empty()) {
    order = *it;
    order["order-id"] = 1;
    for (auto& f : order["fields"])
      if (f.contains("source-id") && f["source-id"].is_number_integer())
        f["source-id"] = Remapped(ids, f["source-id"]);
  }
  updates.push_back(Json{{"action", "add-sort-order"}, {"sort-order", order}});
  updates.push_back(Json{{"action", "set-default-sort-order"}, {"sort-order-id", -1}});
  if (auto it = request.find("properties"); it != request.end() && it->is_object()) {
    Json props = *it;
    // Asked for in the properties (Spark's TBLPROPERTIES), consumed at create as Java does;
    // 1 is written as 2, like every table skade writes.
    if (auto v = props.find("format-version"); v != props.end()) {
      std::string text = v->is_string() ? v->get<std::string>() : v->dump();
      if (text != "1" && text != "2" && text != "3")
        return Bad("create request: property format-version must be 1, 2 or 3, not " + text);
      if (text == "3") updates.push_back(Json{{"action", "upgrade-format-version"}, {"format-version", 3}});
    }
    props.erase("format-version");
    updates.push_back(Json{{"action", "set-properties"}, {"updates", props}});
  }
  Added added;
  for (const auto& u : updates) SKADE_RETURN_IF_ERROR(ApplyUpdate(doc, u, added));
  return Parsed(std::move(doc));
}

Result<TableMetadata> ApplyCommit(const TableMetadata* base, const Json& requirements,
                                  const Json& updates, const std::string& new_location) {
  if (!requirements.is_array() && !requirements.is_null())
    return Bad("'requirements' must be an array");
  if (!updates.is_array()) return Bad("'updates' must be an array");
  std::optional<Json> doc;
  if (base) doc = Json::parse(TableMetadataToJson(*base));
  if (requirements.is_array())
    for (const auto& r : requirements)
      SKADE_RETURN_IF_ERROR(CheckRequirement(doc ? &*doc : nullptr, r));
  if (!doc) doc = Skeleton(new_location);
  Added added;
  for (const auto& u : updates) SKADE_RETURN_IF_ERROR(ApplyUpdate(*doc, u, added));
  SKADE_ASSIGN_OR_RETURN(TableMetadata next, Parsed(std::move(*doc)));
  // A schema that drops a column a partition spec still names makes a table Java's readers
  // cannot load (apache/iceberg#10234); a table already so stays writable.
  if (auto unbound = next.FieldWithDroppedSource(); unbound && !(base && base->FieldWithDroppedSource()))
    return Bad("the new schema drops column id " + std::to_string(unbound->second.source_id) +
               ", which partition spec " + std::to_string(unbound->first) + " uses (field '" + unbound->second.name +
               "'); Iceberg's Java readers cannot load such a table. Keep the column, or first remove the specs "
               "that name it once no file uses them (remove-partition-specs)");
  return next;
}

std::string CommitOperation(const Json& updates) {
  std::string op = "metadata-change";
  if (!updates.is_array()) return op;
  for (const auto& u : updates) {
    std::string action = u.is_object() ? u.value("action", "") : "";
    if (action == "add-snapshot" && u.contains("snapshot") && u["snapshot"].contains("summary"))
      return u["snapshot"]["summary"].value("operation", "append");
    if (action == "add-schema" || action == "set-current-schema")
      op = "schema-change";
    else if ((action == "add-spec" || action == "set-default-spec") && op == "metadata-change")
      op = "partition-change";
  }
  return op;
}

}  // namespace skade::server
