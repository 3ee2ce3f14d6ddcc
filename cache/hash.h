// HashKey: the 64-bit key hash that places a key in a cache shard, in a bucket of that shard's
// table, and on a KeyLocks stripe. One hash per key per request; the three users take different
// bits of it so that they stay independent:
//   shard  = hash % shards              (low bits; a mask when shards is a power of two)
//   bucket = (hash >> 32) & (buckets-1) (high half; see internal::EntryTable)
//   stripe = rotr(hash, 48) % stripes   (bits 48..63 first; see KeyLocks)
//
// The function reads the key 8 or 16 bytes at a time and folds each 64x64->128-bit product
// (high half XOR low half), so a 16-byte key costs two multiplies, a few ns. It is not a
// cryptographic or keyed hash: an adversary who knows it can aim keys at one bucket chain; the
// damage is bounded by the per-shard budget (a long chain in one shard, not a crash).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace rockcache::cache {

namespace internal {

inline uint64_t Load64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline uint64_t Load32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Full 64x64 product folded to 64 bits: every input bit reaches every output bit.
inline uint64_t Fold(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

}  // namespace internal

inline uint64_t HashKey(std::string_view key) {
  constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio
  constexpr uint64_t kMixA = 0xbf58476d1ce4e5b9ull;    // splitmix64 multipliers
  constexpr uint64_t kMixB = 0x94d049bb133111ebull;
  const auto* p = reinterpret_cast<const unsigned char*>(key.data());
  size_t n = key.size();
  uint64_t h = kGolden ^ (static_cast<uint64_t>(n) * kMixB);
  while (n > 16) {
    h = internal::Fold(internal::Load64(p) ^ kMixA, internal::Load64(p + 8) ^ h);
    p += 16;
    n -= 16;
  }
  uint64_t a = 0;
  uint64_t b = 0;
  if (n > 8) {  // 9..16 bytes: two overlapping 8-byte words
    a = internal::Load64(p);
    b = internal::Load64(p + n - 8);
  } else if (n >= 4) {  // 4..8 bytes: two overlapping 4-byte words
    a = internal::Load32(p);
    b = internal::Load32(p + n - 4);
  } else if (n > 0) {  // 1..3 bytes
    a = (uint64_t{p[0]} << 16) | (uint64_t{p[n >> 1]} << 8) | p[n - 1];
  }
  h = internal::Fold(a ^ kMixA, b ^ h ^ kGolden);
  return internal::Fold(h ^ kMixB, kGolden);
}

// The hash of `key` in database `db` (config/current_db.h): HashKey(key) for database 0, so the
// common case costs nothing more; other databases mix their number in.
inline uint64_t HashKey(std::string_view key, int db) {
  const uint64_t h = HashKey(key);
  if (db == 0) return h;
  return internal::Fold(h ^ static_cast<uint64_t>(db), 0x94d049bb133111ebull);
}

}  // namespace rockcache::cache
