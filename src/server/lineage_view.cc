#include "server/lineage_view.h"

#include <algorithm>
#include <deque>
#include <tuple>

namespace skade::server {
namespace {

using lineage::DatasetRef;
using lineage::LineageEvent;

constexpr size_t kWriteTimes = 32;
constexpr size_t kRunIds = 16;

const Json* Child(const Json& parent, const char* key, bool (Json::*is)() const noexcept) {
  if (!parent.is_object()) return nullptr;
  auto it = parent.find(key);
  return it != parent.end() && ((*it).*is)() ? &*it : nullptr;
}
const Json* Object(const Json& parent, const char* key) { return Child(parent, key, &Json::is_object); }
const Json* Array(const Json& parent, const char* key) { return Child(parent, key, &Json::is_array); }
std::string Text(const Json& parent, const char* key) {
  const Json* s = Child(parent, key, &Json::is_string);
  return s ? s->get<std::string>() : std::string();
}

// A dataset's `schema` facet as columns.
std::optional<std::vector<ApiColumn>> SchemaFacet(const Json& dataset) {
  const Json* facets = Object(dataset, "facets");
  const Json* schema = facets ? Object(*facets, "schema") : nullptr;
  const Json* fields = schema ? Array(*schema, "fields") : nullptr;
  if (!fields) return std::nullopt;
  std::vector<ApiColumn> out;
  for (const auto& f : *fields)
    if (f.is_object()) out.push_back({Text(f, "name"), Text(f, "type")});
  return out;
}

std::optional<int64_t> RowCountFacet(const Json& dataset) {
  const Json* facets = Object(dataset, "outputFacets");
  const Json* stats = facets ? Object(*facets, "outputStatistics") : nullptr;
  if (!stats) return std::nullopt;
  auto it = stats->find("rowCount");
  if (it == stats->end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

// Names the datasets a columnLineage facet refers to as the event's inputs are named.
class DatasetNamer {
 public:
  DatasetNamer(const Json& raw, const LineageEvent& event, const lineage::RunEventMapper& mapper)
      : event_(event), mapper_(mapper) {
    auto index = [&](const char* key, const std::vector<DatasetRef>& refs) {
      const Json* list = Array(raw, key);
      for (size_t i = 0; list && i < list->size() && i < refs.size(); ++i)
        known_.try_emplace({Text((*list)[i], "namespace"), Text((*list)[i], "name")}, refs[i].Key());
    };
    index("inputs", event.inputs);
    index("outputs", event.outputs);
  }

  std::string Key(const std::string& ns, const std::string& name) {
    auto [it, fresh] = known_.try_emplace({ns, name});
    if (!fresh) return it->second;
    // Not listed in the event: name it as ingest would name such an input.
    Json probe{{"eventTime", lineage::FormatTimestamp(event_.ts_ms)},
               {"producer", "column-lineage"},
               {"schemaURL", "column-lineage"},
               {"run", {{"runId", "column-lineage"}}},
               {"job", {{"namespace", "column-lineage"}, {"name", "column-lineage"}}},
               {"inputs", Json::array({Json{{"namespace", ns}, {"name", name}}})}};
    auto mapped = mapper_.FromRunEvent(probe.dump());
    it->second = mapped && !mapped->inputs.empty() ? mapped->inputs.front().Key()
                                                   : lineage::SystemKindOf(ns) + ":" + name;
    return it->second;
  }

 private:
  const LineageEvent& event_;
  const lineage::RunEventMapper& mapper_;
  std::map<std::pair<std::string, std::string>, std::string> known_;
};

// The inputs of one columnLineage field (or of its dataset-wide list): one per
// transformation, DIRECT when the facet names none.
std::vector<ColumnInput> ColumnInputs(const Json& fields, DatasetNamer& namer) {
  std::vector<ColumnInput> out;
  for (const auto& f : fields) {
    if (!f.is_object()) continue;
    std::string from = namer.Key(Text(f, "namespace"), Text(f, "name"));
    std::string column = Text(f, "field");
    const Json* ts = Array(f, "transformations");
    if (!ts || ts->empty()) {
      out.push_back({from, column, "DIRECT", "", false});
      continue;
    }
    for (const auto& t : *ts) {
      auto masking = t.is_object() ? t.find("masking") : t.end();
      out.push_back({from, column, Text(t, "type") == "INDIRECT" ? "INDIRECT" : "DIRECT",
                     Text(t, "subtype"),
                     t.is_object() && masking != t.end() && masking->is_boolean() && masking->get<bool>()});
    }
  }
  return out;
}

bool InWindow(const LineageEvent& e, const ViewFilter& f) {
  return (!f.since_ms || e.ts_ms >= *f.since_ms) && (!f.until_ms || e.ts_ms < *f.until_ms);
}

std::string NamespaceOf(const DatasetRef& ref) {
  if (ref.system) return ref.system->instance.empty() ? ref.system->kind : ref.system->instance;
  auto ident = TableIdent::Parse(ref.table);
  return ident ? ident->ns : "";
}

// A table node's columns and row count from the catalog, when the table is there.
void AddTableFacts(ViewNode& n, Catalog& catalog) {
  n.row_count.reset();
  if (n.dropped_ms) return;
  auto ident = TableIdent::Parse(n.name);
  if (!ident) return;
  auto loaded = catalog.LoadTable(*ident);
  if (!loaded) return;
  const TableMetadata& m = *loaded->metadata;
  if (const SchemaPtr& schema = m.schema()) {
    n.columns.emplace();
    for (const auto& f : schema->fields()) n.columns->push_back({f.name, f.type->ToString()});
  }
  const Snapshot* snap = n.latest_snapshot ? m.SnapshotById(*n.latest_snapshot) : nullptr;
  if (!snap) return;
  auto it = snap->summary.find("total-records");
  if (it == snap->summary.end()) return;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (end && *end == '\0') n.row_count = v;
}

}  // namespace

EventFacts ReadEventFacts(const LineageEvent& e, const lineage::RunEventMapper& mapper) {
  EventFacts f;
  f.input_columns.resize(e.inputs.size());
  f.output_columns.resize(e.outputs.size());
  f.output_rows.resize(e.outputs.size());
  if (!e.raw) return f;
  // Ingest checked the nesting of what it stored.
  Json raw = Json::parse(*e.raw, nullptr, /*allow_exceptions=*/false);
  if (!raw.is_object()) return f;
  if (std::string type = Text(raw, "eventType"); !type.empty()) f.run_state = type;
  if (const Json* ins = Array(raw, "inputs"))
    for (size_t i = 0; i < ins->size() && i < e.inputs.size(); ++i)
      f.input_columns[i] = SchemaFacet((*ins)[i]);
  const Json* outs = Array(raw, "outputs");
  if (!outs) return f;
  DatasetNamer namer(raw, e, mapper);
  std::string job = e.job ? e.job->name : e.actor;
  for (size_t i = 0; i < outs->size() && i < e.outputs.size(); ++i) {
    const Json& d = (*outs)[i];
    f.output_columns[i] = SchemaFacet(d);
    f.output_rows[i] = RowCountFacet(d);
    const Json* facets = Object(d, "facets");
    const Json* facet = facets ? Object(*facets, "columnLineage") : nullptr;
    if (!facet) continue;
    std::string to = e.outputs[i].Key();
    if (const Json* fields = Object(*facet, "fields"))
      for (const auto& [column, field] : fields->items()) {
        const Json* input_fields = Array(field, "inputFields");
        f.column_lineage.push_back(
            {to, column, job, input_fields ? ColumnInputs(*input_fields, namer) : std::vector<ColumnInput>{}});
      }
    if (const Json* dataset = Array(*facet, "dataset"); dataset && !dataset->empty())
      f.column_lineage.push_back({to, "*", job, ColumnInputs(*dataset, namer)});
  }
  std::sort(f.column_lineage.begin(), f.column_lineage.end(), [](const auto& a, const auto& b) {
    return std::tie(a.to, a.column) < std::tie(b.to, b.column);
  });
  return f;
}

LineageView LineageView::Build(std::vector<LineageEvent> events, const ViewFilter& filter,
                               Catalog& catalog) {
  LineageView v;
  v.events_ = std::move(events);
  std::stable_sort(v.events_.begin(), v.events_.end(),
                   [](const LineageEvent& a, const LineageEvent& b) { return a.ts_ms < b.ts_ms; });
  lineage::RunEventMapper mapper(catalog.warehouse(), nullptr);
  std::map<std::string, ViewNode> all;
  std::map<std::tuple<std::string, std::string, std::string>, ViewEdge> edges;
  std::map<std::string, std::vector<ColumnLineage>> columns_by_output;
  for (const LineageEvent& e : v.events_) {
    if (!InWindow(e, filter)) continue;
    const EventFacts& facts = v.facts_[&e] = ReadEventFacts(e, mapper);
    bool write = facts.run_state == "COMPLETE";
    auto node = [&](const DatasetRef& ref) -> ViewNode& {
      auto [it, fresh] = all.try_emplace(ref.Key());
      if (fresh) {
        it->second.key = ref.Key();
        it->second.system = ref.SystemKind();
        it->second.name = ref.table;
        it->second.ns = NamespaceOf(ref);
        it->second.is_table = !ref.system;
        it->second.first_seen_ms = e.ts_ms;
      }
      return it->second;
    };
    // skade's own drop and rename end a table's life under that name.
    bool own = !e.raw;
    for (size_t i = 0; i < e.outputs.size(); ++i) {
      ViewNode& n = node(e.outputs[i]);
      if (e.outputs[i].snapshot_id) n.latest_snapshot = e.outputs[i].snapshot_id;
      n.run_state = facts.run_state;
      if (facts.output_columns[i]) n.columns = facts.output_columns[i];
      if (facts.output_rows[i]) n.row_count = facts.output_rows[i];
      if (own && e.operation == lineage::op::kDrop)
        n.dropped_ms = e.ts_ms;
      else
        n.dropped_ms.reset();
      if (!write) continue;
      // One write per run: a second COMPLETE of the same run (Spark's folded
      // command_result) moves the write's time, it is not another write.
      if (n.last_write && n.last_write->run_id && n.last_write->run_id == e.run_id && !n.write_times_ms.empty())
        n.write_times_ms.back() = e.ts_ms;
      else
        n.write_times_ms.push_back(e.ts_ms);
      if (n.write_times_ms.size() > kWriteTimes) n.write_times_ms.pop_front();
      n.last_writer = e.actor;
      n.last_write = &e;
    }
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      ViewNode& n = node(e.inputs[i]);
      if (e.inputs[i].snapshot_id && !n.latest_snapshot) n.latest_snapshot = e.inputs[i].snapshot_id;
      if (facts.input_columns[i]) n.columns = facts.input_columns[i];
      if (own && e.operation == lineage::op::kRename) n.dropped_ms = e.ts_ms;
      std::string job = e.job ? e.job->name : e.actor;
      for (const auto& out : e.outputs) {
        if (out.Key() == e.inputs[i].Key()) {
          n.updated_in_place_by.insert(job);
          continue;
        }
        auto [it, fresh] = edges.try_emplace({e.inputs[i].Key(), out.Key(), job});
        ViewEdge& edge = it->second;
        if (fresh) edge = ViewEdge{e.inputs[i].Key(), out.Key(), job, "", 0, e.ts_ms, 0, {}, ""};
        ++edge.count;
        edge.last_ms = e.ts_ms;
        edge.actor = e.actor;
        edge.run_state = facts.run_state;
        std::string run = e.run_id.value_or(e.event_id);
        std::erase(edge.run_ids, run);
        edge.run_ids.push_back(run);
        if (edge.run_ids.size() > kRunIds) edge.run_ids.erase(edge.run_ids.begin());
      }
    }
    if (!write) continue;
    // The newest write with a facet decides an output's column lineage.
    std::map<std::string, std::vector<ColumnLineage>> of_event;
    for (const auto& c : facts.column_lineage) of_event[c.to].push_back(c);
    for (auto& [to, entries] : of_event) columns_by_output[to] = std::move(entries);
  }
  for (auto& [key, n] : all) {
    ++v.system_totals_[n.system];
    if (n.is_table) AddTableFacts(n, catalog);
  }
  auto shown = [&](const std::string& key) {
    return filter.systems.empty() || filter.systems.contains(all.at(key).system);
  };
  for (auto& [k, edge] : edges) {
    if (!shown(edge.from) && !shown(edge.to)) continue;
    v.out_[edge.from].insert(edge.to);
    v.in_[edge.to].insert(edge.from);
    v.nodes_.try_emplace(edge.from, all.at(edge.from));
    v.nodes_.try_emplace(edge.to, all.at(edge.to));
    v.edges_.push_back(std::move(edge));
  }
  for (auto& [key, n] : all)
    if (shown(key)) v.nodes_.try_emplace(key, std::move(n));
  for (auto& [to, entries] : columns_by_output)
    if (v.nodes_.contains(to))
      for (auto& c : entries) v.column_lineage_.push_back(std::move(c));
  return v;
}

const EventFacts* LineageView::FactsOf(const LineageEvent* event) const {
  auto it = facts_.find(event);
  return it == facts_.end() ? nullptr : &it->second;
}

const std::set<std::string>& LineageView::Neighbours(const std::string& key, bool downstream) const {
  static const std::set<std::string> kNone;
  const auto& adjacency = downstream ? out_ : in_;
  auto it = adjacency.find(key);
  return it == adjacency.end() ? kNone : it->second;
}

std::vector<lineage::Reached> LineageView::Reach(const std::string& key, bool downstream,
                                                 int max_depth) const {
  std::vector<lineage::Reached> out;
  std::set<std::string> seen{key};
  std::deque<lineage::Reached> queue{{key, 0}};
  while (!queue.empty()) {
    lineage::Reached at = queue.front();
    queue.pop_front();
    if (max_depth > 0 && at.depth >= max_depth) continue;
    for (const auto& next : Neighbours(at.key, downstream))
      if (seen.insert(next).second) {
        out.push_back({next, at.depth + 1});
        queue.push_back(out.back());
      }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.depth, a.key) < std::tie(b.depth, b.key);
  });
  return out;
}

Json OptionalJson(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

Json SnapshotIdJson(const std::optional<int64_t>& id) {
  return id ? Json(std::to_string(*id)) : Json(nullptr);
}

Json ColumnsJson(const std::optional<std::vector<ApiColumn>>& columns) {
  if (!columns) return nullptr;
  Json out = Json::array();
  for (const auto& c : *columns) out.push_back(Json{{"name", c.name}, {"type", c.type}});
  return out;
}

Json NodeJson(const ViewNode& n, bool with_columns) {
  return Json{{"key", n.key},
              {"system", n.system},
              {"name", n.name},
              {"namespace", n.ns},
              {"kind", n.is_table ? "table" : "dataset"},
              {"first_seen_ms", n.first_seen_ms},
              {"dropped_ms", OptionalJson(n.dropped_ms)},
              {"latest_snapshot", SnapshotIdJson(n.latest_snapshot)},
              {"last_write_ms", OptionalJson(n.last_write_ms())},
              {"last_writer", n.last_writer},
              {"write_times_ms", Json(std::vector<int64_t>(n.write_times_ms.begin(), n.write_times_ms.end()))},
              {"row_count", OptionalJson(n.row_count)},
              {"run_state", n.run_state ? Json(*n.run_state) : Json(nullptr)},
              {"updated_in_place_by", n.updated_in_place_by},
              {"columns", with_columns ? ColumnsJson(n.columns) : Json(nullptr)}};
}

Json EdgeJson(const ViewEdge& e) {
  return Json{{"from", e.from},         {"to", e.to},         {"job", e.job},
              {"actor", e.actor},       {"count", e.count},   {"first_ms", e.first_ms},
              {"last_ms", e.last_ms},   {"run_ids", e.run_ids}, {"run_state", e.run_state}};
}

Json ColumnLineageJson(const ColumnLineage& c) {
  Json inputs = Json::array();
  for (const auto& in : c.inputs)
    inputs.push_back(Json{{"from", in.from},
                          {"column", in.column},
                          {"type", in.type},
                          {"subtype", in.subtype},
                          {"masking", in.masking}});
  return Json{{"to", c.to}, {"column", c.column}, {"job", c.job}, {"inputs", std::move(inputs)}};
}

Json LineageEventJson(const LineageEvent& e, const EventFacts& facts, Catalog& catalog) {
  auto ref = [](const DatasetRef& r) {
    return Json{{"key", r.Key()},
                {"system", r.SystemKind()},
                {"name", r.table},
                {"namespace", NamespaceOf(r)},
                {"snapshot_id", SnapshotIdJson(r.snapshot_id)}};
  };
  Json inputs = Json::array(), outputs = Json::array(), columns = Json::array();
  for (const auto& r : e.inputs) inputs.push_back(ref(r));
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    const DatasetRef& r = e.outputs[i];
    ViewNode facts_of_output;
    facts_of_output.row_count = i < facts.output_rows.size() ? facts.output_rows[i] : std::nullopt;
    facts_of_output.columns = i < facts.output_columns.size() ? facts.output_columns[i] : std::nullopt;
    if (!r.system && e.operation != lineage::op::kDrop) {
      facts_of_output.name = r.table;
      facts_of_output.latest_snapshot = r.snapshot_id;
      AddTableFacts(facts_of_output, catalog);
    }
    Json j = ref(r);
    j["row_count"] = OptionalJson(facts_of_output.row_count);
    j["columns"] = ColumnsJson(facts_of_output.columns);
    outputs.push_back(std::move(j));
  }
  for (const auto& c : facts.column_lineage) columns.push_back(ColumnLineageJson(c));
  return Json{{"event_id", e.event_id},
              {"actor", e.actor},
              {"operation", e.operation},
              {"ts_ms", e.ts_ms},
              {"commit_seq", OptionalJson(e.commit_seq)},
              {"run_id", e.run_id ? Json(*e.run_id) : Json(nullptr)},
              {"job", e.job ? Json{{"namespace", e.job->ns}, {"name", e.job->name}} : Json(nullptr)},
              {"run_state", facts.run_state},
              {"inputs", std::move(inputs)},
              {"outputs", std::move(outputs)},
              {"column_lineage", std::move(columns)}};
}

}  // namespace skade::server
