// Commands that list a table's metadata, as Iceberg's metadata tables do (Spark's
// `t.snapshots`, `t.history`, `t.files`, `t.partitions`, `t.manifests`, `t.refs`):
// snapshots and their history, the files, partitions and manifests a snapshot reads,
// and the branches and tags.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

#include "commands.h"
#include "output.h"
#include "skade/format/value.h"
#include "skade/io/file_io.h"
#include "skade/table/manifest_io.h"
#include "skade/table/metadata_tables.h"
#include "skade/table/table.h"

namespace skade::cli {
namespace {

std::string Int(int64_t v) { return std::to_string(v); }
template <typename T>
std::string Opt(const std::optional<T>& v) {
  return v ? std::to_string(*v) : std::string();
}

const char* ContentName(FileContent c) {
  switch (c) {
    case FileContent::kData:
      return "data";
    case FileContent::kPositionDeletes:
      return "position_deletes";
    case FileContent::kEqualityDeletes:
      return "equality_deletes";
  }
  return "?";
}

Status CmdSnapshots(Context& ctx, const std::string& name, Format format) {
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  const TableMetadata& m = *table->metadata();
  Listing l{{"snapshot_id", "parent_id", "sequence_number", "timestamp", "operation", "added_records",
             "total_records", "current"},
            {},
            {true, true, true, false, false, true, true, false}};
  for (const auto& s : m.snapshots) {
    auto get = [&](const char* k) {
      auto it = s.summary.find(k);
      return it == s.summary.end() ? std::string() : it->second;
    };
    l.rows.push_back({Int(s.snapshot_id), Opt(s.parent_snapshot_id), Int(s.sequence_number), TimeText(s.timestamp_ms),
                      s.operation(), get("added-records"), get("total-records"),
                      m.current_snapshot_id == s.snapshot_id ? "*" : ""});
  }
  PrintListing(l, format, stdout);
  return {};
}

// When each snapshot became current (the snapshot log: a rollback shows as the older
// snapshot made current again) and whether it is still in the current snapshot's lineage.
Status CmdHistory(Context& ctx, const std::string& name, Format format) {
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  const TableMetadata& m = *table->metadata();
  std::set<int64_t> ancestors;
  if (m.current_snapshot_id)
    for (const Snapshot* s : m.Ancestors(*m.current_snapshot_id)) ancestors.insert(s->snapshot_id);
  Listing l{{"made_current_at", "snapshot_id", "parent_id", "is_current_ancestor"},
            {},
            {false, true, true, false},
            {false, false, false, true}};
  for (const SnapshotLogEntry& e : m.snapshot_log) {
    const Snapshot* s = m.SnapshotById(e.snapshot_id);
    l.rows.push_back({TimeText(e.timestamp_ms), Int(e.snapshot_id), s ? Opt(s->parent_snapshot_id) : "",
                      ancestors.contains(e.snapshot_id) ? "true" : "false"});
  }
  PrintListing(l, format, stdout);
  return {};
}

// The table and the snapshot the options name; a table without snapshots has nothing
// to list (nullptr).
struct Chosen {
  std::unique_ptr<Table> table;
  const Snapshot* snapshot = nullptr;
};
Result<Chosen> Choose(Context& ctx, const std::string& name, const SnapshotOptions& options) {
  Chosen c;
  SKADE_ASSIGN_OR_RETURN(c.table, LoadTable(ctx, name));
  SKADE_ASSIGN_OR_RETURN(SnapshotChoice choice, ChosenSnapshot(options));
  SKADE_ASSIGN_OR_RETURN(c.snapshot, c.table->metadata()->Choose(choice));
  return c;
}

Result<std::vector<LiveFile>> ChosenFiles(Context& ctx, const Chosen& c) {
  if (!c.snapshot) return std::vector<LiveFile>{};
  return LiveFiles(*c.table->metadata(), *c.snapshot, ctx.catalog->io());
}

struct FilesArgs {
  std::string content = "all", bounds;
};

Status CmdFiles(Context& ctx, const std::string& name, const SnapshotOptions& options, const FilesArgs& a,
                Format format) {
  if (a.content != "all" && a.content != "data" && a.content != "deletes")
    return InvalidArgument("--content must be data, deletes or all, not '" + a.content + "'");
  SKADE_ASSIGN_OR_RETURN(Chosen c, Choose(ctx, name, options));
  const TableMetadata& m = *c.table->metadata();
  const Schema& schema = *m.schema();
  // Columns whose statistics to show: primitive fields, by name or dotted path.
  std::vector<const NestedField*> bounded;
  if (!a.bounds.empty()) {
    std::vector<std::string> problems;
    for (const auto& col : SplitList(a.bounds)) {
      const NestedField* f = schema.FindByPath(col);
      if (!f)
        problems.push_back("'" + col + "' is not a column (columns: " + schema.ColumnNames() + ")");
      else if (!f->type->is_primitive())
        problems.push_back("'" + col + "' is a " + f->type->ToString() + "; bounds are kept for primitive fields");
      else
        bounded.push_back(f);
    }
    if (!problems.empty()) return InvalidArgument("--bounds: " + JoinProblems(problems));
  }
  SKADE_ASSIGN_OR_RETURN(auto files, ChosenFiles(ctx, c));

  Listing l{{"content", "file_path", "file_format", "spec_id", "partition", "record_count", "file_size_in_bytes",
             "sequence_number", "snapshot_id", "equality_columns"},
            {},
            {false, false, false, true, false, true, true, true, true, false}};
  // Format v3: where a deletion vector lies and which file it is for, and data files' first row ids.
  const bool v3 = m.format_version >= 3;
  if (v3) {
    l.headers.insert(l.headers.end(), {"referenced_data_file", "content_offset", "content_size_in_bytes", "first_row_id"});
    l.numeric.insert(l.numeric.end(), {false, true, true, true});
  }
  l.json.assign(l.headers.size(), false);
  l.json[4] = format == Format::kJsonl;
  for (const NestedField* f : bounded) {
    std::string path = schema.PathOf(f->id);
    for (const char* part : {".nulls", ".lower", ".upper"}) l.headers.push_back(path + part);
    l.numeric.insert(l.numeric.end(), {true, false, false});
  }
  for (const LiveFile& lf : files) {
    const DataFile& f = lf.file;
    bool is_data = f.content == FileContent::kData;
    if ((a.content == "data" && !is_data) || (a.content == "deletes" && is_data)) continue;
    std::string eq;
    for (int id : f.equality_ids) eq += (eq.empty() ? "" : ",") + schema.PathOf(id);
    std::vector<std::string> row{ContentName(f.content),
                                 LocalPath(f.file_path),
                                 f.file_format,
                                 Int(f.spec_id),
                                 format == Format::kJsonl ? PartitionJson(m, f.spec_id, f.partition)
                                                          : PartitionText(m, f.spec_id, f.partition),
                                 Int(f.record_count),
                                 Int(f.file_size_in_bytes),
                                 Int(lf.sequence_number),
                                 Int(lf.added_snapshot_id),
                                 eq};
    if (v3)
      row.insert(row.end(), {f.referenced_data_file ? LocalPath(*f.referenced_data_file) : "", Opt(f.content_offset),
                             Opt(f.content_size_in_bytes), Opt(f.first_row_id)});
    for (const NestedField* col : bounded) {
      auto nulls = f.stats.null_value_counts.find(col->id);
      row.push_back(nulls == f.stats.null_value_counts.end() ? "" : Int(nulls->second));
      for (const auto* bounds : {&f.stats.lower_bounds, &f.stats.upper_bounds}) {
        auto it = bounds->find(col->id);
        auto v = it == bounds->end() ? Result<Value>(Value{}) : DeserializeValue(*col->type, it->second);
        row.push_back(!v ? "?" : IsNull(*v) ? "" : FormatValue(*col->type, *v));
      }
    }
    l.rows.push_back(std::move(row));
  }
  PrintListing(l, format, stdout);
  return {};
}

Status CmdPartitions(Context& ctx, const std::string& name, const SnapshotOptions& options, Format format) {
  SKADE_ASSIGN_OR_RETURN(Chosen c, Choose(ctx, name, options));
  const TableMetadata& m = *c.table->metadata();
  SKADE_ASSIGN_OR_RETURN(auto files, ChosenFiles(ctx, c));
  Listing l{{std::begin(kPartitionSummaryColumns), std::end(kPartitionSummaryColumns)},
            {},
            {false, true, true, true, true, true, true, true, true, false, true}};
  l.json.assign(l.headers.size(), false);
  l.json[0] = format == Format::kJsonl;
  for (const PartitionSummary& p : PartitionSummaries(m, files))
    l.rows.push_back({format == Format::kJsonl ? PartitionJson(m, p.spec_id, p.partition)
                                               : PartitionText(m, p.spec_id, p.partition),
                      Int(p.spec_id), Int(p.record_count), Int(p.file_count), Int(p.data_bytes),
                      Int(p.position_delete_records), Int(p.position_delete_files), Int(p.equality_delete_records),
                      Int(p.equality_delete_files), p.last_updated_ms ? TimeText(*p.last_updated_ms) : "",
                      Opt(p.last_updated_snapshot_id)});
  PrintListing(l, format, stdout);
  return {};
}

Status CmdManifests(Context& ctx, const std::string& name, const SnapshotOptions& options, Format format) {
  SKADE_ASSIGN_OR_RETURN(Chosen c, Choose(ctx, name, options));
  const TableMetadata& m = *c.table->metadata();
  std::vector<ManifestFile> list;
  if (c.snapshot) {
    SKADE_ASSIGN_OR_RETURN(list, LoadManifestList(*c.snapshot, ctx.catalog->io()));
  }
  Listing l{{"content", "path", "length", "partition_spec_id", "sequence_number", "added_snapshot_id",
             "added_files_count", "existing_files_count", "deleted_files_count", "added_rows_count",
             "existing_rows_count", "deleted_rows_count", "partitions"},
            {},
            {false, false, true, true, true, true, true, true, true, true, true, true, false}};
  for (const ManifestFile& mf : list)
    l.rows.push_back({mf.content == 0 ? "data" : "deletes", LocalPath(mf.manifest_path), Int(mf.manifest_length),
                      Int(mf.partition_spec_id), Int(mf.sequence_number), Int(mf.added_snapshot_id),
                      Int(mf.added_files_count), Int(mf.existing_files_count), Int(mf.deleted_files_count),
                      Int(mf.added_rows_count), Int(mf.existing_rows_count), Int(mf.deleted_rows_count),
                      PartitionRangeText(m, mf)});
  PrintListing(l, format, stdout);
  return {};
}

// Types spelled as Spark's and PyIceberg's refs tables spell them.
Status CmdRefs(Context& ctx, const std::string& name, Format format) {
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  Listing l{{"name", "type", "snapshot_id", "max_reference_age_in_ms", "min_snapshots_to_keep",
             "max_snapshot_age_in_ms"},
            {},
            {false, false, true, true, true, true}};
  for (const auto& [ref, r] : table->metadata()->refs)
    l.rows.push_back({ref, r.type == "tag" ? "TAG" : "BRANCH", Int(r.snapshot_id), Opt(r.max_ref_age_ms),
                      Opt(r.min_snapshots_to_keep), Opt(r.max_snapshot_age_ms)});
  PrintListing(l, format, stdout);
  return {};
}

struct Args {
  std::string table, format = "table";
  SnapshotOptions snapshot;
  FilesArgs files;
};

}  // namespace

void AddMetadataCommands(CLI::App& app, Context& ctx, CommandAction& action) {
  static Args a;
  // Each command: TABLE and --format; those listing what a snapshot reads take the
  // snapshot options too.
  auto add = [&](const char* name, const char* help, bool of_snapshot, auto run) {
    auto* sub = app.add_subcommand(name, help);
    sub->add_option("TABLE", a.table)->required();
    sub->add_option("--format", a.format, "table, csv or jsonl")->capture_default_str();
    if (of_snapshot) AddSnapshotOptions(sub, a.snapshot);
    sub->callback([&, run] { action = [&, run]() -> Status {
      SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(a.format, false));
      return run(f);
    }; });
    return sub;
  };
  add("snapshots", "list a table's snapshots", false, [&](Format f) { return CmdSnapshots(ctx, a.table, f); });
  add("history", "when each snapshot became current, and whether the current one descends from it", false,
      [&](Format f) { return CmdHistory(ctx, a.table, f); });
  auto* files = add("files", "list the data and delete files a snapshot reads", true,
                    [&](Format f) { return CmdFiles(ctx, a.table, a.snapshot, a.files, f); });
  files->add_option("--content", a.files.content, "data, deletes or all")->capture_default_str();
  files->add_option("--bounds", a.files.bounds,
                    "columns whose null counts and lower and upper bounds to show, comma separated (s.a: field a "
                    "of struct s)");
  add("partitions", "sum a snapshot's files per partition (records, files, bytes, deletes, last update)", true,
      [&](Format f) { return CmdPartitions(ctx, a.table, a.snapshot, f); });
  add("manifests", "list the manifests a snapshot reads, with their file counts and partition ranges", true,
      [&](Format f) { return CmdManifests(ctx, a.table, a.snapshot, f); });
  add("refs", "list a table's branches and tags", false, [&](Format f) { return CmdRefs(ctx, a.table, f); });
}

}  // namespace skade::cli
