// skade: the command line of the warehouse. Each command group registers itself
// (catalog_commands.cc, write_commands.cc, maintenance_commands.cc,
// read_commands.cc, lineage_commands.cc); this file parses, runs and reports.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

#include "commands.h"

namespace skade::cli {
namespace {

// One printable line, whatever a dependency put in the message.
std::string OneLine(const std::string& text) {
  std::string msg;
  for (unsigned char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c < 0x20 || c == 0x7f) continue;
    if (c == ' ' && !msg.empty() && msg.back() == ' ') continue;
    msg += static_cast<char>(c);
  }
  while (!msg.empty() && msg.back() == ' ') msg.pop_back();
  return msg;
}

int Report(const Status& st) {
  if (st) return 0;
  std::fprintf(stderr, "skade: error: %s\n", OneLine(st.error().message).c_str());
  return 2;  // usage errors exit 1; everything else is data/validation
}

int UsageError(const std::string& message, const std::string& command) {
  std::fprintf(stderr, "skade: usage error: %s (see 'skade %s--help')\n", OneLine(message).c_str(),
               command.empty() ? "" : (command + " ").c_str());
  return 1;
}

// The standard descriptors must be open before anything else is: a file opened
// later (the catalog) would otherwise become "stdout" and receive the output.
// Returns false when stdout was closed, which no command can work with.
bool GuardStandardDescriptors() {
  bool stdout_open = true;
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1) continue;
    if (fd == 1) stdout_open = false;
    (void)::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);  // takes the lowest free descriptor: fd
  }
  return stdout_open;
}

// The first word that is not an option (or an option's value): the command.
std::string CommandWord(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--warehouse" || arg == "--actor" || arg == "--input") {
      ++i;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    return arg;
  }
  return "";
}

}  // namespace

Status Context::Open() {
  if (create_warehouse) {
    SKADE_ASSIGN_OR_RETURN(catalog, Catalog::Create(warehouse));
  } else {
    SKADE_ASSIGN_OR_RETURN(catalog, Catalog::Open(warehouse));
  }
  return StartLineage(*this);
}

int Main(int argc, char** argv) {
  if (!GuardStandardDescriptors()) {
    std::fprintf(stderr, "skade: error: standard output is closed; nothing was run\n");
    return 2;
  }
  // A reader that went away (`skade scan | head`) is reported, not a silent kill.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"skade: an embedded Iceberg warehouse"};
  app.require_subcommand(1);
  Context ctx;
  ctx.argv = argv;
  const char* env = std::getenv("SKADE_WAREHOUSE");
  ctx.warehouse = env && *env ? env : "./warehouse";
  ctx.progress = ::isatty(STDERR_FILENO);
  app.add_option("--warehouse", ctx.warehouse, "warehouse folder (default $SKADE_WAREHOUSE, else ./warehouse)");

  CommandAction action;
  AddCatalogCommands(app, ctx, action);
  AddWriteCommands(app, ctx, action);
  AddMaintenanceCommands(app, ctx, action);
  AddReadCommands(app, ctx, action);
  AddMetadataCommands(app, ctx, action);
  AddServeCommand(app, ctx, action);
  auto* demo = app.add_subcommand("demo", "build a demo warehouse and show what skade does");
  demo->callback([&] {
    ctx.create_warehouse = true;
    action = [&] { return RunDemo(ctx); };
  });
  AddLineageCommands(app, ctx, action);

  std::string command = CommandWord(argc, argv);
  if (!command.empty()) {
    try {
      (void)app.get_subcommand(command);
    } catch (const CLI::OptionNotFound&) {
      return UsageError("unknown command '" + command + "'", "");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return UsageError(e.what(), command);
  }
  if (!action) return 1;
  int rc;
  try {
    rc = Report([&]() -> Status {
      SKADE_RETURN_IF_ERROR(ctx.Open());
      return action();
    }());
  } catch (const std::system_error& e) {  // thrown, not returned: a thread refused (RLIMIT_NPROC), ...
    const bool thread = e.code() == std::errc::resource_unavailable_try_again;
    return Report(IoError(std::string(thread ? "cannot start a thread (a process limit reached?): " : "") + e.what()));
  } catch (const std::bad_alloc&) {
    return Report(IoError("out of memory"));
  }
  // Output that never reached its reader (a full disk, a closed pipe) is a failure;
  // a command that already failed has said so.
  errno = 0;
  if ((std::fflush(stdout) != 0 || std::ferror(stdout)) && rc == 0) {
    int e = errno ? errno : EIO;
    std::fprintf(stderr, "skade: error: writing standard output failed: %s\n", std::strerror(e));
    return 2;
  }
  return rc;
}

}  // namespace skade::cli

int main(int argc, char** argv) {
  // No transparent huge pages. Arrow's allocator (mimalloc) lets its memory be backed by
  // 2 MiB pages, each zeroed whole when first touched: a 1M-row scan then faulted in
  // 28 MiB where 4 KiB pages needed 11, and on a VM whose host backs each fresh page
  // the process took up to 5x as long (a full scan: 66-559 ms, against 74-86 ms). The
  // server (skade-serve, built from this file too) is spared the same stalls, as
  // databases that advise turning THP off are.
  ::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  int rc = skade::cli::Main(argc, argv);
  // Main has made everything durable and closed it: commits, the catalog (SQLite's last
  // close checkpoints its WAL), lineage delivery, --output files, stdout. What exit()
  // would add is the libraries' teardown (Arrow's thread pools joined, its bundled
  // OpenSSL's tables and every static freed, __cxa_finalize over ~20 libraries), which
  // the process gains nothing from. Sanitizer builds exit normally, so LeakSanitizer
  // still checks what was left allocated.
#if defined(__SANITIZE_ADDRESS__)
  return rc;
#else
  std::fflush(nullptr);
  ::_exit(rc);
#endif
}
