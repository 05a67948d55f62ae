#include "server/server.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "server/server_internal.h"
#include "skade/common/nesting.h"
#include "skade/io/file_io.h"

namespace skade::server {

bool IsLoopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

bool IsOwnUri(const ServerContext& ctx, std::string_view uri) {
  bool tls = uri.starts_with("https://");
  if (!tls && !uri.starts_with("http://")) return false;
  uri.remove_prefix(tls ? 8 : 7);
  while (uri.ends_with('/')) uri.remove_suffix(1);
  if (uri.find('/') != std::string_view::npos) return false;  // a path: some other service
  std::string host(uri);
  int port = tls ? 443 : 80;
  if (auto colon = host.rfind(':'); colon != std::string::npos && host.find(']', colon) == std::string::npos) {
    auto parsed = ParseListen(host);
    if (!parsed) return false;
    std::tie(host, port) = *parsed;
  } else if (host.size() > 1 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (port != ctx.options.port) return false;
  const std::string& bound = ctx.options.host;
  bool wildcard = bound == "0.0.0.0" || bound == "::";
  return wildcard || host == bound || (IsLoopback(bound) && IsLoopback(host));
}

namespace {

Result<std::map<std::string, std::string>> ReadTokens(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("token file " + path + " cannot be read");
  std::map<std::string, std::string> tokens;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream words(line);
    std::string name, token, extra;
    if (!(words >> name) || name[0] == '#') continue;
    if (!(words >> token) || (words >> extra))
      return InvalidArgument("token file " + path + " line " + std::to_string(n) +
                             ": expected NAME TOKEN");
    if (token.size() < 16)
      return InvalidArgument("token file " + path + " line " + std::to_string(n) +
                             ": the token of '" + name + "' is shorter than 16 characters");
    if (!tokens.emplace(token, name).second)
      return InvalidArgument("token file " + path + " line " + std::to_string(n) +
                             ": a token is given twice");
  }
  if (tokens.empty()) return InvalidArgument("token file " + path + " holds no NAME TOKEN line");
  return tokens;
}

// A route label for metrics: literal path words kept, names replaced, so the
// number of label values stays small whatever the clients ask for.
std::string RouteLabel(const std::string& path) {
  static const std::set<std::string> kWords = {
      "v1",           "config",   "namespaces", "tables",  "properties", "register", "rename",
      "transactions", "commit",   "metrics",    "api",     "lineage",    "batch",    "skade",
      "events",       "graph",    "node",       "impact",  "preview",    "changes",  "commits",
      "healthz",      "datasets", "jobs",       "versions"};
  std::string out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string seg =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!seg.empty()) out += "/" + (kWords.contains(seg) ? seg : std::string("{}"));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out.empty() ? "/" : out;
}

thread_local std::chrono::steady_clock::time_point request_start;

// What an answer may be compressed with. A loopback client gets it uncompressed:
// compressing there saves no time on the wire and costs both sides (PyIceberg paid
// more to gunzip a loadTable than the server took to answer it). Others get gzip, not
// brotli: Debian's httplib (0.11) compresses brotli at quality 11, which took 1.7 s
// for a 1.3 MB graph (gzip: 0.2 s). The request is the server's own object.
void ChooseEncoding(const httplib::Request& req) {
  auto& headers = const_cast<httplib::Headers&>(req.headers);
  auto it = headers.find("Accept-Encoding");
  if (it == headers.end()) return;
  if (IsLoopback(req.remote_addr)) {
    headers.erase(it);
    return;
  }
  std::string kept;
  size_t start = 0;
  while (true) {
    size_t comma = it->second.find(',', start);
    std::string token = it->second.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    token.erase(0, token.find_first_not_of(' '));
    if (!token.empty() && !token.starts_with("br")) kept += (kept.empty() ? "" : ", ") + token;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  it->second = kept;
}

// Requests per kept-alive connection. httplib's default (5) made PyIceberg, which
// reuses one connection, open a new one every fifth request.
constexpr size_t kKeepAliveMaxCount = 10000;

}  // namespace

Result<std::pair<std::string, int>> ParseListen(const std::string& text) {
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return InvalidArgument("--listen '" + text + "' is not [IPv6]:PORT");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos)
      return InvalidArgument("--listen '" + text + "' is not HOST:PORT");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  int p = -1;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (host.empty() || ec != std::errc() || end != port.data() + port.size() || p < 0 || p > 65535)
    return InvalidArgument("--listen '" + text + "': the port must be 0..65535");
  return std::make_pair(host, p);
}

void SendJson(httplib::Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

Json ErrorJson(const ServerContext& ctx, int code, const std::string& type, const std::string& message) {
  // Paths of the server's own files are not the client's business.
  std::string msg = message;
  const std::string& wh = ctx.catalog.warehouse();
  for (size_t at; (at = msg.find(wh)) != std::string::npos;)
    msg.replace(at, wh.size(), "<warehouse>");
  // One line, of a length a client can show, whatever it echoes.
  std::replace(msg.begin(), msg.end(), '\n', ' ');
  if (msg.size() > 500) msg = msg.substr(0, 500) + "...";
  return Json{{"error", {{"message", msg}, {"type", type}, {"code", code}}}};
}

void SendError(const ServerContext& ctx, httplib::Response& res, int code, const std::string& type,
               const std::string& message) {
  SendJson(res, code, ErrorJson(ctx, code, type, message));
}

void SendError(const ServerContext& ctx, httplib::Response& res, const Error& e) {
  switch (e.kind) {
    case ErrorKind::kNotFound:
      return SendError(ctx, res, 404, "NoSuchTableException", e.message);
    case ErrorKind::kAlreadyExists:
      return SendError(ctx, res, 409, "AlreadyExistsException", e.message);
    case ErrorKind::kNotEmpty:
      return SendError(ctx, res, 409, "NamespaceNotEmptyException", e.message);
    case ErrorKind::kCommitConflict:
      return SendError(ctx, res, 409, "CommitFailedException", e.message);
    case ErrorKind::kCommitStateUnknown:
      return SendError(ctx, res, 500, "CommitStateUnknownException", e.message);
    case ErrorKind::kInvalidArgument:
    case ErrorKind::kCorrupt:
      return SendError(ctx, res, 400, "BadRequestException", e.message);
    case ErrorKind::kUnsupported:
      return SendError(ctx, res, 406, "UnsupportedOperationException", e.message);
    default:
      return SendError(ctx, res, 500, "ServiceFailureException", e.message);
  }
}

std::optional<Json> ParseBody(const ServerContext& ctx, const httplib::Request& req,
                              httplib::Response& res) {
  if (auto deep = CheckJsonNesting(req.body, "the request body"); !deep) {
    SendError(ctx, res, 400, "BadRequestException", deep.error().message);
    return std::nullopt;
  }
  Json body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    SendError(ctx, res, 400, "BadRequestException", "the request body is not valid JSON");
    return std::nullopt;
  }
  return body;
}

std::string Caller(const ServerContext& ctx, const httplib::Request& req) {
  std::string auth = req.get_header_value("Authorization");
  if (auth.starts_with("Bearer "))
    if (auto it = ctx.tokens.find(auth.substr(7)); it != ctx.tokens.end()) return it->second;
  std::string agent = req.get_header_value("User-Agent");
  return agent.empty() ? "anonymous" : agent.substr(0, 200);
}

struct Server::Impl {
  explicit Impl(Catalog& catalog, ServeOptions options)
      : ctx{catalog, std::move(options), {}, {}, {}} {}
  ServerContext ctx;
  httplib::Server http;
  int port = 0;
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

Result<std::unique_ptr<Server>> Server::Make(Catalog& catalog, ServeOptions options) {
  if (!IsLoopback(options.host) && options.token_file.empty())
    return InvalidArgument(
        "refusing to serve on " + options.host +
        " (not a loopback address) without --token-file: every client there could write");
  auto impl = std::make_unique<Impl>(catalog, std::move(options));
  ServerContext& ctx = impl->ctx;
  if (!ctx.options.token_file.empty()) {
    SKADE_ASSIGN_OR_RETURN(ctx.tokens, ReadTokens(ctx.options.token_file));
  }
  bool loopback = IsLoopback(ctx.options.host);
  httplib::Server& http = impl->http;
  // SSE clients each hold a worker; idle ones must not starve the API.
  http.new_task_queue = [] { return new httplib::ThreadPool(256); };
  http.set_payload_max_length(ctx.options.max_body_bytes);
  // Small answers go out at once instead of waiting on the client's delayed ACK (Nagle).
  http.set_tcp_nodelay(true);
  // Short: a stop waits for idle keep-alive connections to time out. Clients are told a
  // shorter time than the server waits: Iceberg's Java client (Apache HttpClient) reuses a
  // connection for the advertised time, and with equal times a request sent as the server
  // closes the connection gets no answer ("failed to respond"); a commit POST is not retried.
  http.set_keep_alive_timeout(3);
  http.set_keep_alive_max_count(kKeepAliveMaxCount);
  http.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.has_header("Keep-Alive")) {
      res.headers.erase("Keep-Alive");
      res.set_header("Keep-Alive", "timeout=1, max=" + std::to_string(kKeepAliveMaxCount));
    }
  });

  http.set_pre_routing_handler([&ctx, loopback](const httplib::Request& req,
                                                httplib::Response& res) {
    request_start = std::chrono::steady_clock::now();
    ChooseEncoding(req);
    std::string origin = req.get_header_value("Origin");
    bool allowed_origin = !origin.empty() && std::find(ctx.options.allow_origins.begin(),
                                                       ctx.options.allow_origins.end(),
                                                       origin) != ctx.options.allow_origins.end();
    if (allowed_origin) {
      res.set_header("Access-Control-Allow-Origin", origin);
      res.set_header("Vary", "Origin");
    }
    if (req.method == "OPTIONS") {
      if (!allowed_origin) {
        SendError(ctx, res, 403, "ForbiddenException",
                  "origin not allowed (start the server with --allow-origin)");
        return httplib::Server::HandlerResponse::Handled;
      }
      res.set_header("Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID");
      res.status = 204;
      return httplib::Server::HandlerResponse::Handled;
    }
    bool write = req.method != "GET" && req.method != "HEAD";
    bool needs_token = !ctx.tokens.empty() && (write || !loopback);
    if (needs_token && req.path != "/healthz") {
      std::string auth = req.get_header_value("Authorization");
      if (!auth.starts_with("Bearer ")) {
        SendError(ctx, res, 401, "NotAuthorizedException",
                  "this server needs Authorization: Bearer TOKEN");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (!ctx.tokens.contains(auth.substr(7))) {
        SendError(ctx, res, 403, "ForbiddenException",
                  "the bearer token is not one of this server's");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      SendError(ctx, res, 413, "BadRequestException",
                "the request body is larger than " + std::to_string(ctx.options.max_body_bytes) +
                    " bytes");
    else if (res.status == 404)
      SendError(ctx, res, 404, "NotFoundException",
                "no such route: " + req.method + " " + req.path);
    else
      SendError(ctx, res, res.status, "BadRequestException",
                "request failed with HTTP " + std::to_string(res.status));
  });
  http.set_exception_handler(
      [&ctx](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        SendError(ctx, res, 500, "ServiceFailureException", "internal error");
      });
  http.set_logger([&ctx](const httplib::Request& req, const httplib::Response& res) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - request_start).count();
    ctx.metrics.ObserveRequest(req.method, RouteLabel(req.path), res.status, seconds);
  });

  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  http.Get("/metrics", [&ctx](const httplib::Request&, httplib::Response& res) {
    res.set_content(ctx.metrics.Render(), "text/plain; version=0.0.4");
  });
  AddRestCatalogRoutes(http, ctx);
  AddOpenLineageRoutes(http, ctx);
  AddEventRoutes(http, ctx);
  AddWarehouseApiRoutes(http, ctx);
  AddTableRowRoutes(http, ctx);
  if (!ctx.options.web_root.empty() && !http.set_mount_point("/", ctx.options.web_root))
    return InvalidArgument("web viewer folder " + ctx.options.web_root + " does not exist");

  int port = ctx.options.port;
  if (port == 0) {
    port = http.bind_to_any_port(ctx.options.host);
    if (port < 0) return IoError("cannot bind " + ctx.options.host);
  } else if (!http.bind_to_port(ctx.options.host, port)) {
    return IoError("cannot listen on " + ctx.options.host + ":" + std::to_string(port) +
                   " (in use, or not an address of this machine)");
  }
  impl->port = port;
  ctx.options.port = port;  // the one clients reach, for IsOwnUri
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

int Server::port() const { return impl_->port; }

Status Server::Run() {
  ServerContext& ctx = impl_->ctx;
  std::atomic<bool> finished{false};
  // One helper thread delivers waiting lineage every second and carries out a
  // Stop that came before the listener was running (httplib ignores it then).
  std::thread helper([&] {
    auto now = std::chrono::steady_clock::now();
    auto next_batch = now, next_all = now + std::chrono::seconds(30);
    while (!finished) {
      if (ctx.stopping && impl_->http.is_running()) impl_->http.stop();
      now = std::chrono::steady_clock::now();
      if (!ctx.stopping && ctx.options.deliver_lineage && now >= next_batch) {
        bool all = now >= next_all;
        ctx.options.deliver_lineage(all);
        next_batch = now + std::chrono::seconds(1);
        if (all) next_all = now + std::chrono::seconds(30);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  bool served = ctx.stopping ? true : impl_->http.listen_after_bind();
  bool asked_to_stop = ctx.stopping.exchange(true);
  finished = true;
  helper.join();
  if (!served && !asked_to_stop) return IoError("the server stopped unexpectedly");
  return {};
}

void Server::Stop() {
  impl_->ctx.stopping = true;
  impl_->http.stop();
}

}  // namespace skade::server
