#include "skade/table/snapshot_producer.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <span>
#include <thread>

#include "skade/io/file_io.h"
#include "skade/table/delete_index.h"
#include "skade/table/manifest_io.h"

namespace skade {
namespace {

int64_t NewSnapshotId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  int64_t id = 0;
  while (id == 0) id = static_cast<int64_t>(rng() & 0x7fffffffffffffffULL);
  return id;
}

int64_t SummaryInt(const Snapshot* s, const char* key) {
  if (!s) return 0;
  auto it = s->summary.find(key);
  if (it == s->summary.end()) return 0;
  try {
    return std::stoll(it->second);
  } catch (...) {
    return 0;
  }
}

std::string AvroCodec(const TableMetadata& m) {
  std::string c = m.Property("write.avro.compression-codec", "deflate");
  if (c == "gzip") return "deflate";
  if (c == "zstd") return "zstandard";
  if (c == "uncompressed") return "null";
  return c;
}

Result<std::vector<TypePtr>> PartitionTypes(const PartitionSpec& spec, const Schema& schema) {
  SKADE_ASSIGN_OR_RETURN(TypePtr ptype, spec.PartitionType(schema));
  std::vector<TypePtr> out;
  for (const auto& f : ptype->fields) out.push_back(f.type);
  return out;
}

// Per-content totals for the summary.
struct Counts {
  int64_t data_files = 0, delete_files = 0, records = 0, size = 0, pos_deletes = 0, eq_deletes = 0;
  int64_t pos_delete_files = 0, eq_delete_files = 0, dvs = 0;
  void Add(const DataFile& f) {
    // A deletion vector's size is its blob's (Java's too): a Puffin file holds many.
    size += f.IsDeletionVector() ? *f.content_size_in_bytes : f.file_size_in_bytes;
    switch (f.content) {
      case FileContent::kData:
        ++data_files;
        records += f.record_count;
        break;
      case FileContent::kPositionDeletes:
        ++delete_files;
        ++(f.IsDeletionVector() ? dvs : pos_delete_files);  // Java counts vectors apart
        pos_deletes += f.record_count;
        break;
      case FileContent::kEqualityDeletes:
        ++delete_files;
        ++eq_delete_files;
        eq_deletes += f.record_count;
        break;
    }
  }
};

// Whether data files a snapshot added might hold rows matching `filter`.
Result<bool> AddedFilesMightMatch(FileIO& io, const TableMetadata& m, const Snapshot& s,
                                  const expr::Expr& filter) {
  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(s, io));
  for (const auto& mf : list) {
    if (mf.content != 0 || mf.added_snapshot_id != s.snapshot_id || mf.added_files_count == 0) continue;
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, *m.schema(), io));
    for (const auto& e : entries)
      if (e.status == EntryStatus::kAdded && e.snapshot_id == s.snapshot_id &&
          expr::MightMatch(filter, e.data_file.stats))
        return true;
  }
  return false;
}

// Paths of the data files a snapshot removed (the DELETED entries it wrote).
Result<std::set<std::string>> RemovedDataFiles(FileIO& io, const TableMetadata& m, const Snapshot& s) {
  std::set<std::string> out;
  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(s, io));
  for (const auto& mf : list) {
    if (mf.content != 0 || mf.added_snapshot_id != s.snapshot_id || mf.deleted_files_count == 0) continue;
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, *m.schema(), io));
    for (const auto& e : entries)
      if (e.status == EntryStatus::kDeleted && e.snapshot_id == s.snapshot_id) out.insert(e.data_file.file_path);
  }
  return out;
}

// The delete files a snapshot added.
Result<std::vector<DataFile>> AddedDeleteFiles(FileIO& io, const TableMetadata& m, const Snapshot& s) {
  std::vector<DataFile> out;
  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(s, io));
  for (const auto& mf : list) {
    if (mf.content != 1 || mf.added_snapshot_id != s.snapshot_id || mf.added_files_count == 0) continue;
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, *m.schema(), io));
    for (auto& e : entries)
      if (e.status == EntryStatus::kAdded && e.snapshot_id == s.snapshot_id) out.push_back(std::move(e.data_file));
  }
  return out;
}

// The snapshots of the branch committed after `read` (newest first), or nullopt when
// `read` is not an ancestor of `head` any more (e.g. after a rollback).
std::optional<std::vector<const Snapshot*>> SnapshotsSince(const TableMetadata& b, const Snapshot* head,
                                                           int64_t read) {
  std::vector<const Snapshot*> out;
  for (const Snapshot* s = head; s && s->snapshot_id != read;
       s = s->parent_snapshot_id ? b.SnapshotById(*s->parent_snapshot_id) : nullptr) {
    if (read != 0 && !s->parent_snapshot_id) return std::nullopt;
    out.push_back(s);
  }
  return out;
}

void Backoff(int attempt) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  int cap = std::min(1000, 5 << std::min(attempt, 8));
  std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(1, cap)(rng)));
}

}  // namespace

SnapshotProducer::SnapshotProducer(FileIO& io, FileChange change)
    : io_(io), change_(std::move(change)), snapshot_id_(NewSnapshotId()), commit_uuid_(NewUuid()) {}

Status SnapshotProducer::WriteAddedManifests(const TableMetadata& m) {
  // One manifest per (content kind, spec): a manifest holds data or deletes of one spec.
  std::map<std::pair<int, int>, std::vector<ManifestEntry>> groups;
  for (const auto& f : change_.added) {
    ManifestEntry e;
    e.status = EntryStatus::kAdded;
    e.snapshot_id = snapshot_id_;
    e.data_file = f;
    groups[{f.content == FileContent::kData ? 0 : 1, f.spec_id}].push_back(std::move(e));
  }
  int n = 0;
  for (auto& [key, entries] : groups) {
    const PartitionSpec* spec = m.SpecById(key.second);
    if (!spec) return Internal("files written for unknown partition spec " + std::to_string(key.second));
    const Schema& schema = m.SchemaForSpec(*spec, *m.schema());
    ManifestWriteContext ctx{&schema, spec, key.first, AvroCodec(m), std::max(m.format_version, 2)};
    SKADE_ASSIGN_OR_RETURN(std::string bytes, WriteManifest(ctx, entries));
    std::string path = m.location + "/metadata/" + commit_uuid_ + "-m" + std::to_string(n++) + ".avro";
    SKADE_RETURN_IF_ERROR(io_.WriteNewFile(path, bytes));
    SKADE_ASSIGN_OR_RETURN(auto ptypes, PartitionTypes(*spec, schema));
    ManifestFile mf;
    mf.manifest_path = path;
    mf.manifest_length = static_cast<int64_t>(bytes.size());
    mf.partition_spec_id = spec->spec_id();
    mf.content = key.first;
    mf.added_snapshot_id = snapshot_id_;
    mf.added_files_count = static_cast<int>(entries.size());
    for (const auto& e : entries) mf.added_rows_count += e.data_file.record_count;
    mf.partitions = SummarizePartitions(ptypes, entries);
    added_manifests_.push_back(std::move(mf));
  }
  return {};
}

Result<TableCommit> SnapshotProducer::Prepare(const LoadedTable& base, int attempt) {
  attempt_files_.clear();
  const TableMetadata& b = *base.metadata;
  const bool v3 = b.format_version >= 3;
  if (v3)
    for (const auto& f : change_.added)
      if (f.content == FileContent::kPositionDeletes && !f.IsDeletionVector())
        return Internal("a position delete file cannot be added to a format version 3 table (" +
                        LocalPath(f.file_path) + "); v3 takes deletion vectors");
  int64_t seq = b.last_sequence_number + 1;
  const Snapshot* parent = nullptr;
  if (auto it = b.refs.find(change_.branch); it != b.refs.end()) {
    parent = b.SnapshotById(it->second.snapshot_id);
    if (it->second.type != "branch")
      return InvalidArgument("'" + change_.branch + "' is a tag; only branches can be written to");
  } else if (change_.branch == "main") {
    parent = b.CurrentSnapshot();
  }

  auto conflict = [&](const std::string& why) {
    retryable_ = false;
    return MakeError(ErrorKind::kCommitConflict, why);
  };
  if (change_.validate_no_new_data_since) {
    int64_t read = *change_.validate_no_new_data_since;
    auto since = SnapshotsSince(b, parent, read);
    if (!since)
      return conflict("the branch of " + base.ident.ToString() + " was moved by a concurrent commit since this "
                      "change read the table");
    for (const Snapshot* s : *since) {
      bool added_data = SummaryInt(s, "added-data-files") != 0;
      if (added_data && change_.conflict_filter) {
        SKADE_ASSIGN_OR_RETURN(added_data, AddedFilesMightMatch(io_, b, *s, *change_.conflict_filter));
      }
      if (added_data)
        return conflict("rows were added to " + base.ident.ToString() + " by a concurrent commit (snapshot " +
                        std::to_string(s->snapshot_id) + ") since this change read the table");
      // Position deletes are only valid against the files they were computed from.
      if (!change_.validate_live.empty() && SummaryInt(s, "deleted-data-files") != 0) {
        SKADE_ASSIGN_OR_RETURN(auto gone, RemovedDataFiles(io_, b, *s));
        for (const auto& p : change_.validate_live)
          if (gone.contains(p))
            return conflict("data file " + LocalPath(p) + " of " + base.ident.ToString() +
                            " was removed by a concurrent commit (snapshot " + std::to_string(s->snapshot_id) +
                            ") since this change read it");
      }
      // A data file has one deletion vector at most: one added since the read for a file
      // this change writes a vector for would make two.
      if (!change_.validate_live.empty() && SummaryInt(s, "added-dvs") != 0) {
        SKADE_ASSIGN_OR_RETURN(auto deletes, AddedDeleteFiles(io_, b, *s));
        for (const auto& d : deletes)
          if (d.IsDeletionVector() && change_.validate_live.contains(*d.referenced_data_file))
            return conflict("rows of data file " + LocalPath(*d.referenced_data_file) + " of " +
                            base.ident.ToString() + " were deleted by a concurrent commit (snapshot " +
                            std::to_string(s->snapshot_id) + ") since this change read it");
      }
    }
  }
  std::vector<ManifestFile> list = added_manifests_;
  for (auto& mf : list) {
    mf.sequence_number = seq;
    mf.min_sequence_number = seq;
  }
  Counts added, removed;
  for (const auto& f : change_.added) added.Add(f);
  std::set<std::string> changed_partitions;
  for (const auto& f : change_.added) changed_partitions.insert(PartitionTupleKey(f.spec_id, f.partition));

  if (parent) {
    SKADE_ASSIGN_OR_RETURN(auto old, LoadManifestList(*parent, io_));
    std::set<std::string> found;
    std::set<std::string> removed_data_partitions;
    // Entries of the manifests this change rewrites, by (content, spec): written as one
    // manifest each instead of one per input, since every manifest costs a synced file.
    std::map<std::pair<int, int>, std::vector<ManifestEntry>> rewrites;
    for (const auto& mf : old) {
      // A snapshot built on a missing manifest would commit a table nobody can read.
      SKADE_ASSIGN_OR_RETURN(bool present, io_.Exists(mf.manifest_path));
      if (!present) {
        retryable_ = false;
        return Corrupt("manifest " + LocalPath(mf.manifest_path) + " of the current snapshot is missing; "
                       "the table cannot be read or written until it is restored (or rolled back)");
      }
      bool may_hold = !change_.removed.empty() && (mf.added_files_count + mf.existing_files_count > 0);
      if (!may_hold && !change_.merge_manifests) {
        list.push_back(mf);
        continue;
      }
      SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, b, *b.schema(), io_));
      bool touched = change_.merge_manifests;
      for (const auto& e : entries)
        if (e.status != EntryStatus::kDeleted && change_.removed.contains(e.data_file.EntryKey())) touched = true;
      if (!touched) {
        list.push_back(mf);
        continue;
      }
      // Removed files become DELETED, the rest EXISTING; old DELETED entries go.
      auto& out = rewrites[{mf.content, mf.partition_spec_id}];
      for (auto e : entries) {
        if (e.status == EntryStatus::kDeleted) continue;
        if (change_.removed.contains(e.data_file.EntryKey())) {
          found.insert(e.data_file.EntryKey());
          removed.Add(e.data_file);
          changed_partitions.insert(PartitionTupleKey(e.data_file.spec_id, e.data_file.partition));
          if (mf.content == 0)
            removed_data_partitions.insert(PartitionTupleKey(e.data_file.spec_id, e.data_file.partition));
          e.status = EntryStatus::kDeleted;
          e.snapshot_id = snapshot_id_;
        } else {
          e.status = EntryStatus::kExisting;
        }
        out.push_back(std::move(e));
      }
    }
    // Publishes one encoded slice of a group as a manifest of this snapshot.
    int rewritten = 0;
    auto write_rewrite = [&](int content, const PartitionSpec& spec, std::span<const ManifestEntry> entries,
                             std::string bytes) -> Status {
      ManifestFile nm;
      nm.manifest_path = b.location + "/metadata/" + commit_uuid_ + "-r" + std::to_string(attempt) + "-" +
                         std::to_string(rewritten++) + ".avro";
      nm.manifest_length = static_cast<int64_t>(bytes.size());
      nm.partition_spec_id = spec.spec_id();
      nm.content = content;
      nm.added_snapshot_id = snapshot_id_;
      nm.sequence_number = seq;
      nm.min_sequence_number = seq;
      std::vector<ManifestEntry> live;
      for (const auto& e : entries) {
        if (e.status == EntryStatus::kDeleted) {
          ++nm.deleted_files_count;
          nm.deleted_rows_count += e.data_file.record_count;
          continue;
        }
        ++nm.existing_files_count;
        nm.existing_rows_count += e.data_file.record_count;
        nm.min_sequence_number = std::min(nm.min_sequence_number, e.sequence_number.value_or(0));
        live.push_back(e);
      }
      SKADE_ASSIGN_OR_RETURN(auto ptypes, PartitionTypes(spec, b.SchemaForSpec(spec, *b.schema())));
      nm.partitions = SummarizePartitions(ptypes, live);
      SKADE_RETURN_IF_ERROR(io_.WriteNewFile(nm.manifest_path, bytes));
      attempt_files_.push_back(nm.manifest_path);
      list.push_back(std::move(nm));
      return {};
    };
    // A target below one byte reads as one byte: one manifest per file.
    const int64_t target =
        std::max<int64_t>(1, b.PropertyInt("commit.manifest.target-size-bytes", int64_t{8} << 20));
    for (auto& [key, entries] : rewrites) {
      if (entries.empty()) continue;
      const PartitionSpec* spec = b.SpecById(key.second);
      ManifestWriteContext ctx{&b.SchemaForSpec(*spec, *b.schema()), spec, key.first, AvroCodec(b),
                               std::max(b.format_version, 2)};
      SKADE_ASSIGN_OR_RETURN(std::string whole, WriteManifest(ctx, entries));
      // One manifest per group unless it outgrows the target: then even slices of it.
      size_t parts = std::min(
          entries.size(), static_cast<size_t>((static_cast<int64_t>(whole.size()) + target - 1) / target));
      if (parts <= 1) {
        SKADE_RETURN_IF_ERROR(write_rewrite(key.first, *spec, entries, std::move(whole)));
        continue;
      }
      for (size_t i = 0; i < parts; ++i) {
        std::span<const ManifestEntry> slice(entries.data() + entries.size() * i / parts,
                                             entries.data() + entries.size() * (i + 1) / parts);
        SKADE_ASSIGN_OR_RETURN(std::string bytes,
                               WriteManifest(ctx, std::vector<ManifestEntry>(slice.begin(), slice.end())));
        SKADE_RETURN_IF_ERROR(write_rewrite(key.first, *spec, slice, std::move(bytes)));
      }
    }
    if (found.size() != change_.removed.size()) {
      retryable_ = false;
      for (const auto& p : change_.removed)
        if (!found.contains(p))
          return MakeError(ErrorKind::kCommitConflict,
                           "file " + LocalPath(p) + " was removed by a concurrent commit; redo the operation");
    }
    if (change_.validate_no_new_deletes_since && !removed_data_partitions.empty()) {
      // A rewrite folded in the deletes it read; rows deleted since would come back.
      auto since = SnapshotsSince(b, parent, *change_.validate_no_new_deletes_since);
      if (!since)
        return conflict("the branch of " + base.ident.ToString() + " was moved by a concurrent commit since "
                        "this rewrite read it");
      for (const Snapshot* s : *since) {
        if (SummaryInt(s, "added-delete-files") == 0) continue;
        SKADE_ASSIGN_OR_RETURN(auto deletes, AddedDeleteFiles(io_, b, *s));
        for (const auto& d : deletes) {
          bool applies = d.partition.empty() ||
                         removed_data_partitions.contains(PartitionTupleKey(d.spec_id, d.partition));
          if (applies)
            return conflict("rows of files this rewrite of " + base.ident.ToString() +
                            " replaces were deleted by a concurrent commit (snapshot " +
                            std::to_string(s->snapshot_id) + "); redo it");
        }
      }
    }
  } else if (!change_.removed.empty()) {
    retryable_ = false;
    return MakeError(ErrorKind::kCommitConflict, "the table has no snapshot to remove files from");
  }

  std::string list_path = b.location + "/metadata/snap-" + std::to_string(snapshot_id_) + "-" +
                          std::to_string(attempt) + "-" + commit_uuid_ + ".avro";
  std::optional<int64_t> parent_id;
  if (parent) parent_id = parent->snapshot_id;
  // Format v3 row lineage: each data manifest without a first row id gets the next free
  // one, moved on by every row it may hand ids to (added or existing); the snapshot's
  // ids start at the table's next-row-id.
  std::optional<int64_t> first_row_id;
  int64_t next_row_id = b.next_row_id.value_or(0);
  if (v3) {
    first_row_id = next_row_id;
    for (auto& mf : list)
      if (mf.content == 0 && !mf.first_row_id) {
        mf.first_row_id = next_row_id;
        next_row_id += mf.added_rows_count + mf.existing_rows_count;
      }
  }
  SKADE_ASSIGN_OR_RETURN(std::string list_bytes, WriteManifestList(snapshot_id_, parent_id, seq, list, AvroCodec(b),
                                                                   std::max(b.format_version, 2), first_row_id));
  SKADE_RETURN_IF_ERROR(io_.WriteNewFile(list_path, list_bytes));
  attempt_files_.push_back(list_path);

  auto m = std::make_shared<TableMetadata>(b);
  int64_t now = std::max(NowMs(), b.last_updated_ms);
  Snapshot s;
  s.snapshot_id = snapshot_id_;
  s.parent_snapshot_id = parent_id;
  s.sequence_number = seq;
  s.timestamp_ms = now;
  s.manifest_list = list_path;
  s.schema_id = b.current_schema_id;
  if (v3) {
    s.first_row_id = first_row_id;
    s.added_rows = next_row_id - *first_row_id;
  }
  s.summary = change_.properties;
  s.summary["operation"] = change_.operation;
  auto put = [&](const char* k, int64_t v) {
    if (v) s.summary[k] = std::to_string(v);
  };
  put("added-data-files", added.data_files);
  put("deleted-data-files", removed.data_files);
  put("added-delete-files", added.delete_files);
  put("removed-delete-files", removed.delete_files);
  put("added-position-delete-files", added.pos_delete_files);
  put("removed-position-delete-files", removed.pos_delete_files);
  put("added-equality-delete-files", added.eq_delete_files);
  put("removed-equality-delete-files", removed.eq_delete_files);
  put("added-dvs", added.dvs);
  put("removed-dvs", removed.dvs);
  put("added-records", added.records);
  put("deleted-records", removed.records);
  put("added-files-size", added.size);
  put("removed-files-size", removed.size);
  put("added-position-deletes", added.pos_deletes);
  put("removed-position-deletes", removed.pos_deletes);
  put("added-equality-deletes", added.eq_deletes);
  put("removed-equality-deletes", removed.eq_deletes);
  s.summary["changed-partition-count"] = std::to_string(changed_partitions.size());
  auto total = [&](const char* k, int64_t plus, int64_t minus) {
    s.summary[k] = std::to_string(SummaryInt(parent, k) + plus - minus);
  };
  total("total-records", added.records, removed.records);
  total("total-files-size", added.size, removed.size);
  total("total-data-files", added.data_files, removed.data_files);
  total("total-delete-files", added.delete_files, removed.delete_files);
  total("total-position-deletes", added.pos_deletes, removed.pos_deletes);
  total("total-equality-deletes", added.eq_deletes, removed.eq_deletes);
  s.summary["engine-name"] = "skade";
  m->snapshots.push_back(s);
  m->last_sequence_number = seq;
  if (v3) m->next_row_id = next_row_id;
  m->last_updated_ms = now;
  m->refs[change_.branch] = SnapshotRef{s.snapshot_id, "branch", {}, {}, {}};
  if (auto it = b.refs.find(change_.branch); it != b.refs.end()) {
    m->refs[change_.branch].min_snapshots_to_keep = it->second.min_snapshots_to_keep;
    m->refs[change_.branch].max_snapshot_age_ms = it->second.max_snapshot_age_ms;
    m->refs[change_.branch].max_ref_age_ms = it->second.max_ref_age_ms;
  }
  if (change_.branch == "main") {
    m->current_snapshot_id = s.snapshot_id;
    m->snapshot_log.push_back({now, s.snapshot_id});
  }
  RecordPreviousMetadata(*m, b, base.metadata_location);

  std::string location = NextMetadataLocation(b.location, base.metadata_location);
  SKADE_RETURN_IF_ERROR(io_.WriteNewFile(location, TableMetadataToJson(*m)));
  attempt_files_.push_back(location);
  prepared_ = m;
  return TableCommit{base.ident, base.metadata_location, location, s.snapshot_id, change_.operation,
                     change_.provenance, ""};
}

void DiscardFiles(FileIO& io, const std::vector<DataFile>& files) {
  for (const auto& f : files) (void)io.DeleteFile(f.file_path);
}

void SnapshotProducer::Abandon() {
  for (const auto& f : attempt_files_) (void)io_.DeleteFile(f);
  attempt_files_.clear();
  for (const auto& mf : added_manifests_) (void)io_.DeleteFile(mf.manifest_path);
  added_manifests_.clear();
  DiscardFiles(io_, change_.added);
}

namespace {

Result<std::vector<ProducedSnapshot>> CommitWith(Catalog& catalog, std::vector<std::unique_ptr<SnapshotProducer>>& producers,
                                                 std::vector<std::pair<LoadedTable, FileChange>> changes) {
  std::vector<LoadedTable> bases;
  // Every change has its producer before any writes, so a failure abandons them all.
  for (auto& [base, change] : changes) {
    producers.push_back(std::make_unique<SnapshotProducer>(catalog.io(), std::move(change)));
    bases.push_back(base);
  }
  for (size_t i = 0; i < producers.size(); ++i)
    SKADE_RETURN_IF_ERROR(producers[i]->WriteAddedManifests(*bases[i].metadata));
  int max_attempts = static_cast<int>(
      std::max<int64_t>(1, bases[0].metadata->PropertyInt("commit.retry.num-retries", 30) + 1));
  for (int attempt = 1;; ++attempt) {
    std::vector<TableCommit> commits;
    for (size_t i = 0; i < producers.size(); ++i) {
      SKADE_ASSIGN_OR_RETURN(auto c, producers[i]->Prepare(bases[i], attempt));
      commits.push_back(std::move(c));
    }
    auto seqs = catalog.Commit(commits);
    if (seqs) {
      std::vector<ProducedSnapshot> out;
      for (size_t i = 0; i < producers.size(); ++i)
        out.push_back(ProducedSnapshot{producers[i]->snapshot_id(), (*seqs)[i], attempt,
                                       LoadedTable{bases[i].ident, commits[i].new_location,
                                                   producers[i]->prepared_metadata()}});
      return out;
    }
    if (seqs.error().kind != ErrorKind::kCommitConflict) return std::unexpected(seqs.error());
    if (attempt >= max_attempts)
      return MakeError(ErrorKind::kCommitConflict,
                       seqs.error().message + " (gave up after " + std::to_string(attempt) + " attempts)");
    // Lost the race: this attempt's files are unreferenced; reload and try again.
    for (auto& p : producers)
      for (const auto& f : p->attempt_files()) (void)catalog.io().DeleteFile(f);
    Backoff(attempt);
    for (auto& b : bases) {
      SKADE_ASSIGN_OR_RETURN(b, catalog.LoadTable(b.ident));
    }
  }
}

}  // namespace

Result<std::vector<ProducedSnapshot>> CommitChanges(Catalog& catalog,
                                                    std::vector<std::pair<LoadedTable, FileChange>> changes) {
  if (changes.empty()) return InvalidArgument("nothing to commit");
  std::vector<std::unique_ptr<SnapshotProducer>> producers;
  auto produced = CommitWith(catalog, producers, std::move(changes));
  // A change that did not land leaves none of its files behind (added data and delete
  // files, manifests, metadata); one whose outcome is unknown keeps them all (the
  // catalog may point at them).
  if (!produced && produced.error().kind != ErrorKind::kCommitStateUnknown)
    for (auto& p : producers) p->Abandon();
  return produced;
}

}  // namespace skade

namespace skade {

void RecordPreviousMetadata(TableMetadata& next, const TableMetadata& base, const std::string& base_location) {
  next.metadata_log.push_back({base.last_updated_ms, base_location});
  size_t keep = static_cast<size_t>(std::max<int64_t>(1, next.PropertyInt("write.metadata.previous-versions-max", 100)));
  if (next.metadata_log.size() > keep)
    next.metadata_log.erase(next.metadata_log.begin(), next.metadata_log.end() - static_cast<long>(keep));
}

Result<ProducedSnapshot> CommitMetadataChange(
    Catalog& catalog, const LoadedTable& start, const std::string& operation,
    const std::function<Result<TableMetadata>(const TableMetadata& base)>& mutate) {
  LoadedTable base = start;
  int max_attempts = static_cast<int>(std::max<int64_t>(1, base.metadata->PropertyInt("commit.retry.num-retries", 30) + 1));
  for (int attempt = 1;; ++attempt) {
    SKADE_ASSIGN_OR_RETURN(TableMetadata next, mutate(*base.metadata));
    next.last_updated_ms = std::max(NowMs(), base.metadata->last_updated_ms);
    RecordPreviousMetadata(next, *base.metadata, base.metadata_location);
    std::string location = NextMetadataLocation(next.location, base.metadata_location);
    SKADE_RETURN_IF_ERROR(catalog.io().WriteNewFile(location, TableMetadataToJson(next)));
    auto seqs = catalog.Commit({TableCommit{base.ident, base.metadata_location, location, next.current_snapshot_id,
                                            operation, {}, ""}});
    if (seqs) {
      auto m = std::make_shared<TableMetadata>(std::move(next));
      return ProducedSnapshot{m->current_snapshot_id.value_or(0), (*seqs)[0], attempt, LoadedTable{base.ident, location, m}};
    }
    if (seqs.error().kind != ErrorKind::kCommitConflict) return std::unexpected(seqs.error());
    (void)catalog.io().DeleteFile(location);
    if (attempt >= max_attempts)
      return MakeError(ErrorKind::kCommitConflict,
                       seqs.error().message + " (gave up after " + std::to_string(attempt) + " attempts)");
    Backoff(attempt);
    SKADE_ASSIGN_OR_RETURN(base, catalog.LoadTable(base.ident));
  }
}

}  // namespace skade
