// skade serve: the warehouse on the network. One process serves the Iceberg REST
// catalog, an OpenLineage receiver, the viewer's API, the live event stream and
// metrics, every change going through the same catalog chokepoint as the CLI.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "skade/common/result.h"

namespace skade {
class Catalog;
}

namespace skade::server {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8181;
  /// `NAME TOKEN` per line; with it every write needs `Authorization: Bearer TOKEN`.
  std::string token_file;
  /// Origins allowed to call from a browser (CORS); none by default.
  std::vector<std::string> allow_origins;
  /// Folders outside the warehouse where clients may place tables (an operator's
  /// choice, e.g. a shared data folder); by default only the warehouse.
  std::vector<std::string> allow_locations;
  /// Largest request body accepted (413 beyond).
  size_t max_body_bytes = 64 << 20;
  /// Folder of the web viewer's bundle served at `/` (empty: none).
  std::string web_root;
  /// Delivers lineage events waiting in the commit log (and the inbox) to the
  /// warehouse's event table: all of them before lineage is read (`all`), and in
  /// the background only full batches, so deliveries do not stall commits (null:
  /// nothing to do).
  std::function<void(bool all)> deliver_lineage;
};

/// Parses `HOST:PORT` (IPv4 or `[v6]`). Errors: kInvalidArgument naming the text.
Result<std::pair<std::string, int>> ParseListen(const std::string& text);

class Server {
 public:
  ~Server();
  /// Checks the options (a non-loopback host needs a token file) and binds.
  /// Errors: kInvalidArgument, kIoError when the address cannot be bound.
  static Result<std::unique_ptr<Server>> Make(Catalog& catalog, ServeOptions options);
  /// The port bound (the one asked for, or the one chosen for port 0).
  int port() const;
  /// Serves until Stop(); in-flight requests finish first. Full batches of waiting
  /// lineage are delivered meanwhile, and all of it every 30 s.
  Status Run();
  /// Thread- and signal-safe to call from another thread.
  void Stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skade::server
