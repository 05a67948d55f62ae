// `skade serve`: its arguments, and the function that serves them (serve_run.cc in the
// skade-serve binary; serve_exec.cc in skade, which hands the command to skade-serve).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "commands.h"

namespace skade::cli {

struct ServeArgs {
  std::string listen = "127.0.0.1:8181";
  std::string token_file;
  std::vector<std::string> allow_origins;
  std::vector<std::string> allow_locations;
  int64_t max_body_bytes = 64 << 20;
  std::string web_root;
};

/// Serves the warehouse of `ctx` until SIGINT or SIGTERM, or until the server fails.
Status RunServe(Context& ctx, const ServeArgs& a);

}  // namespace skade::cli
