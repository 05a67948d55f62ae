// The skade command line: one function per command, shared context.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "skade/catalog/catalog.h"
#include "skade/common/result.h"

namespace CLI {
class App;
}  // namespace CLI

namespace skade::cli {

class LineageSession;

struct Context {
  std::string warehouse;
  std::unique_ptr<Catalog> catalog;
  bool progress = false;  // stderr is a terminal
  /// Lineage recording of this process (lineage_commands.cc); declared after the
  /// catalog so it flushes before the catalog closes.
  std::shared_ptr<LineageSession> lineage;
  Status Open();
};

/// skade's own bookkeeping (`_skade`, the lineage events table): left out of listings
/// of the whole warehouse, shown when asked for by name.
bool IsInternalNamespace(const std::string& ns);

/// Adds the `lineage` and `config` commands and the global --actor/--input options.
void AddLineageCommands(CLI::App& app, Context& ctx, std::function<Status()>& action);
/// The lineage part of the demo: a raw → clean → aggregate pipeline plus an ingested
/// Spark event, then the lineage graph and a downstream impact list.
Status RunLineageDemo(Context& ctx);
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
