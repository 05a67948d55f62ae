#include "bifrost/sync/round.h"

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

Result<TableRound> Syncer::SyncTable(const CompiledTable& table) {
  TableRound r;
  r.table = table.ident.ToString();
  SKADE_ASSIGN_OR_RETURN(bool held, ledger_.AcquireRound(lease_));
  if (!held) {
    r.outcome = TableRound::Outcome::kBusy;
    r.description = "another instance sharing the ledger is running a round";
    return r;
  }
  SKADE_ASSIGN_OR_RETURN(TableState state, ledger_.Get(r.table));
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
    return r;
  }
  r.description = fetched->description;
  r.rows_read = fetched->rows->num_rows();
  SKADE_ASSIGN_OR_RETURN(GraphMutation mutation, table.Apply(fetched->rows));
  SKADE_ASSIGN_OR_RETURN(r.sink, sink_.Apply(mutation));
  // Only now: a crash before this line replays the round.
  SKADE_RETURN_IF_ERROR(ledger_.Advance(r.table, fetched->next));
  r.outcome = TableRound::Outcome::kSynced;
  return r;
}

RoundReport Syncer::SyncOnce() {
  RoundReport report;
  auto start = std::chrono::steady_clock::now();
  for (const auto& table : tables_) {
    auto r = SyncTable(table);
    if (r) {
      report.tables.push_back(std::move(*r));
      continue;
    }
    TableRound failed;
    failed.table = table.ident.ToString();
    failed.outcome = TableRound::Outcome::kFailed;
    failed.error_kind = r.error().kind;
    failed.description = r.error().message;
    report.tables.push_back(std::move(failed));
  }
  ledger_.ReleaseRound();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace bifrost
