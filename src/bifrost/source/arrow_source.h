// Arrow tables a caller already holds (a remote warehouse, a REST catalog client, a
// computation in this process) as a source: a batch read, not CDC.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "bifrost/source/table_source.h"

namespace bifrost {

class ArrowSource : public TableSource {
 public:
  /// Replaces what `table` (namespace.name) holds. Not thread-safe with FetchNew.
  void Put(const std::string& table, std::shared_ptr<arrow::Table> rows);

  /// full: every round re-reads the table (MERGE makes that harmless); incremental:
  /// ships once, then reports nothing new until Put replaces it; cdc: kUnsupported
  /// naming the sources that can. Errors: kNotFound listing the tables held.
  Result<std::optional<Fetched>> FetchNew(const CompiledTable& table,
                                          const TableState& state) override;

 private:
  std::map<std::string, std::shared_ptr<arrow::Table>> tables_;
  std::map<std::string, int64_t> versions_;  // bumped by Put: the cursor of incremental mode
};

}  // namespace bifrost
