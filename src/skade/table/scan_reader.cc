// The scan's record-batch reader: the planned files' selected row groups are decoded
// concurrently on the shared task pool, at most `parallelism` at once and within a
// memory budget (decoded bytes read ahead and not yet handed out), and handed out in
// plan order. A row group too large for the budget is read a batch at a time, its
// column groups each a few batches ahead on the pool (Stream). With a
// filter, the filter (and equality-delete) columns of a row group are decoded first;
// the other projected columns only when some row survives, and of those columns only
// the surviving rows (FlatColumnReader's `wanted`), from the data pages holding one
// (ReadNeededPages for numbers it does not read). Deletes by position alone are known
// before reading: every column is decoded for the surviving rows only, streamed row
// groups too. A streamed row group with equality deletes (and no filter) reads its key
// columns a batch ahead, and the other columns of each batch for its survivors only. A
// filter on a dictionary-encoded string looks at each dictionary entry once, and such
// columns stay dictionaries until the surviving rows are known.
//
// A row group decodes as tasks of a few columns each (largest first), and no task waits
// for another: the last task of a phase runs the selection or the batch assembly and
// starts what follows. Tasks of earlier row groups run first (pool tickets), so the
// workers move on to the next row groups while one is being finished, and the largest
// column, dictionary expansion included, is never a serial tail behind the others.
// (A row group read as one task waited on Arrow's pool for its columns, then expanded
// its dictionaries alone: cores idled between row groups.)
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/util/bit_run_reader.h>
#include <arrow/util/bitmap_ops.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/size_statistics.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>

#include "skade/common/task_pool.h"
#include "skade/common/thread_clock.h"
#include "skade/expr/arrow_filter.h"
#include "skade/format/metadata_columns.h"
#include "skade/io/file_io.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/data_writer.h"
#include "skade/table/flat_columns_internal.h"
#include "skade/table/needed_pages_internal.h"
#include "skade/table/parquet_read.h"
#include "skade/table/parquet_stats.h"
#include "skade/table/scan_reader_internal.h"

namespace skade {
namespace {

// The leaves of a file's top-level field `f` that hold what `want` (the table's field,
// a struct perhaps cut down to some of its fields) reads: a struct's children matched
// as FindChild does, children the table dropped or the scan does not want left out.
// A struct keeps one leaf at least, for its own nulls.
void CollectWantedLeaves(const parquet::arrow::SchemaField& f, const NestedField& want, std::vector<int>* out) {
  if (want.type->id != TypeId::kStruct || f.field->type()->id() != arrow::Type::STRUCT) {
    CollectLeaves(f, out);
    return;
  }
  const size_t before = out->size();
  for (const auto& child : want.type->fields)
    if (int k = FindChild(*f.field->type(), child); k >= 0)
      CollectWantedLeaves(f.children[static_cast<size_t>(k)], child, out);
  if (out->size() == before) {
    std::vector<int> all;
    CollectLeaves(f, &all);
    if (!all.empty()) out->push_back(all.front());
  }
}

// The ids of a (cut down) field's parts that are whole: PruneField of the whole field
// to them gives it back.
void WholeParts(const NestedField& f, std::vector<int>* ids) {
  if (f.type->id != TypeId::kStruct || f.type->fields.empty()) {
    ids->push_back(f.id);
    return;
  }
  for (const auto& c : f.type->fields) WholeParts(c, ids);
}

// A dictionary-encoded string or binary column as the dense array the table's type
// asks for, sized exactly up front (Parquet's dense decoder grows a builder, copying
// and touching fresh pages as it doubles). Null when it is not one this handles.
template <typename DictValues>
Result<std::shared_ptr<arrow::Array>> DenseFromDictionary(arrow::MemoryPool* pool, const arrow::DictionaryArray& arr,
                                                          const std::shared_ptr<arrow::DataType>& want,
                                                          const std::string& where) {
  const auto& dict = static_cast<const DictValues&>(*arr.dictionary());
  const auto& indices = static_cast<const arrow::Int32Array&>(*arr.indices());
  const int64_t n = arr.length();
  const int32_t* idx = indices.raw_values();
  const auto* dict_offsets = dict.raw_value_offsets();
  const uint8_t* dict_data = dict.raw_data();
  const bool nulls = arr.null_count() > 0;
  const int64_t size = dict.length();
  int64_t total = 0;
  for (int64_t r = 0; r < n; ++r) {
    if (nulls && indices.IsNull(r)) continue;
    if (idx[r] < 0 || idx[r] >= size) return Corrupt(where + ": dictionary index out of range");
    total += dict_offsets[idx[r] + 1] - dict_offsets[idx[r]];
  }
  if (total > std::numeric_limits<int32_t>::max()) return nullptr;
  // The output has room for CopyString's fixed moves; values too near the end of the
  // dictionary's data to read past are copied exactly.
  SKADE_ARROW_ASSIGN(auto offsets, arrow::AllocateBuffer((n + 1) * sizeof(int32_t), pool), where);
  SKADE_ARROW_ASSIGN(auto data, arrow::AllocateResizableBuffer(total + kStringSlack, pool), where);
  auto* out_offsets = reinterpret_cast<int32_t*>(offsets->mutable_data());
  uint8_t* out = data->mutable_data();
  const int64_t overreadable = dict.value_data()->size() - kStringSlack;  // values starting up to here
  int32_t at = 0;
  for (int64_t r = 0; r < n; ++r) {
    out_offsets[r] = at;
    if (nulls && indices.IsNull(r)) continue;
    const int64_t begin = dict_offsets[idx[r]];
    const auto len = static_cast<int32_t>(dict_offsets[idx[r] + 1] - begin);
    CopyString(out + at, dict_data + begin, len, begin <= overreadable);
    at += len;
  }
  out_offsets[n] = at;
  SKADE_ARROW_RETURN(data->Resize(total, /*shrink_to_fit=*/false), where);
  std::shared_ptr<arrow::Buffer> validity;
  if (nulls) {
    SKADE_ARROW_ASSIGN(validity, arrow::internal::CopyBitmap(pool, indices.null_bitmap_data(),
                                                             indices.offset(), n),
                       where);
  }
  return arrow::MakeArray(arrow::ArrayData::Make(want, n, {validity, std::move(offsets), std::move(data)},
                                                 arr.null_count()));
}

Result<std::shared_ptr<arrow::Array>> DenseFromDictionary(arrow::MemoryPool* pool, const arrow::DictionaryArray& arr,
                                                          const std::shared_ptr<arrow::DataType>& want,
                                                          const std::string& where) {
  if (arr.indices()->type_id() != arrow::Type::INT32) return nullptr;
  switch (arr.dictionary()->type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY: return DenseFromDictionary<arrow::BinaryArray>(pool, arr, want, where);
    case arrow::Type::LARGE_STRING:  // files whose stored Arrow schema says large (PyIceberg's)
    case arrow::Type::LARGE_BINARY: return DenseFromDictionary<arrow::LargeBinaryArray>(pool, arr, want, where);
    default: return nullptr;
  }
}

// Whether a column read from a file is a dictionary of the table's string or binary
// field: the filter step keeps it so (predicates look at each entry once) and only the
// rows that survive are made dense (DenseColumns).
bool KeptDictionary(const arrow::Array& arr, const NestedField& target) {
  if (arr.type_id() != arrow::Type::DICTIONARY) return false;
  if (target.type->id != TypeId::kString && target.type->id != TypeId::kBinary) return false;
  const auto& dt = static_cast<const arrow::DictionaryType&>(*arr.type());
  switch (dt.value_type()->id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY: return dt.index_type()->id() == arrow::Type::INT32;
    default: return false;
  }
}

// `rows` values of a column a file predates: nulls of `type` (ToArrowType of the field's) from
// `pool` (a rewrite's, whose freed pages the nulls then reuse), or the column's v3
// initial-default, which DefaultColumn gives in that type.
Result<std::shared_ptr<arrow::Array>> Predated(const NestedField& field, const std::shared_ptr<arrow::DataType>& type,
                                               int64_t rows, const std::string& where, arrow::MemoryPool* pool) {
  if (field.initial_default.empty()) {
    SKADE_ARROW_ASSIGN(auto nulls, arrow::MakeArrayOfNull(type, rows, pool), where);
    return nulls;
  }
  auto filled = DefaultColumn(field, field.initial_default, rows);
  if (!filled) return std::unexpected(filled.error().WithContext(where));
  return *filled;
}

// Lines a column read from a file up with the table's field: nested children are
// matched by field id (so renames and added fields read right), missing children
// read as null, promoted primitives are cast.
Result<std::shared_ptr<arrow::Array>> ConformArray(arrow::MemoryPool* pool, const std::shared_ptr<arrow::Array>& arr,
                                                   const NestedField& target, const std::string& where) {
  auto want = ToArrowType(*target.type);
  if (arr->type()->Equals(*want, /*check_metadata=*/false)) {
    auto view = arr->View(want);
    return view.ok() ? *view : arr;
  }
  const Type& t = *target.type;
  const auto& data = arr->data();
  if (arr->type_id() == arrow::Type::DICTIONARY && (t.id == TypeId::kString || t.id == TypeId::kBinary)) {
    SKADE_ASSIGN_OR_RETURN(auto dense, DenseFromDictionary(pool, static_cast<const arrow::DictionaryArray&>(*arr), want, where));
    if (dense) return dense;
  }
  switch (t.id) {
    case TypeId::kStruct: {
      if (arr->type_id() != arrow::Type::STRUCT) break;
      arrow::ArrayVector children;
      for (const auto& child : t.fields) {
        int idx = FindChild(*arr->type(), child);
        int64_t child_len = data->offset + data->length;
        if (idx < 0) {
          SKADE_ASSIGN_OR_RETURN(auto predated, Predated(child, ToArrowType(*child.type), child_len, where, pool));
          children.push_back(std::move(predated));
          continue;
        }
        SKADE_ASSIGN_OR_RETURN(auto c, ConformArray(pool, arrow::MakeArray(data->child_data[idx]), child, where));
        children.push_back(c);
      }
      return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::StructArray>(
          want, data->length, children, data->buffers[0], data->null_count, data->offset));
    }
    case TypeId::kList: {
      if (arr->type_id() == arrow::Type::LARGE_LIST || arr->type_id() == arrow::Type::LIST_VIEW ||
          arr->type_id() == arrow::Type::LARGE_LIST_VIEW) {
        // Writers that keep pyarrow's schema (PyIceberg) read back as large lists.
        InitArrowCompute();
        auto value_field = arr->type()->field(0);
        SKADE_ARROW_ASSIGN(auto small, arrow::compute::Cast(*arr, arrow::list(value_field),
                                                            arrow::compute::CastOptions::Safe()),
                           where + " column " + target.name);
        return ConformArray(pool, small, target, where);
      }
      if (arr->type_id() != arrow::Type::LIST) break;
      const auto& la = static_cast<const arrow::ListArray&>(*arr);
      SKADE_ASSIGN_OR_RETURN(auto values, ConformArray(pool, la.values(), t.element(), where));
      return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::ListArray>(
          want, data->length, la.value_offsets(), values, data->buffers[0], data->null_count, data->offset));
    }
    case TypeId::kMap: {
      if (arr->type_id() != arrow::Type::MAP) break;
      const auto& ma = static_cast<const arrow::MapArray&>(*arr);
      SKADE_ASSIGN_OR_RETURN(auto keys, ConformArray(pool, ma.keys(), t.key(), where));
      SKADE_ASSIGN_OR_RETURN(auto items, ConformArray(pool, ma.items(), t.value(), where));
      return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::MapArray>(
          want, data->length, ma.value_offsets(), keys, items, data->buffers[0], data->null_count, data->offset));
    }
    default: {
      InitArrowCompute();
      SKADE_ARROW_ASSIGN(auto cast, arrow::compute::Cast(*arr, want, arrow::compute::CastOptions::Safe()),
                         where + " column " + target.name);
      return cast;
    }
  }
  return Corrupt(where + ": column " + target.name + " has type " + arr->type()->ToString() + ", expected " +
                 t.ToString());
}

constexpr int64_t kBatchRows = 64 * 1024;
// Batches are cut smaller when their rows are wide, so no batch holds much more than this.
constexpr int64_t kBatchBytes = 16LL << 20;

// Rows that pass stay in the buffers they were decoded into (moved up, or a slice) only
// where they are at least half of those rows; fewer are copied out and the buffers freed,
// so a result holds memory for its own rows.
constexpr bool StayInPlace(int64_t kept, int64_t rows) { return 2 * kept >= rows; }

// The read-ahead budget when the plan names none: 128 MiB, less beyond four workers,
// each of whose allocator keeps some of what it decoded (measured: ~25 MiB a worker).
int64_t DefaultBudget(size_t workers) {
  return std::clamp<int64_t>((512LL << 20) / static_cast<int64_t>(std::max<size_t>(1, workers)), 32LL << 20,
                             128LL << 20);
}

// The decoded (Arrow) size of a column chunk. The stored size misleads for
// dictionary-encoded chunks (a few bytes a value on disk, the whole string in
// memory), so values count at least their plain width, and strings their unencoded
// bytes when the writer kept size statistics (Arrow and PyIceberg do).
int64_t DecodedBytes(const parquet::ColumnChunkMetaData& c, int type_length) {
  int64_t n = c.num_values(), est = c.total_uncompressed_size();
  switch (c.type()) {
    case parquet::Type::BOOLEAN: return std::max(est, n / 8 + 1);
    case parquet::Type::INT32:
    case parquet::Type::FLOAT: return std::max(est, 4 * n);
    case parquet::Type::INT64:
    case parquet::Type::DOUBLE: return std::max(est, 8 * n);
    case parquet::Type::INT96: return std::max(est, 12 * n);
    case parquet::Type::FIXED_LEN_BYTE_ARRAY: return std::max(est, int64_t{type_length} * n);
    case parquet::Type::BYTE_ARRAY: {
      auto size = c.size_statistics();
      if (size && size->unencoded_byte_array_data_bytes) est = std::max(est, *size->unencoded_byte_array_data_bytes);
      return est + 4 * n;  // offsets
    }
    default: return est;
  }
}

arrow::Status ToArrowStatus(const Error& e) {
  // Carried through Arrow's reader interface; ErrorFromReader restores the kind.
  return arrow::Status::Invalid(std::string(ErrorKindName(e.kind)), ": ", e.message);
}

// What every row group of one file shares.
struct OpenedFile {
  std::string path;
  std::string uri;  // as the manifest names it (`_file`)
  std::shared_ptr<arrow::io::RandomAccessFile> source;
  std::shared_ptr<parquet::FileMetaData> metadata;
  DeletedRows deleted;
  expr::ExprPtr filter;     // what rows of this file must still satisfy, or null
  // Positions in read_ids of the columns decoded first (filter and equality-delete
  // columns; without a filter, the output and equality-delete columns) and of the
  // rest; leaves of each.
  std::vector<size_t> first, rest;
  std::vector<int> first_leaves, rest_leaves;
  std::vector<std::vector<int>> leaves;  // per position in read_ids (empty: not in the file)
  std::vector<int> string_leaves;        // top-level string and binary columns
  // Whence its rows' lineage: ids from first_row_id on (none: rows written before the
  // table had row lineage), the data sequence number where a row holds none.
  std::optional<int64_t> first_row_id;
  int64_t data_sequence_number = 0;
};

// Whether a string leaf's chunk in `row_group` has data pages, all dictionary-encoded
// (by its encoding statistics).
bool DictionaryThroughout(const OpenedFile& f, int row_group, int leaf) {
  if (std::find(f.string_leaves.begin(), f.string_leaves.end(), leaf) == f.string_leaves.end()) return false;
  const auto stats = f.metadata->RowGroup(row_group)->ColumnChunk(leaf)->encoding_stats();
  bool data_pages = false, all_dictionary = true;
  for (const auto& e : stats) {
    if (e.page_type != parquet::PageType::DATA_PAGE && e.page_type != parquet::PageType::DATA_PAGE_V2) continue;
    data_pages = true;
    all_dictionary &= e.encoding == parquet::Encoding::RLE_DICTIONARY || e.encoding == parquet::Encoding::PLAIN_DICTIONARY;
  }
  return data_pages && all_dictionary;
}

// The Parquet leaves of some read positions, in file order.
std::vector<int> GroupLeaves(const OpenedFile& f, const std::vector<size_t>& positions) {
  std::vector<int> leaves;
  for (size_t i : positions) leaves.insert(leaves.end(), f.leaves[i].begin(), f.leaves[i].end());
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  return leaves;
}

// How a task reads `leaves` of one row group. It is the parallelism itself: one thread,
// and no pre-buffering (Arrow's default, which reads whole column chunks on its I/O pool
// while the task waits, and would make a streamed row group a whole one). Parquet gives
// dictionary arrays where a chunk is dictionary-encoded throughout: ConformArray makes
// them dense in one exactly sized pass.
parquet::ArrowReaderProperties TaskReadProperties(const OpenedFile& f, int row_group, const std::vector<int>& leaves) {
  parquet::ArrowReaderProperties props;
  props.set_use_threads(false);
  props.set_pre_buffer(false);
  for (int leaf : leaves)
    if (DictionaryThroughout(f, row_group, leaf)) props.set_read_dictionary(leaf, true);
  return props;
}

// Batches a streamed unit's column groups read ahead of the consumer, each.
constexpr size_t kStreamAhead = 2;

struct Unit {
  std::shared_ptr<const OpenedFile> file;
  int row_group = 0;
  int64_t first_row = 0;   // position of the row group's first row in the file
  int64_t bytes = 0;       // decoded size of the columns read (estimate)
  int64_t batch_rows = 0;  // rows per output batch (before the filter)
  // Too large to hold decoded at once within the budget: read a batch at a time
  // (Stream), a little ahead of the consumer.
  bool streamed = false;
  // The unit's place in the pool's queue, taken when it is scheduled: its tasks go
  // before those of the row groups after it.
  uint64_t ticket = 0;
  // A streamed unit holds the batch handed out and those its groups read ahead.
  int64_t charge() const {
    return streamed ? bytes * static_cast<int64_t>(1 + kStreamAhead) / std::max<int64_t>(1, rows / batch_rows) : bytes;
  }
  int64_t rows = 0;
};

struct ScanShape;

// Some of a streamed unit's columns, read a batch at a time by a Parquet reader of
// their own.
struct StreamGroup {
  std::unique_ptr<parquet::arrow::FileReader> reader;
  std::unique_ptr<arrow::RecordBatchReader> batches;
  size_t leaves = 0;  // Parquet leaf columns it reads
  // Guarded by Stream::mu; `batches` is used only by whoever set `running`.
  std::deque<std::shared_ptr<arrow::RecordBatch>> ready;
  int64_t requested = 0;      // batches its tasks were started for
  int64_t pages_skipped = 0;  // by a flat group's readers (`wanted`), so far
  bool running = false, done = false;
  std::string error;  // set: the group's reader failed
};

// A streamed unit being read. Its columns are split into groups of about equal size,
// each read ahead (kStreamAhead batches) by tasks of the shared pool, one batch a task,
// so that every core decodes; the consumer joins one batch of every group (the groups
// cut batches at the same rows: one row group, one batch size). Sequential scans read
// one group in the consumer's thread.
struct Stream {
  Unit unit;
  std::vector<StreamGroup> groups;
  TaskPool* pool = nullptr;  // null: read by the consumer
  // Batches each group reads ahead of the consumer: none when the scan's limit ends
  // within the first batch (every row of it kept), which is then read when asked for.
  size_t ahead = kStreamAhead;
  std::shared_ptr<std::atomic<bool>> cancelled;
  int64_t pos = 0;  // position in the file of the next batch's first row
  // Set: the groups give only these rows of the row group (the others are deleted),
  // each batch those of the next unit.batch_rows rows, and no batch is selected again.
  std::shared_ptr<const std::vector<uint8_t>> wanted;
  // Set when equality deletes (no filter) are decided a batch at a time: group 0 reads the
  // key columns (`keys`, positions in read_ids) of every row and marks each batch's
  // survivors in `deciding` (which `wanted` is) before the other groups read that batch;
  // its first `decided_rows` entries are final.
  std::shared_ptr<std::vector<uint8_t>> deciding;
  std::shared_ptr<const ScanShape> shape;
  std::vector<size_t> keys;
  std::atomic<int64_t> decided_rows{0};
  std::mutex mu;
  std::condition_variable cv;
};

struct UnitResult {
  arrow::Status status;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  int64_t rows_read = 0, rows_deleted = 0, pages_skipped = 0;
};

// A unit's result, filled by a worker and awaited by the consumer.
struct Slot {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  UnitResult result;
  void Set(UnitResult r) {
    {
      std::lock_guard lock(mu);
      result = std::move(r);
      done = true;
    }
    cv.notify_all();
  }
  UnitResult Take() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done; });
    return std::move(result);
  }
};

// The immutable parts of a scan that row-group tasks read (shared, never written).
struct ScanShape {
  SchemaPtr schema;
  std::vector<int> read_ids;       // top-level ids: projected, then filter/delete-only
  size_t projected = 0;            // the first `projected` of read_ids are output
  bool emit_positions = false;
  std::vector<size_t> metadata;  // output columns that are metadata columns (filled from positions)
  bool positions = false;        // each row's position is wanted: emit_positions, or metadata
  bool has_equality = false;
  arrow::MemoryPool* pool = nullptr;  // the plan's, else Arrow's default
  std::shared_ptr<arrow::Schema> out_schema;
  // Per read id: what is read of the table's field (a struct cut down to the fields
  // output, filtered on or deleted by), and as Arrow fields with field ids.
  std::vector<NestedField> read_fields;
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<NestedField> out_fields;  // per output column: what is output of it
  std::vector<bool> cut;                // per output column: read as more than out_fields
};

// The column of a batch or table read from a file (the file's types) holding read
// position i: by field id, else by name. -1: the file predates the column.
int RawIndex(const ScanShape& shape, size_t i, const arrow::Schema& raw) {
  int id = shape.read_ids[i];
  for (int k = 0; k < raw.num_fields(); ++k)
    if (FieldIdOf(*raw.field(k)) == id) return k;
  for (int k = 0; k < raw.num_fields(); ++k)
    if (FieldIdOf(*raw.field(k)) < 0 && raw.field(k)->name() == shape.fields[i]->name()) return k;
  return -1;
}

// The leaf holding read position i when FlatColumnReader decodes it in `row_group`
// (-1: Arrow's reader does). String columns the filter step may look at (`filtered`) are
// not decoded dense: the filter looks at a dictionary's entries once each (DictionaryLeaf
// reads them as dictionaries where it can, else Arrow's reader gives them).
int FlatLeaf(const ScanShape& shape, const OpenedFile& f, int row_group, size_t i, bool filtered) {
  if (f.leaves[i].size() != 1) return -1;
  const arrow::DataType& type = *shape.fields[i]->type();
  if (filtered && f.filter && (type.id() == arrow::Type::STRING || type.id() == arrow::Type::BINARY)) return -1;
  return ReadsFlatColumn(*f.metadata, row_group, f.leaves[i][0], type) ? f.leaves[i][0] : -1;
}

// The leaf of a filter step's string column that FlatColumnReader can give as a dictionary
// (KeepDictionary: the filter looks at each entry once), -1 when it cannot.
int DictionaryLeaf(const ScanShape& shape, const OpenedFile& f, int row_group, size_t i) {
  if (f.leaves[i].size() != 1) return -1;
  const int leaf = f.leaves[i][0];
  return DictionaryThroughout(f, row_group, leaf) && ReadsFlatColumn(*f.metadata, row_group, leaf, *shape.fields[i]->type())
             ? leaf
             : -1;
}

// SKADE_SCAN_TRACE=FILE appends a JSON line per decode task, per streamed batch read, and per
// wait, file opened and stream opened on the reading thread (thread, steady-clock start and
// end, thread CPU, in microseconds; `columns`: the Parquet leaves a decode task or stream
// reads): the timeline that shows where cores idle. Off, it costs a branch.
class ScanTrace {
 public:
  static ScanTrace* Get() {
    static ScanTrace* trace = [] {
      const char* path = std::getenv("SKADE_SCAN_TRACE");
      FILE* out = path && *path ? std::fopen(path, "a") : nullptr;
      return out ? new ScanTrace(out) : nullptr;  // never destroyed: tasks may trace at exit
    }();
    return trace;
  }
  static int64_t NowUs() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static int64_t CpuUs() { return ThreadCpuNanos() / 1000; }
  void Add(const char* what, uint64_t unit, size_t columns, int64_t start, int64_t end, int64_t cpu) {
    std::lock_guard lock(mu_);
    std::fprintf(out_,
                 "{\"what\":\"%s\",\"unit\":%llu,\"columns\":%zu,\"thread\":%zu,\"start\":%lld,\"end\":%lld,"
                 "\"cpu\":%lld}\n",
                 what, static_cast<unsigned long long>(unit), columns,
                 std::hash<std::thread::id>{}(std::this_thread::get_id()), static_cast<long long>(start),
                 static_cast<long long>(end), static_cast<long long>(cpu));
    std::fflush(out_);
  }

 private:
  explicit ScanTrace(FILE* out) : out_(out) {}
  std::mutex mu_;
  FILE* out_;
};

// Traces the enclosing scope as one line (nothing when tracing is off).
class TraceSpan {
 public:
  TraceSpan(const char* what, uint64_t unit, size_t columns)
      : trace_(ScanTrace::Get()), what_(what), unit_(unit), columns_(columns) {
    if (trace_) start_ = ScanTrace::NowUs(), cpu_ = ScanTrace::CpuUs();
  }
  ~TraceSpan() {
    if (trace_) trace_->Add(what_, unit_, columns_, start_, ScanTrace::NowUs(), ScanTrace::CpuUs() - cpu_);
  }
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  ScanTrace* trace_;
  const char* what_;
  uint64_t unit_;
  size_t columns_;
  int64_t start_ = 0, cpu_ = 0;
};

// A task decodes at least this much (estimated decoded bytes) where the row group has
// it: large row groups make a task per column, small ones fewer tasks of several
// columns (each task opens its own Parquet reader).
constexpr int64_t kMinTaskBytes = 1LL << 20;

// A phase's columns (positions in read_ids) in groups of about equal decoded size, a
// task each, largest first (so the last tasks of a scan are its smallest).
std::vector<std::vector<size_t>> TaskGroups(const OpenedFile& f, int row_group, const std::vector<size_t>& which,
                                            size_t max_groups = std::numeric_limits<size_t>::max()) {
  auto rg = f.metadata->RowGroup(row_group);
  std::vector<std::pair<int64_t, size_t>> sized;
  int64_t total = 0;
  for (size_t i : which) {
    int64_t bytes = 0;
    for (int leaf : f.leaves[i])
      bytes += DecodedBytes(*rg->ColumnChunk(leaf), f.metadata->schema()->Column(leaf)->type_length());
    sized.emplace_back(bytes, i);
    total += bytes;
  }
  std::stable_sort(sized.begin(), sized.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  size_t n = std::clamp<size_t>(static_cast<size_t>(total / kMinTaskBytes), 1,
                                std::max<size_t>(1, std::min(sized.size(), max_groups)));
  std::vector<std::pair<int64_t, std::vector<size_t>>> groups(n);
  for (const auto& [bytes, i] : sized) {  // each to the least loaded group
    auto least = std::min_element(groups.begin(), groups.end(),
                                  [](const auto& a, const auto& b) { return a.first < b.first; });
    least->first += bytes;
    least->second.push_back(i);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<size_t>> out;
  for (auto& g : groups)
    if (!g.second.empty()) out.push_back(std::move(g.second));
  return out;
}

// A column of a row group, rows [at, at + n), as one array (a column read in several
// chunks, such as strings past 2 GiB, is joined across a chunk boundary).
Result<std::shared_ptr<arrow::Array>> Piece(const arrow::ChunkedArray& column, int64_t at, int64_t n,
                                           const std::string& where) {
  auto slice = column.Slice(at, n);
  if (slice->num_chunks() == 1) return slice->chunk(0);
  SKADE_ARROW_ASSIGN(auto joined, arrow::Concatenate(slice->chunks()), where);
  return joined;
}

class ScanReader final : public arrow::RecordBatchReader {
 public:
  ScanReader(ScanPlan plan, FileIO* io) : plan_(std::move(plan)), io_(io) {
    auto shape = std::make_shared<ScanShape>();
    shape->schema = plan_.schema;
    shape->emit_positions = plan_.emit_positions;
    shape->pool = plan_.pool ? plan_.pool : arrow::default_memory_pool();
    std::vector<int> read_ids = plan_.projected_ids;
    std::vector<int> looked_at;  // field ids the filters and equality deletes read
    auto add = [&](int id) {
      looked_at.push_back(id);
      int top = TopLevelOf(id);
      if (top >= 0 && std::find(read_ids.begin(), read_ids.end(), top) == read_ids.end()) read_ids.push_back(top);
    };
    bool any_filter = false;
    for (const auto& t : plan_.tasks)
      if (auto filter = FilterFor(t)) {
        any_filter = true;
        for (int id : expr::ReferencedFieldIds(*filter)) add(id);
      }
    for (const auto& t : plan_.tasks)
      for (const auto& d : t.deletes) {
        if (!d.file->equality_ids.empty()) shape->has_equality = true;
        for (int id : d.file->equality_ids) add(id);
      }
    shape->read_ids = read_ids;
    shape->projected = plan_.projected_ids.size();
    for (size_t i = 0; i < read_ids.size(); ++i) {
      const NestedField& whole = *plan_.schema->FindField(read_ids[i]);
      std::vector<int> keep = looked_at;
      if (i < shape->projected) {
        const NestedField* cut = plan_.output_schema ? plan_.output_schema->FindField(whole.id) : nullptr;
        shape->out_fields.push_back(cut ? *cut : whole);
        WholeParts(shape->out_fields.back(), &keep);
      }
      shape->read_fields.push_back(*PruneField(whole, keep));
      // Read as more than is output (fields filtered on or deleted by): cut after reading.
      if (i < shape->projected) shape->cut.push_back(!shape->read_fields.back().type->Equals(*shape->out_fields.back().type));
    }
    for (size_t k = 0; k < shape->out_fields.size(); ++k)
      if (IsMetadataField(shape->out_fields[k].id)) shape->metadata.push_back(k);
    shape->positions = shape->emit_positions || !shape->metadata.empty();
    shape->fields = ToArrowSchema(Schema(0, shape->read_fields))->fields();
    shape->out_schema = ToArrowSchema(Schema(0, shape->out_fields));
    if (plan_.emit_positions)
      shape->out_schema =
          *shape->out_schema->AddField(shape->out_schema->num_fields(), arrow::field("_pos", arrow::int64(), false));
    // Columns the selection needs: the filter's and the equality deletes'.
    std::vector<int> needed, equality;
    for (const auto& t : plan_.tasks)
      if (auto filter = FilterFor(t))
        for (int id : expr::ReferencedFieldIds(*filter)) needed.push_back(TopLevelOf(id));
    for (const auto& t : plan_.tasks)
      for (const auto& d : t.deletes)
        for (int id : d.file->equality_ids) equality.push_back(TopLevelOf(id));
    needed.insert(needed.end(), equality.begin(), equality.end());
    // A file without a filter of its own reads only what it outputs or deletes by.
    for (size_t i = 0; i < read_ids.size(); ++i)
      if (i < shape->projected || std::find(equality.begin(), equality.end(), read_ids[i]) != equality.end())
        unfiltered_.push_back(i);
    for (size_t i = 0; i < read_ids.size(); ++i) {
      bool selects = std::find(needed.begin(), needed.end(), read_ids[i]) != needed.end();
      (selects || !any_filter ? first_ : rest_).push_back(i);
    }
    if (first_.empty()) {  // nothing decides before reading: one pass
      first_ = rest_;
      rest_.clear();
      std::sort(first_.begin(), first_.end());
    }
    shape_ = shape;
    loader_ = std::make_unique<DeleteLoader>(io_, plan_.schema);
    for (const auto& t : plan_.tasks) loader_->Expect(t.deletes);
    // A process whose pool has no worker (refused threads) reads in its own thread.
    sequential_ = plan_.parallelism == 1 || TaskPool::Shared().size() == 0;
    // Row groups in flight: enough queued behind the one being finished that no worker
    // waits for the reading thread to schedule more (the memory budget bounds them too).
    max_units_ = plan_.parallelism > 0 ? static_cast<size_t>(plan_.parallelism)
                                       : std::max<size_t>(1, 4 * TaskPool::Shared().size());
    budget_ = plan_.memory_budget_bytes > 0 ? plan_.memory_budget_bytes : DefaultBudget(TaskPool::Shared().size());
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    // Arrow's compute kernels, which evaluate filters, register on first use (~2 ms of
    // CPU). The first filtered scan of a process has a worker register them before its row
    // groups, not in the task that first evaluates while the other workers wait on it.
    static std::once_flag compute_warmed;
    if (plan_.filter && !sequential_)
      std::call_once(compute_warmed, [] { TaskPool::Shared().Submit([] { InitArrowCompute(); }); });
  }

  ~ScanReader() override {
    // Tasks borrow the delete loader's key sets: wait for those still running.
    cancelled_->store(true);
    for (auto& p : pending_)
      if (p.second) (void)p.second->Take();
    // Streams' tasks read the files: let the running ones finish.
    for (const auto& s : {stream_, opened_}) {
      if (!s) continue;
      std::unique_lock lock(s->mu);
      s->cv.wait(lock, [&] {
        return std::none_of(s->groups.begin(), s->groups.end(), [](const auto& g) { return g.running; });
      });
    }
  }

  std::shared_ptr<arrow::Schema> schema() const override { return shape_->out_schema; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    while (true) {
      if (plan_.limit >= 0 && plan_.stats->rows_returned >= plan_.limit) return arrow::Status::OK();
      if (!ready_.empty()) {
        auto batch = std::move(ready_.front());
        ready_.pop_front();
        if (plan_.limit >= 0) {
          int64_t room = plan_.limit - plan_.stats->rows_returned;
          if (batch->num_rows() > room) {
            if (auto first = FirstRows(batch, room); first) batch = *std::move(first);
            else return ToArrowStatus(first.error());
          }
        }
        plan_.stats->rows_returned += batch->num_rows();
        *out = std::move(batch);
        return arrow::Status::OK();
      }
      // What was handed out is the consumer's now: its bytes leave the budget.
      pending_bytes_ -= held_bytes_;
      held_bytes_ = 0;
      if (stream_) {
        if (!sequential_)
          if (auto st = Fill(); !st) return ToArrowStatus(st.error());
        if (auto st = NextStreamed(); !st) return ToArrowStatus(st.error());
        continue;
      }
      if (auto st = Fill(); !st) return ToArrowStatus(st.error());
      if (pending_.empty()) return arrow::Status::OK();
      auto [unit, slot] = std::move(pending_.front());
      pending_.pop_front();
      held_bytes_ = unit.charge();
      if (unit.streamed) {
        if (opened_ && opened_->unit.file == unit.file && opened_->unit.row_group == unit.row_group) {
          stream_ = std::move(opened_);
          continue;
        }
        TraceSpan span("openstream", 0, 0);
        auto opened = OpenStream(std::move(unit));
        if (!opened) return ToArrowStatus(opened.error());
        stream_ = *std::move(opened);
        continue;
      }
      UnitResult r;
      {
        TraceSpan span("wait", 0, 0);
        r = slot->Take();
      }
      plan_.stats->rows_read += r.rows_read;
      plan_.stats->rows_deleted += r.rows_deleted;
      plan_.stats->pages_skipped += r.pages_skipped;
      if (!r.status.ok()) return r.status;
      for (auto& b : r.batches) ready_.push_back(std::move(b));
    }
  }

 private:
  // The filter a task's rows must pass (null: all pass), partition-proven parts dropped.
  // A task taken into a plan without a filter keeps all its rows.
  expr::ExprPtr FilterFor(const FileScanTask& t) const {
    if (!plan_.filter) return nullptr;
    const expr::ExprPtr& f = t.residual ? t.residual : plan_.filter;
    return f && f->op != expr::Op::kTrue ? f : nullptr;
  }

  int TopLevelOf(int id) const {
    const NestedField* top = plan_.schema->TopLevelOf(id);
    return top ? top->id : -1;
  }

  // Schedules row groups until the read-ahead bounds are reached. A streamed unit is
  // not scheduled: the consumer reads it when it comes first (units after it still
  // decode meanwhile).
  Status Fill() {
    // Under a limit, row groups whose rows may all be dropped (a filter, deletes) are
    // read no further ahead than the workers can decode at once.
    size_t max_units = max_units_;
    if (plan_.limit >= 0) max_units = std::min(max_units, std::max<size_t>(1, TaskPool::Shared().size()));
    while (pending_.size() < max_units && (pending_.empty() || pending_bytes_ < budget_) && !LimitOnItsWay()) {
      if (units_.empty()) {
        if (next_task_ >= plan_.tasks.size()) return {};
        const FileScanTask& task = plan_.tasks[next_task_];
        TraceSpan span("open", next_task_++, task.deletes.size());  // columns: the delete files loaded here
        SKADE_RETURN_IF_ERROR(OpenFile(task));
        continue;
      }
      // A row group that would take the read-ahead past the budget waits, so what is
      // held decoded never exceeds it (unless one row group alone does).
      if (pending_bytes_ > 0 && pending_bytes_ + units_.front().charge() > budget_) return {};
      Unit unit = std::move(units_.front());
      units_.pop_front();
      std::shared_ptr<Slot> slot;
      pending_bytes_ += unit.charge();
      if (!sequential_) unit.ticket = TaskPool::Shared().Ticket();
      if (!unit.streamed) {
        slot = std::make_shared<Slot>();
        Start(shape_, unit, slot, cancelled_, sequential_ ? nullptr : &TaskPool::Shared());
      }
      pending_.emplace_back(std::move(unit), std::move(slot));
      if (sequential_) return {};  // one at a time, in the reading thread
    }
    return OpenNextStream();
  }

  // Starts reading ahead the first streamed unit waiting behind others (one at a time),
  // so that its batches decode while the consumer is still taking the units before it
  // (small files ahead of a large one had the workers idle, waiting for the consumer).
  // Not under a limit, where a stream reads only what the limit still wants.
  Status OpenNextStream() {
    if (sequential_ || opened_ || plan_.limit >= 0) return {};
    for (const auto& [u, slot] : pending_) {
      if (!u.streamed) continue;
      TraceSpan span("openstream", 0, 0);
      SKADE_ASSIGN_OR_RETURN(opened_, OpenStream(u));
      break;
    }
    return {};
  }

  // Whether every row of the file read reaches the consumer (no filter, no deletes).
  static bool KeepsAll(const OpenedFile& f) { return !f.filter && f.deleted.empty(); }

  // Rows handed out, ready, or in row groups scheduled whose rows all reach the consumer.
  int64_t RowsOnTheirWay() const {
    int64_t rows = plan_.stats->rows_returned;
    for (const auto& b : ready_) rows += b->num_rows();
    if (stream_ && KeepsAll(*stream_->unit.file)) rows += stream_->unit.first_row + stream_->unit.rows - stream_->pos;
    for (const auto& [u, slot] : pending_)
      if (KeepsAll(*u.file)) rows += u.rows;
    return rows;
  }

  // The limit is met by rows already on their way: nothing more is opened or scheduled.
  bool LimitOnItsWay() const { return plan_.limit >= 0 && RowsOnTheirWay() >= plan_.limit; }

  // The key columns (positions in read_ids) by which a streamed row group of `f` decides
  // its deletes a batch at a time (Stream::deciding), or none: it has equality deletes,
  // no filter and outputs no positions, and each key is a flat column of the file.
  std::vector<size_t> DecidingKeys(const OpenedFile& f, int row_group) const {
    if (f.filter || f.deleted.equality().empty() || shape_->positions) return {};
    std::vector<size_t> keys;
    for (const auto& set : f.deleted.equality())
      for (int id : set.field_ids) {
        auto at = std::find(shape_->read_ids.begin(), shape_->read_ids.end(), TopLevelOf(id));
        if (at == shape_->read_ids.end()) return {};
        const auto i = static_cast<size_t>(at - shape_->read_ids.begin());
        if (f.leaves[i].empty() || FlatLeaf(*shape_, f, row_group, i, /*filtered=*/true) < 0) return {};
        if (std::find(keys.begin(), keys.end(), i) == keys.end()) keys.push_back(i);
      }
    return keys;
  }

  Result<std::shared_ptr<Stream>> OpenStream(Unit unit) {
    const OpenedFile& f = *unit.file;
    auto s = std::make_shared<Stream>();
    // Pages are read as they are decoded, not the whole row group up front. The buffer
    // serves page headers and small pages; a larger page is read whole past it. Each
    // column gets one at open: at 1 MiB each, opening a stream of 11 columns faulted in
    // fresh pages for 1.4 ms of CPU (19 ms once), now 0.2 ms.
    parquet::ReaderProperties rp(shape_->pool);
    rp.enable_buffered_stream();
    rp.set_buffer_size(64 << 10);
    std::vector<size_t> positions = f.first;
    positions.insert(positions.end(), f.rest.begin(), f.rest.end());
    if (!sequential_) s->pool = &TaskPool::Shared();
    if (plan_.limit >= 0 && KeepsAll(f) && plan_.limit - plan_.stats->rows_returned <= unit.batch_rows) s->ahead = 0;
    // Groups of positions, each read by its own reader: FlatColumnReaders when every
    // column of the group is flat (FlatLeaf), else Arrow's reader of the group's leaves.
    struct Group {
      std::vector<int> leaves;
      arrow::FieldVector flat_fields;  // set: the leaves are flat, read as these fields
    };
    std::vector<Group> groups;
    const size_t max_groups = s->pool ? 2 * s->pool->size() : 1;
    const std::vector<size_t> keys = DecidingKeys(f, unit.row_group);
    std::vector<std::vector<size_t>> position_groups;
    if (!keys.empty()) {  // group 0 (Stream::deciding)
      position_groups.push_back(keys);
      std::erase_if(positions, [&](size_t i) { return std::find(keys.begin(), keys.end(), i) != keys.end(); });
    }
    if (!positions.empty())
      for (auto& in_group : TaskGroups(f, unit.row_group, positions, max_groups))
        position_groups.push_back(std::move(in_group));
    for (const auto& in_group : position_groups) {
      Group group;
      bool flat = true;
      for (size_t i : in_group)  // a column the file predates is left out either way
        if (!f.leaves[i].empty()) flat &= FlatLeaf(*shape_, f, unit.row_group, i, /*filtered=*/true) >= 0;
      if (flat) {
        for (size_t i : in_group)
          if (!f.leaves[i].empty()) {
            group.leaves.push_back(f.leaves[i][0]);
            group.flat_fields.push_back(shape_->fields[i]);
          }
      } else {
        group.leaves = GroupLeaves(f, in_group);
      }
      if (!group.leaves.empty()) groups.push_back(std::move(group));
    }
    if (groups.empty()) groups.emplace_back();  // no column in the file: rows only
    // Deletes by position alone are known before any column is read (no column decides
    // first: OpenFile), equality deletes once group 0 has read a batch's keys: when every
    // group is flat, the readers skip the deleted rows instead of KeepRows moving the
    // others up afterwards (positions, where output, then follow `wanted`: Assemble). Not
    // equality deletes where positions are output: those follow the selection mask.
    bool all_flat = std::all_of(groups.begin(), groups.end(), [](const Group& g) { return !g.flat_fields.empty(); });
    if (all_flat && !keys.empty()) {
      s->deciding = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(unit.rows));
      s->wanted = s->deciding;
      s->shape = shape_;
      s->keys = keys;
    } else if (all_flat && f.first.empty()) {
      s->wanted = Surviving(f, unit);
    }
    s->groups = std::vector<StreamGroup>(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::vector<int>& leaves = groups[g].leaves;
      s->groups[g].leaves = leaves.size();
      try {
        std::unique_ptr<parquet::ParquetFileReader> pq = parquet::ParquetFileReader::Open(f.source, rp, f.metadata);
        if (!groups[g].flat_fields.empty()) {
          const bool decides = s->deciding && g == 0;  // reads every row's keys
          s->groups[g].batches = MakeFlatBatchReader(
              std::shared_ptr(std::move(pq)), unit.row_group, leaves, groups[g].flat_fields, unit.batch_rows,
              shape_->pool, "row group " + std::to_string(unit.row_group), decides ? nullptr : s->wanted,
              s->deciding && !decides ? &s->decided_rows : nullptr, &s->groups[g].pages_skipped);
          continue;
        }
        parquet::ArrowReaderProperties props = TaskReadProperties(f, unit.row_group, leaves);
        props.set_batch_size(unit.batch_rows);
        SKADE_ARROW_ASSIGN(s->groups[g].reader,
                           parquet::arrow::FileReader::Make(shape_->pool, std::move(pq), props), f.path);
        SKADE_ARROW_ASSIGN(s->groups[g].batches,
                           s->groups[g].reader->GetRecordBatchReader({unit.row_group}, leaves), f.path);
      } catch (const std::exception& e) {
        return Corrupt(f.path + ": " + e.what());
      }
    }
    s->pos = unit.first_row;
    s->unit = std::move(unit);
    s->cancelled = cancelled_;
    if (s->pool) {
      std::lock_guard lock(s->mu);
      for (size_t g = 0; g < s->groups.size(); ++g) ReadAheadLocked(s, g, s->ahead);
    }
    return s;
  }

  // The rows of the unit no position delete removes (null when every row survives).
  static std::shared_ptr<const std::vector<uint8_t>> Surviving(const OpenedFile& f, const Unit& u) {
    const auto& positions = f.deleted.positions();
    const int64_t end = u.first_row + u.rows;
    auto it = std::lower_bound(positions.begin(), positions.end(), u.first_row);
    if (it == positions.end() || *it >= end) return nullptr;
    auto wanted = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(u.rows), 1);
    for (; it != positions.end() && *it < end; ++it) (*wanted)[static_cast<size_t>(*it - u.first_row)] = 0;
    return wanted;
  }

  // Submits a task reading group g's next batch, unless one runs or the group holds
  // `wanted` batches (or is done). Called with s->mu held.
  static void ReadAheadLocked(const std::shared_ptr<Stream>& s, size_t g, size_t wanted) {
    StreamGroup& group = s->groups[g];
    if (group.running || group.done || group.ready.size() >= wanted || s->cancelled->load()) return;
    if (s->deciding && g > 0) {  // only batches group 0 has decided
      const int64_t decided = s->decided_rows.load(std::memory_order_acquire);
      if (decided < s->unit.rows && group.requested * s->unit.batch_rows >= decided) return;
    }
    ++group.requested;
    group.running = true;
    s->pool->Submit(
        [s, g] {
          {
            TraceSpan span("stream", s->unit.ticket, s->groups[g].leaves);
            ReadGroupBatch(*s, g);
          }
          std::lock_guard lock(s->mu);
          s->groups[g].running = false;
          if (s->deciding && g == 0) {  // the others may now read what it decided
            for (size_t h = 0; h < s->groups.size(); ++h) ReadAheadLocked(s, h, s->ahead);
          } else {
            ReadAheadLocked(s, g, s->ahead);
          }
          s->cv.notify_all();
        },
        s->unit.ticket);
  }

  // Reads group g's next batch into its queue (or marks it done); the caller has set
  // `running` or is the only reader.
  static void ReadGroupBatch(Stream& s, size_t g) {
    StreamGroup& group = s.groups[g];
    std::shared_ptr<arrow::RecordBatch> batch;
    std::string error;
    try {
      auto st = group.batches->ReadNext(&batch);
      if (!st.ok()) error = st.message();
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (batch && s.deciding && g == 0)
      if (auto st = Decide(s, &batch); !st) error = st.error().message;
    std::lock_guard lock(s.mu);
    if (!error.empty()) {
      group.error = std::move(error);
      group.done = true;
    } else if (!batch) {
      group.done = true;
    } else {
      group.ready.push_back(std::move(batch));
    }
  }

  // Group 0's batch of key columns decides which of its rows survive the deletes: they are
  // marked in s.deciding (final from then on) and kept in the batch.
  static Status Decide(Stream& s, std::shared_ptr<arrow::RecordBatch>* batch) {
    const OpenedFile& f = *s.unit.file;
    const int64_t at = s.decided_rows.load(std::memory_order_relaxed);  // written by group 0's task alone
    const int64_t rows = (*batch)->num_rows();
    if (at + rows > s.unit.rows) return Corrupt(f.path + ": row group " + std::to_string(s.unit.row_group) +
                                                " decoded unevenly");
    SKADE_ASSIGN_OR_RETURN(auto cols, Conform(*s.shape, f, s.keys, **batch));
    int64_t deleted = 0;  // counted by NextStreamed, from `wanted`
    SKADE_ASSIGN_OR_RETURN(auto mask, Selection(*s.shape, f, s.keys, cols, rows, s.unit.first_row + at, &deleted));
    MarkKept(mask.get(), rows, s.deciding->data() + at);
    if (mask && deleted > 0) {
      const int64_t kept = rows - deleted;
      SKADE_ASSIGN_OR_RETURN(*batch, KeepRows(*batch, *mask, kept, StayInPlace(kept, rows), s.shape->pool));
    }
    s.decided_rows.store(at + rows, std::memory_order_release);
    return {};
  }

  // One byte per row of a batch: 1 where `mask` keeps the row (every row when null).
  static void MarkKept(const arrow::BooleanArray* mask, int64_t rows, uint8_t* out) {
    if (!mask) {
      std::memset(out, 1, static_cast<size_t>(rows));
      return;
    }
    std::memset(out, 0, static_cast<size_t>(rows));
    arrow::internal::VisitSetBitRunsVoid(mask->values(), mask->offset(), rows, [&](int64_t from, int64_t n) {
      std::memset(out + from, 1, static_cast<size_t>(n));
    });
  }

  // Reads the streamed unit's next batch into ready_ (or ends the stream).
  Status NextStreamed() {
    Stream& s = *stream_;
    const OpenedFile& f = *s.unit.file;
    auto uneven = [&] {
      return Corrupt(f.path + ": row group " + std::to_string(s.unit.row_group) + " decoded unevenly");
    };
    if (s.pool) {  // the batch asked for, in every group that read none ahead
      std::lock_guard lock(s.mu);
      for (size_t g = 0; g < s.groups.size(); ++g) ReadAheadLocked(stream_, g, 1);
    }
    // One batch of every group, joined into the batch a single reader would have read.
    arrow::FieldVector fields;
    arrow::ArrayVector columns;
    int64_t rows = -1;
    size_t ended = 0;
    for (size_t g = 0; g < s.groups.size(); ++g) {
      if (!s.pool) ReadGroupBatch(s, g);
      std::unique_lock lock(s.mu);
      StreamGroup& group = s.groups[g];
      s.cv.wait(lock, [&] { return !group.ready.empty() || (group.done && !group.running); });
      if (!group.error.empty()) return Corrupt(f.path + ": " + group.error);
      if (group.ready.empty()) {
        ++ended;
        continue;
      }
      auto part = std::move(group.ready.front());
      group.ready.pop_front();
      if (s.pool) ReadAheadLocked(stream_, g, s.ahead);
      lock.unlock();
      if (rows >= 0 && part->num_rows() != rows) return uneven();
      rows = part->num_rows();
      for (int c = 0; c < part->num_columns(); ++c) {
        fields.push_back(part->schema()->field(c));
        columns.push_back(part->column(c));
      }
    }
    if (ended == s.groups.size()) {
      if (s.pos != s.unit.first_row + s.unit.rows) return uneven();
      for (const auto& group : s.groups) plan_.stats->pages_skipped += group.pages_skipped;
      stream_.reset();
      return {};
    }
    if (ended > 0) return uneven();
    auto raw = arrow::RecordBatch::Make(arrow::schema(std::move(fields)), rows, std::move(columns));
    held_bytes_ = s.unit.charge();
    pending_bytes_ += held_bytes_;
    // Rows of the row group the batch stands for: with s.wanted, its survivors are `rows`.
    const int64_t passed = s.wanted ? std::min(s.unit.batch_rows, s.unit.first_row + s.unit.rows - s.pos) : rows;
    int64_t deleted = passed - rows;
    plan_.stats->rows_read += passed;
    SKADE_ASSIGN_OR_RETURN(auto cols, Conform(*shape_, f, f.first, *raw));
    std::shared_ptr<arrow::BooleanArray> mask;
    if (!s.wanted && (f.filter || !f.deleted.empty())) {
      SKADE_ASSIGN_OR_RETURN(mask, Selection(*shape_, f, f.first, cols, rows, s.pos, &deleted));
    }
    plan_.stats->rows_deleted += deleted;
    int64_t kept = mask ? mask->true_count() : rows;
    if (kept > 0) {
      SKADE_ASSIGN_OR_RETURN(auto rest, Conform(*shape_, f, f.rest, *raw));
      SKADE_ASSIGN_OR_RETURN(auto batch,
                             Assemble(*shape_, f, std::move(cols), mask, kept, std::move(rest), rows, s.pos,
                                      StayInPlace(kept, rows),
                                      s.wanted ? s.wanted->data() + (s.pos - s.unit.first_row) : nullptr, passed));
      ready_.push_back(std::move(batch));
    }
    s.pos += passed;
    return {};
  }

  Status OpenFile(const FileScanTask& task) {
    auto f = std::make_shared<OpenedFile>();
    f->path = LocalPath(task.file.file_path);
    f->uri = task.file.file_path;
    f->first_row_id = task.file.first_row_id;
    f->data_sequence_number = task.data_sequence_number;
    parquet::ArrowReaderProperties props;
    std::unique_ptr<parquet::arrow::FileReader> reader;
    try {
      SKADE_ARROW_ASSIGN(f->source, arrow::io::ReadableFile::Open(f->path), f->path);
      auto pq = parquet::ParquetFileReader::Open(f->source);
      f->metadata = pq->metadata();
      SKADE_ARROW_ASSIGN(reader, parquet::arrow::FileReader::Make(shape_->pool, std::move(pq), props),
                         f->path);
    } catch (const std::exception& e) {
      return Corrupt(f->path + ": " + e.what());
    }
    const auto& md = *f->metadata;
    // The manifest's promise, checked before any row is used: a file replaced or
    // rewritten in place would otherwise read as fewer (or other) rows, silently.
    if (md.num_rows() != task.file.record_count)
      return Corrupt("data file " + f->path + " holds " + std::to_string(md.num_rows()) +
                     " rows but its manifest entry says " + std::to_string(task.file.record_count) +
                     ": the file was changed after it was committed");
    // Top-level Parquet fields holding the columns we need (by id, else by name).
    const auto& fields = reader->manifest().schema_fields;
    f->leaves.resize(shape_->read_ids.size());
    auto leaves_of = [&](const std::vector<size_t>& which) {
      std::vector<int> leaves;
      for (size_t i : which) {
        int id = shape_->read_ids[i];
        const NestedField* want = plan_.schema->FindField(id);
        int found = -1;
        for (size_t k = 0; k < fields.size(); ++k)
          if (FieldIdOf(*fields[k].field) == id) found = static_cast<int>(k);
        if (found < 0)
          for (size_t k = 0; k < fields.size(); ++k)
            if (FieldIdOf(*fields[k].field) < 0 && fields[k].field->name() == want->name) found = static_cast<int>(k);
        if (found < 0) continue;
        CollectWantedLeaves(fields[found], shape_->read_fields[i], &f->leaves[i]);
        leaves.insert(leaves.end(), f->leaves[i].begin(), f->leaves[i].end());
        if (fields[found].is_leaf() && (want->type->id == TypeId::kString || want->type->id == TypeId::kBinary))
          f->string_leaves.push_back(fields[found].column_index);
      }
      std::sort(leaves.begin(), leaves.end());
      leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
      return leaves;
    };
    f->filter = FilterFor(task);
    if (f->filter) {
      f->first = first_;
      f->rest = rest_;
    } else {  // nothing to decide before reading: one pass
      f->first = unfiltered_;
    }
    f->first_leaves = leaves_of(f->first);
    f->rest_leaves = leaves_of(f->rest);
    std::vector<Unit> units;
    int64_t first_row = 0;
    int64_t sure = plan_.limit >= 0 ? RowsOnTheirWay() : 0;  // rows certain to come before this row group's
    const bool keeps_all = !f->filter && task.deletes.empty();  // KeepsAll, before the deletes are loaded
    for (int rg = 0; rg < md.num_row_groups(); ++rg) {
      int64_t rows = md.RowGroup(rg)->num_rows();
      ++plan_.stats->row_groups_total;
      if (f->filter && !expr::MightMatch(*f->filter, RowGroupStats(md, rg, *plan_.schema))) {
        ++plan_.stats->row_groups_skipped;
      } else if (rows > 0) {
        Unit u;
        u.row_group = rg;
        u.first_row = first_row;
        u.rows = rows;
        auto rgmd = md.RowGroup(rg);
        for (const auto* leaves : {&f->first_leaves, &f->rest_leaves})
          for (int leaf : *leaves)
            u.bytes += DecodedBytes(*rgmd->ColumnChunk(leaf), md.schema()->Column(leaf)->type_length());
        // Batch boundaries depend on the file alone (not on the budget or the path).
        u.batch_rows = std::clamp<int64_t>(u.bytes > 0 ? rows * kBatchBytes / u.bytes : kBatchRows, 1024, kBatchRows);
        // A row group of more rows than a limit still wants is streamed too, so reading
        // stops at the batch that meets it (a whole row group is decoded all at once).
        u.streamed = u.bytes > budget_ / 2 || (plan_.limit >= 0 && keeps_all && plan_.limit - sure < rows);
        if (keeps_all) sure += rows;
        units.push_back(u);
      }
      first_row += rows;
    }
    if (units.empty()) return {};
    if (!task.deletes.empty()) {
      SKADE_ASSIGN_OR_RETURN(f->deleted, loader_->Load(task.file, task.data_sequence_number, task.deletes));
      plan_.stats->delete_files += static_cast<int64_t>(task.deletes.size());
      // Deletes by position alone decide before any column is read: every column is a
      // second-phase one, decoded for the surviving rows only.
      if (!f->filter && f->deleted.equality().empty() && !f->deleted.empty()) std::swap(f->first, f->rest);
    }
    for (auto& u : units) {
      u.file = f;
      units_.push_back(std::move(u));
    }
    return {};
  }

  // The columns `which` (positions in read_ids) of a raw batch, lined up with the
  // table's fields; columns the file predates read as null. Dictionaries of string and
  // binary fields stay dictionaries (KeptDictionary) until DenseColumns.
  static Result<arrow::ArrayVector> Conform(const ScanShape& shape, const OpenedFile& f,
                                            const std::vector<size_t>& which, const arrow::RecordBatch& raw) {
    arrow::ArrayVector cols;
    for (size_t i : which) {
      int idx = RawIndex(shape, i, *raw.schema());
      SKADE_ASSIGN_OR_RETURN(auto col, ConformColumn(shape, f, i, idx < 0 ? nullptr : raw.column(idx),
                                                     raw.num_rows(), /*keep_dictionaries=*/true));
      cols.push_back(std::move(col));
    }
    return cols;
  }

  // Read position i as the table's field: `raw` is the file's column (null: the file
  // predates it, so `rows` nulls); a dictionary of a string or binary field stays one
  // when `keep_dictionaries` (KeptDictionary), for DenseColumns to expand later.
  static Result<std::shared_ptr<arrow::Array>> ConformColumn(const ScanShape& shape, const OpenedFile& f, size_t i,
                                                             const std::shared_ptr<arrow::Array>& raw, int64_t rows,
                                                             bool keep_dictionaries) {
    if (!raw) return Predated(shape.read_fields[i], shape.fields[i]->type(), rows, f.path, shape.pool);
    const NestedField& field = shape.read_fields[i];
    if (keep_dictionaries && KeptDictionary(*raw, field)) return raw;
    return ConformArray(shape.pool, raw, field, f.path);
  }

  // `cols` (the read ids at `which`) with the dictionaries Conform kept made dense
  // (only those of the field ids `only`, when given).
  static Status DenseColumns(const ScanShape& shape, const OpenedFile& f, const std::vector<size_t>& which,
                             arrow::ArrayVector* cols, const std::vector<int>* only = nullptr) {
    for (size_t k = 0; k < cols->size(); ++k) {
      auto& col = (*cols)[k];
      if (col->type_id() != arrow::Type::DICTIONARY) continue;
      if (only && std::find(only->begin(), only->end(), shape.read_ids[which[k]]) == only->end()) continue;
      SKADE_ASSIGN_OR_RETURN(col, ConformArray(shape.pool, col, shape.read_fields[which[k]], f.path));
    }
    return {};
  }

  // Fields for `cols` (the read ids at `which`), typed as the columns are (a kept
  // dictionary is not the field's dense type).
  static std::shared_ptr<arrow::Schema> SchemaOf(const ScanShape& shape, const std::vector<size_t>& which,
                                                 const arrow::ArrayVector& cols) {
    arrow::FieldVector fields;
    for (size_t k = 0; k < which.size(); ++k) {
      const auto& field = shape.fields[which[k]];
      fields.push_back(field->type()->Equals(*cols[k]->type()) ? field : field->WithType(cols[k]->type()));
    }
    return arrow::schema(std::move(fields));
  }

  // Which rows of a batch survive deletes and the filter (null: all of them). Row r of
  // the batch is at position first_pos + r of its file.
  static Result<std::shared_ptr<arrow::BooleanArray>> Selection(const ScanShape& shape, const OpenedFile& f,
                                                                const std::vector<size_t>& which,
                                                                const arrow::ArrayVector& cols, int64_t rows,
                                                                int64_t first_pos, int64_t* deleted) {
    auto batch = arrow::RecordBatch::Make(SchemaOf(shape, which, cols), rows, cols);
    std::shared_ptr<arrow::Array> match;
    if (f.filter) {
      SKADE_ASSIGN_OR_RETURN(match, expr::EvaluateBatch(*f.filter, *shape.schema, batch));
    }
    // EvaluateBatch's selection has no nulls: without deletes it is the answer.
    if (f.deleted.empty()) return std::static_pointer_cast<arrow::BooleanArray>(match);
    const auto& positions = f.deleted.positions();
    auto first_deleted = std::lower_bound(positions.begin(), positions.end(), first_pos);
    bool none_positioned = first_deleted == positions.end() || *first_deleted >= first_pos + rows;
    if (none_positioned && f.deleted.equality().empty()) return std::static_pointer_cast<arrow::BooleanArray>(match);
    // Deleted rows are cleared from what the filter selects (or from all rows).
    SKADE_ARROW_ASSIGN(auto bits, arrow::AllocateBitmap(rows, shape.pool), "scan");
    uint8_t* keep = bits->mutable_data();
    if (match) {
      const auto& m = static_cast<const arrow::BooleanArray&>(*match);
      arrow::internal::CopyBitmap(m.values()->data(), m.offset(), rows, keep, 0);
    } else {
      arrow::bit_util::SetBitsTo(keep, 0, rows, true);
    }
    if (f.deleted.equality().empty()) {
      // Position deletes alone: only those within the batch are visited, not every row.
      for (auto it = first_deleted; it != positions.end() && *it < first_pos + rows; ++it, ++*deleted)
        arrow::bit_util::ClearBit(keep, *it - first_pos);
    } else {
      // Equality keys are read from dense columns; the other columns' dictionaries stay
      // (expanding them here would do it twice: the kept rows are made dense later).
      std::vector<int> key_ids;
      for (const auto& set : f.deleted.equality()) key_ids.insert(key_ids.end(), set.field_ids.begin(), set.field_ids.end());
      arrow::ArrayVector dense = cols;
      SKADE_RETURN_IF_ERROR(DenseColumns(shape, f, which, &dense, &key_ids));
      auto schema = SchemaOf(shape, which, dense);
      auto keyed = arrow::RecordBatch::Make(std::move(schema), rows, std::move(dense));
      SKADE_ASSIGN_OR_RETURN(auto gone, DeletedFlags(f.deleted, *keyed, *shape.schema,
                                                     [&](int64_t r) { return first_pos + r; }));
      for (int64_t r = 0; r < rows; ++r)
        if (gone[static_cast<size_t>(r)]) {
          arrow::bit_util::ClearBit(keep, r);
          ++*deleted;
        }
    }
    return std::make_shared<arrow::BooleanArray>(rows, std::move(bits));
  }

  // One row group decoded as tasks (see the top of the file).
  struct Job {
    std::shared_ptr<const ScanShape> shape;
    Unit unit;
    std::shared_ptr<Slot> slot;
    std::shared_ptr<std::atomic<bool>> cancelled;
    TaskPool* pool = nullptr;  // null: tasks run in the thread that starts them
    std::vector<arrow::ArrayVector> cols;  // by position in read_ids: conformed, an array per batch
    std::atomic<size_t> remaining{0};      // tasks of the current phase not yet done
    std::mutex mu;
    arrow::Status status;  // the first failure
    std::vector<std::shared_ptr<arrow::BooleanArray>> masks;
    std::vector<int64_t> kept;
    std::shared_ptr<std::vector<uint8_t>> needed;  // per row: still needed by the second phase (null: all are)
    // Per row (empty: none): in a data page of a filter column whose page-index bounds
    // rule the filter out. Such pages are not decoded; their rows go whatever the filter says
    // of the nulls read in their place. Guarded by mu.
    std::vector<uint8_t> excluded;
    std::atomic<int64_t> pages_skipped{0};
    UnitResult out;

    int64_t Batches() const { return (unit.rows + unit.batch_rows - 1) / unit.batch_rows; }
    int64_t BatchRows(int64_t b) const { return std::min(unit.batch_rows, unit.rows - b * unit.batch_rows); }
    void Fail(arrow::Status st) {
      std::lock_guard lock(mu);
      if (status.ok()) status = std::move(st);
    }
    bool Failed() {
      std::lock_guard lock(mu);
      return !status.ok();
    }
  };
  using JobPtr = std::shared_ptr<Job>;

  static void Start(std::shared_ptr<const ScanShape> shape, Unit unit, std::shared_ptr<Slot> slot,
                    std::shared_ptr<std::atomic<bool>> cancelled, TaskPool* pool) {
    auto job = std::make_shared<Job>();
    job->shape = std::move(shape);
    job->unit = std::move(unit);
    job->slot = std::move(slot);
    job->cancelled = std::move(cancelled);
    job->pool = pool;
    job->cols.resize(job->shape->read_ids.size());
    StartPhase(job, job->unit.file->first, &AfterFirst);
  }

  // Runs `which`'s columns as tasks; the last one to finish calls `next`.
  static void StartPhase(const JobPtr& job, const std::vector<size_t>& which, void (*next)(const JobPtr&)) {
    auto groups = TaskGroups(*job->unit.file, job->unit.row_group, which);
    if (groups.empty()) return next(job);
    job->remaining = groups.size();
    for (auto& group : groups) {
      auto task = [job, group = std::move(group), next] {
        {
          size_t leaves = 0;
          for (size_t i : group) leaves += job->unit.file->leaves[i].size();
          TraceSpan span("decode", job->unit.ticket, leaves);
          if (job->cancelled->load()) {
            job->Fail(arrow::Status::Cancelled("scan closed"));
          } else if (!job->Failed()) {
            if (auto r = DecodeColumns(*job, group); !r) job->Fail(ToArrowStatus(r.error()));
          }
        }
        if (job->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) next(job);
      };
      if (job->pool) {
        job->pool->Submit(std::move(task), job->unit.ticket);
      } else {
        task();
      }
    }
  }

  // The field of first-phase column `i` when its data pages may be skipped by their
  // bounds in the page index: a number the filter looks at, read by ReadNeededPages.
  static const NestedField* PagesByStats(const Job& job, size_t i, int leaf, parquet::ParquetFileReader& file) {
    const ScanShape& shape = *job.shape;
    const OpenedFile& f = *job.unit.file;
    if (!job.masks.empty() || !f.filter) return nullptr;
    const int id = shape.read_ids[i];
    const auto ids = expr::ReferencedFieldIds(*f.filter);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) return nullptr;
    if (!ReadsNeededPages(file, leaf, *shape.fields[i]->type())) return nullptr;
    return shape.schema->FindField(id);
  }

  // Decodes a group of columns of the job's row group and lines them up with the table's
  // fields, cut into the unit's batches.
  static Status DecodeColumns(Job& job, const std::vector<size_t>& group) {
    const ScanShape& shape = *job.shape;
    const Unit& u = job.unit;
    const OpenedFile& f = *u.file;
    std::vector<size_t> by_arrow;  // positions Arrow's reader decodes (the others: FlatColumnReader)
    struct Flat {
      size_t i;
      int leaf;
      bool dictionary;  // a filter column's strings kept as a dictionary
    };
    std::vector<Flat> flat;
    // Flat columns of the second phase are decoded for the needed rows only, skipping
    // the pages holding none (the first phase's masks are made: job.masks).
    std::vector<std::pair<size_t, std::shared_ptr<arrow::Array>>> selected;
    for (size_t i : group) {
      const bool filtered = job.masks.empty();
      int leaf = FlatLeaf(shape, f, u.row_group, i, filtered);
      if (leaf >= 0) {
        flat.push_back({i, leaf, false});
      } else if (filtered && f.filter && (leaf = DictionaryLeaf(shape, f, u.row_group, i)) >= 0) {
        flat.push_back({i, leaf, true});
      } else {
        by_arrow.push_back(i);
      }
    }
    std::vector<int> leaves = GroupLeaves(f, by_arrow);
    std::shared_ptr<arrow::Table> raw;
    if (!leaves.empty() || !flat.empty()) {
      parquet::ArrowReaderProperties props = TaskReadProperties(f, u.row_group, leaves);
      try {
        // Decompressed pages come from the reader properties' pool. When pages may be
        // skipped (the second phase's, or a filter column's by its page index), they are
        // read as they are reached, so a skipped page is not read at all; otherwise each
        // column chunk is read whole.
        parquet::ReaderProperties read_props(shape.pool);
        if (job.needed || (job.masks.empty() && f.filter)) {
          read_props.enable_buffered_stream();
          read_props.set_buffer_size(64 << 10);
        }
        auto pq = parquet::ParquetFileReader::Open(f.source, read_props, f.metadata);
        std::unique_ptr<parquet::arrow::FileReader> reader;
        SKADE_ARROW_ASSIGN(reader, parquet::arrow::FileReader::Make(shape.pool, std::move(pq), props),
                           f.path);
        // Leaves whose pages without a needed row can be skipped are read page by page,
        // as the Arrow fields (with field ids) the file maps them to.
        std::vector<int> whole;
        std::vector<std::pair<std::shared_ptr<arrow::Field>, std::shared_ptr<arrow::Array>>> paged;
        for (int leaf : leaves) {
          const parquet::arrow::SchemaField* top = nullptr;
          if (job.needed)
            for (const auto& field : reader->manifest().schema_fields)
              if (field.is_leaf() && field.column_index == leaf) top = &field;
          if (!top || !ReadsNeededPages(*reader->parquet_reader(), leaf, *top->field->type())) {
            whole.push_back(leaf);
            continue;
          }
          int64_t skipped = 0;
          SKADE_ASSIGN_OR_RETURN(auto arr, ReadNeededPages(*reader->parquet_reader(), u.row_group, leaf,
                                                           top->field->type(), job.needed.get(), nullptr, shape.pool,
                                                           f.path, &skipped));
          job.pages_skipped += skipped;
          paged.emplace_back(top->field, std::move(arr));
        }
        // Flat leaves decode into arrays of the table's types (their fields carry the ids).
        for (const auto& [i, leaf, dictionary] : flat) {
          if (auto by_stats = dictionary ? nullptr : PagesByStats(job, i, leaf, *reader->parquet_reader())) {
            std::vector<uint8_t> excluded(static_cast<size_t>(u.rows), 0);
            PageFilter filter{f.filter.get(), by_stats, &excluded, u.batch_rows};
            int64_t skipped = 0;
            SKADE_ASSIGN_OR_RETURN(auto arr, ReadNeededPages(*reader->parquet_reader(), u.row_group, leaf,
                                                             shape.fields[i]->type(), nullptr, &filter, shape.pool,
                                                             f.path, &skipped));
            job.pages_skipped += skipped;
            if (skipped > 0) {
              std::lock_guard lock(job.mu);
              if (job.excluded.empty()) job.excluded.assign(excluded.size(), 0);
              for (size_t r = 0; r < excluded.size(); ++r) job.excluded[r] |= excluded[r];
            }
            paged.emplace_back(shape.fields[i], std::move(arr));
            continue;
          }
          FlatColumnReader column(*reader->parquet_reader(), u.row_group, leaf, shape.fields[i]->type(), shape.pool,
                                  f.path + ": row group " + std::to_string(u.row_group), job.needed);
          if (dictionary) column.KeepDictionary();
          SKADE_ASSIGN_OR_RETURN(auto arr, column.Next(u.rows));
          job.pages_skipped += column.pages_skipped();
          if (job.needed) {
            selected.emplace_back(i, std::move(arr));
          } else {
            paged.emplace_back(shape.fields[i]->WithType(arr->type()), std::move(arr));
          }
        }
        // A whole column chunk at a time decodes into one pre-sized array (as
        // pq.read_table does); batches are zero-copy slices of it.
        auto table = whole.empty() ? arrow::Result<std::shared_ptr<arrow::Table>>(arrow::Table::Make(
                                         arrow::schema({}), arrow::ChunkedArrayVector{}, u.rows))
                                   : reader->ReadRowGroup(u.row_group, whole);
        if (!table.ok()) return Corrupt(f.path + ": " + table.status().message());
        raw = *std::move(table);
        for (auto& [field, arr] : paged) {
          if (arr->length() != u.rows)
            return Corrupt(f.path + ": row group " + std::to_string(u.row_group) + " decoded unevenly");
          auto added = raw->AddColumn(raw->num_columns(), field, std::make_shared<arrow::ChunkedArray>(arr));
          if (!added.ok()) return Corrupt(f.path + ": " + added.status().message());
          raw = *std::move(added);
        }
      } catch (const std::exception& e) {
        return Corrupt(f.path + ": " + e.what());
      }
      if (raw->num_rows() != u.rows)
        return Corrupt(f.path + ": row group " + std::to_string(u.row_group) + " decoded unevenly");
    }
    // With a filter, dictionaries stay so through it (predicates look at each entry once)
    // and only surviving rows are made dense; without one, or when every row survived
    // it, they are made dense here, in the task.
    bool keep_dictionaries = f.filter && (job.masks.empty() || job.needed);
    for (size_t i : group) {
      auto sel = std::find_if(selected.begin(), selected.end(), [&](const auto& s) { return s.first == i; });
      int idx = sel == selected.end() && raw ? RawIndex(shape, i, *raw->schema()) : -1;
      arrow::ArrayVector batches;
      int64_t at = 0;  // a selected column's rows of the batches before
      for (int64_t b = 0; b < job.Batches(); ++b) {
        std::shared_ptr<arrow::Array> piece;
        int64_t n = job.BatchRows(b);
        if (sel != selected.end()) {  // batch b: its kept[b] rows
          n = job.kept[static_cast<size_t>(b)];
          piece = sel->second->Slice(at, n);
          at += n;
        } else if (idx >= 0) {
          SKADE_ASSIGN_OR_RETURN(piece, Piece(*raw->column(idx), b * u.batch_rows, n, f.path));
        }
        SKADE_ASSIGN_OR_RETURN(auto col, ConformColumn(shape, f, i, piece, n, keep_dictionaries));
        batches.push_back(std::move(col));
      }
      job.cols[i] = std::move(batches);
    }
    return {};
  }

  // The columns decoded first are in: which rows survive, per batch; then the other
  // columns, if any row does.
  static void AfterFirst(const JobPtr& job) {
    if (!job->Failed())
      if (auto st = SelectRows(*job); !st) job->Fail(ToArrowStatus(st.error()));
    const OpenedFile& f = *job->unit.file;
    bool any = std::any_of(job->kept.begin(), job->kept.end(), [](int64_t n) { return n > 0; });
    if (!job->Failed() && any && !f.rest.empty()) return StartPhase(job, f.rest, &Finish);
    Finish(job);
  }

  // `mask` false where `excluded` (an entry per row of the mask) is set.
  static Result<std::shared_ptr<arrow::BooleanArray>> WithoutExcluded(const std::shared_ptr<arrow::BooleanArray>& mask,
                                                                    const uint8_t* excluded) {
    const int64_t n = mask->length();
    if (std::find(excluded, excluded + n, 1) == excluded + n) return mask;
    arrow::BooleanBuilder b;
    SKADE_ARROW_RETURN(b.Reserve(n), "scan");
    for (int64_t r = 0; r < n; ++r) b.UnsafeAppend(!excluded[r] && mask->IsValid(r) && mask->Value(r));
    std::shared_ptr<arrow::BooleanArray> out;
    SKADE_ARROW_RETURN(b.Finish(&out), "scan");
    return out;
  }

  static Status SelectRows(Job& job) {
    const Unit& u = job.unit;
    const OpenedFile& f = *u.file;
    job.masks.resize(static_cast<size_t>(job.Batches()));
    job.kept.resize(static_cast<size_t>(job.Batches()));
    for (int64_t b = 0; b < job.Batches(); ++b) {
      int64_t rows = job.BatchRows(b);
      job.out.rows_read += rows;
      std::shared_ptr<arrow::BooleanArray> mask;
      const uint8_t* excluded = job.excluded.empty() ? nullptr : job.excluded.data() + b * u.batch_rows;
      if (excluded && std::find(excluded, excluded + rows, 0) == excluded + rows) {
        // Every row is in a page the filter rules out: its columns were not even written.
        SKADE_ARROW_ASSIGN(auto none, arrow::MakeArrayFromScalar(arrow::BooleanScalar(false), rows), "scan");
        mask = std::static_pointer_cast<arrow::BooleanArray>(none);
      } else if (f.filter || !f.deleted.empty()) {
        arrow::ArrayVector cols;
        for (size_t i : f.first) cols.push_back(job.cols[i][b]);
        SKADE_ASSIGN_OR_RETURN(mask, Selection(*job.shape, f, f.first, cols, rows, u.first_row + b * u.batch_rows,
                                               &job.out.rows_deleted));
      }
      if (excluded && mask) {
        SKADE_ASSIGN_OR_RETURN(mask, WithoutExcluded(mask, excluded));
      }
      job.kept[b] = mask ? mask->true_count() : rows;
      job.masks[b] = std::move(mask);
    }
    // Which rows the other columns must still deliver, when not all (they decode only
    // those, and not the data pages holding none), set a run of surviving rows at a time.
    int64_t kept = 0;
    for (int64_t n : job.kept) kept += n;
    if (kept > 0 && kept < u.rows && !f.rest.empty()) {
      job.needed = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(u.rows));
      uint8_t* needed = job.needed->data();
      for (int64_t b = 0; b < job.Batches(); ++b, needed += u.batch_rows)
        MarkKept(job.masks[static_cast<size_t>(b)].get(), job.BatchRows(b), needed);
    }
    return {};
  }

  // Every column is in (or the unit failed): the batches go to the slot.
  static void Finish(const JobPtr& job) {
    Job& j = *job;
    const OpenedFile& f = *j.unit.file;
    // The batches are slices of the row group's column buffers: what decides is the
    // share of the whole row group that passes.
    int64_t kept = 0;
    for (int64_t n : j.kept) kept += n;
    const bool in_place = StayInPlace(kept, j.unit.rows);
    for (int64_t b = 0; b < j.Batches() && !j.Failed(); ++b) {
      if (j.kept[b] == 0) continue;
      arrow::ArrayVector first, rest;
      for (size_t i : f.first) first.push_back(std::move(j.cols[i][b]));
      for (size_t i : f.rest) rest.push_back(std::move(j.cols[i][b]));
      auto batch = Assemble(*j.shape, f, std::move(first), j.masks[b], j.kept[b], std::move(rest), j.BatchRows(b),
                            j.unit.first_row + b * j.unit.batch_rows, in_place);
      if (!batch) {
        j.Fail(ToArrowStatus(batch.error()));
        break;
      }
      j.out.batches.push_back(*std::move(batch));
    }
    j.cols.clear();
    arrow::Status st;
    {
      std::lock_guard lock(j.mu);
      st = j.status;
    }
    if (!st.ok()) return j.slot->Set(UnitResult{st, {}, 0, 0, 0});
    j.out.pages_skipped = j.pages_skipped.load();
    j.slot->Set(std::move(j.out));
  }

  // One output batch of `rows` rows starting at file position `start`: the columns
  // decoded first (`first_cols`), the others (`rest_cols`, conformed), positions if
  // asked for, and the selection applied (to the columns of `rows` rows: those decoded
  // for the surviving rows only hold `kept`); dictionaries kept through the filter step
  // are made dense after it, so only the surviving rows are. `in_place`: the survivors
  // move up within the decoded buffers, else they are copied out and the buffers let go.
  // `skipped`: the readers decoded only the rows it marks of the `skipped_rows` from
  // `start` on (a streamed unit's `wanted`), which are the batch's `rows`.
  static Result<std::shared_ptr<arrow::RecordBatch>> Assemble(const ScanShape& shape, const OpenedFile& f,
                                                              arrow::ArrayVector first_cols,
                                                              const std::shared_ptr<arrow::BooleanArray>& mask,
                                                              int64_t kept, arrow::ArrayVector rest_cols,
                                                              int64_t rows, int64_t start, bool in_place,
                                                              const uint8_t* skipped = nullptr,
                                                              int64_t skipped_rows = 0) {
    arrow::ArrayVector by_pos(shape.read_ids.size());
    for (size_t k = 0; k < f.first.size(); ++k) by_pos[f.first[k]] = std::move(first_cols[k]);
    for (size_t k = 0; k < f.rest.size(); ++k) by_pos[f.rest[k]] = std::move(rest_cols[k]);
    arrow::ArrayVector cols(by_pos.begin(), by_pos.begin() + static_cast<long>(shape.projected));
    std::vector<size_t> output(shape.projected);
    for (size_t k = 0; k < output.size(); ++k) output[k] = k;
    if (mask && kept < rows) {
      // The decoded rows are this batch's alone (slices of a column chunk, each its own
      // range): the survivors may move up in place instead of being copied out.
      std::vector<size_t> moved;
      arrow::ArrayVector moving;
      for (size_t k = 0; k < cols.size(); ++k)
        if (cols[k]->length() == rows) {
          moved.push_back(k);
          moving.push_back(std::move(cols[k]));
        }
      if (!moved.empty()) {
        auto schema = SchemaOf(shape, moved, moving);
        auto batch = arrow::RecordBatch::Make(std::move(schema), rows, std::move(moving));
        SKADE_ASSIGN_OR_RETURN(batch, KeepRows(batch, *mask, kept, in_place, shape.pool));
        for (size_t k = 0; k < moved.size(); ++k) cols[moved[k]] = batch->column(static_cast<int>(k));
      }
    }
    SKADE_RETURN_IF_ERROR(DenseColumns(shape, f, output, &cols));
    for (size_t k = 0; k < cols.size(); ++k)
      if (shape.cut[k]) cols[k] = PruneArray(cols[k], shape.out_fields[k]);
    if (shape.positions) {
      arrow::Int64Builder pb;
      SKADE_ARROW_RETURN(pb.Reserve(rows), "scan");
      if (skipped) {
        for (int64_t r = 0; r < skipped_rows; ++r) {
          if (!skipped[r]) continue;
          if (pb.length() == rows) return Corrupt(f.path + ": rows decoded unevenly");
          pb.UnsafeAppend(start + r);
        }
        if (pb.length() != rows) return Corrupt(f.path + ": rows decoded unevenly");
      } else {
        for (int64_t r = 0; r < rows; ++r)
          if (!mask || kept == rows || mask->Value(r)) pb.UnsafeAppend(start + r);
      }
      std::shared_ptr<arrow::Array> p;
      SKADE_ARROW_RETURN(pb.Finish(&p), "scan");
      for (size_t k : shape.metadata) {
        SKADE_ASSIGN_OR_RETURN(cols[k], Metadata(shape, f, k, *cols[k], p));
      }
      if (shape.emit_positions) cols.push_back(p);
    }
    int64_t out_rows = mask ? kept : rows;
    return arrow::RecordBatch::Make(shape.out_schema, out_rows, std::move(cols));
  }

  // A metadata column's values: the file's path and the rows' positions; for row lineage,
  // where the file holds none, the row's id (first_row_id plus its position) or the file's
  // data sequence number, null for rows from before the table had row lineage.
  static Result<std::shared_ptr<arrow::Array>> Metadata(const ScanShape& shape, const OpenedFile& f, size_t k,
                                                        const arrow::Array& held,
                                                        const std::shared_ptr<arrow::Array>& positions) {
    const int id = shape.out_fields[k].id;
    if (id == kPositionFieldId) return positions;
    if (id == kFilePathFieldId) {
      SKADE_ARROW_ASSIGN(auto paths, arrow::MakeArrayFromScalar(arrow::StringScalar(f.uri), held.length(), shape.pool),
                         "scan");
      return paths;
    }
    if (held.null_count() == 0 || !f.first_row_id) return held.Slice(0);
    const int64_t n = held.length();
    SKADE_ARROW_ASSIGN(auto buffer, arrow::AllocateBuffer(n * static_cast<int64_t>(sizeof(int64_t)), shape.pool),
                       "scan");
    auto* out = reinterpret_cast<int64_t*>(buffer->mutable_data());
    if (id == kRowIdFieldId) {
      const int64_t* pos = static_cast<const arrow::Int64Array&>(*positions).raw_values();
      for (int64_t r = 0; r < n; ++r) out[r] = *f.first_row_id + pos[r];
    } else {
      std::fill(out, out + n, f.data_sequence_number);
    }
    if (held.null_count() < n) {  // the values the file holds stand
      const int64_t* values = static_cast<const arrow::Int64Array&>(held).raw_values();
      arrow::internal::VisitSetBitRunsVoid(held.null_bitmap_data(), held.offset(), n, [&](int64_t from, int64_t len) {
        std::copy(values + from, values + from + len, out + from);
      });
    }
    return std::make_shared<arrow::Int64Array>(n, std::move(buffer));
  }

  // The first `n` rows of a batch: a slice, or, when that would hold a batch mostly of
  // other rows, a copy in buffers of their own.
  Result<std::shared_ptr<arrow::RecordBatch>> FirstRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                        int64_t n) const {
    if (StayInPlace(n, batch->num_rows())) return batch->Slice(0, n);
    SKADE_ARROW_ASSIGN(auto bits, arrow::AllocateBitmap(batch->num_rows(), shape_->pool), "scan");
    arrow::bit_util::SetBitsTo(bits->mutable_data(), 0, n, true);
    arrow::bit_util::SetBitsTo(bits->mutable_data(), n, batch->num_rows() - n, false);
    return KeepRows(batch, arrow::BooleanArray(batch->num_rows(), std::move(bits)), n, /*in_place=*/false,
                    shape_->pool);
  }

  ScanPlan plan_;
  FileIO* io_;
  std::shared_ptr<const ScanShape> shape_;
  std::vector<size_t> first_, rest_, unfiltered_;
  std::unique_ptr<DeleteLoader> loader_;
  bool sequential_ = false;
  size_t max_units_ = 1;
  int64_t budget_ = 0;  // plan.memory_budget_bytes, or the default for the pool
  std::shared_ptr<std::atomic<bool>> cancelled_;
  size_t next_task_ = 0;
  std::deque<Unit> units_;  // opened, not yet scheduled
  std::deque<std::pair<Unit, std::shared_ptr<Slot>>> pending_;  // a streamed unit has no slot
  int64_t pending_bytes_ = 0;  // decoded bytes in flight or not yet handed out
  int64_t held_bytes_ = 0;     // of those, the ones in ready_
  std::shared_ptr<Stream> stream_;
  std::shared_ptr<Stream> opened_;  // the next streamed unit's, read ahead (OpenNextStream)
  std::deque<std::shared_ptr<arrow::RecordBatch>> ready_;
};

}  // namespace

std::shared_ptr<arrow::RecordBatchReader> MakeScanReader(ScanPlan plan, FileIO* io) {
  return std::make_shared<ScanReader>(std::move(plan), io);
}

}  // namespace skade
