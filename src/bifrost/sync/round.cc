#include "bifrost/sync/round.h"

#include "bifrost/sink/bulk_graph.h"

#include <arrow/table.h>

#include <algorithm>
#include <cstdio>

namespace bifrost {

int RoundReport::Count(TableRound::Outcome outcome) const {
  return static_cast<int>(std::count_if(tables.begin(), tables.end(),
                                        [&](const auto& t) { return t.outcome == outcome; }));
}

bool RoundReport::IsFailure() const {
  int failed = Count(TableRound::Outcome::kFailed);
  return failed > 0 && Count(TableRound::Outcome::kSynced) == 0;
}

int64_t RoundReport::RowsRead() const {
  int64_t n = 0;
  for (const auto& t : tables) n += t.rows_read;
  return n;
}

SinkReport RoundReport::Sink() const {
  SinkReport r;
  for (const auto& t : tables) r.Add(t.sink);
  return r;
}

std::string RoundReport::Line() const {
  SinkReport s = Sink();
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "%d synced, %d idle, %d busy, %d failed; %lld rows read; %lld vertex rows, %lld edge rows, "
      "%lld delete rows; "
      "server: +%lld nodes, +%lld relationships, -%lld nodes, -%lld relationships; %.3f s",
      Count(TableRound::Outcome::kSynced), Count(TableRound::Outcome::kIdle),
      Count(TableRound::Outcome::kBusy), Count(TableRound::Outcome::kFailed),
      static_cast<long long>(RowsRead()), static_cast<long long>(s.vertex_rows),
      static_cast<long long>(s.edge_rows), static_cast<long long>(s.delete_rows),
      static_cast<long long>(s.nodes_created), static_cast<long long>(s.relationships_created),
      static_cast<long long>(s.nodes_deleted), static_cast<long long>(s.relationships_deleted),
      seconds);
  return buf;
}

std::chrono::milliseconds Backoff::Next(const RoundReport& round) {
  if (round.IsFailure()) {
    auto wait = next_;
    next_ = std::min(next_ * 2, max_);
    return wait;
  }
  next_ = interval_;
  return interval_;
}

Syncer::Syncer(const std::vector<CompiledTable>& tables, TableSource& source, GraphSink& sink,
               StateLedger& ledger, std::chrono::milliseconds lease)
    : tables_(tables), source_(source), sink_(sink), ledger_(ledger), lease_(lease) {
  sink_.SetHeartbeat([this]() -> Status {
    SKADE_RETURN_IF_ERROR(CheckStop());
    return KeepLease(false);
  });
}

Status Syncer::CheckStop() const {
  if (stop_ && stop_())
    return skade::IoError("interrupted: stopped before finishing; the round will be replayed");
  return {};
}

Syncer::~Syncer() { sink_.SetHeartbeat(nullptr); }

Result<bool> Syncer::HoldLease() {
  SKADE_ASSIGN_OR_RETURN(bool held, ledger_.AcquireRound(lease_));
  if (held) leased_at_ = std::chrono::steady_clock::now();
  return held;
}

Status Syncer::KeepLease(bool now) {
  if (!now && std::chrono::steady_clock::now() - leased_at_ < lease_ / 3) return {};
  SKADE_ASSIGN_OR_RETURN(bool held, HoldLease());
  if (held) return {};
  return skade::MakeError(skade::ErrorKind::kCommitConflict,
                          "another instance took the round lease of " + ledger_.Describe() +
                              " after this one went longer than the lease without renewing "
                              "it; nothing more was written and the round will be replayed");
}

Syncer::Pending Syncer::Prepare(const CompiledTable& table, bool from_scratch) {
  Pending failed;
  failed.round.table = table.ident.ToString();
  if (auto stop = CheckStop(); !stop) {
    failed.round.Fail(stop.error());
    return failed;
  }
  auto p = Fetch(table, from_scratch);
  if (p) return std::move(*p);
  failed.round.Fail(p.error());
  return failed;
}

Result<Syncer::Pending> Syncer::Fetch(const CompiledTable& table, bool from_scratch) {
  Pending p;
  TableRound& r = p.round;
  r.table = table.ident.ToString();
  SKADE_ASSIGN_OR_RETURN(bool held, HoldLease());
  if (!held) {
    r.outcome = TableRound::Outcome::kBusy;
    r.description = "another instance sharing the ledger is running a round";
    return p;
  }
  TableState state;
  if (!from_scratch) {
    SKADE_ASSIGN_OR_RETURN(state, ledger_.Get(r.table));
  }
  p.from = state;
  auto fetch = source_.FetchNew(table, state);
  if (!fetch) {
    // Name the table, once, whatever layer the error came from.
    if (fetch.error().message.starts_with("table '"))
      return std::unexpected(std::move(fetch).error());
    return std::unexpected(std::move(fetch).error().WithContext("table '" + r.table + "'"));
  }
  auto& fetched = *fetch;
  if (!fetched) {
    r.description = "unchanged";
    return p;
  }
  r.description = fetched->description;
  r.rows_read = fetched->rows->num_rows();
  SKADE_ASSIGN_OR_RETURN(p.mutation, table.Apply(fetched->rows));
  p.next = std::move(fetched->next);
  r.outcome = TableRound::Outcome::kSynced;  // once Finish has run
  return p;
}

Status Syncer::Finish(Pending& p) {
  SKADE_RETURN_IF_ERROR(CheckStop());
  SKADE_RETURN_IF_ERROR(KeepLease(true));  // the fetch may have outlasted it
  SKADE_ASSIGN_OR_RETURN(p.round.sink, sink_.Apply(p.mutation));
  // Only now: a crash before this line replays the round.
  return Advance(p);
}

Status Syncer::Advance(const Pending& p) {
  auto event = make_event_ ? make_event_(p.round, p.from, p.next) : std::nullopt;
  if (event) return ledger_.AdvanceAndEnqueue(p.round.table, p.next, *event);
  return ledger_.Advance(p.round.table, p.next);
}

Syncer::Start Syncer::HowToStart() {
  auto exists = sink_.Exists();
  if (!exists || *exists) return Start::kExisting;  // an error shows in the rounds
  for (const auto& table : tables_) {
    auto state = ledger_.Get(table.ident.ToString());
    if (!state) return Start::kExisting;  // the per-table rounds report the ledger's error
    if (*state != TableState{}) return Start::kLost;
  }
  return Start::kNew;
}

void Syncer::CreateGraph(std::vector<Pending*>& pending, bool replace) {
  auto finish_each = [&] {
    for (Pending* p : pending)
      if (auto s = Finish(*p); !s) p->round.Fail(s.error());
  };
  auto fail_all = [&](const skade::Error& e) {
    for (Pending* p : pending) p->round.Fail(e);
  };
  std::vector<SinkReport> added;
  {
    BulkGraph graph;
    for (Pending* p : pending) {
      auto r = graph.Add(p->mutation);
      if (!r && replace)
        return fail_all(r.error().WithContext("table '" + p->round.table +
                                              "' cannot be rebuilt in one load"));
      if (!r) return finish_each();  // Apply reports what is wrong, table by table
      added.push_back(*r);
    }
    if (auto stop = CheckStop(); !stop) return fail_all(stop.error());
    if (auto held = KeepLease(true); !held) return fail_all(held.error());
    auto created = sink_.Create(graph, replace);
    if (!created) return fail_all(created.error());
    if (!*created) return finish_each();
    // The load's queries are counted once, with the first table.
    added.front().queries = (*created)->queries;
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    pending[i]->round.sink = added[i];
    pending[i]->round.description +=
        replace ? "; rebuilt into a new graph" : "; bulk-loaded into a new graph";
    if (auto s = Advance(*pending[i]); !s)
      pending[i]->round.Fail(s.error());
  }
}

RoundReport Syncer::SyncOnce() {
  auto start = std::chrono::steady_clock::now();
  const Start start_as = HowToStart();
  const bool first_build = start_as != Start::kExisting;
  std::vector<Pending> prepared(tables_.size());
  std::vector<Pending*> to_create;
  for (size_t i = 0; i < tables_.size(); ++i) {
    prepared[i] = Prepare(tables_[i], start_as == Start::kLost);
    if (prepared[i].round.outcome != TableRound::Outcome::kSynced) continue;
    if (first_build) {
      to_create.push_back(&prepared[i]);
      continue;
    }
    if (auto s = Finish(prepared[i]); !s)
      prepared[i].round.Fail(s.error());
    prepared[i].mutation = {};  // applied: free its rows before the next table's
  }
  if (start_as == Start::kLost)
    for (Pending* p : to_create)
      p->round.description += "; the graph was missing though the ledger had cursors: read afresh";
  if (!to_create.empty()) CreateGraph(to_create, false);
  return Close(prepared, start);
}

RoundReport Syncer::Rebuild() {
  auto start = std::chrono::steady_clock::now();
  std::vector<Pending> prepared(tables_.size());
  std::vector<Pending*> all;
  const TableRound* stopped = nullptr;  // the first table that was not read
  for (size_t i = 0; i < tables_.size(); ++i) {
    prepared[i] = Prepare(tables_[i], true);
    if (prepared[i].round.outcome != TableRound::Outcome::kSynced && !stopped)
      stopped = &prepared[i].round;
    all.push_back(&prepared[i]);
  }
  if (!stopped) {
    CreateGraph(all, true);
  } else {
    // Half a rebuild would drop the other tables' part of the graph.
    auto outcome = stopped->outcome == TableRound::Outcome::kBusy ? TableRound::Outcome::kBusy
                                                                  : TableRound::Outcome::kFailed;
    std::string why = "not rebuilt, the graph is as it was: table '" + stopped->table + "' " +
                      (outcome == TableRound::Outcome::kBusy ? "is busy" : "failed");
    for (auto& p : prepared) {
      if (&p.round == stopped || p.round.outcome == TableRound::Outcome::kFailed) continue;
      p.round.outcome = outcome;
      p.round.error_kind = stopped->error_kind;
      p.round.description = why;
    }
  }
  return Close(prepared, start);
}

RoundReport Syncer::Close(std::vector<Pending>& prepared,
                          std::chrono::steady_clock::time_point start) {
  RoundReport report;
  for (auto& p : prepared) report.tables.push_back(std::move(p.round));
  ledger_.ReleaseRound();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace bifrost
