// Where mutations go. FalkorDbSink MERGEs them into a FalkorDB graph over the Redis
// protocol: batched `UNWIND $rows` queries with parameters, an index on every
// label's key before the first write, counts from the server's statistics.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bifrost/mutation.h"
#include "bifrost/sink/redis_connection.h"

namespace bifrost {

class BulkGraph;
struct GraphNames;

/// Labels with the properties that key them.
using LabelKeys = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// What a sink did. Row counts are what was sent; the rest is the server's statistics.
struct SinkReport {
  int64_t vertex_rows = 0;
  int64_t edge_rows = 0;
  int64_t delete_rows = 0;
  int64_t nodes_created = 0;
  int64_t nodes_deleted = 0;
  int64_t relationships_created = 0;
  int64_t relationships_deleted = 0;
  int64_t properties_set = 0;
  int64_t queries = 0;

  void Add(const SinkReport& other);
};

class GraphSink {
 public:
  /// Called between the queries of a long Apply or Create; an error stops the write
  /// there (what was written stays: the caller replays the round).
  using Heartbeat = std::function<Status()>;

  virtual ~GraphSink() = default;
  void SetHeartbeat(Heartbeat heartbeat) { heartbeat_ = std::move(heartbeat); }
  /// Applies vertices, then edges, then edge deletes, then vertex deletes (DETACH).
  /// Idempotent: applying the same mutation twice leaves the graph as once.
  /// Errors: kInvalidArgument for a value the graph cannot store (column named),
  /// kIoError when the server is unreachable (retry later).
  virtual Result<SinkReport> Apply(const GraphMutation& mutation) = 0;
  /// Whether the graph exists yet. Errors: kIoError.
  virtual Result<bool> Exists() = 0;
  /// Creates the graph from `graph` in one load, appearing whole or not at all, and
  /// returns once it is indexed like Apply would leave it; nullopt (nothing written)
  /// when the graph exists already or `graph` is empty. With `replace`, the new graph (even an empty one)
  /// takes the place of any existing one. Errors: kIoError (retry later), kInternal.
  virtual Result<std::optional<SinkReport>> Create(const BulkGraph& graph, bool replace) = 0;

 protected:
  Status Beat() { return heartbeat_ ? heartbeat_() : Status{}; }

 private:
  Heartbeat heartbeat_;
};

class FalkorDbSink : public GraphSink {
 public:
  /// `connection` is borrowed and must outlive the sink.
  FalkorDbSink(RedisConnection& connection, std::string graph, int64_t batch_rows = 5000)
      : connection_(connection), graph_(std::move(graph)), batch_rows_(batch_rows) {}

  Result<SinkReport> Apply(const GraphMutation& mutation) override;
  Result<bool> Exists() override;
  /// GRAPH.BULK into a private key, RENAMENX (RENAME to replace) onto the graph's key,
  /// then the indexes, awaited: a crash leaves at most the private key, which the next
  /// Create removes, or an unindexed graph, which the next round indexes.
  Result<std::optional<SinkReport>> Create(const BulkGraph& graph, bool replace) override;

  /// Runs a read-only query; returns rows of JSON values, keyed by column name, one
  /// JSON object per line (nodes, edges and paths as JSON objects, see
  /// compact_values_internal.h). Errors: kInvalidArgument with the server's message,
  /// kNotFound for a graph that does not exist, kIoError on a timeout.
  Result<std::string> QueryJsonLines(const std::string& cypher);

 private:
  /// The per-query server timeout in ms: the connection's, capped by the server's
  /// TIMEOUT_MAX (asked once).
  Result<std::string> TimeoutArg();
  /// GRAPH.QUERY / GRAPH.RO_QUERY `text` with the timeout, compact; the server's
  /// "Query timed out" becomes kIoError naming the timeout.
  Result<Reply> Query(const char* command, const std::string& text);
  /// The graph's label, relationship-type and property-key names.
  Result<GraphNames> Names();
  /// Creates the indexes not made yet, then waits until they are operational.
  Status EnsureIndexes(const LabelKeys& wanted, SinkReport& report);
  Status AwaitIndexes();
  /// Deletes the keys matching a glob `pattern` (SCAN, then DEL).
  Status DeleteKeys(const std::string& pattern);
  Result<SinkReport> Run(const std::string& params, const std::string& body);
  /// Writes a set's rows in batches: `keys` encodes a row's key lists, properties
  /// (from column `first_prop`) ride as the map `p`; `match` finds an existing row's
  /// entity as `x` (for removing properties that became null).
  template <typename EncodeKeys>
  Status Send(const arrow::Table& rows, const std::vector<skade::TypePtr>& types, EncodeKeys keys,
              size_t first_prop, const std::vector<std::string>& props, const std::string& body,
              const std::string& match, SinkReport& report);

  RedisConnection& connection_;
  std::string graph_;
  int64_t batch_rows_;
  std::set<std::string> indexed_;  // "Label(k1,k2,)" already ensured
  std::string timeout_arg_;        // TimeoutArg(), once known
};

}  // namespace bifrost
