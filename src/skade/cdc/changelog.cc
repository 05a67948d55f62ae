#include "skade/cdc/changelog.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "skade/expr/expression.h"
#include "skade/format/metadata_columns.h"
#include "skade/table/arrow_cells.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"
#include "skade/table/delete_index.h"
#include "skade/table/manifest_io.h"
#include "skade/table/scan.h"
#include "skade/table/table.h"

namespace skade::cdc {
namespace {

enum class Change { kInsert, kDelete, kUpdateBefore, kUpdateAfter };

const char* ChangeName(Change c) {
  switch (c) {
    case Change::kInsert:
      return "INSERT";
    case Change::kDelete:
      return "DELETE";
    case Change::kUpdateBefore:
      return "UPDATE_BEFORE";
    case Change::kUpdateAfter:
      return "UPDATE_AFTER";
  }
  return "?";
}

// One changed row: which batch and row, what happened.
struct RowRef {
  std::shared_ptr<arrow::RecordBatch> batch;
  int64_t row;
  Change change;
  int ordinal;
  int64_t snapshot_id;
};

// Identities of rows over some columns, for matching a DELETE with an INSERT: the
// columns read (carried-over rows) or the identifier columns (updates), hashed and
// compared cell by cell (CellColumn); columns are looked up once per batch.
class RowKeys {
 public:
  RowKeys(const Schema& schema, std::vector<int> ids) : schema_(schema), ids_(std::move(ids)) {}

  Result<uint64_t> Hash(const arrow::RecordBatch& batch, int64_t row) {
    SKADE_ASSIGN_OR_RETURN(const auto* cols, Columns(batch));
    uint64_t h = kRowHashSeed;
    for (const auto& col : *cols) h = CombineCellHash(h, col.Hash(row));
    return h;
  }

  Result<bool> Equal(const arrow::RecordBatch& a, int64_t ra, const arrow::RecordBatch& b, int64_t rb) {
    SKADE_ASSIGN_OR_RETURN(const auto* ca, Columns(a));
    SKADE_ASSIGN_OR_RETURN(const auto* cb, Columns(b));
    for (size_t c = 0; c < ca->size(); ++c)
      if (!(*ca)[c].Equal(ra, (*cb)[c], rb)) return false;
    return true;
  }

 private:
  Result<const std::vector<CellColumn>*> Columns(const arrow::RecordBatch& batch) {
    auto it = bound_.find(&batch);
    if (it != bound_.end()) return &it->second;
    std::vector<CellColumn> cols;
    for (int id : ids_) {
      auto col = ColumnForFieldId(batch, schema_, id);
      if (!col) return Internal("changelog column " + std::to_string(id) + " not read");
      cols.emplace_back(std::move(col));
    }
    return &(bound_[&batch] = std::move(cols));
  }

  const Schema& schema_;
  std::vector<int> ids_;
  std::unordered_map<const arrow::RecordBatch*, std::vector<CellColumn>> bound_;
};

// Live rows of one file as of a plan's snapshot, with positions (last column).
Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ReadFile(const ScanPlan& plan,
                                                                  const FileScanTask& task,
                                                                  const std::vector<int>& ids, FileIO* io) {
  ScanPlan one;  // the plan's settings, without copying its (many) tasks
  one.metadata = plan.metadata;
  one.snapshot = plan.snapshot;
  one.schema = plan.schema;
  one.projected_ids = ids;
  one.filter = plan.filter;
  one.tasks = {task};
  one.stats = std::make_shared<ScanStats>();
  one.emit_positions = true;
  SKADE_ASSIGN_OR_RETURN(auto reader, TableScan::Read(std::move(one), io));
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> b;
    auto st = reader->ReadNext(&b);
    if (!st.ok()) return std::unexpected(ErrorFromReader(st));
    if (!b) break;
    out.push_back(b);
  }
  return out;
}

std::map<std::string, const FileScanTask*> ByPath(const ScanPlan& plan) {
  std::map<std::string, const FileScanTask*> out;
  for (const auto& t : plan.tasks) out[t.file.file_path] = &t;
  return out;
}

std::set<std::string> DeletePaths(const FileScanTask& t) {
  std::set<std::string> out;
  for (const auto& d : t.deletes) out.insert(d.file->EntryKey());
  return out;
}

// What a range reads: the filter; the columns asked for (top-level field ids, with
// the identifier when updates are paired); and all columns, which a snapshot that
// both removes and adds rows reads, since its carried-over rows are recognised as
// whole rows (as Spark's changelog does) before the columns are cut.
struct ReadSpec {
  std::string filter;
  std::vector<int> ids;
  std::vector<int> all_ids;  // the table's columns: what tells rows apart
  std::vector<int> whole;    // those and the metadata columns asked for: what a whole row reads
  SchemaPtr schema;          // the table's current one, with the metadata columns asked for
};

Result<ScanPlan> PlanAt(const Table& table, int64_t snapshot_id, const ReadSpec& read) {
  TableScan scan = table.NewScan().UseSnapshot(snapshot_id);
  if (!read.filter.empty()) scan.Filter(read.filter);
  SKADE_ASSIGN_OR_RETURN(ScanPlan plan, scan.Plan());
  // Read with the table's current schema so every snapshot's rows line up.
  plan.schema = read.schema;
  plan.projected_ids = read.whole;
  return plan;
}

// Pairs a snapshot's DELETE and INSERT rows with the same identifier as updates,
// and drops identical DELETE/INSERT pairs (rows a rewrite carried over).
Status Reconcile(std::vector<RowRef>& rows, const Schema& schema, const std::vector<int>& read_ids,
                 bool compute_updates) {
  bool any_delete = false, any_insert = false;
  for (const auto& r : rows) (r.change == Change::kDelete ? any_delete : any_insert) = true;
  if (!any_delete || !any_insert) return {};  // nothing to pair
  // Matches each INSERT with an unmatched DELETE of the same key; calls `pair`.
  auto match = [&](RowKeys& keys, const std::function<void(size_t del, size_t ins)>& pair) -> Status {
    std::unordered_map<uint64_t, std::vector<size_t>> deleted;  // by hash; cells compared on a hit
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].change == Change::kDelete) {
        SKADE_ASSIGN_OR_RETURN(uint64_t h, keys.Hash(*rows[i].batch, rows[i].row));
        deleted[h].push_back(i);
      }
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].change != Change::kInsert) continue;
      SKADE_ASSIGN_OR_RETURN(uint64_t h, keys.Hash(*rows[i].batch, rows[i].row));
      auto it = deleted.find(h);
      if (it == deleted.end()) continue;
      auto& candidates = it->second;
      for (size_t c = candidates.size(); c-- > 0;) {
        const RowRef& d = rows[candidates[c]];
        SKADE_ASSIGN_OR_RETURN(bool same, keys.Equal(*d.batch, d.row, *rows[i].batch, rows[i].row));
        if (!same) continue;
        pair(candidates[c], i);
        candidates.erase(candidates.begin() + static_cast<long>(c));
        break;
      }
    }
    return {};
  };
  RowKeys whole(schema, read_ids);
  std::vector<bool> drop(rows.size(), false);
  SKADE_RETURN_IF_ERROR(match(whole, [&](size_t d, size_t i) { drop[d] = drop[i] = true; }));
  std::vector<RowRef> kept;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(rows[i]));
  rows = std::move(kept);
  if (!compute_updates) return {};
  RowKeys ids(schema, schema.identifier_field_ids());
  SKADE_RETURN_IF_ERROR(match(ids, [&](size_t d, size_t i) {
    rows[d].change = Change::kUpdateBefore;
    rows[i].change = Change::kUpdateAfter;
  }));
  // Before-images ahead of after-images, as Spark's changelog lists them.
  std::stable_partition(rows.begin(), rows.end(), [](const RowRef& r) {
    return r.change == Change::kDelete || r.change == Change::kUpdateBefore;
  });
  return {};
}

// Spark's net changes (RemoveNetCarryoverIterator): the range's raw changes of each
// row value (whole rows, carried-over copies included), ordered by ordinal with
// DELETE before INSERT, cancel pairwise; a value whose changes do not cancel out
// keeps the type, ordinal and snapshot of its first change since they last did.
Status NetChanges(std::vector<RowRef>& rows, const Schema& schema, const std::vector<int>& ids) {
  RowKeys whole(schema, ids);
  std::unordered_map<uint64_t, std::vector<size_t>> first_of;  // by hash: the groups' first rows
  std::vector<std::vector<size_t>> groups;
  std::vector<size_t> group_of_first(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SKADE_ASSIGN_OR_RETURN(uint64_t h, whole.Hash(*rows[i].batch, rows[i].row));
    auto& candidates = first_of[h];
    std::optional<size_t> group;
    for (size_t f : candidates) {
      SKADE_ASSIGN_OR_RETURN(bool same, whole.Equal(*rows[f].batch, rows[f].row, *rows[i].batch, rows[i].row));
      if (same) {
        group = group_of_first[f];
        break;
      }
    }
    if (!group) {
      candidates.push_back(i);
      group_of_first[i] = groups.size();
      group = groups.size();
      groups.emplace_back();
    }
    groups[*group].push_back(i);
  }
  std::vector<RowRef> kept;
  for (auto& g : groups) {
    std::stable_sort(g.begin(), g.end(), [&](size_t a, size_t b) {
      if (rows[a].ordinal != rows[b].ordinal) return rows[a].ordinal < rows[b].ordinal;
      return rows[a].change == Change::kDelete && rows[b].change != Change::kDelete;
    });
    for (size_t k = 0; k < g.size();) {
      const RowRef& first = rows[g[k]];
      int64_t count = 1;
      for (++k; k < g.size() && count > 0; ++k) count += rows[g[k]].change == first.change ? 1 : -1;
      for (; count > 0; --count) kept.push_back(first);
    }
  }
  rows = std::move(kept);
  return {};
}

// The plan of snapshot `s` from its parent's plan, reading only the manifests `s`
// wrote: a range of many commits would otherwise re-read every manifest of every
// snapshot. Files the parent's plan pruned by the filter stay pruned (their rows
// cannot match); files `s` added are read and filtered row by row.
Result<ScanPlan> AdvancePlan(const Table& table, const ScanPlan& parent, const Snapshot& s) {
  const TableMetadata& m = *parent.metadata;
  FileIO& io = table.catalog().io();
  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(s, io));
  std::set<std::string> removed;
  std::vector<ManifestEntry> added;
  DeleteIndex new_deletes;
  for (const auto& mf : list) {
    if (mf.added_snapshot_id != s.snapshot_id) continue;
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, *parent.schema, io));
    for (auto& e : entries) {
      if (e.snapshot_id != s.snapshot_id) continue;  // carried over by a manifest rewrite
      if (e.status == EntryStatus::kDeleted) {
        removed.insert(e.data_file.EntryKey());
      } else if (e.status == EntryStatus::kAdded) {
        if (e.data_file.content == FileContent::kData)
          added.push_back(std::move(e));
        else
          new_deletes.Add(DeleteFileEntry{std::make_shared<const DataFile>(std::move(e.data_file)), e.sequence_number.value_or(0)});
      }
    }
  }
  ScanPlan plan;
  plan.metadata = parent.metadata;
  plan.snapshot = &s;
  plan.schema = parent.schema;
  plan.projected_ids = parent.projected_ids;
  plan.filter = parent.filter;
  plan.stats = std::make_shared<ScanStats>();
  auto applicable = [&](const DataFile& f, int64_t seq) {
    return new_deletes.empty() ? std::vector<DeleteFileEntry>{} : new_deletes.For(f, seq, m);
  };
  for (const auto& t : parent.tasks) {
    if (removed.contains(t.file.file_path)) continue;
    FileScanTask next = t;
    std::erase_if(next.deletes, [&](const DeleteFileEntry& d) { return removed.contains(d.file->EntryKey()); });
    for (auto& d : applicable(t.file, t.data_sequence_number)) next.deletes.push_back(std::move(d));
    plan.tasks.push_back(std::move(next));
  }
  for (auto& e : added) {
    int64_t seq = e.sequence_number.value_or(0);
    auto deletes = applicable(e.data_file, seq);
    plan.tasks.push_back(FileScanTask{std::move(e.data_file), seq, std::move(deletes), nullptr});
  }
  return plan;
}

// What one range's snapshots share: each snapshot's plan is the next one's parent
// plan, and decoded rows of data files (no deletes applied) are kept from one
// snapshot to the next, since consecutive snapshots mostly touch the same files.
class RangeCache {
 public:
  RangeCache(const Table& table, ReadSpec read)
      : table_(table), read_(std::move(read)), loader_(&table.catalog().io(), table.metadata()->schema()) {}
  void NextSnapshot() {
    previous_ = std::move(current_);
    current_.clear();
    while (plans_.size() > 1) plans_.pop_front();  // the last snapshot's plan: the next one's parent
  }
  /// Plan the parent before the snapshot, so the snapshot's plan is the one kept
  /// (and the next snapshot's plan is derived from it).
  Result<const ScanPlan*> Plan(const Snapshot& s) {
    for (const auto& [id, plan] : plans_)
      if (id == s.snapshot_id) return &plan;
    ScanPlan plan;
    if (!plans_.empty() && s.parent_snapshot_id == plans_.back().first) {
      SKADE_ASSIGN_OR_RETURN(plan, AdvancePlan(table_, plans_.back().second, s));
    } else {
      SKADE_ASSIGN_OR_RETURN(plan, PlanAt(table_, s.snapshot_id, read_));
    }
    int64_t snapshot_id = s.snapshot_id;
    plans_.emplace_back(snapshot_id, std::move(plan));  // a deque: earlier plans stay put
    return &plans_.back().second;
  }
  /// The file's rows with no deletes applied, with the plan's columns plus those
  /// the task's equality deletes compare.
  Result<const std::vector<std::shared_ptr<arrow::RecordBatch>>*> Rows(const ScanPlan& plan,
                                                                      const FileScanTask& task,
                                                                      const std::vector<int>& columns) {
    std::set<int> ids(columns.begin(), columns.end());
    for (const auto& d : task.deletes) ids.insert(d.file->equality_ids.begin(), d.file->equality_ids.end());
    const std::string& path = task.file.file_path;
    auto covers = [&](const Decoded& d) { return std::includes(d.ids.begin(), d.ids.end(), ids.begin(), ids.end()); };
    if (auto it = current_.find(path); it != current_.end() && covers(it->second)) return &it->second.batches;
    if (auto it = previous_.find(path); it != previous_.end() && covers(it->second)) {
      auto& kept = current_[path] = std::move(it->second);
      previous_.erase(it);
      return &kept.batches;
    }
    FileScanTask bare = task;
    bare.deletes.clear();
    SKADE_ASSIGN_OR_RETURN(auto rows, ReadFile(plan, bare, std::vector<int>(ids.begin(), ids.end()),
                                               &table_.catalog().io()));
    auto& slot = current_[path] = Decoded{std::move(ids), std::move(rows)};
    return &slot.batches;
  }
  DeleteLoader& loader() { return loader_; }
  const ReadSpec& read() const { return read_; }

 private:
  struct Decoded {
    std::set<int> ids;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  };
  const Table& table_;
  ReadSpec read_;
  DeleteLoader loader_;
  std::deque<std::pair<int64_t, ScanPlan>> plans_;
  std::map<std::string, Decoded> current_, previous_;
};

// Rows of `task`'s file that its delete files `fresh` remove and `old` did not:
// evaluated on the decoded file, so the file is not read once per snapshot state.
Status NewlyDeleted(const ScanPlan& plan, const FileScanTask& task,
                    const std::vector<DeleteFileEntry>& fresh, const std::vector<DeleteFileEntry>& old,
                    const std::vector<int>& ids, RangeCache& raw,
                    const std::function<void(std::shared_ptr<arrow::RecordBatch>, int64_t)>& emit) {
  SKADE_ASSIGN_OR_RETURN(const auto* batches, raw.Rows(plan, task, ids));
  SKADE_ASSIGN_OR_RETURN(DeletedRows now_gone, raw.loader().Load(task.file, task.data_sequence_number, fresh));
  SKADE_ASSIGN_OR_RETURN(DeletedRows was_gone, raw.loader().Load(task.file, task.data_sequence_number, old));
  InitArrowCompute();
  for (const auto& b : *batches) {
    const auto& pos = static_cast<const arrow::Int64Array&>(*b->column(b->num_columns() - 1));
    SKADE_ASSIGN_OR_RETURN(auto hit, DeletedFlags(now_gone, *b, *plan.schema,
                                                  [&](int64_t r) { return pos.Value(r); }));
    arrow::Int64Builder rows;
    for (size_t r = 0; r < hit.size(); ++r)
      if (hit[r]) SKADE_ARROW_RETURN(rows.Append(static_cast<int64_t>(r)), "changelog");
    if (rows.length() == 0) continue;
    std::shared_ptr<arrow::Array> idx;
    SKADE_ARROW_RETURN(rows.Finish(&idx), "changelog");
    SKADE_ARROW_ASSIGN(auto taken, arrow::compute::Take(b, idx), "changelog");
    auto sub = taken.record_batch();
    const auto& sub_pos = static_cast<const arrow::Int64Array&>(*sub->column(sub->num_columns() - 1));
    std::vector<bool> before(static_cast<size_t>(sub->num_rows()), false);
    if (!was_gone.empty()) {
      SKADE_ASSIGN_OR_RETURN(before, DeletedFlags(was_gone, *sub, *plan.schema,
                                                  [&](int64_t r) { return sub_pos.Value(r); }));
    }
    for (int64_t r = 0; r < sub->num_rows(); ++r)
      if (!before[static_cast<size_t>(r)]) emit(sub, r);
  }
  return {};
}

// The changes of one snapshot relative to its parent, touching only files that differ.
Status SnapshotChanges(const Table& table, const Snapshot& s, const Snapshot* parent, int ordinal,
                       RangeCache& cache, std::vector<RowRef>* out) {
  cache.NextSnapshot();
  FileIO* io = &table.catalog().io();
  const ScanPlan* at_p = nullptr;
  if (parent) {
    SKADE_ASSIGN_OR_RETURN(at_p, cache.Plan(*parent));
  }
  SKADE_ASSIGN_OR_RETURN(const ScanPlan* at_s_ptr, cache.Plan(s));
  if (s.operation() == "replace") return {};  // planned all the same: the next snapshot's parent
  const ScanPlan& at_s = *at_s_ptr;
  auto now = ByPath(at_s);
  std::map<std::string, const FileScanTask*> before;
  if (at_p) before = ByPath(*at_p);
  auto add = [&](const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches, Change c) {
    for (const auto& b : batches)
      for (int64_t r = 0; r < b->num_rows(); ++r) out->push_back(RowRef{b, r, c, ordinal, s.snapshot_id});
  };
  // Only a snapshot that both adds and removes rows can carry rows over, and those
  // are recognised on whole rows: it reads every column, others the ones asked for.
  bool adds = false, removes = false;
  for (const auto& [path, task] : now) {
    auto it = before.find(path);
    if (it == before.end()) adds = true;
    else if (DeletePaths(*task) != DeletePaths(*it->second)) removes = true;
  }
  for (const auto& [path, task] : before) removes = removes || !now.contains(path);
  const std::vector<int>& ids = adds && removes ? cache.read().whole : cache.read().ids;
  for (const auto& [path, task] : now) {
    auto it = before.find(path);
    if (it == before.end()) {
      SKADE_ASSIGN_OR_RETURN(auto rows, ReadFile(at_s, *task, ids, io));
      add(rows, Change::kInsert);
      continue;
    }
    std::set<std::string> had = DeletePaths(*it->second), has = DeletePaths(*task);
    if (had == has) continue;  // untouched
    std::vector<DeleteFileEntry> fresh;
    for (const auto& d : task->deletes)
      if (!had.contains(d.file->EntryKey())) fresh.push_back(d);
    // A new deletion vector replaces the file's older position deletes and holds their
    // positions too (spec): only the rows it adds are new deletes. Any other dropped
    // delete file would bring rows back, which a changelog cannot say.
    bool superseded = std::any_of(fresh.begin(), fresh.end(), [](const auto& d) { return d.file->IsDeletionVector(); }) &&
                      std::all_of(it->second->deletes.begin(), it->second->deletes.end(), [&](const auto& d) {
                        return has.contains(d.file->EntryKey()) || d.file->content == FileContent::kPositionDeletes;
                      });
    if (!superseded && !std::includes(has.begin(), has.end(), had.begin(), had.end()))
      return Unsupported("snapshot " + std::to_string(s.snapshot_id) + " dropped delete files of " +
                         path + " without rewriting it");
    SKADE_RETURN_IF_ERROR(NewlyDeleted(*at_p, *task, fresh, it->second->deletes, ids, cache,
                                       [&](std::shared_ptr<arrow::RecordBatch> b, int64_t r) {
                                         out->push_back(RowRef{std::move(b), r, Change::kDelete,
                                                               ordinal, s.snapshot_id});
                                       }));
  }
  for (const auto& [path, task] : before)
    if (!now.contains(path)) {
      SKADE_ASSIGN_OR_RETURN(auto rows, ReadFile(*at_p, *task, ids, io));
      add(rows, Change::kDelete);
    }
  return {};
}

}  // namespace

Result<std::vector<const Snapshot*>> SnapshotsBetween(const TableMetadata& m,
                                                      std::optional<int64_t> from,
                                                      std::optional<int64_t> to) {
  std::optional<int64_t> end = to ? to : m.current_snapshot_id;
  if (to && !m.SnapshotById(*to)) return NotFound("snapshot " + std::to_string(*to) + " does not exist");
  std::vector<const Snapshot*> chain = end ? m.Ancestors(*end) : std::vector<const Snapshot*>{};
  if (from) {
    auto at = std::find_if(chain.begin(), chain.end(), [&](const Snapshot* s) { return s->snapshot_id == *from; });
    if (at == chain.end())
      return NotFound("snapshot " + std::to_string(*from) + " is not an ancestor of snapshot " +
                      (end ? std::to_string(*end) : std::string("(none)")) +
                      " (not in the history: rolled back, expired, or never there)");
    chain.erase(at, chain.end());
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

Schema ChangelogSchema(const Schema& table_schema, const std::vector<std::string>& columns) {
  std::vector<NestedField> fields = table_schema.fields();
  if (!columns.empty()) {
    // Metadata columns as ReadChangelog reads them; it has reported those the table lacks.
    std::vector<std::string> reported;
    const int any_version = 3;
    auto with_metadata =
        WithMetadataColumns(std::make_shared<const Schema>(table_schema), columns, any_version, reported);
    fields = ProjectColumns(*with_metadata, columns).output->fields();
  }
  fields.push_back(NestedField{2147483001, "_change_type", true, Type::Primitive(TypeId::kString), ""});
  fields.push_back(NestedField{2147483002, "_change_ordinal", true, Type::Primitive(TypeId::kInt), ""});
  fields.push_back(NestedField{2147483003, "_commit_snapshot_id", true, Type::Primitive(TypeId::kLong), ""});
  return Schema(table_schema.schema_id(), std::move(fields), table_schema.identifier_field_ids());
}

Result<std::shared_ptr<arrow::Table>> ReadChangelog(const Table& table, std::optional<int64_t> from,
                                                    std::optional<int64_t> to,
                                                    const ChangelogOptions& options) {
  const TableMetadata& m = *table.metadata();
  const Schema& schema = *m.schema();
  if (options.compute_updates && schema.identifier_field_ids().empty())
    return InvalidArgument("compute_updates needs identifier fields; table " +
                           table.ident().ToString() + " has none");
  std::vector<int> out_ids;
  SchemaPtr out_fields = m.schema();  // what is output of each column
  // Metadata columns asked for (`_row_id`, `_file`, ...) are read with each change's row,
  // as a scan reads them: a deleted row's from the file it leaves.
  std::vector<std::string> problems;
  SchemaPtr read_schema = WithMetadataColumns(m.schema(), options.columns, m.format_version, problems);
  if (!problems.empty()) return InvalidArgument(JoinProblems(problems));
  if (options.columns.empty()) {
    for (const auto& f : schema.fields()) out_ids.push_back(f.id);
  } else {
    Projection p = ProjectColumns(*read_schema, options.columns);
    if (!p.unknown.empty())
      return InvalidArgument("unknown column '" + p.unknown.front() + "' (columns: " + schema.ColumnNames() + ")");
    out_ids = std::move(p.ids);
    out_fields = std::move(p.output);
  }
  if (!options.filter.empty()) {  // checked before any manifest or file is read
    SKADE_ASSIGN_OR_RETURN(expr::ExprPtr parsed, expr::Parse(options.filter));
    SKADE_RETURN_IF_ERROR(expr::Bind(parsed, schema));
  }
  ReadSpec read{options.filter, out_ids, {}, {}, read_schema};
  for (const auto& f : schema.fields()) read.all_ids.push_back(f.id);
  read.whole = read.all_ids;
  for (int id : out_ids)
    if (IsMetadataField(id)) read.whole.push_back(id);
  if (options.compute_updates)
    for (int id : schema.identifier_field_ids())
      if (std::find(read.ids.begin(), read.ids.end(), id) == read.ids.end()) read.ids.push_back(id);
  SKADE_ASSIGN_OR_RETURN(auto chain, SnapshotsBetween(m, from, to));
  // "Since the table was created" cannot be answered once the first snapshots are
  // gone: the oldest one left would show as the whole history.
  if (!from && !chain.empty() && chain.front()->parent_snapshot_id &&
      !m.SnapshotById(*chain.front()->parent_snapshot_id))
    return NotFound("the snapshots before " + std::to_string(chain.front()->snapshot_id) + " of " +
                    table.ident().ToString() + " were expired, so the changes since the table was created are "
                    "no longer known; ask for the changes after a snapshot that is left (e.g. --from " +
                    std::to_string(chain.front()->snapshot_id) + ")");

  // Net changes group whole rows, so every snapshot is read with all columns.
  if (options.net_changes) read.ids = read.whole;
  std::vector<RowRef> rows;
  RangeCache cache(table, read);
  // Ordinals number the snapshots that change rows: `replace` (compaction) takes none,
  // as in Spark's changelog.
  int ordinal = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    const Snapshot* parent =
        chain[i]->parent_snapshot_id ? m.SnapshotById(*chain[i]->parent_snapshot_id) : nullptr;
    std::vector<RowRef> one;
    SKADE_RETURN_IF_ERROR(SnapshotChanges(table, *chain[i], parent, ordinal, cache, &one));
    if (chain[i]->operation() != "replace") ++ordinal;
    if (!options.net_changes)
      SKADE_RETURN_IF_ERROR(Reconcile(one, schema, read.all_ids, options.compute_updates));
    rows.insert(rows.end(), std::make_move_iterator(one.begin()),
                std::make_move_iterator(one.end()));
  }
  if (options.net_changes) {
    SKADE_RETURN_IF_ERROR(NetChanges(rows, schema, read.all_ids));
    if (options.compute_updates)
      SKADE_RETURN_IF_ERROR(Reconcile(rows, schema, read.all_ids, /*compute_updates=*/true));
  }

  // Assemble: projected columns from each row's batch, then the metadata columns.
  auto out_schema = ToArrowSchema(*out_fields, out_ids);
  out_schema = *out_schema->AddField(out_schema->num_fields(),
                                     arrow::field("_change_type", arrow::utf8(), false));
  out_schema = *out_schema->AddField(out_schema->num_fields(),
                                     arrow::field("_change_ordinal", arrow::int32(), false));
  out_schema = *out_schema->AddField(out_schema->num_fields(),
                                     arrow::field("_commit_snapshot_id", arrow::int64(), false));
  InitArrowCompute();
  std::vector<std::shared_ptr<arrow::RecordBatch>> pieces;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    arrow::Int64Builder idx;
    arrow::StringBuilder types;
    arrow::Int32Builder ords;
    arrow::Int64Builder snaps;
    while (j < rows.size() && rows[j].batch == rows[i].batch) {
      SKADE_ARROW_RETURN(idx.Append(rows[j].row), "changelog");
      SKADE_ARROW_RETURN(types.Append(ChangeName(rows[j].change)), "changelog");
      SKADE_ARROW_RETURN(ords.Append(rows[j].ordinal), "changelog");
      SKADE_ARROW_RETURN(snaps.Append(rows[j].snapshot_id), "changelog");
      ++j;
    }
    std::shared_ptr<arrow::Array> ia, ta, oa, sa;
    SKADE_ARROW_RETURN(idx.Finish(&ia), "changelog");
    SKADE_ARROW_RETURN(types.Finish(&ta), "changelog");
    SKADE_ARROW_RETURN(ords.Finish(&oa), "changelog");
    SKADE_ARROW_RETURN(snaps.Finish(&sa), "changelog");
    const auto& b = rows[i].batch;
    arrow::ArrayVector cols;
    for (int id : out_ids) {
      int c = -1;
      for (int k = 0; k < b->num_columns(); ++k)
        if (FieldIdOf(*b->schema()->field(k)) == id) c = k;
      if (c < 0) return Internal("changelog column " + std::to_string(id) + " missing");
      SKADE_ARROW_ASSIGN(auto taken, arrow::compute::Take(b->column(c), ia), "changelog");
      cols.push_back(PruneArray(taken.make_array(), *out_fields->FindField(id)));
    }
    cols.push_back(ta);
    cols.push_back(oa);
    cols.push_back(sa);
    pieces.push_back(arrow::RecordBatch::Make(out_schema, ia->length(), cols));
    i = j;
  }
  SKADE_ARROW_ASSIGN(auto result, arrow::Table::FromRecordBatches(out_schema, pieces), "changelog");
  return result;
}

}  // namespace skade::cdc
