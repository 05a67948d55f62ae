// Append benchmark driver, skade side (bench/run_bench.py runs PyIceberg).
//
//   append_bench big --warehouse W --table ns.t --schema SPEC [--partition SPEC]
//                    --source data.parquet [--property K=V ...]
//       creates a fresh table and times one Table::Append of the whole source.
//   append_bench small --warehouse W --table ns.t --schema SPEC [--partition SPEC]
//                      --source data.parquet --commits 200 [--property K=V ...]
//       creates a fresh table and times each of N single-row appends (row i of
//       the source), one commit each.
// The source file is read into memory before any timing. Prints JSON.
#include "bench_common.h"

using namespace skade;
using namespace skade::bench;

namespace {

int Big(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto data = ReadParquet(a.Get("source"));
  auto table = CreateTable(*catalog, ident, a.Get("schema"), a.Get("partition", ""), a.Properties());
  double cpu0 = CpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  CommitResult r = Check(table->Append(data), "append");
  double secs = Seconds(std::chrono::steady_clock::now() - t0);
  double cpu_s = CpuSeconds() - cpu0;
  int64_t bytes = 0;
  for (const auto& f : r.added_files) bytes += f.file_size_in_bytes;
  PrintJson({{"rows", data->num_rows()},
             {"append_s", secs},
             {"append_cpu_s", cpu_s},
             {"files", r.added_files.size()},
             {"bytes", bytes}});
  return 0;
}

int Small(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto data = ReadParquet(a.Get("source"));
  int64_t commits = a.Int("commits", 200);
  std::vector<std::shared_ptr<arrow::Table>> rows;
  for (int64_t i = 0; i < commits; ++i) rows.push_back(data->Slice(i % data->num_rows(), 1));
  auto table = CreateTable(*catalog, ident, a.Get("schema"), a.Get("partition", ""), a.Properties());
  nlohmann::json latencies = nlohmann::json::array();
  for (const auto& row : rows) {
    auto t0 = std::chrono::steady_clock::now();
    Check(table->Append(row), "append");
    latencies.push_back(Seconds(std::chrono::steady_clock::now() - t0));
  }
  PrintJson({{"commits", commits}, {"latencies_s", latencies}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a(argc, argv);
  if (a.mode == "big") return Big(a);
  if (a.mode == "small") return Small(a);
  Die("usage: append_bench big|small --warehouse W --table ns.t ...");
}
