// The Iceberg REST catalog (`/v1/...`, the REST OpenAPI spec of Iceberg 1.10):
// config, namespaces, tables, commits, multi-table transactions, metrics reports.
// Every change goes through the catalog's commit chokepoint like a CLI commit.
#include <mutex>
#include <regex>
#include <unordered_map>

#include "server/server_internal.h"
#include "server/table_updates.h"
#include "skade/catalog/names.h"
#include "skade/io/file_io.h"
#include "skade/table/snapshot_producer.h"
#include "skade/table/table.h"

namespace skade::server {
namespace {

// Routes take an optional prefix segment (`/v1/{prefix}/...`), as clients that
// derive one from the warehouse name use it.
const std::string kV1 = R"(/v1(?:/(?!namespaces|tables|transactions|config)[^/]+)?)";
const std::string kNs = kV1 + R"(/namespaces/([^/]+))";
const std::string kTable = kNs + R"(/tables/([^/]+))";

// The caller named on every commit it makes (lineage actor).
class CallerProvenance final : public ProvenanceSource {
 public:
  explicit CallerProvenance(std::string actor) : actor_(std::move(actor)) {}
  void OnRead(const TableIdent&, std::optional<int64_t>) override {}
  CommitProvenance Provenance() const override { return CommitProvenance{actor_, {}, ""}; }

 private:
  std::string actor_;
};

// REST namespaces are arrays of levels; skade joins them with '.'.
Result<std::string> NamespaceFromLevels(const Json& levels) {
  if (!levels.is_array() || levels.empty())
    return InvalidArgument("'namespace' must be a non-empty array of names");
  std::string ns;
  for (const auto& l : levels) {
    if (!l.is_string()) return InvalidArgument("namespace levels must be strings");
    std::string level = l.get<std::string>();
    if (level.find('.') != std::string::npos)
      return InvalidArgument("namespace level '" + level +
                             "' holds a '.', which skade uses between levels");
    ns += (ns.empty() ? "" : ".") + level;
  }
  SKADE_RETURN_IF_ERROR(ValidateNamespaceName(ns));
  return ns;
}

}  // namespace

Result<std::string> NamespaceFromPath(const std::string& segment) {
  Json levels = Json::array();
  size_t start = 0;
  while (true) {
    size_t sep = segment.find('\x1f', start);
    levels.push_back(
        segment.substr(start, sep == std::string::npos ? std::string::npos : sep - start));
    if (sep == std::string::npos) break;
    start = sep + 1;
  }
  return NamespaceFromLevels(levels);
}

namespace {

Json Levels(const std::string& ns) {
  Json out = Json::array();
  size_t start = 0;
  while (true) {
    size_t dot = ns.find('.', start);
    out.push_back(ns.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

bool ParseBool(const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t == "true" || t == "1";
}

// `pageToken` is the offset of the page; `pageSize` its length (all when absent).
template <typename T>
Json Page(const std::vector<T>& all, const httplib::Request& req, const char* key,
          const std::function<Json(const T&)>& to_json) {
  size_t offset = 0, size = all.size();
  if (req.has_param("pageToken") && !req.get_param_value("pageToken").empty())
    offset = std::min<size_t>(all.size(),
                              std::strtoull(req.get_param_value("pageToken").c_str(), nullptr, 10));
  if (req.has_param("pageSize"))
    size = std::max<size_t>(1, std::strtoull(req.get_param_value("pageSize").c_str(), nullptr, 10));
  Json out = Json::object();
  out[key] = Json::array();
  for (size_t i = offset; i < all.size() && i < offset + size; ++i)
    out[key].push_back(to_json(all[i]));
  out["next-page-token"] =
      offset + size < all.size() ? Json(std::to_string(offset + size)) : Json(nullptr);
  return out;
}

// The engine a REST commit is logged under: what its snapshot says it is
// (`engine-name`, as Spark writes), else the client's product (`PyIceberg/0.12` →
// `pyiceberg`; Iceberg's Java client → `iceberg-java`), set per request.
thread_local std::string client_engine;

std::string EngineOf(const Json& updates) {
  if (updates.is_array())
    for (const auto& u : updates)
      if (u.is_object() && u.value("action", "") == "add-snapshot" && u.contains("snapshot") &&
          u["snapshot"].contains("summary") && u["snapshot"]["summary"].contains("engine-name") &&
          u["snapshot"]["summary"]["engine-name"].is_string())
        return u["snapshot"]["summary"]["engine-name"].get<std::string>();
  return client_engine;
}

std::string ClientEngine(const httplib::Request& req) {
  // Iceberg's Java client (Spark, Flink, Trino) names only its HTTP library as User-Agent.
  if (req.get_header_value("X-Client-Version").starts_with("Apache Iceberg")) return "iceberg-java";
  std::string agent = req.get_header_value("User-Agent");
  std::string product = agent.substr(0, agent.find_first_of("/ "));
  std::string out;
  for (char c : product)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out.empty() ? "rest" : out.substr(0, 40);
}

Json LoadResult(const LoadedTable& t) {
  return Json{{"metadata-location", t.metadata_location},
              {"metadata", Json::parse(TableMetadataToJson(*t.metadata))},
              {"config", Json::object()}};
}

// The catalog's errors in the wording Iceberg's clients check for.
Error IcebergWording(Error e) {
  static const std::regex kTableExists(R"(^table (\S+) already exists)");
  static const std::regex kTableMissing(R"(^table (\S+) does not exist)");
  static const std::regex kNsExists(R"(^namespace '([^']*)' already exists)");
  static const std::regex kNsMissing(R"(^namespace '([^']*)' does not exist.*)");
  static const std::regex kNsNotEmpty(R"(^namespace '([^']*)' is not empty.*)");
  std::smatch m;
  if (std::regex_search(e.message, m, kTableExists)) e.message = "Table already exists: " + m[1].str();
  else if (std::regex_search(e.message, m, kTableMissing)) e.message = "Table does not exist: " + m[1].str();
  else if (std::regex_search(e.message, m, kNsExists)) e.message = "Namespace already exists: " + m[1].str();
  else if (std::regex_search(e.message, m, kNsMissing)) e.message = "Namespace does not exist: " + m[1].str();
  else if (std::regex_search(e.message, m, kNsNotEmpty)) e.message = "Namespace " + m[1].str() + " is not empty";
  return e;
}

class RestCatalog : public std::enable_shared_from_this<RestCatalog> {
 public:
  explicit RestCatalog(ServerContext& ctx) : ctx_(ctx), catalog_(ctx.catalog) {}

  void Register(httplib::Server& http) {
    using Req = const httplib::Request&;
    using Res = httplib::Response&;
    http.Get(kV1 + "/config",
             [self = shared_from_this()](Req req, Res res) { self->Config(req, res); });
    http.Get(kV1 + "/namespaces",
             [self = shared_from_this()](Req req, Res res) { self->ListNamespaces(req, res); });
    http.Post(kV1 + "/namespaces", [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::CreateNamespace);
    });
    http.Get(kNs, [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::LoadNamespace);
    });
    http.Delete(kNs, [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::DropNamespace);
    });
    http.Post(kNs + "/properties", [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::UpdateProperties);
    });
    http.Get(kNs + "/tables", [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::ListTables);
    });
    http.Post(kNs + "/tables", [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::CreateTable);
    });
    http.Post(kNs + "/register", [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::RegisterTable);
    });
    http.Get(kTable, [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::LoadTable);
    });
    http.Post(kTable, [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::CommitTable);
    });
    http.Delete(kTable, [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::DropTable);
    });
    http.Post(kTable + "/metrics", [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::Metrics);
    });
    http.Post(kV1 + "/tables/rename", [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::RenameTable);
    });
    http.Post(kV1 + "/transactions/commit", [self = shared_from_this()](Req req, Res res) {
      self->Guard(req, res, &RestCatalog::Transaction);
    });
  }

 private:
  using Handler = Status (RestCatalog::*)(const httplib::Request&, httplib::Response&);

  // Runs a handler with the caller as the actor of its commits; a returned error
  // becomes the ErrorModel answer.
  void Guard(const httplib::Request& req, httplib::Response& res, Handler h) {
    CallerProvenance caller(Caller(ctx_, req));
    ScopedProvenanceSource scope(&caller);
    client_engine = ClientEngine(req);
    Status st = (this->*h)(req, res);
    if (!st) SendError(ctx_, res, IcebergWording(st.error()));
  }

  // 404s in the words Iceberg's clients and its compatibility kit expect. A table
  // route answers NoSuchTable even when the namespace is missing (clients fall back
  // to metadata tables on it); creating in a missing namespace is NoSuchNamespace.
  Status TableNotFound(httplib::Response& res, const TableIdent& ident) {
    SendError(ctx_, res, 404, "NoSuchTableException", "Table does not exist: " + ident.ToString());
    return {};
  }
  Status NamespaceNotFound(httplib::Response& res, const std::string& ns) {
    SendError(ctx_, res, 404, "NoSuchNamespaceException", "Namespace does not exist: " + ns);
    return {};
  }

  Result<TableIdent> Ident(const httplib::Request& req) {
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromPath(req.matches[1]));
    std::string name = req.matches[2];
    SKADE_RETURN_IF_ERROR(ValidateTableName(name));
    return TableIdent{ns, name};
  }

  Result<TableIdent> IdentFromJson(const Json& j) {
    if (!j.is_object() || !j.contains("namespace") || !j.contains("name") || !j["name"].is_string())
      return InvalidArgument("a table identifier needs 'namespace' and 'name'");
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromLevels(j["namespace"]));
    std::string name = j["name"].get<std::string>();
    SKADE_RETURN_IF_ERROR(ValidateTableName(name));
    return TableIdent{ns, name};
  }

  // Locations a client may give: under the warehouse (or a folder the operator
  // allowed with --allow-location), nowhere else.
  Status CheckLocation(const std::string& location) {
    if (location.find("://") != std::string::npos && !location.starts_with("file:"))
      return InvalidArgument("location '" + location + "': only file locations inside the warehouse are served");
    std::string path = LocalPath(location);
    if (path.find("/../") != std::string::npos || path.ends_with("/..") || path.starts_with("../"))
      return InvalidArgument("location '" + location + "' holds '..'");
    if (path.empty() || path[0] != '/') return InvalidArgument("location '" + location + "' is not an absolute path");
    if (IsInside(path, catalog_.warehouse())) return {};
    for (const auto& allowed : ctx_.options.allow_locations)
      if (IsInside(path, allowed)) return {};
    return InvalidArgument("location '" + location + "' lies outside the warehouse");
  }

  void Config(const httplib::Request&, httplib::Response& res) {
    Json endpoints = Json::array();
    for (const char* e :
         {"GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
          "GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
          "DELETE /v1/{prefix}/namespaces/{namespace}",
          "POST /v1/{prefix}/namespaces/{namespace}/properties",
          "GET /v1/{prefix}/namespaces/{namespace}/tables",
          "POST /v1/{prefix}/namespaces/{namespace}/tables",
          "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "POST /v1/{prefix}/namespaces/{namespace}/register", "POST /v1/{prefix}/tables/rename",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
          "POST /v1/{prefix}/transactions/commit"})
      endpoints.push_back(e);
    SendJson(
        res, 200,
        Json{
            {"defaults", Json::object()}, {"overrides", Json::object()}, {"endpoints", endpoints}});
  }

  void ListNamespaces(const httplib::Request& req, httplib::Response& res) {
    Status st = [&]() -> Status {
      std::optional<std::string> parent;
      if (req.has_param("parent") && !req.get_param_value("parent").empty()) {
        SKADE_ASSIGN_OR_RETURN(parent, NamespaceFromPath(req.get_param_value("parent")));
        SKADE_ASSIGN_OR_RETURN(bool exists, catalog_.NamespaceExists(*parent));
        if (!exists) {
          return NamespaceNotFound(res, *parent);
        }
      }
      SKADE_ASSIGN_OR_RETURN(auto all, catalog_.ListNamespaces());
      // The children one level below the parent (or the top level), each once.
      std::set<std::string> seen;
      std::vector<std::string> children;
      std::string prefix = parent ? *parent + "." : "";
      for (const auto& ns : all) {
        if (ns == "_skade" || !ns.starts_with(prefix) || ns.size() == prefix.size()) continue;
        std::string child = ns.substr(0, ns.find('.', prefix.size()));
        if (seen.insert(child).second) children.push_back(child);
      }
      SendJson(res, 200, Page<std::string>(children, req, "namespaces", [](const std::string& ns) {
                 return Levels(ns);
               }));
      return {};
    }();
    if (!st) SendError(ctx_, res, st.error());
  }

  Status CreateNamespace(const httplib::Request& req, httplib::Response& res) {
    auto body = ParseBody(ctx_, req, res);
    if (!body) return {};
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromLevels(body->value("namespace", Json())));
    std::map<std::string, std::string> props;
    if (auto it = body->find("properties"); it != body->end() && it->is_object())
      for (const auto& [k, v] : it->items()) {
        if (!v.is_string())
          return InvalidArgument("namespace property '" + k + "' must be a string");
        props[k] = v.get<std::string>();
      }
    if (ns == "_skade")
      return InvalidArgument("namespace '_skade' is reserved for skade's own tables");
    SKADE_RETURN_IF_ERROR(catalog_.CreateNamespace(ns, props));
    SendJson(res, 200, Json{{"namespace", Levels(ns)}, {"properties", props}});
    return {};
  }

  Status LoadNamespace(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromPath(req.matches[1]));
    auto props = catalog_.NamespaceProperties(ns);
    if (!props && props.error().kind == ErrorKind::kNotFound) {
      return NamespaceNotFound(res, ns);
    }
    if (!props) return std::unexpected(props.error());
    if (req.method == "HEAD")
      res.status = 204;
    else
      SendJson(res, 200, Json{{"namespace", Levels(ns)}, {"properties", *props}});
    return {};
  }

  Status DropNamespace(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromPath(req.matches[1]));
    SKADE_ASSIGN_OR_RETURN(auto all, catalog_.ListNamespaces());
    for (const auto& other : all)
      if (other.starts_with(ns + ".")) {
        SendError(ctx_, res, 409, "NamespaceNotEmptyException",
                  "Namespace " + ns + " is not empty: it holds namespace " + other);
        return {};
      }
    Status st = catalog_.DropNamespace(ns);
    if (!st && st.error().kind == ErrorKind::kNotFound) {
      return NamespaceNotFound(res, ns);
    }
    SKADE_RETURN_IF_ERROR(st);
    res.status = 204;
    return {};
  }

  Status UpdateProperties(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromPath(req.matches[1]));
    auto body = ParseBody(ctx_, req, res);
    if (!body) return {};
    std::vector<std::string> removals;
    std::map<std::string, std::string> updates;
    if (auto it = body->find("removals"); it != body->end() && it->is_array())
      for (const auto& k : *it)
        if (k.is_string()) removals.push_back(k.get<std::string>());
    if (auto it = body->find("updates"); it != body->end() && it->is_object())
      for (const auto& [k, v] : it->items()) {
        if (!v.is_string())
          return InvalidArgument("namespace property '" + k + "' must be a string");
        updates[k] = v.get<std::string>();
      }
    auto missing = catalog_.UpdateNamespaceProperties(ns, removals, updates);
    if (!missing && missing.error().kind == ErrorKind::kNotFound) {
      return NamespaceNotFound(res, ns);
    }
    if (!missing && missing.error().kind == ErrorKind::kInvalidArgument) {
      SendError(ctx_, res, 422, "UnprocessableEntityException", missing.error().message);
      return {};
    }
    SKADE_RETURN_IF_ERROR(missing);
    Json updated = Json::array(), removed = Json::array();
    for (const auto& [k, v] : updates) updated.push_back(k);
    for (const auto& k : removals)
      if (std::find(missing->begin(), missing->end(), k) == missing->end()) removed.push_back(k);
    SendJson(res, 200, Json{{"updated", updated}, {"removed", removed}, {"missing", *missing}});
    return {};
  }

  Status ListTables(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromPath(req.matches[1]));
    SKADE_ASSIGN_OR_RETURN(bool exists, catalog_.NamespaceExists(ns));
    if (!exists) {
      return NamespaceNotFound(res, ns);
    }
    SKADE_ASSIGN_OR_RETURN(auto tables, catalog_.ListTables(std::string_view(ns)));
    SendJson(res, 200, Page<TableIdent>(tables, req, "identifiers", [](const TableIdent& t) {
               return Json{{"namespace", Levels(t.ns)}, {"name", t.name}};
             }));
    return {};
  }

  Status CreateTable(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromPath(req.matches[1]));
    auto body = ParseBody(ctx_, req, res);
    if (!body) return {};
    if (!body->contains("name") || !(*body)["name"].is_string())
      return InvalidArgument("create request lacks 'name'");
    TableIdent ident{ns, (*body)["name"].get<std::string>()};
    SKADE_RETURN_IF_ERROR(ValidateTableName(ident.name));
    SKADE_ASSIGN_OR_RETURN(bool ns_exists, catalog_.NamespaceExists(ns));
    if (!ns_exists) {
      return NamespaceNotFound(res, ns);
    }
    std::string location;
    if (body->contains("location") && (*body)["location"].is_string() &&
        !(*body)["location"].get<std::string>().empty()) {
      location = (*body)["location"].get<std::string>();
      while (location.size() > 1 && location.back() == '/') location.pop_back();
      SKADE_RETURN_IF_ERROR(CheckLocation(location));
    } else {
      SKADE_ASSIGN_OR_RETURN(location, catalog_.DefaultLocation(ident));
    }
    SKADE_ASSIGN_OR_RETURN(TableMetadata m, MetadataForCreate(*body, location));
    if (body->value("stage-create", false)) {
      // Nothing is stored: the commit that follows (assert-create) creates the table.
      SKADE_ASSIGN_OR_RETURN(auto existing, catalog_.ListTables(std::string_view(ns)));
      if (std::find(existing.begin(), existing.end(), ident) != existing.end())
        return MakeError(ErrorKind::kAlreadyExists,
                         "table " + ident.ToString() + " already exists");
      SendJson(res, 200,
               Json{{"metadata", Json::parse(TableMetadataToJson(m))}, {"config", Json::object()}});
      return {};
    }
    SKADE_ASSIGN_OR_RETURN(
        auto created, catalog_.CreateTable(ident, std::make_shared<TableMetadata>(std::move(m))));
    SendJson(res, 200, LoadResult(created));
    return {};
  }

  Status RegisterTable(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(std::string ns, NamespaceFromPath(req.matches[1]));
    auto body = ParseBody(ctx_, req, res);
    if (!body) return {};
    if (!body->contains("name") || !(*body)["name"].is_string() ||
        !body->contains("metadata-location") || !(*body)["metadata-location"].is_string())
      return InvalidArgument("register needs 'name' and 'metadata-location'");
    TableIdent ident{ns, (*body)["name"].get<std::string>()};
    std::string meta = (*body)["metadata-location"].get<std::string>();
    SKADE_RETURN_IF_ERROR(CheckLocation(meta));
    SKADE_ASSIGN_OR_RETURN(bool ns_exists, catalog_.NamespaceExists(ns));
    if (!ns_exists) {
      return NamespaceNotFound(res, ns);
    }
    SKADE_ASSIGN_OR_RETURN(auto t, catalog_.RegisterTable(ident, meta));
    SKADE_RETURN_IF_ERROR(CheckLocation(t.metadata->location));
    SendJson(res, 200, LoadResult(t));
    return {};
  }

  // Metadata files never change once written, so their checked text is kept by
  // location: a load is then one catalog lookup.
  Result<std::shared_ptr<const std::string>> MetadataText(const std::string& location) {
    {
      std::lock_guard lock(cache_mu_);
      if (auto it = metadata_cache_.find(location); it != metadata_cache_.end()) return it->second;
    }
    SKADE_ASSIGN_OR_RETURN(std::string text, catalog_.io().ReadFile(location));
    auto parsed = ParseTableMetadata(text);
    if (!parsed) return std::unexpected(std::move(parsed).error().WithContext(LocalPath(location)));
    auto shared = std::make_shared<const std::string>(std::move(text));
    std::lock_guard lock(cache_mu_);
    if (metadata_cache_.size() >= 512) metadata_cache_.clear();
    metadata_cache_[location] = shared;
    return shared;
  }

  Status LoadTable(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(TableIdent ident, Ident(req));
    SKADE_ASSIGN_OR_RETURN(auto location, catalog_.MetadataLocation(ident));
    if (!location) return TableNotFound(res, ident);
    SKADE_ASSIGN_OR_RETURN(auto text, MetadataText(*location));
    if (req.method == "HEAD") {
      res.status = 204;
      return {};
    }
    // The file's own JSON is the answer's `metadata`, spliced in rather than re-encoded.
    res.status = 200;
    res.set_content("{\"metadata-location\":" + Json(*location).dump() + ",\"metadata\":" + *text +
                        ",\"config\":{}}",
                    "application/json");
    return {};
  }

  // One table's part of a commit: the new metadata to publish (not yet written).
  struct Prepared {
    TableIdent ident;
    std::optional<LoadedTable> base;  // none: the commit creates the table
    TableMetadata next;
    std::string operation;
    std::string engine;
  };

  Result<Prepared> Prepare(const TableIdent& ident, const Json& change) {
    auto base = catalog_.LoadTable(ident);
    bool creating = false;
    if (!base) {
      if (base.error().kind != ErrorKind::kNotFound) return std::unexpected(base.error());
      const Json& reqs = change.value("requirements", Json::array());
      creating = std::any_of(reqs.begin(), reqs.end(), [](const Json& r) {
        return r.is_object() && r.value("type", "") == "assert-create";
      });
      if (!creating) return std::unexpected(base.error());
    }
    std::string new_location;
    if (creating) {
      SKADE_ASSIGN_OR_RETURN(new_location, catalog_.DefaultLocation(ident));
    }
    const Json& updates = change.contains("updates") ? change["updates"] : Json::array();
    SKADE_ASSIGN_OR_RETURN(
        TableMetadata next,
        ApplyCommit(creating ? nullptr : base->metadata.get(),
                    change.value("requirements", Json::array()), updates, new_location));
    SKADE_RETURN_IF_ERROR(CheckLocation(next.location));
    Prepared p{ident, std::nullopt, std::move(next), CommitOperation(updates), EngineOf(updates)};
    if (!creating) p.base = *base;
    return p;
  }

  // Publishes prepared changes in one catalog transaction; a table that another
  // commit changed meanwhile is prepared again (the server-side retry), its
  // requirements checked against what is current.
  Result<std::vector<LoadedTable>> Publish(
      const std::vector<std::pair<TableIdent, Json>>& changes) {
    for (int attempt = 1;; ++attempt) {
      std::vector<Prepared> prepared;
      for (const auto& [ident, change] : changes) {
        SKADE_ASSIGN_OR_RETURN(auto p, Prepare(ident, change));
        prepared.push_back(std::move(p));
      }
      // A create is its own catalog insert; the spec makes it a single-table commit.
      if (prepared.size() == 1 && !prepared[0].base) {
        SKADE_ASSIGN_OR_RETURN(
            auto created, catalog_.CreateTable(prepared[0].ident,
                                               std::make_shared<TableMetadata>(prepared[0].next)));
        return std::vector<LoadedTable>{created};
      }
      std::vector<TableCommit> commits;
      std::vector<LoadedTable> out;
      for (auto& p : prepared) {
        if (!p.base)
          return InvalidArgument("a transaction cannot create table " + p.ident.ToString());
        TableMetadata& next = p.next;
        const LoadedTable& base = *p.base;
        next.last_updated_ms = std::max(NowMs(), base.metadata->last_updated_ms);
        RecordPreviousMetadata(next, *base.metadata, base.metadata_location);
        std::string location = NextMetadataLocation(next.location, base.metadata_location);
        SKADE_RETURN_IF_ERROR(catalog_.io().WriteNewFile(location, TableMetadataToJson(next)));
        commits.push_back(TableCommit{p.ident,
                                      base.metadata_location,
                                      location,
                                      next.current_snapshot_id,
                                      p.operation,
                                      {},
                                      p.engine});
        out.push_back(LoadedTable{p.ident, location, std::make_shared<TableMetadata>(next)});
      }
      auto seqs = catalog_.Commit(commits);
      if (seqs) {
        ctx_.metrics.CountCommit(false);
        for (size_t i = 0; i < prepared.size(); ++i)
          DeleteTrimmedMetadata(*prepared[i].base, *out[i].metadata);
        return out;
      }
      for (const auto& c : commits) (void)catalog_.io().DeleteFile(c.new_location);
      if (seqs.error().kind != ErrorKind::kCommitConflict || attempt >= 30)
        return std::unexpected(seqs.error());
      ctx_.metrics.CountCommit(true);
    }
  }

  // `write.metadata.delete-after-commit.enabled`: metadata files that fell out of
  // the log are deleted, as Iceberg's writers do.
  void DeleteTrimmedMetadata(const LoadedTable& base, const TableMetadata& next) {
    if (next.Property("write.metadata.delete-after-commit.enabled", "false") != "true") return;
    std::set<std::string> kept;
    for (const auto& e : next.metadata_log) kept.insert(e.metadata_file);
    for (const auto& e : base.metadata->metadata_log)
      if (!kept.contains(e.metadata_file) && IsInside(LocalPath(e.metadata_file), next.location))
        (void)catalog_.io().DeleteFile(e.metadata_file);
  }

  Status CommitTable(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(TableIdent ident, Ident(req));
    auto body = ParseBody(ctx_, req, res);
    if (!body) return {};
    if (!body->is_object()) return InvalidArgument("a commit must be a JSON object");
    auto done = Publish({{ident, *body}});
    if (!done && done.error().kind == ErrorKind::kNotFound) return TableNotFound(res, ident);
    if (!done && done.error().kind == ErrorKind::kCommitConflict) ctx_.metrics.CountCommit(true);
    SKADE_RETURN_IF_ERROR(done);
    // The metadata's JSON spliced in as written, not parsed and encoded again.
    res.status = 200;
    res.set_content("{\"metadata-location\":" + Json(done->front().metadata_location).dump() +
                        ",\"metadata\":" + TableMetadataToJson(*done->front().metadata) + "}",
                    "application/json");
    return {};
  }

  Status Transaction(const httplib::Request& req, httplib::Response& res) {
    auto body = ParseBody(ctx_, req, res);
    if (!body) return {};
    const Json& list = body->value("table-changes", Json());
    if (!list.is_array() || list.empty())
      return InvalidArgument("'table-changes' must be a non-empty array");
    std::vector<std::pair<TableIdent, Json>> changes;
    for (const auto& c : list) {
      SKADE_ASSIGN_OR_RETURN(TableIdent ident, IdentFromJson(c.value("identifier", Json())));
      changes.emplace_back(ident, c);
    }
    auto done = Publish(changes);
    if (!done && done.error().kind == ErrorKind::kNotFound) {
      SendError(ctx_, res, 404, "NoSuchTableException", done.error().message);
      return {};
    }
    SKADE_RETURN_IF_ERROR(done);
    res.status = 204;
    return {};
  }

  Status DropTable(const httplib::Request& req, httplib::Response& res) {
    SKADE_ASSIGN_OR_RETURN(TableIdent ident, Ident(req));
    auto t = catalog_.LoadTable(ident);
    if (!t && t.error().kind == ErrorKind::kNotFound) return TableNotFound(res, ident);
    SKADE_RETURN_IF_ERROR(t);
    SKADE_RETURN_IF_ERROR(catalog_.DropTable(ident));
    if (req.has_param("purgeRequested") && ParseBool(req.get_param_value("purgeRequested"))) {
      // The table is gone from the catalog first, so no reader finds it half deleted.
      SKADE_RETURN_IF_ERROR(PurgeDroppedTable(catalog_, t->metadata->location));
    }
    res.status = 204;
    return {};
  }

  Status RenameTable(const httplib::Request& req, httplib::Response& res) {
    auto body = ParseBody(ctx_, req, res);
    if (!body) return {};
    SKADE_ASSIGN_OR_RETURN(TableIdent from, IdentFromJson(body->value("source", Json())));
    SKADE_ASSIGN_OR_RETURN(TableIdent to, IdentFromJson(body->value("destination", Json())));
    SKADE_ASSIGN_OR_RETURN(bool to_ns, catalog_.NamespaceExists(to.ns));
    if (!to_ns) {
      return NamespaceNotFound(res, to.ns);
    }
    Status st = catalog_.RenameTable(from, to);
    if (!st && st.error().kind == ErrorKind::kNotFound) return TableNotFound(res, from);
    SKADE_RETURN_IF_ERROR(st);
    res.status = 204;
    return {};
  }

  Status Metrics(const httplib::Request& req, httplib::Response& res) {
    auto body = ParseBody(ctx_, req, res);
    if (!body) return {};
    res.status = 204;
    return {};
  }

  ServerContext& ctx_;
  Catalog& catalog_;
  std::mutex cache_mu_;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> metadata_cache_;
};

}  // namespace

void AddRestCatalogRoutes(httplib::Server& http, ServerContext& ctx) {
  // The routes own the handler object.
  std::make_shared<RestCatalog>(ctx)->Register(http);
}

}  // namespace skade::server
