// Turns a change of a table's files into a new snapshot and commits it through the
// catalog's chokepoint, retrying on conflicts. Every write path ends here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "skade/catalog/catalog.h"
#include "skade/expr/expression.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"

namespace skade {

class FileIO;

/// What one snapshot does to a branch's files.
struct FileChange {
  std::string operation = "append";  // append | overwrite | delete | replace
  std::vector<DataFile> added;       // data files and delete files (by content)
  std::set<std::string> removed;     // live files (data or delete) to drop, by DataFile::EntryKey
  std::map<std::string, std::string> properties;  // extra summary entries
  std::string branch = "main";
  /// Rewrites the parent's manifests into one per (content, spec) (rewrite manifests).
  bool merge_manifests = false;
  /// For changes computed from reading the branch: the snapshot that was read
  /// (0: the branch was empty). If data files were added to the branch since, the
  /// change is refused with kCommitConflict (not retried here: it must be recomputed).
  std::optional<int64_t> validate_no_new_data_since;
  /// Narrows that validation: only added files whose metrics might hold rows
  /// matching this bound filter conflict (null: every added file does).
  expr::ExprPtr conflict_filter;
  /// With validate_no_new_data_since: data files (paths) this change's position
  /// deletes refer to. A concurrent commit that removed one of them since the read (or, in
  /// format v3, added a deletion vector for one) makes the change conflict (not retried
  /// here: it must be recomputed).
  std::set<std::string> validate_live;
  /// For rewrites (compaction): the snapshot whose deletes the rewrite folded in. A
  /// delete file added to the branch since, that may apply to a removed data file,
  /// makes the change conflict (not retried here: the rewrite must be redone).
  std::optional<int64_t> validate_no_new_deletes_since;
  CommitProvenance provenance;
};

/// The outcome for one table.
struct ProducedSnapshot {
  int64_t snapshot_id = 0;
  int64_t commit_seq = 0;
  int attempts = 1;
  LoadedTable table;  // the table as committed
};

/// One table's change, prepared against successive bases until it lands.
class SnapshotProducer {
 public:
  SnapshotProducer(FileIO& io, FileChange change);

  /// Writes manifests of the added files (once; reused by every attempt).
  Status WriteAddedManifests(const TableMetadata& base);
  /// Builds and writes the next metadata of `base`. Errors: kCommitConflict when a
  /// removed file is no longer live (retrying cannot help: `retryable()` is false).
  Result<TableCommit> Prepare(const LoadedTable& base, int attempt);
  /// Files written by the last Prepare (deleted when its commit loses the race).
  const std::vector<std::string>& attempt_files() const { return attempt_files_; }
  /// Deletes the change's added files and what this producer wrote (the last attempt's
  /// files, the added manifests), once the change is known not to have landed.
  void Abandon();
  const TableMetadataPtr& prepared_metadata() const { return prepared_; }
  int64_t snapshot_id() const { return snapshot_id_; }
  bool retryable() const { return retryable_; }

 private:
  FileIO& io_;
  FileChange change_;
  int64_t snapshot_id_;
  std::string commit_uuid_;
  std::vector<ManifestFile> added_manifests_;
  std::vector<std::string> attempt_files_;
  TableMetadataPtr prepared_;
  bool retryable_ = true;
};

/// Commits changes to one or more tables in one catalog transaction (all or nothing),
/// reloading and re-preparing on conflicts up to `commit.retry.num-retries` times.
/// The changes' added files belong to it: when they do not land they are deleted with
/// the manifests and metadata written for them, unless the error is kCommitStateUnknown.
Result<std::vector<ProducedSnapshot>> CommitChanges(Catalog& catalog,
                                                    std::vector<std::pair<LoadedTable, FileChange>> changes);

/// Deletes files a write staged and no commit refers to (best effort: a file left over
/// is an orphan, which `skade orphans` finds).
void DiscardFiles(FileIO& io, const std::vector<DataFile>& files);

}  // namespace skade

namespace skade {

/// Adds `base` (at `base_location`) to `next`'s metadata log, keeping the newest
/// `write.metadata.previous-versions-max` entries (default 100), as every commit does.
void RecordPreviousMetadata(TableMetadata& next, const TableMetadata& base, const std::string& base_location);

/// Commits a metadata-only change (schema, partition spec, refs, properties,
/// expiry): `mutate` derives the new metadata from each base it is given, so a
/// conflicting commit is retried against the fresh table. Errors from `mutate`
/// are returned as they are (nothing committed).
Result<ProducedSnapshot> CommitMetadataChange(
    Catalog& catalog, const LoadedTable& base, const std::string& operation,
    const std::function<Result<TableMetadata>(const TableMetadata& base)>& mutate);

}  // namespace skade
