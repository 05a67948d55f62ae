// skade: the command line of the warehouse.
#include <CLI/CLI.hpp>
#include <arrow/api.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "input.h"
#include "output.h"
#include "skade/cdc/changelog.h"
#include "skade/expr/expression.h"
#include "skade/format/value.h"
#include "skade/io/file_io.h"
#include "skade/table/scan.h"
#include "skade/table/schema_update.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/data_writer.h"
#include "skade/table/table.h"

namespace skade::cli {
namespace {

// "a, b,c" → {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    out.push_back(item);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

Result<int64_t> ParseTimestampMs(const std::string& text) {
  bool digits = !text.empty() && std::all_of(text.begin(), text.end(), ::isdigit);
  if (digits) return std::stoll(text);
  auto v = ParseValue(*Type::Primitive(TypeId::kTimestampTz), text);
  if (!v) return InvalidArgument("invalid timestamp '" + text + "' (use ISO 8601 or epoch milliseconds)");
  return std::get<int64_t>(*v) / 1000;
}

Result<std::unique_ptr<Table>> LoadTable(Context& ctx, const std::string& name) {
  SKADE_ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(name));
  return Table::Load(*ctx.catalog, ident);
}

Status CmdCreate(Context& ctx, const std::string& name, const std::string& schema_spec,
                 const std::string& partition_spec, const std::string& identifier,
                 const std::vector<std::string>& props) {
  SKADE_ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(name));
  SKADE_ASSIGN_OR_RETURN(Schema schema, ParseSchemaSpec(schema_spec));
  if (!identifier.empty()) {
    std::vector<int> ids;
    for (const auto& col : SplitList(identifier)) {
      const NestedField* f = schema.FindTopLevel(col);
      if (!f) return InvalidArgument("identifier column '" + col + "' is not in the schema (columns: " + schema.ColumnNames() + ")");
      if (!f->required) return InvalidArgument("identifier column '" + col + "' must be required (mark it with !)");
      if (!f->type->is_primitive() || f->type->id == TypeId::kFloat || f->type->id == TypeId::kDouble)
        return InvalidArgument("identifier column '" + col + "' must be a non-floating primitive");
      ids.push_back(f->id);
    }
    schema = Schema(schema.schema_id(), schema.fields(), ids);
  }
  PartitionSpec spec;
  if (!partition_spec.empty()) {
    SKADE_ASSIGN_OR_RETURN(spec, ParsePartitionSpec(partition_spec, schema));
  }
  std::map<std::string, std::string> properties;
  for (const auto& p : props) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgument("property '" + p + "' must be KEY=VALUE");
    properties[p.substr(0, eq)] = p.substr(eq + 1);
  }
  SKADE_ASSIGN_OR_RETURN(auto loaded, ctx.catalog->CreateTable(ident, schema, spec, properties));
  std::printf("created %s at %s\n", ident.ToString().c_str(), LocalPath(loaded.metadata->location).c_str());
  return {};
}

Status CmdDescribe(Context& ctx, const std::string& name, Format format) {
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  const TableMetadata& m = *table->metadata();
  const Schema& s = *m.schema();
  Listing l{{"id", "name", "type", "required", "identifier"}, {}, {true, false, false, false, false}};
  for (const auto& f : s.fields()) {
    bool ident = std::find(s.identifier_field_ids().begin(), s.identifier_field_ids().end(), f.id) !=
                 s.identifier_field_ids().end();
    l.rows.push_back({std::to_string(f.id), f.name, f.type->ToString(), f.required ? "yes" : "no", ident ? "yes" : ""});
  }
  if (format != Format::kTable) {
    PrintListing(l, format, stdout);
    return {};
  }
  std::printf("table:     %s\nlocation:  %s\nmetadata:  %s\nuuid:      %s\n", name.c_str(),
              LocalPath(m.location).c_str(), LocalPath(table->metadata_location()).c_str(), m.table_uuid.c_str());
  const Snapshot* cur = m.CurrentSnapshot();
  std::printf("snapshot:  %s\n", cur ? std::to_string(cur->snapshot_id).c_str() : "(none)");
  if (cur) {
    auto it = cur->summary.find("total-records");
    std::printf("records:   %s\n", it == cur->summary.end() ? "?" : it->second.c_str());
  }
  std::string part;
  for (const auto& f : m.spec().fields()) {
    if (!part.empty()) part += ", ";
    part += f.name + "=" + f.transform.ToString() + "(" + s.PathOf(f.source_id) + ")";
  }
  std::printf("partition: %s\n", part.empty() ? "(unpartitioned)" : part.c_str());
  for (const auto& [k, v] : m.properties) std::printf("property:  %s=%s\n", k.c_str(), v.c_str());
  std::printf("\n");
  PrintListing(l, Format::kTable, stdout);
  return {};
}

Status CmdAppend(Context& ctx, const std::string& name, const std::vector<std::string>& files,
                 const std::string& branch) {
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  StagedAppend all;
  for (const auto& path : files) {
    SKADE_ASSIGN_OR_RETURN(auto reader, OpenInput(path, *table->metadata()->schema()));
    AppendOptions opts;
    opts.branch = branch;
    if (ctx.progress)
      opts.progress = [&](int64_t rows, int64_t) { std::fprintf(stderr, "\r%s: %lld rows written", path.c_str(), static_cast<long long>(rows)); };
    auto staged = table->StageAppend(*reader, opts);
    if (ctx.progress) std::fprintf(stderr, "\n");
    if (!staged) return std::unexpected(std::move(staged).error().WithContext(path));
    all.files.insert(all.files.end(), staged->files.begin(), staged->files.end());
  }
  all.branch = branch;
  if (all.files.empty()) return InvalidArgument("the input files hold no rows; nothing was committed");
  SKADE_ASSIGN_OR_RETURN(auto res, table->CommitAppend(all));
  int64_t rows = 0;
  for (const auto& f : res.added_files) rows += f.record_count;
  std::printf("appended %lld rows in %zu files to %s: snapshot %lld, commit_seq %lld\n",
              static_cast<long long>(rows), res.added_files.size(), name.c_str(),
              static_cast<long long>(res.snapshot_id), static_cast<long long>(res.commit_seq));
  return {};
}

// Reads input files into one table conformed to the table's schema.
Result<std::shared_ptr<arrow::Table>> ReadInputs(const std::vector<std::string>& files, const Schema& schema) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (const auto& path : files) {
    SKADE_ASSIGN_OR_RETURN(auto reader, OpenInput(path, schema));
    int64_t row = 1;
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      auto st = reader->ReadNext(&batch);
      if (!st.ok()) return Corrupt(path + ": " + st.message());
      if (!batch) break;
      auto conformed = ConformToSchema(batch, schema, row);
      if (!conformed) return std::unexpected(std::move(conformed).error().WithContext(path));
      row += batch->num_rows();
      batches.push_back(*conformed);
    }
  }
  auto table = arrow::Table::FromRecordBatches(ToArrowSchema(schema), batches);
  if (!table.ok()) return Internal(table.status().message());
  return *table;
}

// Reads key files: only the identifier columns are kept.
Result<std::shared_ptr<arrow::Table>> ReadKeys(const std::string& path, const Schema& schema) {
  std::vector<NestedField> fields;
  for (int id : schema.identifier_field_ids())
    if (const NestedField* f = schema.FindField(id)) fields.push_back(*f);
  SKADE_ASSIGN_OR_RETURN(auto reader, OpenInput(path, Schema(0, fields)));
  auto table = reader->ToTable();
  if (!table.ok()) return Corrupt(path + ": " + table.status().message());
  return *table;
}

void PrintChange(const char* verb, const std::string& table, const CommitResult& r) {
  if (!r.committed) {
    std::printf("%s %s: nothing to change, no snapshot committed\n", verb, table.c_str());
    return;
  }
  std::printf("%s %s: %lld rows added, %lld removed: snapshot %lld, commit_seq %lld\n", verb, table.c_str(),
              static_cast<long long>(r.rows_added), static_cast<long long>(r.rows_deleted),
              static_cast<long long>(r.snapshot_id), static_cast<long long>(r.commit_seq));
}

struct ScanArgs {
  std::string columns, where, as_of, ref, format = "table", output;
  int64_t snapshot = -1, limit = -1;
  bool stats = false;
};

Status CmdScan(Context& ctx, const std::string& name, const ScanArgs& a, bool snapshot_given) {
  SKADE_ASSIGN_OR_RETURN(Format format, ParseFormat(a.format, true));
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  TableScan scan = table->NewScan();
  if (!a.columns.empty()) scan.Select(SplitList(a.columns));
  if (!a.where.empty()) scan.Filter(a.where);
  if (snapshot_given) scan.UseSnapshot(a.snapshot);
  if (!a.as_of.empty()) {
    SKADE_ASSIGN_OR_RETURN(int64_t ms, ParseTimestampMs(a.as_of));
    scan.AsOfTime(ms);
  }
  if (!a.ref.empty()) scan.UseRef(a.ref);
  if (a.limit >= 0) scan.Limit(a.limit);
  SKADE_ASSIGN_OR_RETURN(ScanPlan plan, scan.Plan());
  SKADE_ASSIGN_OR_RETURN(auto reader, TableScan::Read(plan, &ctx.catalog->io()));
  std::FILE* out = stdout;
  if (!a.output.empty() && format != Format::kParquet) {
    out = std::fopen(a.output.c_str(), "w");
    if (!out) return IoError("cannot write " + a.output);
  }
  // Progress only where it cannot mix with rows printed on the same terminal.
  bool progress = ctx.progress && (out != stdout || format == Format::kNone || format == Format::kParquet);
  auto rows = WriteScan(*reader, *plan.schema, format, out, a.output, progress);
  if (out != stdout) std::fclose(out);
  if (!rows) return std::unexpected(rows.error());
  if (format == Format::kNone) std::printf("%lld rows\n", static_cast<long long>(*rows));
  if (a.stats) {
    const ScanStats& s = *plan.stats;
    std::fprintf(format == Format::kTable || format == Format::kNone ? stdout : stderr,
                 "plan: manifests %lld (skipped %lld), files %lld -> %lld (partition pruned %lld, metrics pruned %lld), "
                 "rows %lld -> %lld planned, row groups %lld (skipped %lld), rows read %lld, returned %lld\n",
                 (long long)s.manifests_total, (long long)s.manifests_skipped, (long long)s.files_total,
                 (long long)s.files_planned, (long long)s.files_skipped_by_partition,
                 (long long)s.files_skipped_by_metrics, (long long)s.rows_total, (long long)s.rows_planned,
                 (long long)s.row_groups_total, (long long)s.row_groups_skipped, (long long)s.rows_read,
                 (long long)s.rows_returned);
  }
  return {};
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
    l.rows.push_back({std::to_string(s.snapshot_id),
                      s.parent_snapshot_id ? std::to_string(*s.parent_snapshot_id) : "",
                      std::to_string(s.sequence_number), TimeText(s.timestamp_ms), s.operation(),
                      get("added-records"), get("total-records"),
                      m.current_snapshot_id == s.snapshot_id ? "*" : ""});
  }
  PrintListing(l, format, stdout);
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

int Report(const Status& st) {
  if (st) return 0;
  // One printable line, whatever a dependency put in the message.
  std::string msg;
  for (unsigned char c : st.error().message) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c < 0x20 || c == 0x7f) continue;
    if (c == ' ' && !msg.empty() && msg.back() == ' ') continue;
    msg += static_cast<char>(c);
  }
  while (!msg.empty() && msg.back() == ' ') msg.pop_back();
  std::fprintf(stderr, "skade: error: %s\n", msg.c_str());
  return 2;  // usage errors exit 1 from the argument parser; everything else is data/validation
}

}  // namespace

Status Context::Open() {
  SKADE_ASSIGN_OR_RETURN(catalog, Catalog::Open(warehouse));
  return StartLineage(*this);
}

int Main(int argc, char** argv) {
  CLI::App app{"skade: an embedded Iceberg warehouse"};
  app.require_subcommand(1);
  Context ctx;
  const char* env = std::getenv("SKADE_WAREHOUSE");
  ctx.warehouse = env && *env ? env : "./warehouse";
  ctx.progress = ::isatty(STDERR_FILENO);
  app.add_option("--warehouse", ctx.warehouse, "warehouse folder (default $SKADE_WAREHOUSE, else ./warehouse)");
  std::string format = "table";
  auto add_format = [&](CLI::App* sub) {
    sub->add_option("--format", format, "table, csv or jsonl")->capture_default_str();
  };

  std::function<Status()> action;
  auto* init = app.add_subcommand("init", "create the warehouse and its catalog");
  init->callback([&] { action = [&]() -> Status {
    std::printf("warehouse ready at %s\n", ctx.catalog->warehouse().c_str());
    return {};
  }; });

  auto* nss = app.add_subcommand("namespaces", "list namespaces");
  add_format(nss);
  nss->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(format, false));
    SKADE_ASSIGN_OR_RETURN(auto list, ctx.catalog->ListNamespaces());
    Listing l{{"namespace"}, {}, {false}};
    for (auto& n : list)
      if (!IsInternalNamespace(n)) l.rows.push_back({n});
    PrintListing(l, f, stdout);
    return {};
  }; });

  std::string ns_name;
  auto* cns = app.add_subcommand("create-namespace", "create a namespace");
  cns->add_option("NS", ns_name, "namespace")->required();
  cns->callback([&] { action = [&]() -> Status {
    SKADE_RETURN_IF_ERROR(ctx.catalog->CreateNamespace(ns_name));
    std::printf("created namespace %s\n", ns_name.c_str());
    return {};
  }; });
  auto* dns = app.add_subcommand("drop-namespace", "drop an empty namespace");
  dns->add_option("NS", ns_name, "namespace")->required();
  dns->callback([&] { action = [&]() -> Status {
    SKADE_RETURN_IF_ERROR(ctx.catalog->DropNamespace(ns_name));
    std::printf("dropped namespace %s\n", ns_name.c_str());
    return {};
  }; });

  std::string table_name, schema_spec, partition_spec, identifier, new_name;
  std::vector<std::string> props, files;
  auto* create = app.add_subcommand("create", "create a table");
  create->add_option("TABLE", table_name, "namespace.name")->required();
  create->add_option("--schema", schema_spec, "e.g. 'id:long!, name:string, ts:timestamptz'")->required();
  create->add_option("--partition", partition_spec, "e.g. 'day(ts), bucket(16,id), country'");
  create->add_option("--identifier", identifier, "identifier columns, comma separated");
  create->add_option("--property", props, "table property KEY=VALUE (repeatable)");
  create->callback([&] { action = [&] { return CmdCreate(ctx, table_name, schema_spec, partition_spec, identifier, props); }; });

  std::string ns_filter;
  auto* tables = app.add_subcommand("tables", "list tables");
  tables->add_option("NS", ns_filter, "only this namespace");
  add_format(tables);
  tables->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(format, false));
    std::optional<std::string_view> ns;
    if (!ns_filter.empty()) ns = ns_filter;
    SKADE_ASSIGN_OR_RETURN(auto list, ctx.catalog->ListTables(ns));
    Listing l{{"table"}, {}, {false}};
    for (auto& t : list)
      if (ns || !IsInternalNamespace(t.ns)) l.rows.push_back({t.ToString()});
    PrintListing(l, f, stdout);
    return {};
  }; });

  auto* describe = app.add_subcommand("describe", "show a table's schema, partitioning and state");
  describe->add_option("TABLE", table_name)->required();
  add_format(describe);
  describe->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(format, false));
    return CmdDescribe(ctx, table_name, f);
  }; });

  auto* drop = app.add_subcommand("drop", "drop a table (its files stay)");
  drop->add_option("TABLE", table_name)->required();
  drop->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(table_name));
    SKADE_RETURN_IF_ERROR(ctx.catalog->DropTable(ident));
    std::printf("dropped %s\n", table_name.c_str());
    return {};
  }; });

  auto* rename = app.add_subcommand("rename", "rename a table");
  rename->add_option("TABLE", table_name)->required();
  rename->add_option("NEW", new_name)->required();
  rename->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(TableIdent from, TableIdent::Parse(table_name));
    SKADE_ASSIGN_OR_RETURN(TableIdent to, TableIdent::Parse(new_name));
    SKADE_RETURN_IF_ERROR(ctx.catalog->RenameTable(from, to));
    std::printf("renamed %s to %s\n", table_name.c_str(), new_name.c_str());
    return {};
  }; });

  std::string branch = "main";
  auto* append = app.add_subcommand("append", "append Parquet, CSV or JSON-lines files");
  append->add_option("TABLE", table_name)->required();
  append->add_option("FILE", files, "input files")->required();
  append->add_option("--branch", branch, "branch to write to");
  append->callback([&] { action = [&] { return CmdAppend(ctx, table_name, files, branch); }; });

  std::string where, keys_file;
  auto* del = app.add_subcommand("delete", "delete rows by filter or by key");
  del->add_option("TABLE", table_name)->required();
  auto* where_opt = del->add_option("--where", where, "rows to delete");
  auto* keys_opt = del->add_option("--keys", keys_file, "file of identifier values to delete");
  where_opt->excludes(keys_opt);
  del->add_option("--branch", branch, "branch to write to");
  del->callback([&] { action = [&]() -> Status {
    if (where.empty() && keys_file.empty()) return InvalidArgument("delete needs --where EXPR or --keys FILE");
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    WriteOptions opts;
    opts.branch = branch;
    CommitResult r;
    if (!keys_file.empty()) {
      SKADE_ASSIGN_OR_RETURN(auto keys, ReadKeys(keys_file, *table->metadata()->schema()));
      SKADE_ASSIGN_OR_RETURN(r, table->DeleteKeys(keys, opts));
    } else {
      SKADE_ASSIGN_OR_RETURN(r, table->Delete(where, opts));
    }
    PrintChange("delete", table_name, r);
    return {};
  }; });

  auto* upsert = app.add_subcommand("upsert", "insert or replace rows by the identifier columns");
  upsert->add_option("TABLE", table_name)->required();
  upsert->add_option("FILE", files, "input files")->required();
  upsert->add_option("--branch", branch, "branch to write to");
  upsert->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    SKADE_ASSIGN_OR_RETURN(auto rows, ReadInputs(files, *table->metadata()->schema()));
    WriteOptions opts;
    opts.branch = branch;
    SKADE_ASSIGN_OR_RETURN(auto r, table->Upsert(rows, opts));
    PrintChange("upsert", table_name, r);
    return {};
  }; });

  auto* overwrite = app.add_subcommand("overwrite", "replace rows (matching --where, else the partitions written)");
  overwrite->add_option("TABLE", table_name)->required();
  overwrite->add_option("FILE", files, "input files")->required();
  overwrite->add_option("--where", where, "rows to replace");
  overwrite->add_option("--branch", branch, "branch to write to");
  overwrite->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    SKADE_ASSIGN_OR_RETURN(auto rows, ReadInputs(files, *table->metadata()->schema()));
    WriteOptions opts;
    opts.branch = branch;
    std::optional<std::string> filter;
    if (!where.empty()) filter = where;
    SKADE_ASSIGN_OR_RETURN(auto r, table->Overwrite(rows, filter, opts));
    PrintChange("overwrite", table_name, r);
    return {};
  }; });

  std::vector<std::string> alter_args;
  std::string after;
  auto* alter = app.add_subcommand("alter", "evolve a table's schema or partitioning");
  alter->add_option("TABLE", table_name)->required();
  alter->add_option("CHANGE", alter_args,
                    "add-column NAME TYPE | rename-column OLD NEW | drop-column NAME | widen-column NAME TYPE | "
                    "set-optional NAME | add-partition SPEC | drop-partition NAME")
      ->required();
  alter->add_option("--after", after, "with add-column: place the column after COL");
  alter->callback([&] { action = [&]() -> Status {
    const std::string& verb = alter_args[0];
    auto need = [&](size_t n) -> Status {
      if (alter_args.size() != n + 1)
        return InvalidArgument("alter " + verb + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s"));
      return {};
    };
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    SchemaUpdate u;
    if (verb == "add-column") {
      SKADE_RETURN_IF_ERROR(need(2));
      SKADE_ASSIGN_OR_RETURN(Schema parsed, ParseSchemaSpec("x:" + alter_args[2]));
      std::optional<std::string> pos;
      if (!after.empty()) pos = after;
      u.AddColumn(alter_args[1], parsed.fields()[0].type, pos);
    } else if (verb == "rename-column") {
      SKADE_RETURN_IF_ERROR(need(2));
      u.RenameColumn(alter_args[1], alter_args[2]);
    } else if (verb == "drop-column") {
      SKADE_RETURN_IF_ERROR(need(1));
      u.DropColumn(alter_args[1]);
    } else if (verb == "widen-column") {
      SKADE_RETURN_IF_ERROR(need(2));
      SKADE_ASSIGN_OR_RETURN(TypePtr type, ParsePrimitiveType(alter_args[2]));
      u.WidenColumn(alter_args[1], type);
    } else if (verb == "set-optional") {
      SKADE_RETURN_IF_ERROR(need(1));
      u.MakeOptional(alter_args[1]);
    } else if (verb == "add-partition") {
      SKADE_RETURN_IF_ERROR(need(1));
      SKADE_RETURN_IF_ERROR(table->AddPartitionFields(alter_args[1]));
      std::printf("%s: partition spec %d is now the default\n", table_name.c_str(), table->metadata()->default_spec_id);
      return {};
    } else if (verb == "drop-partition") {
      SKADE_RETURN_IF_ERROR(need(1));
      SKADE_RETURN_IF_ERROR(table->RemovePartitionField(alter_args[1]));
      std::printf("%s: partition spec %d is now the default\n", table_name.c_str(), table->metadata()->default_spec_id);
      return {};
    } else {
      return InvalidArgument("unknown alter change '" + verb +
                             "' (add-column, rename-column, drop-column, widen-column, set-optional, add-partition, "
                             "drop-partition)");
    }
    SKADE_RETURN_IF_ERROR(table->UpdateSchema(u));
    std::printf("%s: schema %d is now current\n", table_name.c_str(), table->metadata()->current_schema_id);
    return {};
  }; });

  std::string ref_action, ref_name, to_branch;
  int64_t ref_snapshot = -1;
  for (const char* kind : {"tag", "branch"}) {
    auto* refcmd = app.add_subcommand(kind, std::string("create or drop a ") + kind +
                                                (std::string(kind) == "branch" ? " (or fast-forward it)" : ""));
    refcmd->add_option("TABLE", table_name)->required();
    refcmd->add_option("ACTION", ref_action, std::string(kind) == "branch" ? "create | drop | fast-forward" : "create | drop")
        ->required();
    refcmd->add_option("NAME", ref_name)->required();
    auto* snap = refcmd->add_option("--snapshot", ref_snapshot, "snapshot id (default: current)");
    if (std::string(kind) == "branch") refcmd->add_option("--to", to_branch, "with fast-forward: target branch");
    std::string k = kind;
    refcmd->callback([&, k, snap] { action = [&, k, snap]() -> Status {
      SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
      if (ref_action == "create") {
        std::optional<int64_t> id;
        if (snap->count()) id = ref_snapshot;
        SKADE_RETURN_IF_ERROR(table->CreateRef(ref_name, k, id));
        std::printf("created %s %s at snapshot %lld\n", k.c_str(), ref_name.c_str(),
                    static_cast<long long>(table->metadata()->refs.at(ref_name).snapshot_id));
      } else if (ref_action == "drop") {
        SKADE_RETURN_IF_ERROR(table->DropRef(ref_name, k));
        std::printf("dropped %s %s\n", k.c_str(), ref_name.c_str());
      } else if (ref_action == "fast-forward" && k == "branch") {
        if (to_branch.empty()) return InvalidArgument("fast-forward needs --to BRANCH");
        SKADE_RETURN_IF_ERROR(table->FastForward(ref_name, to_branch));
        std::printf("fast-forwarded %s to %s\n", ref_name.c_str(), to_branch.c_str());
      } else {
        return InvalidArgument("unknown " + k + " action '" + ref_action + "'");
      }
      return {};
    }; });
  }

  int64_t rollback_to = 0;
  auto* rollback = app.add_subcommand("rollback", "point main at an earlier snapshot");
  rollback->add_option("TABLE", table_name)->required();
  rollback->add_option("SNAPSHOT", rollback_to)->required();
  rollback->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    SKADE_RETURN_IF_ERROR(table->Rollback(rollback_to));
    std::printf("rolled %s back to snapshot %lld\n", table_name.c_str(), static_cast<long long>(rollback_to));
    return {};
  }; });

  std::string older_than;
  int retain_last = 0;
  auto* expire = app.add_subcommand("expire", "expire old snapshots and delete the files only they used");
  expire->add_option("TABLE", table_name)->required();
  auto* older_opt = expire->add_option("--older-than", older_than, "timestamp (ISO 8601 or epoch ms)");
  auto* retain_opt = expire->add_option("--retain-last", retain_last, "keep at least N snapshots per branch");
  expire->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    std::optional<int64_t> cutoff;
    std::optional<int> retain;
    if (older_opt->count()) {
      SKADE_ASSIGN_OR_RETURN(cutoff, ParseTimestampMs(older_than));
    }
    if (retain_opt->count()) retain = retain_last;
    SKADE_ASSIGN_OR_RETURN(auto r, table->ExpireSnapshots(cutoff, retain));
    std::printf("expired %zu snapshots of %s, deleted %zu files\n", r.expired_snapshots.size(), table_name.c_str(),
                r.deleted_files.size());
    return {};
  }; });

  bool remove_orphans = false;
  auto* orphans = app.add_subcommand("orphans", "list (or delete) files no snapshot references");
  orphans->add_option("TABLE", table_name)->required();
  auto* orphan_age = orphans->add_option("--older-than", older_than, "only files older than this (default: 3 days ago)");
  orphans->add_flag("--delete", remove_orphans, "delete them");
  add_format(orphans);
  orphans->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(format, false));
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    int64_t cutoff = NowMs() - 3LL * 24 * 3600 * 1000;
    if (orphan_age->count()) {
      SKADE_ASSIGN_OR_RETURN(cutoff, ParseTimestampMs(older_than));
    }
    SKADE_ASSIGN_OR_RETURN(auto list, table->OrphanFiles(cutoff, remove_orphans));
    Listing l{{"file", "action"}, {}, {false, false}};
    for (const auto& p : list) l.rows.push_back({p, remove_orphans ? "deleted" : "orphan"});
    PrintListing(l, f, stdout);
    return {};
  }; });

  int64_t compact_target = 0;
  auto* compact = app.add_subcommand("compact", "bin-pack small data files and fold in their deletes");
  compact->add_option("TABLE", table_name)->required();
  auto* target_opt = compact->add_option("--target-file-size", compact_target, "bytes")->check(CLI::PositiveNumber);
  compact->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    std::optional<int64_t> target;
    if (target_opt->count()) target = compact_target;
    SKADE_ASSIGN_OR_RETURN(auto r, table->Compact(target));
    if (!r.committed) std::printf("%s: nothing to compact\n", table_name.c_str());
    else std::printf("compacted %s: %lld rows rewritten into %zu files: snapshot %lld, commit_seq %lld\n",
                     table_name.c_str(), static_cast<long long>(r.rows_added), r.added_files.size(),
                     static_cast<long long>(r.snapshot_id), static_cast<long long>(r.commit_seq));
    return {};
  }; });

  auto* rewrite = app.add_subcommand("rewrite-manifests", "merge a table's manifests");
  rewrite->add_option("TABLE", table_name)->required();
  rewrite->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    SKADE_ASSIGN_OR_RETURN(auto r, table->RewriteManifests());
    if (!r.committed) std::printf("%s: no snapshot, nothing to rewrite\n", table_name.c_str());
    else std::printf("rewrote the manifests of %s: snapshot %lld\n", table_name.c_str(), static_cast<long long>(r.snapshot_id));
    return {};
  }; });

  std::string changes_from, changes_to, changes_columns, changes_where, changes_format = "table", changes_output;
  bool compute_updates = false, net = false;
  auto* changes = app.add_subcommand("changes", "row-level changes between two snapshots");
  changes->add_option("TABLE", table_name)->required();
  changes->add_option("--from", changes_from, "snapshot id (exclusive); 0 = since the table was created")->required();
  changes->add_option("--to", changes_to, "snapshot id (inclusive; default: current)");
  changes->add_flag("--compute-updates", compute_updates, "pair DELETE/INSERT of one identifier as updates");
  changes->add_flag("--net", net, "collapse the range to its net effect");
  changes->add_option("--columns", changes_columns, "table columns to show, comma separated");
  changes->add_option("--where", changes_where, "filter on the table's columns");
  changes->add_option("--format", changes_format, "table, csv, jsonl or parquet");
  changes->add_option("--output", changes_output, "write to FILE");
  changes->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(changes_format, true));
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
    auto parse_id = [](const std::string& text, const char* what) -> Result<int64_t> {
      try {
        size_t used = 0;
        int64_t v = std::stoll(text, &used);
        if (used == text.size()) return v;
      } catch (...) {
      }
      return InvalidArgument(std::string(what) + " must be a snapshot id, got '" + text + "'");
    };
    std::optional<int64_t> from, to;
    SKADE_ASSIGN_OR_RETURN(int64_t from_id, parse_id(changes_from, "--from"));
    if (from_id != 0) from = from_id;
    if (!changes_to.empty()) {
      SKADE_ASSIGN_OR_RETURN(to, parse_id(changes_to, "--to"));
    }
    cdc::ChangelogOptions o;
    o.compute_updates = compute_updates;
    o.net_changes = net;
    o.filter = changes_where;
    if (!changes_columns.empty()) o.columns = SplitList(changes_columns);
    SKADE_ASSIGN_OR_RETURN(auto rows, cdc::ReadChangelog(*table, from, to, o));
    arrow::TableBatchReader reader(*rows);
    std::FILE* out = stdout;
    if (!changes_output.empty() && f != Format::kParquet) {
      out = std::fopen(changes_output.c_str(), "w");
      if (!out) return IoError("cannot write " + changes_output);
    }
    auto written = WriteScan(reader, cdc::ChangelogSchema(*table->metadata()->schema()), f, out, changes_output);
    if (out != stdout) std::fclose(out);
    if (!written) return std::unexpected(written.error());
    return {};
  }; });

  WatchArgs wa;
  auto* watch = app.add_subcommand("watch", "print commits (and their changes) as they land, until interrupted");
  watch->add_option("TABLE", wa.table, "only this table");
  auto* watch_seq = watch->add_option("--from-seq", wa.from_seq, "first replay the log from this commit_seq");
  watch->add_option("--from-cursor", wa.from_cursor,
                    "with TABLE and --changes: resume after this cursor (printed on each commit line)")
      ->excludes(watch_seq);
  watch->add_flag("--changes", wa.changes, "also print each commit's change rows");
  watch->add_option("--format", wa.format, "jsonl");
  watch->callback([&] { action = [&] { return CmdWatch(ctx, wa, watch_seq->count() > 0); }; });

  ScanArgs sa;
  auto* scan = app.add_subcommand("scan", "read a table");
  scan->add_option("TABLE", table_name)->required();
  scan->add_option("--columns", sa.columns, "columns to read, comma separated");
  scan->add_option("--where", sa.where, "filter, e.g. \"country = 'SE' and age >= 18\"");
  auto* snap_opt = scan->add_option("--snapshot", sa.snapshot, "snapshot id");
  auto* asof_opt = scan->add_option("--as-of", sa.as_of, "timestamp (ISO 8601 or epoch ms)");
  auto* ref_opt = scan->add_option("--ref", sa.ref, "branch or tag");
  snap_opt->excludes(asof_opt)->excludes(ref_opt);
  asof_opt->excludes(ref_opt);
  scan->add_option("--limit", sa.limit, "at most N rows")->check(CLI::NonNegativeNumber);
  scan->add_option("--format", sa.format, "table, csv, jsonl, parquet or none");
  scan->add_option("--output", sa.output, "write to FILE");
  scan->add_flag("--stats", sa.stats, "print plan statistics");
  scan->callback([&] { action = [&] { return CmdScan(ctx, table_name, sa, snap_opt->count() > 0); }; });

  auto* snaps = app.add_subcommand("snapshots", "list a table's snapshots");
  snaps->add_option("TABLE", table_name)->required();
  add_format(snaps);
  snaps->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(format, false));
    return CmdSnapshots(ctx, table_name, f);
  }; });

  int64_t from_seq = 0;
  std::string log_table;
  auto* log = app.add_subcommand("log", "show the commit log");
  log->add_option("--from", from_seq, "first commit_seq to show");
  log->add_option("--table", log_table, "only this table");
  add_format(log);
  log->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(format, false));
    return CmdLog(ctx, from_seq, log_table, f);
  }; });

  auto* demo = app.add_subcommand("demo", "build a demo warehouse and show what skade does");
  demo->callback([&] { action = [&] { return RunDemo(ctx); }; });

  AddLineageCommands(app, ctx, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  if (!action) return 1;
  if (Status st = ctx.Open(); !st) return Report(st);
  return Report(action());
}

}  // namespace skade::cli

int main(int argc, char** argv) { return skade::cli::Main(argc, argv); }
