#include "bifrost/sync/metrics.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace bifrost {

void Metrics::Record(const RoundReport& r) {
  std::lock_guard lock(mu_);
  ++rounds_;
  if (r.IsFailure()) ++rounds_failed_;
  if (!r.Progressed() && !r.AnyFailed()) ++rounds_idle_;
  table_syncs_ += r.Count(TableRound::Outcome::kSynced);
  table_failures_ += r.Count(TableRound::Outcome::kFailed);
  rows_read_ += r.RowsRead();
  sink_.Add(r.Sink());
  seconds_ += r.seconds;
  last_round_seconds_ = r.seconds;
}

void Metrics::Set(const std::string& name, const std::string& type, const std::string& help,
                  double value) {
  std::lock_guard lock(mu_);
  extra_[name] = {type, help, value};
}

std::string Metrics::RenderPrometheus() const {
  std::lock_guard lock(mu_);
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help, double value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
           name + " " + buf + "\n";
  };
  family("bifrost_rounds_total", "counter", "Rounds run.", rounds_);
  family("bifrost_rounds_failed_total", "counter", "Rounds in which every attempted table failed.",
         rounds_failed_);
  family("bifrost_rounds_idle_total", "counter", "Rounds with nothing new to apply.", rounds_idle_);
  family("bifrost_table_syncs_total", "counter", "Table rounds applied to the graph.",
         table_syncs_);
  family("bifrost_table_failures_total", "counter",
         "Table rounds that failed (their state did not advance).", table_failures_);
  family("bifrost_rows_read_total", "counter", "Rows read from the sources.", rows_read_);
  family("bifrost_vertex_rows_total", "counter", "Vertex rows merged.", sink_.vertex_rows);
  family("bifrost_edge_rows_total", "counter", "Edge rows merged.", sink_.edge_rows);
  family("bifrost_delete_rows_total", "counter", "Vertex and edge delete rows sent.", sink_.delete_rows);
  family("bifrost_graph_nodes_created_total", "counter",
         "Nodes created, from the server's statistics.", sink_.nodes_created);
  family("bifrost_graph_relationships_created_total", "counter",
         "Relationships created, from the server's statistics.", sink_.relationships_created);
  family("bifrost_graph_nodes_deleted_total", "counter",
         "Nodes deleted, from the server's statistics.", sink_.nodes_deleted);
  family("bifrost_graph_relationships_deleted_total", "counter",
         "Relationships deleted, from the server's statistics.", sink_.relationships_deleted);
  family("bifrost_graph_queries_total", "counter", "Write queries sent to the graph.", sink_.queries);
  family("bifrost_round_seconds_total", "counter", "Time spent in rounds.", seconds_);
  family("bifrost_last_round_seconds", "gauge", "Duration of the last round.", last_round_seconds_);
  for (const auto& [name, f] : extra_) family(name.c_str(), f.type.c_str(), f.help.c_str(), f.value);
  return out;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& host_port,
                                                            const Metrics& metrics) {
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return skade::InvalidArgument("--metrics-addr '" + host_port + "' is not HOST:PORT");
  std::string host = host_port.substr(0, colon), port = host_port.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || !res)
    return skade::InvalidArgument("--metrics-addr '" + host_port + "': cannot resolve");
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  bool ok = fd >= 0 && ::bind(fd, res->ai_addr, res->ai_addrlen) == 0 && ::listen(fd, 16) == 0;
  ::freeaddrinfo(res);
  if (!ok) {
    std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return skade::IoError("--metrics-addr '" + host_port + "': " + why);
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  return std::unique_ptr<MetricsServer>(new MetricsServer(fd, ntohs(bound.sin_port), metrics));
}

MetricsServer::MetricsServer(int fd, int port, const Metrics& metrics)
    : fd_(fd), port_(port), metrics_(metrics) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsServer::~MetricsServer() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
}

void MetricsServer::Serve() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    char buf[2048];
    ssize_t n = ::recv(client, buf, sizeof buf - 1, 0);
    std::string request(buf, n > 0 ? static_cast<size_t>(n) : 0);
    bool found = request.starts_with("GET /metrics ") || request.starts_with("GET /metrics?");
    std::string body = found ? metrics_.RenderPrometheus() : "not found: try /metrics\n";
    std::string head =
        std::string("HTTP/1.1 ") + (found ? "200 OK" : "404 Not Found") +
        "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
    std::string reply = head + body;
    size_t sent = 0;
    while (sent < reply.size()) {
      ssize_t w = ::send(client, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
      if (w <= 0) break;
      sent += static_cast<size_t>(w);
    }
    ::close(client);
  }
}

}  // namespace bifrost
