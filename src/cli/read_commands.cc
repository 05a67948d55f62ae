// Commands that read: scan, the commit log, changes and watch.
#include <CLI/CLI.hpp>
#include <arrow/api.h>

#include <cstdio>

#include "commands.h"
#include "output.h"
#include "skade/cdc/changelog.h"
#include "skade/io/file_io.h"
#include "skade/table/data_writer.h"
#include "skade/table/scan.h"
#include "skade/table/table.h"

namespace skade::cli {
namespace {

struct ScanArgs {
  std::string columns, where, format = "table", output;
  SnapshotOptions snapshot;
  int64_t limit = -1;
  bool stats = false;
};

// Writes rows to --output (or stdout) in `format`; a failed write is an error
// with the operating system's reason. The caller has checked the --output path.
Result<int64_t> WriteRows(Context& ctx, arrow::RecordBatchReader& reader, const Schema& schema, Format format,
                          const std::string& output, bool progress) {
  std::FILE* out = stdout;
  // Parquet, CSV and JSON lines files are created by WriteScan itself.
  bool scan_writes = format == Format::kParquet || format == Format::kCsv || format == Format::kJsonl;
  if (!output.empty() && !scan_writes) {
    SKADE_ASSIGN_OR_RETURN(out, OpenOutput(ctx, output));
  }
  auto rows = WriteScan(reader, schema, format, out, output, progress);
  if (out != stdout) {
    Status closed = CloseOutput(out, output);
    if (rows && !closed) return std::unexpected(closed.error());
  }
  return rows;
}

Status CmdScan(Context& ctx, const std::string& name, const ScanArgs& a) {
  SKADE_ASSIGN_OR_RETURN(Format format, ParseFormat(a.format, true));
  if (!a.output.empty()) SKADE_RETURN_IF_ERROR(CheckOutputPath(ctx, a.output));
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  TableScan scan = table->NewScan();
  if (!a.columns.empty()) scan.Select(SplitList(a.columns));
  if (!a.where.empty()) scan.Filter(a.where);
  SKADE_ASSIGN_OR_RETURN(SnapshotChoice choice, ChosenSnapshot(a.snapshot));
  scan.Use(std::move(choice));
  if (a.limit >= 0) scan.Limit(a.limit);
  SKADE_ASSIGN_OR_RETURN(ScanPlan plan, scan.Plan());
  if (format == Format::kParquet) plan.pool = DataWriter::pool();
  SchemaPtr schema = plan.output_schema;
  std::shared_ptr<ScanStats> stats = plan.stats;
  SKADE_ASSIGN_OR_RETURN(auto reader, TableScan::Read(std::move(plan), &ctx.catalog->io()));
  // Progress only where it cannot mix with rows printed on the same terminal.
  bool progress = ctx.progress && (!a.output.empty() || format == Format::kNone || format == Format::kParquet);
  SKADE_ASSIGN_OR_RETURN(int64_t rows, WriteRows(ctx, *reader, *schema, format, a.output, progress));
  if (format == Format::kNone) std::printf("%lld rows\n", static_cast<long long>(rows));
  if (a.stats) {
    const ScanStats& s = *stats;
    std::fprintf(format == Format::kTable || format == Format::kNone ? stdout : stderr,
                 "plan: manifests %lld (skipped %lld), files %lld -> %lld (partition pruned %lld, metrics pruned %lld), "
                 "rows %lld -> %lld planned, row groups %lld (skipped %lld), pages skipped %lld, rows read %lld, "
                 "delete files %lld (rows deleted %lld), returned %lld\n",
                 (long long)s.manifests_total, (long long)s.manifests_skipped, (long long)s.files_total,
                 (long long)s.files_planned, (long long)s.files_skipped_by_partition,
                 (long long)s.files_skipped_by_metrics, (long long)s.rows_total, (long long)s.rows_planned,
                 (long long)s.row_groups_total, (long long)s.row_groups_skipped, (long long)s.pages_skipped,
                 (long long)s.rows_read, (long long)s.delete_files, (long long)s.rows_deleted,
                 (long long)s.rows_returned);
  }
  return {};
}

Status CmdLog(Context& ctx, int64_t from, const std::string& table, Format format) {
  std::optional<TableIdent> ident;
  if (!table.empty()) {
    SKADE_ASSIGN_OR_RETURN(ident, TableIdent::Parse(table));
  }
  SKADE_ASSIGN_OR_RETURN(auto entries, ctx.catalog->CommitsSince(from > 0 ? from - 1 : 0, ident));
  Listing l{{"commit_seq", "table", "action", "snapshot_id", "operation", "engine", "committed_at"},
            {},
            {true, false, false, true, false, false, false}};
  for (const auto& e : entries)
    l.rows.push_back({std::to_string(e.commit_seq), e.table.ToString(), e.action,
                      e.snapshot_id ? std::to_string(*e.snapshot_id) : "", e.operation, e.engine,
                      TimeText(e.committed_at_ms)});
  PrintListing(l, format, stdout);
  return {};
}

struct ChangesArgs {
  std::string columns, where, format = "table", output;
  int64_t from = 0, to = 0;
  bool compute_updates = false, net = false;
};

Status CmdChanges(Context& ctx, const std::string& name, const ChangesArgs& a, bool to_given) {
  SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(a.format, true));
  if (!a.output.empty()) SKADE_RETURN_IF_ERROR(CheckOutputPath(ctx, a.output));
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  std::optional<int64_t> from, to;
  if (a.from != 0) from = a.from;
  if (to_given) to = a.to;
  cdc::ChangelogOptions o;
  o.compute_updates = a.compute_updates;
  o.net_changes = a.net;
  o.filter = a.where;
  if (!a.columns.empty()) o.columns = SplitList(a.columns);
  SKADE_ASSIGN_OR_RETURN(auto rows, cdc::ReadChangelog(*table, from, to, o));
  arrow::TableBatchReader reader(*rows);
  SKADE_ASSIGN_OR_RETURN(int64_t written, WriteRows(ctx, reader, cdc::ChangelogSchema(*table->metadata()->schema(), o.columns),
                                                    f, a.output, false));
  (void)written;
  return {};
}

struct Args {
  std::string table, log_table, format = "table";
  int64_t log_from = 0;
  ScanArgs scan;
  ChangesArgs changes;
  WatchArgs watch;
};

}  // namespace

void AddReadCommands(CLI::App& app, Context& ctx, CommandAction& action) {
  static Args a;
  auto* scan = app.add_subcommand(
      "scan", "read a table (output order is fixed, the same on every run: planned files in order, then rows in file order; not sorted)");
  scan->add_option("TABLE", a.table)->required();
  scan->add_option("--columns", a.scan.columns,
                   "columns to read, comma separated (s.a: field a of struct s; also _file, _pos, and on v3 tables "
                   "_row_id and _last_updated_sequence_number)");
  scan->add_option("--where", a.scan.where, "filter, e.g. \"country = 'SE' and age >= 18\"");
  AddSnapshotOptions(scan, a.scan.snapshot);
  AddInteger(scan, "--limit", a.scan.limit, 0, "at most N rows");
  scan->add_option("--format", a.scan.format, "table, csv, jsonl, parquet or none");
  scan->add_option("--output", a.scan.output, "write to FILE (outside the warehouse)");
  scan->add_flag("--stats", a.scan.stats, "print plan statistics");
  scan->callback([&] { action = [&] { return CmdScan(ctx, a.table, a.scan); }; });

  auto* log = app.add_subcommand("log", "show the commit log");
  AddInteger(log, "--from", a.log_from, 0, "first commit_seq to show");
  log->add_option("--table", a.log_table, "only this table");
  log->add_option("--format", a.format, "table, csv or jsonl")->capture_default_str();
  log->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(a.format, false));
    return CmdLog(ctx, a.log_from, a.log_table, f);
  }; });

  auto* changes = app.add_subcommand("changes", "row-level changes between two snapshots");
  changes->footer(
      "Columns after the table's: _change_type (INSERT, DELETE, UPDATE_BEFORE, UPDATE_AFTER), "
      "_change_ordinal (the change's snapshot among the range's snapshots that change rows, 0 = the first "
      "after --from; a compaction takes none) "
      "and _commit_snapshot_id (that snapshot), as in Iceberg's Spark changelog view.");
  changes->add_option("TABLE", a.table)->required();
  AddInteger(changes, "--from", a.changes.from, 0, "snapshot id (exclusive); 0 = since the table was created")
      ->required();
  auto* to_opt = AddInteger(changes, "--to", a.changes.to, 0, "snapshot id (inclusive; default: current)");
  changes->add_flag("--compute-updates", a.changes.compute_updates, "pair DELETE/INSERT of one identifier as updates");
  changes->add_flag("--net", a.changes.net,
                    "collapse the range to its net effect (Spark's net_changes): a row inserted and later deleted "
                    "is gone; a row left inserted or deleted keeps the _change_ordinal and _commit_snapshot_id of "
                    "the change that made it so (its first change since its changes last cancelled out)");
  changes->add_option("--columns", a.changes.columns,
                      "table columns to show, comma separated (s.a: field a of struct s; also _file, _pos, and on v3 "
                      "tables _row_id and _last_updated_sequence_number)");
  changes->add_option("--where", a.changes.where, "filter on the table's columns");
  changes->add_option("--format", a.changes.format, "table, csv, jsonl or parquet");
  changes->add_option("--output", a.changes.output, "write to FILE (outside the warehouse)");
  changes->callback([&, to_opt] {
    action = [&, to_opt] { return CmdChanges(ctx, a.table, a.changes, to_opt->count() > 0); };
  });

  auto* watch = app.add_subcommand("watch", "print commits (and their changes) as they land, until interrupted");
  watch->add_option("TABLE", a.watch.table, "only this table");
  auto* watch_seq = AddInteger(watch, "--from-seq", a.watch.from_seq, 0, "first replay the log from this commit_seq");
  watch->add_option("--from-cursor", a.watch.from_cursor,
                    "with TABLE and --changes: resume after this cursor (printed on each commit line)")
      ->excludes(watch_seq);
  watch->add_flag("--changes", a.watch.changes, "also print each commit's change rows");
  watch->add_option("--format", a.watch.format, "jsonl");
  watch->callback([&, watch_seq] {
    action = [&, watch_seq] { return CmdWatch(ctx, a.watch, watch_seq->count() > 0); };
  });
}

}  // namespace skade::cli
