#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <cstring>

#include "skade/lineage/http_post_internal.h"

namespace skade::lineage {
namespace {

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Result<int> HttpPost(const std::string& url, const std::string& body,
                     const std::vector<std::pair<std::string, std::string>>& headers, int timeout_ms) {
  constexpr std::string_view kScheme = "http://";
  if (url.starts_with("https://")) return Unsupported("https is not supported yet for " + url + " (use http)");
  if (!url.starts_with(kScheme)) return InvalidArgument("URL '" + url + "' must start with http://");
  std::string rest = url.substr(kScheme.size());
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash), path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::string host = authority, port = "80";
  if (auto colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || port.empty()) return InvalidArgument("URL '" + url + "' has no host");
  std::string where = host + ":" + port;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return IoError("cannot resolve " + where + ": " + ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
  std::string last_error = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (s.fd() < 0) continue;
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(s.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(s.fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
      last_error = std::strerror(errno);
      continue;
    }
    std::string request = "POST " + path + " HTTP/1.1\r\nHost: " + authority +
                          "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                          "\r\nConnection: close\r\n";
    for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
    request += "\r\n" + body;
    for (size_t sent = 0; sent < request.size();) {
      ssize_t n = ::send(s.fd(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return IoError("sending to " + where + ": " + std::strerror(errno));
      sent += static_cast<size_t>(n);
    }
    // Only the status line matters; read until it is complete.
    std::string response;
    char buf[1024];
    while (response.find("\r\n") == std::string::npos) {
      ssize_t n = ::recv(s.fd(), buf, sizeof buf, 0);
      if (n < 0) return IoError("reading the response of " + where + ": " + std::strerror(errno));
      if (n == 0) break;
      response.append(buf, static_cast<size_t>(n));
    }
    int status = 0;
    if (std::sscanf(response.c_str(), "HTTP/%*d.%*d %d", &status) != 1 || status < 100)
      return IoError(where + " did not answer with an HTTP status line");
    return status;
  }
  return IoError("cannot connect to " + where + ": " + last_error);
}

}  // namespace skade::lineage
