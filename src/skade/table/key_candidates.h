// Which data files might hold rows with given identifier keys, so key-based deletes
// and upserts read only the key columns of those: pruned by partition (for specs
// whose partition the keys determine) and by the files' key-column bounds.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "skade/common/result.h"
#include "skade/expr/expression.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"

namespace arrow {
class Array;
class RecordBatch;
}  // namespace arrow

namespace skade {

class KeyCandidates {
 public:
  /// `key_rows` holds the key columns (by field id) of `schema`; `ids` are the
  /// identifier fields. Errors: kInvalidArgument when a key value does not fit.
  static Result<KeyCandidates> Make(const arrow::RecordBatch& key_rows, const Schema& schema,
                                    const std::vector<const NestedField*>& ids,
                                    const TableMetadata& metadata);

  /// False only when no key can be in `file` (its partition or bounds rule it out).
  bool MightHold(const DataFile& file) const;

  /// A bound filter true for every row holding one of the keys (per key column an
  /// in-list, or the keys' range when there are many): what a concurrent commit must
  /// not add rows matching. Null when there are no keys.
  expr::ExprPtr Filter() const { return filter_; }

  bool empty() const { return empty_; }

 private:
  struct Column {
    int field_id;
    TypePtr type;
    // Distinct non-null key values, ascending, as an Arrow array: a few bytes a key where
    // a vector of Values took 40 and more.
    std::shared_ptr<arrow::Array> sorted;
  };
  std::vector<Column> columns_;
  // Per spec id whose partition fields all derive from key columns: the tuples of the keys.
  std::map<int, std::unordered_set<std::string>> partitions_;
  expr::ExprPtr filter_;
  bool empty_ = true;
};

}  // namespace skade
