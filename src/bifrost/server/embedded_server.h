// The embedded graph server: Valkey 8 with the FalkorDB module, on a private unix
// socket under the warehouse, persisted there (append-only file, fsync on every
// write) so the graph survives runs. It dies with the process that started it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "bifrost/sink/redis_connection.h"

namespace bifrost {

class EmbeddedServer {
 public:
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  /// Starts the server for `warehouse` (folder `<warehouse>/.bifrost/graph`), or
  /// attaches to the one another bifrost already runs there. The module comes from
  /// $BIFROST_FALKORDB_MODULE or the set-up's .deps/falkordb/falkordb.so; the server
  /// binary from $BIFROST_VALKEY_SERVER or valkey-server on PATH.
  /// Errors: kNotFound (binary or module missing: run scripts/setup.sh), kIoError
  /// (did not come up; the message quotes its log).
  static Result<std::unique_ptr<EmbeddedServer>> Start(const std::string& warehouse);

  const ServerAddress& address() const { return address_; }
  /// Stops the server if this process started it (SHUTDOWN, which flushes the log).
  void Stop();

 private:
  EmbeddedServer(ServerAddress address, pid_t pid) : address_(std::move(address)), pid_(pid) {}
  ServerAddress address_;
  pid_t pid_;  // 0 when attached to a server another process owns
};

}  // namespace bifrost
