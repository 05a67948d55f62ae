// The skade command line: one function per command, shared context.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/common/result.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace skade {
class Table;
}  // namespace skade

namespace skade::cli {

class LineageSession;

struct Context {
  std::string warehouse;
  std::unique_ptr<Catalog> catalog;
  bool progress = false;  // stderr is a terminal
  /// Set by the commands that make a warehouse (init, demo); every other command
  /// needs one that exists.
  bool create_warehouse = false;
  /// Lineage recording of this process (lineage_commands.cc); declared after the
  /// catalog so it flushes before the catalog closes.
  std::shared_ptr<LineageSession> lineage;
  /// main's argv (serve_exec.cc hands the command line on as it came).
  char** argv = nullptr;
  Status Open();
};

/// What a command group registers: its subcommands on `app`, each of which sets
/// `action` when chosen. Arguments live in the group's file (parsed before running).
using CommandAction = std::function<Status()>;
void AddCatalogCommands(CLI::App& app, Context& ctx, CommandAction& action);
void AddWriteCommands(CLI::App& app, Context& ctx, CommandAction& action);
void AddMaintenanceCommands(CLI::App& app, Context& ctx, CommandAction& action);
void AddReadCommands(CLI::App& app, Context& ctx, CommandAction& action);
void AddMetadataCommands(CLI::App& app, Context& ctx, CommandAction& action);
void AddServeCommand(CLI::App& app, Context& ctx, CommandAction& action);

// Helpers the groups share (command_util.cc).
/// "a, b,c" → {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& text);
/// "KEY=VALUE" (a table property) as key and value; `what` names it in the error.
Result<std::pair<std::string, std::string>> ParseProperty(const std::string& text, const std::string& what);
/// ISO 8601 text or epoch milliseconds. Errors: kInvalidArgument.
Result<int64_t> ParseTimestampMs(const std::string& text);
Result<std::unique_ptr<Table>> LoadTable(Context& ctx, const std::string& name);
/// --snapshot ID, --as-of TIME and --ref NAME, of which a command takes at most one.
struct SnapshotOptions {
  int64_t id = -1;  // -1: not given
  std::string as_of, ref;
};
void AddSnapshotOptions(CLI::App* sub, SnapshotOptions& options);
/// The snapshot the options name (none given: the current one). Errors: kInvalidArgument
/// for a time that does not parse.
Result<SnapshotChoice> ChosenSnapshot(const SnapshotOptions& options);
/// An integer option read exactly (no clamping, no silent truncation) and checked
/// to be at least `min`; a bad value is a usage error naming the option and range.
CLI::Option* AddInteger(CLI::App* sub, const std::string& name, int64_t& target, int64_t min,
                        const std::string& help);
/// Opens the file a command writes (--output), refusing paths inside the warehouse:
/// the table files there must never be overwritten by a command's output.
Result<std::FILE*> OpenOutput(const Context& ctx, const std::string& path);
Status CheckOutputPath(const Context& ctx, const std::string& path);
/// kIoError with the operating system's reason when a write to `out` failed.
Status CheckWritten(std::FILE* out, const std::string& what);
/// Closes a file OpenOutput gave, reporting a failed final write.
Status CloseOutput(std::FILE* out, const std::string& path);

/// skade's own bookkeeping (`_skade`, the lineage events table): left out of listings
/// of the whole warehouse, shown when asked for by name.
bool IsInternalNamespace(const std::string& ns);

/// Adds the `lineage` and `config` commands and the global --actor/--input options.
void AddLineageCommands(CLI::App& app, Context& ctx, CommandAction& action);
/// The lineage part of the demo: a raw → clean → aggregate pipeline plus an ingested
/// Spark event, then the lineage graph and a downstream impact list.
Status RunLineageDemo(Context& ctx);
/// Delivers the lineage events waiting in the commit log (all, or only when a sink
/// has a full batch); a long-running process calls this now and then. Failures are
/// left for the next call.
void DeliverLineage(Context& ctx, bool all);
/// Records lineage of every commit this process makes (unless `lineage.enabled` is
/// false) and first delivers events earlier processes left in the commit log.
Status StartLineage(Context& ctx);

struct WatchArgs {
  std::string table;
  int64_t from_seq = 0;
  std::string from_cursor;
  bool changes = false;
  std::string format = "jsonl";
};
/// Prints commits (and their change rows) as they land, until interrupted.
Status CmdWatch(Context& ctx, const WatchArgs& args, bool replay_from_seq);

/// Builds the demo warehouse: related tables, several appends, scans, time travel.
Status RunDemo(Context& ctx);

}  // namespace skade::cli
