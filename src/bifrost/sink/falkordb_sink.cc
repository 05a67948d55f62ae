#include <arrow/api.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <nlohmann/json.hpp>

#include "bifrost/sink/bulk_graph.h"
#include "bifrost/sink/compact_values_internal.h"
#include "bifrost/sink/graph_sink.h"
#include "bifrost/sink/property_values.h"
#include "skade/format/value.h"
#include "skade/table/arrow_values.h"

namespace bifrost {

void SinkReport::Add(const SinkReport& o) {
  vertex_rows += o.vertex_rows;
  edge_rows += o.edge_rows;
  delete_rows += o.delete_rows;
  nodes_created += o.nodes_created;
  nodes_deleted += o.nodes_deleted;
  relationships_created += o.relationships_created;
  relationships_deleted += o.relationships_deleted;
  properties_set += o.properties_set;
  queries += o.queries;
}

namespace {

using skade::TypeId;

// Keeps parameter texts well under the server's comfortable query size.
constexpr size_t kMaxBatchBytes = 8 << 20;
// A GRAPH.BULK call holds the server for its length; this keeps each to a second or so.
constexpr size_t kMaxBulkCallBytes = 64 << 20;

void AppendString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  out += '"';
}

Status AppendDouble(std::string& out, double d, const std::string& name) {
  SKADE_RETURN_IF_ERROR(CheckStorableDouble(d, name));
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  out += buf;
  // Without a point the server would read an integer.
  if (std::string_view(buf).find_first_of(".e") == std::string_view::npos) out += ".0";
  return {};
}

// One primitive value as a Cypher literal: numbers and booleans native, temporal,
// decimal and uuid values as their ISO/text form (exact and ordered as strings).
Status AppendScalar(std::string& out, const skade::Value& v, const skade::Type& type,
                    const std::string& name) {
  if (skade::IsNull(v)) {
    out += "null";
    return {};
  }
  switch (type.id) {
    case TypeId::kBoolean:
      out += std::get<bool>(v) ? "true" : "false";
      return {};
    case TypeId::kInt:
      out += std::to_string(std::get<int32_t>(v));
      return {};
    case TypeId::kLong:
      out += std::to_string(std::get<int64_t>(v));
      return {};
    case TypeId::kFloat:
      return AppendDouble(out, std::get<float>(v), name);
    case TypeId::kDouble:
      return AppendDouble(out, std::get<double>(v), name);
    case TypeId::kString:
      SKADE_RETURN_IF_ERROR(CheckStorableText(std::get<std::string>(v), name));
      AppendString(out, std::get<std::string>(v));
      return {};
    default:
      AppendString(out, skade::FormatValue(type, v));
      return {};
  }
}

Status AppendCell(std::string& out, const arrow::Array& array, int64_t row, const skade::Type& type,
                  const std::string& name) {
  if (type.id != TypeId::kList) {
    SKADE_ASSIGN_OR_RETURN(auto v, skade::ValueAt(array, row, type));
    return AppendScalar(out, v, type, name);
  }
  if (array.IsNull(row)) {
    out += "null";
    return {};
  }
  const auto& list = static_cast<const arrow::ListArray&>(array);
  const skade::Type& element = *type.element().type;
  auto values = list.values();
  out += '[';
  for (int64_t i = list.value_offset(row); i < list.value_offset(row + 1); ++i) {
    if (values->IsNull(i)) return NullListElement(name);
    if (i > list.value_offset(row)) out += ',';
    SKADE_ASSIGN_OR_RETURN(auto v, skade::ValueAt(*values, i, element));
    SKADE_RETURN_IF_ERROR(AppendScalar(out, v, element, name));
  }
  out += ']';
  return {};
}

// `name:[c0,c1]` over columns [first, first+count) of the set's rows.
Status AppendList(std::string& out, const char* name, const arrow::Table& t,
                  const std::vector<skade::TypePtr>& types, size_t first, size_t count,
                  const std::vector<std::string>& names, int64_t row) {
  out += name;
  out += ":[";
  for (size_t c = 0; c < count; ++c) {
    if (c) out += ',';
    SKADE_RETURN_IF_ERROR(
        AppendCell(out, *t.column(first + c)->chunk(0), row, *types[first + c], names[c]));
  }
  out += ']';
  return {};
}

// `{a: r.k[0], b: r.k[1]}`: a MERGE/MATCH pattern on key properties.
std::string KeyPattern(const std::vector<std::string>& keys, const std::string& list) {
  std::string out = "{";
  for (size_t i = 0; i < keys.size(); ++i)
    out += (i ? ", " : "") + keys[i] + ": r." + list + "[" + std::to_string(i) + "]";
  return out + "}";
}

int64_t StatValue(const std::string& line, std::string_view name) {
  if (!line.starts_with(name) || line.size() <= name.size() + 2) return 0;
  return std::strtoll(line.c_str() + name.size() + 2, nullptr, 10);
}

Result<SinkReport> ParseStatistics(const Reply& reply) {
  if (reply.kind != Reply::Kind::kArray || reply.elements.empty())
    return skade::Internal("unexpected reply shape from GRAPH.QUERY");
  const Reply& stats = reply.elements.back();
  if (stats.kind == Reply::Kind::kError) return skade::InvalidArgument(stats.text);
  SinkReport r;
  for (const auto& line : stats.elements) {
    r.nodes_created += StatValue(line.text, "Nodes created");
    r.nodes_deleted += StatValue(line.text, "Nodes deleted");
    r.relationships_created += StatValue(line.text, "Relationships created");
    r.relationships_deleted += StatValue(line.text, "Relationships deleted");
    r.properties_set += StatValue(line.text, "Properties set");
  }
  r.queries = 1;
  return r;
}

}  // namespace

Result<std::string> FalkorDbSink::TimeoutArg() {
  if (!timeout_arg_.empty()) return timeout_arg_;
  int64_t ms = connection_.timeout().count();
  // The server refuses a per-query timeout above its TIMEOUT_MAX; that cap rules then.
  auto max = connection_.Command({"GRAPH.CONFIG", "GET", "TIMEOUT_MAX"});
  if (!max && max.error().kind == skade::ErrorKind::kIoError)
    return std::unexpected(std::move(max).error());
  if (max && max->elements.size() == 2 && max->elements[1].integer > 0)
    ms = std::min(ms, max->elements[1].integer);
  timeout_arg_ = std::to_string(ms);
  return timeout_arg_;
}

Result<Reply> FalkorDbSink::Query(const char* command, const std::string& text) {
  SKADE_ASSIGN_OR_RETURN(std::string timeout, TimeoutArg());
  auto reply = connection_.Command({command, graph_, text, "timeout", timeout, "--compact"});
  // The server's own timeout: an error reply, or a run-time error as the last element.
  const std::string* error =
      !reply ? (reply.error().kind == skade::ErrorKind::kInvalidArgument ? &reply.error().message
                                                                          : nullptr)
      : reply->kind == Reply::Kind::kArray && !reply->elements.empty() &&
              reply->elements.back().kind == Reply::Kind::kError
          ? &reply->elements.back().text
          : nullptr;
  if (error && error->find("timed out") != std::string::npos)
    return skade::IoError("graph query timed out after " +
                          FormatDuration(connection_.timeout()) +
                          " (stopped by the server; see --timeout)");
  return reply;
}

Result<SinkReport> FalkorDbSink::Run(const std::string& params, const std::string& body) {
  auto reply = Query("GRAPH.QUERY", "CYPHER " + params + " " + body);
  if (!reply) {
    auto e = std::move(reply).error();
    return std::unexpected(e.WithContext("graph '" + graph_ + "'"));
  }
  return ParseStatistics(*reply);
}

Status FalkorDbSink::AwaitIndexes() {
  // The server fills a new index in the background; until it is operational the
  // planner ignores it and every MERGE scans the whole label.
  auto wait = std::chrono::milliseconds(5);
  for (;;) {
    auto reply =
        Query("GRAPH.RO_QUERY", "CALL db.indexes() YIELD label, status RETURN label, status");
    if (!reply) return std::unexpected(std::move(reply).error().WithContext("reading indexes"));
    std::string building;
    if (reply->kind == Reply::Kind::kArray && reply->elements.size() == 3) {
      for (const auto& row : reply->elements[1].elements) {
        if (row.elements.size() != 2) continue;
        std::string status = DecodeCell(row.elements[1]).dump();
        if (status.find("OPERATIONAL") == std::string::npos)
          building = DecodeCell(row.elements[0]).dump() + " " + status;
      }
    }
    if (building.empty()) return {};
    if (building.find("UNDER CONSTRUCTION") == std::string::npos)
      return skade::Internal("index on " + building + " on graph '" + graph_ + "'");
    SKADE_RETURN_IF_ERROR(Beat());
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::milliseconds(200));
  }
}

Status FalkorDbSink::EnsureIndexes(const LabelKeys& wanted, SinkReport& report) {
  std::set<std::string> created;  // "Label(k1,k2,)"
  for (const auto& [label, keys] : wanted) {
    std::string id = label + "(", on;
    for (const auto& k : keys) {
      id += k + ",";
      on += (on.empty() ? "n." : ", n.") + k;
    }
    if (indexed_.contains(id) || created.contains(id)) continue;
    auto reply = Query("GRAPH.QUERY", "CREATE INDEX FOR (n:" + label + ") ON (" + on + ")");
    if (!reply && reply.error().message.find("already indexed") == std::string::npos)
      return std::unexpected(reply.error().WithContext("creating index on :" + label));
    ++report.queries;
    created.insert(id);
  }
  if (created.empty()) return {};
  SKADE_RETURN_IF_ERROR(AwaitIndexes());  // one wait for all of them
  indexed_.merge(created);
  return {};
}

Result<bool> FalkorDbSink::Exists() {
  SKADE_ASSIGN_OR_RETURN(auto reply, connection_.Command({"EXISTS", graph_}));
  return reply.integer != 0;
}

Status FalkorDbSink::DeleteKeys(const std::string& pattern) {
  std::string cursor = "0";
  do {
    SKADE_ASSIGN_OR_RETURN(auto page,
                           connection_.Command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}));
    if (page.kind != Reply::Kind::kArray || page.elements.size() != 2)
      return skade::Internal("unexpected reply shape from SCAN");
    cursor = page.elements[0].text;
    for (const auto& key : page.elements[1].elements)
      SKADE_RETURN_IF_ERROR(connection_.Command({"DEL", key.text}));
  } while (cursor != "0");
  return {};
}

Result<std::optional<SinkReport>> FalkorDbSink::Create(const BulkGraph& graph, bool replace) {
  if (graph.NodeCount() == 0) {
    if (!replace) return std::nullopt;
    SKADE_RETURN_IF_ERROR(connection_.Command({"DEL", graph_}));
    indexed_.clear();
    return SinkReport{};
  }
  if (!replace) {
    SKADE_ASSIGN_OR_RETURN(bool exists, Exists());
    if (exists) return std::nullopt;
  }
  // Left by a build that crashed; a concurrent one (only after its lease expired) then
  // fails on its next call rather than mixing into ours, as each build has its own key.
  std::string prefix = graph_ + ":bifrost-build:";
  std::string glob;
  for (char c : prefix) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') glob += '\\';
    glob += c;
  }
  SKADE_RETURN_IF_ERROR(DeleteKeys(glob + "*"));
  std::string staging = prefix + std::to_string(::getpid()) + "-" +
                        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  SinkReport report;
  auto load = [&]() -> Status {
    bool first = true;
    SKADE_RETURN_IF_ERROR(graph.ForEachCall(kMaxBulkCallBytes, [&](BulkCall& call) -> Status {
      std::vector<std::string> argv{"GRAPH.BULK", staging};
      if (first) argv.push_back("BEGIN");
      first = false;
      for (int64_t n : {call.nodes, call.edges, static_cast<int64_t>(call.node_blobs.size()),
                        static_cast<int64_t>(call.edge_blobs.size())})
        argv.push_back(std::to_string(n));
      for (auto& b : call.node_blobs) argv.push_back(std::move(b));
      for (auto& b : call.edge_blobs) argv.push_back(std::move(b));
      SKADE_ASSIGN_OR_RETURN(auto reply, connection_.Command(argv));
      long long nodes = -1, edges = -1;
      std::sscanf(reply.text.c_str(), "%lld nodes created, %lld edges created", &nodes, &edges);
      if (nodes != call.nodes || edges != call.edges)
        return skade::Internal("GRAPH.BULK answered '" + reply.text + "' for " +
                               std::to_string(call.nodes) + " nodes and " +
                               std::to_string(call.edges) + " edges");
      report.nodes_created += nodes;
      report.relationships_created += edges;
      ++report.queries;
      return Beat();
    }));
    return Status{};
  };
  auto renamed = [&]() -> Result<bool> {
    SKADE_RETURN_IF_ERROR(load());
    SKADE_ASSIGN_OR_RETURN(auto reply,
                           connection_.Command({replace ? "RENAME" : "RENAMENX", staging, graph_}));
    return replace || reply.integer == 1;
  }();
  if (!renamed || !*renamed) {
    // Best effort: a lost connection leaves the key to the next build's clean-up.
    (void)connection_.Command({"DEL", staging});
    if (!renamed)
      return std::unexpected(std::move(renamed).error().WithContext("bulk load of graph '" +
                                                                    graph_ + "'"));
    return std::nullopt;  // someone created the graph meanwhile
  }
  // Indexed under its final name: FalkorDB fills a renamed graph's indexes afresh.
  indexed_.clear();
  SKADE_RETURN_IF_ERROR(EnsureIndexes(graph.Labels(), report));
  return report;
}

template <typename EncodeKeys>
Status FalkorDbSink::Send(const arrow::Table& t, const std::vector<skade::TypePtr>& types,
                          EncodeKeys keys, size_t first_prop, const std::vector<std::string>& props,
                          const std::string& body, const std::string& match, SinkReport& report) {
  for (size_t c = 0; c < props.size(); ++c)
    SKADE_RETURN_IF_ERROR(CheckStorableType(*types[first_prop + c], props[c]));
  std::string params, key_text;
  // FalkorDB 4.16 removes the wrong attributes when one query removes several from
  // the same entity, so a null (a property the row no longer has) is removed by a
  // query of its own per property, after the non-null values are set.
  std::vector<std::string> removals(props.size());
  int64_t in_batch = 0;
  auto flush = [&]() -> Status {
    if (in_batch == 0) return {};
    params += ']';
    SKADE_ASSIGN_OR_RETURN(auto r, Run(params, body));
    report.Add(r);
    SKADE_RETURN_IF_ERROR(Beat());
    for (size_t c = 0; c < props.size(); ++c) {
      if (removals[c].empty()) continue;
      SKADE_ASSIGN_OR_RETURN(
          auto rr, Run("rows=[" + removals[c] + "]",
                       "UNWIND $rows AS r MATCH " + match + " SET x." + props[c] + " = null"));
      report.Add(rr);
      removals[c].clear();
    }
    params.clear();
    in_batch = 0;
    return {};
  };
  for (int64_t row = 0; row < t.num_rows(); ++row) {
    key_text = "{";
    SKADE_RETURN_IF_ERROR(keys(key_text, row));
    params += in_batch == 0 ? "rows=[" : ",";
    params += key_text;
    params += ",p:{";
    bool first = true;
    for (size_t c = 0; c < props.size(); ++c) {
      const arrow::Array& column = *t.column(first_prop + c)->chunk(0);
      if (column.IsNull(row)) {
        removals[c] += (removals[c].empty() ? "" : ",") + key_text + "}";
        continue;
      }
      params += first ? "" : ",";
      first = false;
      params += props[c] + ":";
      SKADE_RETURN_IF_ERROR(AppendCell(params, column, row, *types[first_prop + c], props[c]));
    }
    params += "}}";
    if (++in_batch >= batch_rows_ || params.size() >= kMaxBatchBytes)
      SKADE_RETURN_IF_ERROR(flush());
  }
  return flush();
}

Result<SinkReport> FalkorDbSink::Apply(const GraphMutation& m) {
  SinkReport report;
  LabelKeys labels;
  for (const auto& v : m.vertices) labels.emplace_back(v.label, v.keys);
  for (const auto& e : m.edges) {
    labels.emplace_back(e.src_label, e.src_keys);
    labels.emplace_back(e.dst_label, e.dst_keys);
  }
  SKADE_RETURN_IF_ERROR(EnsureIndexes(labels, report));
  auto vertex_keys = [](const VertexSet& v) {
    return [&v](std::string& out, int64_t row) -> Status {
      return AppendList(out, "k", *v.rows, v.types, 0, v.keys.size(), v.keys, row);
    };
  };
  auto vertex_match = [](const VertexSet& v) {
    return "(x:" + v.label + " " + KeyPattern(v.keys, "k") + ")";
  };
  auto edge_keys = [](const EdgeSet& e) {
    return [&e](std::string& out, int64_t row) -> Status {
      size_t at = 0;
      SKADE_RETURN_IF_ERROR(
          AppendList(out, "s", *e.rows, e.types, at, e.src_keys.size(), e.src_keys, row));
      at += e.src_keys.size();
      out += ',';
      SKADE_RETURN_IF_ERROR(
          AppendList(out, "d", *e.rows, e.types, at, e.dst_keys.size(), e.dst_keys, row));
      at += e.dst_keys.size();
      out += ',';
      return AppendList(out, "e", *e.rows, e.types, at, e.edge_keys.size(), e.edge_keys, row);
    };
  };
  auto edge_match = [](const EdgeSet& e) {
    return "(a:" + e.src_label + " " + KeyPattern(e.src_keys, "s") + ")-[x:" + e.type + " " +
           KeyPattern(e.edge_keys, "e") + "]->(b:" + e.dst_label + " " +
           KeyPattern(e.dst_keys, "d") + ")";
  };
  for (const auto& v : m.vertices) {
    std::string body =
        "UNWIND $rows AS r MERGE (x:" + v.label + " " + KeyPattern(v.keys, "k") + ") SET x += r.p";
    SKADE_RETURN_IF_ERROR(Send(*v.rows, v.types, vertex_keys(v), v.keys.size(), v.properties, body,
                               vertex_match(v), report));
    report.vertex_rows += v.rows->num_rows();
  }
  for (const auto& e : m.edges) {
    // Both endpoints are MERGEd, so an edge may land before its vertices' own table.
    std::string body = "UNWIND $rows AS r MERGE (a:" + e.src_label + " " +
                       KeyPattern(e.src_keys, "s") + ") MERGE (b:" + e.dst_label + " " +
                       KeyPattern(e.dst_keys, "d") + ") MERGE (a)-[x:" + e.type + " " +
                       KeyPattern(e.edge_keys, "e") + "]->(b) SET x += r.p";
    size_t first_prop = e.src_keys.size() + e.dst_keys.size() + e.edge_keys.size();
    SKADE_RETURN_IF_ERROR(Send(*e.rows, e.types, edge_keys(e), first_prop, e.properties, body,
                               edge_match(e), report));
    report.edge_rows += e.rows->num_rows();
  }
  for (const auto& e : m.edge_deletes) {
    SKADE_RETURN_IF_ERROR(Send(*e.rows, e.types, edge_keys(e), 0, {},
                               "UNWIND $rows AS r MATCH " + edge_match(e) + " DELETE x",
                               edge_match(e), report));
    report.delete_rows += e.rows->num_rows();
  }
  for (const auto& v : m.vertex_deletes) {
    SKADE_RETURN_IF_ERROR(Send(*v.rows, v.types, vertex_keys(v), 0, {},
                               "UNWIND $rows AS r MATCH " + vertex_match(v) + " DETACH DELETE x",
                               vertex_match(v), report));
    report.delete_rows += v.rows->num_rows();
  }
  return report;
}

Result<GraphNames> FalkorDbSink::Names() {
  GraphNames names;
  for (auto [procedure, into] : {std::pair{"db.labels()", &names.labels},
                                 std::pair{"db.relationshipTypes()", &names.types},
                                 std::pair{"db.propertyKeys()", &names.keys}}) {
    SKADE_ASSIGN_OR_RETURN(auto reply, Query("GRAPH.RO_QUERY", std::string("CALL ") + procedure));
    if (reply.kind != Reply::Kind::kArray || reply.elements.size() != 3)
      return skade::Internal(std::string("unexpected reply shape from CALL ") + procedure);
    for (const auto& row : reply.elements[1].elements) {
      auto name = row.elements.empty() ? nullptr : DecodeCell(row.elements[0]);
      into->push_back(name.is_string() ? name.get<std::string>() : name.dump());
    }
  }
  return names;
}

Result<std::string> FalkorDbSink::QueryJsonLines(const std::string& cypher) {
  auto reply = Query("GRAPH.RO_QUERY", cypher);
  if (!reply && reply.error().message.find("empty key") != std::string::npos)
    return skade::NotFound("graph '" + graph_ + "' does not exist on " +
                           connection_.address().ToString() + " (nothing has been built into it)");
  if (!reply)
    return std::unexpected(std::move(reply).error().WithContext("query on graph '" + graph_ + "'"));
  if (reply->kind != Reply::Kind::kArray)
    return skade::Internal("unexpected reply shape from GRAPH.RO_QUERY");
  if (!reply->elements.empty() && reply->elements.back().kind == Reply::Kind::kError)
    return skade::InvalidArgument("query on graph '" + graph_ +
                                  "': " + reply->elements.back().text);
  if (reply->elements.size() < 3) return std::string();
  std::vector<std::string> columns;
  for (const auto& h : reply->elements[0].elements)
    columns.push_back(h.elements.size() == 2 ? h.elements[1].text : "?");
  const Reply& rows = reply->elements[1];
  GraphNames names;
  if (HoldsEntities(rows)) {
    // Read after the query, so they cover every id it returned.
    SKADE_ASSIGN_OR_RETURN(names, Names());
  }
  std::string out;
  for (const auto& row : rows.elements) {
    nlohmann::ordered_json obj = nlohmann::ordered_json::object();
    for (size_t c = 0; c < row.elements.size() && c < columns.size(); ++c)
      obj[columns[c]] = DecodeCell(row.elements[c], names);
    // Bytes that are not UTF-8 (the server does not check) become U+FFFD.
    out += obj.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  return out;
}

}  // namespace bifrost
