// Private to the Avro codec: binary primitives, decode limits and helpers shared by
// the datum and container code. Not part of the public API.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "skade/avro/avro.h"
#include "skade/common/result.h"

namespace skade::avro::internal {

/// Deepest schema nesting ParseSchema accepts (also the Decode recursion limit).
inline constexpr int kMaxDepth = 128;
/// Values a decode may create for free, on top of kValuesPerByte per byte decoded.
/// Bounds memory for schemas whose items take no bytes (null, empty records).
inline constexpr uint64_t kBaseValueBudget = uint64_t{1} << 20;
inline constexpr uint64_t kValuesPerByte = 4;

/// Shared state of one decode (one datum, or one whole container file).
struct DecodeContext {
  uint64_t values = 0;      // Values created so far
  uint64_t bytes_seen = 0;  // bytes handed to the decoder so far

  /// Counts one created Value; fails once the budget for the bytes seen is spent.
  Status Charge(uint64_t n = 1) {
    values += n;
    if (values > kBaseValueBudget + kValuesPerByte * bytes_seen) {
      return Corrupt("too many values for the input size (hostile item counts?)");
    }
    return {};
  }
};

/// Cursor over Avro binary data. Every read checks the remaining length first.
class Reader {
 public:
  explicit Reader(std::string_view data, size_t pos = 0) : data_(data), pos_(pos) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ >= data_.size(); }

  Result<int64_t> ReadLong() {
    uint64_t z = 0;
    int shift = 0;
    while (true) {
      if (pos_ >= data_.size()) return Corrupt(At("truncated varint"));
      const auto b = static_cast<uint8_t>(data_[pos_++]);
      // The 10th byte may only carry the top bit of a 64-bit value.
      if (shift == 63 && (b & 0xfe) != 0) return Corrupt(At("varint overflows 64 bits"));
      z |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) break;
      shift += 7;
    }
    return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }

  Result<int32_t> ReadInt() {
    SKADE_ASSIGN_OR_RETURN(int64_t v, ReadLong());
    if (v < INT32_MIN || v > INT32_MAX) return Corrupt(At("int out of range"));
    return static_cast<int32_t>(v);
  }

  /// A non-negative length that fits in the remaining bytes.
  Result<size_t> ReadLength(std::string_view what) {
    SKADE_ASSIGN_OR_RETURN(int64_t n, ReadLong());
    if (n < 0) return Corrupt(At("negative " + std::string(what) + " length"));
    if (static_cast<uint64_t>(n) > remaining()) {
      return Corrupt(At(std::string(what) + " length " + std::to_string(n) + " exceeds remaining " +
                        std::to_string(remaining()) + " bytes"));
    }
    return static_cast<size_t>(n);
  }

  Result<std::string_view> ReadRaw(size_t n) {
    if (n > remaining()) return Corrupt(At("truncated: need " + std::to_string(n) + " bytes"));
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }

  Result<std::string_view> ReadBytes() {
    SKADE_ASSIGN_OR_RETURN(size_t n, ReadLength("bytes"));
    return ReadRaw(n);
  }

  template <typename T>
  Result<T> ReadLittleEndian() {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8);
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    if (remaining() < sizeof(T)) return Corrupt(At("truncated floating-point value"));
    U u;
    std::memcpy(&u, data_.data() + pos_, sizeof(U));
    if constexpr (std::endian::native == std::endian::big) u = std::byteswap(u);
    pos_ += sizeof(T);
    return std::bit_cast<T>(u);
  }

  std::string At(std::string_view what) const {
    return std::string(what) + " at offset " + std::to_string(pos_);
  }

 private:
  std::string_view data_;
  size_t pos_;
};

inline void WriteLong(int64_t v, std::string* out) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  char buf[10];
  int n = 0;
  while (z >= 0x80) {
    buf[n++] = static_cast<char>((z & 0x7f) | 0x80);
    z >>= 7;
  }
  buf[n++] = static_cast<char>(z);
  out->append(buf, n);
}

inline void WriteBytes(std::string_view bytes, std::string* out) {
  WriteLong(static_cast<int64_t>(bytes.size()), out);
  out->append(bytes);
}

template <typename T>
void WriteLittleEndian(T v, std::string* out) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  U u = std::bit_cast<U>(v);
  if constexpr (std::endian::native == std::endian::big) u = std::byteswap(u);
  char buf[sizeof(U)];
  std::memcpy(buf, &u, sizeof(U));
  out->append(buf, sizeof(U));
}

/// Decodes one datum with a shared budget (the container shares one per file).
Result<Value> DecodeValue(const Node& schema, Reader& reader, DecodeContext& ctx, int depth = 0);

/// True when values of this schema take zero bytes (null, empty records, fixed(0)).
bool IsZeroWidth(const Node& schema);

/// Structural equality; floating-point values compare by bit pattern (NaN == NaN).
bool SameValue(const Value& a, const Value& b);

}  // namespace skade::avro::internal
