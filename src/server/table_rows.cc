// Rows of a table through the viewer API (docs/api.md): `preview`, a scan at a
// snapshot, and `changes`, the changelog between two snapshots. Both stream NDJSON
// (header line, one array per row, closing line) batch by batch as the reader
// produces them, and stop at `limit`. `partitions`, the files of a snapshot summed per
// partition (`skade partitions`), answers in the same form at once.
#include <arrow/api.h>

#include "server/api_params.h"
#include "server/lineage_view.h"
#include "server/row_json.h"
#include "server/server_internal.h"
#include "skade/cdc/changelog.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/manifest_io.h"
#include "skade/table/metadata_tables.h"
#include "skade/table/scan.h"
#include "skade/table/table.h"

namespace skade::server {
namespace {

constexpr int64_t kMaxRows = 10000;

struct Column {
  std::string name;
  TypePtr type;
  bool as_string = false;  // a long sent as a string whatever its size
};

// The columns of a reader's batches, typed through the schema they were read with.
std::vector<Column> ColumnsOf(const arrow::Schema& arrow_schema, const Schema& schema) {
  std::vector<Column> out;
  for (const auto& f : arrow_schema.fields()) {
    int id = FieldIdOf(*f);
    const NestedField* field = id >= 0 ? schema.FindField(id) : nullptr;
    if (!field) field = schema.FindTopLevel(f->name());
    out.push_back({f->name(), field ? field->type : Type::Primitive(TypeId::kString), false});
  }
  return out;
}

Json HeaderColumns(const std::vector<Column>& columns) {
  Json out = Json::array();
  for (const auto& c : columns) out.push_back(Json{{"name", c.name}, {"type", c.type->ToString()}});
  return out;
}

std::string Line(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"; }

// One response's stream; the chunked content provider calls Next until it is done.
class RowStream {
 public:
  RowStream(const ServerContext& ctx, std::shared_ptr<arrow::RecordBatchReader> reader,
            std::vector<Column> columns, Json header, int64_t limit)
      : ctx_(ctx), reader_(std::move(reader)), columns_(std::move(columns)), header_(std::move(header)),
        limit_(limit) {}

  bool Next(httplib::DataSink& sink) {
    std::string out;
    if (!header_sent_) {
      header_sent_ = true;
      out = Line(header_);
    }
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status st = reader_->ReadNext(&batch);
    if (!st.ok()) {
      Error e = ErrorFromReader(st);
      out += Line(ErrorJson(ctx_, 500, "ServerError", "reading rows failed: " + e.message));
      return Finish(sink, out);
    }
    if (!batch) {
      out += End(false);
      return Finish(sink, out);
    }
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      if (sent_ == limit_) {
        out += End(true);
        return Finish(sink, out);
      }
      Json row = Json::array();
      for (int c = 0; c < batch->num_columns() && c < static_cast<int>(columns_.size()); ++c) {
        Json cell = CellJson(*batch->column(c), r, *columns_[c].type);
        if (columns_[c].as_string && cell.is_number()) cell = cell.dump();
        row.push_back(std::move(cell));
      }
      out += Line(row);
      ++sent_;
    }
    return sink.write(out.data(), out.size());
  }

 private:
  std::string End(bool truncated) const {
    return Line(Json{{"end", {{"rows", sent_}, {"truncated", truncated}}}});
  }
  static bool Finish(httplib::DataSink& sink, const std::string& out) {
    if (!sink.write(out.data(), out.size())) return false;
    sink.done();
    return true;
  }

  const ServerContext& ctx_;
  std::shared_ptr<arrow::RecordBatchReader> reader_;
  std::vector<Column> columns_;
  Json header_;
  int64_t limit_;
  int64_t sent_ = 0;
  bool header_sent_ = false;
};

void Stream(const ServerContext& ctx, httplib::Response& res, std::shared_ptr<RowStream> stream) {
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider("application/x-ndjson", [stream](size_t, httplib::DataSink& sink) {
    return stream->Next(sink);
  });
}

// Errors of the table routes: a bad parameter 400, a missing snapshot 404.
void SendRowsError(const ServerContext& ctx, httplib::Response& res, const Error& e) {
  if (e.kind == ErrorKind::kInvalidArgument) return SendError(ctx, res, 400, "BadRequestException", e.message);
  if (e.kind == ErrorKind::kNotFound) return SendError(ctx, res, 404, "NoSuchSnapshotException", e.message);
  SendError(ctx, res, 500, "ServerError", e.message);
}

// The table of the path; on failure the error has been sent.
std::unique_ptr<Table> PathTable(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  auto ns = NamespaceFromPath(req.matches[1]);
  if (!ns) {
    SendError(ctx, res, 400, "BadRequestException", ns.error().message);
    return nullptr;
  }
  TableIdent ident{*ns, req.matches[2]};
  auto table = Table::Load(ctx.catalog, ident);
  if (table) return std::move(*table);
  if (table.error().kind == ErrorKind::kNotFound)
    SendError(ctx, res, 404, "NoSuchTableException", "table " + ShownValue(ident.ToString()) + " does not exist");
  else
    SendError(ctx, res, 500, "ServerError", table.error().message);
  return nullptr;
}

bool CheckSnapshot(const ServerContext& ctx, httplib::Response& res, const Table& table, int64_t id) {
  if (table.metadata()->SnapshotById(id)) return true;
  SendError(ctx, res, 404, "NoSuchSnapshotException",
            "table " + table.ident().ToString() + " has no snapshot " + std::to_string(id));
  return false;
}

// What `preview` and `partitions` read: the table of the path at the `snapshot` parameter
// (none: the current one), and `limit`.
struct TableAt {
  std::unique_ptr<Table> table;
  std::optional<int64_t> snapshot;
  int64_t limit = 0;
};
// On failure the error has been sent.
std::optional<TableAt> TableAtSnapshot(ServerContext& ctx, const httplib::Request& req, httplib::Response& res,
                                       int64_t default_limit) {
  auto snapshot = SnapshotParam(req, "snapshot");
  auto limit = IntParam(req, "limit", default_limit, 0, kMaxRows);
  if (!snapshot || !limit) {
    SendRowsError(ctx, res, !snapshot ? snapshot.error() : limit.error());
    return std::nullopt;
  }
  auto table = PathTable(ctx, req, res);
  if (!table) return std::nullopt;
  if (*snapshot && !CheckSnapshot(ctx, res, *table, **snapshot)) return std::nullopt;
  return TableAt{std::move(table), *snapshot, *limit};
}

void Preview(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  auto at = TableAtSnapshot(ctx, req, res, 100);
  if (!at) return;
  auto& [table, snapshot, limit] = *at;
  TableScan scan = table->NewScan();
  if (req.has_param("columns")) scan.Select(ListParam(req, "columns"));
  if (req.has_param("where")) scan.Filter(req.get_param_value("where"));
  if (snapshot) scan.UseSnapshot(*snapshot);
  scan.Limit(limit + 1);  // one more tells whether the limit cut the rows
  auto plan = scan.Plan();
  if (!plan) return SendRowsError(ctx, res, plan.error());
  plan->parallelism = 1;  // a preview is small: decode in the request's thread
  auto reader = TableScan::Read(*plan, &ctx.catalog.io());
  if (!reader) return SendRowsError(ctx, res, reader.error());
  auto columns = ColumnsOf(*(*reader)->schema(), *plan->output_schema);
  Json header{{"columns", HeaderColumns(columns)},
              {"snapshot_id", SnapshotIdJson(plan->snapshot ? std::optional(plan->snapshot->snapshot_id)
                                                            : std::nullopt)}};
  Stream(ctx, res, std::make_shared<RowStream>(ctx, *reader, std::move(columns), std::move(header), limit));
}

void Changes(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  if (!req.has_param("from"))
    return SendError(ctx, res, 400, "BadRequestException", "from is required (the snapshot the changes start after)");
  auto from = SnapshotParam(req, "from");
  if (!from) return SendRowsError(ctx, res, from.error());
  auto to = SnapshotParam(req, "to");
  if (!to) return SendRowsError(ctx, res, to.error());
  auto limit = IntParam(req, "limit", 1000, 0, kMaxRows);
  if (!limit) return SendRowsError(ctx, res, limit.error());
  cdc::ChangelogOptions options;
  auto updates = BoolParam(req, "compute_updates", false);
  if (!updates) return SendRowsError(ctx, res, updates.error());
  auto net = BoolParam(req, "net", false);
  if (!net) return SendRowsError(ctx, res, net.error());
  options.compute_updates = *updates;
  options.net_changes = *net;
  options.columns = ListParam(req, "columns");
  options.filter = req.get_param_value("where");

  auto table = PathTable(ctx, req, res);
  if (!table) return;
  const TableMetadata& m = *table->metadata();
  std::optional<int64_t> to_id = *to ? *to : m.current_snapshot_id;
  if (!to_id)
    return SendError(ctx, res, 404, "NoSuchSnapshotException",
                     "table " + table->ident().ToString() + " has no snapshots");
  if (!CheckSnapshot(ctx, res, *table, *to_id)) return;
  // 0: before the table's first snapshot, as `skade changes --from 0`.
  std::optional<int64_t> from_id = **from == 0 ? std::nullopt : *from;
  if (from_id) {
    if (!CheckSnapshot(ctx, res, *table, *from_id)) return;
    if (!m.IsAncestor(*from_id, *to_id))
      return SendError(ctx, res, 400, "BadRequestException",
                       "from snapshot " + std::to_string(*from_id) + " is not an ancestor of to snapshot " +
                           std::to_string(*to_id));
  }
  auto rows = cdc::ReadChangelog(*table, from_id, to_id, options);
  if (!rows) return SendRowsError(ctx, res, rows.error());
  auto reader = std::make_shared<arrow::TableBatchReader>(*rows);
  auto columns = ColumnsOf(*(*rows)->schema(), cdc::ChangelogSchema(*m.schema(), options.columns));
  for (auto& c : columns) c.as_string = c.name == "_commit_snapshot_id";
  Json header{{"columns", HeaderColumns(columns)},
              {"from_snapshot_id", SnapshotIdJson(from_id)},
              {"to_snapshot_id", SnapshotIdJson(to_id)}};
  Stream(ctx, res, std::make_shared<RowStream>(ctx, reader, std::move(columns), std::move(header), *limit));
}

void Partitions(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  auto chosen = TableAtSnapshot(ctx, req, res, 1000);
  if (!chosen) return;
  auto& [table, snapshot, limit] = *chosen;
  const TableMetadata& m = *table->metadata();
  const Snapshot* at = snapshot ? m.SnapshotById(*snapshot) : m.CurrentSnapshot();
  std::vector<LiveFile> files;
  if (at) {
    auto live = LiveFiles(m, *at, ctx.catalog.io());
    if (!live) return SendRowsError(ctx, res, live.error());
    files = std::move(*live);
  }
  // The types of the columns' cells, in kPartitionSummaryColumns' order.
  static constexpr const char* kTypes[] = {"string", "int",  "long", "long",        "long", "long",
                                           "long",   "long", "long", "timestamptz", "long"};
  static_assert(std::size(kTypes) == std::size(kPartitionSummaryColumns));
  Json columns = Json::array();
  for (size_t i = 0; i < std::size(kTypes); ++i)
    columns.push_back(Json{{"name", kPartitionSummaryColumns[i]}, {"type", kTypes[i]}});
  std::string out = Line(Json{{"columns", std::move(columns)},
                              {"snapshot_id", SnapshotIdJson(at ? std::optional(at->snapshot_id) : std::nullopt)}});
  int64_t sent = 0;
  auto summaries = PartitionSummaries(m, files);
  const TypePtr long_type = Type::Primitive(TypeId::kLong), when_type = Type::Primitive(TypeId::kTimestampTz);
  for (const PartitionSummary& p : summaries) {
    if (sent == limit) break;
    Json row = Json::array({PartitionText(m, p.spec_id, p.partition), p.spec_id});
    for (int64_t n : {p.record_count, p.file_count, p.data_bytes, p.position_delete_records, p.position_delete_files,
                      p.equality_delete_records, p.equality_delete_files})
      row.push_back(ValueJson(Value{n}, *long_type));
    row.push_back(p.last_updated_ms ? ValueJson(Value{*p.last_updated_ms * 1000}, *when_type) : Json(nullptr));
    row.push_back(SnapshotIdJson(p.last_updated_snapshot_id));
    out += Line(row);
    ++sent;
  }
  out += Line(Json{{"end", {{"rows", sent}, {"truncated", sent < static_cast<int64_t>(summaries.size())}}}});
  res.set_header("Cache-Control", "no-store");
  res.set_content(out, "application/x-ndjson");
}

}  // namespace

void AddTableRowRoutes(httplib::Server& http, ServerContext& ctx) {
  http.Get(R"(/api/skade/v1/tables/([^/]+)/([^/]+)/preview)",
           [&ctx](const httplib::Request& req, httplib::Response& res) { Preview(ctx, req, res); });
  http.Get(R"(/api/skade/v1/tables/([^/]+)/([^/]+)/changes)",
           [&ctx](const httplib::Request& req, httplib::Response& res) { Changes(ctx, req, res); });
  http.Get(R"(/api/skade/v1/tables/([^/]+)/([^/]+)/partitions)",
           [&ctx](const httplib::Request& req, httplib::Response& res) { Partitions(ctx, req, res); });
}

}  // namespace skade::server
