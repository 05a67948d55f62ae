// The live stream (`GET /api/skade/v1/events`, Server-Sent Events): every commit
// of the catalog, by any engine, and its lineage event, in commit order, each with
// `id:` = commit_seq so a client reconnecting with Last-Event-ID misses nothing and
// sees nothing twice. One feed follows the catalog for all clients: commits of this
// process through the post-commit hook, other processes' through CommitWatcher.
#include <condition_variable>
#include <thread>

#include "server/server_internal.h"
#include "skade/cdc/commit_watcher.h"

namespace skade::server {
namespace {

class CommitFeed final : public CommitListener {
 public:
  CommitFeed(ServerContext& ctx) : ctx_(ctx) {}
  ~CommitFeed() override {
    ctx_.catalog.RemoveListener(this);
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  Status Start() {
    SKADE_ASSIGN_OR_RETURN(watcher_, cdc::CommitWatcher::Make(ctx_.catalog));
    SKADE_ASSIGN_OR_RETURN(auto tail, ctx_.catalog.CommitsSince(0));
    latest_ = tail.empty() ? 0 : tail.back().commit_seq;
    ctx_.catalog.AddListener(this);
    thread_ = std::thread([this] { Follow(); });
    return {};
  }

  void OnCommit(const CommitEvent& event) override { Advance(event.commit_seq); }

  int64_t latest() {
    std::lock_guard lock(mu_);
    return latest_;
  }

  /// Waits until a commit after `seq` is known, the server stops, or `timeout`.
  bool WaitBeyond(int64_t seq, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return latest_ > seq || done_ || ctx_.stopping; }) &&
           latest_ > seq;
  }

 private:
  void Advance(int64_t seq) {
    {
      std::lock_guard lock(mu_);
      if (seq <= latest_) return;
      latest_ = seq;
    }
    cv_.notify_all();
  }

  void Follow() {
    while (true) {
      {
        std::lock_guard lock(mu_);
        if (done_) return;
      }
      int64_t from = latest();
      // WaitFor re-checks for a while after each wake: another process's commit
      // becomes visible only after its fsync, which no file event marks.
      auto arrived = watcher_->WaitFor(
          [&]() -> Result<bool> {
            SKADE_ASSIGN_OR_RETURN(auto rows, ctx_.catalog.CommitsSince(from, std::nullopt, 1000));
            if (!rows.empty()) Advance(rows.back().commit_seq);
            return !rows.empty() || ctx_.stopping.load();
          },
          std::chrono::milliseconds(500));
      if (!arrived)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a failed read: try again
    }
  }

  ServerContext& ctx_;
  std::unique_ptr<cdc::CommitWatcher> watcher_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t latest_ = 0;
  bool done_ = false;
  std::thread thread_;
};

Json CommitJson(const CommitLogEntry& e) {
  Json j{{"commit_seq", e.commit_seq},
         {"table", e.table.ToString()},
         {"action", e.action},
         {"snapshot_id", e.snapshot_id ? Json(std::to_string(*e.snapshot_id)) : Json(nullptr)},
         {"operation", e.operation},
         {"engine", e.engine},
         {"committed_at_ms", e.committed_at_ms}};
  return j;
}

std::string SseEvent(int64_t id, const std::string& kind, const Json& data) {
  return "id: " + std::to_string(id) + "\nevent: " + kind +
         "\ndata: " + data.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

struct StreamState {
  int64_t cursor = 0;
  std::optional<TableIdent> table;
  bool commits = true, lineage = true;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
};

}  // namespace

void AddEventRoutes(httplib::Server& http, ServerContext& ctx) {
  auto feed = std::make_shared<CommitFeed>(ctx);
  if (auto st = feed->Start(); !st) {
    http.Get("/api/skade/v1/events",
             [&ctx, why = st.error().message](const httplib::Request&, httplib::Response& res) {
               SendError(ctx, res, 503, "ServiceUnavailableException",
                         "the event stream cannot follow the catalog: " + why);
             });
    return;
  }
  http.Get(
      "/api/skade/v1/events", [&ctx, feed](const httplib::Request& req, httplib::Response& res) {
        auto state = std::make_shared<StreamState>();
        std::string resume = req.get_header_value("Last-Event-ID");
        if (resume.empty() && req.has_param("since_seq")) resume = req.get_param_value("since_seq");
        if (!resume.empty()) {
          char* end = nullptr;
          long long seq = std::strtoll(resume.c_str(), &end, 10);
          if (*end != '\0' || seq < 0)
            return SendError(ctx, res, 400, "BadRequestException",
                             "Last-Event-ID must be a commit_seq, got '" + resume + "'");
          state->cursor = seq;
        } else {
          state->cursor = feed->latest();
        }
        if (req.has_param("table")) {
          auto ident = TableIdent::Parse(req.get_param_value("table"));
          if (!ident) return SendError(ctx, res, ident.error());
          state->table = *ident;
        }
        if (req.has_param("kind")) {
          std::string kind = req.get_param_value("kind");
          if (kind != "commit" && kind != "lineage")
            return SendError(ctx, res, 400, "BadRequestException",
                             "kind must be commit or lineage, got '" + kind + "'");
          state->commits = kind == "commit";
          state->lineage = kind == "lineage";
        }
        ctx.metrics.SseClientOpened();
        res.set_header("Cache-Control", "no-store");
        res.set_header("X-Accel-Buffering", "no");
        res.set_chunked_content_provider(
            "text/event-stream",
            [&ctx, feed, state](size_t, httplib::DataSink& sink) {
              if (ctx.stopping) return false;
              auto rows = ctx.catalog.CommitsSince(state->cursor, state->table, 500);
              if (!rows) return false;
              std::string out;
              for (const auto& e : *rows) {
                state->cursor = e.commit_seq;
                bool internal = e.table.ns == "_skade";
                if (state->commits && !internal)
                  out += SseEvent(e.commit_seq, "commit", CommitJson(e));
                if (!state->lineage) continue;
                if (!e.lineage_event.empty()) {
                  Json data = Json::parse(e.lineage_event, nullptr, false);
                  if (!data.is_discarded()) out += SseEvent(e.commit_seq, "lineage", data);
                } else if (internal && e.action == "commit") {
                  // Events ingested from other systems were appended here: the graph changed.
                  out += SseEvent(e.commit_seq, "lineage",
                                  Json{{"commit_seq", e.commit_seq}, {"source", "ingest"}});
                }
              }
              if (!out.empty()) {
                state->last_write = std::chrono::steady_clock::now();
                return sink.write(out.data(), out.size());
              }
              if (rows->size() == 500) return true;
              if (!feed->WaitBeyond(state->cursor, std::chrono::milliseconds(1000)) &&
                  std::chrono::steady_clock::now() - state->last_write > std::chrono::seconds(15)) {
                // A comment keeps proxies from closing an idle stream, and finds gone clients.
                state->last_write = std::chrono::steady_clock::now();
                return sink.write(": keepalive\n\n", 13);
              }
              return sink.is_writable();
            },
            [&ctx](bool) { ctx.metrics.SseClientClosed(); });
      });
}

}  // namespace skade::server
