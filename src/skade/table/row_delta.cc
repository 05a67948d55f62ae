// Row-level writes: delete by filter, delete by key, upsert, overwrite. Each one
// becomes a single FileChange committed through the SnapshotProducer.
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/compute/row/grouper.h>

#include <malloc.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "skade/common/task_pool.h"
#include "skade/expr/arrow_filter.h"
#include "skade/format/metadata_columns.h"
#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"
#include "skade/table/data_writer.h"
#include "skade/table/delete_index.h"
#include "skade/table/deletion_vector.h"
#include "skade/table/key_candidates.h"
#include "skade/table/manifest_io.h"
#include "skade/table/scan.h"
#include "skade/table/schema_update.h"
#include "skade/table/snapshot_producer.h"
#include "skade/table/table.h"

namespace skade {
namespace {

std::string DeleteFileLocation(const TableMetadata& m) {
  return m.location + "/data/deletes/" + NewUuid() + ".parquet";
}

// The schema of position delete files (spec "Position Delete Files").
const Schema& PositionDeleteSchema() {
  static const Schema s(
      0, {NestedField{kDeleteFilePathId, "file_path", true, Type::Primitive(TypeId::kString), ""},
          NestedField{kDeletePosId, "pos", true, Type::Primitive(TypeId::kLong), ""}});
  return s;
}

// The file's path repeats on every row: it is written in blocks, not held for all of them
// (2.5M deletes of a 100-byte path would take 250 MB).
Result<DataFile> WritePositionDeletes(const TableMetadata& m, const DataFile& target,
                                      const std::vector<int64_t>& positions) {
  constexpr size_t kBlock = 64 * 1024;
  // The spec orders them; a scan of one file gives them in file order.
  if (!std::is_sorted(positions.begin(), positions.end())) return Internal("position deletes out of order");
  auto schema = ToArrowSchema(PositionDeleteSchema());
  size_t next = 0;
  auto blocks = arrow::MakeFunctionIterator([&]() -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
    if (next == positions.size()) return arrow::IterationTraits<std::shared_ptr<arrow::RecordBatch>>::End();
    const size_t n = std::min(kBlock, positions.size() - next);
    arrow::StringBuilder paths;
    ARROW_RETURN_NOT_OK(paths.Reserve(static_cast<int64_t>(n)));
    ARROW_RETURN_NOT_OK(paths.ReserveData(static_cast<int64_t>(n * target.file_path.size())));
    for (size_t i = 0; i < n; ++i) paths.UnsafeAppend(target.file_path);
    arrow::Int64Builder pos;
    ARROW_RETURN_NOT_OK(pos.AppendValues(positions.data() + next, static_cast<int64_t>(n)));
    next += n;
    ARROW_ASSIGN_OR_RAISE(auto a, paths.Finish());
    ARROW_ASSIGN_OR_RAISE(auto b, pos.Finish());
    return arrow::RecordBatch::Make(schema, static_cast<int64_t>(n), {a, b});
  });
  SKADE_ARROW_ASSIGN(auto reader, arrow::RecordBatchReader::MakeFromIterator(std::move(blocks), schema),
                     "position deletes");
  SKADE_ASSIGN_OR_RETURN(DataFile df, WriteParquetFile(m, DeleteFileLocation(m), *reader, PositionDeleteSchema()));
  df.content = FileContent::kPositionDeletes;
  df.partition = target.partition;
  df.spec_id = target.spec_id;
  df.sort_order_id.reset();
  return df;
}

// Format v3: the positions of `task`'s data file's one deletion vector: `hit` (ascending)
// and every position its deletes removed before (its vector, position delete files of older
// versions). The new vector replaces the file's old one.
Result<std::vector<int64_t>> VectorPositions(DeleteLoader& loader, const FileScanTask& task,
                                             const std::vector<int64_t>& hit) {
  std::vector<DeleteFileEntry> positional;
  for (const auto& d : task.deletes)
    if (d.file->content == FileContent::kPositionDeletes) positional.push_back(d);
  if (positional.empty()) return hit;
  SKADE_ASSIGN_OR_RETURN(DeletedRows before, loader.Load(task.file, task.data_sequence_number, positional));
  std::vector<int64_t> positions;
  std::set_union(hit.begin(), hit.end(), before.positions().begin(), before.positions().end(),
                 std::back_inserter(positions));
  return positions;
}

// Format v3: one Puffin file of the vectors of `targets` (data files with their new
// positions), described as one delete file per vector.
Result<std::vector<DataFile>> WriteDeletionVectorFile(const TableMetadata& m, FileIO& io,
                                                      const std::vector<const DataFile*>& targets,
                                                      std::vector<DeletionVector> vectors) {
  PuffinFile puffin = WriteDeletionVectors(vectors);
  const std::string path = m.location + "/data/deletes/" + NewUuid() + ".puffin";
  SKADE_RETURN_IF_ERROR(io.WriteNewFile(path, puffin.bytes));
  std::vector<DataFile> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    DataFile df;
    df.content = FileContent::kPositionDeletes;
    df.file_path = path;
    df.file_format = "PUFFIN";
    df.partition = targets[i]->partition;
    df.spec_id = targets[i]->spec_id;
    df.record_count = static_cast<int64_t>(vectors[i].positions.size());
    df.file_size_in_bytes = static_cast<int64_t>(puffin.bytes.size());
    df.referenced_data_file = targets[i]->file_path;
    df.content_offset = puffin.blobs[i].first;
    df.content_size_in_bytes = puffin.blobs[i].second;
    out.push_back(std::move(df));
  }
  return out;
}

// Format v3: a data file's deletion vectors go with it, or when a new vector replaces them.
void RemoveDeletionVectors(const FileScanTask& task, std::set<std::string>& removed) {
  for (const auto& d : task.deletes)
    if (d.file->IsDeletionVector()) removed.insert(d.file->EntryKey());
}

// The snapshot a write on `branch` builds on (null for an empty branch).
const Snapshot* BranchHead(const TableMetadata& m, const std::string& branch) {
  auto it = m.refs.find(branch);
  if (it != m.refs.end()) return m.SnapshotById(it->second.snapshot_id);
  return branch == "main" ? m.CurrentSnapshot() : nullptr;
}

// Outcome of matching rows against the live files of a branch.
struct RowRemoval {
  expr::ExprPtr conflict_filter;  // rows this removal depends on (bound), or null: all
  std::vector<DataFile> delete_files;
  std::set<std::string> removed;
  std::vector<DataFile> rewritten;
  std::set<std::string> position_targets;  // data files the position deletes refer to
  int64_t rows_deleted = 0;
};

// Reads the live rows of each candidate file with their positions and asks `match`
// which to delete; then drops, position-deletes or rewrites per `copy_on_write`.
using MatchFn = std::function<Result<std::shared_ptr<arrow::Array>>(
    const std::shared_ptr<arrow::RecordBatch>&)>;

// The top-level columns holding the given field ids.
std::vector<int> TopLevelIds(const Schema& schema, const std::vector<int>& ids) {
  std::vector<int> out;
  for (const auto& f : schema.fields())
    if (std::any_of(ids.begin(), ids.end(), [&](int id) { return schema.TopLevelOf(id) == &f; })) out.push_back(f.id);
  if (out.empty() && !schema.fields().empty()) out.push_back(schema.fields()[0].id);  // e.g. `true`
  return out;
}

// What one candidate file gives: the positions `match` selects, of how many live rows,
// and (copy-on-write) the rows that stay.
struct FileMatch {
  std::vector<int64_t> hit;
  int64_t live = 0;
  std::vector<std::shared_ptr<arrow::RecordBatch>> survivors;
  std::optional<DataFile> deletes;  // merge-on-read: the position delete file written for it
  std::optional<std::vector<int64_t>> vector;  // merge-on-read, format v3: its new deletion vector
};

// With `lineage` (format v3), the batches also hold the row lineage columns (before the
// positions): the rows a rewrite keeps keep their ids and sequence numbers.
Result<FileMatch> MatchFile(const TableMetadataPtr& m, FileIO& io, const ScanPlan& candidates,
                            const FileScanTask& task, bool copy_on_write, bool lineage,
                            const std::vector<int>& match_ids, const MatchFn& match) {
  ScanPlan one;
  one.metadata = m;
  one.snapshot = candidates.snapshot;
  one.schema = candidates.schema;
  for (const auto& f : one.schema->fields())
    if (copy_on_write || match_ids.empty() ||
        std::find(match_ids.begin(), match_ids.end(), f.id) != match_ids.end())
      one.projected_ids.push_back(f.id);
  one.tasks = {task};
  one.stats = std::make_shared<ScanStats>();
  one.emit_positions = true;
  if (copy_on_write) one.pool = DataWriter::pool();
  if (lineage) ReadRowLineage(one);
  SKADE_ASSIGN_OR_RETURN(auto reader, TableScan::Read(std::move(one), &io));
  FileMatch out;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto st = reader->ReadNext(&batch);
    if (!st.ok()) return std::unexpected(ErrorFromReader(st));
    if (!batch) break;
    out.live += batch->num_rows();
    SKADE_ASSIGN_OR_RETURN(auto mask, match(batch));
    const auto& bm = static_cast<const arrow::BooleanArray&>(*mask);
    const auto& pos = static_cast<const arrow::Int64Array&>(*batch->column(batch->num_columns() - 1));
    for (int64_t r = 0; r < batch->num_rows(); ++r)
      if (bm.IsValid(r) && bm.Value(r)) out.hit.push_back(pos.Value(r));
    if (copy_on_write) {
      // The rows that stay: the mask inverted (a null match keeps its row).
      arrow::BooleanBuilder keep;
      SKADE_ARROW_RETURN(keep.Reserve(batch->num_rows()), "rewrite");
      for (int64_t r = 0; r < batch->num_rows(); ++r) keep.UnsafeAppend(!(bm.IsValid(r) && bm.Value(r)));
      std::shared_ptr<arrow::Array> km;
      SKADE_ARROW_RETURN(keep.Finish(&km), "rewrite");
      auto without_pos = batch->RemoveColumn(batch->num_columns() - 1);
      if (!without_pos.ok()) return Internal(without_pos.status().message());
      InitArrowCompute();
      SKADE_ARROW_ASSIGN(auto kept, arrow::compute::Filter(*without_pos, km), "rewrite");
      if (kept.record_batch()->num_rows() > 0) out.survivors.push_back(kept.record_batch());
    }
  }
  return out;
}

// RemoveRows' work: `out` and `rewriter` hold what was written so far, also on an error.
Status CollectRemoval(const TableMetadataPtr& m, FileIO& io, const ScanPlan& candidates, bool copy_on_write,
                      bool match_lineage, const std::vector<int>& match_ids, const MatchFn& match,
                      RowRemoval& out, std::unique_ptr<DataWriter>& rewriter) {
  const auto& tasks = candidates.tasks;
  std::vector<FileMatch> found(tasks.size());
  const bool v3 = m->format_version >= 3;  // deletion vectors, not position delete files
  const bool lineage = v3 && (copy_on_write || match_lineage);
  DeleteLoader loader(&io, m->schema());
  if (!copy_on_write) {
    // Files are matched, and their position delete files written, a few at once. One
    // file's work (plan, open, delete files, a small decode, fsyncs) is mostly latency,
    // and an upsert into a partitioned table reads dozens of files.
    Status matched = RunConcurrently(tasks.size(), [&](size_t i) -> Status {
      SKADE_ASSIGN_OR_RETURN(found[i], MatchFile(m, io, candidates, tasks[i], false, lineage, match_ids, match));
      FileMatch& f = found[i];
      if (!f.hit.empty() && static_cast<int64_t>(f.hit.size()) != f.live) {
        if (v3) {
          SKADE_ASSIGN_OR_RETURN(f.vector, VectorPositions(loader, tasks[i], f.hit));
        } else {
          SKADE_ASSIGN_OR_RETURN(f.deletes, WritePositionDeletes(*m, tasks[i].file, f.hit));
        }
      }
      return {};
    });
    for (size_t i = 0; i < tasks.size(); ++i)
      if (found[i].deletes) {
        out.delete_files.push_back(std::move(*found[i].deletes));
        out.position_targets.insert(tasks[i].file.file_path);
      }
    if (!matched) return matched;
    // The write's vectors go into one Puffin file: one file (and one sync) for an upsert
    // that touches many data files.
    std::vector<const DataFile*> targets;
    std::vector<DeletionVector> vectors;
    for (size_t i = 0; i < tasks.size(); ++i)
      if (found[i].vector) {
        targets.push_back(&tasks[i].file);
        vectors.push_back({tasks[i].file.file_path, std::move(*found[i].vector)});
        out.position_targets.insert(tasks[i].file.file_path);
        RemoveDeletionVectors(tasks[i], out.removed);
      }
    if (!vectors.empty()) {
      SKADE_ASSIGN_OR_RETURN(auto written, WriteDeletionVectorFile(*m, io, targets, std::move(vectors)));
      out.delete_files.insert(out.delete_files.end(), written.begin(), written.end());
    }
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    FileMatch& f = found[i];
    if (copy_on_write) {
      SKADE_ASSIGN_OR_RETURN(f, MatchFile(m, io, candidates, tasks[i], true, lineage, match_ids, match));
    }
    if (f.hit.empty()) continue;
    out.rows_deleted += static_cast<int64_t>(f.hit.size());
    if (static_cast<int64_t>(f.hit.size()) == f.live) {
      out.removed.insert(tasks[i].file.file_path);  // every live row goes: metadata only
      RemoveDeletionVectors(tasks[i], out.removed);
    } else if (copy_on_write) {
      if (!rewriter) {
        SKADE_ASSIGN_OR_RETURN(rewriter, DataWriter::Make(*m, lineage));
      }
      for (const auto& b : f.survivors) SKADE_RETURN_IF_ERROR(rewriter->Write(b));
      f.survivors.clear();
      out.removed.insert(tasks[i].file.file_path);
      RemoveDeletionVectors(tasks[i], out.removed);
    }
  }
  if (rewriter) {
    SKADE_ASSIGN_OR_RETURN(out.rewritten, rewriter->Finish());
  }
  return {};
}

// Merge-on-read only needs the columns `match` looks at (`match_ids`, top-level);
// copy-on-write reads whole rows to rewrite the survivors. With `match_lineage`, a format
// v3 table's batches that `match` sees end with the row lineage columns, then the positions.
Result<RowRemoval> RemoveRows(const TableMetadataPtr& m, FileIO& io, const ScanPlan& candidates,
                              bool copy_on_write, const std::vector<int>& match_ids,
                              const MatchFn& match, bool match_lineage = false) {
  RowRemoval out;
  std::unique_ptr<DataWriter> rewriter;
  if (auto st = CollectRemoval(m, io, candidates, copy_on_write, match_lineage, match_ids, match, out, rewriter);
      !st) {
    // What was written for earlier files goes: nothing will refer to it.
    DiscardFiles(io, out.delete_files);
    if (rewriter) rewriter->Abort();
    return std::unexpected(st.error());
  }
  return out;
}

Result<ScanPlan> CandidatePlan(const Table& t, const std::optional<std::string>& filter,
                               const std::string& branch) {
  TableScan scan = t.NewScan();
  if (filter) scan.Filter(*filter);
  if (t.metadata()->refs.contains(branch)) scan.UseRef(branch);
  return scan.Plan();
}

// Whether key-based writes (upsert, delete --keys) may write equality delete files.
Result<bool> EqualityDeletesOptIn(const TableMetadata& m) {
  std::string v = m.Property(kEqualityDeletesProperty, "false");
  if (v == "true") return true;
  if (v == "false") return false;
  return InvalidArgument("table property " + std::string(kEqualityDeletesProperty) +
                         " must be true or false, not '" + v + "'");
}

bool CopyOnWrite(const TableMetadata& m) {
  return m.Property("write.delete.mode", "merge-on-read") == "copy-on-write";
}

// The identifier columns of the table, or an error naming what is missing.
Result<std::vector<const NestedField*>> IdentifierFields(const Schema& schema,
                                                         const std::string& table) {
  SKADE_ASSIGN_OR_RETURN(std::vector<const NestedField*> out, KeyColumns(schema));
  if (out.empty())
    return InvalidArgument("table " + table +
                           " has no identifier fields (give them with alter TABLE set-identifier COLS)");
  return out;
}

// Rows of `keys` conformed to the identifier columns; extra columns are ignored.
Result<std::shared_ptr<arrow::RecordBatch>> KeyBatch(const std::shared_ptr<arrow::Table>& keys,
                                                     const std::vector<const NestedField*>& ids) {
  SKADE_ARROW_ASSIGN(auto combined, keys->CombineChunksToBatch(), "keys");
  std::vector<NestedField> fields;
  for (const auto* f : ids) fields.push_back(*f);
  Schema key_schema(0, fields);
  arrow::FieldVector in_fields;
  arrow::ArrayVector in_cols;
  for (const auto* f : ids) {
    int idx = combined->schema()->GetFieldIndex(f->name);
    if (idx < 0) {
      std::string have;
      for (const auto& x : combined->schema()->fields())
        have += (have.empty() ? "" : ", ") + x->name();
      return InvalidArgument("the keys lack identifier column '" + f->name +
                             "' (they have: " + have + ")");
    }
    in_fields.push_back(combined->schema()->field(idx));
    in_cols.push_back(combined->column(idx));
  }
  auto projected =
      arrow::RecordBatch::Make(arrow::schema(in_fields), combined->num_rows(), in_cols);
  return ConformToSchema(projected, key_schema, 1);
}

// The distinct keys of `all_keys` (the identifier columns), each as its last row: what an
// upsert keeps. Rows are grouped by Arrow's hash grouper over the typed columns, which
// holds a few bytes a key where key texts in hash sets took about 150.
struct LastOfEachKey {
  std::vector<uint8_t> keep;                // per row of all_keys: the last of its key
  std::shared_ptr<arrow::RecordBatch> rows;  // those rows, in input order
};

Result<LastOfEachKey> LastRowOfEachKey(const std::shared_ptr<arrow::RecordBatch>& all_keys) {
  const int64_t n = all_keys->num_rows();
  LastOfEachKey out;
  out.keep.assign(static_cast<size_t>(n), 0);
  arrow::Int64Builder kept_rows;
  {
    std::vector<arrow::TypeHolder> types;
    for (const auto& c : all_keys->columns()) types.emplace_back(c->type());
    SKADE_ARROW_ASSIGN(auto grouper, arrow::compute::Grouper::Make(types), "keys");
    arrow::compute::ExecBatch batch(*all_keys);
    SKADE_ARROW_ASSIGN(auto groups, grouper->Consume(arrow::compute::ExecSpan(batch)), "keys");
    const uint32_t* group = groups.array()->GetValues<uint32_t>(1);
    std::vector<bool> seen(grouper->num_groups());
    for (int64_t r = n - 1; r >= 0; --r)
      if (!seen[group[r]]) {
        seen[group[r]] = true;
        out.keep[static_cast<size_t>(r)] = 1;
      }
  }
  for (int64_t r = 0; r < n; ++r)
    if (out.keep[static_cast<size_t>(r)]) SKADE_ARROW_RETURN(kept_rows.Append(r), "keys");
  out.rows = all_keys;
  if (kept_rows.length() < n) {
    std::shared_ptr<arrow::Array> indices;
    SKADE_ARROW_RETURN(kept_rows.Finish(&indices), "keys");
    InitArrowCompute();
    SKADE_ARROW_ASSIGN(auto taken, arrow::compute::Take(all_keys, indices), "keys");
    out.rows = taken.record_batch();
  }
  return out;
}

// The identifier columns of `batch`, in the order of `ids`.
Result<std::vector<std::shared_ptr<arrow::Array>>> KeyColumns(const arrow::RecordBatch& batch, const Schema& schema,
                                                              const std::vector<const NestedField*>& ids) {
  std::vector<std::shared_ptr<arrow::Array>> cols;
  for (const auto* f : ids) {
    auto col = ColumnForFieldId(batch, schema, f->id);
    if (!col) return Internal("identifier column " + f->name + " missing from batch");
    cols.push_back(std::move(col));
  }
  return cols;
}

// The key columns and `_row_id` of the rows of `batch` (read by RemoveRows with
// match_lineage) that `mask` marks.
Result<std::shared_ptr<arrow::RecordBatch>> MatchedIds(const arrow::RecordBatch& batch,
                                                       const std::vector<std::shared_ptr<arrow::Array>>& keys,
                                                       const std::shared_ptr<arrow::Array>& mask) {
  arrow::FieldVector fields;
  arrow::ArrayVector columns = keys;
  for (size_t k = 0; k < keys.size(); ++k) fields.push_back(arrow::field("k" + std::to_string(k), keys[k]->type()));
  fields.push_back(arrow::field("_row_id", arrow::int64()));
  for (int c = 0; c < batch.num_columns() && columns.size() == keys.size(); ++c)
    if (FieldIdOf(*batch.schema()->field(c)) == kRowIdFieldId) columns.push_back(batch.column(c));
  if (columns.size() == keys.size() || columns.back()->type_id() != arrow::Type::INT64)
    return Internal("matched rows lack their _row_id");
  auto all = arrow::RecordBatch::Make(arrow::schema(fields), batch.num_rows(), columns);
  InitArrowCompute();
  SKADE_ARROW_ASSIGN(auto hits, arrow::compute::Filter(all, mask), "keys");
  return hits.record_batch();
}

// Per row of `key_rows` (distinct keys), the `_row_id` of the table's row with that key
// among `matched` (MatchedIds), or -1. A key the table held more than once keeps the
// smallest of its ids, so that every run of the same upsert gives the same ids.
Result<std::vector<int64_t>> ReplacedIds(const arrow::RecordBatch& key_rows, const Schema& schema,
                                         const std::vector<const NestedField*>& ids,
                                         const std::vector<std::shared_ptr<arrow::RecordBatch>>& matched) {
  std::vector<int64_t> out(static_cast<size_t>(key_rows.num_rows()), -1);
  SKADE_ASSIGN_OR_RETURN(auto keys, KeyColumns(key_rows, schema, ids));
  std::vector<arrow::TypeHolder> types;
  std::vector<arrow::Datum> key_data;
  for (const auto& k : keys) {
    types.emplace_back(k->type());
    key_data.emplace_back(k);
  }
  SKADE_ARROW_ASSIGN(auto grouper, arrow::compute::Grouper::Make(types), "keys");
  // Group ids are not assigned in the keys' order: each group's row is looked up.
  arrow::compute::ExecBatch all(std::move(key_data), key_rows.num_rows());
  SKADE_ARROW_ASSIGN(auto key_groups, grouper->Consume(arrow::compute::ExecSpan(all)), "keys");
  std::vector<int64_t> row_of_group(grouper->num_groups(), -1);
  const uint32_t* group_of_row = key_groups.array()->GetValues<uint32_t>(1);
  for (int64_t r = 0; r < key_rows.num_rows(); ++r) row_of_group[group_of_row[r]] = r;
  if (static_cast<int64_t>(row_of_group.size()) != key_rows.num_rows()) return Internal("upsert keys not distinct");
  InitArrowCompute();
  for (const auto& batch : matched) {
    std::vector<arrow::Datum> probe;
    for (size_t k = 0; k < keys.size(); ++k) {
      std::shared_ptr<arrow::Array> column = batch->column(static_cast<int>(k));
      if (!column->type()->Equals(*keys[k]->type())) {
        // e.g. a dictionary-encoded string column as the file held it
        SKADE_ARROW_ASSIGN(auto cast, arrow::compute::Cast(*column, keys[k]->type()), "keys");
        column = std::move(cast);
      }
      probe.emplace_back(std::move(column));
    }
    arrow::compute::ExecBatch probe_batch(std::move(probe), batch->num_rows());
    SKADE_ARROW_ASSIGN(auto groups, grouper->Lookup(arrow::compute::ExecSpan(probe_batch)), "keys");
    const auto group = std::static_pointer_cast<arrow::UInt32Array>(groups.make_array());
    const auto& row_ids = static_cast<const arrow::Int64Array&>(*batch->column(static_cast<int>(keys.size())));
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      if (group->IsNull(r) || row_ids.IsNull(r)) continue;  // a file without first_row_id: no id to keep
      int64_t& id = out[static_cast<size_t>(row_of_group[group->Value(r)])];
      id = id < 0 ? row_ids.Value(r) : std::min(id, row_ids.Value(r));
    }
  }
  return out;
}

// Removes rows whose key is in `key_rows` (distinct keys): position deletes (or rewritten files, for
// copy-on-write) found by reading the key columns of the candidate files; equality
// delete files instead when the table opts in and every partition source is an
// identifier column (the key then names its partition). With `replaced_ids`, on a format v3
// table that is not written by equality, it gets ReplacedIds: the ids of the rows removed.
Result<RowRemoval> RemoveKeys(const Table& t, FileIO& io,
                              const std::shared_ptr<arrow::RecordBatch>& key_rows,
                              const std::vector<const NestedField*>& ids,
                              const std::string& branch, std::vector<int64_t>* replaced_ids = nullptr) {
  const TableMetadataPtr& m = t.metadata();
  const Schema& schema = *m->schema();
  const PartitionSpec& spec = m->spec();
  bool key_names_partition = true;
  for (const auto& pf : spec.fields()) {
    bool in_key = false;
    for (const auto* f : ids) in_key = in_key || f->id == pf.source_id;
    key_names_partition = key_names_partition && in_key;
  }
  RowRemoval out;
  // A partition-scoped equality delete reaches only files of its own spec, so
  // once the table has had several specs only unpartitioned (global) ones are safe.
  if (key_names_partition && !spec.unpartitioned() && m->specs.size() > 1)
    key_names_partition = false;
  if (CopyOnWrite(*m)) key_names_partition = false;  // copy-on-write rewrites files instead
  // Equality deletes are written only when the table asks for them: several readers
  // (PyIceberg 0.12 among them) refuse tables that have any.
  SKADE_ASSIGN_OR_RETURN(bool equality_opt_in, EqualityDeletesOptIn(*m));
  if (!equality_opt_in) key_names_partition = false;
  if (key_names_partition && !m->refs.empty()) {
    // Group key rows by partition and write one equality delete file per partition.
    std::vector<NestedField> fields;
    std::vector<int> eq_ids;
    for (const auto* f : ids) {
      fields.push_back(*f);
      eq_ids.push_back(f->id);
    }
    Schema key_schema(0, fields);
    std::map<std::string, std::pair<std::vector<Value>, std::vector<int64_t>>> groups;
    for (int64_t r = 0; r < key_rows->num_rows(); ++r) {
      std::vector<Value> tuple;
      for (const auto& pf : spec.fields()) {
        const NestedField* src = schema.FindField(pf.source_id);
        auto col = ColumnForFieldId(*key_rows, schema, pf.source_id);
        SKADE_ASSIGN_OR_RETURN(Value v, ValueAt(*col, r, *src->type));
        SKADE_ASSIGN_OR_RETURN(Value p, pf.transform.Apply(*src->type, v));
        tuple.push_back(std::move(p));
      }
      auto& g = groups[PartitionTupleKey(spec.spec_id(), tuple)];
      g.first = tuple;
      g.second.push_back(r);
    }
    InitArrowCompute();
    for (auto& [k, g] : groups) {
      arrow::Int64Builder idx;
      SKADE_ARROW_RETURN(idx.AppendValues(g.second), "equality deletes");
      std::shared_ptr<arrow::Array> ia;
      SKADE_ARROW_RETURN(idx.Finish(&ia), "equality deletes");
      SKADE_ARROW_ASSIGN(auto part, arrow::compute::Take(key_rows, ia), "equality deletes");
      auto written = WriteParquetFile(*m, DeleteFileLocation(*m), part.record_batch(), key_schema);
      if (!written) {
        DiscardFiles(io, out.delete_files);  // those of the partitions before
        return std::unexpected(written.error());
      }
      DataFile df = std::move(*written);
      df.content = FileContent::kEqualityDeletes;
      df.equality_ids = eq_ids;
      df.partition = g.first;
      df.spec_id = spec.spec_id();
      df.sort_order_id.reset();
      out.delete_files.push_back(std::move(df));
    }
    out.rows_deleted = key_rows->num_rows();
    return out;
  }
  if (!BranchHead(*m, branch)) return out;
  // Only files whose partition and key-column bounds admit one of the keys are read,
  // and of those only the key columns.
  SKADE_ASSIGN_OR_RETURN(KeyCandidates candidate_keys, KeyCandidates::Make(*key_rows, schema, ids, *m));
  SKADE_ASSIGN_OR_RETURN(auto key_columns, KeyColumns(*key_rows, schema, ids));
  SKADE_ASSIGN_OR_RETURN(auto probe, EqualityProbe::Make(std::move(key_columns)));
  SKADE_ASSIGN_OR_RETURN(ScanPlan candidates, CandidatePlan(t, std::nullopt, branch));
  std::erase_if(candidates.tasks,
                [&](const FileScanTask& task) { return !candidate_keys.MightHold(task.file); });
  // Rows appended concurrently that cannot hold a key do not conflict.
  RowRemoval found;
  std::vector<int> match_ids;
  for (const auto* f : ids) match_ids.push_back(f->id);
  const bool want_ids = replaced_ids && m->format_version >= 3;
  std::mutex matched_mu;  // files are matched concurrently
  std::vector<std::shared_ptr<arrow::RecordBatch>> matched;
  SKADE_ASSIGN_OR_RETURN(
      found, RemoveRows(
                 m, io, candidates, CopyOnWrite(*m), match_ids,
                 [&](const std::shared_ptr<arrow::RecordBatch>& batch) -> Result<std::shared_ptr<arrow::Array>> {
                   SKADE_ASSIGN_OR_RETURN(auto cols, KeyColumns(*batch, schema, ids));
                   std::vector<bool> hit(static_cast<size_t>(batch->num_rows()));
                   SKADE_RETURN_IF_ERROR(probe->Mark(cols, &hit));
                   arrow::BooleanBuilder b;
                   SKADE_ARROW_RETURN(b.AppendValues(hit), "keys");
                   std::shared_ptr<arrow::Array> out_mask;
                   SKADE_ARROW_RETURN(b.Finish(&out_mask), "keys");
                   if (want_ids && std::find(hit.begin(), hit.end(), true) != hit.end()) {
                     SKADE_ASSIGN_OR_RETURN(auto ids_of_hits, MatchedIds(*batch, cols, out_mask));
                     std::lock_guard lock(matched_mu);
                     matched.push_back(std::move(ids_of_hits));
                   }
                   return out_mask;
                 },
                 want_ids));
  if (want_ids) {
    auto kept_ids = ReplacedIds(*key_rows, schema, ids, matched);
    if (!kept_ids) {
      DiscardFiles(io, found.delete_files);
      DiscardFiles(io, found.rewritten);
      return std::unexpected(kept_ids.error());
    }
    *replaced_ids = std::move(*kept_ids);
  }
  found.conflict_filter = candidate_keys.Filter();
  return found;
}

// Changes computed from reading the table are recomputed when a concurrent commit
// added rows since the read (the producer refuses them), as often as the table's
// commit.retry.num-retries allows; other conflicts are rebased by the producer itself.
template <typename F>
Result<CommitResult> WithRecompute(Table& t, F attempt) {
  const int64_t retries = std::max<int64_t>(0, t.metadata()->PropertyInt("commit.retry.num-retries", 30));
  for (int64_t i = 1;; ++i) {
    auto r = attempt();
    if (r || r.error().kind != ErrorKind::kCommitConflict || i > retries) return r;
    // Random, growing waits: with a fixed schedule two racing writers retry in lockstep and
    // keep colliding until the attempts run out.
    thread_local std::minstd_rand jitter{std::random_device{}()};
    int64_t cap = std::min<int64_t>(5 + i * 10, 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + static_cast<int64_t>(jitter()) % cap));
    SKADE_RETURN_IF_ERROR(t.Refresh());
  }
}

std::optional<int64_t> ReadSnapshot(const TableMetadata& m, const std::string& branch) {
  const Snapshot* head = BranchHead(m, branch);
  return head ? head->snapshot_id : 0;
}

// The file change a removal (plus any appended files) amounts to. Changes that
// read the table are validated against rows added since, except equality deletes,
// whose sequence numbers already order them after concurrent appends.
// `writer_operation` names the write for lineage (an upsert's snapshot says overwrite).
FileChange ChangeFrom(const RowRemoval& removal, std::vector<DataFile> appended,
                      const WriteOptions& options, std::optional<int64_t> read,
                      const char* writer_operation) {
  FileChange change;
  change.operation = !appended.empty() || !removal.rewritten.empty() ? "overwrite" : "delete";
  change.added = std::move(appended);
  change.added.insert(change.added.end(), removal.delete_files.begin(), removal.delete_files.end());
  change.added.insert(change.added.end(), removal.rewritten.begin(), removal.rewritten.end());
  change.removed = removal.removed;
  change.properties = options.snapshot_properties;
  change.branch = options.branch;
  change.provenance = options.provenance;
  change.provenance.operation = writer_operation;
  bool by_equality = !removal.delete_files.empty() &&
                     removal.delete_files[0].content == FileContent::kEqualityDeletes;
  if (!by_equality) {
    change.validate_no_new_data_since = read;
    change.conflict_filter = removal.conflict_filter;
    change.validate_live = removal.position_targets;
  }
  return change;
}

}  // namespace

Result<CommitResult> Table::CommitFileChange(FileChange change, int64_t rows_added,
                                             int64_t rows_deleted) {
  if (change.added.empty() && change.removed.empty()) {
    CommitResult nothing;
    nothing.committed = false;
    return nothing;
  }
  std::vector<DataFile> added = change.added;
  std::vector<std::pair<LoadedTable, FileChange>> changes;
  changes.emplace_back(loaded_, std::move(change));
  SKADE_ASSIGN_OR_RETURN(auto produced, CommitChanges(*catalog_, std::move(changes)));
  loaded_ = produced[0].table;
  CommitResult r{produced[0].snapshot_id,
                 produced[0].commit_seq,
                 produced[0].attempts,
                 added,
                 rows_added,
                 rows_deleted,
                 true};
  return r;
}

Result<CommitResult> Table::Delete(const std::string& filter, const WriteOptions& options) {
  return WithRecompute(*this, [&]() -> Result<CommitResult> {
    std::optional<int64_t> read = ReadSnapshot(*loaded_.metadata, options.branch);
    SKADE_ASSIGN_OR_RETURN(ScanPlan candidates, CandidatePlan(*this, filter, options.branch));
    const Schema& schema = *candidates.schema;
    expr::ExprPtr bound = candidates.filter;
    SKADE_ASSIGN_OR_RETURN(
        RowRemoval removal,
        RemoveRows(loaded_.metadata, catalog_->io(), candidates, CopyOnWrite(*loaded_.metadata),
                   TopLevelIds(*candidates.schema, expr::ReferencedFieldIds(*bound)),
                   [&](const std::shared_ptr<arrow::RecordBatch>& batch) {
                     return expr::EvaluateBatch(*bound, schema, batch);
                   }));
    removal.conflict_filter = bound;
    return CommitFileChange(ChangeFrom(removal, {}, options, read, "delete"), 0, removal.rows_deleted);
  });
}

Result<CommitResult> Table::DeleteKeys(const std::shared_ptr<arrow::Table>& keys,
                                       const WriteOptions& options) {
  TableMetadataPtr pinned = loaded_.metadata;  // `ids` point into it across refreshes
  SKADE_ASSIGN_OR_RETURN(auto ids, IdentifierFields(*pinned->schema(), ident().ToString()));
  SKADE_ASSIGN_OR_RETURN(auto all_keys, KeyBatch(keys, ids));
  SKADE_ASSIGN_OR_RETURN(LastOfEachKey distinct, LastRowOfEachKey(all_keys));
  all_keys.reset();
  return WithRecompute(*this, [&]() -> Result<CommitResult> {
    std::optional<int64_t> read = ReadSnapshot(*loaded_.metadata, options.branch);
    SKADE_ASSIGN_OR_RETURN(RowRemoval removal,
                           RemoveKeys(*this, catalog_->io(), distinct.rows, ids, options.branch));
    return CommitFileChange(ChangeFrom(removal, {}, options, read, "delete"), 0, removal.rows_deleted);
  });
}

Result<CommitResult> Table::Upsert(const std::shared_ptr<arrow::Table>& rows,
                                   const WriteOptions& options) {
  return Upsert(
      rows,
      [&](const UpsertRows& upsert) {
        int64_t rows_read = 0;
        auto kept = KeepMarkedRows(std::make_shared<arrow::TableBatchReader>(rows), *metadata()->schema(),
                                   upsert.keep, upsert.replaced_ids, 0, &rows_read);
        WriteOptions with_ids = options;
        with_ids.row_lineage = !upsert.replaced_ids.empty();
        return StageAppend(*kept, with_ids);
      },
      options);
}

Result<CommitResult> Table::Upsert(const std::shared_ptr<arrow::Table>& keys,
                                   const std::function<Result<StagedAppend>(const UpsertRows& rows)>& stage,
                                   const WriteOptions& options) {
  TableMetadataPtr pinned = loaded_.metadata;  // `ids` point into it across refreshes
  const Schema& schema = *pinned->schema();
  SKADE_ASSIGN_OR_RETURN(auto ids, IdentifierFields(schema, ident().ToString()));
  SKADE_ASSIGN_OR_RETURN(auto all_keys, KeyBatch(keys, ids));
  // The last row of each key wins; only the keys go on to find the rows they replace (an
  // equality delete file of whole rows would be as large as the data it replaces).
  SKADE_ASSIGN_OR_RETURN(LastOfEachKey distinct, LastRowOfEachKey(all_keys));
  all_keys.reset();
  UpsertRows rows;
  rows.keep = std::move(distinct.keep);
  const std::shared_ptr<arrow::RecordBatch>& key_rows = distinct.rows;
  const int64_t kept = key_rows->num_rows();
  return WithRecompute(*this, [&]() -> Result<CommitResult> {
    std::optional<int64_t> read = ReadSnapshot(*loaded_.metadata, options.branch);
    // A v3 table's replaced rows hand their ids to the rows replacing them.
    rows.replaced_ids.clear();
    SKADE_ASSIGN_OR_RETURN(RowRemoval removal, RemoveKeys(*this, catalog_->io(), key_rows, ids, options.branch,
                                                          &rows.replaced_ids));
#if defined(__GLIBC__)
    // The search's key values (in small blocks for long string keys) are freed by now;
    // glibc keeps such memory unless asked, and the rows are written next.
    ::malloc_trim(0);
#endif
    auto staged = stage(rows);
    int64_t staged_rows = 0;
    if (staged)
      for (const auto& f : staged->files) staged_rows += f.record_count;
    if (staged && staged_rows != kept) {
      DiscardFiles(catalog_->io(), staged->files);
      staged = Corrupt("the upsert's input gave " + std::to_string(staged_rows) + " rows to write, its keys " +
                       std::to_string(kept) + " (did it change while it was read?)");
    }
    if (!staged) {
      DiscardFiles(catalog_->io(), removal.delete_files);
      DiscardFiles(catalog_->io(), removal.rewritten);
      return std::unexpected(staged.error());
    }
    return CommitFileChange(ChangeFrom(removal, staged->files, options, read, "upsert"), kept,
                            removal.rows_deleted);
  });
}

Result<CommitResult> Table::Overwrite(const std::shared_ptr<arrow::Table>& rows,
                                      const std::optional<std::string>& filter,
                                      const WriteOptions& options) {
  return Overwrite([&] { return StageAppend(rows, options); }, filter, options);
}

Result<CommitResult> Table::Overwrite(const std::function<Result<StagedAppend>()>& stage,
                                      const std::optional<std::string>& filter, const WriteOptions& options) {
  return WithRecompute(*this, [&]() -> Result<CommitResult> {
    std::optional<int64_t> read = ReadSnapshot(*loaded_.metadata, options.branch);
    SKADE_ASSIGN_OR_RETURN(StagedAppend staged, stage());
    // What the new rows replace; when that cannot be found, the staged files go.
    auto removal = [&]() -> Result<RowRemoval> {
      RowRemoval removal;
      if (filter) {
        SKADE_ASSIGN_OR_RETURN(ScanPlan candidates, CandidatePlan(*this, filter, options.branch));
        const Schema& schema = *candidates.schema;
        expr::ExprPtr bound = candidates.filter;
        SKADE_ASSIGN_OR_RETURN(
            removal,
            RemoveRows(loaded_.metadata, catalog_->io(), candidates, CopyOnWrite(*loaded_.metadata),
                       TopLevelIds(*candidates.schema, expr::ReferencedFieldIds(*bound)),
                       [&](const std::shared_ptr<arrow::RecordBatch>& batch) {
                         return expr::EvaluateBatch(*bound, schema, batch);
                       }));
        removal.conflict_filter = bound;
      } else if (const Snapshot* head = BranchHead(*loaded_.metadata, options.branch)) {
        // Dynamic overwrite: every live file in a partition the new rows touch goes.
        std::set<std::string> touched;
        for (const auto& f : staged.files) touched.insert(PartitionTupleKey(f.spec_id, f.partition));
        // Format v3: the removed files' deletion vectors go with them, so deletes are read too.
        const bool v3 = loaded_.metadata->format_version >= 3;
        SKADE_ASSIGN_OR_RETURN(auto live, LiveFiles(*loaded_.metadata, *head, catalog_->io(), /*data_only=*/!v3));
        for (const auto& lf : live)
          if (lf.file.content == FileContent::kData &&
              touched.contains(PartitionTupleKey(lf.file.spec_id, lf.file.partition))) {
            removal.removed.insert(lf.file.file_path);
            removal.rows_deleted += lf.file.record_count;
          }
        for (const auto& lf : live)
          if (lf.file.IsDeletionVector() && removal.removed.contains(*lf.file.referenced_data_file))
            removal.removed.insert(lf.file.EntryKey());
      }
      return removal;
    }();
    if (!removal) {
      DiscardFiles(catalog_->io(), staged.files);
      return std::unexpected(removal.error());
    }
    int64_t added_rows = 0;
    for (const auto& f : staged.files) added_rows += f.record_count;
    FileChange change = ChangeFrom(*removal, staged.files, options, read, "overwrite");
    change.operation = "overwrite";
    return CommitFileChange(std::move(change), added_rows, removal->rows_deleted);
  });
}

}  // namespace skade
