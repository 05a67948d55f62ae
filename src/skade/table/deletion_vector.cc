#include "skade/table/deletion_vector.h"

#include <zlib.h>

#include <nlohmann/json.hpp>

#include <string>

namespace skade {
namespace {

constexpr unsigned char kMagic[4] = {0xD1, 0xD3, 0x39, 0x64};
// Roaring's portable format: the cookie of a bitmap that may hold run containers (its
// high half counts containers) and of one that cannot (a count follows).
constexpr uint32_t kCookieWithRuns = 12347;
constexpr uint32_t kCookieNoRuns = 12346;
// With runs, the offset header is present only from this many containers on.
constexpr uint32_t kOffsetsFrom = 4;
constexpr uint32_t kArrayMax = 4096;  // more values than this make a bitmap container

// Reads little-endian integers off the front of the vector, failing past its end.
class Cursor {
 public:
  Cursor(std::string_view bytes, std::string where) : bytes_(bytes), where_(std::move(where)) {}
  Result<uint64_t> Le(size_t width, const char* what) {
    if (bytes_.size() < width) return Fail(std::string("truncated at ") + what);
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v |= uint64_t{static_cast<unsigned char>(bytes_[i])} << (8 * i);
    bytes_.remove_prefix(width);
    return v;
  }
  Result<std::string_view> Take(size_t n, const char* what) {
    if (bytes_.size() < n) return Fail(std::string("truncated at ") + what);
    std::string_view out = bytes_.substr(0, n);
    bytes_.remove_prefix(n);
    return out;
  }
  bool done() const { return bytes_.empty(); }
  std::unexpected<Error> Fail(const std::string& what) const { return Corrupt(where_ + ": deletion vector: " + what); }

 private:
  std::string_view bytes_;
  std::string where_;
};

// Appends the values of one 32-bit roaring bitmap (portable format), offset by `high`.
Status ReadBitmap32(Cursor& in, uint64_t high, int64_t limit, std::vector<int64_t>* out) {
  SKADE_ASSIGN_OR_RETURN(uint64_t cookie, in.Le(4, "a bitmap's cookie"));
  uint32_t count = 0;
  std::string_view run_flags;
  bool offsets = true;
  if ((cookie & 0xFFFF) == kCookieWithRuns) {
    count = static_cast<uint32_t>(cookie >> 16) + 1;
    SKADE_ASSIGN_OR_RETURN(run_flags, in.Take((count + 7) / 8, "the run flags"));
    offsets = count >= kOffsetsFrom;
  } else if (cookie == kCookieNoRuns) {
    SKADE_ASSIGN_OR_RETURN(uint64_t n, in.Le(4, "the container count"));
    if (n > 65536) return in.Fail("more than 65536 containers");
    count = static_cast<uint32_t>(n);
  } else {
    return in.Fail("unknown roaring cookie " + std::to_string(cookie));
  }
  std::vector<std::pair<uint32_t, uint32_t>> headers(count);  // key, cardinality
  for (auto& [key, cardinality] : headers) {
    SKADE_ASSIGN_OR_RETURN(uint64_t k, in.Le(2, "a container key"));
    SKADE_ASSIGN_OR_RETURN(uint64_t c, in.Le(2, "a container cardinality"));
    key = static_cast<uint32_t>(k);
    cardinality = static_cast<uint32_t>(c) + 1;
  }
  if (offsets) SKADE_RETURN_IF_ERROR(in.Take(size_t{4} * count, "the offset header"));
  int64_t last = -1;
  auto add = [&](uint64_t low) -> Status {
    uint64_t value = high | low;
    if (value >= static_cast<uint64_t>(limit))
      return in.Fail("position " + std::to_string(value) + " is past the data file's " + std::to_string(limit) +
                     " rows");
    if (static_cast<int64_t>(value) <= last) return in.Fail("positions are not ascending");
    last = static_cast<int64_t>(value);
    out->push_back(last);
    return {};
  };
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t base = uint64_t{headers[i].first} << 16;
    const bool run = !run_flags.empty() && (static_cast<unsigned char>(run_flags[i / 8]) >> (i % 8) & 1);
    if (run) {
      SKADE_ASSIGN_OR_RETURN(uint64_t runs, in.Le(2, "a run count"));
      for (uint64_t r = 0; r < runs; ++r) {
        SKADE_ASSIGN_OR_RETURN(uint64_t start, in.Le(2, "a run start"));
        SKADE_ASSIGN_OR_RETURN(uint64_t length, in.Le(2, "a run length"));
        if (start + length > 0xFFFF) return in.Fail("a run passes its container's end");
        for (uint64_t v = start; v <= start + length; ++v) SKADE_RETURN_IF_ERROR(add(base | v));
      }
    } else if (headers[i].second <= kArrayMax) {
      for (uint32_t k = 0; k < headers[i].second; ++k) {
        SKADE_ASSIGN_OR_RETURN(uint64_t v, in.Le(2, "an array container"));
        SKADE_RETURN_IF_ERROR(add(base | v));
      }
    } else {
      SKADE_ASSIGN_OR_RETURN(std::string_view words, in.Take(8192, "a bitmap container"));
      for (size_t w = 0; w < 1024; ++w) {
        uint64_t bits = 0;
        for (size_t b = 0; b < 8; ++b) bits |= uint64_t{static_cast<unsigned char>(words[w * 8 + b])} << (8 * b);
        while (bits) {
          SKADE_RETURN_IF_ERROR(add(base | (w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits)))));
          bits &= bits - 1;
        }
      }
    }
  }
  return {};
}

uint32_t BigEndian32(std::string_view b) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(b[i]);
  return v;
}

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

void PutBe32(std::string& out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// The 32-bit roaring bitmap of `low` (values below 2^32, ascending) in the portable format
// without run containers: arrays up to 4096 values a container, bitmaps above.
void PutBitmap32(std::string& out, const std::vector<uint32_t>& low) {
  std::vector<std::pair<size_t, size_t>> containers;  // [begin, end) in `low` per 16-bit key
  for (size_t i = 0; i < low.size();) {
    size_t j = i;
    while (j < low.size() && (low[j] >> 16) == (low[i] >> 16)) ++j;
    containers.emplace_back(i, j);
    i = j;
  }
  PutLe(out, kCookieNoRuns, 4);
  PutLe(out, containers.size(), 4);
  std::vector<size_t> sizes;
  for (const auto& [b, e] : containers) {
    PutLe(out, low[b] >> 16, 2);
    PutLe(out, e - b - 1, 2);
    sizes.push_back(e - b <= kArrayMax ? 2 * (e - b) : 8192);
  }
  // Offsets from the start of this bitmap to each container.
  size_t offset = 8 + 4 * containers.size() + 4 * containers.size();
  for (size_t size : sizes) {
    PutLe(out, offset, 4);
    offset += size;
  }
  for (const auto& [b, e] : containers) {
    if (e - b <= kArrayMax) {
      for (size_t i = b; i < e; ++i) PutLe(out, low[i] & 0xFFFF, 2);
      continue;
    }
    std::vector<uint64_t> words(1024, 0);
    for (size_t i = b; i < e; ++i) words[(low[i] & 0xFFFF) / 64] |= uint64_t{1} << (low[i] % 64);
    for (uint64_t w : words) PutLe(out, w, 8);
  }
}

}  // namespace

PuffinFile WriteDeletionVectors(const std::vector<DeletionVector>& vectors) {
  PuffinFile out;
  out.bytes = "PFA1";
  auto footer_blobs = nlohmann::ordered_json::array();
  for (const auto& [data_file, positions] : vectors) {
    // The vector: how many 32-bit bitmaps, then each one's high key and bitmap.
    std::string body(reinterpret_cast<const char*>(kMagic), 4);
    std::vector<std::pair<uint32_t, std::vector<uint32_t>>> by_high;
    for (int64_t p : positions) {
      const auto high = static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
      if (by_high.empty() || by_high.back().first != high) by_high.emplace_back(high, std::vector<uint32_t>{});
      by_high.back().second.push_back(static_cast<uint32_t>(p));
    }
    PutLe(body, by_high.size(), 8);
    for (const auto& [high, low] : by_high) {
      PutLe(body, high, 4);
      PutBitmap32(body, low);
    }
    const auto offset = static_cast<int64_t>(out.bytes.size());
    PutBe32(out.bytes, static_cast<uint32_t>(body.size()));
    out.bytes += body;
    PutBe32(out.bytes, static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
    const auto length = static_cast<int64_t>(out.bytes.size()) - offset;
    out.blobs.emplace_back(offset, length);
    footer_blobs.push_back({{"type", "deletion-vector-v1"},
                            {"fields", nlohmann::ordered_json::array({2147483645})},  // the reserved id of _pos
                            {"snapshot-id", -1},
                            {"sequence-number", -1},
                            {"offset", offset},
                            {"length", length},
                            {"properties",
                             {{"referenced-data-file", data_file}, {"cardinality", std::to_string(positions.size())}}}});
  }
  // The footer: magic, its JSON, the JSON's length, flags (none: not compressed), magic.
  std::string footer =
      nlohmann::ordered_json{{"blobs", std::move(footer_blobs)}, {"properties", {{"created-by", "skade"}}}}.dump();
  out.bytes += "PFA1" + footer;
  PutLe(out.bytes, footer.size(), 4);
  PutLe(out.bytes, 0, 4);
  out.bytes += "PFA1";
  return out;
}

Result<std::vector<int64_t>> DecodeDeletionVector(std::string_view blob, int64_t record_count, std::string_view where) {
  std::string at(where);
  auto fail = [&](const std::string& what) { return Corrupt(at + ": deletion vector: " + what); };
  if (blob.size() < 12) return fail("blob of " + std::to_string(blob.size()) + " bytes is too short");
  // The length counts the magic and the bitmap; the CRC after them covers the same bytes.
  const uint32_t length = BigEndian32(blob.substr(0, 4));
  if (length < 4 || size_t{length} + 8 != blob.size())
    return fail("length " + std::to_string(length) + " does not fit a blob of " + std::to_string(blob.size()) +
                " bytes");
  std::string_view body = blob.substr(4, length);
  if (body.compare(0, 4, std::string_view(reinterpret_cast<const char*>(kMagic), 4)) != 0)
    return fail("bad magic (not a deletion-vector-v1 blob)");
  const uint32_t crc = BigEndian32(blob.substr(4 + length, 4));
  if (crc32_z(0, reinterpret_cast<const Bytef*>(body.data()), body.size()) != crc)
    return fail("CRC-32 mismatch");
  Cursor in(body.substr(4), at);
  SKADE_ASSIGN_OR_RETURN(uint64_t buckets, in.Le(8, "the bitmap count"));
  std::vector<int64_t> out;
  int64_t previous_key = -1;
  for (uint64_t b = 0; b < buckets; ++b) {
    SKADE_ASSIGN_OR_RETURN(uint64_t key, in.Le(4, "a bitmap key"));
    if (static_cast<int64_t>(key) <= previous_key) return fail("bitmap keys are not ascending");
    previous_key = static_cast<int64_t>(key);
    SKADE_RETURN_IF_ERROR(ReadBitmap32(in, key << 32, record_count, &out));
  }
  if (!in.done()) return fail("bytes left after the bitmaps");
  return out;
}

}  // namespace skade
