// The SQL catalog (schema of Iceberg's SQL/JDBC catalog, SQLite embedded) and the
// commit chokepoint: every table change ends in Catalog::Commit.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/table_metadata.h"

struct sqlite3;

namespace skade {

class FileIO;

/// `namespace.name`; the namespace may itself contain dots (the last dot splits).
struct TableIdent {
  std::string ns;
  std::string name;
  std::string ToString() const { return ns + "." + name; }
  bool operator==(const TableIdent&) const = default;
  /// Errors: kInvalidArgument when there is no dot or a part is empty.
  static Result<TableIdent> Parse(std::string_view text);
};

/// One row of the durable commit log.
struct CommitLogEntry {
  int64_t commit_seq = 0;
  TableIdent table;
  std::string action;  // create | commit | drop | rename
  std::optional<int64_t> snapshot_id;
  std::string operation;  // append, overwrite, ... (empty when unknown)
  std::string previous_metadata_location;
  std::string metadata_location;
  int64_t committed_at_ms = 0;
  std::string engine;  // "skade" or "external" (another engine through the same catalog)
  /// The annotation minted with this commit (see CommitAnnotator); empty when none.
  std::string lineage_event;
};

/// What the post-commit hook receives, after the commit is durable.
struct CommitEvent {
  TableIdent table;
  std::optional<int64_t> snapshot_id;
  int64_t commit_seq = 0;
  int64_t ts_ms = 0;
  std::string operation;
};

/// Registered by upper layers (CDC, lineage); never fails or undoes a commit.
class CommitListener {
 public:
  virtual ~CommitListener() = default;
  virtual void OnCommit(const CommitEvent& event) = 0;
};

/// A dataset a change was derived from: a table and the snapshot that was read.
/// `system` empty means this warehouse; otherwise where it lives (`spark`, `kafka`, ...).
struct CommitInput {
  std::string system;
  std::string name;
  std::optional<int64_t> snapshot_id;
  std::string instance;  // which installation of `system` (e.g. its URL); may be empty
  bool operator==(const CommitInput&) const = default;
};

/// Who made a change and what it read. The catalog only carries it to the annotator.
struct CommitProvenance {
  std::string actor;
  std::vector<CommitInput> inputs;
  /// What the writer did, where the snapshot operation does not say (an upsert's
  /// snapshot is an overwrite); empty: the snapshot operation tells.
  std::string operation;
  /// Adds `other`'s inputs (once each), and its actor and operation where this has none.
  void Merge(const CommitProvenance& other);
};

/// Supplies provenance to commits made on the thread it is installed on, and hears
/// about every table scanned there (a lineage scope is one). See ScopedProvenanceSource.
class ProvenanceSource {
 public:
  virtual ~ProvenanceSource() = default;
  virtual void OnRead(const TableIdent& table, std::optional<int64_t> snapshot_id) = 0;
  virtual CommitProvenance Provenance() const = 0;
  /// The source installed on this thread, or null.
  static ProvenanceSource* Current();
};

/// Installs a source on this thread for its lifetime (nesting restores the outer one).
class ScopedProvenanceSource {
 public:
  explicit ScopedProvenanceSource(ProvenanceSource* source);
  ~ScopedProvenanceSource();
  ScopedProvenanceSource(const ScopedProvenanceSource&) = delete;
  ScopedProvenanceSource& operator=(const ScopedProvenanceSource&) = delete;

 private:
  ProvenanceSource* previous_;
};

/// Everything one catalog transaction changed, as the annotator sees it.
struct CommitRecord {
  struct Change {
    TableIdent table;
    std::string action;  // create | commit | drop | rename
    std::string operation;
    std::optional<int64_t> snapshot_id;
    int64_t commit_seq = 0;
    std::optional<TableIdent> renamed_from;
  };
  std::vector<Change> changes;
  int64_t ts_ms = 0;
  CommitProvenance provenance;
};

/// Mints a record of each catalog transaction (lineage registers one). `Annotate`
/// runs inside the transaction; what it returns is stored in the commit-log row of
/// the transaction's last change, so it is durable exactly when the commit is.
/// `OnDurable` runs after the transaction is durable. Neither may fail a commit.
class CommitAnnotator {
 public:
  virtual ~CommitAnnotator() = default;
  virtual std::optional<std::string> Annotate(const CommitRecord& record) = 0;
  virtual void OnDurable(const CommitRecord& record, const std::string& annotation) = 0;
};

/// One table's part of a (possibly multi-table) commit: swap `base_location` for
/// `new_location`, whose metadata file the caller has already written.
struct TableCommit {
  TableIdent table;
  std::string base_location;
  std::string new_location;
  std::optional<int64_t> snapshot_id;
  std::string operation;
  /// Merged with the thread's ProvenanceSource, if any, at commit.
  CommitProvenance provenance;
  /// The engine the commit log names (empty: "skade"), e.g. a REST client's.
  std::string engine;
};

struct LoadedTable {
  TableIdent ident;
  std::string metadata_location;
  TableMetadataPtr metadata;
};

class Catalog {
 public:
  ~Catalog();

  /// Opens the warehouse's existing `<warehouse>/catalog.db` (a SQL catalog another
  /// engine made counts: skade adds its own tables to it). Thread-safe afterwards.
  /// Errors: kNotFound when there is no catalog (the fix is Create / `skade init`);
  /// kCorrupt when the file is empty, truncated or not a SQL catalog (never
  /// re-initialised); kIoError naming the database.
  static Result<std::unique_ptr<Catalog>> Open(const std::string& warehouse,
                                               const std::string& catalog_name = "skade");
  /// Same, with the FileIO to use (e.g. a fault-injecting one in tests).
  static Result<std::unique_ptr<Catalog>> Open(const std::string& warehouse, const std::string& catalog_name,
                                               std::unique_ptr<FileIO> io);
  /// Opens the catalog, first creating the warehouse folder and a new catalog when
  /// there is none (`skade init`). An existing file is checked as Open checks it.
  static Result<std::unique_ptr<Catalog>> Create(const std::string& warehouse,
                                                 const std::string& catalog_name = "skade");
  static Result<std::unique_ptr<Catalog>> Create(const std::string& warehouse, const std::string& catalog_name,
                                                 std::unique_ptr<FileIO> io);

  const std::string& warehouse() const { return warehouse_; }
  const std::string& name() const { return name_; }
  FileIO& io() { return *io_; }

  Status CreateNamespace(std::string_view ns, const std::map<std::string, std::string>& props = {});
  Result<std::vector<std::string>> ListNamespaces();
  Result<bool> NamespaceExists(std::string_view ns);
  /// Errors: kNotFound; kNotEmpty when tables remain.
  Status DropNamespace(std::string_view ns);
  /// The namespace's properties (skade's internal `exists` marker left out).
  /// Errors: kNotFound.
  Result<std::map<std::string, std::string>> NamespaceProperties(std::string_view ns);
  /// Sets `updates` and removes `removals` in one transaction; returns the removal
  /// keys that were not there. Errors: kNotFound; kInvalidArgument when a key is in both.
  Result<std::vector<std::string>> UpdateNamespaceProperties(std::string_view ns,
                                                             const std::vector<std::string>& removals,
                                                             const std::map<std::string, std::string>& updates);

  /// Writes metadata version 00000 and registers the table. Errors: kAlreadyExists,
  /// kNotFound (namespace), kInvalidArgument.
  Result<LoadedTable> CreateTable(const TableIdent& ident, const Schema& schema,
                                  const PartitionSpec& spec,
                                  const std::map<std::string, std::string>& properties,
                                  const CommitProvenance& provenance = {});
  /// The same for metadata made by the caller (a REST create): it is written as
  /// version 00000 under its location and registered. Errors as CreateTable.
  Result<LoadedTable> CreateTable(const TableIdent& ident, TableMetadataPtr metadata,
                                  const CommitProvenance& provenance = {});
  /// Registers an existing metadata file as a new table (it must parse).
  /// Errors: kAlreadyExists, kNotFound (namespace or file), kCorrupt naming the file.
  Result<LoadedTable> RegisterTable(const TableIdent& ident, const std::string& metadata_location,
                                    const CommitProvenance& provenance = {});
  Result<std::vector<TableIdent>> ListTables(std::optional<std::string_view> ns = std::nullopt);
  /// Errors: kNotFound; kCorrupt / kIoError naming the metadata file.
  Result<LoadedTable> LoadTable(const TableIdent& ident);
  /// The table's current metadata file, without reading it (nullopt: no such table).
  Result<std::optional<std::string>> MetadataLocation(const TableIdent& ident);
  Status DropTable(const TableIdent& ident, const CommitProvenance& provenance = {});
  Status RenameTable(const TableIdent& from, const TableIdent& to,
                     const CommitProvenance& provenance = {});

  /// The chokepoint. In one transaction: compare-and-swap every table's metadata
  /// location and append one commit-log row each. All or nothing. Returns the
  /// commit_seq of each table's row. Errors: kCommitConflict when a base location is
  /// stale (nothing changed); kCommitStateUnknown when the database failed at commit.
  Result<std::vector<int64_t>> Commit(const std::vector<TableCommit>& commits);

  /// Durable log rows with commit_seq > `after_seq`, oldest first; rows written by
  /// other engines get their snapshot and operation filled from their metadata.
  Result<std::vector<CommitLogEntry>> CommitsSince(int64_t after_seq,
                                                   std::optional<TableIdent> table = std::nullopt,
                                                   int64_t limit = -1);
  /// The same, newest first: rows with `after_seq` < commit_seq < `before_seq`, at
  /// most `limit` (-1: all) of the newest of them.
  Result<std::vector<CommitLogEntry>> CommitsBefore(int64_t before_seq, int64_t after_seq = 0,
                                                    std::optional<TableIdent> table = std::nullopt,
                                                    int64_t limit = -1);

  /// The annotations stored with commits after `after_seq` as (commit_seq, annotation),
  /// oldest first; rows without one are skipped (cheaper than CommitsSince).
  Result<std::vector<std::pair<int64_t, std::string>>> AnnotationsSince(int64_t after_seq);

  /// The lineage inbox: events received from other systems, made durable here in one
  /// small transaction and moved to the lineage events table in batches later.
  /// Returns the inbox sequence of the last one added.
  Result<int64_t> AddToLineageInbox(const std::vector<std::string>& events);
  /// Inbox entries with sequence > `after_seq`, oldest first, as (seq, event).
  Result<std::vector<std::pair<int64_t, std::string>>> LineageInboxSince(int64_t after_seq);
  /// Drops delivered entries (sequence <= `through_seq`).
  Status TrimLineageInbox(int64_t through_seq);
  /// How many inbox entries have sequence > `after_seq` (reads no event).
  Result<int64_t> CountLineageInboxSince(int64_t after_seq);

  /// The index of event ids the lineage events table holds, so a delivery dedupes by
  /// lookup instead of reading the table. `ids` not in the index, in their order.
  Result<std::vector<std::string>> UnknownLineageEventIds(const std::vector<std::string>& ids);
  /// Adds ids to the index; `replace_all` first empties it (a rebuild).
  Status RecordLineageEventIds(const std::vector<std::string>& ids, bool replace_all = false);

  /// Runs an OpenLineage mapper remembers per parent run (opaque `run` text), so what
  /// it folds later events into survives a restart. Keeps the newest `runs_per_parent`
  /// of each parent and the `parents` parents seen last.
  Status RememberLineageRun(const std::string& parent, const std::string& run_id, const std::string& run,
                            int64_t runs_per_parent, int64_t parents);
  /// A parent's remembered runs, oldest first.
  Result<std::vector<std::string>> LineageRunsOf(const std::string& parent);

  /// Post-commit hook registration (not owned).
  void AddListener(CommitListener* listener);
  void RemoveListener(CommitListener* listener);
  /// The annotator of every transaction that changes tables (not owned; null: none).
  void SetAnnotator(CommitAnnotator* annotator);

  /// The location a new table gets: `<warehouse>/<ns>.db/<name>`, or, when that path
  /// exists or lies inside, equals or holds another table's location (a renamed or
  /// dropped table keeps its folder), `<warehouse>/<ns>.db/<name>-<uuid>`.
  Result<std::string> DefaultLocation(const TableIdent& ident);
  /// The folder of every table of the catalog, derived from its metadata location.
  Result<std::vector<std::pair<TableIdent, std::string>>> TableFolders();
  /// The catalog's own files (`catalog.db` and SQLite's `-wal`/`-shm` beside it).
  bool IsCatalogFile(std::string_view path) const;

 private:
  /// Log rows with after_seq < commit_seq < before_seq, other engines' rows described
  /// from their metadata.
  Result<std::vector<CommitLogEntry>> CommitRows(bool newest_first, int64_t after_seq, int64_t before_seq,
                                                 const std::optional<TableIdent>& table, int64_t limit);
  struct FileIdentity {
    uint64_t dev = 0, ino = 0;
  };
  friend class CatalogWriteTxn;
  Catalog(std::string warehouse, std::string name, sqlite3* db, std::unique_ptr<FileIO> io);
  static Result<std::unique_ptr<Catalog>> OpenImpl(const std::string& warehouse, const std::string& catalog_name,
                                                   std::unique_ptr<FileIO> io, bool create);
  /// Fails when the file at the catalog's path is no longer the one this connection
  /// opened (removed or replaced): a commit there would land in a file nobody reads.
  Status CheckSameFile() const;
  Status Exec(const char* sql);
  Result<std::optional<std::string>> CurrentLocation(const TableIdent& ident);
  /// Marks the log row the trigger just wrote as skade's; returns its commit_seq.
  /// Inserts the table row for `location` and logs it as a create, in one transaction.
  Result<LoadedTable> InsertTable(const TableIdent& ident, const std::string& location, TableMetadataPtr metadata,
                                  const CommitProvenance& provenance);
  Status CheckNewTable(const TableIdent& ident);
  Result<int64_t> ClaimLogRow(std::optional<int64_t> snapshot_id, std::optional<std::string> operation,
                              std::optional<int64_t> ts_ms, const std::string& engine = "skade");
  /// Inside the write transaction: asks the annotator for the record's annotation
  /// and stores it in the row of the record's last change.
  Result<std::string> AnnotateInTxn(CommitRecord& record);
  /// After durability: hands the record to the annotator, then tells the listeners.
  void AfterDurable(const CommitRecord& record, const std::string& annotation);

  std::string warehouse_;
  std::string name_;
  std::string db_path_;
  FileIdentity db_file_;
  sqlite3* db_;
  std::unique_ptr<FileIO> io_;
  std::mutex mu_;  // one connection, serialised
  std::mutex listeners_mu_;
  std::vector<CommitListener*> listeners_;
  std::atomic<CommitAnnotator*> annotator_{nullptr};
};

/// Path of the metadata file following `current` (`00001-<uuid>.metadata.json` ...).
std::string NextMetadataLocation(const std::string& table_location, const std::string& current);

}  // namespace skade
