// Deletion vector blobs (Iceberg v3): each container kind of the portable roaring format,
// and the ways a blob can be broken, each refused by name. Spark's own vectors are read in
// tests/spark (test_format_v3_table_with_deletion_vectors).
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "skade/table/deletion_vector.h"

namespace skade {
namespace {

void Le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void Be32(std::string& out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// One 16-bit container: its key, its kind and its low values.
struct Container {
  uint16_t key;
  enum Kind { kArray, kBitmap, kRuns } kind;
  std::vector<uint16_t> values;                         // kArray, kBitmap
  std::vector<std::pair<uint16_t, uint16_t>> runs;      // kRuns: start, length - 1
};

// A 32-bit roaring bitmap in the portable format; with any run container it takes the
// cookie that carries run flags (and no offset header below four containers).
std::string Bitmap32(const std::vector<Container>& cs) {
  std::string out;
  bool runs = false;
  for (const auto& c : cs) runs = runs || c.kind == Container::kRuns;
  if (runs) {
    Le(out, 12347 | (static_cast<uint32_t>(cs.size() - 1) << 16), 4);
    std::string flags((cs.size() + 7) / 8, '\0');
    for (size_t i = 0; i < cs.size(); ++i)
      if (cs[i].kind == Container::kRuns) flags[i / 8] = static_cast<char>(flags[i / 8] | (1 << (i % 8)));
    out += flags;
  } else {
    Le(out, 12346, 4);
    Le(out, cs.size(), 4);
  }
  for (const auto& c : cs) {
    size_t card = c.values.size();
    for (const auto& [start, length] : c.runs) card += length + 1u;
    Le(out, c.key, 2);
    Le(out, card - 1, 2);
  }
  if (!runs || cs.size() >= 4) {
    for (size_t i = 0; i < cs.size(); ++i) Le(out, 0, 4);  // offsets: not needed to read in order
  }
  for (const auto& c : cs) {
    if (c.kind == Container::kRuns) {
      Le(out, c.runs.size(), 2);
      for (const auto& [start, length] : c.runs) {
        Le(out, start, 2);
        Le(out, length, 2);
      }
    } else if (c.kind == Container::kArray) {
      for (uint16_t v : c.values) Le(out, v, 2);
    } else {
      std::vector<uint64_t> words(1024, 0);
      for (uint16_t v : c.values) words[v / 64] |= uint64_t{1} << (v % 64);
      for (uint64_t w : words) Le(out, w, 8);
    }
  }
  return out;
}

// The blob: length, magic, the 64-bit bitmap (32-bit ones by high key), CRC-32.
std::string Blob(const std::vector<std::pair<uint32_t, std::string>>& bitmaps) {
  std::string body = "\xD1\xD3\x39\x64";
  Le(body, bitmaps.size(), 8);
  for (const auto& [key, bitmap] : bitmaps) {
    Le(body, key, 4);
    body += bitmap;
  }
  std::string out;
  Be32(out, static_cast<uint32_t>(body.size()));
  out += body;
  Be32(out, static_cast<uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
  return out;
}

TEST(DeletionVector, ReadsEveryContainerKindInOrder) {
  std::vector<uint16_t> dense;
  for (int v = 0; v < 65536; v += 3) dense.push_back(static_cast<uint16_t>(v));  // > 4096: a bitmap
  std::string blob = Blob({{0, Bitmap32({{0, Container::kArray, {1, 7, 65535}, {}},
                                         {1, Container::kBitmap, dense, {}},
                                         {2, Container::kRuns, {}, {{10, 4}, {100, 0}}},
                                         {5, Container::kArray, {0}, {}}})},
                           {1, Bitmap32({{0, Container::kArray, {2}, {}}})}});
  auto positions = DecodeDeletionVector(blob, int64_t{1} << 33, "dv.puffin");
  ASSERT_TRUE(positions) << positions.error().message;
  std::vector<int64_t> expected{1, 7, 65535};
  for (uint16_t v : dense) expected.push_back(65536 + v);
  for (int v = 10; v <= 14; ++v) expected.push_back(2 * 65536 + v);
  expected.push_back(2 * 65536 + 100);
  expected.push_back(5 * 65536);
  expected.push_back((int64_t{1} << 32) + 2);
  EXPECT_EQ(*positions, expected);
}

TEST(DeletionVector, EmptyVectorHasNoPositions) {
  auto positions = DecodeDeletionVector(Blob({}), 10, "dv.puffin");
  ASSERT_TRUE(positions) << positions.error().message;
  EXPECT_TRUE(positions->empty());
}

void ExpectCorrupt(const std::string& blob, int64_t rows, const std::string& what) {
  auto r = DecodeDeletionVector(blob, rows, "dv.puffin at offset 4");
  ASSERT_FALSE(r) << what;
  EXPECT_EQ(r.error().kind, ErrorKind::kCorrupt) << what;
  EXPECT_NE(r.error().message.find("dv.puffin at offset 4: deletion vector: " + what), std::string::npos)
      << r.error().message;
}

TEST(DeletionVector, RefusesBrokenBlobsByName) {
  const std::string good = Blob({{0, Bitmap32({{0, Container::kArray, {3, 4}, {}}})}});
  ASSERT_TRUE(DecodeDeletionVector(good, 5, "dv"));
  ExpectCorrupt(good.substr(0, 6), 5, "blob of 6 bytes is too short");
  ExpectCorrupt(good + "x", 5, "length");
  std::string magic = good;
  magic[4] = 'X';
  ExpectCorrupt(magic, 5, "bad magic");
  std::string crc = good;
  crc.back() = static_cast<char>(crc.back() ^ 1);
  ExpectCorrupt(crc, 5, "CRC-32 mismatch");
  ExpectCorrupt(good, 4, "position 4 is past the data file's 4 rows");
  ExpectCorrupt(Blob({{0, Bitmap32({{0, Container::kArray, {4, 3}, {}}})}}), 5, "positions are not ascending");
  ExpectCorrupt(Blob({{1, Bitmap32({})}, {0, Bitmap32({})}}), 5, "bitmap keys are not ascending");
  ExpectCorrupt(Blob({{0, Bitmap32({{0, Container::kRuns, {}, {{65530, 10}}}})}}), 100000,
                "a run passes its container's end");
  std::string cookie = Bitmap32({});
  cookie[0] = 0x39;
  ExpectCorrupt(Blob({{0, cookie}}), 5, "unknown roaring cookie");
  ExpectCorrupt(Blob({{0, Bitmap32({{0, Container::kArray, {1}, {}}}).substr(0, 14)}}), 5, "truncated at");
  // A run over a whole container, 65,536 times over, is bounded by the data file's rows.
  std::vector<Container> huge;
  for (int k = 0; k < 100; ++k) huge.push_back({static_cast<uint16_t>(k), Container::kRuns, {}, {{0, 65535}}});
  ExpectCorrupt(Blob({{0, Bitmap32(huge)}}), 1000, "position 1000 is past");
}

// skade's own vectors (Spark and PyIceberg read them in tests/spark and tests/interop):
// several in one Puffin file, each blob decoding to what was written, and the footer saying
// where each lies and which data file it is for.
TEST(DeletionVector, WrittenVectorsReadBackInTheirPuffinFile) {
  std::vector<int64_t> positions{0, 5, 65535};
  for (int64_t p = 65536; p < 2 * 65536; p += 2) positions.push_back(p);  // a bitmap container
  positions.push_back((int64_t{1} << 32) + 9);                            // a second 32-bit bitmap
  std::vector<DeletionVector> vectors{{"file:/wh/t/data/a.parquet", positions}, {"file:/wh/t/data/b.parquet", {7}}};
  PuffinFile puffin = WriteDeletionVectors(vectors);
  ASSERT_EQ(puffin.bytes.substr(0, 4), "PFA1");
  ASSERT_EQ(puffin.bytes.substr(puffin.bytes.size() - 4), "PFA1");
  ASSERT_EQ(puffin.blobs.size(), 2u);
  EXPECT_EQ(puffin.blobs[0].first, 4);
  EXPECT_EQ(puffin.blobs[1].first, puffin.blobs[0].first + puffin.blobs[0].second);
  const auto [last_offset, last_length] = puffin.blobs[1];
  const std::string footer = puffin.bytes.substr(last_offset + last_length);
  for (size_t i = 0; i < vectors.size(); ++i) {
    const auto [offset, length] = puffin.blobs[i];
    auto back = DecodeDeletionVector(std::string_view(puffin.bytes).substr(offset, length), int64_t{1} << 33,
                                     "dv.puffin");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, vectors[i].positions);
    EXPECT_NE(footer.find("\"offset\":" + std::to_string(offset) + ",\"length\":" + std::to_string(length) +
                          ",\"properties\":{\"referenced-data-file\":\"" + vectors[i].data_file +
                          "\",\"cardinality\":\"" + std::to_string(vectors[i].positions.size()) + "\"}"),
              std::string::npos)
        << footer;
  }
  EXPECT_NE(footer.find("\"type\":\"deletion-vector-v1\""), std::string::npos) << footer;
}

// The fuzz seeds tests/fuzz/make_deletion_vector_corpus.py made with pyroaring (the library
// PyIceberg reads vectors with): its own layout of array, bitmap and run containers.
TEST(DeletionVector, ReadsBlobsPyroaringWrote) {
  auto range = [](int64_t from, int64_t to, int64_t step) {
    std::vector<int64_t> out;
    for (int64_t v = from; v < to; v += step) out.push_back(v);
    return out;
  };
  std::vector<int64_t> runs = range(10, 5000, 1);
  for (int64_t v : range(70000, 70100, 1)) runs.push_back(v);
  std::vector<int64_t> containers;
  for (int64_t k = 0; k < 12; ++k) containers.push_back(k * 65536 + 5);
  const std::map<std::string, std::vector<int64_t>> expected{
      {"empty", {}},
      {"array", {0, 3, 7, 99}},
      {"bitmap", range(0, 60000, 2)},
      {"runs", runs},
      {"many_containers", containers},
      {"past_2_32", {1, (int64_t{1} << 32) + 5, (int64_t{1} << 32) + 69999}}};
  const auto dir = std::filesystem::path(SKADE_SOURCE_DIR) / "tests/fuzz/corpus/deletion_vector";
  for (const auto& [name, positions] : expected) {
    std::ifstream in(dir / ("blob_" + name + ".bin"), std::ios::binary);
    ASSERT_TRUE(in.good()) << name;
    const std::string blob((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto back = DecodeDeletionVector(blob, int64_t{1} << 33, name);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, positions) << name;
  }
}

}  // namespace
}  // namespace skade
