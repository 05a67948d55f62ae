// `skade serve` in the skade binary: the command is handed to skade-serve, installed beside
// it, which links the HTTP server. The server's library (libcpp-httplib, built by Debian with
// OpenSSL and brotli: libssl, libcrypto, libbrotli*) costs every process that maps it 6-7 ms
// of CPU (skade-serve --help vs skade --help), and no command but serve uses it. exec keeps
// the process id, the descriptors and the ignored signals, so whoever started `skade serve`
// (a shell, a test, a service manager) sees one process.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "serve_command.h"

namespace skade::cli {

Status RunServe(Context& ctx, const ServeArgs&) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return IoError("cannot find the skade binary to start skade-serve beside it: " + ec.message());
  std::string server = (self.parent_path() / "skade-serve").string();
  // skade-serve opens the warehouse itself: this process closes it first, cleanly.
  ctx.lineage.reset();
  ctx.catalog.reset();
  ::execv(server.c_str(), ctx.argv);
  return IoError("cannot start " + server + " (skade serve runs there): " + std::strerror(errno));
}

}  // namespace skade::cli
