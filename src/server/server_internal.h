// What the server's API surfaces share: the catalog, options, metrics, request
// helpers (bodies, errors in Iceberg's ErrorModel, the caller's name).
#pragma once

#include <httplib.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "server/metrics.h"
#include "server/server.h"
#include "skade/catalog/catalog.h"

namespace skade::server {

using Json = nlohmann::ordered_json;

struct ServerContext {
  Catalog& catalog;
  ServeOptions options;
  Metrics metrics;
  /// token → client name, from the token file.
  std::map<std::string, std::string> tokens;
  std::atomic<bool> stopping{false};
};

bool IsLoopback(const std::string& host);
/// Whether `uri` is this server's base URL (`http://127.0.0.1:8181`, a trailing `/` or
/// not; any loopback name when it listens on loopback): the REST catalog URI a client
/// like Spark was given.
bool IsOwnUri(const ServerContext& ctx, std::string_view uri);

/// `{"error":{"message","type","code"}}`, the warehouse prefix cut out of the message.
Json ErrorJson(const ServerContext& ctx, int code, const std::string& type, const std::string& message);
/// Answers with `{"error":{"message","type","code"}}`. Messages never carry the
/// server's file paths (the warehouse prefix is cut out).
void SendError(const ServerContext& ctx, httplib::Response& res, int code, const std::string& type,
               const std::string& message);
/// Answers a skade error with the HTTP code and exception type clients switch on.
void SendError(const ServerContext& ctx, httplib::Response& res, const Error& error);
void SendJson(httplib::Response& res, int code, const Json& body);
/// The request body as JSON (depth-checked); on failure a 400 has been sent.
std::optional<Json> ParseBody(const ServerContext& ctx, const httplib::Request& req,
                              httplib::Response& res);
/// The client's name: the token's name, else its User-Agent, else "anonymous".
std::string Caller(const ServerContext& ctx, const httplib::Request& req);

/// A `/commits` entry: the commit-log row plus the actor of its lineage event.
Json CommitJson(const CommitLogEntry& entry);

/// A namespace path segment (levels joined by %1F, as the REST catalog spells it) as
/// skade's dotted namespace. Errors: kInvalidArgument naming the bad level.
Result<std::string> NamespaceFromPath(const std::string& segment);

void AddRestCatalogRoutes(httplib::Server& http, ServerContext& ctx);
void AddOpenLineageRoutes(httplib::Server& http, ServerContext& ctx);
void AddEventRoutes(httplib::Server& http, ServerContext& ctx);
void AddWarehouseApiRoutes(httplib::Server& http, ServerContext& ctx);
void AddTableRowRoutes(httplib::Server& http, ServerContext& ctx);

}  // namespace skade::server
