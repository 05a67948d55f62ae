#include "skade/table/delete_index.h"

#include <arrow/api.h>
#include <arrow/array/concatenate.h>
#include <arrow/compute/api.h>
#include <arrow/util/bit_run_reader.h>
#include <arrow/util/bitmap_ops.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>

#include "skade/io/file_io.h"
#include "skade/table/deletion_vector.h"
#include "skade/table/arrow_internal.h"
#include "skade/table/arrow_schema.h"
#include "skade/table/arrow_values.h"
#include "skade/table/parquet_read.h"

namespace skade {
namespace {

// murmur3's 64-bit finaliser: a bijection, so distinct values <= 8 bytes never collide.
inline uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}
constexpr uint64_t kNullHash = 0x9ae16a3b2f90404fULL;

// How the values of one key column are laid out in its Arrow buffers.
struct KeyLayout {
  enum Kind { kFixed, kBool, kBinary, kLargeBinary } kind = kFixed;
  int width = 0;                     // bytes, kFixed only
  const uint8_t* values = nullptr;   // kFixed: the array's first value
  const arrow::Array* array = nullptr;

  static Result<KeyLayout> Of(const arrow::Array& a) {
    KeyLayout l;
    l.array = &a;
    const auto& t = *a.type();
    if (t.id() == arrow::Type::BOOL) {
      l.kind = kBool;
    } else if (t.id() == arrow::Type::STRING || t.id() == arrow::Type::BINARY) {
      l.kind = kBinary;
    } else if (t.id() == arrow::Type::LARGE_STRING || t.id() == arrow::Type::LARGE_BINARY) {
      l.kind = kLargeBinary;
    } else if (arrow::is_fixed_width(t.id()) && t.id() != arrow::Type::DICTIONARY &&
               static_cast<const arrow::FixedWidthType&>(t).bit_width() % 8 == 0) {
      l.width = static_cast<const arrow::FixedWidthType&>(t).bit_width() / 8;
      l.values = a.data()->buffers[1] ? a.data()->buffers[1]->data() + a.offset() * l.width : nullptr;
    } else {
      return InvalidArgument("equality deletes cannot compare columns of type " + t.ToString());
    }
    return l;
  }
  std::string_view Bytes(int64_t r) const {
    switch (kind) {
      case kFixed: return {reinterpret_cast<const char*>(values + r * width), static_cast<size_t>(width)};
      case kBinary: return static_cast<const arrow::BinaryArray&>(*array).GetView(r);
      case kLargeBinary: return static_cast<const arrow::LargeBinaryArray&>(*array).GetView(r);
      case kBool: break;
    }
    return {};
  }
  // A value's hash input: its bits when they fit 8 bytes, else a hash of its bytes.
  uint64_t Word(int64_t r) const {
    if (kind == kBool) return static_cast<const arrow::BooleanArray&>(*array).Value(r) ? 1 : 0;
    if (kind == kFixed && width <= 8) {
      uint64_t v = 0;
      std::memcpy(&v, values + r * width, static_cast<size_t>(width));
      return v;
    }
    return std::hash<std::string_view>{}(Bytes(r));
  }
  bool Equal(int64_t r, const KeyLayout& o, int64_t k) const {
    bool n1 = array->IsNull(r), n2 = o.array->IsNull(k);
    if (n1 || n2) return n1 && n2;
    if (kind == kBool) return Word(r) == o.Word(k);
    return Bytes(r) == o.Bytes(k);
  }
};

// The value of a 1, 2, 4 or 8 byte fixed-width column at `r`, sign-extended.
template <typename T>
int64_t SignedAt(const uint8_t* values, int64_t r) {
  T v;
  std::memcpy(&v, values + r * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return static_cast<int64_t>(v);
}

template <typename F>
void WithSignedLoader(int width, F&& f) {
  switch (width) {
    case 1: return f(&SignedAt<int8_t>);
    case 2: return f(&SignedAt<int16_t>);
    case 4: return f(&SignedAt<int32_t>);
    default: return f(&SignedAt<int64_t>);
  }
}

// Whether keys over these columns compare by their hash alone (see EqualityProbe::exact_).
bool ExactKeys(const std::vector<KeyLayout>& cols) {
  return cols.size() == 1 && (cols[0].kind == KeyLayout::kBool || (cols[0].kind == KeyLayout::kFixed && cols[0].width <= 8));
}

// The hash of every row's key, one column at a time.
void HashRows(const std::vector<KeyLayout>& cols, bool exact, int64_t rows, std::vector<uint64_t>* out) {
  out->assign(static_cast<size_t>(rows), 0);
  uint64_t* h = out->data();
  for (const auto& c : cols) {
    bool nulls = c.array->null_count() > 0;
    if (exact) {
      for (int64_t r = 0; r < rows; ++r) h[r] = nulls && c.array->IsNull(r) ? kNullHash : Mix(c.Word(r));
      return;
    }
    for (int64_t r = 0; r < rows; ++r)
      h[r] = Mix(h[r] * 0x9e3779b97f4a7c15ULL + (nulls && c.array->IsNull(r) ? kNullHash : Mix(c.Word(r))));
  }
}

Result<std::vector<KeyLayout>> Layouts(const std::vector<std::shared_ptr<arrow::Array>>& cols) {
  std::vector<KeyLayout> out;
  for (const auto& c : cols) {
    SKADE_ASSIGN_OR_RETURN(auto l, KeyLayout::Of(*c));
    out.push_back(l);
  }
  return out;
}

// `a` as `type` (a cast when a file's type differs from the table's, e.g. large strings).
Result<std::shared_ptr<arrow::Array>> AsType(const std::shared_ptr<arrow::Array>& a,
                                             const std::shared_ptr<arrow::DataType>& type) {
  if (a->type()->Equals(*type)) return a;
  InitArrowCompute();
  auto cast = arrow::compute::Cast(*a, type);
  if (!cast.ok()) return Corrupt("equality key column of type " + a->type()->ToString() + " does not read as " + type->ToString());
  return *cast;
}

// Whether the bounds of `field_id` in two files prove no value is in both (nulls
// in the delete file's column keep it: nulls match nulls).
bool Disjoint(const expr::ColumnStats& del, const expr::ColumnStats& data, int field_id, const Type& type) {
  auto nulls = del.null_value_counts.find(field_id);
  if (nulls == del.null_value_counts.end() || nulls->second != 0) return false;
  auto dlo = del.lower_bounds.find(field_id), dhi = del.upper_bounds.find(field_id);
  auto lo = data.lower_bounds.find(field_id), hi = data.upper_bounds.find(field_id);
  if (dlo == del.lower_bounds.end() || dhi == del.upper_bounds.end() || lo == data.lower_bounds.end() ||
      hi == data.upper_bounds.end())
    return false;
  auto a = DeserializeValue(type, dlo->second), b = DeserializeValue(type, dhi->second);
  auto c = DeserializeValue(type, lo->second), d = DeserializeValue(type, hi->second);
  if (!a || !b || !c || !d) return false;
  return CompareValues(*b, *c) < 0 || CompareValues(*a, *d) > 0;
}

using Runs = std::vector<std::pair<int64_t, int64_t>>;  // (first row, rows) of kept rows

// Where a column's kept rows go: buffers of their own, or (in place) the front of the
// column's own range, which the moves only ever shift forward.
Result<std::shared_ptr<arrow::Buffer>> Target(const std::shared_ptr<arrow::Buffer>& own, int64_t bytes, bool in_place,
                                              arrow::MemoryPool* pool) {
  if (in_place) return own;
  SKADE_ARROW_ASSIGN(std::shared_ptr<arrow::Buffer> out, arrow::AllocateBuffer(bytes, pool), "keep rows");
  return out;
}

template <typename Offset>
Result<std::shared_ptr<arrow::ArrayData>> KeepBinary(const arrow::ArrayData& in, const Runs& runs, int64_t kept,
                                                     bool in_place, arrow::MemoryPool* pool) {
  const Offset* offsets = in.GetValues<Offset>(1);
  const uint8_t* data = in.buffers[2] ? in.buffers[2]->data() : nullptr;
  int64_t total = 0;
  for (auto [pos, len] : runs) total += offsets[pos + len] - offsets[pos];
  SKADE_ASSIGN_OR_RETURN(auto out_offsets, Target(in.buffers[1], (kept + 1) * static_cast<int64_t>(sizeof(Offset)), in_place, pool));
  SKADE_ASSIGN_OR_RETURN(auto out_data, Target(in.buffers[2], total, in_place, pool));
  // In place the offsets stay where the column's are and keep pointing into its data.
  Offset* oo = reinterpret_cast<Offset*>(out_offsets->mutable_data()) + (in_place ? in.offset : 0);
  uint8_t* od = out_data ? out_data->mutable_data() : nullptr;
  Offset at = in_place ? offsets[0] : 0;
  int64_t row = 0;
  for (auto [pos, len] : runs) {
    Offset base = offsets[pos], end = offsets[pos + len];  // read before the writes below reach them
    for (int64_t i = 0; i < len; ++i) oo[row++] = at + (offsets[pos + i] - base);
    if (end > base) std::memmove(od + at, data + base, static_cast<size_t>(end - base));
    at += end - base;
  }
  oo[kept] = at;
  auto out = arrow::ArrayData::Make(in.type, kept, {nullptr, std::move(out_offsets), std::move(out_data)});
  if (in_place) out->offset = in.offset;
  return out;
}

Result<std::shared_ptr<arrow::ArrayData>> KeepFixed(const arrow::ArrayData& in, const Runs& runs, int64_t kept, int width,
                                                    bool in_place, arrow::MemoryPool* pool) {
  const uint8_t* values = in.buffers[1]->data() + in.offset * width;
  SKADE_ASSIGN_OR_RETURN(auto out, Target(in.buffers[1], kept * width, in_place, pool));
  uint8_t* o = out->mutable_data() + (in_place ? in.offset * width : 0);
  for (auto [pos, len] : runs) {
    std::memmove(o, values + pos * width, static_cast<size_t>(len * width));
    o += len * width;
  }
  auto data = arrow::ArrayData::Make(in.type, kept, {nullptr, std::move(out)});
  if (in_place) data->offset = in.offset;
  return data;
}

// Key ranges that cannot meet leave the data file alone (primitive keys only; not
// floats, whose NaN keys the bounds leave out).
bool KeysMayMeet(const DataFile& equality_deletes, const DataFile& data_file, const Schema& schema) {
  for (int id : equality_deletes.equality_ids) {
    const NestedField* f = schema.FindField(id);
    if (f && f->type->is_primitive() && f->type->id != TypeId::kFloat && f->type->id != TypeId::kDouble &&
        Disjoint(equality_deletes.stats, data_file.stats, id, *f->type))
      return false;
  }
  return true;
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatch>> KeepRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                     const arrow::BooleanArray& keep, int64_t kept, bool in_place,
                                                     arrow::MemoryPool* pool) {
  if (!pool) pool = arrow::default_memory_pool();
  Runs runs;
  arrow::internal::SetBitRunReader reader(keep.values()->data(), keep.offset(), keep.length());
  for (auto run = reader.NextRun(); !run.AtEnd(); run = reader.NextRun()) runs.emplace_back(run.position, run.length);
  arrow::ArrayVector columns;
  for (const auto& column : batch->columns()) {
    const arrow::ArrayData& in = *column->data();
    const auto& type = *column->type();
    // In place only where every buffer is writable (not memory a file was mapped to).
    bool here = in_place && std::all_of(in.buffers.begin(), in.buffers.end(), [](const auto& b) {
                  return !b || b->is_mutable();
                });
    std::shared_ptr<arrow::ArrayData> out;
    auto id = type.id();
    if (id == arrow::Type::STRING || id == arrow::Type::BINARY) {
      SKADE_ASSIGN_OR_RETURN(out, KeepBinary<int32_t>(in, runs, kept, here, pool));
    } else if (id == arrow::Type::LARGE_STRING || id == arrow::Type::LARGE_BINARY) {
      SKADE_ASSIGN_OR_RETURN(out, KeepBinary<int64_t>(in, runs, kept, here, pool));
    } else if (arrow::is_fixed_width(id) && id != arrow::Type::DICTIONARY && id != arrow::Type::BOOL &&
               id != arrow::Type::EXTENSION && in.buffers.size() == 2 && in.buffers[1] &&
               static_cast<const arrow::FixedWidthType&>(type).bit_width() % 8 == 0) {
      SKADE_ASSIGN_OR_RETURN(out, KeepFixed(in, runs, kept, static_cast<const arrow::FixedWidthType&>(type).bit_width() / 8, here, pool));
    } else {  // nested, booleans, dictionaries: Arrow's filter
      InitArrowCompute();
      arrow::compute::ExecContext ctx(pool);
      SKADE_ARROW_ASSIGN(auto filtered,
                         arrow::compute::Filter(column, keep, arrow::compute::FilterOptions::Defaults(), &ctx),
                         "keep rows");
      columns.push_back(filtered.make_array());
      continue;
    }
    // Validity bits of the kept runs, always in a bitmap of their own (small; a bitmap
    // byte can be shared with the neighbouring slice of the same column).
    if (in.buffers[0] && column->null_count() > 0) {
      SKADE_ARROW_ASSIGN(auto bits, arrow::AllocateEmptyBitmap(kept + out->offset, pool), "keep rows");
      int64_t at = out->offset;
      for (auto [pos, len] : runs) {
        arrow::internal::CopyBitmap(in.buffers[0]->data(), in.offset + pos, len, bits->mutable_data(), at);
        at += len;
      }
      out->null_count = kept - arrow::internal::CountSetBits(bits->data(), out->offset, kept);
      out->buffers[0] = std::move(bits);
    } else {
      out->null_count = 0;
    }
    columns.push_back(arrow::MakeArray(out));
  }
  return arrow::RecordBatch::Make(batch->schema(), kept, std::move(columns));
}

std::string PartitionTupleKey(int spec_id, const std::vector<Value>& tuple) {
  std::string key = std::to_string(spec_id) + "|";
  for (const auto& v : tuple) {
    key += std::visit(
        [](const auto& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) return "N";
          else if constexpr (std::is_same_v<T, std::string>) return "s" + std::to_string(x.size()) + ":" + x;
          else if constexpr (std::is_same_v<T, Decimal>)
            return "d" + std::to_string(static_cast<int64_t>(x.unscaled >> 64)) + ":" +
                   std::to_string(static_cast<uint64_t>(x.unscaled));
          else return "n" + std::to_string(x);
        },
        v);
    key += '\x1f';
  }
  return key;
}

void DeleteIndex::Add(DeleteFileEntry entry) {
  ++count_;
  if (entry.file->partition.empty()) global_.push_back(std::move(entry));
  else by_partition_[PartitionTupleKey(entry.file->spec_id, entry.file->partition)].push_back(std::move(entry));
}

std::vector<DeleteFileEntry> DeleteIndex::For(const DataFile& data_file, int64_t data_seq,
                                              const TableMetadata& metadata) const {
  std::vector<DeleteFileEntry> out;
  auto applies = [&](const DeleteFileEntry& d) {
    if (d.file->content == FileContent::kPositionDeletes) {
      if (d.data_sequence_number < data_seq) return false;
      // A deletion vector (and a position delete file of one data file) names its file.
      if (const auto& target = d.file->referenced_data_file) return SamePath(*target, data_file.file_path);
      // The file_path bounds tell which data files a position delete file covers.
      auto lo = d.file->stats.lower_bounds.find(kDeleteFilePathId);
      auto hi = d.file->stats.upper_bounds.find(kDeleteFilePathId);
      if (lo != d.file->stats.lower_bounds.end() && data_file.file_path < lo->second) return false;
      if (hi != d.file->stats.upper_bounds.end() && data_file.file_path > hi->second &&
          hi->second.size() >= data_file.file_path.size())
        return false;
      return true;
    }
    return d.data_sequence_number > data_seq && KeysMayMeet(*d.file, data_file, *metadata.schema());
  };
  for (const auto& d : global_)
    if (applies(d)) out.push_back(d);
  if (!data_file.partition.empty()) {
    auto it = by_partition_.find(PartitionTupleKey(data_file.spec_id, data_file.partition));
    if (it != by_partition_.end())
      for (const auto& d : it->second)
        if (applies(d)) out.push_back(d);
  }
  return out;
}

void DeletedRows::AddPositions(const std::vector<int64_t>& positions) {
  size_t old = positions_.size();
  positions_.insert(positions_.end(), positions.begin(), positions.end());
  std::sort(positions_.begin() + static_cast<long>(old), positions_.end());
  std::inplace_merge(positions_.begin(), positions_.begin() + static_cast<long>(old), positions_.end());
  positions_.erase(std::unique(positions_.begin(), positions_.end()), positions_.end());
}

void DeletedRows::AddEquality(std::vector<int> field_ids, const EqualityProbe* probe, int64_t after_sequence) {
  equality_.push_back(EqualitySet{std::move(field_ids), probe, after_sequence});
}

Result<std::unique_ptr<EqualityProbe>> EqualityProbe::Make(std::vector<std::shared_ptr<arrow::Array>> keys,
                                                           std::vector<int64_t> sequences) {
  auto p = std::unique_ptr<EqualityProbe>(new EqualityProbe());
  p->keys_ = std::move(keys);
  SKADE_ASSIGN_OR_RETURN(auto cols, Layouts(p->keys_));
  int64_t n = p->keys_.empty() ? 0 : p->keys_[0]->length();
  const bool by_sequence = !sequences.empty();
  if (by_sequence && static_cast<int64_t>(sequences.size()) != n)
    return Internal("equality probe: one sequence number per key row expected");
  // Sequence numbers are kept as ranks among the distinct ones (0: no key).
  std::vector<uint32_t> rank(sequences.size());
  if (by_sequence) {
    p->sequences_ = sequences;
    std::sort(p->sequences_.begin(), p->sequences_.end());
    p->sequences_.erase(std::unique(p->sequences_.begin(), p->sequences_.end()), p->sequences_.end());
    p->rank_width_ = p->sequences_.size() <= 0xff ? 1 : p->sequences_.size() <= 0xffff ? 2 : 4;
    for (size_t k = 0; k < sequences.size(); ++k)
      rank[k] = static_cast<uint32_t>(
          std::lower_bound(p->sequences_.begin(), p->sequences_.end(), sequences[k]) - p->sequences_.begin() + 1);
  }
  auto newer = [&](size_t entry, int64_t k) { p->RaiseNewest(entry, rank[static_cast<size_t>(k)]); };
  auto newer_null = [&](int64_t k) { p->null_newest_ = std::max(p->null_newest_, rank[static_cast<size_t>(k)]); };
  p->exact_ = ExactKeys(cols);
  const KeyLayout& c0 = cols.empty() ? KeyLayout{} : cols[0];
  if (p->exact_ && c0.kind == KeyLayout::kFixed && (c0.width == 1 || c0.width == 2 || c0.width == 4 || c0.width == 8)) {
    // Dense integer keys (ids): a bitmap over their range when it stays small.
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min(), count = 0;
    const arrow::Array& a = *p->keys_[0];
    WithSignedLoader(c0.width, [&](auto load) {
      for (int64_t k = 0; k < n; ++k) {
        if (a.IsNull(k)) {
          p->has_null_ = true;
          if (by_sequence) newer_null(k);
          continue;
        }
        int64_t v = load(c0.values, k);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        ++count;
      }
    });
    uint64_t span = count > 0 ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) : 0;
    // With sequences a value takes a rank (up to 4 bytes) instead of a bit: dense only while
    // about as small as the hash entries.
    uint64_t cap = by_sequence ? std::max<uint64_t>(static_cast<uint64_t>(count) * 16, 1 << 22)
                                   : std::max<uint64_t>(static_cast<uint64_t>(count) * 64, 1 << 23);
    if (count > 0 && span < (uint64_t{1} << 30) && span <= cap) {
      p->dense_ = true;
      p->lo_ = lo;
      p->span_ = span;
      if (by_sequence)
        p->newest_.assign((span + 1) * p->rank_width_, 0);
      else
        p->bits_.assign(span / 64 + 1, 0);
      WithSignedLoader(c0.width, [&](auto load) {
        for (int64_t k = 0; k < n; ++k)
          if (!a.IsNull(k)) {
            uint64_t off = static_cast<uint64_t>(load(c0.values, k)) - static_cast<uint64_t>(lo);
            if (by_sequence)
              newer(off, k);
            else
              p->bits_[off >> 6] |= uint64_t{1} << (off & 63);
          }
      });
      return p;
    }
    p->has_null_ = false;  // counted again below
    p->null_newest_ = 0;
  }
  std::vector<uint64_t> h;
  HashRows(cols, p->exact_, n, &h);
  uint64_t buckets = 16;
  while (buckets < static_cast<uint64_t>(n) * 2) buckets <<= 1;
  p->mask_ = buckets - 1;
  p->heads_.assign(buckets, -1);
  p->hashes_.reserve(static_cast<size_t>(n));
  std::vector<int64_t> rows;  // key row of each entry (duplicates are entered once)
  for (int64_t k = 0; k < n; ++k) {
    if (p->exact_ && p->keys_[0]->IsNull(k)) {
      p->has_null_ = true;
      if (by_sequence) newer_null(k);
      continue;
    }
    int32_t& head = p->heads_[h[k] & p->mask_];
    int32_t seen = -1;
    for (int32_t i = head; i >= 0 && seen < 0; i = p->next_[static_cast<size_t>(i)])
      if (p->hashes_[static_cast<size_t>(i)] == h[k] &&
          (p->exact_ || std::all_of(cols.begin(), cols.end(), [&](const KeyLayout& c) {
             return c.Equal(rows[static_cast<size_t>(i)], c, k);
           })))
        seen = i;
    if (seen >= 0) {
      if (by_sequence) newer(static_cast<size_t>(seen), k);
      continue;
    }
    p->next_.push_back(head);
    head = static_cast<int32_t>(p->hashes_.size());
    p->hashes_.push_back(h[k]);
    if (by_sequence) {
      p->newest_.resize(p->newest_.size() + p->rank_width_);
      newer(p->hashes_.size() - 1, k);
    }
    rows.push_back(k);
  }
  if (!p->exact_ && static_cast<int64_t>(rows.size()) < n) {  // keep only the distinct key rows
    arrow::Int64Builder idx;
    SKADE_ARROW_RETURN(idx.AppendValues(rows), "equality deletes");
    std::shared_ptr<arrow::Array> ia;
    SKADE_ARROW_RETURN(idx.Finish(&ia), "equality deletes");
    InitArrowCompute();
    for (auto& k : p->keys_) {
      SKADE_ARROW_ASSIGN(auto taken, arrow::compute::Take(*k, *ia), "equality deletes");
      k = taken;
    }
  }
  return p;
}

Status EqualityProbe::Mark(const std::vector<std::shared_ptr<arrow::Array>>& columns, std::vector<bool>* out,
                           int64_t after_sequence) const {
  if (columns.size() != keys_.size()) return Internal("equality probe: column count differs from the key's");
  if (hashes_.empty() && !has_null_ && !dense_) return {};
  std::vector<std::shared_ptr<arrow::Array>> typed;
  for (size_t c = 0; c < columns.size(); ++c) {
    SKADE_ASSIGN_OR_RETURN(auto a, AsType(columns[c], keys_[c]->type()));
    typed.push_back(std::move(a));
  }
  if (dense_) return MarkDense(*typed[0], out, after_sequence);
  const uint32_t after = AfterRank(after_sequence);
  const bool null_deletes = has_null_ && (!by_sequence() || null_newest_ > after);
  SKADE_ASSIGN_OR_RETURN(auto cols, Layouts(typed));
  SKADE_ASSIGN_OR_RETURN(auto keys, Layouts(keys_));
  int64_t rows = typed.empty() ? 0 : typed[0]->length();
  std::vector<uint64_t> h;
  HashRows(cols, exact_, rows, &h);
  bool nulls = exact_ && typed[0]->null_count() > 0;
  for (int64_t r = 0; r < rows; ++r) {
    if ((*out)[static_cast<size_t>(r)]) continue;
    if (nulls && typed[0]->IsNull(r)) {
      (*out)[static_cast<size_t>(r)] = null_deletes;
      continue;
    }
    uint64_t hr = h[static_cast<size_t>(r)];
    for (int32_t i = heads_[hr & mask_]; i >= 0; i = next_[static_cast<size_t>(i)]) {
      if (hashes_[static_cast<size_t>(i)] != hr) continue;
      bool equal = exact_;
      if (!equal) {
        equal = true;
        for (size_t c = 0; c < cols.size() && equal; ++c) equal = cols[c].Equal(r, keys[c], i);
      }
      if (equal) {  // keys are entered once: this entry decides
        (*out)[static_cast<size_t>(r)] = !by_sequence() || NewestAt(static_cast<size_t>(i)) > after;
        break;
      }
    }
  }
  return {};
}

Result<std::vector<bool>> DeletedFlags(const DeletedRows& deleted, const arrow::RecordBatch& batch,
                                       const Schema& schema,
                                       const std::function<int64_t(int64_t)>& position_of) {
  std::vector<bool> out(static_cast<size_t>(batch.num_rows()));
  // Rows come in file order: walk the sorted positions alongside (search on a step back).
  const auto& pos = deleted.positions();
  auto at = pos.begin();
  int64_t previous = -1;
  for (int64_t r = 0; r < batch.num_rows() && !pos.empty(); ++r) {
    int64_t p = position_of(r);
    if (p < previous || r == 0) at = std::lower_bound(pos.begin(), pos.end(), p);
    while (at != pos.end() && *at < p) ++at;
    out[static_cast<size_t>(r)] = at != pos.end() && *at == p;
    previous = p;
  }
  for (const auto& set : deleted.equality()) {
    std::vector<std::shared_ptr<arrow::Array>> cols;
    for (int id : set.field_ids) {
      auto col = ColumnForFieldId(batch, schema, id);
      if (!col) return Corrupt("equality delete column " + std::to_string(id) + " not readable");
      cols.push_back(col);
    }
    SKADE_RETURN_IF_ERROR(set.probe->Mark(cols, &out, set.after_sequence));
  }
  return out;
}

uint32_t EqualityProbe::NewestAt(size_t i) const {
  const uint8_t* at = newest_.data() + i * rank_width_;
  if (rank_width_ == 1) return *at;
  if (rank_width_ == 2) {
    uint16_t rank;
    std::memcpy(&rank, at, sizeof rank);
    return rank;
  }
  uint32_t rank;
  std::memcpy(&rank, at, sizeof rank);
  return rank;
}

void EqualityProbe::RaiseNewest(size_t i, uint32_t rank) {
  if (rank <= NewestAt(i)) return;
  uint8_t* at = newest_.data() + i * rank_width_;
  if (rank_width_ == 1) {
    *at = static_cast<uint8_t>(rank);
  } else if (rank_width_ == 2) {
    const auto narrow = static_cast<uint16_t>(rank);
    std::memcpy(at, &narrow, sizeof narrow);
  } else {
    std::memcpy(at, &rank, sizeof rank);
  }
}

uint32_t EqualityProbe::AfterRank(int64_t after_sequence) const {
  return static_cast<uint32_t>(std::upper_bound(sequences_.begin(), sequences_.end(), after_sequence) -
                               sequences_.begin());
}

Status EqualityProbe::MarkDense(const arrow::Array& column, std::vector<bool>* out, int64_t after_sequence) const {
  SKADE_ASSIGN_OR_RETURN(KeyLayout c, KeyLayout::Of(column));
  const bool nulls = column.null_count() > 0;
  const uint32_t after = AfterRank(after_sequence);
  const bool null_deletes = has_null_ && (!by_sequence() || null_newest_ > after);
  const int64_t rows = column.length();
  WithSignedLoader(c.width, [&](auto load) {
    for (int64_t r = 0; r < rows; ++r) {
      if (nulls && column.IsNull(r)) {
        if (null_deletes) (*out)[static_cast<size_t>(r)] = true;
        continue;
      }
      uint64_t off = static_cast<uint64_t>(load(c.values, r)) - static_cast<uint64_t>(lo_);
      if (off > span_) continue;
      if (by_sequence() ? NewestAt(off) > after : (bits_[off >> 6] >> (off & 63) & 1))
        (*out)[static_cast<size_t>(r)] = true;
    }
  });
  return {};
}

Result<const DeleteLoader::PositionFile*> DeleteLoader::LoadPositions(const DataFile& f, int64_t data_rows) {
  auto it = positions_.find(f.EntryKey());
  if (it != positions_.end()) return it->second.get();
  if (f.IsDeletionVector()) {
    // Spark writes one Puffin file per task with the vectors of many data files: it is
    // read once, and each vector decoded when a data file of it is read.
    auto bytes = puffin_.find(f.file_path);
    if (bytes == puffin_.end()) {
      SKADE_ASSIGN_OR_RETURN(std::string read, io_->ReadFile(f.file_path));
      bytes = puffin_.emplace(f.file_path, std::move(read)).first;
    }
    const int64_t offset = *f.content_offset, size = *f.content_size_in_bytes;
    const std::string where = LocalPath(f.file_path) + " at offset " + std::to_string(offset);
    if (offset > static_cast<int64_t>(bytes->second.size()) ||
        size > static_cast<int64_t>(bytes->second.size()) - offset)
      return Corrupt(where + ": the deletion vector's " + std::to_string(size) + " bytes pass the file's end (" +
                     std::to_string(bytes->second.size()) + " bytes)");
    SKADE_ASSIGN_OR_RETURN(auto positions, DecodeDeletionVector(std::string_view(bytes->second).substr(offset, size),
                                                                data_rows, where));
    if (static_cast<int64_t>(positions.size()) != f.record_count)
      return Corrupt(where + ": the deletion vector holds " + std::to_string(positions.size()) +
                     " positions, its manifest entry says " + std::to_string(f.record_count));
    auto pf = std::make_unique<PositionFile>();
    pf->by_path[*f.referenced_data_file] = std::move(positions);
    return positions_.emplace(f.EntryKey(), std::move(pf)).first->second.get();
  }
  auto is_path = [](const arrow::Field& c) {
    int id = FieldIdOf(c);
    return id == kDeleteFilePathId || (id < 0 && c.name() == "file_path");
  };
  auto is_pos = [](const arrow::Field& c) {
    int id = FieldIdOf(c);
    return id == kDeletePosId || (id < 0 && c.name() == "pos");
  };
  // The deleted rows a writer may add (`row`) are not read.
  SKADE_ASSIGN_OR_RETURN(auto table, ReadWholeParquet(f.file_path, f.record_count, [&](const arrow::Field& c) {
                           return is_path(c) || is_pos(c);
                         }));
  auto batch = table->CombineChunksToBatch();
  if (!batch.ok()) return Corrupt(LocalPath(f.file_path) + ": " + batch.status().message());
  std::shared_ptr<arrow::Array> paths, pos;
  for (int c = 0; c < (*batch)->num_columns(); ++c) {
    if (is_path(*(*batch)->schema()->field(c))) paths = (*batch)->column(c);
    if (is_pos(*(*batch)->schema()->field(c))) pos = (*batch)->column(c);
  }
  if (!paths || !pos) return Corrupt(LocalPath(f.file_path) + ": position delete file lacks file_path/pos");
  SKADE_ASSIGN_OR_RETURN(paths, AsType(paths, arrow::utf8()));
  SKADE_ASSIGN_OR_RETURN(pos, AsType(pos, arrow::int64()));
  if (paths->null_count() > 0 || pos->null_count() > 0)
    return Corrupt(LocalPath(f.file_path) + ": null in a position delete");
  const auto& path_col = static_cast<const arrow::StringArray&>(*paths);
  const int64_t* p = static_cast<const arrow::Int64Array&>(*pos).raw_values();
  auto pf = std::make_unique<PositionFile>();
  // Rows are sorted by path (spec): one map entry per run of equal paths.
  std::vector<int64_t>* run = nullptr;
  std::string_view run_path;
  for (int64_t r = 0; r < path_col.length(); ++r) {
    std::string_view path = path_col.GetView(r);
    if (!run || path != run_path) {
      run = &pf->by_path[std::string(path)];
      run_path = path;
    }
    run->push_back(p[r]);
  }
  return positions_.emplace(f.EntryKey(), std::move(pf)).first->second.get();
}

Result<const std::vector<std::shared_ptr<arrow::Array>>*> DeleteLoader::LoadKeyColumns(const DataFile& f) {
  auto it = key_columns_.find(f.file_path);
  if (it != key_columns_.end()) return &it->second;
  if (f.equality_ids.empty()) return Corrupt(LocalPath(f.file_path) + ": equality delete file without equality ids");
  std::vector<const NestedField*> fields;
  for (int id : f.equality_ids) {
    const NestedField* field = schema_->FindField(id);
    if (!field) return Corrupt(LocalPath(f.file_path) + ": equality field " + std::to_string(id) + " is not in the schema");
    fields.push_back(field);
  }
  // Only the columns holding the keys are read: a delete file may carry whole rows
  // (skade's once did, and other writers may).
  SKADE_ASSIGN_OR_RETURN(auto table, ReadWholeParquet(f.file_path, f.record_count, [&](const arrow::Field& c) {
                           return std::any_of(f.equality_ids.begin(), f.equality_ids.end(),
                                              [&](int id) { return HoldsFieldId(c, *schema_, id); });
                         }));
  auto batch = table->CombineChunksToBatch();
  if (!batch.ok()) return Corrupt(LocalPath(f.file_path) + ": " + batch.status().message());
  std::vector<std::shared_ptr<arrow::Array>> cols;
  for (size_t k = 0; k < fields.size(); ++k) {
    const NestedField* field = fields[k];
    auto col = ColumnForFieldId(**batch, *schema_, f.equality_ids[k]);
    if (!col) return Corrupt(LocalPath(f.file_path) + ": lacks equality column " + field->name);
    auto typed = AsType(col, ToArrowType(*field->type));
    if (!typed) return std::unexpected(typed.error().WithContext(LocalPath(f.file_path)));
    cols.push_back(std::move(*typed));
  }
  return &key_columns_.emplace(f.file_path, std::move(cols)).first->second;
}

Result<std::unique_ptr<EqualityProbe>> DeleteLoader::MergeKeys(const std::vector<const DeleteFileEntry*>& files,
                                                              bool by_sequence) {
  std::vector<arrow::ArrayVector> parts(files[0]->file->equality_ids.size());
  std::vector<int64_t> sequences;
  for (const auto* d : files) {
    SKADE_ASSIGN_OR_RETURN(const auto* cols, LoadKeyColumns(*d->file));
    for (size_t c = 0; c < cols->size(); ++c) parts[c].push_back((*cols)[c]);
    if (by_sequence && !cols->empty())
      sequences.insert(sequences.end(), static_cast<size_t>((*cols)[0]->length()), d->data_sequence_number);
  }
  std::vector<std::shared_ptr<arrow::Array>> keys;
  for (auto& p : parts) {
    if (p.size() == 1) {
      keys.push_back(p[0]);
      continue;
    }
    SKADE_ARROW_ASSIGN(auto merged, arrow::Concatenate(p), "equality deletes");
    keys.push_back(std::move(merged));
  }
  auto probe = EqualityProbe::Make(std::move(keys), std::move(sequences));
  if (!probe) return std::unexpected(probe.error().WithContext(LocalPath(files[0]->file->file_path)));
  return std::move(*probe);
}

Result<const EqualityProbe*> DeleteLoader::ProbeFor(const std::vector<int>& field_ids,
                                                    std::vector<const DeleteFileEntry*> files) {
  std::sort(files.begin(), files.end(), [](const auto* a, const auto* b) { return a->file->file_path < b->file->file_path; });
  std::string key;
  for (int id : field_ids) key += std::to_string(id) + ",";
  for (const auto* d : files) key += "|" + d->file->file_path;
  auto it = probes_.find(key);
  if (it != probes_.end()) return it->second.get();
  SKADE_ASSIGN_OR_RETURN(auto probe, MergeKeys(files, false));
  return probes_.emplace(key, std::move(probe)).first->second.get();
}

namespace {

// Equality deletes share a key set when they delete by the same columns in the same
// scope: global (an unpartitioned delete file), or one partition of one spec.
std::string ScopeKey(const DataFile& f) {
  std::string key;
  for (int id : f.equality_ids) key += std::to_string(id) + ",";
  if (!f.partition.empty()) key += "|" + PartitionTupleKey(f.spec_id, f.partition);
  return key;
}

}  // namespace

void DeleteLoader::Expect(const std::vector<DeleteFileEntry>& deletes) {
  std::lock_guard lock(mu_);
  for (const auto& d : deletes) {
    if (d.file->content == FileContent::kPositionDeletes || group_of_.contains(d.file->file_path)) continue;
    ScopeGroup& g = groups_[ScopeKey(*d.file)];
    // A set already handed out stays as it is: loads naming a file it lacks merge their own.
    if (g.probe) continue;
    g.files.push_back(d);
    group_of_.emplace(d.file->file_path, &g);
  }
}

Result<const EqualityProbe*> DeleteLoader::GroupProbe(ScopeGroup& group) {
  if (!group.probe) {
    std::vector<const DeleteFileEntry*> files;
    for (const auto& d : group.files) files.push_back(&d);
    SKADE_ASSIGN_OR_RETURN(group.probe, MergeKeys(files, true));
  }
  return group.probe.get();
}

Result<DeletedRows> DeleteLoader::Load(const DataFile& data_file, int64_t data_sequence,
                                       const std::vector<DeleteFileEntry>& deletes) {
  const std::string& data_file_path = data_file.file_path;
  std::lock_guard lock(mu_);
  DeletedRows rows;
  for (const auto& d : deletes) {
    if (d.file->content == FileContent::kPositionDeletes) {
      if (d.file->referenced_data_file && !SamePath(*d.file->referenced_data_file, data_file_path)) continue;
      SKADE_ASSIGN_OR_RETURN(const PositionFile* pf, LoadPositions(*d.file, data_file.record_count));
      if (d.file->IsDeletionVector()) {  // its one data file, checked above
        rows.AddPositions(pf->by_path.begin()->second);
        continue;
      }
      auto it = pf->by_path.find(data_file_path);
      if (it == pf->by_path.end() && data_file_path.starts_with("file:"))
        it = pf->by_path.find(LocalPath(data_file_path));  // writers differ on the scheme
      if (it != pf->by_path.end()) rows.AddPositions(it->second);
    }
  }
  // The equality deletes over one list of columns: through their scopes' shared key
  // sets when they are each scope's files newer than the data file (less those whose
  // key ranges miss the file's: their keys cannot match its rows), else through one
  // key set merged for them.
  std::map<std::vector<int>, std::vector<const DeleteFileEntry*>> by_ids;
  for (const auto& d : deletes)
    if (d.file->content != FileContent::kPositionDeletes) by_ids[d.file->equality_ids].push_back(&d);
  for (auto& [ids, entries] : by_ids) {
    std::map<ScopeGroup*, std::unordered_set<std::string_view>> named;  // the files named, by group
    bool shared = true;
    for (const auto* d : entries) {
      auto it = group_of_.find(d->file->file_path);
      if (it == group_of_.end()) {
        shared = false;
        break;
      }
      named[it->second].insert(d->file->file_path);
    }
    for (const auto& [g, paths] : named)
      for (const auto& d : g->files) {
        bool is_named = paths.contains(d.file->file_path);
        if (d.data_sequence_number > data_sequence ? !is_named && KeysMayMeet(*d.file, data_file, *schema_) : is_named)
          shared = false;
      }
    if (!shared) {
      SKADE_ASSIGN_OR_RETURN(const EqualityProbe* probe, ProbeFor(ids, std::move(entries)));
      rows.AddEquality(ids, probe);
      continue;
    }
    for (const auto& [g, paths] : named) {
      SKADE_ASSIGN_OR_RETURN(const EqualityProbe* probe, GroupProbe(*g));
      rows.AddEquality(ids, probe, data_sequence);
    }
  }
  return rows;
}

}  // namespace skade
