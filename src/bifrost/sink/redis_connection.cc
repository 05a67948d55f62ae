#include "bifrost/sink/redis_connection.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms < 1000) return std::to_string(ms) + "ms";
  if (ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ms) / 1000);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + "s";
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
  // From here on only the descriptor is used, by Command's poll loop.
  int flags = ::fcntl(ctx->fd, F_GETFL);
  if (flags < 0 || ::fcntl(ctx->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    std::string why = std::strerror(errno);
    redisFree(ctx);
    return skade::IoError("graph server " + address.ToString() + ": " + why);
  }
  return std::unique_ptr<RedisConnection>(new RedisConnection(ctx, address));
}

skade::Error RedisConnection::Broken(std::string why) {
  broken_ = why;
  ::shutdown(ctx_->fd, SHUT_RDWR);  // the server sees us go; a late reply is never read
  return skade::Error{skade::ErrorKind::kIoError, std::move(why)};
}

Result<Reply> RedisConnection::Command(const std::vector<std::string>& argv) {
  if (!broken_.empty())
    return skade::IoError("graph server " + address_.ToString() + ": connection lost: " + broken_);
  size_t size = 16;
  for (const auto& a : argv) size += a.size() + 24;
  std::string out;
  out.reserve(size);
  out += "*" + std::to_string(argv.size()) + "\r\n";
  for (const auto& a : argv) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out += a;
    out += "\r\n";
  }
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + timeout_ + slack_;
  bool stopping = false;
  size_t written = 0;
  std::vector<char> buf(64 << 10);
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return std::unexpected(
          stopping ? Broken("interrupted while waiting for graph server " + address_.ToString())
                   : Broken("graph query timed out after " + FormatDuration(timeout_) +
                            " (graph server " + address_.ToString() + "; see --timeout)"));
    bool writing = written < out.size();
    pollfd fds[2] = {{ctx_->fd, static_cast<short>(writing ? POLLOUT : POLLIN), 0},
                     {stop_fd_, POLLIN, 0}};
    int nfds = stop_fd_ >= 0 && !stopping ? 2 : 1;
    int ready = ::poll(fds, nfds, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (ready < 0 && errno != EINTR)
      return std::unexpected(Broken("graph server " + address_.ToString() + ": poll: " +
                                    std::strerror(errno)));
    if (ready <= 0) continue;
    if (nfds == 2 && fds[1].revents != 0) {
      stopping = true;
      deadline = std::min(deadline, Clock::now() + kStopGrace);
    }
    if (fds[0].revents == 0) continue;
    if (writing) {
      ssize_t n = ::send(ctx_->fd, out.data() + written, out.size() - written, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        return std::unexpected(
            Broken("graph server " + address_.ToString() + ": " + std::strerror(errno)));
      if (n > 0) written += static_cast<size_t>(n);
      continue;
    }
    ssize_t n = ::recv(ctx_->fd, buf.data(), buf.size(), 0);
    if (n == 0)
      return std::unexpected(
          Broken("graph server " + address_.ToString() + ": the server closed the connection"));
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return std::unexpected(
          Broken("graph server " + address_.ToString() + ": " + std::strerror(errno)));
    }
    reader_.Feed(std::string_view(buf.data(), static_cast<size_t>(n)));
    auto reply = reader_.Next();
    if (!reply) return std::unexpected(Broken(std::move(reply).error().message));
    if (!*reply) continue;
    if ((*reply)->kind == Reply::Kind::kError)
      return skade::InvalidArgument(std::move((*reply)->text));
    return std::move(**reply);
  }
}

}  // namespace bifrost
