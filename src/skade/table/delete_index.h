// Which delete files apply to which data files (spec "Scan Planning"), and the
// deleted rows they describe, loaded once per scan.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "skade/common/result.h"
#include "skade/format/manifest.h"
#include "skade/format/table_metadata.h"

namespace arrow {
class Array;
class BooleanArray;
class MemoryPool;
class RecordBatch;
}  // namespace arrow

namespace skade {

class FileIO;

/// Reserved field ids of position delete files.
inline constexpr int kDeleteFilePathId = 2147483546;
inline constexpr int kDeletePosId = 2147483545;

/// A live delete file and its data sequence number. The file is shared: every data
/// file's task names the delete files that apply to it, so with N uncompacted
/// equality-delete commits a plan holds about N^2/2 entries, and copying the files'
/// stats into each would grow the plan as the square of the commits.
struct DeleteFileEntry {
  std::shared_ptr<const DataFile> file;
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
  /// Delete files whose bounds (file_path for position deletes, key columns for
  /// equality deletes) exclude the data file are left out.
  std::vector<DeleteFileEntry> For(const DataFile& data_file, int64_t data_sequence_number,
                                   const TableMetadata& metadata) const;

 private:
  std::map<std::string, std::vector<DeleteFileEntry>> by_partition_;  // spec id + tuple key
  std::vector<DeleteFileEntry> global_;
  size_t count_ = 0;
};

/// Key of a partition tuple within a spec (for grouping files).
std::string PartitionTupleKey(int spec_id, const std::vector<Value>& tuple);

/// The keys of a set of equality delete files over one list of columns, hashed
/// once (typed, from the Arrow buffers) into an open hash table; data rows are
/// probed by hashing only their key columns.
class EqualityProbe {
 public:
  /// No sequence threshold: every key of the set deletes.
  static constexpr int64_t kAnySequence = std::numeric_limits<int64_t>::min();
  /// `keys`: the key columns (one array each, same length), typed as the table's.
  /// `sequences` (empty, or one per key row): the data sequence number of the delete
  /// file each key came from; the probe then keeps each key's newest.
  /// Errors: kInvalidArgument for a column type keys cannot be compared on.
  static Result<std::unique_ptr<EqualityProbe>> Make(std::vector<std::shared_ptr<arrow::Array>> keys,
                                                     std::vector<int64_t> sequences = {});
  /// Sets `out[r]` for each row whose key is one of the set (nulls match nulls) and,
  /// with sequences, was deleted by a file newer than `after_sequence`; rows already
  /// set are skipped.
  Status Mark(const std::vector<std::shared_ptr<arrow::Array>>& columns, std::vector<bool>* out,
              int64_t after_sequence = kAnySequence) const;

 private:
  Status MarkDense(const arrow::Array& column, std::vector<bool>* out, int64_t after_sequence) const;
  /// How many of the distinct sequences are at most `after_sequence`: keys of a higher rank delete.
  uint32_t AfterRank(int64_t after_sequence) const;

  std::vector<std::shared_ptr<arrow::Array>> keys_;
  // Integer-like keys within a modest range: one bit per value from lo_ (no hashing).
  std::vector<uint64_t> bits_;
  // With sequences: the distinct ones, ascending, and the newest per key as its rank
  // there, 1-based (per value from lo_ when dense, 0 where a value is no key; per hash
  // entry otherwise), and the null key's. A rank takes rank_width_ bytes, as few as the
  // count of sequences allows: dense over 1M ids, 1 MB where 4 bytes made 4 MB to fault in.
  std::vector<int64_t> sequences_;
  std::vector<uint8_t> newest_;
  size_t rank_width_ = 1;
  uint32_t null_newest_ = 0;
  uint32_t NewestAt(size_t i) const;
  void RaiseNewest(size_t i, uint32_t rank);
  bool by_sequence() const { return !sequences_.empty(); }
  int64_t lo_ = 0;
  uint64_t span_ = 0;
  bool dense_ = false;
  std::vector<uint64_t> hashes_;
  std::vector<int32_t> heads_, next_;  // buckets: first key index, then chains
  uint64_t mask_ = 0;
  bool exact_ = false;     // one fixed-width column of <= 8 bytes: equal hashes mean equal keys
  bool has_null_ = false;  // exact_ only: a null key (not in the table)
};

/// Deleted rows of one data file: positions, and equality keys by field-id set.
class DeletedRows {
 public:
  /// The merged key set of the equality deletes over one list of field ids (owned by the loader).
  struct EqualitySet {
    std::vector<int> field_ids;
    const EqualityProbe* probe = nullptr;
    int64_t after_sequence = EqualityProbe::kAnySequence;  // see EqualityProbe::Mark
  };
  bool empty() const { return positions_.empty() && equality_.empty(); }
  bool PositionDeleted(int64_t pos) const {
    return std::binary_search(positions_.begin(), positions_.end(), pos);
  }
  /// Deleted positions, ascending and distinct.
  const std::vector<int64_t>& positions() const { return positions_; }
  const std::vector<EqualitySet>& equality() const { return equality_; }

  /// Adds positions (kept sorted: rows are checked in file order, see DeletedFlags).
  void AddPositions(const std::vector<int64_t>& positions);
  void AddEquality(std::vector<int> field_ids, const EqualityProbe* probe,
                   int64_t after_sequence = EqualityProbe::kAnySequence);

 private:
  std::vector<int64_t> positions_;
  std::vector<EqualitySet> equality_;
};

/// Loads delete files (cached by path for the life of the loader); the key sets of
/// the equality deletes that apply together are merged once per distinct set.
/// Thread-safe; what Load returns stays valid for the life of the loader.
class DeleteLoader {
 public:
  DeleteLoader(FileIO* io, SchemaPtr schema) : io_(io), schema_(std::move(schema)) {}
  /// Announces delete files loads will name (before the first Load). The equality
  /// deletes of one scope (global, or one partition) over the same columns then share
  /// one key set that keeps each key's newest sequence number: a data file whose
  /// deletes are exactly the scope's files newer than it probes that set. Otherwise
  /// each data file's own set is merged, which grows with the square of the number of
  /// uncompacted equality-delete commits.
  void Expect(const std::vector<DeleteFileEntry>& deletes);
  /// The rows `deletes` remove from `data_file`, of data sequence number
  /// `data_sequence`. Errors: kCorrupt naming the file.
  Result<DeletedRows> Load(const DataFile& data_file, int64_t data_sequence,
                           const std::vector<DeleteFileEntry>& deletes);

 private:
  struct PositionFile {
    std::unordered_map<std::string, std::vector<int64_t>> by_path;
  };
  /// A position delete file's positions by data file, or a deletion vector's (of a data
  /// file of `data_rows` rows, its bound).
  Result<const PositionFile*> LoadPositions(const DataFile& f, int64_t data_rows);
  /// The key columns of one equality delete file, typed as the table's columns.
  Result<const std::vector<std::shared_ptr<arrow::Array>>*> LoadKeyColumns(const DataFile& f);
  /// One key set over the keys of `files` (deleting by the same columns); with
  /// `by_sequence`, each key keeps the newest data sequence number of the files naming it.
  Result<std::unique_ptr<EqualityProbe>> MergeKeys(const std::vector<const DeleteFileEntry*>& files, bool by_sequence);
  Result<const EqualityProbe*> ProbeFor(const std::vector<int>& field_ids,
                                        std::vector<const DeleteFileEntry*> files);
  /// The equality deletes of one scope over one list of columns, announced by Expect.
  struct ScopeGroup {
    std::vector<DeleteFileEntry> files;
    std::unique_ptr<EqualityProbe> probe;  // built at first use
  };
  Result<const EqualityProbe*> GroupProbe(ScopeGroup& group);

  FileIO* io_;
  SchemaPtr schema_;
  std::mutex mu_;  // guards the caches below
  std::unordered_map<std::string, std::unique_ptr<PositionFile>> positions_;  // by DataFile::EntryKey
  std::unordered_map<std::string, std::string> puffin_;                       // Puffin files' bytes by path
  std::unordered_map<std::string, std::vector<std::shared_ptr<arrow::Array>>> key_columns_;
  std::unordered_map<std::string, std::unique_ptr<EqualityProbe>> probes_;  // by field ids + file paths
  std::unordered_map<std::string, ScopeGroup> groups_;                     // by field ids + scope
  std::unordered_map<std::string, ScopeGroup*> group_of_;                  // announced files by path
};

/// For each row of `batch`, whether `deleted` removes it; `position_of(row)` gives
/// the row's position in its data file. Equality columns are found by field id
/// through `schema`. Errors: kCorrupt when an equality column is missing.
Result<std::vector<bool>> DeletedFlags(const DeletedRows& deleted, const arrow::RecordBatch& batch,
                                       const Schema& schema,
                                       const std::function<int64_t(int64_t)>& position_of);

/// The rows of `batch` where `keep` (no nulls, `kept` of them set) is true. Each column
/// is copied once into buffers of exactly its size, runs of kept rows whole (Arrow's
/// filter grows its string buffers by doubling, touching fresh pages each time).
/// `in_place`: the kept rows are moved to the front of the batch's own buffers instead
/// (no new memory for fixed-width and string columns), so the input must be read by
/// nothing else afterwards; slices of one column that share buffers may each be kept in
/// place, in any order. New memory comes from `pool` (null: Arrow's default).
/// Errors: kInternal when memory cannot be had.
Result<std::shared_ptr<arrow::RecordBatch>> KeepRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                     const arrow::BooleanArray& keep, int64_t kept,
                                                     bool in_place = false, arrow::MemoryPool* pool = nullptr);

}  // namespace skade
