// Scan benchmark driver, skade side (bench/run_bench.py runs the peers).
//
//   scan_bench setup --warehouse W --table ns.t --schema SPEC --partition SPEC
//                    --source data.parquet [--property K=V ...]
//       creates the table and appends the source file through the C++ API.
//   scan_bench scan --warehouse W --table ns.t [--columns a,b] [--filter EXPR]
//                   [--budget-mib N] [--consume table|count]
//       times Table::NewScan().Select().Filter().ToTable() once for each line read
//       from stdin and prints that scan's JSON line (wall and process CPU seconds).
//       The table is loaded once, outside the timing, as PyIceberg's load_table is,
//       and the process stays up between scans, as the peers' Python process does
//       (`yes '' | head -n 6 | scan_bench scan ...` for six scans in one process).
//       --budget-mib sets the plan's read-ahead budget (default: the scan's own).
#include <ctime>
#include <iostream>
#include <sstream>

#include "bench_common.h"
#include "skade/table/scan.h"
#include "skade/table/zstd_codec.h"

using namespace skade;
using namespace skade::bench;

namespace {

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

int Setup(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto data = ReadParquet(a.Get("source"));
  auto table = CreateTable(*catalog, ident, a.Get("schema"), a.Get("partition", ""), a.Properties());
  auto t0 = std::chrono::steady_clock::now();
  CommitResult r = Check(table->Append(data), "append");
  double secs = Seconds(std::chrono::steady_clock::now() - t0);
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : r.added_files)
    files.push_back({{"path", f.file_path}, {"records", f.record_count}, {"bytes", f.file_size_in_bytes}});
  PrintJson({{"rows", data->num_rows()}, {"append_s", secs}, {"snapshot_id", r.snapshot_id}, {"files", files}});
  return 0;
}

struct ScanOptions {
  std::vector<std::string> columns;
  std::string filter;
  int64_t budget_mib = 0;  // 0: the scan's default read-ahead budget
  bool count_only = false;
};

ScanOptions ParseScanOptions(const Args& a) {
  ScanOptions o;
  o.columns = SplitComma(a.Get("columns", ""));
  o.filter = a.Get("filter", "");
  o.budget_mib = a.Int("budget-mib", 0);
  // `--consume count` drops each batch once counted (as `skade scan --format none`), so peak
  // RSS is the scan's own; `table` collects the rows into one table (as the API's users do).
  std::string consume = a.Get("consume", "table");
  if (consume != "table" && consume != "count") Die("--consume wants table or count");
  o.count_only = consume == "count";
  return o;
}

struct ScanRun {
  int64_t rows = 0, cols = -1;
  double secs = 0, cpu = 0, plan_secs = 0;
  double zstd_secs = 0;  // of `cpu`, in zstd page decompression (ZstdDecompressNanos)
  ScanStats stats;
};

ScanRun ScanOnce(Table& table, FileIO* io, const ScanOptions& o) {
  ScanRun run;
  auto t0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();  // CPU time of every thread: steadier than wall time on a loaded machine
  const int64_t zstd0 = ZstdDecompressNanos();
  TableScan scan = table.NewScan();
  if (!o.columns.empty()) scan.Select(o.columns);
  if (!o.filter.empty()) scan.Filter(o.filter);
  ScanPlan plan = Check(scan.Plan(), "plan");
  if (o.budget_mib > 0) plan.memory_budget_bytes = o.budget_mib << 20;
  auto t_plan = std::chrono::steady_clock::now();
  std::shared_ptr<ScanStats> stats = plan.stats;
  auto reader = Check(TableScan::Read(std::move(plan), io), "read");
  if (o.count_only) {
    for (;;) {
      std::shared_ptr<arrow::RecordBatch> batch;
      arrow::Status st = reader->ReadNext(&batch);
      if (!st.ok()) Die("scan: " + ErrorFromReader(st).ToString());
      if (!batch) break;
      run.rows += batch->num_rows();
      run.cols = batch->num_columns();
    }
  } else {
    auto result = reader->ToTable();
    if (!result.ok()) Die("scan: " + ErrorFromReader(result.status()).ToString());
    run.rows = (*result)->num_rows();
    run.cols = (*result)->num_columns();
  }
  run.secs = Seconds(std::chrono::steady_clock::now() - t0);
  run.cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  run.zstd_secs = static_cast<double>(ZstdDecompressNanos() - zstd0) / 1e9;
  run.plan_secs = Seconds(t_plan - t0);
  run.stats = *stats;
  return run;
}

nlohmann::json StatsJson(const ScanStats& s) {
  return {{"files_planned", s.files_planned},       {"files_total", s.files_total},
          {"row_groups_total", s.row_groups_total}, {"row_groups_skipped", s.row_groups_skipped},
          {"rows_read", s.rows_read},               {"pages_skipped", s.pages_skipped}};
}

int Scan(const Args& a) {
  TimeZstdDecompression(true);
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto table = Check(Table::Load(*catalog, ident), "load table");
  ScanOptions o = ParseScanOptions(a);
  for (std::string line; std::getline(std::cin, line);) {
    ScanRun r = ScanOnce(*table, &catalog->io(), o);
    PrintJson({{"rows", r.rows}, {"columns", r.cols}, {"time_s", r.secs}, {"cpu_s", r.cpu},
               {"zstd_decompress_s", r.zstd_secs}, {"plan_s", r.plan_secs}, {"stats", StatsJson(r.stats)}});
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a(argc, argv);
  if (a.mode == "setup") return Setup(a);
  if (a.mode == "scan") return Scan(a);
  Die("usage: scan_bench setup|scan --warehouse W --table ns.t ...");
}
