// Commands that change a table's rows or schema: append, delete, upsert, overwrite, alter.
#include <CLI/CLI.hpp>
#include <arrow/api.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "commands.h"
#include "input.h"
#include "skade/io/file_io.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/data_writer.h"
#include "skade/table/schema_update.h"
#include "skade/table/snapshot_producer.h"
#include "skade/table/table.h"

namespace skade::cli {
namespace {

// How input files are read: --delimiter (0: by extension) and --input-format (empty: by extension).
struct InputFormat {
  char delimiter = 0;
  std::string format;
};

// Writes the input files' rows as data files of `table`, one file after another and a
// block at a time (never whole), without committing them. With `upsert`, only the rows
// whose position in the inputs (counted over all files) it keeps, with the ids they take over.
Result<StagedAppend> StageInputs(Context& ctx, Table& table, const InputFiles& files,
                                 const std::string& branch, const InputFormat& in,
                                 const UpsertRows* upsert = nullptr) {
  StagedAppend all;
  int64_t first = 0;  // input rows before the current file
  // Files staged for earlier inputs are never committed when a later input fails:
  // they go, so a failed write leaves the table folder as it found it.
  auto fail = [&](Error e) -> Result<StagedAppend> {
    DiscardFiles(ctx.catalog->io(), all.files);
    return std::unexpected(std::move(e));
  };
  for (const auto& path : files.paths()) {
    AppendOptions opts;
    opts.branch = branch;
    opts.row_lineage = upsert && !upsert->replaced_ids.empty();
    const std::string shown = files.Shown(path);
    if (ctx.progress)
      opts.progress = [&](int64_t rows, int64_t) {
        std::fprintf(stderr, "\r%s: %lld rows written", shown.c_str(), static_cast<long long>(rows));
      };
    int64_t rows_read = 0;
    Status read = ReadInGrowingBlocks([&](int64_t block) -> Status {
      // OpenInput's errors name the file already; those of the rows get it here.
      SKADE_ASSIGN_OR_RETURN(auto reader,
                             OpenInput(path, *table.metadata()->schema(), block, nullptr, in.delimiter, in.format));
      if (upsert)
        reader = KeepMarkedRows(reader, *table.metadata()->schema(), upsert->keep, upsert->replaced_ids, first,
                                &rows_read);
      auto staged = table.StageAppend(*reader, opts);
      if (ctx.progress) std::fprintf(stderr, "\n");
      if (!staged) return std::unexpected(std::move(staged).error().WithContext(path));
      all.files.insert(all.files.end(), staged->files.begin(), staged->files.end());
      return {};
    });
    if (!read) return fail(std::move(read).error());
    first += rows_read;
  }
  if (upsert && first != static_cast<int64_t>(upsert->keep.size()))
    return fail(Corrupt("the input files hold " + std::to_string(first) + " rows, " +
                        std::to_string(upsert->keep.size()) +
                        " when their keys were read (did they change?)").error());
  all.branch = branch;
  return all;
}

Status CmdAppend(Context& ctx, const std::string& name, const InputFiles& files,
                 const std::string& branch, const InputFormat& in) {
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, name));
  SKADE_ASSIGN_OR_RETURN(StagedAppend all, StageInputs(ctx, *table, files, branch, in));
  if (all.files.empty()) return InvalidArgument("the input files hold no rows; nothing was committed");
  // A refused commit removes the staged files itself (unless its outcome is unknown).
  SKADE_ASSIGN_OR_RETURN(auto res, table->CommitAppend(all));
  int64_t rows = 0;
  for (const auto& f : res.added_files) rows += f.record_count;
  std::printf("appended %lld rows in %zu files to %s: snapshot %lld, commit_seq %lld\n",
              static_cast<long long>(rows), res.added_files.size(), name.c_str(),
              static_cast<long long>(res.snapshot_id), static_cast<long long>(res.commit_seq));
  return {};
}

// The identifier columns of every row of the input files, in input order, conformed to
// their types (the keys an upsert or a delete by key reads first): a Parquet input
// decodes only them; the other columns of a text input's blocks are dropped as read.
Result<std::shared_ptr<arrow::Table>> ReadInputKeys(const std::vector<std::string>& files, const Schema& schema,
                                                    const InputFormat& in) {
  SKADE_ASSIGN_OR_RETURN(auto columns, KeyColumns(schema));
  std::vector<NestedField> fields;
  for (const NestedField* f : columns) fields.push_back(*f);
  const Schema key_schema(0, fields);
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  // Without identifier fields there are no keys to read: the table's write refuses that.
  for (const auto& path : fields.empty() ? std::vector<std::string>{} : files) {
    const size_t first_batch = batches.size();
    SKADE_RETURN_IF_ERROR(ReadInGrowingBlocks([&](int64_t block) -> Status {
      batches.resize(first_batch);  // a read again with larger blocks starts the file over
      SKADE_ASSIGN_OR_RETURN(auto reader, OpenInput(path, schema, block, &key_schema, in.delimiter, in.format));
      int64_t row = 1;
      while (true) {
        std::shared_ptr<arrow::RecordBatch> batch;
        auto st = reader->ReadNext(&batch);
        if (!st.ok()) return Corrupt(path + ": " + st.message());
        if (!batch) return {};
        arrow::FieldVector key_fields;
        arrow::ArrayVector key_columns;
        for (const auto& f : fields) {
          int i = batch->schema()->GetFieldIndex(f.name);
          if (i < 0) return InvalidArgument(path + ": the input lacks identifier column '" + f.name + "'");
          key_fields.push_back(batch->schema()->field(i));
          key_columns.push_back(batch->column(i));
        }
        auto keys = arrow::RecordBatch::Make(arrow::schema(key_fields), batch->num_rows(), key_columns);
        auto conformed = ConformToSchema(keys, key_schema, row);
        if (!conformed) return std::unexpected(std::move(conformed).error().WithContext(path));
        row += batch->num_rows();
        batches.push_back(*conformed);
      }
    }));
  }
  auto table = arrow::Table::FromRecordBatches(ToArrowSchema(key_schema), batches);
  if (!table.ok()) return Internal(table.status().message());
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

// One `alter` command takes several changes, each a verb and its arguments. Schema
// changes become one new schema (one commit: all apply or none); a partition change is a
// commit of its own, so it comes alone.
Status CmdAlter(Context& ctx, const std::string& table_name, const std::vector<std::string>& args,
                const std::string& after, const std::optional<std::string>& default_text) {
  static const std::map<std::string, size_t> kArity = {
      {"add-column", 2},    {"rename-column", 2}, {"drop-column", 1},    {"widen-column", 2},
      {"set-optional", 1},  {"add-partition", 1}, {"drop-partition", 1}, {"set-property", 1},
      {"unset-property", 1}, {"set-identifier", 1}, {"unset-identifier", 0}};
  std::vector<std::vector<std::string>> changes;
  for (size_t i = 0; i < args.size();) {
    auto verb = kArity.find(args[i]);
    if (verb == kArity.end())
      return InvalidArgument("unknown alter change '" + args[i] +
                             "' (add-column, rename-column, drop-column, widen-column, set-optional, add-partition, "
                             "drop-partition, set-property, unset-property, set-identifier, unset-identifier)");
    size_t n = verb->second, end = i + 1;
    while (end < args.size() && !kArity.contains(args[end])) ++end;
    if (end - i - 1 != n)
      return InvalidArgument("alter " + verb->first + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s"));
    changes.emplace_back(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(end));
    i = end;
  }
  auto count = [&](const std::string& v) {
    return std::count_if(changes.begin(), changes.end(), [&](const auto& c) { return c[0] == v; });
  };
  const bool partition = count("add-partition") + count("drop-partition") > 0;
  if (partition && changes.size() > 1)
    return InvalidArgument("alter: a partition change is a commit of its own; give it in an alter of its own");
  const auto properties = count("set-property") + count("unset-property");
  if (properties > 0 && properties != static_cast<std::ptrdiff_t>(changes.size()))
    return InvalidArgument("alter: property changes are a commit of their own; give them in an alter of their own");
  if (!after.empty() && (count("add-column") != 1 || changes.size() != 1))
    return InvalidArgument("alter: --after goes with a single add-column");
  if (default_text && (count("add-column") != 1 || changes.size() != 1))
    return InvalidArgument("alter: --default goes with a single add-column");
  SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, table_name));
  if (properties > 0) {
    std::map<std::string, std::string> set;
    std::vector<std::string> remove;
    for (const auto& c : changes) {
      if (c[0] == "unset-property") {
        remove.push_back(c[1]);
        continue;
      }
      SKADE_ASSIGN_OR_RETURN(auto kv, ParseProperty(c[1], "alter set-property"));
      set.insert_or_assign(kv.first, kv.second);
    }
    SKADE_RETURN_IF_ERROR(table->UpdateProperties(set, remove));
    std::printf("%s: properties changed\n", table_name.c_str());
    return {};
  }
  if (partition) {
    const auto& c = changes[0];
    if (c[0] == "add-partition") SKADE_RETURN_IF_ERROR(table->AddPartitionFields(c[1]));
    else SKADE_RETURN_IF_ERROR(table->RemovePartitionField(c[1]));
    std::printf("%s: partition spec %d is now the default\n", table_name.c_str(), table->metadata()->default_spec_id);
    return {};
  }
  SchemaUpdate u;
  for (const auto& c : changes) {
    if (c[0] == "add-column") {
      SKADE_ASSIGN_OR_RETURN(Schema parsed, ParseSchemaSpec("x:" + c[2]));
      // The table's rows have no value for a new column: readers would find a required
      // column missing from every data file, unless it has a default (Iceberg v3).
      if (parsed.fields()[0].required && !default_text)
        return InvalidArgument("alter add-column " + c[1] + ": a new column cannot be required ('!'); the rows " +
                               "already written have no value for it. Add it optional, or give it a --default " +
                               "(format version 3)");
      std::optional<std::string> pos;
      if (!after.empty()) pos = after;
      u.AddColumn(c[1], parsed.fields()[0].type, pos, default_text, parsed.fields()[0].required);
    } else if (c[0] == "rename-column") {
      u.RenameColumn(c[1], c[2]);
    } else if (c[0] == "drop-column") {
      u.DropColumn(c[1]);
    } else if (c[0] == "widen-column") {
      SKADE_ASSIGN_OR_RETURN(TypePtr type, ParsePrimitiveType(c[2]));
      u.WidenColumn(c[1], type);
    } else if (c[0] == "set-identifier" || c[0] == "unset-identifier") {
      if (count("set-identifier") + count("unset-identifier") > 1)
        return InvalidArgument("alter: give set-identifier or unset-identifier once");
      u.SetIdentifierFields(c[0] == "set-identifier" ? SplitList(c[1]) : std::vector<std::string>{});
    } else {
      u.MakeOptional(c[1]);
    }
  }
  SKADE_RETURN_IF_ERROR(table->UpdateSchema(u));
  std::printf("%s: schema %d is now current\n", table_name.c_str(), table->metadata()->current_schema_id);
  return {};
}

struct Args {
  std::string table, branch = "main", where, keys_file, after, delimiter, input_format, default_value;
  std::vector<std::string> files, alter;
};

// --delimiter: one character, or "tab"; 0 when not given (each file's extension decides).
Result<char> Delimiter(const std::string& text) {
  if (text.empty()) return '\0';
  if (text == "tab" || text == "\\t") return '\t';
  if (text.size() != 1 || text[0] == '"' || text[0] == '\n' || text[0] == '\r')
    return InvalidArgument("--delimiter takes one character other than a quote or a line break, or 'tab'; not '" +
                           text + "'");
  return text[0];
}

constexpr const char* kDelimiterHelp = "CSV field separator: one character, or 'tab' (default: ',', tab for .tsv)";

// The options that say how a write's input files are read.
void AddInputOptions(CLI::App* cmd, Args& a) {
  cmd->add_option("--delimiter", a.delimiter, kDelimiterHelp);
  cmd->add_option("--input-format", a.input_format,
                  "the inputs' format instead of their extensions': " + InputFormatNames() +
                      " (needed for '-', standard input)");
}

// The inputs as --delimiter and --input-format say to read them, `-` copied from standard input.
Result<std::pair<InputFormat, std::unique_ptr<InputFiles>>> Inputs(const Args& a, const std::vector<std::string>& files) {
  SKADE_ASSIGN_OR_RETURN(char delimiter, Delimiter(a.delimiter));
  SKADE_ASSIGN_OR_RETURN(auto paths, InputFiles::Make(files, a.input_format));
  return std::pair{InputFormat{delimiter, a.input_format}, std::move(paths)};
}

}  // namespace

void AddWriteCommands(CLI::App& app, Context& ctx, CommandAction& action) {
  static Args a;
  auto* append = app.add_subcommand("append", "append Parquet, CSV (or TSV) or JSON-lines files");
  append->add_option("TABLE", a.table)->required();
  append->add_option("FILE", a.files, "input files ('-': standard input)")->required();
  append->add_option("--branch", a.branch, "branch to write to");
  AddInputOptions(append, a);
  append->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto in, Inputs(a, a.files));
    return in.second->Named(CmdAppend(ctx, a.table, *in.second, a.branch, in.first));
  }; });

  auto* del = app.add_subcommand("delete", "delete rows by filter or by key");
  del->add_option("TABLE", a.table)->required();
  auto* where_opt = del->add_option("--where", a.where, "rows to delete");
  auto* keys_opt = del->add_option("--keys", a.keys_file, "file of identifier values to delete ('-': standard input)");
  where_opt->excludes(keys_opt);
  del->add_option("--branch", a.branch, "branch to write to");
  AddInputOptions(del, a);
  for (const char* name : {"--delimiter", "--input-format"}) del->get_option(name)->needs(keys_opt);
  del->callback([&] { action = [&]() -> Status {
    if (a.where.empty() && a.keys_file.empty()) return InvalidArgument("delete needs --where EXPR or --keys FILE");
    SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
    WriteOptions opts;
    opts.branch = a.branch;
    CommitResult r;
    if (!a.keys_file.empty()) {
      SKADE_ASSIGN_OR_RETURN(auto in, Inputs(a, {a.keys_file}));
      auto keys = ReadInputKeys(in.second->paths(), *table->metadata()->schema(), in.first);
      if (!keys) return in.second->Named(std::unexpected(std::move(keys).error()));
      SKADE_ASSIGN_OR_RETURN(r, table->DeleteKeys(*keys, opts));
    } else {
      SKADE_ASSIGN_OR_RETURN(r, table->Delete(a.where, opts));
    }
    PrintChange("delete", a.table, r);
    return {};
  }; });

  auto* upsert = app.add_subcommand("upsert", "insert or replace rows by the identifier columns");
  upsert->add_option("TABLE", a.table)->required();
  upsert->add_option("FILE", a.files, "input files ('-': standard input)")->required();
  upsert->add_option("--branch", a.branch, "branch to write to");
  AddInputOptions(upsert, a);
  upsert->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto in, Inputs(a, a.files));
    return in.second->Named([&]() -> Status {
      SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
      // The keys first, then the rows each key keeps, written as they are read again.
      SKADE_ASSIGN_OR_RETURN(auto keys, ReadInputKeys(in.second->paths(), *table->metadata()->schema(), in.first));
      WriteOptions opts;
      opts.branch = a.branch;
      SKADE_ASSIGN_OR_RETURN(auto r, table->Upsert(keys, [&](const UpsertRows& rows) {
        return StageInputs(ctx, *table, *in.second, a.branch, in.first, &rows);
      }, opts));
      PrintChange("upsert", a.table, r);
      return {};
    }());
  }; });

  auto* overwrite = app.add_subcommand("overwrite", "replace rows (matching --where, else the partitions written)");
  overwrite->add_option("TABLE", a.table)->required();
  overwrite->add_option("FILE", a.files, "input files ('-': standard input)")->required();
  overwrite->add_option("--where", a.where, "rows to replace");
  overwrite->add_option("--branch", a.branch, "branch to write to");
  AddInputOptions(overwrite, a);
  overwrite->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(auto in, Inputs(a, a.files));
    return in.second->Named([&]() -> Status {
      SKADE_ASSIGN_OR_RETURN(auto table, LoadTable(ctx, a.table));
      WriteOptions opts;
      opts.branch = a.branch;
      std::optional<std::string> filter;
      if (!a.where.empty()) filter = a.where;
      // The input is written as it is read (again if a conflicting commit makes it redo).
      SKADE_ASSIGN_OR_RETURN(auto r, table->Overwrite([&] {
        return StageInputs(ctx, *table, *in.second, a.branch, in.first);
      }, filter, opts));
      PrintChange("overwrite", a.table, r);
      return {};
    }());
  }; });

  auto* alter = app.add_subcommand("alter", "evolve a table's schema or partitioning");
  alter->add_option("TABLE", a.table)->required();
  alter->add_option("CHANGE", a.alter,
                    "add-column NAME TYPE | rename-column OLD NEW | drop-column NAME | widen-column NAME TYPE | "
                    "set-optional NAME (several: one new schema, all or none) | add-partition SPEC | "
                    "drop-partition NAME (alone) | set-property KEY=VALUE | unset-property KEY (several: one commit) | "
                    "set-identifier COL[,COL...] | unset-identifier (with schema changes)")
      ->required();
  alter->add_option("--after", a.after, "with add-column: place the column after COL");
  auto* default_option =
      alter->add_option("--default", a.default_value,
                        "with add-column (format version 3): the value rows written before read as, and writes "
                        "without the column fill in; the column may then be required");
  alter->callback([&, default_option] {
    action = [&, default_option] {
      std::optional<std::string> default_value;
      if (default_option->count() > 0) default_value = a.default_value;
      return CmdAlter(ctx, a.table, a.alter, a.after, default_value);
    };
  });
}

}  // namespace skade::cli
