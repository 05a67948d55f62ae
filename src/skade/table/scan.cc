#include "skade/table/scan.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <cstring>
#include <map>

#include "skade/expr/arrow_filter.h"
#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"
#include "skade/table/manifest_io.h"
#include "skade/table/parquet_stats.h"

namespace skade {
namespace {

// The child of a file's nested type that carries `target` (by field id, else name).
int FindChild(const arrow::DataType& file_type, const NestedField& target) {
  const auto& fields = file_type.fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (FieldIdOf(*fields[i]) == target.id) return static_cast<int>(i);
  for (size_t i = 0; i < fields.size(); ++i)
    if (FieldIdOf(*fields[i]) < 0 && fields[i]->name() == target.name) return static_cast<int>(i);
  return -1;
}

// Lines a column read from a file up with the table's field: nested children are
// matched by field id (so renames and added fields read right), missing children
// read as null, promoted primitives are cast.
Result<std::shared_ptr<arrow::Array>> ConformArray(const std::shared_ptr<arrow::Array>& arr, const NestedField& target,
                                                   const std::string& where) {
  auto want = ToArrowType(*target.type);
  if (arr->type()->Equals(*want, /*check_metadata=*/false)) {
    auto view = arr->View(want);
    return view.ok() ? *view : arr;
  }
  const Type& t = *target.type;
  const auto& data = arr->data();
  switch (t.id) {
    case TypeId::kStruct: {
      if (arr->type_id() != arrow::Type::STRUCT) break;
      arrow::ArrayVector children;
      for (const auto& child : t.fields) {
        int idx = FindChild(*arr->type(), child);
        int64_t child_len = data->offset + data->length;
        if (idx < 0) {
          SKADE_ARROW_ASSIGN(auto nulls, arrow::MakeArrayOfNull(ToArrowType(*child.type), child_len), where);
          children.push_back(nulls);
          continue;
        }
        SKADE_ASSIGN_OR_RETURN(auto c, ConformArray(arrow::MakeArray(data->child_data[idx]), child, where));
        children.push_back(c);
      }
      return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::StructArray>(
          want, data->length, children, data->buffers[0], data->null_count, data->offset));
    }
    case TypeId::kList: {
      if (arr->type_id() == arrow::Type::LARGE_LIST || arr->type_id() == arrow::Type::LIST_VIEW ||
          arr->type_id() == arrow::Type::LARGE_LIST_VIEW) {
        // Writers that keep pyarrow's schema (PyIceberg) read back as large lists.
        InitArrowCompute();
        auto value_field = arr->type()->field(0);
        SKADE_ARROW_ASSIGN(auto small, arrow::compute::Cast(*arr, arrow::list(value_field),
                                                            arrow::compute::CastOptions::Safe()),
                           where + " column " + target.name);
        return ConformArray(small, target, where);
      }
      if (arr->type_id() != arrow::Type::LIST) break;
      const auto& la = static_cast<const arrow::ListArray&>(*arr);
      SKADE_ASSIGN_OR_RETURN(auto values, ConformArray(la.values(), t.element(), where));
      return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::ListArray>(
          want, data->length, la.value_offsets(), values, data->buffers[0], data->null_count, data->offset));
    }
    case TypeId::kMap: {
      if (arr->type_id() != arrow::Type::MAP) break;
      const auto& ma = static_cast<const arrow::MapArray&>(*arr);
      SKADE_ASSIGN_OR_RETURN(auto keys, ConformArray(ma.keys(), t.key(), where));
      SKADE_ASSIGN_OR_RETURN(auto items, ConformArray(ma.items(), t.value(), where));
      return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::MapArray>(
          want, data->length, ma.value_offsets(), keys, items, data->buffers[0], data->null_count, data->offset));
    }
    default: {
      InitArrowCompute();
      SKADE_ARROW_ASSIGN(auto cast, arrow::compute::Cast(*arr, want, arrow::compute::CastOptions::Safe()),
                         where + " column " + target.name);
      return cast;
    }
  }
  return Corrupt(where + ": column " + target.name + " has type " + arr->type()->ToString() + ", expected " +
                 t.ToString());
}

// Leaf column indices below a Parquet schema field.
void CollectLeaves(const parquet::arrow::SchemaField& f, std::vector<int>* out) {
  if (f.is_leaf()) out->push_back(f.column_index);
  for (const auto& c : f.children) CollectLeaves(c, out);
}

// Streams the planned files one at a time: prune row groups, read the needed
// columns, line them up with the read schema by field id, filter, project, limit.
class ScanReader final : public arrow::RecordBatchReader {
 public:
  ScanReader(ScanPlan plan, FileIO* io) : plan_(std::move(plan)), io_(io) {
    std::vector<int> read_ids = plan_.projected_ids;
    if (plan_.filter)
      for (int id : expr::ReferencedFieldIds(*plan_.filter)) {
        int top = TopLevelOf(id);
        if (top >= 0 && std::find(read_ids.begin(), read_ids.end(), top) == read_ids.end())
          read_ids.push_back(top);
      }
    for (const auto& t : plan_.tasks)
      for (const auto& d : t.deletes)
        for (int id : d.file.equality_ids) {
          int top = TopLevelOf(id);
          if (top >= 0 && std::find(read_ids.begin(), read_ids.end(), top) == read_ids.end())
            read_ids.push_back(top);
        }
    read_ids_ = read_ids;
    loader_ = std::make_unique<DeleteLoader>(io_, plan_.schema);
    read_schema_ = ToArrowSchema(*plan_.schema, read_ids_);
    conform_schema_ = read_schema_;
    out_schema_ = ToArrowSchema(*plan_.schema, plan_.projected_ids);
    if (plan_.emit_positions) {
      auto pos = arrow::field("_pos", arrow::int64(), false);
      read_schema_ = *read_schema_->AddField(read_schema_->num_fields(), pos);
      out_schema_ = *out_schema_->AddField(out_schema_->num_fields(), pos);
    }
  }

  std::shared_ptr<arrow::Schema> schema() const override { return out_schema_; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    while (true) {
      if (plan_.limit >= 0 && plan_.stats->rows_returned >= plan_.limit) return arrow::Status::OK();
      if (!batches_) {
        if (!file_reader_) {
          if (next_task_ >= plan_.tasks.size()) return arrow::Status::OK();
          auto st = OpenFile(plan_.tasks[next_task_++]);
          if (!st) return ToArrowStatus(st.error());
          if (!file_reader_) continue;  // every row group pruned
        }
        if (row_groups_.empty()) {
          file_reader_.reset();
          continue;
        }
        // One row group at a time, so row positions are known for position deletes.
        auto [rg, first_row] = row_groups_.front();
        row_groups_.erase(row_groups_.begin());
        row_pos_ = first_row;
        auto br = file_reader_->GetRecordBatchReader({rg}, leaves_);
        if (!br.ok()) return arrow::Status::Invalid("Corrupt: ", current_path_, ": ", br.status().message());
        batches_ = std::move(*br);
      }
      std::shared_ptr<arrow::RecordBatch> raw;
      auto rst = batches_->ReadNext(&raw);
      if (!rst.ok()) return arrow::Status::Invalid("Corrupt: ", current_path_, ": ", rst.message());
      if (!raw) {
        batches_.reset();
        continue;
      }
      plan_.stats->rows_read += raw->num_rows();
      auto conformed = Conform(raw);
      if (!conformed) return ToArrowStatus(conformed.error());
      std::shared_ptr<arrow::RecordBatch> batch = *conformed;
      int64_t first_pos = row_pos_;
      row_pos_ += raw->num_rows();
      if (plan_.emit_positions) {
        arrow::Int64Builder pb;
        (void)pb.Reserve(batch->num_rows());
        for (int64_t r = 0; r < batch->num_rows(); ++r) pb.UnsafeAppend(first_pos + r);
        std::shared_ptr<arrow::Array> pos;
        (void)pb.Finish(&pos);
        auto cols = batch->columns();
        cols.push_back(pos);
        batch = arrow::RecordBatch::Make(read_schema_, batch->num_rows(), cols);
      }
      if (!deleted_.empty()) {
        auto kept = ApplyDeletes(batch, first_pos);
        if (!kept) return ToArrowStatus(kept.error().WithContext(current_path_));
        plan_.stats->rows_deleted += batch->num_rows() - (*kept)->num_rows();
        batch = *kept;
      }
      if (plan_.filter) {
        auto filtered = expr::FilterBatch(*plan_.filter, *plan_.schema, batch);
        if (!filtered) return ToArrowStatus(filtered.error().WithContext(current_path_));
        batch = *filtered;
      }
      if (batch->num_rows() == 0) continue;
      // Drop filter-only columns.
      if (read_ids_.size() != plan_.projected_ids.size()) {
        arrow::ArrayVector cols(batch->columns().begin(),
                                batch->columns().begin() + static_cast<long>(plan_.projected_ids.size()));
        if (plan_.emit_positions) cols.push_back(batch->columns().back());
        batch = arrow::RecordBatch::Make(out_schema_, batch->num_rows(), cols);
      }
      if (plan_.limit >= 0) {
        int64_t room = plan_.limit - plan_.stats->rows_returned;
        if (batch->num_rows() > room) batch = batch->Slice(0, room);
      }
      plan_.stats->rows_returned += batch->num_rows();
      *out = batch;
      return arrow::Status::OK();
    }
  }

 private:
  static arrow::Status ToArrowStatus(const Error& e) {
    // Carried through Arrow's reader interface; the kind is restored by callers.
    return arrow::Status::Invalid(std::string(ErrorKindName(e.kind)), ": ", e.message);
  }

  int TopLevelOf(int id) const {
    for (const auto& f : plan_.schema->fields()) {
      if (f.id == id) return f.id;
      Schema sub(0, {f});
      if (sub.FindField(id)) return f.id;
    }
    return -1;
  }

  Status OpenFile(const FileScanTask& task) {
    current_path_ = LocalPath(task.file.file_path);
    parquet::arrow::FileReaderBuilder builder;
    parquet::ArrowReaderProperties props;
    props.set_batch_size(64 * 1024);
    props.set_use_threads(true);
    props.set_pre_buffer(true);
    try {
      SKADE_ARROW_RETURN(builder.OpenFile(current_path_, /*memory_map=*/false), current_path_);
    } catch (const std::exception& e) {
      return Corrupt(current_path_ + ": " + e.what());
    }
    builder.properties(props);
    SKADE_ARROW_ASSIGN(file_reader_, builder.Build(), current_path_);
    auto md = file_reader_->parquet_reader()->metadata();
    // The manifest's promise, checked before any row is used: a file replaced or
    // rewritten in place would otherwise read as fewer (or other) rows, silently.
    if (md->num_rows() != task.file.record_count)
      return Corrupt("data file " + current_path_ + " holds " + std::to_string(md->num_rows()) +
                     " rows but its manifest entry says " + std::to_string(task.file.record_count) +
                     ": the file was changed after it was committed");
    std::vector<int> row_groups;
    for (int rg = 0; rg < md->num_row_groups(); ++rg) {
      ++plan_.stats->row_groups_total;
      if (plan_.filter && !expr::MightMatch(*plan_.filter, RowGroupStats(*md, rg, *plan_.schema))) {
        ++plan_.stats->row_groups_skipped;
        continue;
      }
      row_groups.push_back(rg);
    }
    if (row_groups.empty()) {
      file_reader_.reset();
      return {};
    }
    row_groups_.clear();
    int64_t first = 0;
    for (int rg = 0, k = 0; rg < md->num_row_groups(); ++rg) {
      if (k < static_cast<int>(row_groups.size()) && row_groups[k] == rg) {
        row_groups_.emplace_back(rg, first);
        ++k;
      }
      first += md->RowGroup(rg)->num_rows();
    }
    deleted_ = DeletedRows();
    if (!task.deletes.empty()) {
      SKADE_ASSIGN_OR_RETURN(deleted_, loader_->Load(task.file.file_path, task.deletes));
      plan_.stats->delete_files += static_cast<int64_t>(task.deletes.size());
    }
    // Top-level Parquet fields holding the columns we need (by id, else by name).
    const auto& fields = file_reader_->manifest().schema_fields;
    std::vector<int> leaves;
    for (int id : read_ids_) {
      const NestedField* want = plan_.schema->FindField(id);
      int found = -1;
      for (size_t i = 0; i < fields.size(); ++i)
        if (FieldIdOf(*fields[i].field) == id) found = static_cast<int>(i);
      if (found < 0)
        for (size_t i = 0; i < fields.size(); ++i)
          if (FieldIdOf(*fields[i].field) < 0 && fields[i].field->name() == want->name)
            found = static_cast<int>(i);
      if (found >= 0) CollectLeaves(fields[found], &leaves);
    }
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    leaves_ = std::move(leaves);
    return {};
  }

  // Drops rows removed by position or equality deletes.
  Result<std::shared_ptr<arrow::RecordBatch>> ApplyDeletes(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                           int64_t first_pos) {
    SKADE_ASSIGN_OR_RETURN(auto gone, DeletedFlags(deleted_, *batch, *plan_.schema,
                                                   [&](int64_t r) { return first_pos + r; }));
    arrow::BooleanBuilder keep;
    SKADE_ARROW_RETURN(keep.Reserve(batch->num_rows()), "deletes");
    for (bool g : gone) keep.UnsafeAppend(!g);
    std::shared_ptr<arrow::Array> mask;
    SKADE_ARROW_RETURN(keep.Finish(&mask), "deletes");
    InitArrowCompute();
    SKADE_ARROW_ASSIGN(auto filtered, arrow::compute::Filter(batch, mask), "deletes");
    return filtered.record_batch();
  }

  Result<std::shared_ptr<arrow::RecordBatch>> Conform(const std::shared_ptr<arrow::RecordBatch>& raw) {
    arrow::ArrayVector cols;
    const auto& rs = *raw->schema();
    for (int i = 0; i < static_cast<int>(read_ids_.size()); ++i) {
      const auto& target = conform_schema_->field(i);
      int id = read_ids_[i];
      int idx = -1;
      for (int k = 0; k < rs.num_fields(); ++k)
        if (FieldIdOf(*rs.field(k)) == id) idx = k;
      if (idx < 0)
        for (int k = 0; k < rs.num_fields(); ++k)
          if (FieldIdOf(*rs.field(k)) < 0 && rs.field(k)->name() == target->name()) idx = k;
      if (idx < 0) {
        // A column the file predates: reads as null.
        SKADE_ARROW_ASSIGN(auto nulls, arrow::MakeArrayOfNull(target->type(), raw->num_rows()), current_path_);
        cols.push_back(nulls);
        continue;
      }
      SKADE_ASSIGN_OR_RETURN(auto col, ConformArray(raw->column(idx), *plan_.schema->FindField(id), current_path_));
      cols.push_back(col);
    }
    return arrow::RecordBatch::Make(conform_schema_, raw->num_rows(), std::move(cols));
  }

  ScanPlan plan_;
  FileIO* io_;
  std::vector<int> read_ids_;
  std::shared_ptr<arrow::Schema> read_schema_, out_schema_, conform_schema_;
  size_t next_task_ = 0;
  std::string current_path_;
  std::unique_ptr<parquet::arrow::FileReader> file_reader_;
  std::unique_ptr<arrow::RecordBatchReader> batches_;
  std::vector<std::pair<int, int64_t>> row_groups_;  // selected: index, first row position
  std::vector<int> leaves_;
  int64_t row_pos_ = 0;
  std::unique_ptr<DeleteLoader> loader_;
  DeletedRows deleted_;
};

}  // namespace

TableScan& TableScan::Select(std::vector<std::string> columns) {
  columns_ = std::move(columns);
  return *this;
}
TableScan& TableScan::Filter(std::string expression) {
  filter_text_ = std::move(expression);
  return *this;
}
TableScan& TableScan::Filter(expr::ExprPtr unbound) {
  filter_ = std::move(unbound);
  return *this;
}
TableScan& TableScan::UseSnapshot(int64_t snapshot_id) {
  snapshot_id_ = snapshot_id;
  return *this;
}
TableScan& TableScan::AsOfTime(int64_t timestamp_ms) {
  as_of_ms_ = timestamp_ms;
  return *this;
}
TableScan& TableScan::UseRef(std::string ref) {
  ref_ = std::move(ref);
  return *this;
}
TableScan& TableScan::Limit(int64_t rows) {
  limit_ = rows;
  return *this;
}

Result<std::vector<FileScanTask>> LiveDataFiles(const TableMetadata& m, const Snapshot& snapshot, FileIO& io) {
  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(snapshot, io));
  std::vector<FileScanTask> out;
  for (const auto& mf : list) {
    if (mf.content != 0) continue;
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, *m.schema(), io));
    for (auto& e : entries)
      if (e.status != EntryStatus::kDeleted)
        out.push_back(FileScanTask{std::move(e.data_file), e.sequence_number.value_or(0), {}});
  }
  return out;
}

Result<ScanPlan> TableScan::Plan() const {
  ScanPlan plan;
  plan.metadata = metadata_;
  plan.stats = std::make_shared<ScanStats>();
  plan.limit = limit_;
  const TableMetadata& m = *metadata_;
  int selectors = (snapshot_id_ ? 1 : 0) + (as_of_ms_ ? 1 : 0) + (ref_ ? 1 : 0);
  if (selectors > 1) return InvalidArgument("choose one of snapshot id, as-of time and ref");
  if (snapshot_id_) {
    plan.snapshot = m.SnapshotById(*snapshot_id_);
    if (!plan.snapshot) return NotFound("snapshot " + std::to_string(*snapshot_id_) + " does not exist");
  } else if (as_of_ms_) {
    SKADE_ASSIGN_OR_RETURN(plan.snapshot, m.SnapshotAsOf(*as_of_ms_));
  } else if (ref_) {
    SKADE_ASSIGN_OR_RETURN(plan.snapshot, m.SnapshotForRef(*ref_));
  } else {
    plan.snapshot = m.CurrentSnapshot();
  }
  plan.schema = m.schema();
  // Time travel reads with the schema of its snapshot; a branch reads with the
  // table's schema (it is still being written), a tag with its snapshot's.
  bool branch_ref = ref_ && m.refs.contains(*ref_) && m.refs.at(*ref_).type == "branch";
  if (plan.snapshot && plan.snapshot->schema_id && (snapshot_id_ || as_of_ms_ || (ref_ && !branch_ref)))
    if (auto s = m.SchemaById(*plan.snapshot->schema_id)) plan.schema = s;
  const Schema& schema = *plan.schema;

  // Projection and filter: report every problem at once.
  std::vector<std::string> problems;
  if (columns_) {
    for (const auto& c : *columns_) {
      const NestedField* f = schema.FindTopLevel(c);
      if (!f) problems.push_back("unknown column '" + c + "'");
      else plan.projected_ids.push_back(f->id);
    }
  } else {
    for (const auto& f : schema.fields()) plan.projected_ids.push_back(f.id);
  }
  expr::ExprPtr unbound = filter_;
  if (filter_text_) {
    auto parsed = expr::Parse(*filter_text_);
    if (!parsed) problems.push_back(parsed.error().message);
    else unbound = *parsed;
  }
  if (unbound) {
    auto bound = expr::Bind(unbound, schema);
    if (!bound) problems.push_back(bound.error().message);
    else plan.filter = *bound;
  }
  if (!problems.empty()) {
    std::string msg;
    for (const auto& p : problems) msg += (msg.empty() ? "" : "; ") + p;
    if (columns_) msg += " (columns: " + schema.ColumnNames() + ")";
    return InvalidArgument(msg);
  }
  if (ProvenanceSource* source = ProvenanceSource::Current(); source && table_)
    source->OnRead(*table_, plan.snapshot ? std::optional<int64_t>(plan.snapshot->snapshot_id) : std::nullopt);
  if (!plan.snapshot) return plan;

  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(*plan.snapshot, *io_));
  std::map<int, expr::ExprPtr> projected;  // per spec
  std::map<int, std::vector<TypePtr>> ptypes;
  DeleteIndex deletes;
  for (const auto& mf : list) {
    if (mf.content == 0) continue;
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, schema, *io_));
    for (auto& e : entries)
      if (e.status != EntryStatus::kDeleted) {
        plan.delete_files.push_back(e.data_file);
        deletes.Add(DeleteFileEntry{std::move(e.data_file), e.sequence_number.value_or(0)});
      }
  }
  for (const auto& mf : list) {
    if (mf.content != 0) continue;
    ++plan.stats->manifests_total;
    const PartitionSpec* spec = m.SpecById(mf.partition_spec_id);
    if (!spec) return Corrupt("manifest " + LocalPath(mf.manifest_path) + " names unknown partition spec");
    if (plan.filter && !projected.contains(spec->spec_id())) {
      SKADE_ASSIGN_OR_RETURN(projected[spec->spec_id()], expr::ProjectToPartition(*plan.filter, *spec, schema));
      SKADE_ASSIGN_OR_RETURN(TypePtr pt, spec->PartitionType(schema));
      for (const auto& f : pt->fields) ptypes[spec->spec_id()].push_back(f.type);
    }
    if (plan.filter && mf.partitions && !spec->unpartitioned() &&
        !expr::ManifestMightMatch(*projected[spec->spec_id()], *spec, ptypes[spec->spec_id()], *mf.partitions)) {
      ++plan.stats->manifests_skipped;
      plan.stats->files_total += mf.added_files_count + mf.existing_files_count;
      plan.stats->files_skipped_by_partition += mf.added_files_count + mf.existing_files_count;
      plan.stats->rows_total += mf.added_rows_count + mf.existing_rows_count;
      continue;
    }
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, schema, *io_));
    for (auto& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      ++plan.stats->files_total;
      plan.stats->rows_total += e.data_file.record_count;
      if (plan.filter) {
        if (!spec->unpartitioned() &&
            !expr::EvaluatePartition(*projected[spec->spec_id()], *spec, e.data_file.partition)) {
          ++plan.stats->files_skipped_by_partition;
          continue;
        }
        if (!expr::MightMatch(*plan.filter, e.data_file.stats)) {
          ++plan.stats->files_skipped_by_metrics;
          continue;
        }
      }
      ++plan.stats->files_planned;
      plan.stats->rows_planned += e.data_file.record_count;
      int64_t seq = e.sequence_number.value_or(0);
      auto applicable = deletes.empty() ? std::vector<DeleteFileEntry>{} : deletes.For(e.data_file, seq, m);
      plan.tasks.push_back(FileScanTask{std::move(e.data_file), seq, std::move(applicable)});
    }
  }
  return plan;
}

Result<std::shared_ptr<arrow::RecordBatchReader>> TableScan::Read(const ScanPlan& plan, FileIO* io) {
  return std::shared_ptr<arrow::RecordBatchReader>(std::make_shared<ScanReader>(plan, io));
}

Result<std::shared_ptr<arrow::RecordBatchReader>> TableScan::ToReader() const {
  SKADE_ASSIGN_OR_RETURN(ScanPlan plan, Plan());
  return Read(plan, io_);
}

Result<std::shared_ptr<arrow::Table>> TableScan::ToTable() const {
  SKADE_ASSIGN_OR_RETURN(auto reader, ToReader());
  auto table = reader->ToTable();
  if (!table.ok()) return std::unexpected(ErrorFromReader(table.status()));
  return *table;
}

Error ErrorFromReader(const arrow::Status& st) {
  // ScanReader encodes "<Kind>: message"; restore the kind.
  const std::string& msg = st.message();
  static const std::pair<const char*, ErrorKind> kinds[] = {
      {"Corrupt: ", ErrorKind::kCorrupt}, {"IoError: ", ErrorKind::kIoError},
      {"NotFound: ", ErrorKind::kNotFound}, {"InvalidArgument: ", ErrorKind::kInvalidArgument},
      {"Unsupported: ", ErrorKind::kUnsupported}};
  for (auto [prefix, kind] : kinds)
    if (msg.rfind(prefix, 0) == 0) return Error{kind, msg.substr(std::strlen(prefix))};
  return Error{st.IsIOError() ? ErrorKind::kCorrupt : ErrorKind::kInternal, msg};
}

}  // namespace skade
