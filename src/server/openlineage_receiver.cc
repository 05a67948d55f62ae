// The OpenLineage receiver (`POST /api/v1/lineage`, `/api/v1/lineage/batch`) and
// Marquez-shaped reads of the lineage it holds, so tools made for Marquez work.
// Events go through the same ingest path as `skade lineage ingest`.
#include <condition_variable>
#include <functional>
#include <thread>

#include "server/server_internal.h"
#include "skade/lineage/lineage_graph.h"
#include "skade/lineage/openlineage.h"
#include "skade/lineage/warehouse_sink.h"

namespace skade::server {
namespace {

using lineage::LineageEvent;
using lineage::LineageGraph;

// A stable UUID-shaped id from text, for the run a JobEvent or DatasetEvent lacks.
std::string DerivedRunId(const std::string& text) {
  uint64_t h1 = 1469598103934665603ULL, h2 = 1099511628211ULL;
  for (unsigned char c : text) {
    h1 = (h1 ^ c) * 1099511628211ULL;
    h2 = (h2 + c) * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  char buf[40];
  snprintf(buf, sizeof buf, "%08x-%04x-4%03x-8%03x-%012llx", static_cast<unsigned>(h1 >> 32),
           static_cast<unsigned>((h1 >> 16) & 0xffff), static_cast<unsigned>(h1 & 0xfff),
           static_cast<unsigned>((h2 >> 52) & 0xfff),
           static_cast<unsigned long long>(h2 & 0xffffffffffffULL));
  return buf;
}

// Static lineage (a JobEvent: a job's inputs and outputs; a DatasetEvent: one
// dataset) is stored as a completed run of that job, so it lands in the same graph.
Json AsRunEvent(const Json& event) {
  if (event.contains("run")) return event;
  Json run = event;
  if (event.contains("dataset") && !event.contains("job")) {
    const Json& d = event["dataset"];
    run["job"] = Json{{"namespace", "dataset-events"},
                      {"name", d.value("namespace", "") + ":" + d.value("name", "")}};
    run["outputs"] = Json::array({d});
    run.erase("dataset");
  }
  run["run"] = Json{{"runId", DerivedRunId(event.dump())}};
  if (!run.contains("eventType")) run["eventType"] = "COMPLETE";
  return run;
}

class Receiver : public std::enable_shared_from_this<Receiver> {
 public:
  explicit Receiver(ServerContext& ctx)
      : ctx_(ctx), mapper_(ctx.catalog.warehouse(), &ctx.catalog), sink_(ctx.catalog) {
    mapper_.SetOwnCatalog([&ctx](std::string_view ns) { return IsOwnUri(ctx, ns); });
    // Received events reach the events table (and the live stream) within about a
    // second: one append for everything that arrived meanwhile.
    flusher_ = std::thread([this] {
      std::unique_lock lock(flush_mu_);
      while (!done_) {
        flush_cv_.wait_for(lock, std::chrono::seconds(1), [&] { return done_ || dirty_; });
        if (!dirty_ || done_) continue;
        dirty_ = false;
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let a burst gather
        {
          std::lock_guard sink_lock(mu_);
          (void)sink_.Flush();  // a failure leaves the events in the inbox for the next try
        }
        lock.lock();
      }
    });
  }
  ~Receiver() {
    {
      std::lock_guard lock(flush_mu_);
      done_ = true;
    }
    flush_cv_.notify_all();
    flusher_.join();
  }

  void Register(httplib::Server& http) {
    auto self = shared_from_this();
    http.Post("/api/v1/lineage", [self](const httplib::Request& req, httplib::Response& res) {
      self->Receive(req, res, false);
    });
    http.Post("/api/v1/lineage/batch", [self](const httplib::Request& req, httplib::Response& res) {
      self->Receive(req, res, true);
    });
    http.Get("/api/v1/lineage", [self](const httplib::Request& req, httplib::Response& res) {
      self->Lineage(req, res);
    });
    http.Get("/api/v1/namespaces", [self](const httplib::Request& req, httplib::Response& res) {
      self->Namespaces(res);
    });
    http.Get(
        R"(/api/v1/namespaces/([^/]+)/datasets)",
        [self](const httplib::Request& req, httplib::Response& res) { self->Datasets(req, res); });
    http.Get(R"(/api/v1/namespaces/([^/]+)/jobs)",
             [self](const httplib::Request& req, httplib::Response& res) { self->Jobs(req, res); });
  }

 private:
  void Receive(const httplib::Request& req, httplib::Response& res, bool batch) {
    auto body = ParseBody(ctx_, req, res);
    if (!body) return;
    if (batch != body->is_array()) {
      SendError(
          ctx_, res, 400, "BadRequestException",
          batch ? "a batch must be a JSON array of events" : "an event must be a JSON object");
      return;
    }
    std::vector<Json> events =
        batch ? std::vector<Json>(body->begin(), body->end()) : std::vector<Json>{*body};
    std::vector<LineageEvent> mapped;
    for (size_t i = 0; i < events.size(); ++i) {
      if (!events[i].is_object()) return Reject(res, i, batch, "an event must be a JSON object");
      auto e = mapper_.FromRunEvent(AsRunEvent(events[i]).dump());
      if (!e) return Reject(res, i, batch, e.error().message);
      mapped.push_back(std::move(*e));
    }
    // Durable in the catalog's lineage inbox in one small transaction; moved to the
    // events table in batches (each event id once) every second and before reads.
    std::vector<std::string> texts;
    for (const auto& e : mapped) texts.push_back(lineage::ToJson(e));
    Status st = [&]() -> Status {
      SKADE_ASSIGN_OR_RETURN(int64_t last, ctx_.catalog.AddToLineageInbox(texts));
      (void)last;
      return {};
    }();
    if (!st) {
      ctx_.metrics.CountLineage(0, static_cast<int64_t>(mapped.size()));
      return SendError(ctx_, res, st.error());
    }
    ctx_.metrics.CountLineage(static_cast<int64_t>(mapped.size()), 0);
    {
      std::lock_guard lock(flush_mu_);
      dirty_ = true;
    }
    flush_cv_.notify_one();
    if (batch)
      SendJson(res, 201, Json{{"accepted", mapped.size()}});
    else
      res.status = 201;
  }

  void Reject(httplib::Response& res, size_t index, bool batch, const std::string& why) {
    ctx_.metrics.CountLineage(0, 1);
    SendError(
        ctx_, res, 400, "BadRequestException",
        batch ? "event " + std::to_string(index) + ": " + why + " (nothing of the batch was stored)"
              : why);
  }

  Result<LineageGraph> Graph() {
    if (ctx_.options.deliver_lineage) ctx_.options.deliver_lineage(true);
    std::lock_guard lock(mu_);
    // The inbox goes in even when this process records no lineage of its own.
    SKADE_RETURN_IF_ERROR(sink_.Flush());
    SKADE_ASSIGN_OR_RETURN(auto events, lineage::ReadStoredEvents(ctx_.catalog));
    return LineageGraph::Build(events);
  }

  // Marquez names a dataset node `dataset:<namespace>:<name>`; skade's keys are
  // `ns.table` (namespace "skade") or `system:name`.
  static std::string MarquezNs(const lineage::GraphNode& n) { return n.system; }
  static std::string NodeId(const lineage::GraphNode& n) {
    return "dataset:" + n.system + ":" + n.name;
  }

  void Lineage(const httplib::Request& req, httplib::Response& res) {
    std::string node_id = req.get_param_value("nodeId");
    int depth =
        req.has_param("depth") ? std::max(0, std::atoi(req.get_param_value("depth").c_str())) : 20;
    if (!node_id.starts_with("dataset:"))
      return SendError(ctx_, res, 400, "BadRequestException",
                       "nodeId must be dataset:<namespace>:<name>");
    auto graph = Graph();
    if (!graph) return SendError(ctx_, res, graph.error());
    std::string rest = node_id.substr(8);
    size_t colon = rest.find(':');
    std::string ns = rest.substr(0, colon),
                name = colon == std::string::npos ? "" : rest.substr(colon + 1);
    std::string key = ns == "skade" ? name : ns + ":" + name;
    if (!graph->nodes().contains(key))
      return SendError(ctx_, res, 404, "NotFoundException",
                       "no dataset " + node_id + " in the lineage");
    std::set<std::string> keep{key};
    for (bool down : {true, false}) {
      auto reached = down ? graph->Downstream(key, depth) : graph->Upstream(key, depth);
      if (reached)
        for (const auto& r : *reached) keep.insert(r.key);
    }
    // Marquez's graph: dataset and job nodes, each with its in- and out-edges.
    std::map<std::string, Json> nodes;
    auto node = [&](const std::string& id, const std::string& type, Json data) -> Json& {
      auto [it, fresh] = nodes.try_emplace(id);
      if (fresh)
        it->second = Json{{"id", id},
                          {"type", type},
                          {"data", std::move(data)},
                          {"inEdges", Json::array()},
                          {"outEdges", Json::array()}};
      return it->second;
    };
    auto edge = [](Json& from, Json& to) {
      Json e{{"origin", from["id"]}, {"destination", to["id"]}};
      if (std::find(from["outEdges"].begin(), from["outEdges"].end(), e) == from["outEdges"].end())
        from["outEdges"].push_back(e);
      if (std::find(to["inEdges"].begin(), to["inEdges"].end(), e) == to["inEdges"].end())
        to["inEdges"].push_back(e);
    };
    for (const auto& e : graph->edges()) {
      if (!keep.contains(e.from) || !keep.contains(e.to)) continue;
      const auto& a = graph->nodes().at(e.from);
      const auto& b = graph->nodes().at(e.to);
      Json& in = node(NodeId(a), "DATASET", Json{{"namespace", MarquezNs(a)}, {"name", a.name}});
      Json& out = node(NodeId(b), "DATASET", Json{{"namespace", MarquezNs(b)}, {"name", b.name}});
      Json& job = node("job:" + b.system + ":" + e.job, "JOB",
                       Json{{"namespace", b.system}, {"name", e.job}});
      edge(in, job);
      edge(job, out);
    }
    const auto& self_node = graph->nodes().at(key);
    node(NodeId(self_node), "DATASET",
         Json{{"namespace", MarquezNs(self_node)}, {"name", self_node.name}});
    Json list = Json::array();
    for (auto& [id, n] : nodes) list.push_back(std::move(n));
    SendJson(res, 200, Json{{"graph", list}});
  }

  void Namespaces(httplib::Response& res) {
    auto graph = Graph();
    if (!graph) return SendError(ctx_, res, graph.error());
    Json list = Json::array();
    for (const auto& [system, keys] : graph->GroupBySystem())
      list.push_back(Json{{"name", system}});
    SendJson(res, 200, Json{{"namespaces", list}});
  }

  void Datasets(const httplib::Request& req, httplib::Response& res) {
    auto graph = Graph();
    if (!graph) return SendError(ctx_, res, graph.error());
    std::string ns = req.matches[1];
    Json list = Json::array();
    for (const auto& [key, n] : graph->nodes())
      if (n.system == ns) {
        Json d{{"id", {{"namespace", ns}, {"name", n.name}}}, {"namespace", ns}, {"name", n.name}};
        if (n.last_write_ms) d["updatedAt"] = *n.last_write_ms;
        list.push_back(d);
      }
    SendJson(res, 200, Json{{"totalCount", list.size()}, {"datasets", list}});
  }

  void Jobs(const httplib::Request& req, httplib::Response& res) {
    auto graph = Graph();
    if (!graph) return SendError(ctx_, res, graph.error());
    std::string ns = req.matches[1];
    std::map<std::string, Json> jobs;
    for (const auto& e : graph->edges()) {
      if (graph->nodes().at(e.to).system != ns) continue;
      Json& j = jobs[e.job];
      if (j.is_null())
        j = Json{{"id", {{"namespace", ns}, {"name", e.job}}},
                 {"namespace", ns},
                 {"name", e.job},
                 {"inputs", Json::array()},
                 {"outputs", Json::array()}};
      j["inputs"].push_back(Json{{"namespace", graph->nodes().at(e.from).system},
                                 {"name", graph->nodes().at(e.from).name}});
      j["outputs"].push_back(Json{{"namespace", ns}, {"name", graph->nodes().at(e.to).name}});
    }
    Json list = Json::array();
    for (auto& [name, j] : jobs) list.push_back(std::move(j));
    SendJson(res, 200, Json{{"totalCount", list.size()}, {"jobs", list}});
  }

  ServerContext& ctx_;
  lineage::RunEventMapper mapper_;
  lineage::WarehouseSink sink_;
  std::mutex mu_;  // the sink
  std::mutex flush_mu_;
  std::condition_variable flush_cv_;
  bool dirty_ = false, done_ = false;
  std::thread flusher_;
};

}  // namespace

void AddOpenLineageRoutes(httplib::Server& http, ServerContext& ctx) {
  std::make_shared<Receiver>(ctx)->Register(http);
}

}  // namespace skade::server
