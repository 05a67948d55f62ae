// Upsert benchmark driver, skade side (bench/run_bench.py runs PyIceberg).
//
//   upsert_bench setup --warehouse W --table ns.t --schema SPEC [--partition SPEC]
//                      --identifier COL --source data.parquet [--property K=V ...]
//       creates the table with COL as its identifier field and appends the source.
//   upsert_bench upsert --warehouse W --table ns.t --batch batch.parquet
//       times one Table::Upsert of the batch (table loaded and batch read into
//       memory outside the timing).
//   upsert_bench compact --warehouse W --table ns.t [--rounds N]
//       times Table::Compact(std::nullopt), N times from the same snapshot.
//   upsert_bench scan --warehouse W --table ns.t [--snapshot ID] [--warmup 1] [--reps 1]
//       times a full scan (NewScan [UseSnapshot] Plan + Read->ToTable; wall and CPU) and prints
//       the row count and sum(quantity) as a checksum, plus delete-file stats.
//   upsert_bench write --warehouse W --table ns.t [--rounds N]
//       reads the current snapshot into memory, then times writing those rows as
//       data files (DataWriter: the write half of a compaction, no commit); the
//       files are removed after the last round.
// Prints JSON.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "bench_common.h"
#include "skade/io/file_io.h"
#include "skade/table/data_writer.h"
#include "skade/table/scan.h"

using namespace skade;
using namespace skade::bench;

namespace {

int Setup(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto data = ReadParquet(a.Get("source"));
  Schema parsed = Check(ParseSchemaSpec(a.Get("schema")), "schema");
  std::string key = a.Get("identifier");
  std::vector<NestedField> fields = parsed.fields();
  int key_id = -1;
  for (auto& f : fields)
    if (f.name == key) {
      f.required = true;  // identifier fields are required (Iceberg spec)
      key_id = f.id;
    }
  if (key_id < 0) Die("no column " + key);
  Schema schema(0, fields, {key_id});
  if (!Check(catalog->NamespaceExists(ident.ns), "namespace"))
    Check(catalog->CreateNamespace(ident.ns), "create namespace " + ident.ns);
  PartitionSpec spec;
  std::string partition = a.Get("partition", "");
  if (!partition.empty()) spec = Check(ParsePartitionSpec(partition, schema), "partition spec");
  LoadedTable loaded = Check(catalog->CreateTable(ident, schema, spec, a.Properties()), "create table");
  Table table(*catalog, std::move(loaded));
  auto t0 = std::chrono::steady_clock::now();
  CommitResult r = Check(table.Append(data), "append");
  double secs = Seconds(std::chrono::steady_clock::now() - t0);
  PrintJson({{"rows", data->num_rows()}, {"append_s", secs}, {"files", r.added_files.size()},
             {"snapshot_id", r.snapshot_id}});
  return 0;
}

int Upsert(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto table = Check(Table::Load(*catalog, ident), "load table");
  auto batch = ReadParquet(a.Get("batch"));
  auto t0 = std::chrono::steady_clock::now();
  CommitResult r = Check(table->Upsert(batch), "upsert");
  double secs = Seconds(std::chrono::steady_clock::now() - t0);
  int64_t data_files = 0, eq_deletes = 0, pos_deletes = 0;
  for (const auto& f : r.added_files) {
    if (f.content == FileContent::kData) ++data_files;
    if (f.content == FileContent::kEqualityDeletes) ++eq_deletes;
    if (f.content == FileContent::kPositionDeletes) ++pos_deletes;
  }
  PrintJson({{"rows", batch->num_rows()},
             {"upsert_s", secs},
             {"rows_added", r.rows_added},
             {"rows_deleted", r.rows_deleted},
             {"snapshot_id", r.snapshot_id},
             {"added", {{"data", data_files}, {"equality_deletes", eq_deletes}, {"position_deletes", pos_deletes}}}});
  return 0;
}

// --rounds N compacts N times, main rolled back to the snapshot before between rounds.
int Compact(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto table = Check(Table::Load(*catalog, ident), "load table");
  int64_t before = table->metadata()->CurrentSnapshot() ? table->metadata()->CurrentSnapshot()->snapshot_id : 0;
  int64_t rounds = std::max<int64_t>(1, a.Int("rounds", 1));
  nlohmann::json times = nlohmann::json::array(), cpu = nlohmann::json::array();
  CommitResult r;
  for (int64_t i = 0; i < rounds; ++i) {
    if (i > 0) {
      Check(table->Rollback(before), "rollback");
      sync();  // the last round's files are written back outside the timing
    }
    double cpu0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    r = Check(table->Compact(std::nullopt), "compact");
    times.push_back(Seconds(std::chrono::steady_clock::now() - t0));
    cpu.push_back(CpuSeconds() - cpu0);
    if (!r.committed) break;
  }
  PrintJson({{"times_s", times},
             {"cpu_s", cpu},
             {"committed", r.committed},
             {"snapshot_before", before},
             {"snapshot_id", r.snapshot_id},
             {"rows", r.rows_added},
             {"files_added", r.added_files.size()}});
  return 0;
}

int Scan(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto table = Check(Table::Load(*catalog, ident), "load table");
  int64_t snapshot = a.Int("snapshot", 0);
  int64_t warmup = a.Int("warmup", 1), reps = a.Int("reps", 1);
  nlohmann::json times = nlohmann::json::array(), cpu = nlohmann::json::array();
  int64_t rows = -1, data_files = 0, quantity_sum = 0;
  std::set<std::string> delete_files;
  ScanStats stats;
  for (int64_t i = 0; i < warmup + reps; ++i) {
    double cpu0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    TableScan scan = table->NewScan();
    if (snapshot != 0) scan.UseSnapshot(snapshot);
    ScanPlan plan = Check(scan.Plan(), "plan");
    auto reader = Check(TableScan::Read(plan, &catalog->io()), "read");
    auto result = reader->ToTable();
    if (!result.ok()) Die("scan: " + ErrorFromReader(result.status()).ToString());
    double secs = Seconds(std::chrono::steady_clock::now() - t0);
    if (i >= warmup) {
      times.push_back(secs);
      cpu.push_back(CpuSeconds() - cpu0);
    }
    rows = (*result)->num_rows();
    stats = *plan.stats;
    data_files = static_cast<int64_t>(plan.tasks.size());
    delete_files.clear();
    for (const auto& t : plan.tasks)
      for (const auto& d : t.deletes) delete_files.insert(d.file->file_path);
    if (i == 0) {  // checksum, after the clock stopped
      auto col = (*result)->GetColumnByName("quantity");
      if (!col) Die("scan result lacks column quantity");
      for (const auto& chunk : col->chunks()) {
        const auto& q = static_cast<const arrow::Int64Array&>(*chunk);
        for (int64_t r = 0; r < q.length(); ++r)
          if (q.IsValid(r)) quantity_sum += q.Value(r);
      }
    }
  }
  PrintJson({{"rows", rows},
             {"quantity_sum", quantity_sum},
             {"times_s", times},
             {"cpu_s", cpu},
             {"data_files", data_files},
             {"delete_files", delete_files.size()},
             {"stats",
              {{"rows_read", stats.rows_read},
               {"rows_deleted", stats.rows_deleted},
               {"delete_files_applied", stats.delete_files}}}});
  return 0;
}

int Write(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto table = Check(Table::Load(*catalog, ident), "load table");
  ScanPlan plan = Check(table->NewScan().Plan(), "plan");
  auto reader = Check(TableScan::Read(plan, &catalog->io()), "read");
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  int64_t rows = 0;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> b;
    auto st = reader->ReadNext(&b);
    if (!st.ok()) Die("scan: " + ErrorFromReader(st).ToString());
    if (!b) break;
    rows += b->num_rows();
    batches.push_back(std::move(b));
  }
  // Repeated as the compaction is (--rounds). Every round's files stay until the last
  // round is done, as each compaction's do: a file removed at once would hand its
  // page-cache pages to the next round, whose copy into them is then several times
  // cheaper than into fresh pages on a VM (37 MB: 117 ms fresh, 8-14 ms reused).
  int64_t rounds = std::max<int64_t>(1, a.Int("rounds", 1));
  nlohmann::json times = nlohmann::json::array(), cpu = nlohmann::json::array();
  size_t files_written = 0;
  std::vector<DataFile> written;
  for (int64_t i = 0; i < rounds; ++i) {
    double cpu0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    auto writer = Check(DataWriter::Make(*table->metadata()), "writer");
    for (const auto& b : batches) Check(writer->Write(b), "write");
    auto files = Check(writer->Finish(), "finish");
    times.push_back(Seconds(std::chrono::steady_clock::now() - t0));
    cpu.push_back(CpuSeconds() - cpu0);
    files_written = files.size();
    written.insert(written.end(), files.begin(), files.end());
  }
  for (const auto& f : written) std::remove(LocalPath(f.file_path).c_str());
  PrintJson({{"rows", rows}, {"times_s", times}, {"cpu_s", cpu}, {"files", files_written}, {"batches", batches.size()}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a(argc, argv);
  if (a.mode == "setup") return Setup(a);
  if (a.mode == "upsert") return Upsert(a);
  if (a.mode == "compact") return Compact(a);
  if (a.mode == "scan") return Scan(a);
  if (a.mode == "write") return Write(a);
  Die("usage: upsert_bench setup|upsert|compact|scan|write --warehouse W --table ns.t ...");
}
