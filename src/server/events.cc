// The live stream (`GET /api/skade/v1/events`, Server-Sent Events): every commit
// of the catalog, by any engine, and its lineage event, in commit order, each with
// `id:` = commit_seq so a client reconnecting with Last-Event-ID misses nothing and
// sees nothing twice. One feed follows the catalog for all clients: commits of this
// process through the post-commit hook, other processes' through CommitWatcher.
#include <condition_variable>
#include <functional>
#include <limits>
#include <map>
#include <thread>

#include <arrow/api.h>

#include <algorithm>

#include "server/api_params.h"
#include "server/lineage_view.h"
#include "server/server_internal.h"
#include "skade/cdc/changelog.h"
#include "skade/cdc/commit_watcher.h"
#include "skade/lineage/lineage_recorder.h"
#include "skade/lineage/warehouse_sink.h"
#include "skade/table/table.h"

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

  /// What one commit-log row sends: its commit event (none for skade's own tables)
  /// and its lineage events, each with the event for filtering. Made once per row
  /// and shared by every client (a row is immutable once logged).
  struct Rendered {
    std::string commit;
    std::vector<std::pair<lineage::LineageEvent, std::string>> lineage;
  };
  std::shared_ptr<const Rendered> Render(const CommitLogEntry& e,
                                         const std::function<std::shared_ptr<const Rendered>()>& make) {
    {
      std::lock_guard lock(render_mu_);
      if (auto it = rendered_.find(e.commit_seq); it != rendered_.end()) return it->second;
    }
    auto r = make();
    std::lock_guard lock(render_mu_);
    if (rendered_.size() >= 4096) rendered_.erase(rendered_.begin());
    rendered_.emplace(e.commit_seq, r);
    return r;
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
  std::mutex render_mu_;
  std::map<int64_t, std::shared_ptr<const Rendered>> rendered_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t latest_ = 0;
  bool done_ = false;
  std::thread thread_;
};

std::string SseEvent(int64_t id, const std::string& kind, const Json& data) {
  return "id: " + std::to_string(id) + "\nevent: " + kind +
         "\ndata: " + data.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

struct StreamState {
  int64_t cursor = 0;
  std::optional<std::string> key;  // `ns.table` or a dataset key
  bool commits = true, lineage = true;
  bool retry_sent = false;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
};

bool Names(const lineage::LineageEvent& e, const std::string& key) {
  auto named = [&](const lineage::DatasetRef& r) { return r.Key() == key; };
  return std::any_of(e.inputs.begin(), e.inputs.end(), named) ||
         std::any_of(e.outputs.begin(), e.outputs.end(), named);
}

// The OpenLineage events one append to `_skade.lineage_events` stored (skade's own
// events it delivered went out with their commits), each carrying the append's seq.
std::vector<lineage::LineageEvent> IngestedBy(Catalog& catalog, const CommitLogEntry& append) {
  std::vector<lineage::LineageEvent> out;
  if (append.table != lineage::LineageEventsTable() || !append.snapshot_id) return out;
  auto table = Table::Load(catalog, append.table);
  if (!table) return out;
  const Snapshot* snap = (*table)->metadata()->SnapshotById(*append.snapshot_id);
  if (!snap) return out;  // expired since
  cdc::ChangelogOptions options;
  options.columns = {"event"};
  auto rows = cdc::ReadChangelog(**table, snap->parent_snapshot_id, snap->snapshot_id, options);
  if (!rows) return out;
  auto events = (*rows)->GetColumnByName("event");
  auto kinds = (*rows)->GetColumnByName("_change_type");
  if (!events || !kinds) return out;
  for (int c = 0; c < events->num_chunks(); ++c) {
    auto text = std::dynamic_pointer_cast<arrow::StringArray>(events->chunk(c));
    auto kind = std::dynamic_pointer_cast<arrow::StringArray>(kinds->chunk(c));
    if (!text || !kind) continue;
    for (int64_t i = 0; i < text->length(); ++i) {
      if (text->IsNull(i) || kind->GetView(i) != "INSERT") continue;
      auto e = lineage::LineageEventFromJson(text->GetView(i));
      if (!e || e->commit_seq) continue;
      e->commit_seq = append.commit_seq;
      out.push_back(std::move(*e));
    }
  }
  return out;
}

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
          // From now on: the log's newest entry, read here. The feed hears of another
          // process's commits a moment after they land, and a stream started from its
          // count then began with commits made before the client came (seen under load).
          auto newest = ctx.catalog.CommitsBefore(std::numeric_limits<int64_t>::max(), 0, std::nullopt, 1);
          state->cursor = feed->latest();
          if (newest && !newest->empty()) state->cursor = std::max(state->cursor, newest->front().commit_seq);
        }
        if (req.has_param("table")) {
          auto ref = lineage::ParseDatasetRef(req.get_param_value("table"));
          if (!ref || ref->snapshot_id)
            return SendError(ctx, res, 400, "BadRequestException",
                             "table must be ns.table or a dataset key, got '" +
                                 ShownValue(req.get_param_value("table")) + "'");
          state->key = ref->Key();
        }
        if (req.has_param("kind")) {
          state->commits = state->lineage = false;
          for (const auto& kind : ListParam(req, "kind")) {
            if (kind != "commit" && kind != "lineage")
              return SendError(ctx, res, 400, "BadRequestException",
                               "kind must be a comma-separated list of commit and lineage, got '" +
                                   ShownValue(req.get_param_value("kind")) + "'");
            (kind == "commit" ? state->commits : state->lineage) = true;
          }
          if (!state->commits && !state->lineage)
            return SendError(ctx, res, 400, "BadRequestException",
                             "kind must name commit, lineage or both, got ''");
        }
        ctx.metrics.SseClientOpened();
        res.set_header("Cache-Control", "no-store");
        res.set_header("X-Accel-Buffering", "no");
        res.set_chunked_content_provider(
            "text/event-stream",
            [&ctx, feed, state](size_t, httplib::DataSink& sink) {
              if (ctx.stopping) return false;
              std::string out;
              if (!state->retry_sent) {
                state->retry_sent = true;
                out = "retry: 2000\n\n";
              }
              auto rows = ctx.catalog.CommitsSince(state->cursor, std::nullopt, 500);
              if (!rows) return false;
              for (const auto& e : *rows) {
                state->cursor = e.commit_seq;
                auto r = feed->Render(e, [&] {
                  auto made = std::make_shared<CommitFeed::Rendered>();
                  bool internal = e.table.ns == lineage::kLineageNamespace;
                  if (!internal) made->commit = SseEvent(e.commit_seq, "commit", CommitJson(e));
                  lineage::RunEventMapper mapper(ctx.catalog.warehouse(), nullptr);
                  auto add = [&](const lineage::LineageEvent& event) {
                    Json data = LineageEventJson(event, ReadEventFacts(event, mapper), ctx.catalog);
                    made->lineage.emplace_back(event, SseEvent(e.commit_seq, "lineage", data));
                  };
                  if (!e.lineage_event.empty()) {
                    if (auto event = lineage::LineageEventFromJson(e.lineage_event)) add(*event);
                  } else if (internal && e.action == "commit") {
                    for (const auto& event : IngestedBy(ctx.catalog, e)) add(event);
                  }
                  return std::shared_ptr<const CommitFeed::Rendered>(made);
                });
                if (state->commits && !r->commit.empty() && (!state->key || *state->key == e.table.ToString()))
                  out += r->commit;
                if (state->lineage)
                  for (const auto& [event, text] : r->lineage)
                    if (!state->key || Names(event, *state->key)) out += text;
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
