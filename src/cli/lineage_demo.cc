// The lineage part of `skade demo`: a small pipeline (raw → clean → aggregate) written
// inside lineage scopes, a Spark job reading the aggregate ingested as OpenLineage,
// then the graph and the downstream impact of the raw table.
#include <arrow/api.h>

#include <cstdio>
#include <map>

#include "commands.h"
#include "output.h"
#include "skade/io/file_io.h"
#include "skade/lineage/lineage_graph.h"
#include "skade/lineage/lineage_scope.h"
#include "skade/lineage/openlineage.h"
#include "skade/lineage/warehouse_sink.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/scan.h"
#include "skade/table/table.h"

namespace skade::cli {
namespace {

using namespace skade::lineage;

Result<std::unique_ptr<Table>> Recreate(Catalog& cat, const TableIdent& ident, const char* schema) {
  if (cat.LoadTable(ident)) SKADE_RETURN_IF_ERROR(cat.DropTable(ident));
  SKADE_ASSIGN_OR_RETURN(Schema s, ParseSchemaSpec(schema));
  SKADE_RETURN_IF_ERROR(cat.CreateTable(ident, s, PartitionSpec(), {}));
  return Table::Load(cat, ident);
}

Result<std::shared_ptr<arrow::Table>> Rows(const std::vector<std::string>& days, const std::vector<double>& amounts) {
  arrow::StringBuilder day;
  arrow::DoubleBuilder amount;
  SKADE_ARROW_RETURN(day.AppendValues(days), "demo rows");
  SKADE_ARROW_RETURN(amount.AppendValues(amounts), "demo rows");
  SKADE_ARROW_ASSIGN(auto d, day.Finish(), "demo rows");
  SKADE_ARROW_ASSIGN(auto a, amount.Finish(), "demo rows");
  return arrow::Table::Make(arrow::schema({arrow::field("day", arrow::utf8()), arrow::field("amount", arrow::float64())}),
                            {d, a});
}

// The (day, amount) rows of a table.
Result<std::vector<std::pair<std::string, double>>> Read(Table& t) {
  SKADE_ASSIGN_OR_RETURN(auto data, t.NewScan().Select({"day", "amount"}).ToTable());
  SKADE_ARROW_ASSIGN(auto batch, data->CombineChunksToBatch(), "demo read");
  const auto& days = static_cast<const arrow::StringArray&>(*batch->column(0));
  const auto& amounts = static_cast<const arrow::DoubleArray&>(*batch->column(1));
  std::vector<std::pair<std::string, double>> out;
  for (int64_t i = 0; i < batch->num_rows(); ++i) out.emplace_back(std::string(days.GetView(i)), amounts.Value(i));
  return out;
}

}  // namespace

Status RunLineageDemo(Context& ctx) {
  Catalog& cat = *ctx.catalog;
  std::printf("\n== lineage: raw -> clean -> aggregate, then a Spark job\n");
  if (!*cat.NamespaceExists("pipeline")) SKADE_RETURN_IF_ERROR(cat.CreateNamespace("pipeline"));
  SKADE_ASSIGN_OR_RETURN(auto raw, Recreate(cat, {"pipeline", "raw_payments"}, "day:string, amount:double"));
  SKADE_ASSIGN_OR_RETURN(auto clean, Recreate(cat, {"pipeline", "payments"}, "day:string, amount:double"));
  SKADE_ASSIGN_OR_RETURN(auto daily, Recreate(cat, {"pipeline", "daily_revenue"}, "day:string, amount:double"));
  {
    LineageScope scope("payments-loader", {DatasetRef{"payments", std::nullopt, SystemRef{"kafka", "kafka://broker:9092"}}});
    SKADE_ASSIGN_OR_RETURN(auto rows, Rows({"2024-03-01", "2024-03-01", "2024-03-02", "2024-03-02"}, {10, -3, 25, 40}));
    SKADE_RETURN_IF_ERROR(raw->Append(rows));
  }
  {
    LineageScope scope("payments-cleaner");  // reads raw_payments: recorded as the input
    SKADE_ASSIGN_OR_RETURN(auto rows, Read(*raw));
    std::vector<std::string> days;
    std::vector<double> amounts;
    for (const auto& [day, amount] : rows)
      if (amount > 0) days.push_back(day), amounts.push_back(amount);
    SKADE_ASSIGN_OR_RETURN(auto kept, Rows(days, amounts));
    SKADE_RETURN_IF_ERROR(clean->Append(kept));
  }
  {
    LineageScope scope("revenue-aggregator");
    SKADE_ASSIGN_OR_RETURN(auto rows, Read(*clean));
    std::map<std::string, double> per_day;
    for (const auto& [day, amount] : rows) per_day[day] += amount;
    std::vector<std::string> days;
    std::vector<double> totals;
    for (const auto& [day, total] : per_day) days.push_back(day), totals.push_back(total);
    SKADE_ASSIGN_OR_RETURN(auto agg, Rows(days, totals));
    SKADE_RETURN_IF_ERROR(daily->Append(agg));
  }
  // Spark names the Iceberg table by its location, as its OpenLineage integration does.
  std::string spark = R"({"eventType":"COMPLETE","eventTime":")" + FormatTimestamp(NowMs()) +
                      R"(","producer":"https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark",)"
                      R"("schemaURL":"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",)"
                      R"("run":{"runId":"0190c0de-0000-7000-8000-0000000d3e01"},)"
                      R"("job":{"namespace":"spark-prod","name":"finance_report.execute_insert_into_hive_table"},)"
                      R"("inputs":[{"namespace":"file","name":")" + cat.warehouse() + R"(/pipeline.db/daily_revenue"}],)"
                      R"("outputs":[{"namespace":"spark","name":"finance.revenue_report"}]})";
  RunEventMapper mapper(cat.warehouse(), &cat);
  SKADE_ASSIGN_OR_RETURN(LineageEvent ingested, mapper.FromRunEvent(spark));
  WarehouseSink sink(cat);
  SKADE_RETURN_IF_ERROR(sink.Write({ingested}));
  SKADE_RETURN_IF_ERROR(sink.Flush());  // also delivers the pipeline's events from the commit log
  std::printf("ingested a Spark RunEvent (job %s) reading pipeline.daily_revenue\n", ingested.job->name.c_str());

  SKADE_ASSIGN_OR_RETURN(auto events, ReadStoredEvents(cat));
  LineageGraph graph = LineageGraph::Build(events);
  std::printf("\n== lineage graph (mermaid; also: skade lineage graph --format json|dot)\n%s",
              graph.ToMermaid().c_str());
  SKADE_ASSIGN_OR_RETURN(auto impact, graph.Downstream("pipeline.raw_payments"));
  std::printf("\n== if pipeline.raw_payments is wrong, these are affected (skade lineage downstream)\n");
  Listing l{{"dataset", "depth", "system", "last_writer"}, {}, {false, true, false, false}};
  for (const auto& r : impact) {
    const GraphNode& n = graph.nodes().at(r.key);
    l.rows.push_back({r.key, std::to_string(r.depth), n.system, n.last_writer});
  }
  PrintListing(l, Format::kTable, stdout);
  return {};
}

}  // namespace skade::cli
