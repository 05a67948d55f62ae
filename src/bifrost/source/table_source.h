// Sources: where a table's new rows come from. Each keeps a per-table cursor
// (TableState) that the state ledger stores after the sink has applied the rows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bifrost/transform/transform.h"

namespace arrow {
class Table;
}
namespace skade {
class Table;
}

namespace bifrost {

/// A table's cursor: the snapshot applied last, and the files a file source has done.
struct TableState {
  std::optional<int64_t> snapshot_id;
  std::vector<std::string> done_files;
  bool operator==(const TableState&) const = default;
};

/// Rows since the cursor and the cursor to store once they are applied.
struct Fetched {
  std::shared_ptr<arrow::Table> rows;
  TableState next;
  std::string description;  // "snapshot 42 (full scan)": for reports and errors
};

class TableSource {
 public:
  virtual ~TableSource() = default;
  /// nullopt when nothing changed since `state` (idle, not an error). A first read
  /// that yields no rows is refused unless the mapping allows it: the error names the
  /// table, what was read and the tables that exist. Errors: kNotFound for a missing
  /// table, kUnsupported for a mode the source cannot serve.
  virtual Result<std::optional<Fetched>> FetchNew(const CompiledTable& table,
                                                  const TableState& state) = 0;
};

/// Reads a skade warehouse: full mode scans the current snapshot with the derived
/// projection and the filter pushed down; incremental reads the rows appended since
/// the cursor (read_delta); cdc reads the changelog since the cursor. The first
/// round of incremental and cdc is a full scan.
class SkadeSource : public TableSource {
 public:
  /// `catalog` is borrowed.
  explicit SkadeSource(skade::Catalog& catalog) : catalog_(catalog) {}
  Result<std::optional<Fetched>> FetchNew(const CompiledTable& table,
                                          const TableState& state) override;

  /// The catalog's tables, comma separated (for error messages).
  std::string TableNames();

 private:
  skade::Catalog& catalog_;
};

/// What a skade-backed source does once it holds the table (the warehouse's, or one
/// loaded from a REST catalog): the full scan, appends or changelog since `state`, as
/// SkadeSource documents. `table_names` lists the tables there are, for errors.
Result<std::optional<Fetched>> FetchFromTable(const skade::Table& table, const CompiledTable& ct,
                                              const TableState& state,
                                              const std::function<std::string()>& table_names);

/// Schema lookup for CompileMapping against a catalog; a missing table's error lists
/// the tables that exist.
SchemaLookup CatalogSchemas(skade::Catalog& catalog);

}  // namespace bifrost
