#include "bifrost/sink/redis_connection.h"

#include <hiredis/hiredis.h>

namespace bifrost {

std::string ServerAddress::ToString() const {
  return socket_path.empty() ? "redis://" + host + ":" + std::to_string(port)
                             : "unix://" + socket_path;
}

Result<ServerAddress> ServerAddress::Parse(const std::string& url) {
  auto bad = [&] {
    return skade::InvalidArgument("graph server address '" + url +
                                  "' is not redis://HOST:PORT[/KEY] or unix:///PATH/TO/SOCKET");
  };
  ServerAddress a;
  if (url.starts_with("unix://")) {
    a.socket_path = url.substr(7);
    if (a.socket_path.empty() || a.socket_path[0] != '/') return bad();
    return a;
  }
  if (!url.starts_with("redis://")) return bad();
  std::string rest = url.substr(8);
  auto slash = rest.find('/');
  if (slash != std::string::npos) {
    a.path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  auto colon = rest.rfind(':');
  a.host = colon == std::string::npos ? rest : rest.substr(0, colon);
  if (a.host.empty()) return bad();
  a.port = 6379;
  if (colon != std::string::npos) {
    try {
      a.port = std::stoi(rest.substr(colon + 1));
    } catch (...) {
      return bad();
    }
    if (a.port <= 0 || a.port > 65535) return bad();
  }
  return a;
}

RedisConnection::~RedisConnection() { redisFree(ctx_); }

Result<std::unique_ptr<RedisConnection>> RedisConnection::Connect(
    const ServerAddress& address, std::chrono::milliseconds timeout) {
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  redisContext* ctx = address.socket_path.empty()
                          ? redisConnectWithTimeout(address.host.c_str(), address.port, tv)
                          : redisConnectUnixWithTimeout(address.socket_path.c_str(), tv);
  if (!ctx)
    return skade::IoError("cannot connect to graph server " + address.ToString() +
                          ": out of memory");
  if (ctx->err) {
    std::string why = ctx->errstr;
    redisFree(ctx);
    return skade::IoError("cannot connect to graph server " + address.ToString() + ": " + why);
  }
  // Writes of a large graph can legitimately take long; only connecting is bounded tightly.
  timeval command_tv{300, 0};
  redisSetTimeout(ctx, command_tv);
  return std::unique_ptr<RedisConnection>(new RedisConnection(ctx, address));
}

namespace {
Reply Copy(const redisReply& r) {
  Reply out;
  switch (r.type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      out.kind = r.type == REDIS_REPLY_STRING   ? Reply::Kind::kString
                 : r.type == REDIS_REPLY_STATUS ? Reply::Kind::kStatus
                                                : Reply::Kind::kError;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = Reply::Kind::kInteger;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = Reply::Kind::kArray;
      for (size_t i = 0; i < r.elements; ++i) out.elements.push_back(Copy(*r.element[i]));
      break;
    default:
      out.kind = Reply::Kind::kNil;
      break;
  }
  return out;
}
}  // namespace

Result<Reply> RedisConnection::Command(const std::vector<std::string>& argv) {
  if (ctx_->err)
    return skade::IoError("graph server " + address_.ToString() +
                          ": connection lost: " + ctx_->errstr);
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()));
  if (!reply)
    return skade::IoError("graph server " + address_.ToString() + ": " +
                          (ctx_->err ? ctx_->errstr : "no reply"));
  std::unique_ptr<redisReply, void (*)(void*)> owned(reply, freeReplyObject);
  if (reply->type == REDIS_REPLY_ERROR)
    return skade::InvalidArgument(std::string(reply->str, reply->len));
  return Copy(*reply);
}

}  // namespace bifrost
