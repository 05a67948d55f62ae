// The skade command line: one function per command, shared context.
#pragma once

#include <memory>
#include <string>

#include "skade/catalog/catalog.h"
#include "skade/common/result.h"

namespace skade::cli {

struct Context {
  std::string warehouse;
  std::unique_ptr<Catalog> catalog;
  bool progress = false;  // stderr is a terminal
  Status Open();
};

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
