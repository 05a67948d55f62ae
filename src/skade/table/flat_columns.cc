// Flat column chunks decoded page by page: see flat_columns_internal.h.
#include "skade/table/flat_columns_internal.h"

#include <arrow/api.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>
#include <parquet/column_page.h>
#include <parquet/column_reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#include <parquet/size_statistics.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <exception>
#include <limits>
#include <utility>

#include "skade/table/arrow_internal.h"

namespace skade {
namespace {

constexpr int64_t kMaxDecodedBytes = 1LL << 30;

template <typename T>
T LoadLE(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Eight W-bit values packed from the lowest bit up (a group of a bit-packed run). Each
// value is one 8-byte load, so up to 8 bytes past the last value's first byte are read.
template <int W>
void Unpack8(const uint8_t* in, uint32_t* out) {
  constexpr uint32_t kMask = W == 32 ? 0xFFFFFFFFu : (1u << W) - 1;
  for (int j = 0; j < 8; ++j) {
    uint64_t word;
    std::memcpy(&word, in + j * W / 8, 8);
    out[j] = static_cast<uint32_t>(word >> (j * W % 8)) & kMask;
  }
}

template <int... W>
constexpr std::array<void (*)(const uint8_t*, uint32_t*), sizeof...(W)> Unpackers(std::integer_sequence<int, W...>) {
  return {&Unpack8<W>...};
}
constexpr auto kUnpack8 = Unpackers(std::make_integer_sequence<int, 33>{});

// The runs of Parquet's RLE / bit-packed hybrid encoding (definition levels and
// dictionary indices), one at a time.
class HybridRuns {
 public:
  void Reset(const uint8_t* data, int64_t size, int bit_width) {
    p_ = data;
    end_ = data + size;
    width_ = bit_width;
    mask_ = bit_width == 32 ? 0xFFFFFFFFu : (1u << bit_width) - 1;
    left_ = 0;
  }

  // Up to n values into out; fewer only where the data ends.
  int64_t Get(uint32_t* out, int64_t n) {
    int64_t got = 0;
    while (got < n && Ready()) {
      const int64_t k = std::min(left_, n - got);
      uint32_t* o = out + got;
      if (rle_ || width_ == 0) {
        std::fill(o, o + k, rle_ ? value_ : 0);
      } else {
        // One at a time up to a group of 8, then whole groups while a group's last
        // 8-byte load stays within the run, then one at a time again.
        int64_t i = next_, j = 0;
        for (; j < k && (i & 7) != 0; ++j, ++i) o[j] = PackedAt(i);
        const auto unpack = kUnpack8[static_cast<size_t>(width_)];
        for (; k - j >= 8 && (i / 8 + 1) * width_ + 8 <= packed_bytes_; j += 8, i += 8)
          unpack(packed_ + i / 8 * width_, o + j);
        for (; j < k; ++j, ++i) o[j] = PackedAt(i);
      }
      Skip(k);
      got += k;
    }
    return got;
  }

  // n definition levels (bit width 1) as validity bits of `valid` from bit `pos`: the
  // number set, or -1 where the levels end first or hold a level above 1.
  int64_t GetValidity(uint8_t* valid, int64_t pos, int64_t n) {
    int64_t done = 0, ones = 0;
    while (done < n) {
      if (!Ready()) return -1;
      int64_t k = std::min(left_, n - done);
      if (rle_) {
        if (value_ > 1) return -1;
        arrow::bit_util::SetBitsTo(valid, pos + done, k, value_ == 1);
        ones += value_ == 1 ? k : 0;
      } else {
        arrow::internal::CopyBitmap(packed_, next_, k, valid, pos + done);
        ones += arrow::internal::CountSetBits(packed_, next_, k);
      }
      Skip(k);
      done += k;
    }
    return ones;
  }

 private:
  bool Ready() { return left_ > 0 || NextRun(); }

  void Skip(int64_t n) {
    left_ -= n;
    next_ += n;
  }

  // Value i of the current bit-packed run.
  uint32_t PackedAt(int64_t i) const {
    const int64_t bit = i * width_, byte = bit >> 3;
    uint64_t word = 0;
    if (byte + 8 <= packed_bytes_) {
      std::memcpy(&word, packed_ + byte, 8);
    } else {  // the run's last bytes
      std::memcpy(&word, packed_ + byte, static_cast<size_t>(packed_bytes_ - byte));
    }
    return static_cast<uint32_t>(word >> (bit & 7)) & mask_;
  }

  // Makes the next run current: false at the end of the data, or where it is cut short.
  bool NextRun() {
    while (p_ < end_) {
      uint64_t header = 0;
      for (int shift = 0;; shift += 7) {
        if (p_ >= end_ || shift > 56) return false;
        uint8_t b = *p_++;
        header |= static_cast<uint64_t>(b & 0x7F) << shift;
        if (!(b & 0x80)) break;
      }
      const int64_t avail = end_ - p_;
      if (header & 1) {  // bit-packed: groups of 8 values
        const uint64_t groups = header >> 1;
        // Cut to the bytes there are (a run cannot be longer than its page).
        const int64_t bytes = groups >= static_cast<uint64_t>(avail)
                                  ? (width_ == 0 ? 0 : avail)
                                  : std::min<int64_t>(static_cast<int64_t>(groups) * width_, avail);
        rle_ = false;
        packed_ = p_;
        packed_bytes_ = bytes;
        next_ = 0;
        left_ = width_ == 0 ? static_cast<int64_t>(std::min<uint64_t>(groups, 1ULL << 37) * 8) : bytes * 8 / width_;
        p_ += bytes;
      } else {  // one value repeated
        const int nbytes = (width_ + 7) / 8;
        if (avail < nbytes) return false;
        uint32_t v = 0;
        std::memcpy(&v, p_, static_cast<size_t>(nbytes));
        p_ += nbytes;
        rle_ = true;
        value_ = v & mask_;
        left_ = static_cast<int64_t>(std::min<uint64_t>(header >> 1, 1ULL << 40));
      }
      if (left_ > 0) return true;
    }
    return false;
  }

  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  int width_ = 0;
  uint32_t mask_ = 0;
  bool rle_ = false;
  int64_t left_ = 0;     // values left in the current run
  uint32_t value_ = 0;   // an RLE run's value
  const uint8_t* packed_ = nullptr;  // a bit-packed run's bytes
  int64_t packed_bytes_ = 0;
  int64_t next_ = 0;  // the next value's index in a bit-packed run
};

// Runs of a row selection (a byte per row, 0: not selected) may be long, or short (rows
// deleted here and there): their ends are sought eight bytes at a time, with memchr past
// the first few words. Each byte of NonZeroBytes(w) has its top bit set exactly when that
// byte of w is not 0 (its low seven bits + 0x7f carry into the top bit, or it was set).
constexpr uint64_t kLowBits = 0x7f7f7f7f7f7f7f7fULL, kTopBits = 0x8080808080808080ULL;
inline uint64_t NonZeroBytes(uint64_t w) { return (((w & kLowBits) + kLowBits) | w) & kTopBits; }

// The first byte of [p, end) that is 0, or `end`.
const uint8_t* FindZero(const uint8_t* p, const uint8_t* end) {
  for (const uint8_t* words_end = p + std::min<ptrdiff_t>(end - p, 32) / 8 * 8; p < words_end; p += 8)
    if (uint64_t zero = ~NonZeroBytes(LoadLE<uint64_t>(p)) & kTopBits) return p + std::countr_zero(zero) / 8;
  const void* z = p < end ? std::memchr(p, 0, static_cast<size_t>(end - p)) : nullptr;
  return z ? static_cast<const uint8_t*>(z) : end;
}

// The first byte of [p, end) that is not 0, or `end`.
const uint8_t* FindNonZero(const uint8_t* p, const uint8_t* end) {
  for (; end - p >= 8; p += 8)
    if (uint64_t set = NonZeroBytes(LoadLE<uint64_t>(p))) return p + std::countr_zero(set) / 8;
  while (p < end && *p == 0) ++p;
  return p;
}

// How many bytes of [p, end) are not 0.
int64_t CountNonZero(const uint8_t* p, const uint8_t* end) {
  int64_t n = 0;
  for (; end - p >= 8; p += 8)  // the top bits shifted to each byte's bottom, summed into the top byte
    n += static_cast<int64_t>(((NonZeroBytes(LoadLE<uint64_t>(p)) >> 7) * 0x0101010101010101ULL) >> 56);
  for (; p < end; ++p) n += *p != 0;
  return n;
}

bool SignedIntOrNone(const parquet::LogicalType& t, int max_width) {
  if (t.is_none()) return true;
  if (!t.is_int()) return false;
  const auto& i = static_cast<const parquet::IntLogicalType&>(t);
  return i.is_signed() && i.bit_width() <= max_width;
}

bool TypeMatches(const parquet::ColumnDescriptor& d, const arrow::DataType& type) {
  const parquet::LogicalType& lt = *d.logical_type();
  switch (d.physical_type()) {
    case parquet::Type::INT32:
      if (type.id() == arrow::Type::INT32) return SignedIntOrNone(lt, 32);
      return type.id() == arrow::Type::DATE32 && lt.is_date();
    case parquet::Type::INT64: {
      if (type.id() == arrow::Type::INT64) return SignedIntOrNone(lt, 64);
      auto unit_of = [](parquet::LogicalType::TimeUnit::unit u) {
        switch (u) {
          case parquet::LogicalType::TimeUnit::MILLIS: return arrow::TimeUnit::MILLI;
          case parquet::LogicalType::TimeUnit::MICROS: return arrow::TimeUnit::MICRO;
          default: return arrow::TimeUnit::NANO;
        }
      };
      if (type.id() == arrow::Type::TIMESTAMP && lt.is_timestamp())
        return unit_of(static_cast<const parquet::TimestampLogicalType&>(lt).time_unit()) ==
               static_cast<const arrow::TimestampType&>(type).unit();
      if (type.id() == arrow::Type::TIME64 && lt.is_time())
        return unit_of(static_cast<const parquet::TimeLogicalType&>(lt).time_unit()) ==
               static_cast<const arrow::Time64Type&>(type).unit();
      return false;
    }
    case parquet::Type::FLOAT: return type.id() == arrow::Type::FLOAT && lt.is_none();
    case parquet::Type::DOUBLE: return type.id() == arrow::Type::DOUBLE && lt.is_none();
    case parquet::Type::BYTE_ARRAY:
      if (type.id() == arrow::Type::STRING) return lt.is_string();
      return type.id() == arrow::Type::BINARY && (lt.is_none() || lt.is_string());
    default: return false;
  }
}

bool ValueEncoding(parquet::Encoding::type e) {
  return e == parquet::Encoding::PLAIN || e == parquet::Encoding::RLE_DICTIONARY ||
         e == parquet::Encoding::PLAIN_DICTIONARY;
}

// Whether the chunk's data pages are all PLAIN or dictionary encoded, by its page
// encoding statistics when the writer kept them, else by its list of encodings (which
// also names the level encodings).
bool EncodingsRead(const parquet::ColumnChunkMetaData& c) {
  const auto& stats = c.encoding_stats();
  if (!stats.empty())
    return std::all_of(stats.begin(), stats.end(), [](const parquet::PageEncodingStats& s) {
      return s.page_type == parquet::PageType::DICTIONARY_PAGE
                 ? s.encoding == parquet::Encoding::PLAIN || s.encoding == parquet::Encoding::PLAIN_DICTIONARY
                 : ValueEncoding(s.encoding);
    });
  const auto& encodings = c.encodings();
  return std::all_of(encodings.begin(), encodings.end(), [](parquet::Encoding::type e) {
    return ValueEncoding(e) || e == parquet::Encoding::RLE || e == parquet::Encoding::BIT_PACKED;
  });
}

// A bound on the chunk's decoded string bytes, or -1 when its metadata gives none (a
// dictionary-encoded chunk from a writer without size statistics).
int64_t StringBytesBound(const parquet::ColumnChunkMetaData& c) {
  if (c.num_values() == 0) return 0;  // writers leave out an empty chunk's size statistics
  if (auto size = c.size_statistics(); size && size->unencoded_byte_array_data_bytes.has_value())
    return *size->unencoded_byte_array_data_bytes;
  return c.has_dictionary_page() ? -1 : c.total_uncompressed_size();
}

}  // namespace

bool ReadsFlatColumn(const parquet::FileMetaData& metadata, int row_group, int leaf, const arrow::DataType& type) {
  const parquet::ColumnDescriptor* d = metadata.schema()->Column(leaf);
  if (d->max_repetition_level() != 0 || d->max_definition_level() > 1 || d->path()->ToDotVector().size() != 1)
    return false;
  if (!TypeMatches(*d, type)) return false;
  auto chunk = metadata.RowGroup(row_group)->ColumnChunk(leaf);
  if (!EncodingsRead(*chunk)) return false;
  if (d->physical_type() == parquet::Type::BYTE_ARRAY) {
    int64_t bound = StringBytesBound(*chunk);
    if (bound < 0 || bound > kMaxDecodedBytes) return false;
  }
  return true;
}

struct FlatColumnReader::State {
  std::unique_ptr<parquet::PageReader> pages;  // null: opening the chunk failed, for open_error
  std::string open_error;
  std::shared_ptr<arrow::DataType> type;
  arrow::MemoryPool* pool = nullptr;
  std::string where;  // "<where>: column <name>", for errors
  bool optional = false;
  bool strings = false;
  bool as_dictionary = false;  // strings as indices into dictionary_values (KeepDictionary)
  std::shared_ptr<arrow::Array> dictionary_values;
  int width = 0;  // bytes of a fixed-width value
  int64_t string_bytes_per_row = 0;  // the chunk's average, to size a batch's bytes at once

  // The chunk's dictionary, as read from its dictionary page.
  bool have_dictionary = false;
  int64_t dictionary_size = 0;
  std::vector<uint8_t> dictionary;        // values (fixed width), or string bytes plus kStringSlack
  std::vector<int32_t> dictionary_offsets;  // strings: dictionary_size + 1 offsets

  // The page being read.
  std::shared_ptr<parquet::Page> page;
  int64_t page_left = 0;  // its rows not yet read
  bool dictionary_encoded = false;
  HybridRuns levels, indices;
  const uint8_t* values = nullptr;  // PLAIN: the next value
  const uint8_t* values_end = nullptr;
  bool done = false;
  std::vector<uint32_t> index_scratch;

  // With `wanted` (one entry per row of the chunk): the next row Next has not given (or
  // passed over), the current page's next row, the rows up to the next data page
  // header (counted by the page filter) and the first row of the page it let through,
  // the pages it passed over; the current page's validity bits and its wanted rows.
  std::shared_ptr<const std::vector<uint8_t>> wanted;
  const std::atomic<int64_t>* decided = nullptr;  // set: wanted's final rows (see the header)
  int64_t row = 0, page_row = 0, filter_row = 0, next_page_row = 0, pages_skipped = 0;
  std::vector<uint8_t> page_valid;
  struct Run {
    int64_t row, len;  // rows [row, row + len) of the page
    int64_t value;     // the page's value (a valid row's) at or after `row`
    int64_t valid;     // valid rows in the run
  };
  std::vector<Run> runs;

  std::unexpected<Error> Corrupt(const std::string& what) const { return skade::Corrupt(where + ": " + what); }

  Status ReadDictionary(const parquet::DictionaryPage& d) {
    if (have_dictionary) return Corrupt("a second dictionary page");
    if (d.encoding() != parquet::Encoding::PLAIN && d.encoding() != parquet::Encoding::PLAIN_DICTIONARY)
      return Corrupt("dictionary page encoded as " + parquet::EncodingToString(d.encoding()));
    if (d.num_values() < 0) return Corrupt("dictionary page of " + std::to_string(d.num_values()) + " values");
    const uint8_t* p = d.data();
    const int64_t size = d.size();
    dictionary_size = d.num_values();
    if (!strings) {
      if (dictionary_size * width > size) return Corrupt("dictionary page shorter than its values");
      dictionary.assign(p, p + dictionary_size * width);
    } else {
      if (dictionary_size > size / 4) return Corrupt("dictionary page shorter than its values");
      dictionary_offsets.assign(static_cast<size_t>(dictionary_size) + 1, 0);
      dictionary.clear();
      dictionary.reserve(static_cast<size_t>(size + kStringSlack));
      int64_t at = 0;
      for (int64_t i = 0; i < dictionary_size; ++i) {
        if (size - at < 4) return Corrupt("dictionary page shorter than its values");
        const uint32_t len = LoadLE<uint32_t>(p + at);
        at += 4;
        if (len > static_cast<uint64_t>(size - at)) return Corrupt("dictionary page shorter than its values");
        dictionary.insert(dictionary.end(), p + at, p + at + len);
        at += len;
        dictionary_offsets[static_cast<size_t>(i) + 1] = static_cast<int32_t>(dictionary.size());
      }
      dictionary.resize(dictionary.size() + kStringSlack);
    }
    have_dictionary = true;
    return {};
  }

  // Makes the chunk's next data page current (done at the chunk's end).
  Status NextPage() {
    for (;;) {
      std::shared_ptr<parquet::Page> p;
      try {
        p = pages->NextPage();
      } catch (const std::exception& e) {
        return Corrupt(e.what());
      }
      if (!p) {
        done = true;
        return {};
      }
      const uint8_t* data = p->data();
      int64_t size = p->size();
      switch (p->type()) {
        case parquet::PageType::DICTIONARY_PAGE:
          SKADE_RETURN_IF_ERROR(ReadDictionary(static_cast<const parquet::DictionaryPage&>(*p)));
          continue;
        case parquet::PageType::DATA_PAGE:
          if (optional) {
            const auto& v1 = static_cast<const parquet::DataPageV1&>(*p);
            if (v1.definition_level_encoding() != parquet::Encoding::RLE)
              return Corrupt("definition levels encoded as " +
                             parquet::EncodingToString(v1.definition_level_encoding()));
            if (size < 4) return Corrupt("data page too short for its definition levels");
            const uint32_t len = LoadLE<uint32_t>(data);
            if (len > static_cast<uint64_t>(size - 4)) return Corrupt("definition levels longer than their page");
            levels.Reset(data + 4, len, 1);
            data += 4 + len;
            size -= 4 + static_cast<int64_t>(len);
          }
          break;
        case parquet::PageType::DATA_PAGE_V2: {
          const auto& v2 = static_cast<const parquet::DataPageV2&>(*p);
          const int64_t rep = v2.repetition_levels_byte_length(), def = v2.definition_levels_byte_length();
          if (rep < 0 || def < 0 || rep + def > size) return Corrupt("levels longer than their page");
          if (optional) levels.Reset(data + rep, def, 1);
          data += rep + def;
          size -= rep + def;
          break;
        }
        default: continue;  // index pages
      }
      const auto& dp = static_cast<const parquet::DataPage&>(*p);
      if (dp.num_values() < 0) return Corrupt("data page of " + std::to_string(dp.num_values()) + " values");
      if (dp.encoding() == parquet::Encoding::PLAIN) {
        dictionary_encoded = false;
        values = data;
        values_end = data + size;
      } else if (dp.encoding() == parquet::Encoding::RLE_DICTIONARY ||
                 dp.encoding() == parquet::Encoding::PLAIN_DICTIONARY) {
        if (!have_dictionary) return Corrupt("dictionary-encoded data page without a dictionary page");
        if (size < 1 || data[0] > 32) return Corrupt("dictionary indices without a valid bit width");
        indices.Reset(data + 1, size - 1, data[0]);
        dictionary_encoded = true;
      } else {
        return Corrupt("data page encoded as " + parquet::EncodingToString(dp.encoding()));
      }
      page = std::move(p);
      page_left = dp.num_values();
      if (page_left > 0) return {};
    }
  }

  // m dictionary indices of the current page into `out`, each checked.
  Status IndicesInto(uint32_t* out, int64_t m) {
    if (indices.Get(out, m) != m) return Corrupt("dictionary indices end before the page's values");
    uint32_t top = 0;
    for (int64_t i = 0; i < m; ++i) top = std::max(top, out[i]);
    if (m > 0 && top >= dictionary_size)
      return Corrupt("dictionary index " + std::to_string(top) + " past the dictionary's " +
                     std::to_string(dictionary_size) + " values");
    return {};
  }
  Status Indices(int64_t m) {
    index_scratch.resize(static_cast<size_t>(m));
    return IndicesInto(index_scratch.data(), m);
  }

  // k rows' dictionary indices from output row `at` (as_dictionary), m of them valid (per
  // `valid`, or all); a null row's index is 0.
  Status DictionaryIndices(uint32_t* out, const uint8_t* valid, int64_t at, int64_t k, int64_t m) {
    if (!dictionary_encoded && m > 0)
      return Corrupt("a PLAIN data page where the chunk's encoding statistics say dictionary");
    if (m == 0) {
      std::memset(out + at, 0, static_cast<size_t>(k) * 4);
      return {};
    }
    if (m == k) return IndicesInto(out + at, m);
    SKADE_RETURN_IF_ERROR(Indices(m));
    for (int64_t r = 0, v = 0; r < k; ++r)
      out[at + r] = arrow::bit_util::GetBit(valid, at + r) ? index_scratch[static_cast<size_t>(v++)] : 0;
    return {};
  }

  // k rows from `at` of fixed-width values `out`, m of them valid (per `valid`, or all).
  template <typename T>
  Status FixedValues(T* out, const uint8_t* valid, int64_t at, int64_t k, int64_t m) {
    if (!dictionary_encoded) {
      const int64_t bytes = m * static_cast<int64_t>(sizeof(T));
      if (values_end - values < bytes) return Corrupt("data page shorter than its values");
      if (m == k) {
        std::memcpy(out + at, values, static_cast<size_t>(bytes));
      } else {
        const uint8_t* v = values;
        for (int64_t r = 0; r < k; ++r) {
          if (arrow::bit_util::GetBit(valid, at + r)) {
            std::memcpy(out + at + r, v, sizeof(T));
            v += sizeof(T);
          } else {
            out[at + r] = T{};
          }
        }
      }
      values += bytes;
      return {};
    }
    SKADE_RETURN_IF_ERROR(Indices(m));
    const T* dict = reinterpret_cast<const T*>(dictionary.data());
    const uint32_t* idx = index_scratch.data();
    if (m == k) {
      for (int64_t r = 0; r < k; ++r) out[at + r] = dict[idx[r]];
    } else {
      for (int64_t r = 0; r < k; ++r) out[at + r] = arrow::bit_util::GetBit(valid, at + r) ? dict[*idx++] : T{};
    }
    return {};
  }

  // The current PLAIN page's next string: false where the page ends first.
  bool PlainString(const uint8_t** str, uint32_t* len) {
    if (values_end - values < 4) return false;
    *len = LoadLE<uint32_t>(values);
    values += 4;
    if (*len > static_cast<uint64_t>(values_end - values)) return false;
    *str = values;
    values += *len;
    return true;
  }

  // Room for `bytes` more string bytes (plus the slack) in `data` after `used`.
  Status Reserve(arrow::ResizableBuffer& data, int64_t used, int64_t bytes) {
    const int64_t need = used + bytes + kStringSlack;
    if (used + bytes > std::numeric_limits<int32_t>::max()) return Corrupt("more than 2 GiB of strings in a batch");
    if (need <= data.capacity()) return {};
    SKADE_ARROW_RETURN(data.Reserve(std::max(need, 2 * data.capacity())), where);
    return {};
  }

  // k rows from `at` of strings: offsets[at + 1 ..] and their bytes appended to `data`.
  Status StringValues(int32_t* offsets, arrow::ResizableBuffer& data, const uint8_t* valid, int64_t at, int64_t k,
                      int64_t m) {
    int64_t cur = offsets[at];
    if (!dictionary_encoded) {
      SKADE_RETURN_IF_ERROR(Reserve(data, cur, values_end - values));  // a page's strings fit in its bytes
      uint8_t* out = data.mutable_data();
      for (int64_t r = 0; r < k; ++r) {
        if (m == k || arrow::bit_util::GetBit(valid, at + r)) {
          const uint8_t* str;
          uint32_t len;
          if (!PlainString(&str, &len)) return Corrupt("data page shorter than its values");
          std::memcpy(out + cur, str, len);
          cur += len;
        }
        offsets[at + r + 1] = static_cast<int32_t>(cur);
      }
      return {};
    }
    SKADE_RETURN_IF_ERROR(Indices(m));
    const int32_t* dict_offsets = dictionary_offsets.data();
    int64_t bytes = 0;
    for (uint32_t i : index_scratch) bytes += dict_offsets[i + 1] - dict_offsets[i];
    SKADE_RETURN_IF_ERROR(Reserve(data, cur, bytes));
    uint8_t* out = data.mutable_data();
    const uint8_t* dict = dictionary.data();
    const uint32_t* idx = index_scratch.data();
    for (int64_t r = 0; r < k; ++r) {
      if (m == k || arrow::bit_util::GetBit(valid, at + r)) {
        const int32_t begin = dict_offsets[*idx], len = dict_offsets[*idx + 1] - begin;
        ++idx;
        CopyString(out + cur, dict + begin, len, /*overreadable=*/true);  // the dictionary has the slack
        cur += len;
      }
      offsets[at + r + 1] = static_cast<int32_t>(cur);
    }
    return {};
  }

  // An array's buffers as they are filled: validity (optional columns), fixed-width
  // values or string offsets, string bytes.
  struct Output {
    std::shared_ptr<arrow::Buffer> validity, values;
    std::shared_ptr<arrow::ResizableBuffer> data;
    uint8_t* valid = nullptr;
  };

  Result<Output> Allocate(int64_t rows) {
    Output out;
    if (optional) {
      SKADE_ARROW_ASSIGN(out.validity, arrow::AllocateBitmap(rows, pool), where);
      out.valid = out.validity->mutable_data();
    }
    if (as_dictionary) {
      SKADE_ARROW_ASSIGN(out.values, arrow::AllocateBuffer(rows * 4, pool), where);
    } else if (strings) {
      SKADE_ARROW_ASSIGN(out.values, arrow::AllocateBuffer((rows + 1) * 4, pool), where);
      reinterpret_cast<int32_t*>(out.values->mutable_data())[0] = 0;
      SKADE_ARROW_ASSIGN(out.data, arrow::AllocateResizableBuffer(0, pool), where);
      SKADE_RETURN_IF_ERROR(Reserve(*out.data, 0, std::min(rows * string_bytes_per_row, kMaxDecodedBytes)));
    } else {
      SKADE_ARROW_ASSIGN(out.values, arrow::AllocateBuffer(rows * width, pool), where);
    }
    return out;
  }

  Result<std::shared_ptr<arrow::Array>> Finish(Output out, int64_t rows, int64_t nulls) {
    if (nulls == 0) out.validity = nullptr;
    if (as_dictionary) {
      // The chunk's dictionary page as one array, shared by every batch of the chunk.
      if (!dictionary_values) {
        const int64_t n = have_dictionary ? dictionary_size : 0;
        const int64_t bytes = n > 0 ? dictionary_offsets[static_cast<size_t>(n)] : 0;
        SKADE_ARROW_ASSIGN(auto offsets, arrow::AllocateBuffer((n + 1) * 4, pool), where);
        if (n > 0) std::memcpy(offsets->mutable_data(), dictionary_offsets.data(), static_cast<size_t>(n + 1) * 4);
        else reinterpret_cast<int32_t*>(offsets->mutable_data())[0] = 0;
        SKADE_ARROW_ASSIGN(auto data, arrow::AllocateBuffer(bytes, pool), where);
        if (bytes > 0) std::memcpy(data->mutable_data(), dictionary.data(), static_cast<size_t>(bytes));
        dictionary_values = arrow::MakeArray(
            arrow::ArrayData::Make(type, n, {nullptr, std::move(offsets), std::move(data)}, 0));
      }
      auto indices = arrow::MakeArray(
          arrow::ArrayData::Make(arrow::int32(), rows, {std::move(out.validity), std::move(out.values)}, nulls));
      return std::make_shared<arrow::DictionaryArray>(arrow::dictionary(arrow::int32(), type), indices,
                                                      dictionary_values);
    }
    if (!strings)
      return arrow::MakeArray(
          arrow::ArrayData::Make(type, rows, {std::move(out.validity), std::move(out.values)}, nulls));
    const int32_t used = reinterpret_cast<const int32_t*>(out.values->data())[rows];
    SKADE_ARROW_RETURN(out.data->Resize(used, /*shrink_to_fit=*/false), where);
    return arrow::MakeArray(arrow::ArrayData::Make(
        type, rows, {std::move(out.validity), std::move(out.values), std::move(out.data)}, nulls));
  }

  Result<std::shared_ptr<arrow::Array>> Next(int64_t rows) {
    if (wanted) return NextWanted(rows);
    rows = std::max<int64_t>(rows, 0);
    SKADE_ASSIGN_OR_RETURN(Output o, Allocate(rows));
    int64_t got = 0, nulls = 0;
    while (got < rows) {
      if (page_left == 0) {
        if (done) break;
        SKADE_RETURN_IF_ERROR(NextPage());
        continue;
      }
      const int64_t k = std::min(rows - got, page_left);
      int64_t m = k;
      if (optional) {
        m = levels.GetValidity(o.valid, got, k);
        if (m < 0) return Corrupt("definition levels end before the page's values");
      }
      uint8_t* out = o.values->mutable_data();
      if (as_dictionary) {
        SKADE_RETURN_IF_ERROR(DictionaryIndices(reinterpret_cast<uint32_t*>(out), o.valid, got, k, m));
      } else if (strings) {
        SKADE_RETURN_IF_ERROR(StringValues(reinterpret_cast<int32_t*>(out), *o.data, o.valid, got, k, m));
      } else if (width == 4) {
        SKADE_RETURN_IF_ERROR(FixedValues(reinterpret_cast<uint32_t*>(out), o.valid, got, k, m));
      } else {
        SKADE_RETURN_IF_ERROR(FixedValues(reinterpret_cast<uint64_t*>(out), o.valid, got, k, m));
      }
      nulls += k - m;
      page_left -= k;
      got += k;
    }
    return Finish(std::move(o), got, nulls);
  }

  // A data page none of whose rows is wanted is passed over before it is decompressed
  // (a flat column's page holds a row per value); an accepted page's first row is noted.
  bool SkipPage(const parquet::DataPageStats& page) {
    if (page.num_values < 0) return false;  // NextPage names the damage
    const int64_t n = static_cast<int64_t>(wanted->size());
    const int64_t begin = std::min(filter_row, n), end = std::min(filter_row + page.num_values, n);
    filter_row += page.num_values;
    const uint8_t* w = wanted->data();
    const bool final = !decided || end <= decided->load(std::memory_order_acquire);
    if (final && filter_row <= n && FindNonZero(w + begin, w + end) == w + end) {
      ++pages_skipped;
      return true;
    }
    next_page_row = begin;
    return false;
  }

  // The runs of wanted rows among the current page's k rows (`wanted` at its first row),
  // each with the index of its first value; page_valid holds the page's validity unless
  // `all_valid`.
  void WantedRuns(const uint8_t* wanted, int64_t k, bool all_valid) {
    runs.clear();
    int64_t value = 0, last = 0;
    auto valid_in = [&](int64_t from, int64_t n) {
      return all_valid ? n : arrow::internal::CountSetBits(page_valid.data(), from, n);
    };
    for (int64_t r = 0; r < k;) {
      r = FindNonZero(wanted + r, wanted + k) - wanted;
      if (r == k) break;
      const int64_t end = FindZero(wanted + r, wanted + k) - wanted;
      value += valid_in(last, r - last);
      const int64_t valid = valid_in(r, end - r);
      runs.push_back({r, end - r, value, valid});
      value += valid;
      last = r = end;
    }
  }

  // The current page's wanted rows (`runs`, m of its rows valid) of fixed-width values
  // into `out`, from output row `at`.
  template <typename T>
  Status WantedFixed(T* out, int64_t at, int64_t m) {
    if (dictionary_encoded) {
      SKADE_RETURN_IF_ERROR(Indices(m));
    } else if (values_end - values < m * static_cast<int64_t>(sizeof(T))) {
      return Corrupt("data page shorter than its values");
    }
    const T* dict = reinterpret_cast<const T*>(dictionary.data());
    auto value = [&](int64_t v, T* to) {
      if (dictionary_encoded) {
        *to = dict[index_scratch[static_cast<size_t>(v)]];
      } else {
        std::memcpy(to, values + v * static_cast<int64_t>(sizeof(T)), sizeof(T));
      }
    };
    for (const Run& run : runs) {
      T* to = out + at;
      if (run.valid == run.len && !dictionary_encoded) {
        std::memcpy(to, values + run.value * static_cast<int64_t>(sizeof(T)), static_cast<size_t>(run.len) * sizeof(T));
      } else if (run.valid == run.len) {
        const uint32_t* idx = index_scratch.data() + run.value;
        for (int64_t j = 0; j < run.len; ++j) to[j] = dict[idx[j]];
      } else {
        for (int64_t j = 0, v = run.value; j < run.len; ++j) {
          if (arrow::bit_util::GetBit(page_valid.data(), run.row + j)) {
            value(v++, to + j);
          } else {
            to[j] = T{};
          }
        }
      }
      at += run.len;
    }
    if (!dictionary_encoded) values += m * static_cast<int64_t>(sizeof(T));
    return {};
  }

  // The same for strings: offsets[at + 1 ..] and their bytes appended to `data`.
  Status WantedStrings(int32_t* offsets, arrow::ResizableBuffer& data, int64_t at, int64_t m) {
    int64_t cur = offsets[at];
    const uint8_t* dict = dictionary.data();
    const int32_t* dict_offsets = dictionary_offsets.data();
    const uint8_t* str;
    uint32_t len;
    int64_t passed = 0;  // PLAIN: the page's values read so far
    auto pass_to = [&](int64_t v) {  // PLAIN: reads past the values before value v
      for (; passed < v; ++passed)
        if (!PlainString(&str, &len)) return false;
      return true;
    };
    if (dictionary_encoded) {
      SKADE_RETURN_IF_ERROR(Indices(m));
    } else {
      SKADE_RETURN_IF_ERROR(Reserve(data, cur, values_end - values));  // a page's strings fit in its bytes
    }
    for (const Run& run : runs) {
      if (dictionary_encoded) {
        int64_t bytes = 0;
        for (int64_t v = run.value; v < run.value + run.valid; ++v) {
          const uint32_t i = index_scratch[static_cast<size_t>(v)];
          bytes += dict_offsets[i + 1] - dict_offsets[i];
        }
        SKADE_RETURN_IF_ERROR(Reserve(data, cur, bytes));
      }
      if (!dictionary_encoded && !pass_to(run.value)) return Corrupt("data page shorter than its values");
      uint8_t* out = data.mutable_data();
      for (int64_t j = 0, v = run.value; j < run.len; ++j) {
        if (run.valid == run.len || arrow::bit_util::GetBit(page_valid.data(), run.row + j)) {
          if (dictionary_encoded) {
            const uint32_t i = index_scratch[static_cast<size_t>(v++)];
            const int32_t begin = dict_offsets[i];
            len = static_cast<uint32_t>(dict_offsets[i + 1] - begin);
            CopyString(out + cur, dict + begin, len, /*overreadable=*/true);  // the dictionary has the slack
          } else {
            if (!PlainString(&str, &len)) return Corrupt("data page shorter than its values");
            ++passed;
            std::memcpy(out + cur, str, len);
          }
          cur += len;
        }
        offsets[at + j + 1] = static_cast<int32_t>(cur);
      }
      at += run.len;
    }
    if (!dictionary_encoded && !pass_to(m)) return Corrupt("data page shorter than its values");  // after the last run
    return {};
  }

  // Next with `wanted`: of the chunk's next `rows` rows, the wanted ones.
  Result<std::shared_ptr<arrow::Array>> NextWanted(int64_t rows) {
    const int64_t n = static_cast<int64_t>(wanted->size());
    const int64_t end = std::min(n, row + std::max<int64_t>(rows, 0));
    const int64_t want = CountNonZero(wanted->data() + row, wanted->data() + end);
    SKADE_ASSIGN_OR_RETURN(Output o, Allocate(want));
    int64_t got = 0, nulls = 0;
    while (row < end) {
      if (page_left == 0) {
        if (done) break;
        SKADE_RETURN_IF_ERROR(NextPage());
        if (done) break;
        if (next_page_row < row || next_page_row + page_left > n)
          return Corrupt("more rows in its pages than the row group's " + std::to_string(n));
        page_row = next_page_row;
      }
      row = std::min(page_row, end);  // the rows of pages passed over are not wanted
      if (row == end) break;
      const int64_t k = std::min(end - row, page_left);
      int64_t m = k;
      if (optional) {
        page_valid.assign(static_cast<size_t>(arrow::bit_util::BytesForBits(k)), 0);
        m = levels.GetValidity(page_valid.data(), 0, k);
        if (m < 0) return Corrupt("definition levels end before the page's values");
      }
      WantedRuns(wanted->data() + row, k, m == k);
      int64_t selected = 0;
      for (const Run& run : runs) selected += run.len;
      if (got + selected > want) return Corrupt("more rows in its pages than the row group's " + std::to_string(n));
      if (optional && m == k) {
        arrow::bit_util::SetBitsTo(o.valid, got, selected, true);
      } else if (optional) {
        int64_t at = got;
        for (const Run& run : runs) {
          if (run.valid == run.len || run.valid == 0) {  // short runs: a bit copy costs more
            arrow::bit_util::SetBitsTo(o.valid, at, run.len, run.valid > 0);
          } else {
            arrow::internal::CopyBitmap(page_valid.data(), run.row, run.len, o.valid, at);
          }
          nulls += run.len - run.valid;
          at += run.len;
        }
      }
      uint8_t* out = o.values->mutable_data();
      if (strings) {
        SKADE_RETURN_IF_ERROR(WantedStrings(reinterpret_cast<int32_t*>(out), *o.data, got, m));
      } else if (width == 4) {
        SKADE_RETURN_IF_ERROR(WantedFixed(reinterpret_cast<uint32_t*>(out), got, m));
      } else {
        SKADE_RETURN_IF_ERROR(WantedFixed(reinterpret_cast<uint64_t*>(out), got, m));
      }
      got += selected;
      page_left -= k;
      page_row += k;
      row += k;
    }
    row = std::max(row, end);
    if (got != want) return Corrupt("fewer rows in its pages than the row group's " + std::to_string(n));
    return Finish(std::move(o), got, nulls);
  }
};

FlatColumnReader::FlatColumnReader(parquet::ParquetFileReader& file, int row_group, int leaf,
                                   std::shared_ptr<arrow::DataType> type, arrow::MemoryPool* pool, std::string where,
                                   std::shared_ptr<const std::vector<uint8_t>> wanted,
                                   const std::atomic<int64_t>* decided)
    : s_(std::make_unique<State>()) {
  const parquet::ColumnDescriptor* d = file.metadata()->schema()->Column(leaf);
  s_->type = std::move(type);
  s_->pool = pool;
  s_->where = std::move(where) + ": column " + d->path()->ToDotString();
  s_->optional = d->max_definition_level() > 0;
  s_->strings = d->physical_type() == parquet::Type::BYTE_ARRAY;
  s_->width = d->physical_type() == parquet::Type::INT32 || d->physical_type() == parquet::Type::FLOAT ? 4 : 8;
  try {
    auto rg = file.RowGroup(row_group);
    if (s_->strings) {
      auto chunk = rg->metadata()->ColumnChunk(leaf);
      s_->string_bytes_per_row = chunk->num_values() > 0 ? StringBytesBound(*chunk) / chunk->num_values() + 1 : 0;
    }
    s_->pages = rg->GetColumnPageReader(leaf);
    if (wanted) {
      s_->wanted = std::move(wanted);
      s_->decided = decided;
      s_->pages->set_data_page_filter([s = s_.get()](const parquet::DataPageStats& page) { return s->SkipPage(page); });
    }
  } catch (const std::exception& e) {
    s_->open_error = e.what();  // Next reports it
  }
}

FlatColumnReader::~FlatColumnReader() = default;

Result<std::shared_ptr<arrow::Array>> FlatColumnReader::Next(int64_t rows) {
  if (!s_->pages) return s_->Corrupt(s_->open_error);
  return s_->Next(rows);
}

int64_t FlatColumnReader::pages_skipped() const { return s_->pages_skipped; }

void FlatColumnReader::KeepDictionary() { s_->as_dictionary = s_->strings && !s_->wanted; }

namespace {

class FlatBatchReader final : public arrow::RecordBatchReader {
 public:
  FlatBatchReader(std::shared_ptr<parquet::ParquetFileReader> file, int row_group, const std::vector<int>& leaves,
                  arrow::FieldVector fields, int64_t batch_rows, arrow::MemoryPool* pool, const std::string& where,
                  std::shared_ptr<const std::vector<uint8_t>> wanted, const std::atomic<int64_t>* decided,
                  int64_t* pages_skipped)
      : file_(std::move(file)),
        schema_(arrow::schema(std::move(fields))),
        batch_rows_(batch_rows),
        left_(file_->metadata()->RowGroup(row_group)->num_rows()),
        pages_skipped_(pages_skipped) {
    for (size_t k = 0; k < leaves.size(); ++k)
      columns_.push_back(std::make_unique<FlatColumnReader>(
          *file_, row_group, leaves[k], schema_->field(static_cast<int>(k))->type(), pool, where, wanted, decided));
  }

  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    if (left_ == 0) return arrow::Status::OK();
    arrow::ArrayVector arrays;
    for (auto& c : columns_) {
      auto next = c->Next(batch_rows_);
      if (!next) return arrow::Status::IOError(next.error().message);
      if (!arrays.empty() && (*next)->length() != arrays[0]->length())
        return arrow::Status::IOError("columns decoded unevenly");
      arrays.push_back(*std::move(next));
    }
    if (arrays.empty()) return arrow::Status::OK();
    int64_t rows = arrays[0]->length();
    left_ -= std::min(left_, batch_rows_);  // the rows passed, wanted or not
    if (pages_skipped_) {
      *pages_skipped_ = 0;
      for (const auto& c : columns_) *pages_skipped_ += c->pages_skipped();
    }
    *out = arrow::RecordBatch::Make(schema_, rows, std::move(arrays));
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<parquet::ParquetFileReader> file_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t batch_rows_;
  int64_t left_;  // the row group's rows not yet passed
  int64_t* pages_skipped_;
  std::vector<std::unique_ptr<FlatColumnReader>> columns_;
};

}  // namespace

std::unique_ptr<arrow::RecordBatchReader> MakeFlatBatchReader(std::shared_ptr<parquet::ParquetFileReader> file,
                                                              int row_group, const std::vector<int>& leaves,
                                                              arrow::FieldVector fields, int64_t batch_rows,
                                                              arrow::MemoryPool* pool, const std::string& where,
                                                              std::shared_ptr<const std::vector<uint8_t>> wanted,
                                                              const std::atomic<int64_t>* decided,
                                                              int64_t* pages_skipped) {
  return std::make_unique<FlatBatchReader>(std::move(file), row_group, leaves, std::move(fields), batch_rows, pool,
                                           where, std::move(wanted), decided, pages_skipped);
}

}  // namespace skade
