#include "skade/table/scan.h"

#include <arrow/api.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "skade/common/task_pool.h"
#include "skade/format/metadata_columns.h"
#include "skade/io/file_io.h"
#include "skade/table/manifest_io.h"
#include "skade/table/scan_reader_internal.h"

namespace skade {
namespace {

// Manifests are read a window at a time, the window's files concurrently (each a file
// read and an Avro decode: most of a plan's work on a table of many commits); `take`
// then sees every manifest's entries in list order, so plans do not depend on timing, and
// only a window's entries are held before pruning.
Status ForEachManifest(const std::vector<const ManifestFile*>& manifests, const TableMetadata& m,
                       const Schema& schema, FileIO& io,
                       const std::function<Status(const ManifestFile&, std::vector<ManifestEntry>)>& take) {
  constexpr size_t kWindow = 64;
  constexpr size_t kConcurrentFrom = 8;  // fewer are read in the calling thread (a thread costs more)
  for (size_t start = 0; start < manifests.size(); start += kWindow) {
    size_t n = std::min(kWindow, manifests.size() - start);
    std::vector<std::vector<ManifestEntry>> loaded(n);
    auto load = [&](size_t i) -> Status {
      SKADE_ASSIGN_OR_RETURN(loaded[i], LoadManifest(*manifests[start + i], m, schema, io));
      return {};
    };
    if (n < kConcurrentFrom) {
      for (size_t i = 0; i < n; ++i) SKADE_RETURN_IF_ERROR(load(i));
    } else {
      SKADE_RETURN_IF_ERROR(RunConcurrently(n, load));
    }
    for (size_t i = 0; i < n; ++i) SKADE_RETURN_IF_ERROR(take(*manifests[start + i], std::move(loaded[i])));
  }
  return {};
}

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
  choice_.id = snapshot_id;
  return *this;
}
TableScan& TableScan::AsOfTime(int64_t timestamp_ms) {
  choice_.as_of_ms = timestamp_ms;
  return *this;
}
TableScan& TableScan::UseRef(std::string ref) {
  choice_.ref = std::move(ref);
  return *this;
}
TableScan& TableScan::Use(SnapshotChoice choice) {
  choice_ = std::move(choice);
  return *this;
}
TableScan& TableScan::Limit(int64_t rows) {
  limit_ = rows;
  return *this;
}

namespace {

// The part of a bound filter a file's identity partition values do not decide: a
// predicate on an identity-partitioned column is the same for every row of the file,
// so it folds to true or false (not for a null value, which three-valued logic keeps
// undecided under NOT, nor for floats, whose NaNs compare apart).
expr::ExprPtr Residual(const expr::ExprPtr& e, const PartitionSpec& spec, const std::vector<Value>& tuple) {
  using expr::Op;
  switch (e->op) {
    case Op::kTrue:
    case Op::kFalse: return e;
    case Op::kNot: {
      auto c = Residual(e->children[0], spec, tuple);
      return c == e->children[0] ? e : expr::Not(c);
    }
    case Op::kAnd:
    case Op::kOr: {  // And/Or/Not fold constants away
      bool same = true;
      expr::ExprPtr out = e->op == Op::kAnd ? expr::True() : expr::False();
      for (const auto& child : e->children) {
        auto c = Residual(child, spec, tuple);
        same &= c == child;
        out = e->op == Op::kAnd ? expr::And(out, c) : expr::Or(out, c);
      }
      return same ? e : out;
    }
    default: break;
  }
  const auto& fields = spec.fields();
  for (size_t i = 0; i < fields.size() && i < tuple.size(); ++i) {
    if (fields[i].source_id != e->field_id || fields[i].transform.kind != TransformKind::kIdentity) continue;
    bool null_test = e->op == Op::kIsNull || e->op == Op::kNotNull;
    if (IsNull(tuple[i]) && !null_test) return e;
    if (e->type && (e->type->id == TypeId::kFloat || e->type->id == TypeId::kDouble)) return e;
    // A value written before a type promotion: only int vs long compares across kinds.
    auto comparable = [&](const Value& l) {
      auto integral = [](const Value& v) { return std::holds_alternative<int32_t>(v) || std::holds_alternative<int64_t>(v); };
      return l.index() == tuple[i].index() || (integral(l) && integral(tuple[i]));
    };
    if (!null_test && !std::all_of(e->literals.begin(), e->literals.end(), comparable)) return e;
    auto on_partition = std::make_shared<expr::Expr>(*e);
    on_partition->field_id = fields[i].field_id;
    return expr::EvaluatePartition(*on_partition, spec, tuple) ? expr::True() : expr::False();
  }
  return e;
}

}  // namespace

SchemaPtr WithMetadataColumns(const SchemaPtr& schema, const std::vector<std::string>& columns, int format_version,
                              std::vector<std::string>& problems) {
  std::vector<NestedField> fields = schema->fields();
  for (const auto& c : columns) {
    std::optional<NestedField> meta = schema->FindTopLevel(c) ? std::nullopt : MetadataColumn(c);
    if (!meta || std::any_of(fields.begin(), fields.end(), [&](const NestedField& f) { return f.id == meta->id; }))
      continue;
    if (IsRowLineageField(meta->id) && format_version < 3) {
      problems.push_back(c + " is a column of format v3 tables (this table is v" + std::to_string(format_version) +
                         ")");
      continue;
    }
    fields.push_back(std::move(*meta));
  }
  if (fields.size() == schema->fields().size()) return schema;
  return std::make_shared<const Schema>(schema->schema_id(), std::move(fields), schema->identifier_field_ids());
}

void ReadRowLineage(ScanPlan& plan) {
  if (!plan.schema->FindField(kRowIdFieldId)) plan.schema = std::make_shared<const Schema>(WithRowLineage(*plan.schema));
  for (int id : {kRowIdFieldId, kLastUpdatedSequenceNumberFieldId})
    if (std::find(plan.projected_ids.begin(), plan.projected_ids.end(), id) == plan.projected_ids.end())
      plan.projected_ids.push_back(id);
  plan.output_schema = nullptr;  // every column whole
}

Result<ScanPlan> TableScan::Plan() const {
  ScanPlan plan;
  plan.metadata = metadata_;
  plan.stats = std::make_shared<ScanStats>();
  plan.limit = limit_;
  const TableMetadata& m = *metadata_;
  SKADE_ASSIGN_OR_RETURN(plan.snapshot, m.Choose(choice_));
  plan.schema = m.schema();
  // Time travel reads with the schema of its snapshot; a branch reads with the
  // table's schema (it is still being written), a tag with its snapshot's.
  const auto& ref = choice_.ref;
  bool branch_ref = ref && m.refs.contains(*ref) && m.refs.at(*ref).type == "branch";
  if (plan.snapshot && plan.snapshot->schema_id && (choice_.id || choice_.as_of_ms || (ref && !branch_ref)))
    if (auto s = m.SchemaById(*plan.snapshot->schema_id)) plan.schema = s;
  const SchemaPtr table_schema = plan.schema;
  const Schema& schema = *table_schema;

  // Projection and filter: report every problem at once.
  std::vector<std::string> problems;
  bool unknown_columns = false;  // the error then lists the table's columns (once: a filter's names them too)
  if (columns_) {
    // Filters see only the table's columns.
    plan.schema = WithMetadataColumns(table_schema, *columns_, m.format_version, problems);
    Projection p = ProjectColumns(*plan.schema, *columns_);
    for (const auto& c : p.unknown)
      if (!MetadataColumn(c)) {
        problems.push_back("unknown column '" + c + "'");
        unknown_columns = true;
      }
    plan.projected_ids = std::move(p.ids);
    plan.output_schema = std::move(p.output);
  } else {
    for (const auto& f : schema.fields()) plan.projected_ids.push_back(f.id);
    plan.output_schema = plan.schema;
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
    // The binder's error for an unknown column lists the columns itself.
    auto names = expr::ReferencedColumns(*unbound);
    if (!bound && std::any_of(names.begin(), names.end(), [&](const auto& c) { return !schema.FindByPath(c); }))
      unknown_columns = false;
  }
  if (!problems.empty())
    return InvalidArgument(JoinProblems(problems) + (unknown_columns ? " (columns: " + schema.ColumnNames() + ")" : ""));
  if (ProvenanceSource* source = ProvenanceSource::Current(); source && table_)
    source->OnRead(*table_, plan.snapshot ? std::optional<int64_t>(plan.snapshot->snapshot_id) : std::nullopt);
  if (!plan.snapshot) return plan;

  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(*plan.snapshot, *io_));
  std::map<int, expr::ExprPtr> projected;  // per spec
  std::map<int, std::vector<TypePtr>> ptypes;
  DeleteIndex deletes;
  std::vector<const ManifestFile*> delete_manifests, data_manifests;
  for (const auto& mf : list)
    if (mf.content != 0) delete_manifests.push_back(&mf);
  SKADE_RETURN_IF_ERROR(ForEachManifest(delete_manifests, m, schema, *io_,
                                        [&](const ManifestFile&, std::vector<ManifestEntry> entries) -> Status {
    for (auto& e : entries)
      if (e.status != EntryStatus::kDeleted) {
        plan.delete_files.push_back(e.data_file);
        deletes.Add(DeleteFileEntry{std::make_shared<const DataFile>(std::move(e.data_file)), e.sequence_number.value_or(0)});
      }
    return {};
  }));
  for (const auto& mf : list) {
    if (mf.content != 0) continue;
    ++plan.stats->manifests_total;
    const PartitionSpec* spec = m.SpecById(mf.partition_spec_id);
    if (!spec) return Corrupt("manifest " + LocalPath(mf.manifest_path) + " names unknown partition spec");
    if (plan.filter && !projected.contains(spec->spec_id())) {
      const Schema& bound = m.SchemaForSpec(*spec, schema);
      SKADE_ASSIGN_OR_RETURN(projected[spec->spec_id()], expr::ProjectToPartition(*plan.filter, *spec, bound));
      SKADE_ASSIGN_OR_RETURN(TypePtr pt, spec->PartitionType(bound));
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
    data_manifests.push_back(&mf);
  }
  SKADE_RETURN_IF_ERROR(ForEachManifest(data_manifests, m, schema, *io_,
                                        [&](const ManifestFile& mf, std::vector<ManifestEntry> entries) -> Status {
    const PartitionSpec* spec = m.SpecById(mf.partition_spec_id);
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
      int64_t seq = e.sequence_number.value_or(0);
      auto applicable = deletes.empty() ? std::vector<DeleteFileEntry>{} : deletes.For(e.data_file, seq, m);
      expr::ExprPtr residual;
      if (plan.filter && !spec->unpartitioned()) residual = Residual(plan.filter, *spec, e.data_file.partition);
      if (residual && residual->op == expr::Op::kFalse) {  // the partition proves no row matches
        ++plan.stats->files_skipped_by_partition;
        continue;
      }
      ++plan.stats->files_planned;
      plan.stats->rows_planned += e.data_file.record_count;
      plan.tasks.push_back(FileScanTask{std::move(e.data_file), seq, std::move(applicable), std::move(residual)});
    }
    return {};
  }));
  return plan;
}

Result<std::shared_ptr<arrow::RecordBatchReader>> TableScan::Read(ScanPlan plan, FileIO* io) {
  return MakeScanReader(std::move(plan), io);
}

Result<std::shared_ptr<arrow::RecordBatchReader>> TableScan::ToReader() const {
  SKADE_ASSIGN_OR_RETURN(ScanPlan plan, Plan());
  return Read(std::move(plan), io_);
}

Result<std::shared_ptr<arrow::Table>> TableScan::ToTable() const {
  SKADE_ASSIGN_OR_RETURN(auto reader, ToReader());
  auto table = reader->ToTable();
  if (!table.ok()) return std::unexpected(ErrorFromReader(table.status()));
  return *table;
}

Projection ProjectColumns(const Schema& schema, const std::vector<std::string>& columns) {
  Projection p;
  std::vector<int> named;
  for (const auto& c : columns) {
    const NestedField* f = schema.FindByPath(c);
    if (!f) {
      p.unknown.push_back(c);
      continue;
    }
    named.push_back(f->id);
    const int top = schema.TopLevelOf(f->id)->id;
    if (std::find(p.ids.begin(), p.ids.end(), top) == p.ids.end()) p.ids.push_back(top);
  }
  std::vector<NestedField> out;
  for (int id : p.ids) out.push_back(*PruneField(*schema.FindField(id), named));
  p.output = std::make_shared<const Schema>(schema.schema_id(), std::move(out));
  return p;
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
