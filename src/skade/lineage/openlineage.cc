#include "skade/lineage/openlineage.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "skade/common/nesting.h"
#include "skade/io/file_io.h"

namespace skade::lineage {
namespace {

using nlohmann::json;

constexpr const char* kRunEventSchema = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";
constexpr size_t kMaxNameBytes = 64 * 1024;  // longer dataset or job names are rejected, not stored

json Facet(const char* file, const char* def) {
  return {{"_producer", kSkadeProducer},
          {"_schemaURL", std::string("https://openlineage.io/spec/facets/") + file + "#/$defs/" + def}};
}

// The run facet carrying skade's own fields (not an OpenLineage-defined facet).
json SkadeFacet(const LineageEvent& e) {
  json f = {{"_producer", kSkadeProducer},
            {"_schemaURL", std::string(kSkadeProducer) + "/blob/main/docs/lineage.md#skade-run-facet"},
            {"eventId", e.event_id},
            {"actor", e.actor},
            {"operation", e.operation}};
  if (e.commit_seq) f["commitSeq"] = *e.commit_seq;
  return f;
}

uint64_t Fnv1a(std::string_view text, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// A UUIDv7-shaped id fixed by `ts_ms` and `identity`: the same event ingested twice
// gets the same id.
std::string DerivedEventId(int64_t ts_ms, std::string_view identity) {
  uint64_t a = Fnv1a(identity, 0xcbf29ce484222325ULL), b = Fnv1a(identity, 0x84222325cbf29ce4ULL);
  uint64_t hi = (static_cast<uint64_t>(ts_ms) << 16) | 0x7000 | (a & 0x0fff);
  uint64_t lo = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

Result<const json*> Member(const json& parent, const std::string& path, const char* key, json::value_t type,
                           bool required) {
  auto it = parent.find(key);
  std::string where = path.empty() ? key : path + "." + key;
  if (it == parent.end() || it->is_null()) {
    if (required) return InvalidArgument("missing " + where);
    return static_cast<const json*>(nullptr);
  }
  bool ok = type == json::value_t::string ? it->is_string()
            : type == json::value_t::object ? it->is_object()
            : type == json::value_t::array  ? it->is_array()
                                            : true;
  if (!ok) {
    const char* want = type == json::value_t::string ? "a string" : type == json::value_t::object ? "an object" : "an array";
    return InvalidArgument(where + " must be " + want + ", got " + it->type_name());
  }
  if (it->is_string() && it->get_ref<const std::string&>().size() > kMaxNameBytes)
    return InvalidArgument(where + " is longer than " + std::to_string(kMaxNameBytes) + " bytes");
  return &*it;
}

Result<std::string> StringMember(const json& parent, const std::string& path, const char* key) {
  SKADE_ASSIGN_OR_RETURN(const json* v, Member(parent, path, key, json::value_t::string, true));
  if (v->get_ref<const std::string&>().empty()) return InvalidArgument((path.empty() ? "" : path + ".") + key + " is empty");
  return v->get<std::string>();
}

std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

// The catalog's table folders, read at most once per mapped event, when a dataset
// needs them (a file location, or a table to name by its location).
class TableFolderList {
 public:
  explicit TableFolderList(Catalog* catalog) : catalog_(catalog) {}
  const std::vector<std::pair<TableIdent, std::string>>& get() {
    if (!loaded_) {
      loaded_ = true;
      if (catalog_)
        if (auto folders = catalog_->TableFolders()) folders_ = std::move(*folders);
    }
    return folders_;
  }

 private:
  Catalog* catalog_;
  bool loaded_ = false;
  std::vector<std::pair<TableIdent, std::string>> folders_;
};

// The table whose folder `path` is, or "": any layout (tables Spark or PyIceberg made
// live where they chose), else skade's own `<ns>.db/<table>` under the warehouse.
std::string TableAt(std::string p, const std::string& warehouse, TableFolderList& folders) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  for (const auto& [ident, folder] : folders.get())
    if (folder == p) return ident.ToString();
  std::string prefix = warehouse + "/";
  if (!p.starts_with(prefix)) return "";
  std::string rest = p.substr(prefix.size());
  auto slash = rest.find('/');
  if (slash != std::string::npos && slash > 3 && rest.compare(slash - 3, 3, ".db") == 0 &&
      rest.find('/', slash + 1) == std::string::npos)
    return rest.substr(0, slash - 3) + "." + rest.substr(slash + 1);
  return "";
}

// Where `table` (CLI spelling) lives: its folder in the catalog, else skade's layout.
std::string LocationOf(const std::string& table, const std::string& warehouse,
                       TableFolderList& folders) {
  auto ident = TableIdent::Parse(table);
  if (!ident) return warehouse + "/" + table;
  for (const auto& [other, folder] : folders.get())
    if (other == *ident) return folder;
  return warehouse + "/" + ident->ns + ".db/" + ident->name;
}

std::string WithoutTrailingSlashes(std::string_view text) {
  while (text.size() > 1 && text.back() == '/') text.remove_suffix(1);
  return std::string(text);
}

// Spark's pseudo-job that closes each SQL statement (`<app>.command_result`).
bool IsCommandResult(const std::string& job_name) {
  constexpr std::string_view kName = "command_result";
  return job_name == kName || (job_name.size() > kName.size() && job_name.ends_with(kName) &&
                               job_name[job_name.size() - kName.size() - 1] == '.');
}

// The `parent` run facet's run id and job, when the event has one.
std::optional<std::pair<std::string, JobRef>> ParentOf(const json& run) {
  auto facets = run.find("facets");
  if (facets == run.end() || !facets->is_object()) return std::nullopt;
  auto parent = facets->find("parent");
  if (parent == facets->end() || !parent->is_object()) return std::nullopt;
  auto text = [](const json& object, const char* key) {
    auto it = object.is_object() ? object.find(key) : object.end();
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto run_of = parent->find("run"), job_of = parent->find("job");
  if (run_of == parent->end() || job_of == parent->end()) return std::nullopt;
  std::string run_id = text(*run_of, "runId");
  JobRef job{text(*job_of, "namespace"), text(*job_of, "name")};
  if (run_id.empty() || job.ns.empty() || job.name.empty()) return std::nullopt;
  return std::pair{run_id, job};
}

}  // namespace

// The latest runs per parent run (a Spark application), with the datasets they named:
// what a `command_result` event closes. Bounded: old parents are forgotten. With a
// catalog the runs are kept beside its lineage inbox too, so a run started before a
// restart is closed after it; memory is then a cache of what the catalog holds.
struct RunEventMapper::RecentRuns {
  struct Run {
    std::string run_id;
    JobRef job;
    std::set<std::string> inputs, outputs;  // dataset keys
  };
  static constexpr size_t kRunsPerParent = 16, kParents = 256;

  explicit RecentRuns(Catalog* catalog) : catalog(catalog) {}

  Status Remember(const std::string& parent, const LineageEvent& e) {
    std::lock_guard lock(mu);
    SKADE_ASSIGN_OR_RETURN(auto* runs, RunsOf(parent));
    Run run{*e.run_id, *e.job, {}, {}};
    bool was_newest = false;
    for (auto r = runs->begin(); r != runs->end(); ++r)
      if (r->run_id == run.run_id) {
        was_newest = std::next(r) == runs->end();
        run = std::move(*r);
        runs->erase(r);
        break;
      }
    size_t known = run.inputs.size() + run.outputs.size();
    for (const auto& d : e.inputs) run.inputs.insert(d.Key());
    for (const auto& d : e.outputs) run.outputs.insert(d.Key());
    // The running statement's further events mostly change nothing: no write for those.
    bool changed = !was_newest || run.inputs.size() + run.outputs.size() != known;
    runs->push_back(std::move(run));
    if (runs->size() > kRunsPerParent) runs->pop_front();
    if (!catalog || !changed) return {};
    const Run& kept = runs->back();
    return catalog->RememberLineageRun(parent, kept.run_id, ToText(kept), kRunsPerParent, kParents);
  }

  // The newest run sharing an output with `e`, else (an event with no outputs) an input;
  // for an event naming no dataset, the newest run.
  Result<std::optional<std::pair<std::string, JobRef>>> Closed(const std::string& parent, const LineageEvent& e) {
    using Found = std::optional<std::pair<std::string, JobRef>>;
    std::lock_guard lock(mu);
    SKADE_ASSIGN_OR_RETURN(auto* runs, RunsOf(parent));
    if (runs->empty()) return Found();
    if (e.inputs.empty() && e.outputs.empty()) return Found(std::pair{runs->back().run_id, runs->back().job});
    bool by_outputs = !e.outputs.empty();
    for (auto r = runs->rbegin(); r != runs->rend(); ++r) {
      const auto& mine = by_outputs ? r->outputs : r->inputs;
      for (const auto& d : by_outputs ? e.outputs : e.inputs)
        if (mine.contains(d.Key())) return Found(std::pair{r->run_id, r->job});
    }
    return Found();
  }

 private:
  static std::string ToText(const Run& run) {
    return json{{"run_id", run.run_id}, {"job", {run.job.ns, run.job.name}}, {"inputs", run.inputs},
                {"outputs", run.outputs}}
        .dump();
  }

  static Result<Run> FromText(const std::string& text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    auto strings = [&](const char* key, size_t size) {
      auto it = j.is_object() ? j.find(key) : j.end();
      return it != j.end() && it->is_array() && (size == 0 || it->size() == size) &&
             std::all_of(it->begin(), it->end(), [](const json& v) { return v.is_string(); });
    };
    if (!j.is_object() || !j.value("run_id", json()).is_string() || !strings("job", 2) || !strings("inputs", 0) ||
        !strings("outputs", 0))
      return Corrupt("a remembered lineage run is not what skade wrote: " + text.substr(0, 200));
    Run run{j["run_id"], JobRef{j["job"][0], j["job"][1]}, {}, {}};
    for (const auto& d : j["inputs"]) run.inputs.insert(d.get<std::string>());
    for (const auto& d : j["outputs"]) run.outputs.insert(d.get<std::string>());
    return run;
  }

  // A parent's runs, read from the catalog the first time this process sees it.
  Result<std::deque<Run>*> RunsOf(const std::string& parent) {
    if (auto it = by_parent.find(parent); it != by_parent.end()) return &it->second;
    std::deque<Run> runs;
    if (catalog) {
      SKADE_ASSIGN_OR_RETURN(auto stored, catalog->LineageRunsOf(parent));
      for (const auto& text : stored) {
        SKADE_ASSIGN_OR_RETURN(Run run, FromText(text));
        runs.push_back(std::move(run));
      }
    }
    order.push_back(parent);
    if (order.size() > kParents) {
      by_parent.erase(order.front());
      order.pop_front();
    }
    return &by_parent.emplace(parent, std::move(runs)).first->second;
  }

  Catalog* catalog;
  std::mutex mu;
  std::map<std::string, std::deque<Run>> by_parent;
  std::deque<std::string> order;  // parents, oldest first
};

bool SameCatalogUri(std::string_view a, std::string_view b) {
  return WithoutTrailingSlashes(a) == WithoutTrailingSlashes(b);
}

std::string SystemKindOf(std::string_view ns) {
  if (ns.starts_with("arn:aws:glue:")) return "glue";
  if (auto scheme = ns.find("://"); scheme != std::string_view::npos && scheme > 0) return std::string(ns.substr(0, scheme));
  if (auto colon = ns.find(':'); colon != std::string_view::npos && colon > 0) return std::string(ns.substr(0, colon));
  return std::string(ns);
}

RunEventMapper::RunEventMapper(std::string warehouse, Catalog* catalog)
    : warehouse_(WithoutTrailingSlashes(warehouse)), catalog_(catalog), recent_(std::make_shared<RecentRuns>(catalog)) {}

void RunEventMapper::SetOwnCatalog(std::function<bool(std::string_view)> is_own) {
  is_own_catalog_ = std::move(is_own);
}

std::string RunEventMapper::ToRunEvent(const LineageEvent& e) {
  TableFolderList folders(catalog_);
  auto dataset = [&](const DatasetRef& ref, bool output) {
    json d;
    json facets = json::object();
    if (ref.system) {
      d = {{"namespace", ref.system->instance.empty() ? ref.system->kind : ref.system->instance}, {"name", ref.table}};
    } else {
      std::string path = LocationOf(ref.table, warehouse_, folders);
      d = {{"namespace", "file"}, {"name", path}};
      facets["symlinks"] = Facet("1-0-1/SymlinksDatasetFacet.json", "SymlinksDatasetFacet");
      facets["symlinks"]["identifiers"] = {{{"namespace", "file:" + warehouse_}, {"name", ref.table}, {"type", "TABLE"}}};
      facets["storage"] = Facet("1-0-1/StorageDatasetFacet.json", "StorageDatasetFacet");
      facets["storage"]["storageLayer"] = "iceberg";
      facets["storage"]["fileFormat"] = "parquet";
    }
    if (ref.snapshot_id) {
      facets["version"] = Facet("1-0-1/DatasetVersionDatasetFacet.json", "DatasetVersionDatasetFacet");
      facets["version"]["datasetVersion"] = std::to_string(*ref.snapshot_id);
    }
    if (output && !ref.system && catalog_) {
      auto ident = TableIdent::Parse(ref.table);
      if (ident && !metadata_.contains(ref.table)) {
        auto loaded = catalog_->LoadTable(*ident);
        metadata_[ref.table] = loaded ? loaded->metadata : nullptr;
      }
      if (TableMetadataPtr m = ident ? metadata_[ref.table] : nullptr) {
        const Snapshot* snap = ref.snapshot_id ? m->SnapshotById(*ref.snapshot_id) : nullptr;
        SchemaPtr schema = snap && snap->schema_id ? m->SchemaById(*snap->schema_id) : m->schema();
        if (schema) {
          facets["schema"] = Facet("1-2-0/SchemaDatasetFacet.json", "SchemaDatasetFacet");
          facets["schema"]["fields"] = json::array();
          for (const auto& f : schema->fields())
            facets["schema"]["fields"].push_back({{"name", f.name}, {"type", f.type->ToString()}});
        }
        if (snap) {
          json stats = Facet("1-0-2/OutputStatisticsOutputDatasetFacet.json", "OutputStatisticsOutputDatasetFacet");
          auto put = [&](const char* summary_key, const char* field) {
            auto it = snap->summary.find(summary_key);
            if (auto v = it == snap->summary.end() ? std::nullopt : ParseInt(it->second)) stats[field] = *v;
          };
          put("added-records", "rowCount");
          put("added-files-size", "size");
          put("added-data-files", "fileCount");
          d["outputFacets"] = {{"outputStatistics", stats}};
        }
      }
    }
    static const std::map<std::string, std::string, std::less<>> kLifecycle = {
        {"create", "CREATE"}, {"drop", "DROP"}, {"rename", "RENAME"}, {"overwrite", "OVERWRITE"},
        {"schema_change", "ALTER"}};
    if (auto it = kLifecycle.find(e.operation); output && !ref.system && it != kLifecycle.end()) {
      facets["lifecycleStateChange"] =
          Facet("1-0-1/LifecycleStateChangeDatasetFacet.json", "LifecycleStateChangeDatasetFacet");
      facets["lifecycleStateChange"]["lifecycleStateChange"] = it->second;
      if (e.operation == "rename" && !e.inputs.empty())
        facets["lifecycleStateChange"]["previousIdentifier"] = {{"namespace", "file:" + warehouse_},
                                                                {"name", e.inputs.front().table}};
    }
    d["facets"] = facets;
    return d;
  };
  std::string event_type = "COMPLETE";
  if (e.raw)
    if (json raw = json::parse(*e.raw, nullptr, false); raw.is_object() && raw.contains("eventType") &&
                                                        raw["eventType"].is_string())
      event_type = raw["eventType"];
  json j = {{"eventType", event_type},
            {"eventTime", FormatTimestamp(e.ts_ms)},
            {"producer", kSkadeProducer},
            {"schemaURL", kRunEventSchema},
            {"run", {{"runId", e.run_id.value_or(e.event_id)}, {"facets", {{"skade", SkadeFacet(e)}}}}},
            {"job", {{"namespace", e.job ? e.job->ns : "skade"},
                     {"name", e.job ? e.job->name : e.actor.empty() ? std::string("skade") : e.actor},
                     {"facets", json::object()}}},
            {"inputs", json::array()},
            {"outputs", json::array()}};
  for (const auto& r : e.inputs) j["inputs"].push_back(dataset(r, false));
  for (const auto& r : e.outputs) j["outputs"].push_back(dataset(r, true));
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<LineageEvent> RunEventMapper::FromRunEvent(std::string_view text) const {
  SKADE_RETURN_IF_ERROR(CheckJsonNesting(text, "the event"));
  TableFolderList folders(catalog_);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("not valid JSON");
  if (!j.is_object()) return InvalidArgument(std::string("a RunEvent must be a JSON object, got ") + j.type_name());
  LineageEvent e;
  SKADE_ASSIGN_OR_RETURN(std::string event_time, StringMember(j, "", "eventTime"));
  auto ts = ParseTimestamp(event_time);
  if (!ts) return InvalidArgument("eventTime '" + event_time + "' is not an RFC 3339 date-time");
  e.ts_ms = *ts;
  SKADE_RETURN_IF_ERROR(StringMember(j, "", "producer"));
  SKADE_RETURN_IF_ERROR(StringMember(j, "", "schemaURL"));
  SKADE_ASSIGN_OR_RETURN(const json* event_type, Member(j, "", "eventType", json::value_t::string, false));
  static const std::set<std::string> kTypes = {"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"};
  if (event_type && !kTypes.contains(event_type->get<std::string>()))
    return InvalidArgument("eventType '" + event_type->get<std::string>() +
                           "' is not one of START, RUNNING, COMPLETE, ABORT, FAIL, OTHER");
  SKADE_ASSIGN_OR_RETURN(const json* run, Member(j, "", "run", json::value_t::object, true));
  SKADE_ASSIGN_OR_RETURN(std::string run_id, StringMember(*run, "run", "runId"));
  SKADE_ASSIGN_OR_RETURN(const json* job, Member(j, "", "job", json::value_t::object, true));
  JobRef job_ref;
  SKADE_ASSIGN_OR_RETURN(job_ref.ns, StringMember(*job, "job", "namespace"));
  SKADE_ASSIGN_OR_RETURN(job_ref.name, StringMember(*job, "job", "name"));

  auto datasets = [&](const char* key, std::vector<DatasetRef>& out) -> Status {
    SKADE_ASSIGN_OR_RETURN(const json* list, Member(j, "", key, json::value_t::array, false));
    if (!list) return {};
    for (size_t i = 0; i < list->size(); ++i) {
      std::string path = std::string(key) + "[" + std::to_string(i) + "]";
      const json& d = (*list)[i];
      if (!d.is_object()) return InvalidArgument(path + " must be an object");
      SKADE_ASSIGN_OR_RETURN(std::string ns, StringMember(d, path, "namespace"));
      SKADE_ASSIGN_OR_RETURN(std::string name, StringMember(d, path, "name"));
      SKADE_ASSIGN_OR_RETURN(const json* facets, Member(d, path, "facets", json::value_t::object, false));
      DatasetRef ref;
      // A table of this warehouse: by its catalog-name symlink (the warehouse's folder
      // as a Hadoop catalog names it, or this server's REST catalog URI), else by its
      // location (any layout).
      if (facets && facets->contains("symlinks") && (*facets)["symlinks"].is_object() &&
          (*facets)["symlinks"].contains("identifiers") && (*facets)["symlinks"]["identifiers"].is_array())
        for (const auto& id : (*facets)["symlinks"]["identifiers"]) {
          if (!id.is_object() || !id.contains("name") || !id["name"].is_string() || !id.contains("namespace") ||
              !id["namespace"].is_string())
            continue;
          const std::string& id_ns = id["namespace"].get_ref<const std::string&>();
          bool own = (id_ns.starts_with("file:") && WithoutTrailingSlashes(LocalPath(id_ns)) == warehouse_) ||
                     (is_own_catalog_ && is_own_catalog_(id_ns));
          if (own && TableIdent::Parse(id["name"].get<std::string>())) {
            ref.table = id["name"];
            break;
          }
        }
      if (ref.table.empty() && (ns == "file" || ns.starts_with("file:"))) ref.table = TableAt(LocalPath(name), warehouse_, folders);
      if (ref.table.empty()) {
        ref.table = name;
        ref.system = SystemRef{SystemKindOf(ns), ns};
      }
      if (facets && facets->contains("version") && (*facets)["version"].is_object()) {
        const json& v = (*facets)["version"];
        if (v.contains("datasetVersion") && v["datasetVersion"].is_string())
          ref.snapshot_id = ParseInt(v["datasetVersion"].get<std::string>());
      }
      out.push_back(std::move(ref));
    }
    return {};
  };
  SKADE_RETURN_IF_ERROR(datasets("inputs", e.inputs));
  SKADE_RETURN_IF_ERROR(datasets("outputs", e.outputs));

  const json* skade = nullptr;
  if (auto f = run->find("facets"); f != run->end() && f->is_object())
    if (auto s = f->find("skade"); s != f->end() && s->is_object() && s->contains("eventId") &&
                                   (*s)["eventId"].is_string())
      skade = &*s;
  if (skade) {
    // One of skade's own events coming back: restore it as it was.
    e.event_id = (*skade)["eventId"];
    e.actor = skade->value("actor", "");
    e.operation = skade->value("operation", std::string(op::kExternal));
    if (skade->contains("commitSeq") && (*skade)["commitSeq"].is_number_integer())
      e.commit_seq = (*skade)["commitSeq"].get<int64_t>();
    if (run_id != e.event_id) e.run_id = run_id;
    if (!(job_ref.ns == "skade" && job_ref.name == (e.actor.empty() ? "skade" : e.actor))) e.job = job_ref;
  } else {
    // The id comes from the event as sent, so folding does not change it.
    e.event_id = DerivedEventId(e.ts_ms, run_id + "|" + (event_type ? event_type->get<std::string>() : "") + "|" +
                                             event_time + "|" + job_ref.ns + "|" + job_ref.name);
    e.operation = std::string(op::kExternal);
    e.run_id = run_id;
    e.job = job_ref;
    e.raw = std::string(text);
    if (auto parent = ParentOf(*run)) {
      if (!IsCommandResult(job_ref.name)) {
        SKADE_RETURN_IF_ERROR(recent_->Remember(parent->first, e));
      } else {
        SKADE_ASSIGN_OR_RETURN(auto closed, recent_->Closed(parent->first, e));
        std::tie(e.run_id, e.job) = closed ? *closed : *parent;
      }
    }
    e.actor = e.job->name;
  }
  return e;
}

}  // namespace skade::lineage
