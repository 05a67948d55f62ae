#include "session.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace bifrost::cli {

using namespace std::chrono_literals;

namespace {

// Bounds a connection's commands by the query timeout and the stop. The server enforces
// the timeout itself; the client waits a little longer, so the server's own report
// (which leaves the connection usable) can come first.
void LimitConnection(RedisConnection& connection, const Options& options) {
  connection.SetTimeout(options.timeout, std::clamp<std::chrono::milliseconds>(
                                             options.timeout / 4, 200ms, 5000ms));
  connection.SetStopFd(options.stop_fd);
}

}  // namespace

Result<skade::Catalog*> Session::Catalog() {
  if (catalog_) return catalog_.get();
  if (!std::filesystem::exists(std::filesystem::path(options_.warehouse) / "catalog.db"))
    return skade::NotFound("no warehouse at '" + options_.warehouse +
                           "' (create it with `skade init`, or pass --warehouse)");
  SKADE_ASSIGN_OR_RETURN(catalog_, skade::Catalog::Open(options_.warehouse));
  return catalog_.get();
}

namespace {

// Each table to its source: the warehouse unless the mapping names a drop folder,
// a REST catalog or a Spark Connect server.
class RoutingSource : public TableSource {
 public:
  RoutingSource(TableSource* warehouse, std::map<std::string, TableSource*> by_table)
      : warehouse_(warehouse), by_table_(std::move(by_table)) {}
  Result<std::optional<Fetched>> FetchNew(const CompiledTable& table,
                                          const TableState& state) override {
    auto it = by_table_.find(table.spec.table);
    return (it == by_table_.end() ? *warehouse_ : *it->second).FetchNew(table, state);
  }

 private:
  TableSource* warehouse_;  // null when no table is the warehouse's
  std::map<std::string, TableSource*> by_table_;
};

}  // namespace

Result<const std::vector<CompiledTable>*> Session::Compile() {
  if (compiled_ok_) return &compiled_;
  if (options_.mapping.empty()) return skade::InvalidArgument("--mapping FILE is required");
  SKADE_ASSIGN_OR_RETURN(spec_, MappingSpec::Load(options_.mapping));
  folder_of_.clear();
  spark_of_.clear();
  rest_of_.clear();
  SchemaLookup from_catalog;
  for (const auto& t : spec_->tables) {
    if (t.source.empty() && !from_catalog) {
      SKADE_ASSIGN_OR_RETURN(auto* catalog, Catalog());
      from_catalog = CatalogSchemas(*catalog);
    }
    if (t.source.empty()) continue;
    if (t.source.starts_with("spark:")) {
      std::string url = t.source.substr(std::string_view("spark:").size());
      auto& spark = sparks_[url];
      if (!spark) {
        SKADE_ASSIGN_OR_RETURN(spark, SparkConnectSource::Open(url));
      }
      spark_of_[t.table] = spark.get();
      if (t.prune)
        return skade::InvalidArgument("table '" + t.table +
                                      "': 'prune' applies to warehouse tables, not Spark's");
      continue;
    }
    if (t.source.starts_with("rest:")) {
      SKADE_ASSIGN_OR_RETURN(rest_of_[t.table], rest_.For(t));
      continue;
    }
    std::string root = t.source.substr(std::string_view("parquet:").size());
    auto& folder = folders_[root];
    if (!folder) folder = std::make_unique<ParquetFolderSource>(root);
    folder_of_[t.table] = folder.get();
    if (!t.filter.empty())
      return skade::InvalidArgument("table '" + t.table +
                                    "': 'filter' applies to warehouse tables, not drop folders");
    if (t.mode == SyncMode::kCdc)
      return skade::InvalidArgument(
          "table '" + t.table +
          "': a Parquet drop folder has no changelog; use mode full or incremental");
  }
  SchemaLookup lookup =
      [&](const skade::TableIdent& ident) -> Result<std::shared_ptr<const skade::Schema>> {
    if (auto spark = spark_of_.find(ident.ToString()); spark != spark_of_.end())
      return spark->second->SchemaOf(ident.ToString());
    if (auto rest = rest_of_.find(ident.ToString()); rest != rest_of_.end())
      return rest->second->SchemaOf(ident);
    auto it = folder_of_.find(ident.ToString());
    return it == folder_of_.end() ? from_catalog(ident) : it->second->SchemaOf(ident.ToString());
  };
  SKADE_ASSIGN_OR_RETURN(compiled_, CompileMapping(*spec_, lookup, registry_));
  compiled_ok_ = true;
  return &compiled_;
}

Result<TableSource*> Session::Source() {
  if (source_) return source_.get();
  SKADE_RETURN_IF_ERROR(Compile());
  std::map<std::string, TableSource*> by_table(folder_of_.begin(), folder_of_.end());
  by_table.insert(rest_of_.begin(), rest_of_.end());
  by_table.insert(spark_of_.begin(), spark_of_.end());
  if (by_table.size() < compiled_.size()) {
    SKADE_ASSIGN_OR_RETURN(auto* catalog, Catalog());
    warehouse_source_ = std::make_unique<SkadeSource>(*catalog);
  }
  source_ = std::make_unique<RoutingSource>(warehouse_source_.get(), std::move(by_table));
  return source_.get();
}

Result<std::string> Session::GraphName() {
  if (!options_.graph_name.empty()) return options_.graph_name;
  if (options_.mapping.empty())
    return skade::InvalidArgument("name the graph with --graph-name or --mapping FILE");
  if (!spec_) {
    SKADE_ASSIGN_OR_RETURN(spec_, MappingSpec::Load(options_.mapping));
  }
  return spec_->graph;
}

std::string Session::GraphAddress() const {
  if (connection_) return connection_->address().ToString();
  return options_.graph_url.empty() ? "(embedded)" : options_.graph_url;
}

Status Session::Connect() {
  if (sink_) return {};
  SKADE_ASSIGN_OR_RETURN(std::string graph, GraphName());
  ServerAddress address;
  if (options_.graph_url.empty()) {
    if (!server_) {
      SKADE_ASSIGN_OR_RETURN(server_, EmbeddedServer::Start(options_.warehouse));
    }
    address = server_->address();
  } else {
    SKADE_ASSIGN_OR_RETURN(address, ServerAddress::Parse(options_.graph_url));
  }
  auto connection = RedisConnection::Connect(address, 2000ms);
  if (!connection && server_) {
    // The embedded server we attached to belonged to an instance that has exited.
    server_.reset();
    SKADE_ASSIGN_OR_RETURN(server_, EmbeddedServer::Start(options_.warehouse));
    connection = RedisConnection::Connect(server_->address(), 2000ms);
  }
  if (!connection) return std::unexpected(std::move(connection).error());
  connection_ = std::move(*connection);
  Limit(*connection_);
  graph_address_ = connection_->address();
  graph_key_ = "bifrost:state:" + graph;
  sink_ = std::make_unique<FalkorDbSink>(*connection_, graph);
  if (options_.state.empty()) {
    // Same server, same append-only log, written after the graph: never ahead of it.
    ledger_ = std::make_unique<RedisLedger>(*connection_, graph_key_);
  } else if (options_.state.starts_with("file:")) {
    ledger_ = std::make_unique<FileLedger>(options_.state.substr(5));
  } else {
    SKADE_ASSIGN_OR_RETURN(auto ledger_address, ServerAddress::Parse(options_.state));
    if (ledger_address.path.empty())
      return skade::InvalidArgument("--state " + options_.state +
                                    " needs a key: redis://HOST:PORT/KEY");
    SKADE_ASSIGN_OR_RETURN(ledger_connection_, RedisConnection::Connect(ledger_address, 2000ms));
    Limit(*ledger_connection_);
    ledger_ = std::make_unique<RedisLedger>(*ledger_connection_, ledger_address.path);
  }
  return {};
}

std::function<Result<DeliveryLedger>()> Session::DeliveryLedgerOpener() const {
  return [options = options_, address = graph_address_, key = graph_key_]() -> Result<DeliveryLedger> {
    DeliveryLedger out;
    if (options.state.starts_with("file:")) {
      std::string path = options.state.substr(5);
      out.ledger = std::make_unique<FileLedger>(path);
      out.lease = std::make_unique<FileLedger>(path + ".delivery");
      return out;
    }
    ServerAddress at = address;
    std::string at_key = key;
    if (!options.state.empty()) {
      SKADE_ASSIGN_OR_RETURN(at, ServerAddress::Parse(options.state));
      at_key = at.path;
    }
    SKADE_ASSIGN_OR_RETURN(out.connection, RedisConnection::Connect(at, 2000ms));
    LimitConnection(*out.connection, options);
    out.ledger = std::make_unique<RedisLedger>(*out.connection, at_key);
    out.lease = std::make_unique<RedisLedger>(*out.connection, at_key + ":delivery");
    return out;
  };
}

void Session::Limit(RedisConnection& connection) const { LimitConnection(connection, options_); }

void Session::Disconnect() {
  ledger_.reset();
  sink_.reset();
  ledger_connection_.reset();
  connection_.reset();
}

}  // namespace bifrost::cli
