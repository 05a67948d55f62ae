// Which delete files apply to which data files (spec "Scan Planning"), and the
// deleted rows they describe, loaded once per scan.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"

namespace arrow {
class Array;
class RecordBatch;
}  // namespace arrow

namespace skade {

class FileIO;

/// Reserved field ids of position delete files.
inline constexpr int kDeleteFilePathId = 2147483546;
inline constexpr int kDeletePosId = 2147483545;

struct DeleteFileEntry {
  DataFile file;
  int64_t data_sequence_number = 0;
};

/// Indexes a snapshot's live delete files for lookup by data file.
class DeleteIndex {
 public:
  void Add(DeleteFileEntry entry);
  bool empty() const { return count_ == 0; }
  /// Deletes that apply to a data file with the given data sequence number:
  /// position deletes with seq >= data seq, equality deletes with seq > data seq, in
  /// the same partition (or from an unpartitioned spec, which applies everywhere).
  std::vector<DeleteFileEntry> For(const DataFile& data_file, int64_t data_sequence_number,
                                   const TableMetadata& metadata) const;

 private:
  std::map<std::string, std::vector<DeleteFileEntry>> by_partition_;  // spec id + tuple key
  std::vector<DeleteFileEntry> global_;
  size_t count_ = 0;
};

/// Key of a partition tuple within a spec (for grouping files).
std::string PartitionTupleKey(int spec_id, const std::vector<Value>& tuple);

/// The keys of one equality delete file, as EqualityKey text; when the key is one
/// int or long column, also as numbers, so data rows are checked without encoding.
struct EqualityKeySet {
  std::unordered_set<std::string> text;
  bool numeric = false;
  std::unordered_set<int64_t> numbers;
  bool has_null = false;
};

/// Deleted rows of one data file: positions, and equality keys by field-id set.
class DeletedRows {
 public:
  /// Key sets of equality deletes over one list of field ids (owned by the loader).
  struct EqualitySets {
    std::vector<int> field_ids;
    std::vector<const EqualityKeySet*> keys;
    bool Contains(const std::string& key) const {
      for (const auto* k : keys)
        if (k->text.contains(key)) return true;
      return false;
    }
    bool numeric() const {
      for (const auto* k : keys)
        if (!k->numeric) return false;
      return true;
    }
  };
  bool empty() const { return positions_.empty() && equality_.empty(); }
  bool PositionDeleted(int64_t pos) const {
    return std::binary_search(positions_.begin(), positions_.end(), pos);
  }
  /// Deleted positions, ascending and distinct.
  const std::vector<int64_t>& positions() const { return positions_; }
  const std::vector<EqualitySets>& equality() const { return equality_; }

  /// Adds positions (kept sorted: rows are checked in file order, see DeletedFlags).
  void AddPositions(const std::vector<int64_t>& positions);
  void AddEqualityKeys(const std::vector<int>& field_ids, const EqualityKeySet* keys);

 private:
  std::vector<int64_t> positions_;
  std::vector<EqualitySets> equality_;
};

/// Loads delete files (cached by path for the life of the loader).
class DeleteLoader {
 public:
  DeleteLoader(FileIO* io, SchemaPtr schema) : io_(io), schema_(std::move(schema)) {}
  /// The rows `deletes` remove from `data_file_path`. Errors: kCorrupt naming the file.
  Result<DeletedRows> Load(const std::string& data_file_path, const std::vector<DeleteFileEntry>& deletes);

 private:
  struct PositionFile {
    std::unordered_map<std::string, std::vector<int64_t>> by_path;
  };
  Result<const PositionFile*> LoadPositions(const DataFile& f);
  Result<const EqualityKeySet*> LoadEquality(const DataFile& f);

  FileIO* io_;
  SchemaPtr schema_;
  std::unordered_map<std::string, std::unique_ptr<PositionFile>> positions_;
  std::unordered_map<std::string, std::unique_ptr<EqualityKeySet>> equality_;
};

/// For each row of `batch`, whether `deleted` removes it; `position_of(row)` gives
/// the row's position in its data file. Equality columns are found by field id
/// through `schema`. Errors: kCorrupt when an equality column is missing.
Result<std::vector<bool>> DeletedFlags(const DeletedRows& deleted, const arrow::RecordBatch& batch,
                                       const Schema& schema,
                                       const std::function<int64_t(int64_t)>& position_of);

/// The equality key of row `row` over the given columns (same encoding for data
/// and delete files; nulls match nulls).
Result<std::string> EqualityKey(const std::vector<std::shared_ptr<arrow::Array>>& columns,
                                const std::vector<TypePtr>& types, int64_t row);

}  // namespace skade
