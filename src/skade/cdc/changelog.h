// Row-level changes between two snapshots, in the vocabulary of Iceberg's Spark
// changelog view: the table's columns plus _change_type (INSERT, DELETE,
// UPDATE_BEFORE, UPDATE_AFTER), _change_ordinal and _commit_snapshot_id.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/table_metadata.h"
#include "skade/format/types.h"

namespace arrow {
class Table;
}

namespace skade {
class Table;
}

namespace skade::cdc {

struct ChangelogOptions {
  /// A DELETE and an INSERT of the same identifier in one snapshot become
  /// UPDATE_BEFORE / UPDATE_AFTER (needs identifier fields).
  bool compute_updates = false;
  /// Collapse the range to its net effect, as Spark's `net_changes`: a row value's
  /// changes (carried-over copies included) cancel pairwise in ordinal order; one
  /// that survives keeps the ordinal and snapshot of its first change since its
  /// changes last cancelled out (with compute_updates, pairs are then matched across
  /// the range).
  bool net_changes = false;
  /// Table columns to return (default all; named as TableScan::Select takes them, "s.a"
  /// too, and the metadata columns `_file`, `_pos`, and on format v3 tables `_row_id` and
  /// `_last_updated_sequence_number`, of the row as its file held it: a deleted row's from
  /// the file it leaves); the change columns are always kept. The rows are those of the full changelog
  /// (as Spark's view, then projected); a snapshot that only adds or only removes rows
  /// reads just these columns.
  std::vector<std::string> columns;
  /// Row filter on the table's columns, pushed into the delta reads.
  std::string filter;
};

/// The main-line snapshots after `from` (exclusive; nullopt: from the first) up to
/// `to` (inclusive; nullopt: the current snapshot), oldest first: the range every
/// CDC read covers. Errors: kNotFound when `to` does not exist or `from` is not in
/// its history (rolled back, expired, or never there).
Result<std::vector<const Snapshot*>> SnapshotsBetween(const TableMetadata& metadata,
                                                      std::optional<int64_t> from,
                                                      std::optional<int64_t> to);

/// The fields of ReadChangelog's rows, for code that formats them: the table's columns
/// (those of `columns`, as ChangelogOptions::columns cuts them) plus the metadata
/// columns, which carry ids from the reserved range.
Schema ChangelogSchema(const Schema& table_schema, const std::vector<std::string>& columns = {});

/// Changes made by the snapshots after `from` (exclusive; nullopt = since the table
/// was created) up to `to` (inclusive; nullopt = the current snapshot), oldest first.
/// Deleted rows come back whole whichever way they were deleted (position or
/// equality deletes, copy-on-write rewrites, dropped files, overwrites); rows that a
/// rewrite carried over unchanged are not changes, and `replace` snapshots
/// (compaction) produce none. Errors: kNotFound for a snapshot that is not an
/// ancestor of `to`; kInvalidArgument for bad columns/filter or compute_updates
/// without identifier fields.
Result<std::shared_ptr<arrow::Table>> ReadChangelog(const Table& table, std::optional<int64_t> from,
                                                    std::optional<int64_t> to,
                                                    const ChangelogOptions& options = {});

}  // namespace skade::cdc
