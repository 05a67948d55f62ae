// A table's changelog as a stream: each Next() yields the changes of the commits
// that landed since the cursor (waking on commits by any engine, in this process
// or another, without polling), and the cursor it returns resumes the stream
// exactly there, in a later process too.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/cdc/changelog.h"
#include "skade/common/result.h"

namespace arrow {
class Table;
}

namespace skade::cdc {

class CommitWatcher;

/// Where a stream stands: changes up to and including `snapshot_id` (nullopt: none
/// yet, the table's whole history is ahead) were yielded, and the commit log was
/// read up to `commit_seq`. Text form "SEQ:SNAPSHOT" ("SEQ:" without a snapshot).
struct ChangeCursor {
  int64_t commit_seq = 0;
  std::optional<int64_t> snapshot_id;

  std::string ToString() const;
  /// Errors: kInvalidArgument naming the text.
  static Result<ChangeCursor> Parse(std::string_view text);
  bool operator==(const ChangeCursor&) const = default;
};

/// One snapshot a window covers.
struct WindowSnapshot {
  int64_t snapshot_id = 0;
  std::string operation;
  int64_t timestamp_ms = 0;
  /// The commit-log row of the commit that made the snapshot, when this read saw it
  /// (empty engine and 0 otherwise, e.g. for snapshots a single commit stacked).
  std::string engine;
  int64_t committed_at_ms = 0;
  /// Resumes the stream right after this snapshot.
  ChangeCursor resume;
};

/// The changes of the main branch's snapshots after one cursor up to another.
struct ChangeWindow {
  /// Oldest first; snapshots without row changes (compactions) included.
  std::vector<WindowSnapshot> snapshots;
  /// ReadChangelog over the window's range.
  std::shared_ptr<arrow::Table> rows;
  ChangeCursor begin;
  ChangeCursor end;
};

class ChangeStream {
 public:
  ~ChangeStream();
  ChangeStream(const ChangeStream&) = delete;
  ChangeStream& operator=(const ChangeStream&) = delete;

  /// A stream of `table`'s changes after `from`. `catalog` must outlive it.
  /// `options.net_changes` collapses each window. Errors: kNotFound for a missing
  /// table, kInvalidArgument for bad options, kIoError when commits cannot be watched.
  static Result<std::unique_ptr<ChangeStream>> Open(Catalog& catalog, const TableIdent& table,
                                                    ChangeCursor from,
                                                    ChangelogOptions options = {});
  /// `table.changes(from)`: the same for a loaded table (its catalog must outlive the
  /// stream). `ChangeCursor{0, S}` starts right after snapshot S.
  static Result<std::unique_ptr<ChangeStream>> Open(const Table& table, ChangeCursor from,
                                                    ChangelogOptions options = {});
  /// A cursor at the table's current state: a stream opened there yields only
  /// commits still to come.
  static Result<ChangeCursor> CurrentCursor(Catalog& catalog, const TableIdent& table);

  /// The next window, waiting up to `timeout` (nullopt: until one comes); nullopt on
  /// timeout. After a window the stream's cursor is the window's end. Errors:
  /// kNotFound when the table was dropped or renamed, or the cursor's snapshot is no
  /// longer an ancestor of the current one (a rollback): the stream cannot continue.
  Result<std::optional<ChangeWindow>> Next(std::optional<std::chrono::milliseconds> timeout);
  /// The table's name now: a stream follows renames.
  const TableIdent& table() const { return table_; }

  const ChangeCursor& cursor() const { return cursor_; }

 private:
  ChangeStream(Catalog& catalog, TableIdent table, ChangeCursor from, ChangelogOptions options,
               std::unique_ptr<CommitWatcher> watcher);
  // Reads the log past the cursor; fills `window` when the main branch moved.
  Result<bool> TryAdvance(std::optional<ChangeWindow>* window);

  Catalog& catalog_;
  TableIdent table_;
  ChangeCursor cursor_;
  ChangelogOptions options_;
  std::unique_ptr<CommitWatcher> watcher_;
};

}  // namespace skade::cdc
