// bifrost: keeps a FalkorDB property graph in step with skade tables.
// Exit codes as skade's: 0 ok, 1 usage, 2 data or runtime error (one line on stderr);
// 128 + the signal (130 SIGINT, 143 SIGTERM) when a signal stopped the command.
#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>

#include "airflow_cli.h"
#include "bifrost/mapping/infer.h"
#include "bifrost/sync/metrics.h"
#include "bifrost/sync/round.h"
#include "interrupt.h"
#include "session.h"
#include "skade/cdc/commit_watcher.h"

namespace bifrost::cli {
namespace {

using namespace std::chrono_literals;

bool Stopping() { return StopSignal() != 0; }

// One printable line, whatever a dependency put in the message.
std::string OneLine(const std::string& text) {
  std::string msg;
  for (unsigned char c : text) {
    if (c == '\n') {
      msg += "; ";
      continue;
    }
    if (c == '\r' || c == '\t') c = ' ';
    if (c < 0x20 || c == 0x7f) continue;
    msg += static_cast<char>(c);
  }
  return msg;
}

int Report(const Status& st) {
  if (st) return 0;
  std::fprintf(stderr, "bifrost: error: %s\n", OneLine(st.error().message).c_str());
  return 2;
}

Result<std::chrono::milliseconds> ParseDuration(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  std::string unit = text.substr(used);
  double ms = unit == "ms"                  ? v
              : unit == "s" || unit.empty() ? v * 1000
              : unit == "m"                 ? v * 60000
                                            : -1;
  if (used == 0 || !(ms >= 0) || ms > 1e12)  // also NaN and infinities
    return skade::InvalidArgument("duration '" + text + "' is not like 500ms, 5s or 1m");
  if (ms < 1) return skade::InvalidArgument("duration '" + text + "' must be at least 1ms");
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

// A duration option checked while parsing, so a bad value is a usage error naming it.
CLI::Validator DurationCheck() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto d = ParseDuration(text);
        return d ? std::string() : d.error().message;
      },
      "DURATION");
}

// A count option: a whole number of at least `min`.
CLI::Validator CountCheck(int64_t min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || v < min)
          return "'" + text + "' is not a whole number from " + std::to_string(min) + " to " +
                 std::to_string(std::numeric_limits<int64_t>::max());
        return {};
      },
      "N");
}

// CLI11's parse errors as one line, like every other bifrost error.
std::string UsageLine(const CLI::App* app, const CLI::Error& e) {
  const CLI::App* at = app;
  std::string command = "bifrost";
  while (!at->get_subcommands().empty()) {
    at = at->get_subcommands().front();
    command += " " + at->get_name();
  }
  std::string what = OneLine(e.what());
  // An unknown command comes back as a missing one, the word left unparsed.
  auto rest = at->remaining();
  if (e.get_name() == "RequiredError" && what.starts_with("A subcommand") && !rest.empty() &&
      !rest.front().starts_with("-"))
    return "bifrost: error: unknown command '" + OneLine(rest.front()) + "' (run " + command +
           " --help)\n";
  if (what.starts_with("A subcommand")) what = "a command is required";
  if (!what.empty() && what[0] >= 'A' && what[0] <= 'Z' && !(what.size() > 1 && what[1] <= 'Z'))
    what[0] = static_cast<char>(what[0] - 'A' + 'a');
  return "bifrost: error: " + what + " (run " + command + " --help)\n";
}

Status CmdValidate(Session& s) {
  SKADE_ASSIGN_OR_RETURN(auto* tables, s.Compile());
  SKADE_ASSIGN_OR_RETURN(std::string graph, s.GraphName());
  std::printf("mapping ok: graph '%s', %zu table(s)\n", graph.c_str(), tables->size());
  for (const auto& t : *tables) {
    std::string cols;
    for (const auto& c : t.projection) cols += (cols.empty() ? "" : ", ") + c;
    std::printf("  %s (%s): %zu vertex step(s), %zu edge step(s), %zu custom step(s); reads %s\n",
                t.ident.ToString().c_str(), std::string(SyncModeName(t.spec.mode)).c_str(),
                t.vertices.size(), t.edges.size(), t.customs.size(),
                cols.empty() ? "all columns" : cols.c_str());
  }
  return {};
}

Status CmdInfer(Session& s, const std::string& table, const std::string& format) {
  if (format != "yaml" && format != "ron")
    return skade::InvalidArgument("--format must be yaml or ron, not '" + format + "'");
  SKADE_ASSIGN_OR_RETURN(auto* catalog, s.Catalog());
  SKADE_ASSIGN_OR_RETURN(auto ident, skade::TableIdent::Parse(table));
  SKADE_ASSIGN_OR_RETURN(auto schema, CatalogSchemas (*catalog)(ident));
  SKADE_ASSIGN_OR_RETURN(auto inferred, InferMapping(ident, *schema));
  std::fputs((format == "ron" ? inferred.ToRon() : inferred.ToYaml()).c_str(), stdout);
  return {};
}

// Reads a mapping in either format (checked as any command checks it) and prints it in
// the other; comments are not carried over.
Status CmdConvert(const std::string& file, const std::string& to) {
  if (to != "yaml" && to != "ron")
    return skade::InvalidArgument("--to must be yaml or ron, not '" + to + "'");
  SKADE_ASSIGN_OR_RETURN(auto spec, MappingSpec::Load(file));
  std::fputs((to == "ron" ? spec.ToRon() : spec.ToYaml()).c_str(), stdout);
  return {};
}

void PrintTableLines(const RoundReport& r) {
  for (const auto& t : r.tables) {
    if (t.outcome == TableRound::Outcome::kFailed) {
      std::fprintf(stderr, "bifrost: error: %s\n", OneLine(t.description).c_str());
      continue;
    }
    const char* tag = t.outcome == TableRound::Outcome::kIdle   ? "idle, "
                      : t.outcome == TableRound::Outcome::kBusy ? "busy, "
                                                                : "";
    std::printf("  %s: %s%s\n", t.table.c_str(), tag, t.description.c_str());
  }
}

Status CmdBuild(Session& s, std::chrono::milliseconds lease, bool rebuild, AirflowEvents* events) {
  SKADE_ASSIGN_OR_RETURN(auto* tables, s.Compile());
  SKADE_ASSIGN_OR_RETURN(std::string graph, s.GraphName());
  if (events) events->SetGraph(graph);
  SKADE_ASSIGN_OR_RETURN(TableSource * source, s.Source());
  auto attempt = [&]() -> Result<RoundReport> {
    SKADE_RETURN_IF_ERROR(s.Connect());
    Syncer syncer(*tables, *source, s.sink(), s.ledger(), lease);
    syncer.SetStop(Stopping);
    if (events) syncer.SetEventMaker(events->Maker());
    return rebuild ? syncer.Rebuild() : syncer.SyncOnce();
  };
  auto io_failed = [](const RoundReport& r) {
    return std::any_of(r.tables.begin(), r.tables.end(), [](const TableRound& t) {
      return t.outcome == TableRound::Outcome::kFailed &&
             t.error_kind == skade::ErrorKind::kIoError;
    });
  };
  SKADE_ASSIGN_OR_RETURN(RoundReport r, attempt());
  // Retried: a server that went away (e.g. an exiting instance's embedded server we had
  // attached to; reconnecting starts our own), and a round lease a running instance holds
  // (a dead holder's lease expires). Tables a retry finds unchanged keep what they did.
  auto deadline = std::chrono::steady_clock::now() + 2 * lease;
  for (int io_retries = 0; !Stopping();) {
    bool retry_io = io_failed(r) && io_retries++ < 3;
    bool busy =
        r.Count(TableRound::Outcome::kBusy) > 0 && std::chrono::steady_clock::now() < deadline;
    if (!retry_io && !busy) break;
    if (retry_io) s.Disconnect();
    std::this_thread::sleep_for(retry_io ? 300ms : 200ms);
    SKADE_ASSIGN_OR_RETURN(RoundReport next, attempt());
    for (size_t i = 0; i < next.tables.size() && i < r.tables.size(); ++i)
      if (next.tables[i].outcome == TableRound::Outcome::kIdle &&
          r.tables[i].outcome == TableRound::Outcome::kSynced)
        next.tables[i] = r.tables[i];
    next.seconds += r.seconds;
    r = std::move(next);
  }
  if (Stopping()) return {};  // Main reports the stop; the cursors are where they were
  if (r.Count(TableRound::Outcome::kBusy) > 0)
    return skade::MakeError(skade::ErrorKind::kCommitConflict,
                            "another instance kept the round lease of " + s.ledger().Describe() +
                                "; nothing was applied");
  std::printf("build of graph '%s' at %s (state %s)\n", graph.c_str(), s.GraphAddress().c_str(),
              s.ledger().Describe().c_str());
  PrintTableLines(r);
  int empty = 0;
  for (const auto& t : r.tables)
    if (t.outcome == TableRound::Outcome::kSynced && t.rows_read == 0) ++empty;
  SinkReport sink = r.Sink();
  std::printf(
      "tables mapped: %zu, tables empty: %d, tables unchanged: %d, tables failed: %d, rows read: "
      "%lld, "
      "vertices: %lld, edges: %lld, deletes: %lld, nodes created: %lld, relationships created: "
      "%lld, "
      "nodes deleted: %lld, relationships deleted: %lld, seconds: %.3f\n",
      tables->size(), empty, r.Count(TableRound::Outcome::kIdle),
      r.Count(TableRound::Outcome::kFailed), static_cast<long long>(r.RowsRead()),
      static_cast<long long>(sink.vertex_rows), static_cast<long long>(sink.edge_rows),
      static_cast<long long>(sink.delete_rows), static_cast<long long>(sink.nodes_created),
      static_cast<long long>(sink.relationships_created),
      static_cast<long long>(sink.nodes_deleted),
      static_cast<long long>(sink.relationships_deleted), r.seconds);
  if (events) {
    if (auto ledger = s.DeliveryLedgerOpener()())
      DeliverAirflowEvents(*events, *ledger, lease, true);
    else
      std::fprintf(stderr, "bifrost: warning: Airflow events: %s\n", OneLine(ledger.error().message).c_str());
  }
  if (r.AnyFailed())
    return skade::InvalidArgument("build refused " +
                                  std::to_string(r.Count(TableRound::Outcome::kFailed)) +
                                  " table(s); their state was not advanced");
  return {};
}

struct RunArgs {
  std::string interval = "5s";
  std::string max_wait = "";
  std::string metrics_addr;
  std::string lease = "60s";
  int64_t max_rounds = 0;  // 0: until stopped
  bool stopped_between_rounds = false;  // set by CmdRun: a signal found it waiting
  AirflowEvents* events = nullptr;      // --airflow-url
};

// The newest commit_seq in the catalog's durable commit log (0 when empty).
int64_t NewestCommit(skade::Catalog* catalog, int64_t after) {
  if (!catalog) return after;
  auto rows = catalog->CommitsSince(after);
  return rows && !rows->empty() ? rows->back().commit_seq : after;
}

// Waits until the commit log moves past `seen` (woken by any engine's commit through
// the catalog's files), the interval being an upper bound; returns early on a stop.
void WaitForWork(skade::Catalog* catalog, skade::cdc::CommitWatcher* watcher, int64_t seen,
                 std::chrono::milliseconds wait, bool plain_sleep) {
  auto deadline = std::chrono::steady_clock::now() + wait;
  auto arrived = [&]() -> Result<bool> { return Stopping() || NewestCommit(catalog, seen) > seen; };
  while (!Stopping()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= 0ms) return;
    auto slice = std::min(left, std::chrono::milliseconds(200));
    if (plain_sleep || !watcher) {
      std::this_thread::sleep_for(slice);
      continue;
    }
    auto came = watcher->WaitFor(arrived, slice);
    if (came && *came) return;
  }
}

Status CmdRun(Session& s, RunArgs& args) {
  SKADE_ASSIGN_OR_RETURN(auto interval, ParseDuration(args.interval));
  auto max_wait = interval * 10;
  if (!args.max_wait.empty()) {
    SKADE_ASSIGN_OR_RETURN(max_wait, ParseDuration(args.max_wait));
  }
  SKADE_ASSIGN_OR_RETURN(auto lease, ParseDuration(args.lease));
  // A source not reachable yet (a REST catalog that is down) fails the start like a
  // round, retried with backoff, rather than ending the run.
  auto compiled = s.Compile();
  for (auto wait = interval; !compiled && compiled.error().kind == skade::ErrorKind::kIoError &&
                             !Stopping();
       wait = std::min(wait * 2, max_wait)) {
    std::fprintf(stderr, "bifrost: error: %s; retry in %lld ms\n",
                 OneLine(compiled.error().message).c_str(), static_cast<long long>(wait.count()));
    WaitForWork(nullptr, nullptr, 0, wait, true);
    compiled = s.Compile();
  }
  if (!compiled) return Stopping() ? Status() : std::unexpected(std::move(compiled).error());
  const std::vector<CompiledTable>* tables = *compiled;
  // A mapping of REST catalog tables alone needs no local warehouse: no commit watch.
  auto opened = s.Catalog();
  skade::Catalog* catalog = opened ? *opened : nullptr;
  if (args.events) {
    SKADE_ASSIGN_OR_RETURN(std::string graph, s.GraphName());
    args.events->SetGraph(graph);
  }
  std::unique_ptr<MetricsServer> metrics_server;
  Metrics metrics;
  if (!args.metrics_addr.empty()) {
    SKADE_ASSIGN_OR_RETURN(metrics_server, MetricsServer::Start(args.metrics_addr, metrics));
  }
  std::unique_ptr<skade::cdc::CommitWatcher> watcher;
  if (catalog) {
    auto made = skade::cdc::CommitWatcher::Make(*catalog);
    if (made)
      watcher = std::move(*made);
    else
      std::fprintf(stderr, "bifrost: warning: %s; polling every interval\n",
                   OneLine(made.error().message).c_str());
  }
  SKADE_ASSIGN_OR_RETURN(TableSource * source, s.Source());
  Backoff backoff(interval, max_wait);
  std::unique_ptr<AirflowDelivery> delivery;  // after the first connected round: Connect names the ledger
  int64_t seen = 0;
  int64_t round = 1;
  for (; args.max_rounds == 0 || round <= args.max_rounds; ++round) {
    if (Stopping()) {  // it came while waiting for work: the way to end a run
      args.stopped_between_rounds = true;
      std::printf("stopped after %lld round(s)\n", static_cast<long long>(round - 1));
      std::fflush(stdout);
      break;
    }
    seen =
        NewestCommit(catalog, seen);  // before fetching: a commit during the round brings another
    int64_t made_before = args.events ? args.events->made() : 0;
    RoundReport r;
    bool connected = false;
    if (Status st = s.Connect(); !st) {
      // A bad address or a missing server binary will not heal by waiting.
      if (st.error().kind != skade::ErrorKind::kIoError) return st;
      // The graph server is unreachable: a failed round, retried with backoff.
      TableRound failed;
      failed.table = "(graph)";
      failed.Fail(st.error());
      r.tables.push_back(failed);
    } else {
      Syncer syncer(*tables, *source, s.sink(), s.ledger(), lease);
      syncer.SetStop(Stopping);
      if (args.events) syncer.SetEventMaker(args.events->Maker());
      r = syncer.SyncOnce();
      connected = true;
    }
    // A round the signal cut short: reported by Main as interrupted, its cursors unmoved.
    if (Stopping() && r.AnyFailed()) return {};
    for (const auto& t : r.tables)
      if (t.outcome == TableRound::Outcome::kFailed && t.error_kind == skade::ErrorKind::kIoError)
        s.Disconnect();
    metrics.Record(r);
    auto wait = backoff.Next(r);
    std::printf(
        "round %lld: %s%s\n", static_cast<long long>(round), r.Line().c_str(),
        r.IsFailure() ? (", retry in " + std::to_string(wait.count()) + " ms").c_str() : "");
    for (const auto& t : r.tables)
      if (t.outcome == TableRound::Outcome::kFailed)
        std::fprintf(stderr, "bifrost: error: %s\n", OneLine(t.description).c_str());
    std::fflush(stdout);
    // The events wait in the ledger's outbox; the delivery thread takes them from there,
    // whatever Airflow does, without holding up the next round.
    if (args.events && connected) {
      if (!delivery)
        delivery = std::make_unique<AirflowDelivery>(*args.events, s.DeliveryLedgerOpener(), lease,
                                                     interval, metrics);
      else if (args.events->made() != made_before)
        delivery->Wake();
    }
    if (args.max_rounds != 0 && round == args.max_rounds) break;
    WaitForWork(catalog, watcher.get(), seen, wait, r.IsFailure());
  }
  return {};
}

Status CmdStateShow(Session& s) {
  SKADE_RETURN_IF_ERROR(s.Connect());
  SKADE_ASSIGN_OR_RETURN(std::string json, s.ledger().ToJson());
  std::printf("%s\n", json.c_str());
  return {};
}

Status CmdQuery(Session& s, const std::string& cypher) {
  SKADE_RETURN_IF_ERROR(s.Connect());
  SKADE_ASSIGN_OR_RETURN(std::string rows, s.sink().QueryJsonLines(cypher));
  std::fputs(rows.c_str(), stdout);
  return {};
}

int Main(int argc, char** argv) {
  // A graph server that goes away mid-write must be an I/O error (retried), not a kill.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"bifrost: keeps a FalkorDB graph in step with skade tables", "bifrost"};
  app.require_subcommand(1);
  app.failure_message(UsageLine);
  app.footer(
      "Exit status: 0 ok, 1 usage error, 2 data or runtime error. SIGINT (Ctrl-C) or SIGTERM\n"
      "stops any command within about a second: one line 'bifrost: interrupted by SIGINT',\n"
      "exit 130 (143 for SIGTERM); a round cut short keeps its cursors and is replayed.\n"
      "`run` stopped while waiting between rounds ends cleanly with exit 0.");
  Options opts;
  const char* env = std::getenv("SKADE_WAREHOUSE");
  opts.warehouse = env && *env ? env : "./warehouse";
  app.add_option("--warehouse", opts.warehouse,
                 "warehouse folder (default $SKADE_WAREHOUSE, else ./warehouse)");
  std::function<Status(Session&)> action;
  std::string timeout = "30s";

  auto add_graph = [&](CLI::App* sub) {
    sub->add_option("--graph", opts.graph_url,
                    "redis://HOST:PORT or unix:///PATH (default: embedded server)");
    sub->add_option("--graph-name", opts.graph_name, "graph key (default: the mapping's graph)");
    sub->add_option("--timeout", timeout,
                    "longest a graph query may take, enforced by the server and by bifrost "
                    "(default 30s)")
        ->check(DurationCheck());
  };

  auto* validate = app.add_subcommand("validate", "check a mapping file against the warehouse");
  validate->add_option("--mapping", opts.mapping, "mapping file (YAML, or RON when named *.ron)")->required();
  validate->callback([&] { action = CmdValidate; });

  std::string table, format = "yaml";
  auto* infer = app.add_subcommand("infer", "print a candidate mapping for a table");
  infer->add_option("TABLE", table)->required();
  infer->add_option("--format", format, "yaml (default) or ron");
  infer->callback([&] { action = [&](Session& s) { return CmdInfer(s, table, format); }; });

  std::string convert_file, convert_to;
  auto* convert = app.add_subcommand("convert", "print a mapping file as YAML or RON");
  convert->add_option("FILE", convert_file, "mapping file (.ron is RON, else YAML)")->required();
  convert->add_option("--to", convert_to, "yaml or ron")->required();
  convert->callback([&] { action = [&](Session&) { return CmdConvert(convert_file, convert_to); }; });

  auto* build = app.add_subcommand("build", "apply every mapped table's changes once and report");
  build->add_option("--mapping", opts.mapping, "mapping file (YAML, or RON when named *.ron)")->required();
  add_graph(build);
  build->add_option("--state", opts.state,
                    "file:PATH or redis://HOST:PORT/KEY (default: a hash in the graph's server)");
  bool rebuild = false;
  build->add_flag("--rebuild", rebuild,
                  "read every table afresh into a new graph that replaces the graph whole, and "
                  "reset the cursors (after a cursor's snapshot expired)");
  AirflowOptions airflow;
  std::string airflow_timeout;
  AddAirflowFlags(*build, airflow, airflow_timeout, DurationCheck());
  std::unique_ptr<AirflowEvents> events;
  std::string build_lease = "60s";
  build->add_option("--lease", build_lease,
                    "round lease shared with running instances (default 60s)")
      ->check(DurationCheck());
  build->callback([&] {
    action = [&](Session& s) -> Status {
      SKADE_ASSIGN_OR_RETURN(auto lease, ParseDuration(build_lease));
      return CmdBuild(s, lease, rebuild, events.get());
    };
  });

  RunArgs run_args;
  auto* run = app.add_subcommand(
      "run", "keep the graph in step: a round per commit, at least every interval");
  run->add_option("--mapping", opts.mapping, "mapping file (YAML, or RON when named *.ron)")->required();
  add_graph(run);
  run->add_option("--state", opts.state,
                  "file:PATH or redis://HOST:PORT/KEY (default: a hash in the graph's server)");
  run->add_option("--interval", run_args.interval, "longest wait between rounds (default 5s)")
      ->check(DurationCheck());
  run->add_option("--max-backoff", run_args.max_wait,
                  "longest wait after failed rounds (default 10 intervals)")
      ->check(DurationCheck());
  run->add_option("--metrics-addr", run_args.metrics_addr, "serve Prometheus metrics on HOST:PORT");
  run->add_option("--lease", run_args.lease,
                  "how long a killed instance blocks others sharing the ledger (default 60s)")
      ->check(DurationCheck());
  run->add_option("--rounds", run_args.max_rounds,
                  "stop after N rounds, N >= 1 (default: run until stopped)")
      ->check(CountCheck(1));
  AddAirflowFlags(*run, airflow, airflow_timeout, DurationCheck());
  run->callback([&] {
    action = [&](Session& s) {
      run_args.events = events.get();
      return CmdRun(s, run_args);
    };
  });

  auto* state = app.add_subcommand("state", "the state ledger");
  auto* show = state->add_subcommand("show", "print every table's cursor");
  state->require_subcommand(1);
  show->add_option("--mapping", opts.mapping, "mapping file (names the graph)");
  add_graph(show);
  show->add_option("--state", opts.state, "file:PATH or redis://HOST:PORT/KEY");
  show->callback([&] { action = CmdStateShow; });

  std::string cypher;
  auto* query = app.add_subcommand("query", "run a read-only Cypher query; prints JSON lines");
  query->add_option("CYPHER", cypher)->required();
  query->add_option("--mapping", opts.mapping, "mapping file (names the graph)");
  add_graph(query);
  query->callback([&] { action = [&](Session& s) { return CmdQuery(s, cypher); }; });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  if (!action) return 1;
  if (!airflow_timeout.empty())  // checked while parsing
    airflow.timeout_ms =
        static_cast<int>(std::min<int64_t>(ParseDuration(airflow_timeout)->count(), INT32_MAX));
  if (auto made = MakeAirflowEvents(airflow); !made) {
    std::fprintf(stderr, "bifrost: error: %s\n", OneLine(made.error().message).c_str());
    return 1;
  } else {
    events = std::move(*made);
  }
  opts.timeout = *ParseDuration(timeout);  // checked while parsing
  // Well inside "about a second": commands give up kStopGrace after the signal.
  InstallStopHandlers(std::chrono::milliseconds(900));
  opts.stop_fd = StopFd();
  if (events) events->SetStopFd(opts.stop_fd);
  Session session(opts);
  Status st = action(session);
  if (int sig = StopSignal(); sig != 0 && !run_args.stopped_between_rounds) {
    std::fprintf(stderr, "%s\n", StopLine(sig).c_str());
    MarkStopReported();
    return 128 + sig;
  }
  return Report(st);
}

}  // namespace
}  // namespace bifrost::cli

int main(int argc, char** argv) { return bifrost::cli::Main(argc, argv); }
