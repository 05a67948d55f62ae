// A blocking Redis-protocol connection (hiredis), with replies copied into plain
// values so no hiredis type leaks out. hiredis errors become skade errors here.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "skade/common/result.h"

struct redisContext;

namespace bifrost {

using skade::Result;
using skade::Status;

/// Where a Redis-protocol server listens: `redis://HOST:PORT` or `unix:///PATH`.
struct ServerAddress {
  std::string host;  // empty for a unix socket
  int port = 0;
  std::string socket_path;
  /// An optional `/KEY` after the authority (used by the state ledger URL).
  std::string path;

  std::string ToString() const;
  /// Errors: kInvalidArgument naming the URL and the accepted forms.
  static Result<ServerAddress> Parse(const std::string& url);
};

/// A RESP2 reply.
struct Reply {
  enum class Kind { kNil, kString, kInteger, kArray, kStatus, kError } kind = Kind::kNil;
  std::string text;
  int64_t integer = 0;
  std::vector<Reply> elements;
};

class RedisConnection {
 public:
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  /// Errors: kIoError naming the address (server down, socket missing, timeout).
  static Result<std::unique_ptr<RedisConnection>> Connect(const ServerAddress& address,
                                                          std::chrono::milliseconds timeout);

  /// Sends one command (argv form, so no escaping). A server error reply is
  /// kInvalidArgument with the server's text; a broken connection is kIoError and
  /// leaves the connection unusable.
  Result<Reply> Command(const std::vector<std::string>& argv);
  const ServerAddress& address() const { return address_; }

 private:
  RedisConnection(redisContext* ctx, ServerAddress address)
      : ctx_(ctx), address_(std::move(address)) {}
  redisContext* ctx_;
  ServerAddress address_;
};

}  // namespace bifrost
