// The viewer's warehouse API (docs/api.md): the lineage graph with focus, one node's
// detail, impact and provenance lists, and the commit log. Rows of tables are in
// table_rows.cc, the live stream in events.cc.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>

#include "server/api_params.h"
#include "server/lineage_view.h"
#include "server/server_internal.h"
#include "skade/common/csv.h"
#include "skade/lineage/warehouse_sink.h"

namespace skade::server {
namespace {

using lineage::LineageEvent;

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A malformed parameter is the client's 400; anything else the server's.
void SendFailure(const ServerContext& ctx, httplib::Response& res, const Error& e) {
  if (e.kind == ErrorKind::kInvalidArgument)
    return SendError(ctx, res, 400, "BadRequestException", e.message);
  SendError(ctx, res, 500, "ServerError", e.message);
}

void NoSuchNode(const ServerContext& ctx, httplib::Response& res, const std::string& key) {
  SendError(ctx, res, 404, "NoSuchNodeException", "dataset " + ShownValue(key) + " is not in the lineage graph");
}

// The filter shared by /graph and /impact: since, until, systems.
Result<ViewFilter> WindowParams(const httplib::Request& req) {
  ViewFilter f;
  SKADE_ASSIGN_OR_RETURN(f.since_ms, TimeParam(req, "since"));
  SKADE_ASSIGN_OR_RETURN(f.until_ms, TimeParam(req, "until"));
  for (auto& s : ListParam(req, "systems")) f.systems.insert(std::move(s));
  return f;
}

// The `/graph` answers (all but their `window`) made from one fold, by what else they
// were asked for: serialising 10,000 nodes and 30,000 edges costs as much as the fold.
class Answers {
 public:
  std::shared_ptr<const std::string> Find(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = bodies_.find(key);
    return it == bodies_.end() ? nullptr : it->second;
  }
  std::shared_ptr<const std::string> Keep(const std::string& key, std::string body) {
    auto kept = std::make_shared<const std::string>(std::move(body));
    std::lock_guard lock(mu_);
    if (bodies_.size() >= kBodies) bodies_.clear();
    bodies_[key] = kept;
    return kept;
  }

 private:
  static constexpr size_t kBodies = 4;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const std::string>> bodies_;
};

struct Folded {
  std::shared_ptr<const LineageView> view;
  std::shared_ptr<Answers> answers;
  int64_t commit_seq = 0;  // the newest commit when it was folded
};

// Folding every stored event is what a big map costs (10,000 datasets: the most of a
// second), and what is folded changes only with a commit (the events table and the
// tables' facts are both in the commit log): the folds of the last few windows are kept,
// each with the newest commit_seq it saw.
class ViewCache {
 public:
  // The fold of every stored event in the window, after delivering those still waiting
  // in the commit log.
  Result<Folded> Get(ServerContext& ctx, const ViewFilter& filter) {
    if (ctx.options.deliver_lineage) ctx.options.deliver_lineage(true);
    // Read before the fold: a commit landing during it makes the next request fold again.
    SKADE_ASSIGN_OR_RETURN(auto newest, ctx.catalog.CommitsBefore(kMaxInt, 0, std::nullopt, 1));
    int64_t seq = newest.empty() ? 0 : newest.front().commit_seq;
    std::string key = std::to_string(filter.since_ms.value_or(-1)) + "/" +
                      std::to_string(filter.until_ms.value_or(-1));
    for (const auto& system : filter.systems) key += "/" + system;
    {
      std::lock_guard lock(mu_);
      for (const auto& e : entries_)
        if (e.key == key && e.seq == seq) return e.folded;
    }
    SKADE_ASSIGN_OR_RETURN(auto events, lineage::ReadStoredEvents(ctx.catalog));
    Folded folded{std::make_shared<const LineageView>(LineageView::Build(std::move(events), filter, ctx.catalog)),
                  std::make_shared<Answers>(), seq};
    std::lock_guard lock(mu_);
    std::erase_if(entries_, [&](const Entry& e) { return e.key == key; });
    entries_.push_front({key, seq, folded});
    if (entries_.size() > kViews) entries_.pop_back();
    return folded;
  }

 private:
  static constexpr size_t kViews = 3;
  struct Entry {
    std::string key;
    int64_t seq;
    Folded folded;
  };
  std::mutex mu_;
  std::deque<Entry> entries_;  // newest first
};

Json FocusJson(const LineageView& view, const std::string& key, int64_t up, int64_t down,
               std::set<std::string>& shown) {
  shown.insert(key);
  auto cap = [](int64_t hops) { return static_cast<int>(std::min<int64_t>(hops, 1 << 30)); };
  if (up > 0)
    for (const auto& r : view.Reach(key, false, cap(up))) shown.insert(r.key);
  if (down > 0)
    for (const auto& r : view.Reach(key, true, cap(down))) shown.insert(r.key);
  Json hidden = Json::object();
  for (const auto& k : shown) {
    auto outside = [&](bool downstream) {
      const auto& next = view.Neighbours(k, downstream);
      return std::count_if(next.begin(), next.end(), [&](const std::string& n) { return !shown.contains(n); });
    };
    int64_t hidden_up = outside(false), hidden_down = outside(true);
    if (hidden_up || hidden_down) hidden[k] = Json{{"up", hidden_up}, {"down", hidden_down}};
  }
  return Json{{"key", key},
              {"up", up},
              {"down", down},
              {"shown", shown.size()},
              {"total", view.nodes().size()},
              {"hidden", std::move(hidden)}};
}

// The collapsed graph (docs/api.md, `collapse`): what each node stands as (itself, or the
// group of its system or namespace), the groups with their member counts, and the edges
// between what stands, each with how many graph edges it stands for.
class Collapsed {
 public:
  Collapsed(const LineageView& view, bool by_system, const std::set<std::string>& expand) {
    for (const auto& [key, n] : view.nodes()) {
      std::string system = "group:" + n.system;
      std::string ns = system + ":" + n.ns;
      std::string id = by_system && !expand.contains(system) ? system
                       : !expand.contains(ns)                  ? ns
                                                               : key;
      stands_as_[key] = id;
      if (id == key) continue;
      Group& g = groups_[id];
      g.system = n.system;
      g.whole_system = id == system;
      ++g.members;
      g.namespaces.insert(n.ns);
      if (n.last_write_ms())
        g.last_write_ms = std::max(g.last_write_ms.value_or(0), *n.last_write_ms());
      if (n.run_state == "FAIL") ++g.failed;
    }
    for (const auto& e : view.edges()) {
      const std::string& from = stands_as_.at(e.from);
      const std::string& to = stands_as_.at(e.to);
      if (from == e.from && to == e.to) continue;  // a real edge between shown nodes
      if (from != to) ++group_edges_[{from, to}];
    }
  }

  /// The ids asked to expand that name no group of the graph.
  static std::vector<std::string> Unknown(const LineageView& view,
                                          const std::set<std::string>& expand) {
    std::set<std::string> known;
    for (const auto& [key, n] : view.nodes()) {
      known.insert("group:" + n.system);
      known.insert("group:" + n.system + ":" + n.ns);
    }
    std::vector<std::string> out;
    for (const auto& id : expand)
      if (!known.contains(id)) out.push_back(id);
    return out;
  }

  bool Shown(const std::string& key) const { return stands_as_.at(key) == key; }

  Json GroupsJson() const {
    Json out = Json::array();
    for (const auto& [id, g] : groups_)
      out.push_back(Json{{"id", id},
                         {"level", g.whole_system ? "system" : "namespace"},
                         {"system", g.system},
                         {"namespace",
                          g.whole_system ? Json(nullptr) : Json(*g.namespaces.begin())},
                         {"members", g.members},
                         {"namespaces", g.namespaces.size()},
                         {"last_write_ms", OptionalJson(g.last_write_ms)},
                         {"failed", g.failed}});
    return out;
  }

  Json GroupEdgesJson() const {
    Json out = Json::array();
    for (const auto& [ends, count] : group_edges_)
      out.push_back(Json{{"from", ends.first}, {"to", ends.second}, {"count", count}});
    return out;
  }

 private:
  struct Group {
    std::string system;
    bool whole_system = false;
    int64_t members = 0;
    std::set<std::string> namespaces;
    std::optional<int64_t> last_write_ms;
    int64_t failed = 0;
  };
  std::map<std::string, std::string> stands_as_;
  std::map<std::string, Group> groups_;
  std::map<std::pair<std::string, std::string>, int64_t> group_edges_;
};

void Graph(ServerContext& ctx, ViewCache& views, const httplib::Request& req, httplib::Response& res) {
  auto filter = WindowParams(req);
  if (!filter) return SendFailure(ctx, res, filter.error());
  auto up = IntParam(req, "up", 1, 0, kMaxInt);
  if (!up) return SendFailure(ctx, res, up.error());
  auto down = IntParam(req, "down", 1, 0, kMaxInt);
  if (!down) return SendFailure(ctx, res, down.error());
  auto columns = BoolParam(req, "columns", true);
  if (!columns) return SendFailure(ctx, res, columns.error());
  std::string collapse = req.has_param("collapse") ? req.get_param_value("collapse") : "";
  if (!collapse.empty() && collapse != "system" && collapse != "namespace")
    return SendError(ctx, res, 400, "BadRequestException",
                     "collapse must be system or namespace, not " + ShownValue(collapse));
  auto expand_list = ListParam(req, "expand");
  std::set<std::string> expand(expand_list.begin(), expand_list.end());
  if (!expand.empty() && collapse.empty())
    return SendError(ctx, res, 400, "BadRequestException", "expand needs collapse");
  if (!collapse.empty() && req.has_param("focus"))
    return SendError(ctx, res, 400, "BadRequestException", "collapse and focus do not go together");
  auto loaded = views.Get(ctx, *filter);
  if (!loaded) return SendFailure(ctx, res, loaded.error());
  const LineageView* view = loaded->view.get();
  std::optional<std::string> focus_key;
  if (req.has_param("focus")) {
    focus_key = req.get_param_value("focus");
    if (!view->nodes().contains(*focus_key)) return NoSuchNode(ctx, res, *focus_key);
  }
  if (auto unknown = Collapsed::Unknown(*view, expand); !unknown.empty())
    return SendError(ctx, res, 404, "NoSuchGroupException",
                     "group " + ShownValue(unknown.front()) + " is not in the lineage graph");
  std::string asked = *columns ? "columns" : "-";
  if (focus_key) asked += "/" + std::to_string(*up) + "/" + std::to_string(*down) + "/" + *focus_key;
  if (!collapse.empty()) asked += "/collapse/" + collapse;
  for (const auto& id : expand) asked += "/" + id;
  auto body = loaded->answers->Find(asked);
  if (!body) {
    std::set<std::string> shown;
    Json focus = nullptr;
    std::optional<Collapsed> collapsed;
    if (!collapse.empty()) collapsed.emplace(*view, collapse == "system", expand);
    if (focus_key)
      focus = FocusJson(*view, *focus_key, *up, *down, shown);
    else
      for (const auto& [key, n] : view->nodes())
        if (!collapsed || collapsed->Shown(key)) shown.insert(key);
    std::map<std::string, int64_t> shown_per_system;
    Json nodes = Json::array(), edges = Json::array(), column_lineage = Json::array();
    for (const auto& key : shown) {
      const ViewNode& n = view->nodes().at(key);
      ++shown_per_system[n.system];
      nodes.push_back(NodeJson(n, *columns));
    }
    for (const auto& e : view->edges())
      if (shown.contains(e.from) && shown.contains(e.to)) edges.push_back(EdgeJson(e));
    if (*columns)
      for (const auto& c : view->column_lineage())
        if (shown.contains(c.to)) column_lineage.push_back(ColumnLineageJson(c));
    Json systems = Json::array();
    for (const auto& [system, total] : view->system_totals())
      systems.push_back(Json{{"system", system}, {"total", total}, {"shown", shown_per_system[system]}});
    Json rest{{"systems", std::move(systems)},
              {"nodes", std::move(nodes)},
              {"edges", std::move(edges)},
              {"column_lineage", std::move(column_lineage)},
              {"focus", std::move(focus)}};
    if (collapsed) {
      rest["groups"] = collapsed->GroupsJson();
      rest["group_edges"] = collapsed->GroupEdgesJson();
    }
    body = loaded->answers->Keep(asked, rest.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  // The window (with the time of this answer) first, then the kept rest: `{"systems":...}`.
  Json window{{"since_ms", OptionalJson(filter->since_ms)},
              {"until_ms", OptionalJson(filter->until_ms)},
              {"generated_ms", NowMs()},
              {"commit_seq", loaded->commit_seq}};
  res.status = 200;
  res.set_content("{\"window\":" + window.dump() + "," + body->substr(1), "application/json");
}

Json WriterJson(const LineageEvent& e, const EventFacts* facts) {
  return Json{{"actor", e.actor},
              {"job", e.job ? e.job->name : e.actor},
              {"operation", e.operation},
              {"run_id", e.run_id ? Json(*e.run_id) : Json(nullptr)},
              {"event_id", e.event_id},
              {"commit_seq", OptionalJson(e.commit_seq)},
              {"ts_ms", e.ts_ms},
              {"run_state", facts ? facts->run_state : "COMPLETE"}};
}

// docs/api.md, "Freshness rule" (web/src/model/freshness.ts computes the same): the
// usual cadence is the median gap between bursts of writes, a burst being writes within
// a minute of each other; a node with fewer than 3 such gaps is never stale.
constexpr int64_t kBurstMs = 60'000;
constexpr size_t kMinGaps = 3;

Json FreshnessJson(const ViewNode& n, int64_t now_ms) {
  Json unknown{{"state", "unknown"},
               {"last_write_ms", OptionalJson(n.last_write_ms())},
               {"median_interval_ms", nullptr},
               {"stale_after_ms", nullptr}};
  std::vector<int64_t> writes(n.write_times_ms.begin(), n.write_times_ms.end());
  std::sort(writes.begin(), writes.end());
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < writes.size(); ++i)
    if (writes[i] - writes[i - 1] > kBurstMs) gaps.push_back(writes[i] - writes[i - 1]);
  if (n.dropped_ms || gaps.size() < kMinGaps) return unknown;
  std::sort(gaps.begin(), gaps.end());
  size_t mid = gaps.size() / 2;
  // As the viewer computes it: the mean of the middle two for an even count.
  double median = gaps.size() % 2 ? static_cast<double>(gaps[mid])
                                  : (static_cast<double>(gaps[mid - 1]) + gaps[mid]) / 2;
  int64_t last = writes.back();
  double stale_after = static_cast<double>(last) + 3 * median;
  auto number = [](double v) { return v == std::floor(v) ? Json(static_cast<int64_t>(v)) : Json(v); };
  return Json{{"state", static_cast<double>(now_ms) > stale_after ? "stale" : "fresh"},
              {"last_write_ms", last},
              {"median_interval_ms", number(median)},
              {"stale_after_ms", number(stale_after)}};
}

std::optional<int64_t> SummaryNumber(const Snapshot& s, const char* key) {
  auto it = s.summary.find(key);
  if (it == s.summary.end()) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0') return std::nullopt;
  return v;
}

Json TableJson(const TableMetadata& m) {
  const Schema& schema = *m.schema();
  Json fields = Json::array();
  for (const auto& f : schema.fields())
    fields.push_back(Json{{"id", f.id},
                          {"name", f.name},
                          {"type", f.type->ToString()},
                          {"required", f.required},
                          {"doc", f.doc.empty() ? Json(nullptr) : Json(f.doc)}});
  Json spec_fields = Json::array();
  for (const auto& f : m.spec().fields())
    spec_fields.push_back(Json{{"field_id", f.field_id},
                               {"source_id", f.source_id},
                               {"name", f.name},
                               {"transform", f.transform.ToString()}});
  std::vector<const Snapshot*> snapshots;
  for (const auto& s : m.snapshots) snapshots.push_back(&s);
  std::stable_sort(snapshots.begin(), snapshots.end(),
                   [](const Snapshot* a, const Snapshot* b) { return a->sequence_number < b->sequence_number; });
  Json snaps = Json::array();
  for (const Snapshot* s : snapshots) {
    Json summary = Json::object();
    for (const auto& [k, v] : s->summary)
      if (k != "operation") summary[k] = v;
    snaps.push_back(Json{{"snapshot_id", std::to_string(s->snapshot_id)},
                         {"parent_snapshot_id", SnapshotIdJson(s->parent_snapshot_id)},
                         {"sequence_number", s->sequence_number},
                         {"timestamp_ms", s->timestamp_ms},
                         {"operation", s->operation()},
                         {"summary", std::move(summary)},
                         {"added_records", OptionalJson(SummaryNumber(*s, "added-records"))},
                         {"total_records", OptionalJson(SummaryNumber(*s, "total-records"))},
                         {"schema_id", s->schema_id ? Json(*s->schema_id) : Json(nullptr)}});
  }
  Json refs = Json::object();
  for (const auto& [name, ref] : m.refs)
    refs[name] = Json{{"snapshot_id", std::to_string(ref.snapshot_id)}, {"type", ref.type}};
  return Json{{"format_version", m.format_version},
              {"location", m.location},
              {"current_snapshot_id", SnapshotIdJson(m.current_snapshot_id)},
              {"schema",
               {{"schema_id", schema.schema_id()},
                {"identifier_field_ids", schema.identifier_field_ids()},
                {"fields", std::move(fields)}}},
              {"partition_spec", {{"spec_id", m.spec().spec_id()}, {"fields", std::move(spec_fields)}}},
              {"properties", m.properties},
              {"snapshots", std::move(snaps)},
              {"refs", std::move(refs)}};
}

void Node(ServerContext& ctx, ViewCache& views, const httplib::Request& req, httplib::Response& res) {
  if (!req.has_param("key") || req.get_param_value("key").empty())
    return SendError(ctx, res, 400, "BadRequestException", "key is required (a dataset key)");
  std::string key = req.get_param_value("key");
  auto loaded = views.Get(ctx, {});
  if (!loaded) return SendFailure(ctx, res, loaded.error());
  const LineageView* view = loaded->view.get();
  auto it = view->nodes().find(key);
  if (it == view->nodes().end()) return NoSuchNode(ctx, res, key);
  const ViewNode& n = it->second;
  Json table = nullptr;
  if (n.is_table && !n.dropped_ms)
    if (auto ident = TableIdent::Parse(n.name)) {
      auto loaded = ctx.catalog.LoadTable(*ident);
      if (loaded) table = TableJson(*loaded->metadata);
      else if (loaded.error().kind != ErrorKind::kNotFound) return SendFailure(ctx, res, loaded.error());
    }
  SendJson(res, 200,
           Json{{"node", NodeJson(n, true)},
                {"latest_writer", n.last_write ? WriterJson(*n.last_write, view->FactsOf(n.last_write))
                                               : Json(nullptr)},
                {"freshness", FreshnessJson(n, NowMs())},
                {"table", std::move(table)}});
}

// RFC 3339 UTC with milliseconds, as the CSV's last_write column wants it.
std::string Rfc3339Ms(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(((ms % 1000) + 1000) % 1000));
  return buf;
}

// RFC 4180 lines.
std::string CsvLine(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + CsvField(cells[i]);
  return line + "\r\n";
}

void Impact(ServerContext& ctx, ViewCache& views, const httplib::Request& req, httplib::Response& res) {
  if (!req.has_param("key") || req.get_param_value("key").empty())
    return SendError(ctx, res, 400, "BadRequestException", "key is required (a dataset key)");
  std::string key = req.get_param_value("key");
  std::string direction = req.has_param("direction") ? req.get_param_value("direction") : "downstream";
  if (direction != "downstream" && direction != "upstream")
    return SendError(ctx, res, 400, "BadRequestException",
                     "direction must be downstream or upstream, got '" + ShownValue(direction) + "'");
  auto depth = IntParam(req, "depth", 0, 0, kMaxInt);
  if (!depth) return SendFailure(ctx, res, depth.error());
  bool csv = false;
  if (req.has_param("format")) {
    std::string format = req.get_param_value("format");
    if (format != "json" && format != "csv")
      return SendError(ctx, res, 406, "NotAcceptableException",
                       "format must be json or csv, got '" + ShownValue(format) + "'");
    csv = format == "csv";
  } else if (std::string accept = req.get_header_value("Accept"); !accept.empty()) {
    bool json_ok = accept.find("application/json") != std::string::npos ||
                   accept.find("*/*") != std::string::npos || accept.find("application/*") != std::string::npos;
    bool csv_ok = accept.find("text/csv") != std::string::npos || accept.find("text/*") != std::string::npos;
    if (!json_ok && !csv_ok)
      return SendError(ctx, res, 406, "NotAcceptableException",
                       "this route answers application/json or text/csv, not '" + ShownValue(accept) + "'");
    csv = csv_ok && accept.find("application/json") == std::string::npos;
  }
  auto filter = WindowParams(req);
  if (!filter) return SendFailure(ctx, res, filter.error());
  auto loaded = views.Get(ctx, *filter);
  if (!loaded) return SendFailure(ctx, res, loaded.error());
  const LineageView* view = loaded->view.get();
  if (!view->nodes().contains(key)) return NoSuchNode(ctx, res, key);
  auto reached = view->Reach(key, direction == "downstream",
                             static_cast<int>(std::min<int64_t>(*depth, 1 << 30)));
  if (csv) {
    std::string out = CsvLine({"key", "system", "name", "depth", "last_writer", "last_write"});
    for (const auto& r : reached) {
      const ViewNode& n = view->nodes().at(r.key);
      auto last = n.last_write_ms();
      out += CsvLine({r.key, n.system, n.name, std::to_string(r.depth), n.last_writer,
                      last ? Rfc3339Ms(*last) : ""});
    }
    res.status = 200;
    res.set_content(out, "text/csv");
    return;
  }
  Json entries = Json::array();
  for (const auto& r : reached) {
    const ViewNode& n = view->nodes().at(r.key);
    entries.push_back(Json{{"key", r.key},
                           {"system", n.system},
                           {"name", n.name},
                           {"depth", r.depth},
                           {"last_writer", n.last_writer},
                           {"last_write_ms", OptionalJson(n.last_write_ms())}});
  }
  SendJson(res, 200, Json{{"key", key}, {"direction", direction}, {"depth", *depth}, {"entries", std::move(entries)}});
}

void Commits(ServerContext& ctx, ViewCache&, const httplib::Request& req, httplib::Response& res) {
  auto from = IntParam(req, "from_seq", 1, 1, kMaxInt);
  if (!from) return SendFailure(ctx, res, from.error());
  auto until = IntParam(req, "until_seq", kMaxInt, 1, kMaxInt);
  if (!until) return SendFailure(ctx, res, until.error());
  auto limit = IntParam(req, "limit", 500, 0, 10000);
  if (!limit) return SendFailure(ctx, res, limit.error());
  std::string order = req.has_param("order") ? req.get_param_value("order") : "asc";
  if (order != "asc" && order != "desc")
    return SendError(ctx, res, 400, "BadRequestException", "order must be asc or desc, got '" + ShownValue(order) + "'");
  std::optional<TableIdent> table;
  if (req.has_param("table")) {
    auto ident = TableIdent::Parse(req.get_param_value("table"));
    if (!ident) return SendFailure(ctx, res, ident.error());
    table = *ident;
  }
  bool newest_first = order == "desc";
  Json commits = Json::array();
  // What continues the listing: the next from_seq, or newest first the next until_seq.
  int64_t next = newest_first ? (req.has_param("until_seq") ? *until : *from) : *from;
  if (*limit > 0) {
    auto rows = newest_first ? ctx.catalog.CommitsBefore(*until, *from - 1, table, *limit)
                             : ctx.catalog.CommitsSince(*from - 1, table, *limit);
    if (!rows) return SendFailure(ctx, res, rows.error());
    for (const auto& e : *rows) {
      if (e.commit_seq >= *until) break;
      commits.push_back(CommitJson(e));
      next = newest_first ? e.commit_seq : e.commit_seq + 1;
    }
  }
  SendJson(res, 200, Json{{"commits", std::move(commits)}, {"next_seq", next}});
}

}  // namespace

Json CommitJson(const CommitLogEntry& e) {
  std::string actor;
  if (!e.lineage_event.empty())
    if (auto event = lineage::LineageEventFromJson(e.lineage_event)) actor = event->actor;
  return Json{{"commit_seq", e.commit_seq},
              {"table", e.table.ToString()},
              {"action", e.action},
              {"snapshot_id", SnapshotIdJson(e.snapshot_id)},
              {"operation", e.operation},
              {"engine", e.engine},
              {"committed_at_ms", e.committed_at_ms},
              {"actor", actor}};
}

void AddWarehouseApiRoutes(httplib::Server& http, ServerContext& ctx) {
  auto views = std::make_shared<ViewCache>();
  auto route = [&](const char* path,
                   void (*handler)(ServerContext&, ViewCache&, const httplib::Request&, httplib::Response&)) {
    http.Get(path, [&ctx, views, handler](const httplib::Request& req, httplib::Response& res) {
      handler(ctx, *views, req, res);
    });
  };
  route("/api/skade/v1/graph", Graph);
  route("/api/skade/v1/node", Node);
  route("/api/skade/v1/impact", Impact);
  route("/api/skade/v1/commits", Commits);
}

}  // namespace skade::server
