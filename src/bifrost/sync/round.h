// One round: for each mapped table, fetch → transform → sink → advance the ledger,
// in that order, so a crash anywhere replays the round (MERGE makes that harmless).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bifrost/sink/graph_sink.h"
#include "bifrost/source/table_source.h"
#include "bifrost/state/ledger.h"

namespace bifrost {

struct TableRound {
  std::string table;
  // kBusy: another instance sharing the ledger holds the round (not a failure).
  enum class Outcome { kSynced, kIdle, kBusy, kFailed } outcome = Outcome::kIdle;
  std::string description;  // what was read, or the error
  skade::ErrorKind error_kind = skade::ErrorKind::kInternal;
  int64_t rows_read = 0;
  SinkReport sink;

  /// Marks the table's round failed with `error`.
  void Fail(const skade::Error& error) {
    outcome = Outcome::kFailed;
    error_kind = error.kind;
    description = error.message;
  }
};

struct RoundReport {
  std::vector<TableRound> tables;
  double seconds = 0;

  int Count(TableRound::Outcome outcome) const;
  /// Idle is not failure: a round fails only when it attempted something and every
  /// attempt failed.
  bool IsFailure() const;
  /// Something was applied.
  bool Progressed() const { return Count(TableRound::Outcome::kSynced) > 0; }
  bool AnyFailed() const { return Count(TableRound::Outcome::kFailed) > 0; }
  int64_t RowsRead() const;
  SinkReport Sink() const;
  /// One line: "round: 2 synced, 1 idle, 0 failed; 30 rows read; 20 vertices, ...".
  std::string Line() const;
};

/// The wait before the next round: the interval after progress or idleness, doubled
/// after each failed round up to `max`.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds interval, std::chrono::milliseconds max)
      : interval_(interval), max_(max), next_(interval) {}
  std::chrono::milliseconds Next(const RoundReport& round);

 private:
  std::chrono::milliseconds interval_, max_, next_;
};

class Syncer {
 public:
  /// Everything is borrowed and must outlive the syncer.
  /// While a round writes, the lease is renewed between the sink's queries (every
  /// third of `lease`); a round that finds it lost stops with kCommitConflict.
  Syncer(const std::vector<CompiledTable>& tables, TableSource& source, GraphSink& sink,
         StateLedger& ledger, std::chrono::milliseconds lease = std::chrono::seconds(60));
  ~Syncer();
  Syncer(const Syncer&) = delete;
  Syncer& operator=(const Syncer&) = delete;

  /// Runs one round over every table; a table's failure is reported, not thrown, and
  /// does not stop the other tables. Its cursor stays where it was. While another
  /// instance sharing the ledger runs a round, every table is idle ("busy").
  /// A round into a graph that does not exist yet loads every table's rows at once
  /// (GraphSink::Create) and then advances the cursors; the graph is the one
  /// per-table rounds would have built. If cursors say rows were applied before (the
  /// graph was deleted or lost), the tables are read afresh rather than from them.
  RoundReport SyncOnce();
  /// Reads every table afresh (as a first round would), loads the rows into a new
  /// graph that then replaces the graph whole, and resets every cursor: the way back
  /// after a cursor's snapshot expired. If any table fails, nothing is replaced.
  RoundReport Rebuild();
  /// `stop` is asked between tables and between the sink's queries: once it says
  /// true, the round writes nothing more and the tables it did not finish fail
  /// (kIoError "interrupted"), their cursors where they were, so the next round
  /// replays them.
  void SetStop(std::function<bool()> stop) { stop_ = std::move(stop); }
  /// Asked for each table round the sink applied, with the cursor it started from and
  /// the one about to be stored: an event (JSON text) goes into the ledger's outbox in
  /// the same write as the cursor (StateLedger::AdvanceAndEnqueue); nullopt, none.
  using EventMaker = std::function<std::optional<std::string>(
      const TableRound& round, const TableState& from, const TableState& to)>;
  void SetEventMaker(EventMaker make) { make_event_ = std::move(make); }

 private:
  /// kIoError once `stop_` says so.
  Status CheckStop() const;
  /// Takes or extends the round lease.
  Result<bool> HoldLease();
  /// Extends the lease (`now`, or once a third of it has passed); kCommitConflict when
  /// another instance holds it.
  Status KeepLease(bool now);
  /// A table's round up to the sink: fetched and transformed.
  struct Pending {
    TableRound round;
    TableState from;  // the cursor the fetch started from
    TableState next;
    GraphMutation mutation;
  };
  /// Busy, idle and failed rounds come back finished (outcome set); others await
  /// Finish. `from_scratch` reads as if the table had never been synced.
  Pending Prepare(const CompiledTable& table, bool from_scratch);
  Result<Pending> Fetch(const CompiledTable& table, bool from_scratch);
  /// The report of a round: the tables' outcomes, its time; releases the lease.
  RoundReport Close(std::vector<Pending>& prepared, std::chrono::steady_clock::time_point start);
  /// Applies the mutation, then advances the cursor.
  Status Finish(Pending& pending);
  /// Stores the cursor of an applied table round, with its event if there is one.
  Status Advance(const Pending& pending);
  /// How this round starts: into a graph that exists; into none, no table synced
  /// yet (a first build); or into none although cursors say rows were applied
  /// (the graph was deleted or its server lost it: every table is read afresh).
  enum class Start { kExisting, kNew, kLost };
  Start HowToStart();
  /// Loads `pending` as a new graph (replacing the graph when `replace`); otherwise
  /// falls back to Finish for each table when the graph appeared meanwhile or a
  /// table's rows cannot go into a bulk load.
  void CreateGraph(std::vector<Pending*>& pending, bool replace);
  const std::vector<CompiledTable>& tables_;
  TableSource& source_;
  GraphSink& sink_;
  StateLedger& ledger_;
  std::chrono::milliseconds lease_;
  std::chrono::steady_clock::time_point leased_at_;
  std::function<bool()> stop_;
  EventMaker make_event_;
};

}  // namespace bifrost
