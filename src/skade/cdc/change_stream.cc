#include "skade/cdc/change_stream.h"

#include <algorithm>
#include <charconv>

#include "skade/cdc/commit_watcher.h"
#include "skade/table/table.h"

namespace skade::cdc {
std::string ChangeCursor::ToString() const {
  return std::to_string(commit_seq) + ":" + (snapshot_id ? std::to_string(*snapshot_id) : "");
}

Result<ChangeCursor> ChangeCursor::Parse(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("cursor '" + std::string(text) + "' is not SEQ:SNAPSHOT (e.g. 12:4711)");
  };
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return bad();
  auto number = [](std::string_view s, int64_t* v) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && end == s.data() + s.size();
  };
  ChangeCursor c;
  if (!number(text.substr(0, colon), &c.commit_seq) || c.commit_seq < 0) return bad();
  std::string_view snap = text.substr(colon + 1);
  if (!snap.empty()) {
    int64_t id = 0;
    if (!number(snap, &id)) return bad();
    c.snapshot_id = id;
  }
  return c;
}

ChangeStream::ChangeStream(Catalog& catalog, TableIdent table, ChangeCursor from,
                           ChangelogOptions options, std::unique_ptr<CommitWatcher> watcher)
    : catalog_(catalog),
      table_(std::move(table)),
      cursor_(from),
      options_(std::move(options)),
      watcher_(std::move(watcher)) {}

ChangeStream::~ChangeStream() = default;

Result<std::unique_ptr<ChangeStream>> ChangeStream::Open(Catalog& catalog, const TableIdent& table,
                                                         ChangeCursor from,
                                                         ChangelogOptions options) {
  // Reading an empty range checks the table, columns, filter and update pairing now
  // rather than at the first commit.
  SKADE_ASSIGN_OR_RETURN(auto t, Table::Load(catalog, table));
  auto now = t->metadata()->current_snapshot_id;
  SKADE_RETURN_IF_ERROR(ReadChangelog(*t, now, now, options));
  SKADE_RETURN_IF_ERROR(SnapshotsBetween(*t->metadata(), from.snapshot_id, std::nullopt));
  SKADE_ASSIGN_OR_RETURN(auto watcher, CommitWatcher::Make(catalog));
  return std::unique_ptr<ChangeStream>(
      new ChangeStream(catalog, table, from, std::move(options), std::move(watcher)));
}

Result<std::unique_ptr<ChangeStream>> ChangeStream::Open(const Table& table, ChangeCursor from,
                                                         ChangelogOptions options) {
  return Open(table.catalog(), table.ident(), from, std::move(options));
}

Result<ChangeCursor> ChangeStream::CurrentCursor(Catalog& catalog, const TableIdent& table) {
  // The log position first: a commit landing in between is then re-read, not skipped.
  SKADE_ASSIGN_OR_RETURN(auto entries, catalog.CommitsSince(0, table));
  ChangeCursor c;
  if (!entries.empty()) c.commit_seq = entries.back().commit_seq;
  SKADE_ASSIGN_OR_RETURN(auto t, Table::Load(catalog, table));
  c.snapshot_id = t->metadata()->current_snapshot_id;
  return c;
}

Result<bool> ChangeStream::TryAdvance(std::optional<ChangeWindow>* window) {
  // A rename is logged under the new name: the stream follows it there.
  SKADE_ASSIGN_OR_RETURN(auto all, catalog_.CommitsSince(cursor_.commit_seq));
  std::vector<CommitLogEntry> entries;
  for (auto& e : all) {
    if (e.action == "rename" && e.operation == "from " + table_.ToString()) table_ = e.table;
    if (e.table == table_) entries.push_back(std::move(e));
  }
  if (entries.empty()) {
    if (!all.empty()) cursor_.commit_seq = all.back().commit_seq;
    return false;
  }
  for (const auto& e : entries)
    if (e.action == "drop")
      return NotFound("table " + table_.ToString() + " was dropped (commit_seq " +
                      std::to_string(e.commit_seq) + "); its change stream ends");
  auto loaded = Table::Load(catalog_, table_);
  if (!loaded && loaded.error().kind == ErrorKind::kNotFound)
    return NotFound("table " + table_.ToString() + " no longer exists (renamed?); its change stream ends");
  if (!loaded) return std::unexpected(loaded.error());
  const Table& table = **loaded;
  const TableMetadata& m = *table.metadata();
  ChangeCursor end{entries.back().commit_seq, m.current_snapshot_id};
  if (end.snapshot_id == cursor_.snapshot_id) {  // a branch, tag or metadata-only commit
    cursor_ = end;
    return false;
  }
  SKADE_ASSIGN_OR_RETURN(auto chain, SnapshotsBetween(m, cursor_.snapshot_id, end.snapshot_id));
  SKADE_ASSIGN_OR_RETURN(auto rows, ReadChangelog(table, cursor_.snapshot_id, end.snapshot_id, options_));

  ChangeWindow w;
  w.rows = std::move(rows);
  w.begin = cursor_;
  w.end = end;
  for (const Snapshot* s : chain) {
    // Resume right after `s`: the log position of its commit when this read saw it,
    // otherwise the window's start (re-reading log rows is harmless).
    ChangeCursor resume{cursor_.commit_seq, s->snapshot_id};
    WindowSnapshot ws{s->snapshot_id, s->operation(), s->timestamp_ms, "", 0, resume};
    for (const auto& e : entries)
      if (e.snapshot_id == s->snapshot_id) {
        ws.resume.commit_seq = std::max(ws.resume.commit_seq, e.commit_seq);
        ws.engine = e.engine;
        ws.committed_at_ms = e.committed_at_ms;
      }
    w.snapshots.push_back(std::move(ws));
  }
  w.snapshots.back().resume = end;
  cursor_ = end;
  *window = std::move(w);
  return true;
}

Result<std::optional<ChangeWindow>> ChangeStream::Next(
    std::optional<std::chrono::milliseconds> timeout) {
  std::optional<ChangeWindow> window;
  SKADE_ASSIGN_OR_RETURN(bool got, watcher_->WaitFor([&] { return TryAdvance(&window); }, timeout));
  if (!got) return std::nullopt;
  return window;
}

}  // namespace skade::cdc
