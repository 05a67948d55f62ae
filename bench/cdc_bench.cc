// CDC benchmark driver, skade side (bench/run_bench.py runs the peers).
//
//   cdc_bench latency --warehouse W [--commits 1000]
//       commit-to-subscriber latency of single-row appends, measured from the moment
//       the commit is durable (the writer's post-commit hook) to the moment a
//       subscriber has it: in-process push (CommitSubscription), cross-process push
//       (a child `cdc_bench subscribe`, woken by inotify) and a cross-process consumer
//       polling the commit log every 100 ms, one after the other in this run.
//   cdc_bench subscribe --warehouse W [--poll-ms N]
//       the child: prints "commit_seq steady_clock_ns" per commit it sees.
//   cdc_bench changelog-setup --warehouse W --table ns.t --source data.parquet
//                             --schema SPEC [--partition SPEC] [--changed-fraction 0.1]
//       loads the source (identifier `id`), then upserts half of the changed
//       fraction with new values and deletes the other half; prints the snapshots.
//   cdc_bench changelog --warehouse W --table ns.t --from S --to S [--warmup 1] [--reps 1]
//       times ReadChangelog over the range (after warm-up reads in the same
//       process); prints the times and rows per change type.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arrow/compute/api.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "bench_common.h"
#include "skade/cdc/changelog.h"
#include "skade/cdc/commit_subscription.h"
#include "skade/cdc/commit_watcher.h"
#include "skade/table/arrow_internal.h"

extern char** environ;

using namespace skade;
using namespace skade::bench;

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Records when each commit of this process became durable.
class DurableClock final : public CommitListener {
 public:
  void OnCommit(const CommitEvent& e) override {
    std::lock_guard lock(mu_);
    at_[e.commit_seq] = NowNs();
  }
  std::map<int64_t, int64_t> Take() {
    std::lock_guard lock(mu_);
    return std::move(at_);
  }

 private:
  std::mutex mu_;
  std::map<int64_t, int64_t> at_;
};

nlohmann::json Percentiles(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto q = [&](double p) { return ms[static_cast<size_t>(p * static_cast<double>(ms.size() - 1))]; };
  return {{"n", ms.size()}, {"p50_ms", q(0.5)}, {"p99_ms", q(0.99)}, {"max_ms", ms.back()}};
}

std::vector<double> Latencies(const std::map<int64_t, int64_t>& durable,
                              const std::map<int64_t, int64_t>& received) {
  std::vector<double> out;
  for (const auto& [seq, t] : durable) {
    auto it = received.find(seq);
    if (it == received.end()) Die("commit " + std::to_string(seq) + " never reached the subscriber");
    out.push_back(static_cast<double>(it->second - t) / 1e6);
  }
  return out;
}

// Single-row appends spaced a little apart, as a stream of independent commits.
void Write(Table& table, int commits) {
  arrow::Int64Builder b;
  for (int i = 0; i < commits; ++i) {
    (void)b.Append(i);
    auto arr = CheckArrow(b.Finish(), "array");
    auto data = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64(), false)}), {arr});
    Check(table.Append(data), "append");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::map<int64_t, int64_t> InProcess(Catalog& catalog, Table& table, int commits) {
  cdc::CommitSubscription sub(catalog, Check(catalog.CommitsSince(0), "log").back().commit_seq);
  std::map<int64_t, int64_t> received;
  std::thread reader([&] {
    while (static_cast<int>(received.size()) < commits) {
      auto e = Check(sub.Next(std::chrono::seconds(30)), "next");
      if (!e) Die("in-process subscriber timed out");
      received[e->commit_seq] = NowNs();
    }
  });
  Write(table, commits);
  reader.join();
  return received;
}

// Runs a `subscribe` child and collects what it prints until it has `commits` lines.
std::map<int64_t, int64_t> CrossProcess(const std::string& self, const std::string& warehouse,
                                        Table& table, int commits, int poll_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) Die("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::string poll = std::to_string(poll_ms);
  std::vector<const char*> argv = {self.c_str(), "subscribe", "--warehouse", warehouse.c_str(),
                                   "--poll-ms", poll.c_str(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, self.c_str(), &actions, nullptr, const_cast<char**>(argv.data()), environ) != 0)
    Die("spawn subscriber");
  ::close(fds[1]);
  std::string buf;
  auto read_line = [&](int timeout_ms) -> std::optional<std::string> {
    while (true) {
      size_t nl = buf.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        return line;
      }
      pollfd p{fds[0], POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
      char chunk[4096];
      ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buf.append(chunk, static_cast<size_t>(n));
    }
  };
  if (read_line(10000) != "ready") Die("subscriber did not start");
  std::map<int64_t, int64_t> received;
  std::thread reader([&] {
    while (static_cast<int>(received.size()) < commits) {
      auto line = read_line(30000);
      if (!line) Die("cross-process subscriber timed out");
      long long seq, ns;
      if (std::sscanf(line->c_str(), "%lld %lld", &seq, &ns) == 2) received[seq] = ns;
    }
  });
  Write(table, commits);
  reader.join();
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  ::close(fds[0]);
  return received;
}

int Subscribe(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  int64_t poll_ms = a.Int("poll-ms", 0);
  auto log = Check(catalog->CommitsSince(0), "log");
  int64_t cursor = log.empty() ? 0 : log.back().commit_seq;
  auto watcher = Check(cdc::CommitWatcher::Make(*catalog), "watch");
  std::puts("ready");
  std::fflush(stdout);
  std::vector<CommitLogEntry> entries;
  auto arrived = [&]() -> Result<bool> {
    SKADE_ASSIGN_OR_RETURN(entries, catalog->CommitsSince(cursor));
    return !entries.empty();
  };
  while (true) {
    if (poll_ms > 0) {  // the polling consumer most systems ship today
      std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
      Check(arrived(), "read log");
    } else {
      Check(watcher->WaitFor(arrived, std::nullopt), "wait");
    }
    int64_t now = NowNs();
    for (const auto& e : entries) {
      std::printf("%lld %lld\n", static_cast<long long>(e.commit_seq), static_cast<long long>(now));
      cursor = e.commit_seq;
    }
    entries.clear();
    std::fflush(stdout);
  }
}

int Latency(const Args& a, const std::string& self) {
  std::string wh = a.Get("warehouse");
  int commits = static_cast<int>(a.Int("commits", 1000));
  auto catalog = Check(Catalog::Create(wh), "open catalog");
  DurableClock clock;
  catalog->AddListener(&clock);  // first listener: it fires before any subscriber's
  nlohmann::json out;
  for (const char* arm : {"in_process_push", "cross_process_push", "cross_process_poll_100ms"}) {
    auto table = CreateTable(*catalog, {"bench", arm}, "id:long!", "", {});
    clock.Take();
    std::map<int64_t, int64_t> received;
    if (std::string(arm) == "in_process_push")
      received = InProcess(*catalog, *table, commits);
    else
      received = CrossProcess(self, wh, *table, commits,
                              std::string(arm) == "cross_process_push" ? 0 : 100);
    out[arm] = Percentiles(Latencies(clock.Take(), received));
  }
  catalog->RemoveListener(&clock);
  PrintJson(out);
  return 0;
}

int ChangelogSetup(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  TableIdent ident = Check(TableIdent::Parse(a.Get("table")), "table name");
  auto data = ReadParquet(a.Get("source"));
  Schema parsed = Check(ParseSchemaSpec(a.Get("schema")), "schema");
  std::vector<NestedField> fields = parsed.fields();
  fields[0].required = true;  // `id`, the identifier
  if (!Check(catalog->NamespaceExists(ident.ns), "namespace"))
    Check(catalog->CreateNamespace(ident.ns), "create namespace");
  Schema schema(0, fields, {fields[0].id});
  PartitionSpec spec;
  if (!a.Get("partition", "").empty()) spec = Check(ParsePartitionSpec(a.Get("partition"), schema), "partition");
  Check(catalog->CreateTable(ident, schema, spec, a.Properties()), "create");
  auto table = Check(Table::Load(*catalog, ident), "load");
  Check(table->Append(data), "load rows");
  int64_t from = table->metadata()->CurrentSnapshot()->snapshot_id;

  // Every (1/fraction)-th row changes: even ones are updated (quantity + 1), odd ones deleted.
  double fraction = std::stod(a.Get("changed-fraction", "0.1"));
  int64_t step = std::max<int64_t>(1, static_cast<int64_t>(1.0 / fraction));
  InitArrowCompute();
  arrow::Int64Builder upd, del;
  int64_t n = data->num_rows();
  for (int64_t i = 0, k = 0; i < n; i += step, ++k) (void)(k % 2 ? del.Append(i) : upd.Append(i));
  auto upd_ids = CheckArrow(upd.Finish(), "ids");
  auto del_ids = CheckArrow(del.Finish(), "ids");
  auto updated = CheckArrow(arrow::compute::Take(data, upd_ids), "take").table();
  int qcol = updated->schema()->GetFieldIndex("quantity");
  auto bumped = CheckArrow(arrow::compute::Add(updated->column(qcol), arrow::Datum(int64_t{1})), "add");
  updated = CheckArrow(updated->SetColumn(qcol, updated->schema()->field(qcol), bumped.chunked_array()), "set");
  Check(table->Upsert(updated), "upsert");
  auto keys = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64(), false)}), {del_ids});
  Check(table->DeleteKeys(keys), "delete");
  int64_t to = table->metadata()->CurrentSnapshot()->snapshot_id;
  PrintJson({{"from", from}, {"to", to}, {"rows", n}, {"updated", upd_ids->length()},
             {"deleted", del_ids->length()}});
  return 0;
}

int Changelog(const Args& a) {
  auto catalog = Check(Catalog::Create(a.Get("warehouse")), "open catalog");
  auto table = Check(Table::Load(*catalog, Check(TableIdent::Parse(a.Get("table")), "name")), "load");
  // Warm-up reads first, as the peer's in-process rounds are warm too.
  std::vector<double> times;
  std::shared_ptr<arrow::Table> rows;
  int64_t warmup = a.Int("warmup", 1), reps = a.Int("reps", 1);
  for (int64_t i = 0; i < warmup + reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    rows = Check(cdc::ReadChangelog(*table, a.Int("from", 0), a.Int("to", 0)), "changelog");
    if (i >= warmup) times.push_back(Seconds(std::chrono::steady_clock::now() - t0));
  }
  std::map<std::string, int64_t> counts;
  auto types = rows->GetColumnByName("_change_type");
  for (const auto& chunk : types->chunks()) {
    const auto& s = static_cast<const arrow::StringArray&>(*chunk);
    for (int64_t i = 0; i < s.length(); ++i) ++counts[std::string(s.GetView(i))];
  }
  PrintJson({{"times_s", times}, {"rows", rows->num_rows()}, {"by_type", counts}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a(argc, argv);
  std::string self = std::filesystem::read_symlink("/proc/self/exe");
  if (a.mode == "latency") return Latency(a, self);
  if (a.mode == "subscribe") return Subscribe(a);
  if (a.mode == "changelog-setup") return ChangelogSetup(a);
  if (a.mode == "changelog") return Changelog(a);
  Die("mode must be latency, subscribe, changelog-setup or changelog");
}
