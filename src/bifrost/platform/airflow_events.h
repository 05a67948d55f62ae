// Airflow 3 asset events (AIP-82) after Bifröst rounds: one event per table round that
// changed the graph, kept in the state ledger's outbox (written with the cursor), then
// POSTed to `/api/v2/assets/events`, oldest first, each acknowledged event once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bifrost/state/ledger.h"
#include "bifrost/sync/round.h"

namespace bifrost {

class Metrics;

struct AirflowOptions {
  std::string url;            // http(s)://HOST[:PORT][/PATH] of the api-server
  std::string token_file;     // a bearer token, read again after a 401
  std::string user;           // with password_file: a token from POST /auth/token
  std::string password_file;  // the password, its trailing newline dropped
  std::string asset_prefix = "skade://warehouse/";  // asset URI = prefix + table
  std::string graph;                                // named in each event's extra
  int timeout_ms = 10000;                           // of each HTTP request
};

/// Delivers the outbox to Airflow. Deliver, Publish and the setters are for one thread
/// at a time (the delivery's); EventFor, Maker's function and the counters may be used
/// from another (the round loop's) meanwhile.
class AirflowEvents {
 public:
  /// Checks the options (the URL's form, the flags' combination, that the token or
  /// password file can be read). Errors: kInvalidArgument naming the flag.
  static Result<std::unique_ptr<AirflowEvents>> Make(AirflowOptions options);

  /// The event of a table round the sink applied, if it changed the graph: JSON with
  /// the asset URI, a unique id and `extra` (the table's counts and snapshot ids).
  std::optional<std::string> EventFor(const TableRound& round, const TableState& from,
                                      const TableState& to) const;
  /// A Syncer::EventMaker calling EventFor.
  Syncer::EventMaker Maker() const;

  /// Sends what the outbox holds, oldest first, unless a failure's backoff is still
  /// running (`force` ignores it). Events of one asset stay in order; an asset Airflow
  /// does not know yet (its DAG not parsed) holds back only its own events, and those are
  /// dropped once older than an hour. An event that may have reached Airflow before (sent
  /// by an earlier process, or whose answer was lost) is looked up by its id first and
  /// not sent again if Airflow has it. Holds `lease_ledger`'s round lease meanwhile (the
  /// delivery lease: a sibling of `ledger`, see cli::DeliveryLedger, so a delivery never
  /// holds up a round), so instances sharing the ledger never send the same event (busy:
  /// nothing is sent). Never fails: problems are counted and returned as one line each.
  std::vector<std::string> Deliver(StateLedger& ledger, StateLedger& lease_ledger,
                                   std::chrono::milliseconds lease, bool force = false);

  /// Sets the bifrost_airflow_* families in `metrics`.
  void Publish(Metrics& metrics) const;

  /// Readable once the command should stop: a request under way is abandoned.
  void SetStopFd(int fd) { stop_fd_ = fd; }
  /// The graph named in each event's extra.
  void SetGraph(std::string graph) { options_.graph = std::move(graph); }
  int64_t pending() const { return pending_; }
  int64_t sent() const { return sent_; }
  /// Events EventFor made (one per table round that changed the graph).
  int64_t made() const { return made_; }
  /// When the backoff after a failed or held-back delivery ends.
  std::chrono::steady_clock::time_point next_try() const { return next_try_; }

 private:
  explicit AirflowEvents(AirflowOptions options);
  struct Answer;
  /// One request with the bearer token, fetching it first and again after a 401.
  Result<Answer> Call(const std::string& method, const std::string& path, const std::string& body);
  Status FetchToken();
  /// The asset id of `uri`; nullopt when Airflow has no such asset.
  Result<std::optional<int64_t>> AssetId(const std::string& uri);
  /// Whether Airflow already holds an event of `asset_id` with extra.bifrost_event_id `id`.
  Result<bool> AlreadyDelivered(int64_t asset_id, const std::string& id, int64_t enqueued_ms);
  /// Delivers one entry; true when it left the outbox.
  enum class Outcome { kDelivered, kHeldBack, kDropped };
  Result<Outcome> DeliverOne(StateLedger& ledger, const OutboxEntry& entry, std::string& note);

  AirflowOptions options_;
  int stop_fd_ = -1;
  std::string token_;
  std::optional<std::chrono::system_clock::time_point> token_expires_;
  std::map<std::string, int64_t> asset_ids_;  // by URI, as Airflow resolved them
  std::set<int64_t> in_doubt_;                // seqs this process sent without an answer
  mutable std::mutex mine_mu_;
  mutable std::set<std::string> mine_;        // ids of the events this process made
  std::chrono::steady_clock::time_point next_try_{};
  std::chrono::milliseconds backoff_{0};
  std::atomic<int64_t> sent_ = 0, failed_attempts_ = 0, pending_ = 0, dropped_ = 0, token_fetches_ = 0;
  mutable std::atomic<int64_t> made_ = 0;
};

}  // namespace bifrost
