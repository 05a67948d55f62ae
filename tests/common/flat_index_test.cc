// FlatIndex against std::unordered_map: random keys, with hashes forced to collide
// (the caller's comparison must then tell keys apart), across many rehashes.
#include "skade/common/flat_index.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>

namespace skade {
namespace {

TEST(FlatIndexTest, MatchesAMapUnderCollisionsAndGrowth) {
  for (uint64_t hash_bits : {64u, 3u}) {  // 3 bits: most keys share a hash
    std::mt19937_64 rng(hash_bits);
    FlatIndex index;
    std::vector<uint64_t> keys;  // entry -> key
    std::unordered_map<uint64_t, uint64_t> model;
    for (int i = 0; i < 20000; ++i) {
      uint64_t key = rng() % 5000;
      uint64_t hash = hash_bits == 64 ? std::hash<uint64_t>{}(key) : key & 7;
      auto [entry, added] =
          index.FindOrAdd(hash, keys.size(), [&](uint64_t e) { return keys[e] == key; });
      auto [it, fresh] = model.emplace(key, keys.size());
      ASSERT_EQ(added, fresh) << key;
      ASSERT_EQ(entry, it->second) << key;
      if (added) keys.push_back(key);
    }
    EXPECT_EQ(index.size(), model.size());
  }
}

}  // namespace
}  // namespace skade
