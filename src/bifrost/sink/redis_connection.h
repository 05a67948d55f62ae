// A Redis-protocol connection: hiredis connects, then bifrost's own loop writes each
// command and reads its reply (resp_reply.h), so every command is bounded by a
// timeout and can be abandoned when the process is told to stop. Connection errors
// become skade errors here.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bifrost/sink/resp_reply.h"
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

/// "30s", "1.5s", "250ms", "2m": a duration as the user would write it.
std::string FormatDuration(std::chrono::milliseconds d);

class RedisConnection {
 public:
  /// How long a command may wait for its reply when no timeout is set.
  static constexpr std::chrono::milliseconds kDefaultTimeout{300000};
  /// How long a command still waits for its reply once a stop is requested.
  static constexpr std::chrono::milliseconds kStopGrace{500};

  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  /// Errors: kIoError naming the address (server down, socket missing, timeout).
  static Result<std::unique_ptr<RedisConnection>> Connect(const ServerAddress& address,
                                                          std::chrono::milliseconds timeout);

  /// Bounds each later command: one whose reply has not come within `timeout` plus
  /// `slack` (room for the server to report its own timeout first) is kIoError "graph
  /// query timed out after 30s", and the connection is dropped.
  void SetTimeout(std::chrono::milliseconds timeout, std::chrono::milliseconds slack = {}) {
    timeout_ = timeout;
    slack_ = slack;
  }
  std::chrono::milliseconds timeout() const { return timeout_; }
  /// `fd` (borrowed; e.g. a signal's self-pipe) becomes readable when the process
  /// should stop: from then on a command waits at most kStopGrace for its reply, then
  /// fails with kIoError "interrupted" and drops the connection.
  void SetStopFd(int fd) { stop_fd_ = fd; }

  /// Sends one command (argv form, so no escaping). A server error reply is
  /// kInvalidArgument with the server's text; a broken connection, a timeout or a
  /// stop is kIoError and leaves the connection unusable. Not thread-safe.
  Result<Reply> Command(const std::vector<std::string>& argv);
  const ServerAddress& address() const { return address_; }

 private:
  RedisConnection(redisContext* ctx, ServerAddress address)
      : ctx_(ctx), address_(std::move(address)) {}
  /// Drops the connection (its next reply is unknown); returns the error for it.
  skade::Error Broken(std::string why);
  redisContext* ctx_;
  ServerAddress address_;
  std::chrono::milliseconds timeout_ = kDefaultTimeout;
  std::chrono::milliseconds slack_{0};
  int stop_fd_ = -1;
  std::string broken_;  // why the connection is unusable; empty while it is fine
  RespReader reader_;
};

}  // namespace bifrost
