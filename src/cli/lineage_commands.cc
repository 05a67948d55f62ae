// The `lineage` and `config` commands, the global --actor/--input options, and the
// lineage recording every skade process does while its catalog is open.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "output.h"
#include "skade/io/file_io.h"
#include "skade/lineage/lineage_graph.h"
#include "skade/lineage/lineage_recorder.h"
#include "skade/lineage/lineage_scope.h"
#include "skade/lineage/openlineage.h"
#include "skade/lineage/openlineage_http_sink.h"
#include "skade/lineage/warehouse_sink.h"

namespace skade::cli {

using namespace skade::lineage;

namespace {

// Process-wide lineage options, filled by the global --actor/--input flags.
struct LineageFlags {
  std::string actor;
  std::vector<std::string> inputs;
};
LineageFlags& Flags() {
  static LineageFlags flags;
  return flags;
}

// Settings kept in `<warehouse>/skade-config.json`.
const std::map<std::string, std::string>& KnownSettings() {
  static const std::map<std::string, std::string> known = {
      {"lineage.enabled", "true or false: record lineage on every commit (default true)"},
      {"lineage.batch_size", "events per append to _skade.lineage_events (default 100)"},
      {"lineage.openlineage.url", "base URL of an OpenLineage receiver (events are POSTed to /api/v1/lineage)"},
      {"lineage.openlineage.token", "bearer token for the OpenLineage receiver"},
  };
  return known;
}

std::string ConfigPath(const std::string& warehouse) { return warehouse + "/skade-config.json"; }

Result<nlohmann::json> LoadConfig(const std::string& warehouse) {
  std::string path = ConfigPath(warehouse);
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Corrupt(path + " is not a JSON object of settings");
  return j;
}

Status SaveConfig(const std::string& warehouse, const nlohmann::json& config) {
  return ReplaceFile(ConfigPath(warehouse), config.dump(2) + "\n");
}

Result<std::optional<std::string>> Setting(const std::string& warehouse, const std::string& key) {
  SKADE_ASSIGN_OR_RETURN(nlohmann::json config, LoadConfig(warehouse));
  if (!config.contains(key) || !config[key].is_string()) return std::optional<std::string>();
  return std::optional<std::string>(config[key].get<std::string>());
}

Status CheckKey(const std::string& key) {
  if (KnownSettings().contains(key)) return {};
  std::string names;
  for (const auto& [k, _] : KnownSettings()) names += (names.empty() ? "" : ", ") + k;
  return InvalidArgument("unknown setting '" + key + "' (known: " + names + ")");
}

std::string DefaultActor() {
  if (const char* env = std::getenv("SKADE_ACTOR"); env && *env) return env;
  if (const char* user = std::getenv("USER"); user && *user) return std::string("user:") + user;
  return "skade-cli";
}

std::string Refs(const std::vector<DatasetRef>& refs) {
  std::string out;
  for (const auto& r : refs)
    out += (out.empty() ? "" : ", ") + r.Key() + (r.snapshot_id ? "@" + std::to_string(*r.snapshot_id) : "");
  return out;
}

Result<std::optional<int64_t>> OptionalTime(const std::string& text) {
  if (text.empty()) return std::optional<int64_t>();
  SKADE_ASSIGN_OR_RETURN(int64_t ms, ParseTimestamp(text));
  return std::optional<int64_t>(ms);
}

// A dataset as typed on the command line → its graph key (snapshot suffix dropped).
Result<std::string> GraphKey(const std::string& text) {
  SKADE_ASSIGN_OR_RETURN(DatasetRef ref, ParseDatasetRef(text));
  ref.snapshot_id.reset();
  return ref.Key();
}

}  // namespace

/// The recorder and its sinks for this process, with the --actor/--input scope.
/// A CLI process makes a commit or two, so its events are batched across processes:
/// they wait in the commit log until `batch_size` are pending (or a lineage command
/// needs them), then whichever process sees that delivers them in one append.
class LineageSession {
 public:
  LineageSession(Catalog& catalog, std::string actor, std::vector<DatasetRef> inputs, size_t batch_size,
                 std::vector<std::shared_ptr<LineageSink>> sinks)
      : sinks_(std::move(sinks)),
        // Batching is this session's: the recorder itself never flushes.
        recorder_(catalog, LineageRecorder::Options{actor, std::numeric_limits<size_t>::max(), false}),
        scope_(actor, std::move(inputs), LineageScope::Reads::kIgnore),
        batch_size_(batch_size) {
    for (const auto& sink : sinks_) recorder_.AddSink(sink);
  }
  ~LineageSession() {
    // Test hook: die like `kill -9` after the commit, before the sinks flush.
    if (const char* kill = std::getenv("SKADE_TEST_KILL_BEFORE_LINEAGE_FLUSH"); kill && *kill == '1')
      std::raise(SIGKILL);
    DeliverFullBatch();
  }
  /// Delivers every pending event now (a sink failure is a warning, never an error).
  /// Delivers every waiting event; returns the sinks' errors (printed as warnings
  /// when `warn`, for commands whose own result is something else).
  std::vector<std::string> DeliverAll(bool warn = true) {
    delivery_failed_ = !recorder_.Flush();
    auto errors = recorder_.TakeSinkErrors();
    if (warn)
      for (const auto& e : errors) std::fprintf(stderr, "skade: warning: %s\n", e.c_str());
    return errors;
  }
  /// Delivers if a sink has a full batch waiting; once a delivery failed, this
  /// process leaves the events to a later one rather than retrying again.
  void DeliverFullBatch() {
    if (delivery_failed_) return;
    for (const auto& sink : sinks_) {
      auto pending = sink->Pending();
      if (!pending) {
        std::fprintf(stderr, "skade: warning: lineage sink %s: %s\n", sink->name().c_str(), pending.error().message.c_str());
      } else if (*pending >= batch_size_) {
        DeliverAll();
        return;
      }
    }
  }

 private:
  std::vector<std::shared_ptr<LineageSink>> sinks_;
  bool delivery_failed_ = false;
  LineageRecorder recorder_;
  LineageScope scope_;
  size_t batch_size_;
};

bool IsInternalNamespace(const std::string& ns) { return ns == kLineageNamespace; }

void DeliverLineage(Context& ctx, bool all) {
  if (!ctx.lineage) return;
  if (all) (void)ctx.lineage->DeliverAll(/*warn=*/false);
  else ctx.lineage->DeliverFullBatch();
}

Status StartLineage(Context& ctx) {
  Catalog& catalog = *ctx.catalog;
  std::vector<DatasetRef> inputs;
  for (const auto& text : Flags().inputs) {
    SKADE_ASSIGN_OR_RETURN(DatasetRef ref, ParseDatasetRef(text));
    inputs.push_back(std::move(ref));
  }
  SKADE_ASSIGN_OR_RETURN(auto enabled, Setting(catalog.warehouse(), "lineage.enabled"));
  if (enabled && *enabled == "false") return {};
  SKADE_ASSIGN_OR_RETURN(auto batch_text, Setting(catalog.warehouse(), "lineage.batch_size"));
  size_t batch_size = batch_text ? std::strtoul(batch_text->c_str(), nullptr, 10) : 100;
  std::string actor = Flags().actor.empty() ? DefaultActor() : Flags().actor;
  std::vector<std::shared_ptr<LineageSink>> sinks{std::make_shared<WarehouseSink>(catalog)};
  SKADE_ASSIGN_OR_RETURN(auto url, Setting(catalog.warehouse(), "lineage.openlineage.url"));
  if (url) {
    SKADE_ASSIGN_OR_RETURN(auto token, Setting(catalog.warehouse(), "lineage.openlineage.token"));
    OpenLineageHttpOptions http{*url, token.value_or(""), 5, 100, 5000,
                                catalog.warehouse() + "/lineage-openlineage-http.watermark"};
    sinks.push_back(std::make_shared<OpenLineageHttpSink>(catalog, std::move(http)));
  }
  ctx.lineage = std::make_shared<LineageSession>(catalog, actor, std::move(inputs), std::max<size_t>(1, batch_size),
                                                 std::move(sinks));
  ctx.lineage->DeliverFullBatch();
  return {};
}

namespace {

// The stored events, after delivering those still waiting in the commit log.
Result<std::vector<LineageEvent>> StoredEvents(Context& ctx, const EventFilter& filter) {
  if (ctx.lineage) ctx.lineage->DeliverAll();
  return ReadStoredEvents(*ctx.catalog, filter);
}

Status CmdEvents(Context& ctx, const std::string& since, const std::string& table, const std::string& format) {
  SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(format, false));
  if (f == Format::kCsv) return InvalidArgument("lineage events prints table or jsonl");
  EventFilter filter;
  SKADE_ASSIGN_OR_RETURN(filter.since_ms, OptionalTime(since));
  if (!table.empty()) {
    SKADE_ASSIGN_OR_RETURN(filter.dataset, GraphKey(table));
  }
  SKADE_ASSIGN_OR_RETURN(auto events, StoredEvents(ctx, filter));
  if (f == Format::kJsonl) {
    for (const auto& e : events) std::printf("%s\n", ToJson(e).c_str());
    return {};
  }
  Listing l{{"time", "operation", "actor", "inputs", "outputs", "commit_seq", "event_id"}, {},
            {false, false, false, false, false, true, false}};
  for (const auto& e : events)
    l.rows.push_back({TimeText(e.ts_ms), e.operation, e.actor, Refs(e.inputs), Refs(e.outputs),
                      e.commit_seq ? std::to_string(*e.commit_seq) : "", e.event_id});
  PrintListing(l, f, stdout);
  return {};
}

Result<LineageGraph> LoadGraph(Context& ctx, const GraphWindow& window) {
  SKADE_ASSIGN_OR_RETURN(auto events, StoredEvents(ctx, {}));
  return LineageGraph::Build(events, window);
}

Status CmdGraph(Context& ctx, const std::string& since, const std::string& system, const std::string& format) {
  GraphWindow window;
  SKADE_ASSIGN_OR_RETURN(window.since_ms, OptionalTime(since));
  if (!system.empty()) window.system = system;
  SKADE_ASSIGN_OR_RETURN(LineageGraph graph, LoadGraph(ctx, window));
  if (format == "json") std::fputs(graph.ToJson().c_str(), stdout);
  else if (format == "dot") std::fputs(graph.ToDot().c_str(), stdout);
  else if (format == "mermaid") std::fputs(graph.ToMermaid().c_str(), stdout);
  else return InvalidArgument("unknown graph format '" + format + "' (use json, dot or mermaid)");
  return {};
}

Status CmdImpact(Context& ctx, const std::string& table, int depth, bool downstream, const std::string& format) {
  SKADE_ASSIGN_OR_RETURN(Format f, ParseFormat(format, false));
  SKADE_ASSIGN_OR_RETURN(std::string key, GraphKey(table));
  SKADE_ASSIGN_OR_RETURN(LineageGraph graph, LoadGraph(ctx, {}));
  SKADE_ASSIGN_OR_RETURN(auto reached, downstream ? graph.Downstream(key, depth) : graph.Upstream(key, depth));
  Listing l{{"dataset", "depth", "system", "last_writer"}, {}, {false, true, false, false}};
  for (const auto& r : reached) {
    const GraphNode& n = graph.nodes().at(r.key);
    l.rows.push_back({r.key, std::to_string(r.depth), n.system, n.last_writer});
  }
  PrintListing(l, f, stdout);
  return {};
}

Status CmdIngest(Context& ctx, const std::string& file, const std::vector<std::string>& catalog_uris) {
  std::ifstream file_in;
  std::istream* in = &std::cin;
  if (file != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) return InvalidArgument(file + " is a directory, not a file of events");
    file_in.open(file, std::ios::binary);
    if (!file_in) return IoError("cannot read " + file + ": " + std::strerror(errno));
    in = &file_in;
  }
  RunEventMapper mapper(ctx.catalog->warehouse(), ctx.catalog.get());
  mapper.SetOwnCatalog([&](std::string_view ns) {
    return std::any_of(catalog_uris.begin(), catalog_uris.end(),
                       [&](const std::string& uri) { return SameCatalogUri(uri, ns); });
  });
  WarehouseSink sink(*ctx.catalog);
  std::string line;
  int64_t line_no = 0, good = 0, bad = 0;
  constexpr size_t kMaxLineBytes = 16 << 20;
  while (std::getline(*in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Result<LineageEvent> event = line.size() > kMaxLineBytes
                                     ? InvalidArgument("line is longer than " + std::to_string(kMaxLineBytes) + " bytes")
                                     : mapper.FromRunEvent(line);
    if (!event) {
      ++bad;
      std::fprintf(stderr, "skade: error: %s line %lld: %s\n", file == "-" ? "stdin" : file.c_str(),
                   static_cast<long long>(line_no), event.error().message.c_str());
      continue;
    }
    SKADE_RETURN_IF_ERROR(sink.Write({*event}));
    ++good;
  }
  SKADE_RETURN_IF_ERROR(sink.Flush());
  std::printf("ingested %lld events from %s, %lld lines failed\n", static_cast<long long>(good),
              file == "-" ? "stdin" : file.c_str(), static_cast<long long>(bad));
  if (bad > 0) return InvalidArgument(std::to_string(bad) + " of " + std::to_string(good + bad) + " events were rejected");
  return {};
}

Status CmdExport(Context& ctx, const std::string& since) {
  EventFilter filter;
  SKADE_ASSIGN_OR_RETURN(filter.since_ms, OptionalTime(since));
  SKADE_ASSIGN_OR_RETURN(auto events, StoredEvents(ctx, filter));
  RunEventMapper mapper(ctx.catalog->warehouse(), ctx.catalog.get());
  // Ingested events go out as they came in; skade's own are mapped.
  for (const auto& e : events) std::printf("%s\n", e.raw ? e.raw->c_str() : mapper.ToRunEvent(e).c_str());
  return {};
}

}  // namespace

void AddLineageCommands(CLI::App& app, Context& ctx, CommandAction& action) {
  app.add_option("--actor", Flags().actor, "who is writing (recorded as the lineage actor; default $SKADE_ACTOR)");
  app.add_option("--input", Flags().inputs,
                 "a dataset this write was derived from: TABLE[@SNAPSHOT] or SYSTEM:NAME (repeatable)");
  // Let writers take --actor/--input after their own arguments.
  for (CLI::App* sub : app.get_subcommands({})) sub->fallthrough();

  auto* lineage = app.add_subcommand("lineage", "lineage events, graph and OpenLineage exchange");
  lineage->require_subcommand(1);

  static std::string since, table, system, format, file, dataset;
  static int depth = 0;
  auto* events = lineage->add_subcommand("events", "list lineage events");
  events->add_option("--since", since, "only events at or after this time (RFC 3339)");
  events->add_option("--table", table, "only events reading or writing this dataset");
  events->add_option("--format", format, "table or jsonl")->default_str("table");
  events->callback([&] { action = [&] { return CmdEvents(ctx, since, table, format.empty() ? "table" : format); }; });

  auto* graph = lineage->add_subcommand("graph", "print the lineage graph");
  graph->add_option("--since", since, "only events at or after this time (RFC 3339)");
  graph->add_option("--system", system, "only edges touching datasets of this system (e.g. skade, spark)");
  graph->add_option("--format", format, "json, dot or mermaid")->default_str("json");
  graph->callback([&] { action = [&] { return CmdGraph(ctx, since, system, format.empty() ? "json" : format); }; });

  for (bool downstream : {true, false}) {
    auto* impact = lineage->add_subcommand(downstream ? "downstream" : "upstream",
                                           downstream ? "datasets derived from a dataset" : "datasets a dataset was derived from");
    impact->add_option("TABLE", dataset, "ns.table or system:name")->required();
    impact->add_option("--depth", depth, "at most N hops (default: all)")->check(CLI::NonNegativeNumber);
    impact->add_option("--format", format, "table, csv or jsonl")->default_str("table");
    impact->callback([&, downstream] {
      action = [&, downstream] { return CmdImpact(ctx, dataset, depth, downstream, format.empty() ? "table" : format); };
    });
  }

  auto* ingest = lineage->add_subcommand("ingest", "store OpenLineage RunEvents (one JSON per line)");
  static std::vector<std::string> catalog_uris;
  ingest->add_option("FILE", file, "file, or - for stdin")->required();
  ingest->add_option("--catalog-uri", catalog_uris,
                     "a REST catalog URI this warehouse was served at, as the engine was given it: dataset "
                     "symlinks in that namespace name its tables (repeatable; `skade serve` knows its own)");
  ingest->callback([&] { action = [&] { return CmdIngest(ctx, file, catalog_uris); }; });

  auto* flush = lineage->add_subcommand("flush", "deliver the events waiting in the commit log to _skade.lineage_events");
  flush->callback([&] { action = [&]() -> Status {
    if (!ctx.lineage) return InvalidArgument("lineage is disabled (config set lineage.enabled true)");
    auto errors = ctx.lineage->DeliverAll(/*warn=*/false);
    if (!errors.empty())
      return IoError("lineage events were not all delivered (they stay waiting): " + errors.front());
    std::printf("lineage events delivered\n");
    return {};
  }; });

  auto* exp = lineage->add_subcommand("export", "print events as OpenLineage RunEvents (JSON lines)");
  exp->add_option("--since", since, "only events at or after this time (RFC 3339)");
  exp->callback([&] { action = [&] { return CmdExport(ctx, since); }; });

  static std::string key, value;
  auto* config = app.add_subcommand("config", "read or change warehouse settings");
  config->require_subcommand(1);
  auto* get = config->add_subcommand("get", "print a setting");
  get->add_option("KEY", key)->required();
  get->callback([&] { action = [&]() -> Status {
    SKADE_RETURN_IF_ERROR(CheckKey(key));
    SKADE_ASSIGN_OR_RETURN(auto v, Setting(ctx.catalog->warehouse(), key));
    if (!v) return NotFound("setting " + key + " is not set");
    std::printf("%s\n", v->c_str());
    return {};
  }; });
  auto* set = config->add_subcommand("set", "change a setting");
  set->add_option("KEY", key)->required();
  set->add_option("VALUE", value)->required();
  set->callback([&] { action = [&]() -> Status {
    SKADE_RETURN_IF_ERROR(CheckKey(key));
    if (key == "lineage.enabled" && value != "true" && value != "false")
      return InvalidArgument("lineage.enabled must be true or false, got '" + value + "'");
    if (key == "lineage.batch_size" && (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
                                        std::strtoul(value.c_str(), nullptr, 10) == 0))
      return InvalidArgument("lineage.batch_size must be a positive number, got '" + value + "'");
    SKADE_ASSIGN_OR_RETURN(nlohmann::json config, LoadConfig(ctx.catalog->warehouse()));
    config[key] = value;
    SKADE_RETURN_IF_ERROR(SaveConfig(ctx.catalog->warehouse(), config));
    std::printf("%s = %s\n", key.c_str(), value.c_str());
    return {};
  }; });
}

}  // namespace skade::cli
