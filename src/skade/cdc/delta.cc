#include "skade/cdc/delta.h"

#include <arrow/api.h>

#include <algorithm>
#include <set>

#include "skade/cdc/changelog.h"
#include "skade/io/file_io.h"
#include "skade/table/manifest_io.h"
#include "skade/table/scan.h"
#include "skade/table/table.h"

namespace skade::cdc {

Result<DeltaPlan> PlanDelta(const Table& table, std::optional<int64_t> from,
                            std::optional<int64_t> to) {
  const TableMetadata& m = *table.metadata();
  SKADE_ASSIGN_OR_RETURN(auto chain, SnapshotsBetween(m, from, to));
  const Snapshot* end = to ? m.SnapshotById(*to) : m.CurrentSnapshot();
  DeltaPlan plan;
  std::set<int64_t> in_range;
  for (const Snapshot* s : chain) {
    plan.snapshots.push_back(s->snapshot_id);
    in_range.insert(s->snapshot_id);
    auto get = [&](const char* k) {
      auto it = s->summary.find(k);
      return it == s->summary.end() ? std::string("0") : it->second;
    };
    if (s->operation() != "replace" &&
        (get("deleted-data-files") != "0" || get("added-delete-files") != "0" ||
         get("deleted-records") != "0"))
      plan.needs_full_reload = true;
  }
  if (!end) return plan;
  SKADE_ASSIGN_OR_RETURN(ScanPlan at_end, table.NewScan().UseSnapshot(end->snapshot_id).Plan());
  // A file belongs to the delta when the snapshot that added it is in the range,
  // unless it was written by a compaction (its rows were there before).
  std::set<int64_t> compactions;
  for (int64_t id : plan.snapshots)
    if (m.SnapshotById(id)->operation() == "replace") compactions.insert(id);
  SKADE_ASSIGN_OR_RETURN(auto list, LoadManifestList(*end, table.catalog().io()));
  std::set<std::string> added_paths;
  for (const auto& mf : list) {
    SKADE_ASSIGN_OR_RETURN(auto entries, LoadManifest(mf, m, *m.schema(), table.catalog().io()));
    for (auto& e : entries) {
      if (e.status == EntryStatus::kDeleted || !e.snapshot_id || !in_range.contains(*e.snapshot_id))
        continue;
      if (e.data_file.content == FileContent::kData) {
        if (!compactions.contains(*e.snapshot_id)) added_paths.insert(e.data_file.file_path);
      } else {
        plan.delete_files.push_back(std::move(e.data_file));
      }
    }
  }
  for (const auto& t : at_end.tasks)
    if (added_paths.contains(t.file.file_path)) plan.added_files.push_back(t.file);
  return plan;
}

Result<std::shared_ptr<arrow::Table>> ReadDelta(const Table& table, std::optional<int64_t> from,
                                                std::optional<int64_t> to, DeltaPlan* out_plan) {
  SKADE_ASSIGN_OR_RETURN(DeltaPlan plan, PlanDelta(table, from, to));
  const TableMetadata& m = *table.metadata();
  const Snapshot* end = to ? m.SnapshotById(*to) : m.CurrentSnapshot();
  std::shared_ptr<arrow::Table> result;
  if (!end) {
    SKADE_ASSIGN_OR_RETURN(result, table.NewScan().ToTable());  // empty, with the schema
  } else {
    SKADE_ASSIGN_OR_RETURN(ScanPlan scan, table.NewScan().UseSnapshot(end->snapshot_id).Plan());
    std::set<std::string> wanted;
    for (const auto& f : plan.added_files) wanted.insert(f.file_path);
    std::erase_if(scan.tasks,
                  [&](const FileScanTask& t) { return !wanted.contains(t.file.file_path); });
    SKADE_ASSIGN_OR_RETURN(auto reader, TableScan::Read(std::move(scan), &table.catalog().io()));
    auto t = reader->ToTable();
    if (!t.ok()) return std::unexpected(ErrorFromReader(t.status()));
    result = *t;
  }
  if (out_plan) *out_plan = std::move(plan);
  return result;
}

}  // namespace skade::cdc
