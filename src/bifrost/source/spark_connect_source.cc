#include "bifrost/source/spark_connect_source.h"

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/reader.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <map>
#include <random>

#include "skade/expr/expression.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "spark/connect/base.grpc.pb.h"

namespace bifrost {
namespace {

namespace sc = spark::connect;

// A read of a large table is one long stream; a server that stops answering still ends it.
constexpr auto kQueryDeadline = std::chrono::minutes(30);

std::string Quote(std::string_view name, char q) {
  std::string out(1, q);
  for (char c : name) {
    if (c == q) out += q;
    out += c;
  }
  return out + q;
}

// `db.people` → `db`.`people` (each part quoted, so names stay names in SQL).
std::string QuoteDotted(const std::string& name) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    out += Quote(name.substr(start, dot - start), '`');
    if (dot == std::string::npos) return out;
    out += '.';
    start = dot + 1;
  }
}

std::string NewSessionId() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t hi = gen(), lo = gen();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;  // version 4
  lo = (lo & ~(3ULL << 62)) | (2ULL << 62);
  char buf[37];
  snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
           static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
           static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

sc::Relation ReadTable(const std::string& table, const std::map<std::string, std::string>& options) {
  sc::Relation rel;
  auto* named = rel.mutable_read()->mutable_named_table();
  named->set_unparsed_identifier(table);
  for (const auto& [k, v] : options) (*named->mutable_options())[k] = v;
  return rel;
}

sc::Relation SqlRelation(const std::string& query) {
  sc::Relation rel;
  rel.mutable_sql()->set_query(query);
  return rel;
}

// The mapping's filter and projection over `input`: Project(columns, Filter(sql, input)).
sc::Relation Pushdown(sc::Relation input, const std::string& filter_sql,
                      const std::vector<std::string>& columns) {
  if (!filter_sql.empty()) {
    sc::Relation filtered;
    *filtered.mutable_filter()->mutable_input() = std::move(input);
    filtered.mutable_filter()->mutable_condition()->mutable_expression_string()->set_expression(
        filter_sql);
    input = std::move(filtered);
  }
  if (columns.empty()) return input;
  sc::Relation projected;
  *projected.mutable_project()->mutable_input() = std::move(input);
  for (const auto& c : columns)
    projected.mutable_project()->add_expressions()->mutable_unresolved_attribute()
        ->set_unparsed_identifier(Quote(c, '`'));
  return projected;
}

void AppendSql(const skade::expr::Expr& e, std::string& out);

// A Spark SQL string literal: Spark reads backslash escapes in them, and joins adjacent
// literals ('a''b' is "ab"), so a quote is escaped with a backslash, not doubled.
void AppendString(std::string_view s, std::string& out) {
  out += '\'';
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  out += '\'';
}

void AppendLiteral(const skade::expr::UnboundLiteral& l, std::string& out) {
  using K = skade::expr::UnboundLiteral::Kind;
  switch (l.kind) {
    case K::kString: AppendString(l.text, out); break;
    case K::kNull: out += "NULL"; break;
    default: out += l.text;
  }
}

void AppendSql(const skade::expr::Expr& e, std::string& out) {
  using skade::expr::Op;
  auto binary = [&](const char* op) {
    out += '(';
    AppendSql(*e.children[0], out);
    out += op;
    AppendSql(*e.children[1], out);
    out += ')';
  };
  auto compare = [&](const char* op) {
    out += QuoteDotted(e.column) + op;
    AppendLiteral(e.unbound_literals.at(0), out);
  };
  auto in = [&](const char* op) {
    out += QuoteDotted(e.column) + op + "(";
    for (size_t i = 0; i < e.unbound_literals.size(); ++i) {
      if (i) out += ", ";
      AppendLiteral(e.unbound_literals[i], out);
    }
    out += ')';
  };
  switch (e.op) {
    case Op::kTrue: out += "TRUE"; break;
    case Op::kFalse: out += "FALSE"; break;
    case Op::kAnd: binary(" AND "); break;
    case Op::kOr: binary(" OR "); break;
    case Op::kNot:
      out += "(NOT ";
      AppendSql(*e.children[0], out);
      out += ')';
      break;
    case Op::kEq: compare(" = "); break;
    case Op::kNotEq: compare(" <> "); break;
    case Op::kLt: compare(" < "); break;
    case Op::kLtEq: compare(" <= "); break;
    case Op::kGt: compare(" > "); break;
    case Op::kGtEq: compare(" >= "); break;
    case Op::kIn: in(" IN "); break;
    case Op::kNotIn: in(" NOT IN "); break;
    case Op::kIsNull: out += QuoteDotted(e.column) + " IS NULL"; break;
    case Op::kNotNull: out += QuoteDotted(e.column) + " IS NOT NULL"; break;
    // Spark's isnan(NULL) is false, as skade's `is nan`; startswith(NULL, p) is NULL, as `like`.
    case Op::kIsNaN: out += "isnan(" + QuoteDotted(e.column) + ")"; break;
    case Op::kNotNaN: out += "(NOT isnan(" + QuoteDotted(e.column) + "))"; break;
    case Op::kStartsWith:
    case Op::kNotStartsWith:
      out += e.op == Op::kStartsWith ? "startswith(" : "(NOT startswith(";
      out += QuoteDotted(e.column) + ", ";
      AppendLiteral(e.unbound_literals.at(0), out);
      out += e.op == Op::kStartsWith ? ")" : "))";
      break;
    case Op::kLike: compare(" LIKE "); break;  // Spark's LIKE escapes with a backslash too
    case Op::kNotLike: compare(" NOT LIKE "); break;
  }
}

struct SnapshotInfo {
  std::optional<int64_t> parent;
  std::string operation;
};

}  // namespace

Result<std::string> SparkSqlFilter(const std::string& filter) {
  SKADE_ASSIGN_OR_RETURN(auto parsed, skade::expr::Parse(filter));
  std::string out;
  AppendSql(*parsed, out);
  return out;
}

struct SparkConnectSource::Impl {
  std::string url;
  std::unique_ptr<sc::SparkConnectService::Stub> stub;
  std::string session_id = NewSessionId();
  std::optional<std::string> catalog;  // the session's current catalog, asked once
  int views = 0;
  bool configured = false;

  // The server would keep an abandoned session (its views, its conf) until it times out.
  ~Impl() {
    if (!configured) return;
    sc::ReleaseSessionRequest req;
    req.set_session_id(session_id);
    req.mutable_user_context()->set_user_id("bifrost");
    req.set_client_type("bifrost");
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    sc::ReleaseSessionResponse resp;
    (void)stub->ReleaseSession(&ctx, req, &resp);  // best effort: the read is done either way
  }

  // Spark Connect caches the plans it resolved per session, and a resolved read pins the
  // table's metadata: a long-lived session would keep reading the snapshot it saw first.
  Status Configure() {
    if (configured) return {};
    sc::ConfigRequest req;
    req.set_session_id(session_id);
    req.mutable_user_context()->set_user_id("bifrost");
    req.set_client_type("bifrost");
    auto* pair = req.mutable_operation()->mutable_set()->add_pairs();
    pair->set_key("spark.connect.session.planCache.enabled");
    pair->set_value("false");
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(1));
    sc::ConfigResponse resp;
    grpc::Status st = stub->Config(&ctx, req, &resp);
    if (!st.ok()) return std::unexpected(FromGrpc(st, "opening a session"));
    configured = true;
    return {};
  }

  skade::Error FromGrpc(const grpc::Status& st, const std::string& what) const {
    std::string msg = st.error_message();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    if (msg.size() > 600) msg = msg.substr(0, 600) + "...";
    if (st.error_code() == grpc::StatusCode::UNAVAILABLE ||
        st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
      return {skade::ErrorKind::kIoError,
              "Spark Connect server " + url + " unreachable (" + what + "): " + msg};
    if (msg.find("TABLE_OR_VIEW_NOT_FOUND") != std::string::npos)
      return {skade::ErrorKind::kNotFound, "Spark Connect server " + url + ": " + what + ": " + msg};
    return {skade::ErrorKind::kIoError,
            "Spark Connect server " + url + ": " + what + " failed: " + msg};
  }

  // Runs a plan; the answer's Arrow IPC streams become the table's chunks without a copy.
  Result<std::shared_ptr<arrow::Table>> Execute(sc::Relation root, const std::string& what) {
    SKADE_RETURN_IF_ERROR(Configure());
    sc::ExecutePlanRequest req;
    req.set_session_id(session_id);
    req.mutable_user_context()->set_user_id("bifrost");
    req.set_client_type("bifrost");
    *req.mutable_plan()->mutable_root() = std::move(root);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + kQueryDeadline);
    auto stream = stub->ExecutePlan(&ctx, req);
    sc::ExecutePlanResponse resp;
    std::shared_ptr<arrow::Schema> schema;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    std::optional<skade::Error> decode_error;
    while (stream->Read(&resp)) {
      if (!resp.has_arrow_batch() || decode_error) continue;
      auto buffer = arrow::Buffer::FromString(std::move(*resp.mutable_arrow_batch()->mutable_data()));
      auto reader =
          arrow::ipc::RecordBatchStreamReader::Open(std::make_shared<arrow::io::BufferReader>(buffer));
      if (!reader.ok()) {
        decode_error = skade::FromArrow(reader.status(), what + ": Arrow data from " + url);
        continue;
      }
      schema = (*reader)->schema();
      while (true) {
        std::shared_ptr<arrow::RecordBatch> batch;
        auto st = (*reader)->ReadNext(&batch);
        if (!st.ok()) {
          decode_error = skade::FromArrow(st, what + ": Arrow data from " + url);
          break;
        }
        if (!batch) break;
        batches.push_back(std::move(batch));
      }
    }
    grpc::Status st = stream->Finish();
    if (!st.ok()) return std::unexpected(FromGrpc(st, what));
    if (decode_error) return std::unexpected(*decode_error);
    if (!schema)
      return skade::IoError("Spark Connect server " + url + ": " + what + " answered no rows");
    SKADE_ARROW_ASSIGN(auto table, arrow::Table::FromRecordBatches(schema, batches), what);
    return table;
  }

  Result<std::shared_ptr<arrow::Table>> Sql(const std::string& query, const std::string& what) {
    return Execute(SqlRelation(query), what);
  }

  // The table's `main` snapshot, nullopt when it has none.
  Result<std::optional<int64_t>> Current(const std::string& table) {
    SKADE_ASSIGN_OR_RETURN(
        auto t, Sql("SELECT snapshot_id FROM " + QuoteDotted(table + ".refs") +
                        " WHERE name = 'main' AND type = 'BRANCH'",
                    "reading " + table + "'s current snapshot"));
    if (t->num_rows() == 0) return std::nullopt;
    SKADE_ARROW_ASSIGN(auto s, t->column(0)->GetScalar(0), "current snapshot");
    return std::static_pointer_cast<arrow::Int64Scalar>(s)->value;
  }

  Result<std::map<int64_t, SnapshotInfo>> Snapshots(const std::string& table) {
    SKADE_ASSIGN_OR_RETURN(
        auto t, Sql("SELECT snapshot_id, parent_id, operation FROM " +
                        QuoteDotted(table + ".snapshots"),
                    "reading " + table + "'s snapshots"));
    SKADE_ARROW_ASSIGN(auto b, t->CombineChunksToBatch(), "snapshots");
    const auto& ids = static_cast<const arrow::Int64Array&>(*b->column(0));
    const auto& parents = static_cast<const arrow::Int64Array&>(*b->column(1));
    const auto& ops = static_cast<const arrow::StringArray&>(*b->column(2));
    std::map<int64_t, SnapshotInfo> out;
    for (int64_t i = 0; i < b->num_rows(); ++i)
      out[ids.Value(i)] = {parents.IsNull(i) ? std::nullopt : std::optional(parents.Value(i)),
                           ops.IsNull(i) ? "" : std::string(ops.GetView(i))};
    return out;
  }

  Result<std::string> Catalog() {
    if (!catalog) {
      SKADE_ASSIGN_OR_RETURN(auto t, Sql("SELECT current_catalog()", "reading the catalog's name"));
      SKADE_ARROW_ASSIGN(auto s, t->column(0)->GetScalar(0), "catalog name");
      catalog = s->ToString();
    }
    return *catalog;
  }

  Result<std::shared_ptr<arrow::Table>> Read(const CompiledTable& ct, sc::Relation input,
                                             const std::string& what,
                                             std::vector<std::string> extra_columns = {}) {
    std::string filter;
    if (!ct.spec.filter.empty()) {
      SKADE_ASSIGN_OR_RETURN(filter, SparkSqlFilter(ct.spec.filter));
    }
    std::vector<std::string> columns = ct.projection;
    if (!columns.empty()) columns.insert(columns.end(), extra_columns.begin(), extra_columns.end());
    return Execute(Pushdown(std::move(input), filter, columns), what);
  }

  // Changes after `from` up to `to`, through a changelog view made for this read.
  Result<std::shared_ptr<arrow::Table>> Changes(const CompiledTable& ct, int64_t from, int64_t to) {
    const std::string& table = ct.spec.table;
    SKADE_ASSIGN_OR_RETURN(std::string cat, Catalog());
    std::string view = "bifrost_changes_" + std::to_string(++views);
    SKADE_RETURN_IF_ERROR(Sql(
        "CALL " + Quote(cat, '`') + ".system.create_changelog_view(table => " +
            Quote(table, '\'') + ", options => map('start-snapshot-id', '" + std::to_string(from) +
            "', 'end-snapshot-id', '" + std::to_string(to) + "'), changelog_view => '" + view + "')",
        "creating " + table + "'s changelog view"));
    auto rows = Read(ct, ReadTable(view, {}), "reading " + table + "'s changes",
                     {"_change_type", "_change_ordinal"});
    SKADE_RETURN_IF_ERROR(Sql("DROP VIEW IF EXISTS " + view, "dropping " + view));
    return rows;
  }
};

SparkConnectSource::SparkConnectSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SparkConnectSource::~SparkConnectSource() = default;
const std::string& SparkConnectSource::url() const { return impl_->url; }

Result<std::unique_ptr<SparkConnectSource>> SparkConnectSource::Open(const std::string& url) {
  constexpr std::string_view kScheme = "sc://";
  std::string target = url.starts_with(kScheme) ? url.substr(kScheme.size()) : "";
  if (auto cut = target.find_first_of("/;"); cut != std::string::npos) target.resize(cut);
  auto colon = target.rfind(':');
  if (target.empty() || colon == std::string::npos || colon == 0 || colon + 1 == target.size() ||
      target.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    return skade::InvalidArgument("Spark Connect address '" + url + "' is not sc://HOST:PORT");
  auto impl = std::make_unique<Impl>();
  impl->url = url;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // Spark's Arrow batches may pass gRPC's 4 MB default
  impl->stub = sc::SparkConnectService::NewStub(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
  return std::unique_ptr<SparkConnectSource>(new SparkConnectSource(std::move(impl)));
}

Result<std::shared_ptr<const skade::Schema>> SparkConnectSource::SchemaOf(const std::string& table) {
  sc::Relation limit;
  *limit.mutable_limit()->mutable_input() = ReadTable(table, {});
  limit.mutable_limit()->set_limit(0);
  SKADE_ASSIGN_OR_RETURN(auto t, impl_->Execute(std::move(limit), "reading " + table + "'s schema"));
  auto schema = skade::FromArrowSchema(*t->schema());
  if (!schema) return std::unexpected(schema.error().WithContext("table " + table));
  return schema;
}

Result<std::optional<Fetched>> SparkConnectSource::FetchNew(const CompiledTable& ct,
                                                            const TableState& state) {
  const std::string& table = ct.spec.table;
  SKADE_ASSIGN_OR_RETURN(auto current, impl_->Current(table));
  if (current && state.snapshot_id == current) return std::nullopt;
  if (!current && state.snapshot_id) return std::nullopt;
  Fetched f;
  f.next = state;
  const bool first = !state.snapshot_id.has_value();
  const std::string via = " through Spark Connect " + impl_->url;
  if (!current) {
    f.rows = arrow::Table::MakeEmpty(arrow::schema({})).ValueOrDie();
    f.description = "no snapshot (the table was never written)";
  } else if (first || ct.spec.mode == SyncMode::kFull) {
    int64_t snap = *current;
    f.next.snapshot_id = snap;
    SKADE_ASSIGN_OR_RETURN(f.rows, impl_->Read(ct, ReadTable(table, {{"snapshot-id", std::to_string(snap)}}),
                                               "reading " + table));
    f.description = "snapshot " + std::to_string(snap) + " (full read" + via + ")";
  } else {
    int64_t snap = *current, cursor = *state.snapshot_id;
    f.next.snapshot_id = snap;
    SKADE_ASSIGN_OR_RETURN(auto snapshots, impl_->Snapshots(table));
    if (!snapshots.contains(cursor))
      return skade::NotFound(
          "table '" + table + "': the cursor's snapshot " + std::to_string(cursor) +
          " is no longer in the table's metadata (expired); changes since it cannot be read: "
          "run `bifrost build --rebuild` to build the graph afresh");
    // Walk the main line back from the current snapshot to the cursor.
    bool on_main_line = false, appends_only = true;
    for (std::optional<int64_t> s = snap; s && snapshots.contains(*s);
         s = snapshots[*s].parent) {
      if (*s == cursor) {
        on_main_line = true;
        break;
      }
      appends_only = appends_only && snapshots[*s].operation == "append";
    }
    if (ct.spec.mode == SyncMode::kIncremental && (!on_main_line || !appends_only)) {
      // Appends alone cannot say what a rollback, delete or rewrite removed: rescan.
      SKADE_ASSIGN_OR_RETURN(f.rows, impl_->Read(ct, ReadTable(table, {{"snapshot-id", std::to_string(snap)}}),
                                                 "reading " + table));
      f.description = "snapshot " + std::to_string(snap) + " (full rescan" + via + ": " +
                      (on_main_line ? "rows were rewritten" : "the table was rolled back") + ")";
    } else if (ct.spec.mode == SyncMode::kIncremental) {
      SKADE_ASSIGN_OR_RETURN(
          f.rows, impl_->Read(ct,
                              ReadTable(table, {{"start-snapshot-id", std::to_string(cursor)},
                                                {"end-snapshot-id", std::to_string(snap)}}),
                              "reading " + table + "'s appends"));
      f.description = "appends after snapshot " + std::to_string(cursor) + " up to " +
                      std::to_string(snap) + via;
    } else if (!on_main_line) {
      return skade::Unsupported(
          "table '" + table + "': the cursor's snapshot " + std::to_string(cursor) +
          " was rolled back; Spark's changelog cannot undo it: run `bifrost build --rebuild`");
    } else {
      SKADE_ASSIGN_OR_RETURN(f.rows, impl_->Changes(ct, cursor, snap));
      f.description = "changes after snapshot " + std::to_string(cursor) + " up to " +
                      std::to_string(snap) + via;
    }
  }
  if (first && f.rows->num_rows() == 0 && !ct.spec.allow_empty)
    return skade::InvalidArgument("table '" + table + "': empty read refused: " + f.description +
                                  " gave 0 rows (set allow_empty: true to accept)");
  return f;
}

}  // namespace bifrost
