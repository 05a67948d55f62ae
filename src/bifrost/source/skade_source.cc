#include <arrow/api.h>

#include <unordered_set>

#include "bifrost/source/table_source.h"
#include "skade/cdc/changelog.h"
#include "skade/cdc/delta.h"
#include "skade/expr/arrow_filter.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/scan.h"
#include "skade/table/table.h"

namespace bifrost {
namespace {

Result<std::shared_ptr<arrow::Table>> Scan(const skade::Table& table, const CompiledTable& ct,
                                           int64_t snapshot) {
  skade::TableScan scan = table.NewScan();
  scan.UseSnapshot(snapshot);
  if (!ct.projection.empty()) scan.Select(ct.projection);
  if (!ct.spec.filter.empty()) scan.Filter(ct.spec.filter);
  return scan.ToTable();
}

// Prune: the previous snapshot's rows as DELETEs, then the current rows as INSERTs, so
// the pipeline's last-change-per-key rule removes exactly what the table stopped producing.
Result<std::shared_ptr<arrow::Table>> PruningScan(const skade::Table& table,
                                                  const CompiledTable& ct, int64_t previous,
                                                  std::shared_ptr<arrow::Table> current) {
  SKADE_ASSIGN_OR_RETURN(auto before, Scan(table, ct, previous));
  auto tag = [](const std::shared_ptr<arrow::Table>& t, const char* type,
                int32_t ordinal) -> Result<std::shared_ptr<arrow::Table>> {
    arrow::StringBuilder types;
    arrow::Int32Builder ordinals;
    for (int64_t i = 0; i < t->num_rows(); ++i) {
      SKADE_ARROW_RETURN(types.Append(type), "tagging rows");
      SKADE_ARROW_RETURN(ordinals.Append(ordinal), "tagging rows");
    }
    SKADE_ARROW_ASSIGN(auto type_col, types.Finish(), "tagging rows");
    SKADE_ARROW_ASSIGN(auto ord_col, ordinals.Finish(), "tagging rows");
    SKADE_ARROW_ASSIGN(auto with_type,
                       t->AddColumn(t->num_columns(), arrow::field("_change_type", arrow::utf8()),
                                    std::make_shared<arrow::ChunkedArray>(type_col)),
                       "tagging rows");
    SKADE_ARROW_ASSIGN(auto tagged,
                       with_type->AddColumn(with_type->num_columns(),
                                            arrow::field("_change_ordinal", arrow::int32()),
                                            std::make_shared<arrow::ChunkedArray>(ord_col)),
                       "tagging rows");
    return tagged;
  };
  SKADE_ASSIGN_OR_RETURN(auto gone, tag(before, "DELETE", 0));
  SKADE_ASSIGN_OR_RETURN(auto now, tag(current, "INSERT", 1));
  SKADE_ARROW_ASSIGN(auto both, arrow::ConcatenateTables({gone, now}),
                     "combining snapshots to prune");
  return both;
}

// Appended rows: the delta, filtered and projected here since read_delta takes neither.
Result<std::shared_ptr<arrow::Table>> Delta(const skade::Table& table, const CompiledTable& ct,
                                            int64_t from, int64_t to) {
  SKADE_ASSIGN_OR_RETURN(auto rows, skade::cdc::ReadDelta(table, from, to));
  if (!ct.spec.filter.empty()) {
    SKADE_ASSIGN_OR_RETURN(auto unbound, skade::expr::Parse(ct.spec.filter));
    SKADE_ASSIGN_OR_RETURN(auto bound, skade::expr::Bind(unbound, *ct.schema));
    SKADE_ARROW_ASSIGN(auto batch, rows->CombineChunksToBatch(), "combining delta rows");
    SKADE_ASSIGN_OR_RETURN(batch, skade::expr::FilterBatch(*bound, *ct.schema, batch));
    SKADE_ARROW_ASSIGN(rows, arrow::Table::FromRecordBatches({batch}), "delta rows");
  }
  if (ct.projection.empty()) return rows;
  SKADE_ARROW_ASSIGN(auto projected, rows->SelectColumns([&] {
    std::vector<int> idx;
    for (const auto& c : ct.projection) idx.push_back(rows->schema()->GetFieldIndex(c));
    return idx;
  }()),
                     "projecting delta rows");
  return projected;
}

// Rewrites a changelog's metadata columns: `invert` swaps each change for its undoing
// (INSERT<->DELETE, UPDATE_BEFORE<->UPDATE_AFTER); `ordinal` maps each ordinal.
Result<std::shared_ptr<arrow::Table>> Rewrite(const std::shared_ptr<arrow::Table>& t, bool invert,
                                              int32_t (*ordinal)(int32_t)) {
  SKADE_ARROW_ASSIGN(auto batch, t->CombineChunksToBatch(), "combining changelog rows");
  int type_at = batch->schema()->GetFieldIndex("_change_type");
  int ord_at = batch->schema()->GetFieldIndex("_change_ordinal");
  const auto& types = static_cast<const arrow::StringArray&>(*batch->column(type_at));
  const auto& ords = static_cast<const arrow::Int32Array&>(*batch->column(ord_at));
  arrow::StringBuilder new_types;
  arrow::Int32Builder new_ords;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    std::string_view type = types.GetView(i);
    if (invert)
      type = type == "INSERT"          ? "DELETE"
             : type == "DELETE"        ? "INSERT"
             : type == "UPDATE_BEFORE" ? "UPDATE_AFTER"
                                       : "UPDATE_BEFORE";
    SKADE_ARROW_RETURN(new_types.Append(type), "rewriting changelog rows");
    SKADE_ARROW_RETURN(new_ords.Append(ordinal(ords.Value(i))), "rewriting changelog rows");
  }
  SKADE_ARROW_ASSIGN(auto type_col, new_types.Finish(), "rewriting changelog rows");
  SKADE_ARROW_ASSIGN(auto ord_col, new_ords.Finish(), "rewriting changelog rows");
  SKADE_ARROW_ASSIGN(batch, batch->SetColumn(type_at, batch->schema()->field(type_at), type_col),
                     "rewriting changelog rows");
  SKADE_ARROW_ASSIGN(batch, batch->SetColumn(ord_at, batch->schema()->field(ord_at), ord_col),
                     "rewriting changelog rows");
  SKADE_ARROW_ASSIGN(auto out, arrow::Table::FromRecordBatches({batch}), "changelog rows");
  return out;
}

// The cursor left the table's main line (a rollback): undo what happened after the
// last snapshot both lines share, then apply what the main line did since. Read as
// one changelog: the undoing first (ordinal 0), then the main line's changes.
Result<std::shared_ptr<arrow::Table>> AcrossRollback(const skade::Table& table,
                                                     const skade::cdc::ChangelogOptions& opts,
                                                     int64_t cursor, int64_t current,
                                                     std::string& description) {
  const auto& m = *table.metadata();
  std::unordered_set<int64_t> main_line;
  for (const skade::Snapshot* s : m.Ancestors(current)) main_line.insert(s->snapshot_id);
  std::optional<int64_t> shared;
  for (const skade::Snapshot* s : m.Ancestors(cursor)) {
    if (main_line.contains(s->snapshot_id)) {
      shared = s->snapshot_id;
      break;
    }
  }
  if (!shared)
    return skade::NotFound("the cursor's snapshot " + std::to_string(cursor) +
                           " shares no history with the current snapshot " +
                           std::to_string(current) +
                           ": run `bifrost build --rebuild` to build the graph afresh");
  skade::cdc::ChangelogOptions net = opts;
  net.net_changes = true;
  SKADE_ASSIGN_OR_RETURN(auto undone, skade::cdc::ReadChangelog(table, *shared, cursor, net));
  SKADE_ASSIGN_OR_RETURN(undone, Rewrite(undone, true, [](int32_t) { return 0; }));
  SKADE_ASSIGN_OR_RETURN(auto redone, skade::cdc::ReadChangelog(table, *shared, current, opts));
  SKADE_ASSIGN_OR_RETURN(redone, Rewrite(redone, false, [](int32_t o) { return o + 1; }));
  description = "snapshot " + std::to_string(cursor) + " was rolled back: undid its changes after " +
                std::to_string(*shared) + ", then changes up to " + std::to_string(current);
  SKADE_ARROW_ASSIGN(auto both, arrow::ConcatenateTables({undone, redone}),
                     "combining undone and new changes");
  return both;
}

}  // namespace

std::string SkadeSource::TableNames() {
  auto tables = catalog_.ListTables();
  if (!tables || tables->empty()) return "none";
  std::string out;
  for (const auto& t : *tables) out += (out.empty() ? "" : ", ") + t.ToString();
  return out;
}

Result<std::optional<Fetched>> SkadeSource::FetchNew(const CompiledTable& ct,
                                                     const TableState& state) {
  auto loaded = skade::Table::Load(catalog_, ct.ident);
  if (!loaded) {
    if (loaded.error().kind == skade::ErrorKind::kNotFound)
      return skade::NotFound("table '" + ct.ident.ToString() +
                             "' not found (tables: " + TableNames() + ")");
    return std::unexpected(std::move(loaded).error());
  }
  return FetchFromTable(**loaded, ct, state, [this] { return TableNames(); });
}

Result<std::optional<Fetched>> FetchFromTable(const skade::Table& table, const CompiledTable& ct,
                                              const TableState& state,
                                              const std::function<std::string()>& table_names) {
  const skade::Snapshot* current = table.metadata()->CurrentSnapshot();
  if (current && state.snapshot_id == current->snapshot_id) return std::nullopt;
  if (!current && state.snapshot_id) return std::nullopt;

  Fetched f;
  f.next = state;
  const bool first = !state.snapshot_id.has_value();
  if (!first && (ct.spec.mode != SyncMode::kFull || ct.spec.prune) &&
      !table.metadata()->SnapshotById(*state.snapshot_id))
    return skade::NotFound(
        "table '" + ct.ident.ToString() + "': the cursor's snapshot " +
        std::to_string(*state.snapshot_id) +
        " is no longer in the table's metadata (expired); changes since it cannot be read: "
        "run `bifrost build --rebuild` to build the graph afresh");
  if (!current) {
    f.rows = arrow::Table::MakeEmpty(arrow::schema({})).ValueOrDie();
    f.description = "no snapshot (the table was never written)";
  } else {
    int64_t snap = current->snapshot_id;
    f.next.snapshot_id = snap;
    const bool on_main_line = first || ct.spec.mode == SyncMode::kFull ||
                              table.metadata()->IsAncestor(*state.snapshot_id, snap);
    skade::cdc::ChangelogOptions changelog;
    changelog.columns = ct.projection;
    changelog.filter = ct.spec.filter;
    if (ct.spec.mode == SyncMode::kFull || first) {
      SKADE_ASSIGN_OR_RETURN(f.rows, Scan(table, ct, snap));
      f.description = "snapshot " + std::to_string(snap) + " (full scan)";
      if (ct.spec.prune && !first) {
        SKADE_ASSIGN_OR_RETURN(f.rows, PruningScan(table, ct, *state.snapshot_id, f.rows));
        f.description += ", pruned against snapshot " + std::to_string(*state.snapshot_id);
      }
    } else if (ct.spec.mode == SyncMode::kIncremental && !on_main_line) {
      // Appends cannot say what a rollback removed; rescan like a rewrite.
      SKADE_ASSIGN_OR_RETURN(f.rows, Scan(table, ct, snap));
      f.description = "snapshot " + std::to_string(snap) + " (full rescan: the table was rolled back)";
    } else if (ct.spec.mode == SyncMode::kIncremental) {
      SKADE_ASSIGN_OR_RETURN(auto plan, skade::cdc::PlanDelta(table, state.snapshot_id, snap));
      if (plan.needs_full_reload) {
        // Rows were removed or rewritten: appended rows alone do not describe it.
        SKADE_ASSIGN_OR_RETURN(f.rows, Scan(table, ct, snap));
        f.description = "snapshot " + std::to_string(snap) + " (full rescan: rows were rewritten)";
      } else {
        SKADE_ASSIGN_OR_RETURN(f.rows, Delta(table, ct, *state.snapshot_id, snap));
        f.description = "appends after snapshot " + std::to_string(*state.snapshot_id) + " up to " +
                        std::to_string(snap);
      }
    } else if (!on_main_line) {
      SKADE_ASSIGN_OR_RETURN(
          f.rows, AcrossRollback(table, changelog, *state.snapshot_id, snap, f.description));
    } else {
      SKADE_ASSIGN_OR_RETURN(f.rows,
                             skade::cdc::ReadChangelog(table, state.snapshot_id, snap, changelog));
      f.description = "changes after snapshot " + std::to_string(*state.snapshot_id) + " up to " +
                      std::to_string(snap);
    }
  }
  if (first && f.rows->num_rows() == 0 && !ct.spec.allow_empty)
    return skade::InvalidArgument(
        "table '" + ct.ident.ToString() + "': empty read refused: " + f.description +
        " gave 0 rows (set allow_empty: true to accept; tables: " + table_names() + ")");
  return f;
}

SchemaLookup CatalogSchemas(skade::Catalog& catalog) {
  return
      [&catalog](const skade::TableIdent& ident) -> Result<std::shared_ptr<const skade::Schema>> {
        auto loaded = catalog.LoadTable(ident);
        if (!loaded) {
          if (loaded.error().kind != skade::ErrorKind::kNotFound)
            return std::unexpected(std::move(loaded).error());
          SkadeSource names(catalog);
          return skade::NotFound("table '" + ident.ToString() +
                                 "' not found (tables: " + names.TableNames() + ")");
        }
        return loaded->metadata->schema();
      };
}

}  // namespace bifrost
