// `skade serve`: its options, the same in both binaries; RunServe does the serving.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "serve_command.h"

namespace skade::cli {

void AddServeCommand(CLI::App& app, Context& ctx, CommandAction& action) {
  static ServeArgs a;
  auto* serve = app.add_subcommand(
      "serve", "serve the warehouse: Iceberg REST catalog, OpenLineage, API, events");
  serve->add_option("--listen", a.listen,
                    "HOST:PORT (default 127.0.0.1:8181; port 0 picks a free one)");
  serve->add_option("--token-file", a.token_file,
                    "file of 'NAME TOKEN' lines; writes then need a bearer token");
  serve->add_option("--allow-origin", a.allow_origins,
                    "an origin browsers may call from (repeatable)");
  serve->add_option("--allow-location", a.allow_locations,
                    "a folder outside the warehouse where clients may place tables (repeatable)");
  AddInteger(serve, "--max-body-bytes", a.max_body_bytes, 1,
             "largest request body (default 64 MiB)");
  serve->add_option("--web-root", a.web_root,
                    "folder of the viewer bundle (default: the build's web/dist)");
  serve->callback([&] { action = [&] { return RunServe(ctx, a); }; });
}

}  // namespace skade::cli
