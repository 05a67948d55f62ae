// The state ledger: each table's cursor, advanced only after the sink has applied the
// round (a crash replays the round; MERGE makes the replay harmless).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "bifrost/sink/redis_connection.h"
#include "bifrost/source/table_source.h"

namespace bifrost {

/// An event waiting in the ledger's outbox to be delivered (see platform/airflow_events.h).
struct OutboxEntry {
  int64_t seq = 0;   // ascending in the order the events were enqueued
  std::string body;  // JSON text
};

class StateLedger {
 public:
  virtual ~StateLedger() = default;
  /// The cursor of `table` (empty when never synced). Errors: kIoError, kCorrupt.
  virtual Result<TableState> Get(const std::string& table) = 0;
  /// Stores `state` durably before returning. Errors: kIoError; kCommitConflict when
  /// this instance took the round lease and no longer holds it.
  virtual Status Advance(const std::string& table, const TableState& state) = 0;
  /// Advance, and in the same durable write appends `event` (JSON text) to the outbox,
  /// so a crash keeps both or neither. Errors as Advance's.
  virtual Status AdvanceAndEnqueue(const std::string& table, const TableState& state,
                                   const std::string& event) = 0;
  /// The outbox, oldest first. Errors: kIoError, kCorrupt.
  virtual Result<std::vector<OutboxEntry>> Outbox() = 0;
  /// Removes the entry `seq` (delivered) durably; a missing one is not an error.
  virtual Status Dequeue(int64_t seq) = 0;
  /// Every table's cursor, as JSON (for `bifrost state show`).
  virtual Result<std::string> ToJson() = 0;
  /// Where the ledger lives (file:PATH or redis://…/KEY).
  virtual std::string Describe() const = 0;
  /// Takes (or extends) the right to run a round, so instances sharing the ledger
  /// never interleave rounds: false when another instance holds it. A holder that
  /// dies without releasing blocks others for at most `ttl`.
  virtual Result<bool> AcquireRound(std::chrono::milliseconds ttl) = 0;
  virtual void ReleaseRound() = 0;
};

/// A JSON file replaced atomically (write, fsync, rename, fsync the folder).
/// For one process at a time.
class FileLedger : public StateLedger {
 public:
  explicit FileLedger(std::string path) : path_(std::move(path)) {}
  Result<TableState> Get(const std::string& table) override;
  Status Advance(const std::string& table, const TableState& state) override;
  /// The outbox is a member of the same JSON file, replaced in the same rename.
  Status AdvanceAndEnqueue(const std::string& table, const TableState& state,
                           const std::string& event) override;
  Result<std::vector<OutboxEntry>> Outbox() override;
  Status Dequeue(int64_t seq) override;
  Result<std::string> ToJson() override;
  std::string Describe() const override { return "file:" + path_; }
  /// An flock on PATH.lock, which the kernel drops when the holder dies.
  Result<bool> AcquireRound(std::chrono::milliseconds ttl) override;
  void ReleaseRound() override;
  ~FileLedger() override { ReleaseRound(); }

 private:
  Result<std::map<std::string, TableState>> Read();
  /// The file's JSON object ({} when never written).
  Result<nlohmann::json> ReadJson();
  Status Write(const nlohmann::json& j);
  std::string path_;
  int lock_fd_ = -1;
};

/// A hash in a Valkey/Redis server (field = table, value = JSON), shared by every
/// instance that names the same key. Kept in the graph's own server by default, so
/// it is persisted in the same append-only log as the graph, after the graph writes.
class RedisLedger : public StateLedger {
 public:
  /// `connection` is borrowed.
  RedisLedger(RedisConnection& connection, std::string key)
      : connection_(connection), key_(std::move(key)) {}
  Result<TableState> Get(const std::string& table) override;
  Status Advance(const std::string& table, const TableState& state) override;
  /// The outbox is the hash `KEY:outbox` (field = seq), written by the same script as
  /// the cursor, so the server applies both at once.
  Status AdvanceAndEnqueue(const std::string& table, const TableState& state,
                           const std::string& event) override;
  Result<std::vector<OutboxEntry>> Outbox() override;
  Status Dequeue(int64_t seq) override;
  Result<std::string> ToJson() override;
  std::string Describe() const override { return connection_.address().ToString() + "/" + key_; }
  /// A lease key `KEY:lease` holding this instance's token, with `ttl` expiry.
  Result<bool> AcquireRound(std::chrono::milliseconds ttl) override;
  void ReleaseRound() override;

 private:
  Status FencedAdvance(const std::string& table, const TableState& state, const std::string& event);
  RedisConnection& connection_;
  std::string key_;
  std::string token_;
};

}  // namespace bifrost
