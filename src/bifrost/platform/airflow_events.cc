#include "bifrost/platform/airflow_events.h"

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "bifrost/sync/metrics.h"
#include "skade/lineage/http_post_internal.h"

namespace bifrost {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

constexpr auto kFirstBackoff = 1000ms;
constexpr auto kMaxBackoff = 30000ms;
// An asset no DAG declares never appears; its events must not pile up for ever.
constexpr auto kUnknownAssetTtl = std::chrono::hours(1);
// Airflow's page limit (`[api] maximum_page_limit`, 100 by default).
constexpr int kPage = 100;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

Result<std::string> ReadSecret(const std::string& path, const std::string& flag) {
  std::ifstream in(path);
  if (!in) return skade::InvalidArgument(flag + " '" + path + "' cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty()) return skade::InvalidArgument(flag + " '" + path + "' is empty");
  return s;
}

// The `exp` claim of a JWT (seconds since the epoch), if it has one.
std::optional<Clock::time_point> JwtExpiry(const std::string& token) {
  auto first = token.find('.');
  auto second = token.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos) return std::nullopt;
  std::string payload;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : token.substr(first + 1, second - first - 1)) {
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '-'             ? 62
            : c == '_'             ? 63
                                   : -1;
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      payload += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  auto j = nlohmann::json::parse(payload, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("exp") || !j["exp"].is_number())
    return std::nullopt;
  return Clock::time_point(std::chrono::seconds(j["exp"].get<int64_t>()));
}

std::string RandomId() {
  std::random_device rd;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}

nlohmann::json SnapshotText(const std::optional<int64_t>& id) {
  // As text: snapshot ids use all 64 bits, more than a JSON number keeps in JavaScript.
  return id ? nlohmann::json(std::to_string(*id)) : nlohmann::json(nullptr);
}

std::string Excerpt(const std::string& body) {
  std::string s = body.substr(0, 200);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

struct AirflowEvents::Answer {
  int status = 0;
  nlohmann::json json;  // discarded when the body is not JSON
  std::string body;
};

AirflowEvents::AirflowEvents(AirflowOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<AirflowEvents>> AirflowEvents::Make(AirflowOptions o) {
  auto bad = [&](const std::string& why) {
    return skade::InvalidArgument("--airflow-url '" + o.url + "' " + why);
  };
  std::string_view rest = o.url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    return bad("is not an http:// or https:// URL");
  }
  std::string_view host = rest.substr(0, rest.find('/'));
  if (host.empty() || host.starts_with(":")) return bad("names no host");
  if (rest.find_first_of("?# ") != std::string_view::npos)
    return bad("must be the api-server's base URL, without a query, fragment or spaces");
  if (auto colon = host.rfind(':'); colon != std::string_view::npos && host.back() != ']') {
    std::string_view port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string_view::npos ||
        std::stoi(std::string(port)) > 65535)
      return bad("has a bad port");
  }
  while (o.url.ends_with("/")) o.url.pop_back();
  if (!o.token_file.empty() && (!o.user.empty() || !o.password_file.empty()))
    return skade::InvalidArgument(
        "--airflow-token-file and --airflow-user/--airflow-password-file exclude each other");
  if (o.user.empty() != o.password_file.empty())
    return skade::InvalidArgument(o.user.empty() ? "--airflow-password-file needs --airflow-user"
                                                 : "--airflow-user needs --airflow-password-file");
  if (!o.token_file.empty())
    SKADE_RETURN_IF_ERROR(ReadSecret(o.token_file, "--airflow-token-file"));
  if (!o.password_file.empty())
    SKADE_RETURN_IF_ERROR(ReadSecret(o.password_file, "--airflow-password-file"));
  if (o.asset_prefix.empty() || o.asset_prefix.find("://") == std::string::npos)
    return skade::InvalidArgument("--asset-prefix '" + o.asset_prefix +
                                  "' is not a URI prefix like skade://warehouse/");
  return std::unique_ptr<AirflowEvents>(new AirflowEvents(std::move(o)));
}

std::optional<std::string> AirflowEvents::EventFor(const TableRound& r, const TableState& from,
                                                   const TableState& to) const {
  const SinkReport& s = r.sink;
  if (r.outcome != TableRound::Outcome::kSynced || s.vertex_rows + s.edge_rows + s.delete_rows == 0)
    return std::nullopt;
  std::string id = RandomId();
  {
    std::lock_guard lock(mine_mu_);
    mine_.insert(id);
  }
  ++made_;
  nlohmann::json extra = {
      {"bifrost_event_id", id},
      {"table", r.table},
      {"graph", options_.graph},
      {"snapshot_id", SnapshotText(to.snapshot_id)},
      {"previous_snapshot_id", SnapshotText(from.snapshot_id)},
      {"read", r.description},
      {"rows_read", r.rows_read},
      {"vertex_rows", s.vertex_rows},
      {"edge_rows", s.edge_rows},
      {"delete_rows", s.delete_rows},
      {"nodes_created", s.nodes_created},
      {"relationships_created", s.relationships_created},
      {"nodes_deleted", s.nodes_deleted},
      {"relationships_deleted", s.relationships_deleted},
  };
  if (to.done_files.size() > from.done_files.size())
    extra["files"] = std::vector<std::string>(to.done_files.begin() + from.done_files.size(),
                                              to.done_files.end());
  nlohmann::json event = {
      {"uri", options_.asset_prefix + r.table}, {"enqueued_ms", NowMs()}, {"extra", extra}};
  return event.dump();
}

Syncer::EventMaker AirflowEvents::Maker() const {
  return [this](const TableRound& r, const TableState& from, const TableState& to) {
    return EventFor(r, from, to);
  };
}

Status AirflowEvents::FetchToken() {
  ++token_fetches_;
  token_expires_.reset();
  if (!options_.token_file.empty()) {
    SKADE_ASSIGN_OR_RETURN(token_, ReadSecret(options_.token_file, "--airflow-token-file"));
    token_expires_ = JwtExpiry(token_);
    return {};
  }
  SKADE_ASSIGN_OR_RETURN(std::string password,
                         ReadSecret(options_.password_file, "--airflow-password-file"));
  skade::lineage::HttpCall call{
      .method = "POST",
      .url = options_.url + "/auth/token",
      .body = nlohmann::json{{"username", options_.user}, {"password", password}}.dump(),
      .headers = {},
      .timeout_ms = options_.timeout_ms,
      .what = "--airflow-url",
      .stop_fd = stop_fd_};
  SKADE_ASSIGN_OR_RETURN(auto answer, skade::lineage::HttpRequest(call));
  auto j = nlohmann::json::parse(answer.body, nullptr, false);
  if (answer.status / 100 != 2 || j.is_discarded() || !j.is_object() ||
      !j.value("access_token", nlohmann::json()).is_string())
    return skade::IoError("POST " + call.url + " as '" + options_.user + "' answered HTTP " +
                          std::to_string(answer.status) + ": " + Excerpt(answer.body));
  token_ = j["access_token"].get<std::string>();
  token_expires_ = JwtExpiry(token_);
  return {};
}

Result<AirflowEvents::Answer> AirflowEvents::Call(const std::string& method,
                                                  const std::string& path,
                                                  const std::string& body) {
  bool authenticated = !options_.token_file.empty() || !options_.user.empty();
  // A token about to expire is replaced before use rather than after a 401.
  if (authenticated && (token_.empty() || (token_expires_ && *token_expires_ - 30s < Clock::now())))
    SKADE_RETURN_IF_ERROR(FetchToken());
  for (int attempt = 0;; ++attempt) {
    skade::lineage::HttpCall call{.method = method,
                                  .url = options_.url + path,
                                  .body = body,
                                  .headers = {},
                                  .timeout_ms = options_.timeout_ms,
                                  .what = "--airflow-url",
                                  .stop_fd = stop_fd_};
    if (authenticated) call.headers.emplace_back("Authorization", "Bearer " + token_);
    SKADE_ASSIGN_OR_RETURN(auto raw, skade::lineage::HttpRequest(call));
    if (raw.status == 401 && authenticated && attempt == 0) {
      SKADE_RETURN_IF_ERROR(FetchToken());
      continue;
    }
    Answer a;
    a.status = raw.status;
    a.json = nlohmann::json::parse(raw.body, nullptr, false);
    a.body = std::move(raw.body);
    return a;
  }
}

Result<std::optional<int64_t>> AirflowEvents::AssetId(const std::string& uri) {
  if (auto it = asset_ids_.find(uri); it != asset_ids_.end()) return it->second;
  for (int offset = 0;; offset += kPage) {
    SKADE_ASSIGN_OR_RETURN(
        auto a, Call("GET",
                     "/api/v2/assets?uri_prefix_pattern=" + skade::lineage::UrlEncode(uri) +
                         "&limit=" + std::to_string(kPage) + "&offset=" + std::to_string(offset) +
                         "&order_by=id",
                     ""));
    if (a.status != 200 || !a.json.is_object() ||
        !a.json.value("assets", nlohmann::json()).is_array())
      return skade::IoError("GET /api/v2/assets answered HTTP " + std::to_string(a.status) + ": " +
                            Excerpt(a.body));
    const auto& assets = a.json["assets"];
    for (const auto& asset : assets)  // a prefix search (LIKE): take the exact URI
      if (asset.is_object() && asset.value("uri", "") == uri && asset.contains("id") &&
          asset["id"].is_number_integer())
        return asset_ids_[uri] = asset["id"].get<int64_t>();
    if (assets.size() < static_cast<size_t>(kPage)) return std::nullopt;
  }
}

Result<bool> AirflowEvents::AlreadyDelivered(int64_t asset_id, const std::string& id,
                                             int64_t enqueued_ms) {
  // Airflow stamps an event when it arrives, after it was enqueued (a minute's slack for
  // clocks that disagree).
  std::time_t since = static_cast<std::time_t>((enqueued_ms - 60000) / 1000);
  char iso[32];
  std::tm tm{};
  gmtime_r(&since, &tm);
  std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
  for (int offset = 0;; offset += kPage) {
    SKADE_ASSIGN_OR_RETURN(auto a,
                           Call("GET",
                                "/api/v2/assets/events?asset_id=" + std::to_string(asset_id) +
                                    "&timestamp_gte=" + skade::lineage::UrlEncode(iso) +
                                    "&order_by=timestamp&limit=" + std::to_string(kPage) +
                                    "&offset=" + std::to_string(offset),
                                ""));
    if (a.status != 200 || !a.json.is_object() ||
        !a.json.value("asset_events", nlohmann::json()).is_array())
      return skade::IoError("GET /api/v2/assets/events answered HTTP " + std::to_string(a.status) +
                            ": " + Excerpt(a.body));
    const auto& events = a.json["asset_events"];
    for (const auto& e : events)
      if (e.is_object() && e.value("extra", nlohmann::json()).is_object() &&
          e["extra"].value("bifrost_event_id", "") == id)
        return true;
    if (events.size() < static_cast<size_t>(kPage)) return false;
  }
}

Result<AirflowEvents::Outcome> AirflowEvents::DeliverOne(StateLedger& ledger,
                                                         const OutboxEntry& entry,
                                                         std::string& note) {
  auto event = nlohmann::json::parse(entry.body, nullptr, false);
  if (event.is_discarded() || !event.is_object() ||
      !event.value("uri", nlohmann::json()).is_string() ||
      !event.value("extra", nlohmann::json()).is_object()) {
    // Not one of ours (a hand-edited ledger): it can never be sent.
    note = "outbox entry " + std::to_string(entry.seq) + " is not an event; dropped";
    SKADE_RETURN_IF_ERROR(ledger.Dequeue(entry.seq));
    return Outcome::kDropped;
  }
  const std::string uri = event["uri"].get<std::string>();
  const std::string id = event["extra"].value("bifrost_event_id", "");
  const int64_t enqueued_ms = event.value("enqueued_ms", int64_t{0});
  SKADE_ASSIGN_OR_RETURN(auto asset, AssetId(uri));
  if (!asset) {
    if (NowMs() - enqueued_ms > std::chrono::milliseconds(kUnknownAssetTtl).count()) {
      note = "Airflow has no asset '" + uri + "' after an hour; its event " + id + " was dropped";
      SKADE_RETURN_IF_ERROR(ledger.Dequeue(entry.seq));
      return Outcome::kDropped;
    }
    note = "Airflow has no asset '" + uri + "' (yet: no DAG that schedules on it was parsed); " +
           "its events wait";
    return Outcome::kHeldBack;
  }
  // Sent before without an answer, or made by another process (which may have sent it
  // and died before dequeuing it): ask Airflow first.
  bool made_here = [&] {
    std::lock_guard lock(mine_mu_);
    return mine_.contains(id);
  }();
  if (in_doubt_.contains(entry.seq) || !made_here) {
    SKADE_ASSIGN_OR_RETURN(bool there, AlreadyDelivered(*asset, id, enqueued_ms));
    if (there) {
      in_doubt_.erase(entry.seq);
      SKADE_RETURN_IF_ERROR(ledger.Dequeue(entry.seq));
      return Outcome::kDelivered;
    }
  }
  in_doubt_.insert(entry.seq);
  nlohmann::json body = {{"asset_id", *asset}, {"extra", event["extra"]}};
  SKADE_ASSIGN_OR_RETURN(auto a, Call("POST", "/api/v2/assets/events", body.dump()));
  if (a.status == 404) {  // the asset went away (its DAG removed) since it was resolved
    asset_ids_.erase(uri);
    note = "Airflow no longer has asset '" + uri + "'; its events wait";
    in_doubt_.erase(entry.seq);
    return Outcome::kHeldBack;
  }
  if (a.status / 100 != 2)
    return skade::IoError("POST /api/v2/assets/events for '" + uri + "' answered HTTP " +
                          std::to_string(a.status) + ": " + Excerpt(a.body));
  ++sent_;
  // If this write fails, the event stays in doubt and the lookup above finds it.
  SKADE_RETURN_IF_ERROR(ledger.Dequeue(entry.seq));
  in_doubt_.erase(entry.seq);
  return Outcome::kDelivered;
}

std::vector<std::string> AirflowEvents::Deliver(StateLedger& ledger, StateLedger& lease_ledger,
                                                std::chrono::milliseconds lease, bool force) {
  std::vector<std::string> notes;
  auto outbox = ledger.Outbox();
  if (!outbox) {
    notes.push_back("Airflow events: " + outbox.error().message);
    return notes;
  }
  pending_ = static_cast<int64_t>(outbox->size());
  if (outbox->empty() || (!force && std::chrono::steady_clock::now() < next_try_)) return notes;
  auto held_lease = lease_ledger.AcquireRound(lease);
  if (!held_lease || !*held_lease) return notes;  // another instance's delivery
  // Read again under the lease: another instance may have delivered meanwhile.
  outbox = ledger.Outbox();
  if (!outbox) {
    lease_ledger.ReleaseRound();
    notes.push_back("Airflow events: " + outbox.error().message);
    return notes;
  }
  pending_ = static_cast<int64_t>(outbox->size());
  std::set<std::string> held;  // assets whose next event waits: their later ones wait too
  bool failed = false;
  for (const auto& entry : *outbox) {
    auto event = nlohmann::json::parse(entry.body, nullptr, false);
    std::string uri = event.is_object() ? event.value("uri", "") : "";
    if (!uri.empty() && held.contains(uri)) continue;
    std::string note;
    auto outcome = DeliverOne(ledger, entry, note);
    if (!outcome) {
      ++failed_attempts_;
      failed = true;
      notes.push_back("Airflow events: " + outcome.error().message);
      break;  // Airflow is down or refuses us: the rest would fare the same
    }
    if (!note.empty()) notes.push_back("Airflow events: " + note);
    if (*outcome == Outcome::kHeldBack) held.insert(uri);
    if (*outcome == Outcome::kDropped) ++dropped_;
    if (*outcome != Outcome::kHeldBack) --pending_;
  }
  lease_ledger.ReleaseRound();
  if (failed || !held.empty()) {
    backoff_ = backoff_ == 0ms ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
    next_try_ = std::chrono::steady_clock::now() + backoff_;
    if (failed) notes.back() += "; retry in " + std::to_string(backoff_.count()) + " ms";
  } else {
    backoff_ = 0ms;
  }
  return notes;
}

void AirflowEvents::Publish(Metrics& m) const {
  m.Set("bifrost_airflow_events_sent_total", "counter", "Asset events Airflow acknowledged.",
        static_cast<double>(sent_));
  m.Set("bifrost_airflow_event_failures_total", "counter",
        "Delivery attempts that failed (Airflow down, refusing, or answering an error).",
        static_cast<double>(failed_attempts_));
  m.Set("bifrost_airflow_events_pending", "gauge",
        "Asset events in the ledger's outbox, not yet acknowledged.",
        static_cast<double>(pending_));
  m.Set("bifrost_airflow_events_dropped_total", "counter",
        "Asset events dropped: their asset stayed unknown to Airflow for an hour.",
        static_cast<double>(dropped_));
  m.Set("bifrost_airflow_token_fetches_total", "counter", "Airflow API tokens fetched or re-read.",
        static_cast<double>(token_fetches_));
}

}  // namespace bifrost
