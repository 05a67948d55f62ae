// Scan benchmark driver, skade side (bench/run_bench.py runs the peers).
//
//   scan_bench setup --warehouse W --table ns.t --schema SPEC --partition SPEC
//                    --source data.parquet [--property K=V ...]
//       creates the table and appends the source file through the C++ API.
//   scan_bench scan --warehouse W --table ns.t [--columns a,b] [--filter EXPR]
//                   [--warmup 1] [--reps 1] [--budget-mib N] [--consume table|count]
//       times Table::NewScan().Select().Filter().ToTable() (the table is loaded
//       once, outside the timing, as PyIceberg's load_table is) and prints JSON
//       (wall and process CPU seconds per repetition). --budget-mib sets the
//       plan's read-ahead budget (default: the scan's own).
#include <ctime>
#include <sstream>

#include "bench_common.h"
#include "skade/table/scan.h"

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

int Scan(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto table = Check(Table::Load(*catalog, ident), "load table");
  std::vector<std::string> columns = SplitComma(a.Get("columns", ""));
  std::string filter = a.Get("filter", "");
  int64_t warmup = a.Int("warmup", 1), reps = a.Int("reps", 1);
  int64_t budget_mib = a.Int("budget-mib", 0);  // 0: the scan's default read-ahead budget
  // `--consume count` drops each batch once counted (as `skade scan --format none`), so peak
  // RSS is the scan's own; `table` collects the rows into one table (as the API's users do).
  std::string consume = a.Get("consume", "table");
  if (consume != "table" && consume != "count") Die("--consume wants table or count");
  bool count_only = consume == "count";

  nlohmann::json times = nlohmann::json::array(), plan_times = nlohmann::json::array(),
                 cpu_times = nlohmann::json::array();
  int64_t rows = -1, cols = -1;
  ScanStats stats;
  for (int64_t i = 0; i < warmup + reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::clock_t c0 = std::clock();  // CPU time of every thread: steadier than wall time on a loaded machine
    TableScan scan = table->NewScan();
    if (!columns.empty()) scan.Select(columns);
    if (!filter.empty()) scan.Filter(filter);
    ScanPlan plan = Check(scan.Plan(), "plan");
    if (budget_mib > 0) plan.memory_budget_bytes = budget_mib << 20;
    auto t_plan = std::chrono::steady_clock::now();
    auto reader = Check(TableScan::Read(plan, &catalog->io()), "read");
    int64_t n = 0;
    if (count_only) {
      for (;;) {
        std::shared_ptr<arrow::RecordBatch> batch;
        arrow::Status st = reader->ReadNext(&batch);
        if (!st.ok()) Die("scan: " + ErrorFromReader(st).ToString());
        if (!batch) break;
        n += batch->num_rows();
        cols = batch->num_columns();
      }
    } else {
      auto result = reader->ToTable();
      if (!result.ok()) Die("scan: " + ErrorFromReader(result.status()).ToString());
      n = (*result)->num_rows();
      cols = (*result)->num_columns();
    }
    double secs = Seconds(std::chrono::steady_clock::now() - t0);
    double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    if (i >= warmup) {
      times.push_back(secs);
      cpu_times.push_back(cpu);
      plan_times.push_back(Seconds(t_plan - t0));
    }
    rows = n;
    stats = *plan.stats;
  }
  PrintJson({{"rows", rows},
             {"columns", cols},
             {"times_s", times},
             {"cpu_s", cpu_times},
             {"plan_s", plan_times},
             {"stats",
              {{"files_planned", stats.files_planned},
               {"files_total", stats.files_total},
               {"row_groups_total", stats.row_groups_total},
               {"row_groups_skipped", stats.row_groups_skipped},
               {"rows_read", stats.rows_read},
               {"pages_skipped", stats.pages_skipped}}}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a(argc, argv);
  if (a.mode == "setup") return Setup(a);
  if (a.mode == "scan") return Scan(a);
  Die("usage: scan_bench setup|scan --warehouse W --table ns.t ...");
}
