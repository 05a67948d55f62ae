#include "skade/table/table.h"

#include <arrow/api.h>

#include <chrono>
#include <set>
#include <random>
#include <thread>

#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/data_writer.h"
#include "skade/table/scan.h"

namespace skade {
namespace {

int64_t NewSnapshotId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  int64_t id = 0;
  while (id == 0) id = static_cast<int64_t>(rng() & 0x7fffffffffffffffULL);
  return id;
}

// A text key for a value, for counting distinct partitions.
std::string ValueKey(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "null";
        else if constexpr (std::is_same_v<T, std::string>) return "s" + x;
        else if constexpr (std::is_same_v<T, Decimal>)
          return "d" + std::to_string(static_cast<int64_t>(x.unscaled >> 64)) + ":" +
                 std::to_string(static_cast<uint64_t>(x.unscaled));
        else return "n" + std::to_string(x);
      },
      v);
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

// One table's share of a commit attempt: new metadata written, ready to swap.
struct PreparedCommit {
  TableCommit commit;
  std::vector<std::string> written;  // metadata + manifest list, deleted if the swap loses
  TableMetadataPtr metadata;
};

// Manifests of an append, written once and reused across attempts.
struct AppendManifests {
  std::vector<ManifestFile> manifests;  // sequence numbers filled per attempt
  int64_t snapshot_id = 0;
  int64_t added_records = 0, added_size = 0, added_files = 0;
  size_t changed_partitions = 0;
};

Result<AppendManifests> WriteAppendManifests(const TableMetadata& m, FileIO& io,
                                             const std::vector<DataFile>& files) {
  AppendManifests out;
  out.snapshot_id = NewSnapshotId();
  std::map<int, std::vector<ManifestEntry>> by_spec;
  std::set<std::string> partitions;
  for (const auto& f : files) {
    ManifestEntry e;
    e.status = EntryStatus::kAdded;
    e.snapshot_id = out.snapshot_id;
    e.data_file = f;
    by_spec[f.spec_id].push_back(std::move(e));
    out.added_records += f.record_count;
    out.added_size += f.file_size_in_bytes;
    ++out.added_files;
    std::string key;
    for (const auto& v : f.partition) key += ValueKey(v) + '\x1f';
    partitions.insert(key);
  }
  out.changed_partitions = partitions.size();
  std::string commit_uuid = NewUuid();
  int n = 0;
  for (auto& [spec_id, entries] : by_spec) {
    const PartitionSpec* spec = m.SpecById(spec_id);
    if (!spec) return Internal("data files written for unknown spec " + std::to_string(spec_id));
    ManifestWriteContext ctx{m.schema().get(), spec, 0,
                             m.Property("write.avro.compression-codec", "deflate") == "gzip"
                                 ? "deflate"
                                 : m.Property("write.avro.compression-codec", "deflate")};
    SKADE_ASSIGN_OR_RETURN(std::string bytes, WriteManifest(ctx, entries));
    std::string path = m.location + "/metadata/" + commit_uuid + "-m" + std::to_string(n++) + ".avro";
    SKADE_RETURN_IF_ERROR(io.WriteNewFile(path, bytes));
    SKADE_ASSIGN_OR_RETURN(TypePtr ptype, spec->PartitionType(*m.schema()));
    std::vector<TypePtr> ptypes;
    for (const auto& f : ptype->fields) ptypes.push_back(f.type);
    ManifestFile mf;
    mf.manifest_path = path;
    mf.manifest_length = static_cast<int64_t>(bytes.size());
    mf.partition_spec_id = spec_id;
    mf.content = 0;
    mf.added_snapshot_id = out.snapshot_id;
    mf.added_files_count = static_cast<int>(entries.size());
    for (const auto& e : entries) mf.added_rows_count += e.data_file.record_count;
    mf.partitions = SummarizePartitions(ptypes, entries);
    out.manifests.push_back(std::move(mf));
  }
  return out;
}

// Builds the next metadata of `base` with an append snapshot; writes the manifest
// list and the metadata file.
Result<PreparedCommit> PrepareAppend(const LoadedTable& base, FileIO& io, const AppendManifests& am,
                                     const std::map<std::string, std::string>& props, int attempt) {
  const TableMetadata& b = *base.metadata;
  auto m = std::make_shared<TableMetadata>(b);
  int64_t seq = b.last_sequence_number + 1;
  const Snapshot* parent = b.CurrentSnapshot();
  std::vector<ManifestFile> list = am.manifests;
  for (auto& mf : list) {
    mf.sequence_number = seq;
    mf.min_sequence_number = seq;
  }
  if (parent) {
    SKADE_ASSIGN_OR_RETURN(std::string bytes, io.ReadFile(parent->manifest_list));
    auto old = ReadManifestList(bytes);
    if (!old) return std::unexpected(std::move(old).error().WithContext(LocalPath(parent->manifest_list)));
    list.insert(list.end(), old->begin(), old->end());
  }
  std::string list_path = b.location + "/metadata/snap-" + std::to_string(am.snapshot_id) + "-" +
                          std::to_string(attempt) + "-" + NewUuid() + ".avro";
  SKADE_ASSIGN_OR_RETURN(std::string list_bytes,
                         WriteManifestList(am.snapshot_id, b.current_snapshot_id, seq, list));
  SKADE_RETURN_IF_ERROR(io.WriteNewFile(list_path, list_bytes));

  int64_t now = NowMs();
  Snapshot s;
  s.snapshot_id = am.snapshot_id;
  s.parent_snapshot_id = b.current_snapshot_id;
  s.sequence_number = seq;
  s.timestamp_ms = std::max(now, b.last_updated_ms);
  s.manifest_list = list_path;
  s.schema_id = b.current_schema_id;
  s.summary = props;
  s.summary["operation"] = "append";
  s.summary["added-data-files"] = std::to_string(am.added_files);
  s.summary["added-records"] = std::to_string(am.added_records);
  s.summary["added-files-size"] = std::to_string(am.added_size);
  s.summary["changed-partition-count"] = std::to_string(am.changed_partitions);
  s.summary["total-records"] = std::to_string(SummaryInt(parent, "total-records") + am.added_records);
  s.summary["total-files-size"] = std::to_string(SummaryInt(parent, "total-files-size") + am.added_size);
  s.summary["total-data-files"] = std::to_string(SummaryInt(parent, "total-data-files") + am.added_files);
  s.summary["total-delete-files"] = std::to_string(SummaryInt(parent, "total-delete-files"));
  s.summary["total-position-deletes"] = std::to_string(SummaryInt(parent, "total-position-deletes"));
  s.summary["total-equality-deletes"] = std::to_string(SummaryInt(parent, "total-equality-deletes"));
  s.summary["engine-name"] = "skade";
  m->snapshots.push_back(s);
  m->last_sequence_number = seq;
  m->current_snapshot_id = s.snapshot_id;
  m->refs["main"] = SnapshotRef{s.snapshot_id, "branch", {}, {}, {}};
  m->last_updated_ms = s.timestamp_ms;
  m->snapshot_log.push_back({s.timestamp_ms, s.snapshot_id});
  m->metadata_log.push_back({b.last_updated_ms, base.metadata_location});
  size_t keep = static_cast<size_t>(std::max<int64_t>(1, b.PropertyInt("write.metadata.previous-versions-max", 100)));
  if (m->metadata_log.size() > keep)
    m->metadata_log.erase(m->metadata_log.begin(), m->metadata_log.end() - keep);

  std::string location = NextMetadataLocation(b.location, base.metadata_location);
  SKADE_RETURN_IF_ERROR(io.WriteNewFile(location, TableMetadataToJson(*m)));
  PreparedCommit pc;
  pc.commit = TableCommit{base.ident, base.metadata_location, location, s.snapshot_id, "append"};
  pc.written = {location, list_path};
  pc.metadata = m;
  return pc;
}

void Backoff(int attempt) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  int cap = std::min(1000, 5 << std::min(attempt, 8));
  std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(1, cap)(rng)));
}

}  // namespace

Result<std::unique_ptr<Table>> Table::Load(Catalog& catalog, const TableIdent& ident) {
  SKADE_ASSIGN_OR_RETURN(LoadedTable loaded, catalog.LoadTable(ident));
  return std::make_unique<Table>(catalog, std::move(loaded));
}

Table::Table(Catalog& catalog, LoadedTable loaded) : catalog_(&catalog), loaded_(std::move(loaded)) {}

Status Table::Refresh() {
  SKADE_ASSIGN_OR_RETURN(loaded_, catalog_->LoadTable(loaded_.ident));
  return {};
}

TableScan Table::NewScan() const { return TableScan(loaded_.metadata, &catalog_->io()); }

Result<StagedAppend> Table::StageAppend(arrow::RecordBatchReader& reader, const AppendOptions& options) {
  SKADE_ASSIGN_OR_RETURN(auto writer, DataWriter::Make(*loaded_.metadata));
  int64_t row = 1;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    if (auto st = reader.ReadNext(&batch); !st.ok()) {
      writer->Abort();
      return std::unexpected(FromArrow(st, "reading input"));
    }
    if (!batch) break;
    auto conformed = ConformToSchema(batch, *loaded_.metadata->schema(), row);
    Status written = conformed ? writer->Write(*conformed) : Status(std::unexpected(conformed.error()));
    if (!written) {
      writer->Abort();
      return std::unexpected(written.error());
    }
    row += batch->num_rows();
    if (options.progress) options.progress(writer->rows_written(), -1);
  }
  auto files = writer->Finish();
  if (!files) {
    writer->Abort();
    return std::unexpected(files.error());
  }
  return StagedAppend{std::move(*files), options.snapshot_properties};
}

Result<StagedAppend> Table::StageAppend(const std::shared_ptr<arrow::Table>& data,
                                        const AppendOptions& options) {
  arrow::TableBatchReader reader(*data);
  reader.set_chunksize(1 << 20);
  return StageAppend(reader, options);
}

Result<CommitResult> Table::Append(const std::shared_ptr<arrow::Table>& data, const AppendOptions& options) {
  SKADE_ASSIGN_OR_RETURN(StagedAppend staged, StageAppend(data, options));
  return CommitAppend(staged);
}

Result<CommitResult> Table::Append(arrow::RecordBatchReader& reader, const AppendOptions& options) {
  SKADE_ASSIGN_OR_RETURN(StagedAppend staged, StageAppend(reader, options));
  return CommitAppend(staged);
}

Result<CommitResult> Table::CommitAppend(const StagedAppend& staged) {
  std::vector<std::pair<Table*, StagedAppend>> one{{this, staged}};
  SKADE_ASSIGN_OR_RETURN(auto results, CommitAppends(one));
  return results.front();
}

Result<std::vector<CommitResult>> CommitAppends(std::vector<std::pair<Table*, StagedAppend>>& appends) {
  if (appends.empty()) return InvalidArgument("nothing to commit");
  std::vector<AppendManifests> manifests;
  for (auto& [t, staged] : appends) {
    SKADE_ASSIGN_OR_RETURN(auto am, WriteAppendManifests(*t->metadata(), t->catalog().io(), staged.files));
    manifests.push_back(std::move(am));
  }
  int max_attempts = static_cast<int>(
      std::max<int64_t>(1, appends[0].first->metadata()->PropertyInt("commit.retry.num-retries", 30) + 1));
  for (int attempt = 1;; ++attempt) {
    std::vector<PreparedCommit> prepared;
    for (size_t i = 0; i < appends.size(); ++i) {
      Table* t = appends[i].first;
      SKADE_ASSIGN_OR_RETURN(auto pc, PrepareAppend(t->loaded_, t->catalog().io(), manifests[i],
                                                    appends[i].second.snapshot_properties, attempt));
      prepared.push_back(std::move(pc));
    }
    std::vector<TableCommit> commits;
    for (const auto& p : prepared) commits.push_back(p.commit);
    auto seqs = appends[0].first->catalog().Commit(commits);
    if (seqs) {
      std::vector<CommitResult> out;
      for (size_t i = 0; i < appends.size(); ++i) {
        Table* t = appends[i].first;
        t->loaded_.metadata_location = prepared[i].commit.new_location;
        t->loaded_.metadata = prepared[i].metadata;
        out.push_back(CommitResult{manifests[i].snapshot_id, (*seqs)[i], attempt, appends[i].second.files});
      }
      return out;
    }
    if (seqs.error().kind != ErrorKind::kCommitConflict) return std::unexpected(seqs.error());
    // Lost the race: our new files are unreferenced; reload and try again.
    for (const auto& p : prepared)
      for (const auto& f : p.written) (void)appends[0].first->catalog().io().DeleteFile(f);
    if (attempt >= max_attempts)
      return MakeError(ErrorKind::kCommitConflict,
                       seqs.error().message + " (gave up after " + std::to_string(attempt) + " attempts)");
    Backoff(attempt);
    for (auto& [t, staged] : appends) SKADE_RETURN_IF_ERROR(t->Refresh());
  }
}

}  // namespace skade
