// A Parquet drop folder: files land in `<root>/<table>/`, each is read once (the
// ledger keeps the names done), oldest name first.
#pragma once

#include <string>

#include "bifrost/source/table_source.h"

namespace bifrost {

class ParquetFolderSource : public TableSource {
 public:
  explicit ParquetFolderSource(std::string root) : root_(std::move(root)) {}

  /// incremental: the files not done yet; full: every file, whenever one is new (MERGE
  /// makes re-reading harmless); cdc: kUnsupported (files carry no changelog).
  /// Errors: kNotFound naming the folder and the table folders that exist.
  Result<std::optional<Fetched>> FetchNew(const CompiledTable& table,
                                          const TableState& state) override;

  /// The schema of the table's first file (for compiling the mapping).
  Result<std::shared_ptr<const skade::Schema>> SchemaOf(const std::string& table);
  const std::string& root() const { return root_; }

 private:
  Result<std::vector<std::string>> Files(const std::string& table);
  std::string TableFolders();
  std::string root_;
};

}  // namespace bifrost
