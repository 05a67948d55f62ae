// Commands on the catalog: the warehouse, namespaces, and creating, listing,
// describing, dropping and renaming tables.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

#include "commands.h"
#include "output.h"
#include "skade/format/partition_spec.h"
#include "skade/io/file_io.h"
#include "skade/table/schema_update.h"
#include "skade/table/table.h"

namespace skade::cli {
namespace {

Status RefuseInternal(const std::string& ns) {
  if (IsInternalNamespace(ns))
    return InvalidArgument("namespace '" + ns + "' is reserved for skade's own tables");
  return {};
}

Status CmdCreate(Context& ctx, const std::string& name, const std::string& schema_spec,
                 const std::string& partition_spec, const std::string& identifier,
                 const std::vector<std::string>& props) {
  SKADE_ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(name));
  SKADE_RETURN_IF_ERROR(RefuseInternal(ident.ns));
  SKADE_ASSIGN_OR_RETURN(Schema schema, ParseSchemaSpec(schema_spec));
  if (!identifier.empty()) {
    SKADE_ASSIGN_OR_RETURN(std::vector<int> ids, IdentifierFieldIds(schema, SplitList(identifier)));
    schema = Schema(schema.schema_id(), schema.fields(), ids);
  }
  PartitionSpec spec;
  if (!partition_spec.empty()) {
    SKADE_ASSIGN_OR_RETURN(spec, ParsePartitionSpec(partition_spec, schema));
  }
  std::map<std::string, std::string> properties;
  for (const auto& p : props) {
    SKADE_ASSIGN_OR_RETURN(auto kv, ParseProperty(p, "--property"));
    properties.insert_or_assign(kv.first, kv.second);
  }
  SKADE_RETURN_IF_ERROR(CheckTableProperties(properties));
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
  if (m.format_version >= 3)  // row lineage: the id the next row written gets
    std::printf("format:    Iceberg v%d (next row id %lld)\n", m.format_version,
                static_cast<long long>(m.next_row_id.value_or(0)));
  else
    std::printf("format:    Iceberg v%d\n", m.format_version);
  std::printf("snapshot:  %s\n", cur ? std::to_string(cur->snapshot_id).c_str() : "(none)");
  if (cur) {
    auto total = [&](const char* key) {
      auto it = cur->summary.find(std::string("total-") + key);
      return it == cur->summary.end() ? std::string("?") : it->second;
    };
    // Iceberg's totals: records of the data files, and the deletes against them (what a
    // compaction would fold in).
    std::printf("records:   %s in data files; %s position and %s equality deletes against them\n",
                total("records").c_str(), total("position-deletes").c_str(), total("equality-deletes").c_str());
    std::printf("files:     %s data, %s delete; %s bytes\n", total("data-files").c_str(),
                total("delete-files").c_str(), total("files-size").c_str());
  }
  std::string part;
  for (const auto& f : m.spec().fields()) {
    if (!part.empty()) part += ", ";
    part += f.name + "=" + f.transform.ToString() + "(" + s.PathOf(f.source_id) + ")";
  }
  std::printf("partition: %s\n", part.empty() ? "(unpartitioned)" : part.c_str());
  std::string identifier;
  for (int id : s.identifier_field_ids()) identifier += (identifier.empty() ? "" : ", ") + s.PathOf(id);
  std::printf("identifier: %s\n", identifier.empty() ? "(none)" : identifier.c_str());
  // Kept for other engines' writes (Spark sorts by it); skade's writes do not sort.
  std::string order = m.SortOrderText();
  std::printf("sort order: %s\n", order.empty() ? "(unsorted)" : order.c_str());
  for (const auto& [k, v] : m.properties) std::printf("property:  %s=%s\n", k.c_str(), v.c_str());
  std::printf("\n");
  PrintListing(l, Format::kTable, stdout);
  return {};
}

struct Args {
  std::string format = "table";
  std::string ns, table, schema, partition, identifier, new_name, ns_filter;
  std::vector<std::string> props;
};

}  // namespace

void AddCatalogCommands(CLI::App& app, Context& ctx, CommandAction& action) {
  static Args a;
  auto add_format = [&](CLI::App* sub) {
    sub->add_option("--format", a.format, "table, csv or jsonl")->capture_default_str();
  };

  auto* init = app.add_subcommand("init", "create the warehouse and its catalog");
  init->callback([&] {
    ctx.create_warehouse = true;
    action = [&]() -> Status {
      std::printf("warehouse ready at %s\n", ctx.catalog->warehouse().c_str());
      return {};
    };
  });

  auto* nss = app.add_subcommand("namespaces", "list namespaces");
  add_format(nss);
  nss->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(a.format, false));
    SKADE_ASSIGN_OR_RETURN(auto list, ctx.catalog->ListNamespaces());
    Listing l{{"namespace"}, {}, {false}};
    for (auto& n : list)
      if (!IsInternalNamespace(n)) l.rows.push_back({n});
    PrintListing(l, f, stdout);
    return {};
  }; });

  auto* cns = app.add_subcommand("create-namespace", "create a namespace");
  cns->add_option("NS", a.ns, "namespace (parts joined by '.')")->required();
  cns->callback([&] { action = [&]() -> Status {
    SKADE_RETURN_IF_ERROR(RefuseInternal(a.ns));
    SKADE_RETURN_IF_ERROR(ctx.catalog->CreateNamespace(a.ns));
    std::printf("created namespace %s\n", a.ns.c_str());
    return {};
  }; });
  auto* dns = app.add_subcommand("drop-namespace", "drop an empty namespace");
  dns->add_option("NS", a.ns, "namespace")->required();
  dns->callback([&] { action = [&]() -> Status {
    SKADE_RETURN_IF_ERROR(ctx.catalog->DropNamespace(a.ns));
    std::printf("dropped namespace %s\n", a.ns.c_str());
    return {};
  }; });

  auto* create = app.add_subcommand("create", "create a table");
  create->add_option("TABLE", a.table, "namespace.name")->required();
  create->add_option("--schema", a.schema, "e.g. 'id:long!, name:string, ts:timestamptz'")->required();
  create->add_option("--partition", a.partition, "e.g. 'day(ts), bucket(16,id), country'");
  create->add_option("--identifier", a.identifier, "identifier columns, comma separated");
  create->add_option("--property", a.props, "table property KEY=VALUE (repeatable)");
  create->callback([&] {
    action = [&] { return CmdCreate(ctx, a.table, a.schema, a.partition, a.identifier, a.props); };
  });

  auto* tables = app.add_subcommand("tables", "list tables");
  tables->add_option("NS", a.ns_filter, "only this namespace");
  add_format(tables);
  tables->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(a.format, false));
    std::optional<std::string_view> ns;
    if (!a.ns_filter.empty()) ns = a.ns_filter;
    SKADE_ASSIGN_OR_RETURN(auto list, ctx.catalog->ListTables(ns));
    Listing l{{"table"}, {}, {false}};
    for (auto& t : list)
      if (ns || !IsInternalNamespace(t.ns)) l.rows.push_back({t.ToString()});
    PrintListing(l, f, stdout);
    return {};
  }; });

  auto* describe = app.add_subcommand("describe", "show a table's schema, partitioning and state");
  describe->add_option("TABLE", a.table)->required();
  add_format(describe);
  describe->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(a.format, false));
    return CmdDescribe(ctx, a.table, f);
  }; });

  auto* drop = app.add_subcommand("drop", "drop a table (its files stay)");
  drop->add_option("TABLE", a.table)->required();
  drop->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(TableIdent ident, TableIdent::Parse(a.table));
    SKADE_RETURN_IF_ERROR(ctx.catalog->DropTable(ident));
    std::printf("dropped %s\n", a.table.c_str());
    return {};
  }; });

  auto* rename = app.add_subcommand("rename", "rename a table (its files stay where they are)");
  rename->add_option("TABLE", a.table)->required();
  rename->add_option("NEW", a.new_name)->required();
  rename->callback([&] { action = [&]() -> Status {
    SKADE_ASSIGN_OR_RETURN(TableIdent from, TableIdent::Parse(a.table));
    SKADE_ASSIGN_OR_RETURN(TableIdent to, TableIdent::Parse(a.new_name));
    SKADE_RETURN_IF_ERROR(RefuseInternal(to.ns));
    SKADE_RETURN_IF_ERROR(ctx.catalog->RenameTable(from, to));
    std::printf("renamed %s to %s\n", a.table.c_str(), a.new_name.c_str());
    return {};
  }; });
}

}  // namespace skade::cli
