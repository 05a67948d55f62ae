#include "bifrost/source/arrow_source.h"

#include <arrow/table.h>

namespace bifrost {

void ArrowSource::Put(const std::string& table, std::shared_ptr<arrow::Table> rows) {
  tables_[table] = std::move(rows);
  ++versions_[table];
}

Result<std::optional<Fetched>> ArrowSource::FetchNew(const CompiledTable& ct,
                                                     const TableState& state) {
  const std::string& name = ct.spec.table;
  if (ct.spec.mode == SyncMode::kCdc)
    return skade::Unsupported("table '" + name +
                              "': Arrow batches in memory carry no changelog; mode cdc needs the " +
                              "skade warehouse source (full and incremental work here)");
  auto it = tables_.find(name);
  if (it == tables_.end()) {
    std::string held;
    for (const auto& [t, rows] : tables_) held += (held.empty() ? "" : ", ") + t;
    return skade::NotFound("table '" + name + "' is not among the Arrow tables held (" +
                           (held.empty() ? "none" : held) + ")");
  }
  int64_t version = versions_[name];
  if (ct.spec.mode == SyncMode::kIncremental && state.snapshot_id == version) return std::nullopt;
  Fetched f;
  f.rows = it->second;
  f.next = state;
  f.next.snapshot_id = version;
  f.description = "Arrow table in memory (version " + std::to_string(version) + ")";
  if (!state.snapshot_id && f.rows->num_rows() == 0 && !ct.spec.allow_empty)
    return skade::InvalidArgument("table '" + name + "': empty read refused: " + f.description +
                                  " has 0 rows");
  return f;
}

}  // namespace bifrost
