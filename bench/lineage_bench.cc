// Lineage benchmark: three measurements in one run, printed as one JSON document.
//
//   lineage_bench --dir D [--commits 200] [--events 100000] [--datasets 10000]
//
// * emission: `commits` single-row appends with lineage off and with the warehouse
//   sink on (a long-running writer: events batched 100 per append to
//   _skade.lineage_events), interleaved commit by commit; reports both and the ratio.
// * ingest: OpenLineage RunEvents per second from `events` JSON lines (Spark-like,
//   one input and one output each), parsed and appended to _skade.lineage_events,
//   beside parsing alone.
// * graph: LineageGraph over `datasets` datasets in 5 layers (each dataset derived from
//   two of the layer before); time to build and to answer downstream at depth 5.
#include <algorithm>
#include <filesystem>
#include <random>

#include "bench_common.h"
#include "skade/lineage/lineage_graph.h"
#include "skade/lineage/lineage_recorder.h"
#include "skade/lineage/openlineage.h"
#include "skade/lineage/warehouse_sink.h"

using namespace skade;
using namespace skade::bench;
using Clock = std::chrono::steady_clock;

namespace {

std::shared_ptr<arrow::Table> OneRow(int64_t id) {
  arrow::Int64Builder b;
  (void)b.Append(id);
  return arrow::Table::Make(arrow::schema({arrow::field("id", arrow::int64(), false)}), {b.Finish().ValueOrDie()});
}

nlohmann::json Emission(const std::string& dir, int commits) {
  auto off_cat = Check(Catalog::Create(dir + "/emission-off"), "open");
  auto on_cat = Check(Catalog::Create(dir + "/emission-on"), "open");
  lineage::LineageRecorder recorder(*on_cat, {"bench", 100, true});
  recorder.AddSink(std::make_shared<lineage::WarehouseSink>(*on_cat));
  std::vector<std::unique_ptr<Table>> tables;
  for (Catalog* c : {off_cat.get(), on_cat.get()}) {
    Check(c->CreateNamespace("b"), "namespace");
    Check(c->CreateTable({"b", "t"}, Check(ParseSchemaSpec("id:long!"), "schema"), PartitionSpec(), {}), "create");
    tables.push_back(Check(Table::Load(*c, {"b", "t"}), "load"));
  }
  Clock::duration off{}, on{};
  for (int i = 0; i < commits; ++i) {
    auto t0 = Clock::now();
    Check(tables[0]->Append(OneRow(i)), "append");
    auto t1 = Clock::now();
    Check(tables[1]->Append(OneRow(i)), "append");
    auto t2 = Clock::now();
    off += t1 - t0;
    on += t2 - t1;
  }
  auto t3 = Clock::now();
  Check(recorder.Flush(), "flush");
  on += Clock::now() - t3;
  auto stored = Check(lineage::ReadStoredEvents(*on_cat), "read events");
  if (stored.size() != static_cast<size_t>(commits) + 1) Die("emission: events missing");
  return {{"commits", commits},
          {"lineage_off_ms_per_commit", Seconds(off) * 1000 / commits},
          {"lineage_on_ms_per_commit", Seconds(on) * 1000 / commits},
          {"on_over_off", Seconds(on) / Seconds(off)}};
}

nlohmann::json Ingest(const std::string& dir, int events) {
  auto cat = Check(Catalog::Create(dir + "/ingest"), "open");
  std::vector<std::string> lines;
  lines.reserve(events);
  for (int i = 0; i < events; ++i) {
    char run_id[40];
    std::snprintf(run_id, sizeof run_id, "0190c0de-0000-7000-8000-%012d", i);
    lines.push_back(std::string(R"({"eventType":"COMPLETE","eventTime":"2026-01-01T00:00:00Z",)") +
                    R"("producer":"https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark",)" +
                    R"("schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",)" +
                    R"("run":{"runId":")" + run_id + R"("},"job":{"namespace":"spark","name":"job_)" +
                    std::to_string(i % 100) + R"("},"inputs":[{"namespace":"s3://lake","name":"raw/t)" +
                    std::to_string(i % 1000) + R"("}],"outputs":[{"namespace":"hive://m:9083","name":"db.t)" +
                    std::to_string(i % 1000 + 1000) + R"("}]})");
  }
  lineage::RunEventMapper mapper(cat->warehouse(), cat.get());
  auto t0 = Clock::now();
  std::vector<lineage::LineageEvent> parsed;
  parsed.reserve(events);
  for (const auto& line : lines) parsed.push_back(Check(mapper.FromRunEvent(line), "parse"));
  auto t1 = Clock::now();
  lineage::WarehouseSink sink(*cat);
  Check(sink.Write(parsed), "write");
  Check(sink.Flush(), "flush");
  auto t2 = Clock::now();
  return {{"events", events},
          {"parse_events_per_s", events / Seconds(t1 - t0)},
          {"ingest_events_per_s", events / Seconds(t2 - t0)},
          {"store_share", Seconds(t2 - t1) / Seconds(t2 - t0)}};
}

nlohmann::json Graph(int datasets) {
  constexpr int kLayers = 5;
  int per_layer = datasets / (kLayers + 1);
  std::mt19937 rng(7);
  std::vector<lineage::LineageEvent> events;
  auto name = [](int layer, int i) { return "l" + std::to_string(layer) + ".t" + std::to_string(i); };
  for (int layer = 1; layer <= kLayers; ++layer)
    for (int i = 0; i < per_layer; ++i) {
      lineage::LineageEvent e;
      e.event_id = lineage::NewEventId();
      e.actor = "job" + std::to_string(layer);
      e.operation = "append";
      e.ts_ms = layer * 1000 + i;
      for (int k = 0; k < 2; ++k) e.inputs.push_back({name(layer - 1, rng() % per_layer), std::nullopt, std::nullopt});
      e.outputs.push_back({name(layer, i), std::nullopt, std::nullopt});
      events.push_back(std::move(e));
    }
  auto t0 = Clock::now();
  auto graph = lineage::LineageGraph::Build(events);
  auto t1 = Clock::now();
  constexpr int kQueries = 200;
  size_t reached = 0;
  std::vector<std::string> sources;  // first-layer datasets some job read
  for (const auto& [key, node] : graph.nodes())
    if (key.starts_with("l0.")) sources.push_back(key);
  for (int q = 0; q < kQueries; ++q)
    reached += Check(graph.Downstream(sources[q % sources.size()], 5), "downstream").size();
  auto t2 = Clock::now();
  return {{"datasets", graph.nodes().size()},
          {"edges", graph.edges().size()},
          {"build_ms", Seconds(t1 - t0) * 1000},
          {"downstream_depth5_ms", Seconds(t2 - t1) * 1000 / kQueries},
          {"mean_reached", static_cast<double>(reached) / kQueries}};
}

}  // namespace

int main(int argc, char** argv) {
  Args args(argc, argv);
  std::string dir = args.Get("dir");
  std::filesystem::remove_all(dir);
  nlohmann::json out;
  out["emission"] = Emission(dir, static_cast<int>(args.Int("commits", 200)));
  out["ingest"] = Ingest(dir, static_cast<int>(args.Int("events", 100000)));
  out["graph"] = Graph(static_cast<int>(args.Int("datasets", 10000)));
  PrintJson(out);
  return 0;
}
