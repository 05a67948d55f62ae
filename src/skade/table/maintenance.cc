// Table maintenance: expire snapshots, remove orphan files, compact data files,
// rewrite manifests. Files are deleted only after the commit that stops
// referencing them is durable.
#include <arrow/api.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_set>

#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/data_writer.h"
#include "skade/table/delete_index.h"
#include "skade/table/manifest_io.h"
#include "skade/table/scan.h"
#include "skade/table/snapshot_producer.h"
#include "skade/table/table.h"

namespace skade {
namespace {

// Every file a snapshot references: its manifest list, manifests, and the data and
// delete files those list (live or not).
struct SnapshotFiles {
  std::set<std::string> manifest_lists, manifests, content_files;
};

Status CollectFiles(const TableMetadata& m, const Snapshot& s, FileIO& io, bool live_only, SnapshotFiles* out) {
  out->manifest_lists.insert(LocalPath(s.manifest_list));
  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(s, io));
  for (const auto& mf : list) {
    out->manifests.insert(LocalPath(mf.manifest_path));
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, *m.schema(), io));
    for (const auto& e : entries)
      if (!live_only || e.status != EntryStatus::kDeleted) out->content_files.insert(LocalPath(e.data_file.file_path));
  }
  return {};
}

}  // namespace

Result<ExpireResult> Table::ExpireSnapshots(std::optional<int64_t> older_than_ms, std::optional<int64_t> retain_last) {
  if (retain_last && *retain_last < 1) return InvalidArgument("--retain-last must be at least 1");
  int64_t cutoff = older_than_ms ? *older_than_ms
                   : retain_last ? std::numeric_limits<int64_t>::max()
                                 : NowMs() - 5LL * 24 * 3600 * 1000;
  int64_t keep_last = retain_last.value_or(1);
  std::vector<int64_t> expired;
  auto mutate = [&](const TableMetadata& base) -> Result<TableMetadata> {
    std::set<int64_t> keep;
    for (const auto& [name, ref] : base.refs) {
      keep.insert(ref.snapshot_id);
      if (ref.type != "branch") continue;
      auto chain = base.Ancestors(ref.snapshot_id);
      int64_t min_keep = ref.min_snapshots_to_keep ? int64_t{*ref.min_snapshots_to_keep} : keep_last;
      for (size_t i = 0; i < chain.size(); ++i)
        if (static_cast<int64_t>(i) < std::max(min_keep, keep_last) || chain[i]->timestamp_ms >= cutoff)
          keep.insert(chain[i]->snapshot_id);
    }
    // Snapshots on no branch (e.g. after a rollback) go once they are old enough.
    for (const auto& s : base.snapshots)
      if (s.timestamp_ms >= cutoff) keep.insert(s.snapshot_id);
    TableMetadata next = base;
    next.snapshots.clear();
    expired.clear();
    for (const auto& s : base.snapshots) {
      if (keep.contains(s.snapshot_id)) next.snapshots.push_back(s);
      else expired.push_back(s.snapshot_id);
    }
    std::erase_if(next.snapshot_log, [&](const SnapshotLogEntry& e) { return !keep.contains(e.snapshot_id); });
    return next;
  };
  // Work out the files first against the current metadata; re-checked after commit.
  TableMetadataPtr before = loaded_.metadata;
  SKADE_ASSIGN_OR_RETURN(auto commit, CommitMetadata("expire", mutate));
  ExpireResult out;
  out.expired_snapshots = expired;
  out.commit = commit;
  if (expired.empty()) return out;
  // Files reachable from the expired snapshots but from no retained one.
  SnapshotFiles gone, kept;
  const TableMetadata& now = *loaded_.metadata;
  for (int64_t id : expired)
    if (const Snapshot* s = before->SnapshotById(id)) SKADE_RETURN_IF_ERROR(CollectFiles(*before, *s, catalog_->io(), false, &gone));
  for (const auto& s : now.snapshots) SKADE_RETURN_IF_ERROR(CollectFiles(now, s, catalog_->io(), true, &kept));
  auto drop = [&](const std::set<std::string>& a, const std::set<std::string>& b) {
    for (const auto& f : a)
      if (!b.contains(f) && catalog_->io().DeleteFile(f)) out.deleted_files.push_back(f);
  };
  drop(gone.content_files, kept.content_files);
  drop(gone.manifests, kept.manifests);
  drop(gone.manifest_lists, kept.manifest_lists);
  return out;
}

namespace {

// Files under `location` (older than the cutoff) that no table of the catalog uses:
// nothing any table references, nothing in another table's folder, not the catalog.
// `self` (if any) is the table whose folder `location` is.
Result<std::vector<std::string>> UnusedFilesUnder(Catalog& catalog, const std::string& location,
                                                  const std::optional<TableIdent>& self, int64_t older_than_ms) {
  SnapshotFiles referenced;
  std::set<std::string> metadata_files;
  std::vector<std::string> other_folders;
  SKADE_ASSIGN_OR_RETURN(auto folders, catalog.TableFolders());
  for (const auto& [ident, folder] : folders) {
    if (!self || ident != *self)
      if (IsInside(folder, location)) other_folders.push_back(folder);
    auto t = catalog.LoadTable(ident);
    if (!t) return std::unexpected(t.error().WithContext("cannot tell which files table " + ident.ToString() + " uses"));
    for (const auto& s : t->metadata->snapshots)
      SKADE_RETURN_IF_ERROR(CollectFiles(*t->metadata, s, catalog.io(), false, &referenced));
    metadata_files.insert(LocalPath(t->metadata_location));
    for (const auto& e : t->metadata->metadata_log) metadata_files.insert(LocalPath(e.metadata_file));
  }
  SKADE_ASSIGN_OR_RETURN(auto files, catalog.io().ListFiles(location));
  std::vector<std::string> out;
  for (const auto& f : files) {
    if (referenced.content_files.contains(f.path) || referenced.manifests.contains(f.path) ||
        referenced.manifest_lists.contains(f.path) || metadata_files.contains(f.path) ||
        catalog.IsCatalogFile(f.path))
      continue;
    if (std::any_of(other_folders.begin(), other_folders.end(),
                    [&](const std::string& folder) { return IsInside(f.path, folder); }))
      continue;
    // Older metadata files trimmed from the log belong to the table's history only.
    if (f.mtime_ms >= older_than_ms) continue;
    out.push_back(f.path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status DeleteUnder(Catalog& catalog, const std::vector<std::string>& files, const std::string& location) {
  for (const auto& f : files) {
    SKADE_RETURN_IF_ERROR(CheckInside(f, location));
    SKADE_RETURN_IF_ERROR(catalog.io().DeleteFile(f));
  }
  return {};
}

// Reads a scan on its own thread, a few batches ahead of the caller, so decoding (and
// applying the deletes to) the next batches overlaps encoding this one. Its own thread,
// not a pool task: the scan waits on the shared pool's tasks.
class ReadAhead {
 public:
  explicit ReadAhead(std::shared_ptr<arrow::RecordBatchReader> reader)
      : reader_(std::move(reader)), thread_([this] { Run(); }) {}
  ~ReadAhead() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  /// The next batch (null after the last one), or the scan's error.
  arrow::Status Next(std::shared_ptr<arrow::RecordBatch>* out) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !queue_.empty() || done_; });
    *out = nullptr;
    if (queue_.empty()) return status_;
    *out = std::move(queue_.front());
    queue_.pop_front();
    cv_.notify_all();
    return arrow::Status::OK();
  }

 private:
  static constexpr size_t kAhead = 4;  // batches (each at most a few MiB decoded)
  void Run() {
    while (true) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || queue_.size() < kAhead; });
        if (stop_) break;
      }
      std::shared_ptr<arrow::RecordBatch> batch;
      auto st = reader_->ReadNext(&batch);
      std::lock_guard lock(mu_);
      if (!st.ok() || !batch) {
        status_ = st;
        break;
      }
      queue_.push_back(std::move(batch));
      cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_all();
  }

  std::shared_ptr<arrow::RecordBatchReader> reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<arrow::RecordBatch>> queue_;
  arrow::Status status_;
  bool stop_ = false, done_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace

Result<std::vector<std::string>> Table::OrphanFiles(int64_t older_than_ms, bool remove) {
  SKADE_RETURN_IF_ERROR(Refresh());
  const std::string& location = loaded_.metadata->location;
  SKADE_ASSIGN_OR_RETURN(auto orphans, UnusedFilesUnder(*catalog_, location, loaded_.ident, older_than_ms));
  if (remove) SKADE_RETURN_IF_ERROR(DeleteUnder(*catalog_, orphans, location));
  return orphans;
}

Result<size_t> PurgeDroppedTable(Catalog& catalog, const std::string& location) {
  SKADE_ASSIGN_OR_RETURN(auto files,
                         UnusedFilesUnder(catalog, location, std::nullopt, std::numeric_limits<int64_t>::max()));
  SKADE_RETURN_IF_ERROR(DeleteUnder(catalog, files, location));
  return files.size();
}

Result<CommitResult> Table::Compact(std::optional<int64_t> target_file_size, const std::optional<std::string>& where) {
  // A rewrite that lost a race with a commit deleting rows of its files is redone.
  for (int attempt = 1;; ++attempt) {
    auto r = CompactOnce(target_file_size, where);
    if (r || r.error().kind != ErrorKind::kCommitConflict || attempt >= 5) return r;
  }
}

Result<CommitResult> Table::CompactOnce(std::optional<int64_t> target_file_size,
                                        const std::optional<std::string>& where) {
  SKADE_RETURN_IF_ERROR(Refresh());
  TableMetadataPtr m = loaded_.metadata;
  int64_t target = target_file_size.value_or(m->PropertyInt("write.target-file-size-bytes", 512LL << 20));
  if (target <= 0) return InvalidArgument("target file size must be positive");
  SKADE_ASSIGN_OR_RETURN(ScanPlan all, NewScan().Plan());
  // With `where`, the files a scan of it plans (the same snapshot) are the candidates.
  std::set<std::string> matching;
  if (where) {
    SKADE_ASSIGN_OR_RETURN(ScanPlan filtered, NewScan().Filter(*where).Plan());
    for (const auto& t : filtered.tasks) matching.insert(t.file.file_path);
  }
  // Group the live files per partition; compact a group when it has several small
  // files or any file with deletes to fold in.
  std::map<std::string, std::vector<FileScanTask>> groups;
  for (const auto& t : all.tasks)
    if (!where || matching.contains(t.file.file_path))
      groups[PartitionTupleKey(t.file.spec_id, t.file.partition)].push_back(t);
  std::vector<FileScanTask> chosen;
  for (auto& [key, tasks] : groups) {
    std::vector<FileScanTask> pick;
    for (const auto& t : tasks)
      if (t.file.file_size_in_bytes < target * 3 / 4 || !t.deletes.empty()) pick.push_back(t);
    bool has_deletes = std::any_of(pick.begin(), pick.end(), [](const FileScanTask& t) { return !t.deletes.empty(); });
    if (pick.size() < 2 && !has_deletes) continue;
    chosen.insert(chosen.end(), pick.begin(), pick.end());
  }
  FileChange change;
  change.operation = "replace";
  std::set<std::string> still_applied;  // delete files that apply to a file left as it is
  for (const auto& t : chosen) change.removed.insert(t.file.file_path);
  for (const auto& t : all.tasks)
    if (!change.removed.contains(t.file.file_path))
      for (const auto& d : t.deletes) still_applied.insert(d.file->EntryKey());
  // Every other delete file is folded in (or applies to nothing live): it goes too, so a
  // compacted table has no equality deletes left for readers that refuse them.
  for (const auto& d : all.delete_files)
    if (!still_applied.contains(d.EntryKey())) change.removed.insert(d.EntryKey());
  change.validate_no_new_deletes_since = all.snapshot ? all.snapshot->snapshot_id : 0;
  if (chosen.empty()) return CommitFileChange(std::move(change), 0, 0);
  TableMetadata sized = *m;
  sized.properties["write.target-file-size-bytes"] = std::to_string(target);
  // A v3 table's rows keep their ids and sequence numbers through the rewrite.
  const bool lineage = m->format_version >= 3;
  SKADE_ASSIGN_OR_RETURN(auto writer, DataWriter::Make(sized, lineage));
  ScanPlan plan = all;
  plan.tasks = chosen;
  plan.filter = nullptr;
  plan.projected_ids.clear();
  for (const auto& f : plan.schema->fields()) plan.projected_ids.push_back(f.id);
  if (lineage) ReadRowLineage(plan);
  plan.stats = std::make_shared<ScanStats>();
  plan.pool = DataWriter::pool();
  SKADE_ASSIGN_OR_RETURN(auto scan, TableScan::Read(std::move(plan), &catalog_->io()));
  ReadAhead reader(std::move(scan));
  int64_t rows = 0;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto st = reader.Next(&batch);
    if (!st.ok()) {
      writer->Abort();
      return std::unexpected(ErrorFromReader(st));
    }
    if (!batch) break;
    rows += batch->num_rows();
    if (auto w = writer->Write(batch); !w) {
      writer->Abort();
      return std::unexpected(w.error());
    }
  }
  SKADE_ASSIGN_OR_RETURN(change.added, writer->Finish());
  change.properties["compacted-records"] = std::to_string(rows);
  return CommitFileChange(std::move(change), rows, 0);
}

Result<CommitResult> Table::RewriteManifests() {
  FileChange change;
  change.operation = "replace";
  change.merge_manifests = true;
  if (!loaded_.metadata->CurrentSnapshot()) return CommitResult{0, 0, 0, {}, 0, 0, false};
  std::vector<std::pair<LoadedTable, FileChange>> changes;
  changes.emplace_back(loaded_, std::move(change));
  SKADE_ASSIGN_OR_RETURN(auto produced, CommitChanges(*catalog_, std::move(changes)));
  loaded_ = produced[0].table;
  return CommitResult{produced[0].snapshot_id, produced[0].commit_seq, produced[0].attempts, {}, 0, 0, true};
}

}  // namespace skade
