// What the bifrost commands share: the warehouse, the graph server (embedded or
// given), the connection, the sink and the state ledger.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bifrost/mapping/mapping.h"
#include "bifrost/server/embedded_server.h"
#include "bifrost/sink/graph_sink.h"
#include "bifrost/source/parquet_folder_source.h"
#include "bifrost/source/rest_catalog_source.h"
#include "bifrost/source/spark_connect_source.h"
#include "bifrost/source/table_source.h"
#include "bifrost/state/ledger.h"
#include "skade/catalog/catalog.h"

namespace bifrost::cli {

struct Options {
  std::string warehouse;
  std::string mapping;
  std::string graph_url;   // empty: the embedded server
  std::string graph_name;  // empty: the mapping's `graph`
  std::string state;       // empty: a hash in the graph's server
  std::chrono::milliseconds timeout{30000};  // of each graph query
  int stop_fd = -1;  // readable once the command should stop (see interrupt.h)
};

/// A ledger for delivering Airflow events apart from the round loop: `ledger` on a
/// connection of its own (a file ledger: another handle on the file), and `lease`, whose
/// round lease is the delivery lease (a sibling name: `KEY:delivery`, `PATH.delivery`),
/// so deliverers sharing the ledger take turns without ever holding up a round.
struct DeliveryLedger {
  std::unique_ptr<RedisConnection> connection;
  std::unique_ptr<StateLedger> ledger, lease;
};

class Session {
 public:
  explicit Session(Options options) : options_(std::move(options)) {}

  /// Opens the warehouse's catalog (it must exist: `skade init`).
  Result<skade::Catalog*> Catalog();
  /// Loads the mapping and compiles it against the warehouse.
  Result<const std::vector<CompiledTable>*> Compile();
  /// The graph's name: --graph-name, else the mapping's.
  Result<std::string> GraphName();
  /// Connects (starting the embedded server when no --graph was given), then builds
  /// the sink and ledger on that connection. Safe to call again after a lost connection.
  Status Connect();
  /// Drops the connection, sink and ledger (after an I/O error), keeping the server.
  void Disconnect();

  /// The source of each compiled table: the warehouse, its Parquet drop folder, a
  /// REST catalog or a Spark Connect server.
  Result<TableSource*> Source();

  FalkorDbSink& sink() { return *sink_; }
  StateLedger& ledger() { return *ledger_; }
  /// Opens a DeliveryLedger on the ledger this session uses. The function holds copies,
  /// not the session, so any thread may call it. Call after a successful Connect.
  std::function<Result<DeliveryLedger>()> DeliveryLedgerOpener() const;
  std::string GraphAddress() const;

 private:
  /// Bounds `connection`'s commands by the query timeout and the stop.
  void Limit(RedisConnection& connection) const;
  Options options_;
  std::unique_ptr<skade::Catalog> catalog_;
  std::optional<MappingSpec> spec_;
  std::vector<CompiledTable> compiled_;
  bool compiled_ok_ = false;
  TransformRegistry registry_;
  std::map<std::string, std::unique_ptr<ParquetFolderSource>> folders_;  // by root
  std::map<std::string, ParquetFolderSource*> folder_of_;                // by table
  RestSources rest_;
  std::map<std::string, RestCatalogSource*> rest_of_;  // by table
  std::map<std::string, std::unique_ptr<SparkConnectSource>> sparks_;    // by url
  std::map<std::string, SparkConnectSource*> spark_of_;                  // by table
  std::unique_ptr<SkadeSource> warehouse_source_;
  std::unique_ptr<TableSource> source_;
  std::unique_ptr<EmbeddedServer> server_;
  ServerAddress graph_address_;  // of the last Connect
  std::string graph_key_;        // the default ledger's key in the graph's server
  std::unique_ptr<RedisConnection> connection_;
  std::unique_ptr<RedisConnection> ledger_connection_;
  std::unique_ptr<FalkorDbSink> sink_;
  std::unique_ptr<StateLedger> ledger_;
};

}  // namespace bifrost::cli
