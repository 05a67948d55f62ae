#include "skade/cdc/changelog.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"
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

// A text identity of a whole row (all columns), for cancelling carried-over rows.
Result<std::string> RowKey(const arrow::RecordBatch& batch, const Schema& schema, int64_t row) {
  std::string key;
  for (int c = 0; c < batch.num_columns(); ++c) {
    if (FieldIdOf(*batch.schema()->field(c)) < 0) continue;  // `_pos` is not row content
    const auto& col = *batch.column(c);
    if (col.IsNull(row)) {
      key += "\x01N";
      continue;
    }
    int id = FieldIdOf(*batch.schema()->field(c));
    const NestedField* f = id >= 0 ? schema.FindField(id) : nullptr;
    if (f && f->type->is_primitive()) {
      SKADE_ASSIGN_OR_RETURN(Value v, ValueAt(col, row, *f->type));
      SKADE_ASSIGN_OR_RETURN(std::string b, SerializeValue(*f->type, v));
      key += "\x01" + std::to_string(b.size()) + ":" + b;
    } else {
      auto scalar = col.GetScalar(row);
      key += "\x01" + (scalar.ok() ? (*scalar)->ToString() : std::string("?"));
    }
  }
  return key;
}

Result<std::string> IdentifierKey(const arrow::RecordBatch& batch, const Schema& schema,
                                  int64_t row) {
  std::string key;
  for (int id : schema.identifier_field_ids()) {
    const NestedField* f = schema.FindField(id);
    auto col = ColumnForFieldId(batch, schema, id);
    if (!f || !col)
      return InvalidArgument("identifier column " + std::to_string(id) + " not readable");
    SKADE_ASSIGN_OR_RETURN(Value v, ValueAt(*col, row, *f->type));
    if (IsNull(v)) {
      key += "\x01N";
      continue;
    }
    SKADE_ASSIGN_OR_RETURN(std::string b, SerializeValue(*f->type, v));
    key += "\x01" + std::to_string(b.size()) + ":" + b;
  }
  return key;
}

// Live rows of one file as of a plan's snapshot, with positions (last column).
Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ReadFile(const ScanPlan& plan,
                                                                  const FileScanTask& task,
                                                                  FileIO* io) {
  ScanPlan one = plan;
  one.tasks = {task};
  one.stats = std::make_shared<ScanStats>();
  one.emit_positions = true;
  one.limit = -1;
  SKADE_ASSIGN_OR_RETURN(auto reader, TableScan::Read(one, io));
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
  for (const auto& d : t.deletes) out.insert(d.file.file_path);
  return out;
}

Result<ScanPlan> PlanAt(const Table& table, int64_t snapshot_id, const std::string& filter) {
  TableScan scan = table.NewScan().UseSnapshot(snapshot_id);
  if (!filter.empty()) scan.Filter(filter);
  SKADE_ASSIGN_OR_RETURN(ScanPlan plan, scan.Plan());
  // Read with the table's current schema so every snapshot's rows line up.
  plan.schema = table.metadata()->schema();
  plan.projected_ids.clear();
  for (const auto& f : plan.schema->fields()) plan.projected_ids.push_back(f.id);
  return plan;
}

// Pairs a snapshot's DELETE and INSERT rows with the same identifier as updates,
// and drops identical DELETE/INSERT pairs (rows a rewrite carried over).
Status Reconcile(std::vector<RowRef>& rows, const Schema& schema, bool compute_updates) {
  std::unordered_map<std::string, std::vector<size_t>> deleted;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].change == Change::kDelete) {
      SKADE_ASSIGN_OR_RETURN(std::string k, RowKey(*rows[i].batch, schema, rows[i].row));
      deleted[k].push_back(i);
    }
  std::vector<bool> drop(rows.size(), false);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].change != Change::kInsert) continue;
    SKADE_ASSIGN_OR_RETURN(std::string k, RowKey(*rows[i].batch, schema, rows[i].row));
    auto it = deleted.find(k);
    if (it == deleted.end() || it->second.empty()) continue;
    drop[it->second.back()] = true;
    drop[i] = true;
    it->second.pop_back();
  }
  std::vector<RowRef> kept;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(rows[i]));
  rows = std::move(kept);
  if (!compute_updates) return {};
  std::unordered_map<std::string, std::vector<size_t>> del_by_id;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].change == Change::kDelete) {
      SKADE_ASSIGN_OR_RETURN(std::string k, IdentifierKey(*rows[i].batch, schema, rows[i].row));
      del_by_id[k].push_back(i);
    }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].change != Change::kInsert) continue;
    SKADE_ASSIGN_OR_RETURN(std::string k, IdentifierKey(*rows[i].batch, schema, rows[i].row));
    auto it = del_by_id.find(k);
    if (it == del_by_id.end() || it->second.empty()) continue;
    rows[it->second.back()].change = Change::kUpdateBefore;
    rows[i].change = Change::kUpdateAfter;
    it->second.pop_back();
  }
  return {};
}

// The changes of one snapshot relative to its parent, touching only files that differ.
Status SnapshotChanges(const Table& table, const Snapshot& s, const Snapshot* parent, int ordinal,
                       const std::string& filter, std::vector<RowRef>* out) {
  if (s.operation() == "replace") return {};
  FileIO* io = &table.catalog().io();
  SKADE_ASSIGN_OR_RETURN(ScanPlan at_s, PlanAt(table, s.snapshot_id, filter));
  std::optional<ScanPlan> at_p;
  if (parent) {
    SKADE_ASSIGN_OR_RETURN(at_p, PlanAt(table, parent->snapshot_id, filter));
  }
  auto now = ByPath(at_s);
  std::map<std::string, const FileScanTask*> before;
  if (at_p) before = ByPath(*at_p);
  auto add = [&](const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches, Change c,
                 const std::unordered_set<int64_t>* skip_positions) {
    for (const auto& b : batches) {
      const auto& pos = static_cast<const arrow::Int64Array&>(*b->column(b->num_columns() - 1));
      for (int64_t r = 0; r < b->num_rows(); ++r)
        if (!skip_positions || !skip_positions->contains(pos.Value(r)))
          out->push_back(RowRef{b, r, c, ordinal, s.snapshot_id});
    }
  };
  for (const auto& [path, task] : now) {
    auto it = before.find(path);
    if (it == before.end()) {
      SKADE_ASSIGN_OR_RETURN(auto rows, ReadFile(at_s, *task, io));
      add(rows, Change::kInsert, nullptr);
      continue;
    }
    if (DeletePaths(*task) == DeletePaths(*it->second)) continue;  // untouched
    // New deletes reached this file: rows live before but not now were deleted.
    SKADE_ASSIGN_OR_RETURN(auto still, ReadFile(at_s, *task, io));
    std::unordered_set<int64_t> live;
    for (const auto& b : still) {
      const auto& pos = static_cast<const arrow::Int64Array&>(*b->column(b->num_columns() - 1));
      for (int64_t r = 0; r < b->num_rows(); ++r) live.insert(pos.Value(r));
    }
    SKADE_ASSIGN_OR_RETURN(auto was, ReadFile(*at_p, *it->second, io));
    add(was, Change::kDelete, &live);
  }
  for (const auto& [path, task] : before)
    if (!now.contains(path)) {
      SKADE_ASSIGN_OR_RETURN(auto rows, ReadFile(*at_p, *task, io));
      add(rows, Change::kDelete, nullptr);
    }
  return {};
}

// Rows of a whole snapshot (for net changes).
Status SnapshotRows(const Table& table, std::optional<int64_t> snapshot, const std::string& filter,
                    Change change, std::vector<RowRef>* out) {
  if (!snapshot) return {};
  SKADE_ASSIGN_OR_RETURN(ScanPlan plan, PlanAt(table, *snapshot, filter));
  FileIO* io = &table.catalog().io();
  for (const auto& t : plan.tasks) {
    SKADE_ASSIGN_OR_RETURN(auto rows, ReadFile(plan, t, io));
    for (const auto& b : rows)
      for (int64_t r = 0; r < b->num_rows(); ++r) out->push_back(RowRef{b, r, change, 0, 0});
  }
  return {};
}

}  // namespace

Schema ChangelogSchema(const Schema& table_schema) {
  std::vector<NestedField> fields = table_schema.fields();
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
  if (options.columns.empty()) {
    for (const auto& f : schema.fields()) out_ids.push_back(f.id);
  } else {
    for (const auto& c : options.columns) {
      const NestedField* f = schema.FindTopLevel(c);
      if (!f)
        return InvalidArgument("unknown column '" + c + "' (columns: " + schema.ColumnNames() +
                               ")");
      out_ids.push_back(f->id);
    }
  }
  if (!options.filter.empty()) {
    SKADE_RETURN_IF_ERROR(table.NewScan().Filter(options.filter).Plan());  // validate early
  }
  const Snapshot* end = to ? m.SnapshotById(*to) : m.CurrentSnapshot();
  if (to && !end) return NotFound("snapshot " + std::to_string(*to) + " does not exist");
  // The snapshots after `from`, oldest first.
  std::vector<const Snapshot*> chain;
  bool reached = !from;
  for (const Snapshot* s = end; s;
       s = s->parent_snapshot_id ? m.SnapshotById(*s->parent_snapshot_id) : nullptr) {
    if (from && s->snapshot_id == *from) {
      reached = true;
      break;
    }
    chain.push_back(s);
  }
  if (!reached)
    return NotFound("snapshot " + std::to_string(*from) + " is not an ancestor of snapshot " +
                    (end ? std::to_string(end->snapshot_id) : std::string("(none)")));
  std::reverse(chain.begin(), chain.end());

  std::vector<RowRef> rows;
  if (options.net_changes) {
    SKADE_RETURN_IF_ERROR(SnapshotRows(table, from, options.filter, Change::kDelete, &rows));
    SKADE_RETURN_IF_ERROR(
        SnapshotRows(table, end ? std::optional<int64_t>(end->snapshot_id) : std::nullopt,
                     options.filter, Change::kInsert, &rows));
    for (auto& r : rows) r.snapshot_id = end ? end->snapshot_id : 0;
    SKADE_RETURN_IF_ERROR(Reconcile(rows, schema, options.compute_updates));
  } else {
    for (size_t i = 0; i < chain.size(); ++i) {
      const Snapshot* parent =
          chain[i]->parent_snapshot_id ? m.SnapshotById(*chain[i]->parent_snapshot_id) : nullptr;
      std::vector<RowRef> one;
      SKADE_RETURN_IF_ERROR(
          SnapshotChanges(table, *chain[i], parent, static_cast<int>(i), options.filter, &one));
      SKADE_RETURN_IF_ERROR(Reconcile(one, schema, options.compute_updates));
      rows.insert(rows.end(), std::make_move_iterator(one.begin()),
                  std::make_move_iterator(one.end()));
    }
  }

  // Assemble: projected columns from each row's batch, then the metadata columns.
  auto out_schema = ToArrowSchema(schema, out_ids);
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
      cols.push_back(taken.make_array());
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
