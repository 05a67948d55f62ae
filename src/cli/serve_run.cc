// `skade serve` in the skade-serve binary: the warehouse on the network until SIGINT or
// SIGTERM. Only this binary links the HTTP server (serve_exec.cc says why).
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "commands.h"
#include "server/server.h"
#include "serve_command.h"

namespace skade::cli {

Status RunServe(Context& ctx, const ServeArgs& a) {
  SKADE_ASSIGN_OR_RETURN(auto hp, server::ParseListen(a.listen));
  server::ServeOptions o;
  o.host = hp.first;
  o.port = hp.second;
  o.token_file = a.token_file;
  o.allow_origins = a.allow_origins;
  for (const auto& dir : a.allow_locations) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      return InvalidArgument("--allow-location " + dir + " is not a folder");
    o.allow_locations.push_back(std::filesystem::canonical(dir, ec).string());
  }
  o.max_body_bytes = static_cast<size_t>(a.max_body_bytes);
  o.web_root = a.web_root;
  std::error_code ec;
  if (o.web_root.empty() && std::filesystem::is_directory(SKADE_WEB_DIST, ec))
    o.web_root = SKADE_WEB_DIST;
  o.deliver_lineage = [&ctx](bool all) { DeliverLineage(ctx, all); };
  // Signals are taken by one thread with sigwait, so the handler may stop the server.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  SKADE_ASSIGN_OR_RETURN(auto srv, server::Server::Make(*ctx.catalog, std::move(o)));
  std::printf("serving %s on http://%s:%d/ (Ctrl-C stops)\n", ctx.catalog->warehouse().c_str(),
              hp.first.c_str(), srv->port());
  std::fflush(stdout);
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    srv->Stop();
  });
  Status served = srv->Run();
  // Run also ends when the server fails; the waiting thread is released either way.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  std::printf("stopped\n");
  return served;
}

}  // namespace skade::cli
