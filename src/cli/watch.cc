// `skade watch`: commits as they land, woken by the catalog's file events (no
// polling loop), read from the durable commit log; with TABLE and --changes, the
// table's ChangeStream with a resumable cursor on every commit line.
#include <arrow/api.h>

#include <cstdio>

#include "commands.h"
#include "output.h"
#include "skade/cdc/change_stream.h"
#include "skade/cdc/changelog.h"
#include "skade/cdc/commit_watcher.h"
#include "skade/table/table.h"

namespace skade::cli {
namespace {

Status PrintChanges(const arrow::Table& rows, const Schema& schema) {
  arrow::TableBatchReader reader(rows);
  SKADE_RETURN_IF_ERROR(WriteScan(reader, cdc::ChangelogSchema(schema), Format::kJsonl, stdout, ""));
  return {};
}

void PrintCommit(const CommitLogEntry& e, const std::string& cursor) {
  Listing one{{"commit_seq", "table", "action", "snapshot_id", "operation", "engine", "committed_at"},
              {{std::to_string(e.commit_seq), e.table.ToString(), e.action,
                e.snapshot_id ? std::to_string(*e.snapshot_id) : "", e.operation, e.engine,
                TimeText(e.committed_at_ms)}},
              {true, false, false, true, false, false, false}};
  if (!cursor.empty()) {
    one.headers.push_back("cursor");
    one.rows[0].push_back(cursor);
    one.numeric.push_back(false);
  }
  PrintListing(one, Format::kJsonl, stdout);
}

// Where a replay from commit_seq `seq` starts in `table`'s history: before the
// first snapshot committed at or after `seq`.
Result<cdc::ChangeCursor> CursorBeforeSeq(Catalog& catalog, const TableIdent& ident, int64_t seq) {
  int64_t after = seq > 0 ? seq - 1 : 0;
  SKADE_ASSIGN_OR_RETURN(auto entries, catalog.CommitsSince(after, ident));
  SKADE_ASSIGN_OR_RETURN(auto table, Table::Load(catalog, ident));
  for (const auto& e : entries) {
    if (e.action == "create") return cdc::ChangeCursor{after, std::nullopt};
    const Snapshot* s = e.snapshot_id ? table->metadata()->SnapshotById(*e.snapshot_id) : nullptr;
    if (s) return cdc::ChangeCursor{after, s->parent_snapshot_id};
  }
  return cdc::ChangeStream::CurrentCursor(catalog, ident);
}

// Each snapshot's change rows, then its commit line: a consumer that keeps a
// commit's rows once it sees the commit line, and resumes from that line's cursor,
// gets every change exactly once.
Status WatchTableChanges(Context& ctx, const TableIdent& ident, const WatchArgs& args,
                         bool replay_from_seq) {
  cdc::ChangeCursor from;
  if (!args.from_cursor.empty()) {
    SKADE_ASSIGN_OR_RETURN(from, cdc::ChangeCursor::Parse(args.from_cursor));
  } else if (replay_from_seq) {
    SKADE_ASSIGN_OR_RETURN(from, CursorBeforeSeq(*ctx.catalog, ident, args.from_seq));
  } else {
    SKADE_ASSIGN_OR_RETURN(from, cdc::ChangeStream::CurrentCursor(*ctx.catalog, ident));
  }
  SKADE_ASSIGN_OR_RETURN(auto stream, cdc::ChangeStream::Open(*ctx.catalog, ident, from));
  while (true) {
    SKADE_ASSIGN_OR_RETURN(auto window, stream->Next(std::nullopt));
    if (!window) continue;
    SKADE_ASSIGN_OR_RETURN(auto table, Table::Load(*ctx.catalog, stream->table()));
    const Schema& schema = *table->metadata()->schema();
    // Rows come oldest snapshot first; cut them into each snapshot's run.
    std::vector<int64_t> ids;
    for (const auto& chunk : window->rows->GetColumnByName("_commit_snapshot_id")->chunks()) {
      const auto& values = static_cast<const arrow::Int64Array&>(*chunk);
      ids.insert(ids.end(), values.raw_values(), values.raw_values() + values.length());
    }
    int64_t at = 0, n = static_cast<int64_t>(ids.size());
    for (const auto& s : window->snapshots) {
      int64_t run = 0;
      while (at + run < n && ids[static_cast<size_t>(at + run)] == s.snapshot_id) ++run;
      if (run > 0) SKADE_RETURN_IF_ERROR(PrintChanges(*window->rows->Slice(at, run), schema));
      at += run;
      CommitLogEntry e;
      e.commit_seq = s.resume.commit_seq;
      e.table = stream->table();
      e.action = "commit";
      e.snapshot_id = s.snapshot_id;
      e.operation = s.operation;
      e.committed_at_ms = s.committed_at_ms ? s.committed_at_ms : s.timestamp_ms;
      e.engine = s.engine;
      PrintCommit(e, s.resume.ToString());
      std::fflush(stdout);
    }
  }
}

}  // namespace

Status CmdWatch(Context& ctx, const WatchArgs& args, bool replay_from_seq) {
  if (args.format != "jsonl") return InvalidArgument("watch prints jsonl only");
  std::optional<TableIdent> only;
  if (!args.table.empty()) {
    SKADE_ASSIGN_OR_RETURN(only, TableIdent::Parse(args.table));
  }
  if (!args.from_cursor.empty() && !(only && args.changes))
    return InvalidArgument("--from-cursor needs TABLE and --changes");
  if (only) {
    // Waiting on a name that is not there would print nothing, ever.
    SKADE_ASSIGN_OR_RETURN(auto exists, Table::Load(*ctx.catalog, *only));
    (void)exists;
  }
  if (only && args.changes) return WatchTableChanges(ctx, *only, args, replay_from_seq);

  SKADE_ASSIGN_OR_RETURN(auto watcher, cdc::CommitWatcher::Make(*ctx.catalog));
  int64_t cursor = 0;
  if (replay_from_seq) {
    cursor = args.from_seq > 0 ? args.from_seq - 1 : 0;
  } else {
    SKADE_ASSIGN_OR_RETURN(auto all, ctx.catalog->CommitsSince(0));
    if (!all.empty()) cursor = all.back().commit_seq;
  }
  while (true) {
    std::vector<CommitLogEntry> entries;
    auto arrived = [&]() -> Result<bool> {
      SKADE_ASSIGN_OR_RETURN(entries, ctx.catalog->CommitsSince(cursor, only));
      return !entries.empty();
    };
    SKADE_RETURN_IF_ERROR(watcher->WaitFor(arrived, std::nullopt));
    for (const auto& e : entries) {
      cursor = e.commit_seq;
      if (!only && IsInternalNamespace(e.table.ns)) continue;  // lineage bookkeeping after each commit
      PrintCommit(e, "");
      if (args.changes && e.action == "commit" && e.snapshot_id) {
        auto table = Table::Load(*ctx.catalog, e.table);
        const Snapshot* snap = table ? (*table)->metadata()->SnapshotById(*e.snapshot_id) : nullptr;
        if (snap) {
          auto rows = cdc::ReadChangelog(**table, snap->parent_snapshot_id, snap->snapshot_id);
          // A commit whose changes cannot be read is reported, not fatal to the watch.
          Status printed = rows ? PrintChanges(**rows, *(*table)->metadata()->schema())
                                : Status(std::unexpected(rows.error()));
          if (!printed)
            std::fprintf(stderr, "skade: changes of commit %lld: %s\n",
                         static_cast<long long>(e.commit_seq), printed.error().message.c_str());
        }
      }
      std::fflush(stdout);
    }
  }
}

}  // namespace skade::cli
