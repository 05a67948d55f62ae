// `skade demo`: a small shop warehouse built step by step, printed as it goes.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "commands.h"
#include "output.h"
#include "skade/cdc/change_stream.h"
#include "skade/cdc/changelog.h"
#include "skade/io/file_io.h"
#include "skade/table/scan.h"
#include "skade/table/schema_update.h"
#include "skade/table/table.h"

#include <arrow/api.h>

#include "input.h"

namespace skade::cli {
namespace {

Status Write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) return IoError("cannot write " + path);
  return {};
}

Status Append(Context& ctx, Table& t, const std::string& path) {
  SKADE_ASSIGN_OR_RETURN(auto reader, OpenInput(path, *t.metadata()->schema()));
  SKADE_ASSIGN_OR_RETURN(auto res, t.Append(*reader));
  std::printf("  appended %s -> snapshot %lld (commit_seq %lld)\n",
              std::filesystem::path(path).filename().c_str(), (long long)res.snapshot_id,
              (long long)res.commit_seq);
  return {};
}

Status Show(Context& ctx, Table& t, TableScan scan, const char* title) {
  std::printf("\n== %s\n", title);
  SKADE_ASSIGN_OR_RETURN(ScanPlan plan, scan.Plan());
  SKADE_ASSIGN_OR_RETURN(auto reader, TableScan::Read(plan, &ctx.catalog->io()));
  SKADE_RETURN_IF_ERROR(WriteScan(*reader, *plan.schema, Format::kTable, stdout, ""));
  const ScanStats& s = *plan.stats;
  std::printf("plan: files %lld -> %lld, rows %lld -> %lld planned -> %lld returned\n",
              (long long)s.files_total, (long long)s.files_planned, (long long)s.rows_total,
              (long long)s.rows_planned, (long long)s.rows_returned);
  return {};
}

Status ShowChangelog(Table& t, std::optional<int64_t> from, int64_t to, bool compute_updates,
                     const char* title) {
  std::printf("\n== %s\n", title);
  cdc::ChangelogOptions o;
  o.compute_updates = compute_updates;
  SKADE_ASSIGN_OR_RETURN(auto rows, cdc::ReadChangelog(t, from, to, o));
  arrow::TableBatchReader reader(*rows);
  SKADE_RETURN_IF_ERROR(WriteScan(reader, cdc::ChangelogSchema(*t.metadata()->schema()), Format::kTable, stdout, ""));
  return {};
}

// A change stream on `table` sees a commit that another skade process makes.
Status WatchAnotherProcess(Context& ctx, const TableIdent& table, const std::string& input) {
  std::printf("\n== watch: a change stream on %s, while another skade process appends %s\n",
              table.ToString().c_str(), std::filesystem::path(input).filename().c_str());
  SKADE_ASSIGN_OR_RETURN(auto cursor, cdc::ChangeStream::CurrentCursor(*ctx.catalog, table));
  SKADE_ASSIGN_OR_RETURN(auto stream, cdc::ChangeStream::Open(*ctx.catalog, table, cursor));
  std::string self = std::filesystem::read_symlink("/proc/self/exe");
  std::string cmd = "'" + self + "' --warehouse '" + ctx.warehouse + "' append " + table.ToString() + " '" +
                    input + "' > /dev/null";
  auto started = std::chrono::steady_clock::now();
  std::thread writer([&] {
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "demo: the writer process failed\n");
  });
  auto window = stream->Next(std::chrono::seconds(30));
  writer.join();
  if (!window) return std::unexpected(window.error());
  if (!*window) return Internal("the change stream saw no commit within 30 s");
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const auto& snap = (*window)->snapshots.back();
  std::printf("woke %.0f ms after starting the writer process (its start-up included): snapshot %lld (%s), "
              "resume cursor %s\n", ms, (long long)snap.snapshot_id, snap.operation.c_str(),
              (*window)->end.ToString().c_str());
  SKADE_ASSIGN_OR_RETURN(auto t, Table::Load(*ctx.catalog, table));
  arrow::TableBatchReader reader(*(*window)->rows);
  SKADE_RETURN_IF_ERROR(WriteScan(reader, cdc::ChangelogSchema(*t->metadata()->schema()), Format::kTable, stdout, ""));
  std::printf("(from a shell: skade --warehouse %s watch %s --changes)\n", ctx.warehouse.c_str(),
              table.ToString().c_str());
  return {};
}

}  // namespace

Status RunDemo(Context& ctx) {
  Catalog& cat = *ctx.catalog;
  std::string in = cat.warehouse() + "/demo-input";
  SKADE_RETURN_IF_ERROR(MakeDirs(in));
  std::printf("warehouse: %s\n", cat.warehouse().c_str());
  if (!*cat.NamespaceExists("shop")) SKADE_RETURN_IF_ERROR(cat.CreateNamespace("shop"));
  for (const char* t : {"customers", "orders", "order_lines"}) {
    TableIdent id{"shop", t};
    if (cat.LoadTable(id)) SKADE_RETURN_IF_ERROR(cat.DropTable(id));
  }
  SKADE_ASSIGN_OR_RETURN(Schema cs, ParseSchemaSpec("id:long!, name:string!, country:string, signup:date"));
  cs = Schema(0, cs.fields(), {1});
  SKADE_ASSIGN_OR_RETURN(PartitionSpec cp, ParsePartitionSpec("country", cs));
  SKADE_RETURN_IF_ERROR(cat.CreateTable({"shop", "customers"}, cs, cp, {}));
  SKADE_ASSIGN_OR_RETURN(Schema os, ParseSchemaSpec(
      "order_id:long!, customer_id:long!, ts:timestamptz!, amount:decimal(10,2), status:string"));
  SKADE_ASSIGN_OR_RETURN(PartitionSpec op, ParsePartitionSpec("day(ts), bucket(4,customer_id)", os));
  SKADE_RETURN_IF_ERROR(cat.CreateTable({"shop", "orders"}, os, op, {}));
  SKADE_ASSIGN_OR_RETURN(Schema ls, ParseSchemaSpec(
      "order_id:long!, line:int!, sku:string, qty:int, price:decimal(10,2), tags:list<string>"));
  SKADE_RETURN_IF_ERROR(cat.CreateTable({"shop", "order_lines"}, ls, PartitionSpec(), {}));
  std::printf("created shop.customers (partitioned by country), shop.orders (day(ts), bucket(4,customer_id)), "
              "shop.order_lines\n");

  SKADE_RETURN_IF_ERROR(Write(in + "/customers-1.csv",
                              "id,name,country,signup\n1,Astrid,SE,2024-01-03\n2,Bjorn,NO,2024-01-05\n"
                              "3,Chloe,FR,2024-02-11\n4,Dag,SE,2024-02-20\n"));
  SKADE_RETURN_IF_ERROR(Write(in + "/customers-2.csv", "id,name,country,signup\n5,Eira,DK,2024-03-01\n6,Frode,NO,\n"));
  SKADE_RETURN_IF_ERROR(Write(in + "/orders-1.csv",
                              "order_id,customer_id,ts,amount,status\n100,1,2024-03-01T10:00:00Z,59.90,shipped\n"
                              "101,2,2024-03-01T11:30:00Z,120.00,shipped\n102,1,2024-03-02T09:15:00Z,15.50,open\n"));
  SKADE_RETURN_IF_ERROR(Write(in + "/orders-2.csv",
                              "order_id,customer_id,ts,amount,status\n103,3,2024-03-02T18:45:00Z,240.00,open\n"
                              "104,5,2024-03-03T08:00:00Z,99.99,open\n"));
  SKADE_RETURN_IF_ERROR(Write(in + "/lines-1.jsonl",
                              "{\"order_id\":100,\"line\":1,\"sku\":\"MUG\",\"qty\":2,\"price\":\"19.95\",\"tags\":[\"kitchen\"]}\n"
                              "{\"order_id\":100,\"line\":2,\"sku\":\"TEA\",\"qty\":1,\"price\":\"20.00\",\"tags\":[]}\n"
                              "{\"order_id\":101,\"line\":1,\"sku\":\"LAMP\",\"qty\":1,\"price\":\"120.00\",\"tags\":[\"home\",\"light\"]}\n"
                              "{\"order_id\":103,\"line\":1,\"sku\":\"CHAIR\",\"qty\":2,\"price\":\"120.00\",\"tags\":null}\n"));

  SKADE_ASSIGN_OR_RETURN(auto customers, Table::Load(cat, {"shop", "customers"}));
  SKADE_ASSIGN_OR_RETURN(auto orders, Table::Load(cat, {"shop", "orders"}));
  SKADE_ASSIGN_OR_RETURN(auto lines, Table::Load(cat, {"shop", "order_lines"}));
  std::printf("\nappending batches:\n");
  SKADE_RETURN_IF_ERROR(Append(ctx, *customers, in + "/customers-1.csv"));
  SKADE_RETURN_IF_ERROR(Append(ctx, *orders, in + "/orders-1.csv"));
  int64_t first_orders_snapshot = *orders->metadata()->current_snapshot_id;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  SKADE_RETURN_IF_ERROR(Append(ctx, *customers, in + "/customers-2.csv"));
  SKADE_RETURN_IF_ERROR(Append(ctx, *orders, in + "/orders-2.csv"));
  SKADE_RETURN_IF_ERROR(Append(ctx, *lines, in + "/lines-1.jsonl"));

  SKADE_RETURN_IF_ERROR(Show(ctx, *customers, customers->NewScan(), "scan shop.customers"));
  SKADE_RETURN_IF_ERROR(Show(ctx, *customers,
                             std::move(customers->NewScan().Select({"name", "signup"}).Filter("country = 'SE'")),
                             "customers in SE (partition pruning)"));
  SKADE_RETURN_IF_ERROR(Show(ctx, *orders,
                             std::move(orders->NewScan().Filter("amount >= 100 and status = 'open'")),
                             "open orders of 100 or more"));
  SKADE_RETURN_IF_ERROR(Show(ctx, *orders, std::move(orders->NewScan().UseSnapshot(first_orders_snapshot)),
                             "time travel: shop.orders at its first snapshot"));
  SKADE_RETURN_IF_ERROR(Show(ctx, *lines, lines->NewScan(), "scan shop.order_lines (nested list column)"));

  // Row-level changes and evolution, each shown before and after.
  SKADE_RETURN_IF_ERROR(Write(in + "/customers-update.csv",
                              "id,name,country,signup\n4,Dag,NO,2024-02-20\n7,Greta,SE,2024-04-02\n"));
  SKADE_ASSIGN_OR_RETURN(auto updates_reader, OpenInput(in + "/customers-update.csv", *customers->metadata()->schema()));
  auto updates = updates_reader->ToTable();
  if (!updates.ok()) return IoError(updates.status().message());
  int64_t before_upsert = *customers->metadata()->current_snapshot_id;
  SKADE_ASSIGN_OR_RETURN(auto upserted, customers->Upsert(*updates));
  std::printf("\nupsert by id into shop.customers (Dag moves to NO, Greta is new) -> snapshot %lld\n",
              (long long)upserted.snapshot_id);
  SKADE_RETURN_IF_ERROR(Show(ctx, *customers, std::move(customers->NewScan().Filter("id in (4, 7)")),
                             "customers 4 and 7 after the upsert"));
  SKADE_RETURN_IF_ERROR(Show(ctx, *orders, std::move(orders->NewScan().Filter("status = 'shipped'")),
                             "shipped orders before the delete"));
  SKADE_ASSIGN_OR_RETURN(auto deleted, orders->Delete("status = 'shipped'"));
  std::printf("\ndelete from shop.orders where status = 'shipped': %lld rows -> snapshot %lld\n",
              (long long)deleted.rows_deleted, (long long)deleted.snapshot_id);
  SKADE_RETURN_IF_ERROR(Show(ctx, *orders, orders->NewScan(), "shop.orders after the delete"));
  SKADE_RETURN_IF_ERROR(ShowChangelog(*customers, before_upsert, upserted.snapshot_id, true,
                                      "changelog of shop.customers across the upsert (updates paired by id)"));
  SKADE_RETURN_IF_ERROR(ShowChangelog(*orders, first_orders_snapshot, deleted.snapshot_id, false,
                                      "changelog of shop.orders from its first snapshot to the delete"));
  SchemaUpdate evolve;
  evolve.AddColumn("email", Type::Primitive(TypeId::kString), "name").RenameColumn("signup", "signed_up");
  SKADE_RETURN_IF_ERROR(customers->UpdateSchema(evolve));
  std::printf("\nevolved shop.customers: added email after name, renamed signup to signed_up (no rewrite)\n");
  SKADE_RETURN_IF_ERROR(Write(in + "/customers-3.csv",
                              "id,name,email,country,signed_up\n8,Hedda,hedda@example.com,NO,2024-05-05\n"));
  SKADE_RETURN_IF_ERROR(Append(ctx, *customers, in + "/customers-3.csv"));
  SKADE_RETURN_IF_ERROR(Show(ctx, *customers, customers->NewScan(), "shop.customers after the evolution"));

  SKADE_RETURN_IF_ERROR(Write(in + "/orders-3.csv",
                              "order_id,customer_id,ts,amount,status\n105,7,2024-04-03T12:00:00Z,42.00,open\n"));
  SKADE_RETURN_IF_ERROR(WatchAnotherProcess(ctx, {"shop", "orders"}, in + "/orders-3.csv"));

  std::printf("\n== snapshots of shop.orders\n");
  Listing snaps{{"snapshot_id", "parent_id", "operation", "added_records", "total_records"}, {}, {}};
  for (const auto& s : orders->metadata()->snapshots) {
    auto get = [&](const char* k) {
      auto it = s.summary.find(k);
      return it == s.summary.end() ? std::string("0") : it->second;
    };
    snaps.rows.push_back({std::to_string(s.snapshot_id),
                          s.parent_snapshot_id ? std::to_string(*s.parent_snapshot_id) : "", s.operation(),
                          get("added-records"), get("total-records")});
  }
  PrintListing(snaps, Format::kTable, stdout);

  std::printf("\n== commit log\n");
  SKADE_ASSIGN_OR_RETURN(auto log, cat.CommitsSince(0));
  Listing l{{"commit_seq", "table", "action", "operation", "snapshot_id", "engine"}, {}, {}};
  for (const auto& e : log)
    l.rows.push_back({std::to_string(e.commit_seq), e.table.ToString(), e.action, e.operation,
                      e.snapshot_id ? std::to_string(*e.snapshot_id) : "", e.engine});
  PrintListing(l, Format::kTable, stdout);
  std::printf("\nPyIceberg can open the same tables: SqlCatalog(\"skade\", uri=\"sqlite:///%s/catalog.db\", "
              "warehouse=\"file://%s\")\n", cat.warehouse().c_str(), cat.warehouse().c_str());
  return RunLineageDemo(ctx);
}

}  // namespace skade::cli
