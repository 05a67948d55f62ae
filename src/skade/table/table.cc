#include "skade/table/table.h"

#include <arrow/api.h>

#include "skade/format/metadata_columns.h"
#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/data_writer.h"
#include "skade/table/scan.h"
#include "skade/table/snapshot_producer.h"

namespace skade {

Result<std::unique_ptr<Table>> Table::Load(Catalog& catalog, const TableIdent& ident) {
  SKADE_ASSIGN_OR_RETURN(LoadedTable loaded, catalog.LoadTable(ident));
  return std::make_unique<Table>(catalog, std::move(loaded));
}

Table::Table(Catalog& catalog, LoadedTable loaded) : catalog_(&catalog), loaded_(std::move(loaded)) {}

Status Table::Refresh() {
  SKADE_ASSIGN_OR_RETURN(loaded_, catalog_->LoadTable(loaded_.ident));
  return {};
}

TableScan Table::NewScan() const { return TableScan(loaded_.metadata, &catalog_->io(), loaded_.ident); }

Result<StagedAppend> Table::StageAppend(arrow::RecordBatchReader& reader, const AppendOptions& options) {
  SKADE_ASSIGN_OR_RETURN(auto writer, DataWriter::Make(*loaded_.metadata, options.row_lineage));
  // With row lineage the batches end with its two columns, which are conformed as the
  // table's own are.
  const Schema& table_schema = *loaded_.metadata->schema();
  const Schema schema = options.row_lineage ? WithRowLineage(table_schema) : table_schema;
  int64_t row = 1;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    if (auto st = reader.ReadNext(&batch); !st.ok()) {
      writer->Abort();
      return std::unexpected(FromArrow(st, ""));  // the caller names the input
    }
    if (!batch) break;
    auto conformed = ConformToSchema(batch, schema, row);
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
  if (options.progress) {  // the last word: every row is in a file now (rows_written lags behind)
    int64_t rows = 0;
    for (const auto& f : *files) rows += f.record_count;
    options.progress(rows, rows);
  }
  return StagedAppend{std::move(*files), options.snapshot_properties, options.branch, options.provenance};
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
  std::vector<std::pair<LoadedTable, FileChange>> changes;
  for (auto& [t, staged] : appends) {
    FileChange change;
    change.operation = "append";
    change.added = staged.files;
    change.properties = staged.snapshot_properties;
    change.branch = staged.branch;
    change.provenance = staged.provenance;
    changes.emplace_back(t->loaded_, std::move(change));
  }
  // A refused commit removes the staged files (CommitChanges).
  SKADE_ASSIGN_OR_RETURN(auto produced, CommitChanges(appends[0].first->catalog(), std::move(changes)));
  std::vector<CommitResult> out;
  for (size_t i = 0; i < appends.size(); ++i) {
    appends[i].first->loaded_ = produced[i].table;
    out.push_back(CommitResult{produced[i].snapshot_id, produced[i].commit_seq, produced[i].attempts,
                               appends[i].second.files});
  }
  return out;
}

}  // namespace skade
