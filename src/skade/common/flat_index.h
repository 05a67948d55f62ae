// An open-addressing table from 64-bit key hashes to entry numbers, for indexes whose
// keys live elsewhere (Arrow buffers, record arenas): the caller compares keys. Over
// millions of keys it misses the cache far less than a node-based std::unordered_map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace skade {

class FlatIndex {
 public:
  explicit FlatIndex(size_t expected = 0) { Rehash(Capacity(expected)); }

  /// The entry among those stored under `hash` that `same(entry)` accepts; if none,
  /// stores `next` under `hash`. Returns {entry, added}.
  template <typename Same>
  std::pair<uint64_t, bool> FindOrAdd(uint64_t hash, uint64_t next, Same&& same) {
    if ((count_ + 1) * 2 > slots_.size()) Rehash(slots_.size() * 2);
    hash = Mix(hash);
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.entry == kEmpty) {
        s = {hash, next};
        ++count_;
        return {next, true};
      }
      if (s.hash == hash && same(s.entry)) return {s.entry, false};
    }
  }

  size_t size() const { return count_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint64_t entry = kEmpty;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  // Spreads every input bit over the low bits the slot is taken from.
  static uint64_t Mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
  }
  static size_t Capacity(size_t expected) {
    size_t n = 16;
    while (n < expected * 2) n *= 2;
    return n;
  }
  void Rehash(size_t n) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    for (const Slot& s : old) {
      if (s.entry == kEmpty) continue;
      size_t i = s.hash & (n - 1);
      while (slots_[i].entry != kEmpty) i = (i + 1) & (n - 1);
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t count_ = 0;
};

}  // namespace skade
