#include "storage/key_filter.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <type_traits>

namespace rockcache::storage {

namespace {

constexpr uint64_t kWordsPerBlock = 8;  // 64 bytes: one cache line
constexpr uint64_t kBitsPerBlock = kWordsPerBlock * 64;
constexpr uint64_t kSampleMask = 63;  // 1 in 64 new keys is counted

// One 64-bit hash of (database, key). The low 48 bits pick a bit in each of the block's
// eight words (6 bits each); the high bits pick the block (RangeOf) and the 1-in-64 sample.
uint64_t HashOf(uint32_t db, std::string_view key) {
  uint64_t h = std::hash<std::string_view>{}(key) ^ (uint64_t{db} * 0x9e3779b97f4a7c15ull);
  h ^= h >> 31;  // splitmix64's finalizer: every input bit reaches every output bit
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

// A block of `blocks` from the hash's high bits (multiply-shift instead of a modulo).
uint64_t RangeOf(uint64_t h, uint64_t blocks) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * blocks) >> 64);
}

uint64_t BitOf(uint64_t h, uint64_t word) { return uint64_t{1} << ((h >> (6 * word)) & 63); }

// The words are zero pages from calloc (large layers are fresh mappings: no memset of tens of
// MB in the worker that grows the filter); std::atomic<uint64_t> is a plain 8-byte word.
static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t));
static_assert(std::is_trivially_destructible_v<std::atomic<uint64_t>>);

}  // namespace

void KeyFilter::FreeWords::operator()(std::atomic<uint64_t>* words) const { std::free(words); }

KeyFilter::KeyFilter(uint32_t bits_per_key, uint64_t max_bytes, uint64_t expected_keys)
    : bits_per_key_(bits_per_key), max_bytes_(max_bytes) {
  if (bits_per_key_ == 0) return;
  uint64_t capacity = std::max(kMinLayerKeys, 2 * expected_keys);
  capacity = std::min(capacity, max_bytes_ * 8 / bits_per_key_);  // what the budget allows
  MutexLock lock(&grow_mu_);
  if (capacity < 64 || !MakeLayer(capacity)) return;  // no room at all: off
  layer_count_.store(1, std::memory_order_release);
  on_.store(true, std::memory_order_release);
}

bool KeyFilter::MakeLayer(uint64_t capacity) {
  const int n = layer_count_.load(std::memory_order_relaxed);
  if (n >= kMaxLayers) return false;
  const uint64_t blocks =
      std::max<uint64_t>(1, (capacity * bits_per_key_ + kBitsPerBlock - 1) / kBitsPerBlock);
  const uint64_t bytes = blocks * kWordsPerBlock * sizeof(uint64_t);
  if (bytes_ + bytes > max_bytes_) return false;
  void* words = std::calloc(blocks * kWordsPerBlock, sizeof(uint64_t));
  if (words == nullptr) return false;
  Layer& layer = layers_[static_cast<size_t>(n)];
  layer.words.reset(static_cast<std::atomic<uint64_t>*>(words));
  layer.blocks = blocks;
  layer.capacity = capacity;
  bytes_ += bytes;
  return true;
}

bool KeyFilter::MayContain(uint32_t db, std::string_view key) const {
  if (!on_.load(std::memory_order_acquire)) return true;
  return Holds(HashOf(db, key));
}

bool KeyFilter::Holds(uint64_t h) const {
  const int n = layer_count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const Layer& layer = layers_[static_cast<size_t>(i)];
    const std::atomic<uint64_t>* block = &layer.words[RangeOf(h, layer.blocks) * kWordsPerBlock];
    bool all = true;
    for (uint64_t w = 0; w < kWordsPerBlock && all; ++w) {
      all = (block[w].load(std::memory_order_acquire) & BitOf(h, w)) != 0;
    }
    if (all) return true;
  }
  return false;
}

void KeyFilter::Add(uint32_t db, std::string_view key) {
  // A key some layer already answers for (an overwrite, or a false positive) adds nothing:
  // writes of existing keys stay read-only here.
  if (!on_.load(std::memory_order_acquire)) return;
  const uint64_t h = HashOf(db, key);
  if (Holds(h)) return;
  const int n = layer_count_.load(std::memory_order_acquire);
  Layer& layer = layers_[static_cast<size_t>(n - 1)];
  std::atomic<uint64_t>* block = &layer.words[RangeOf(h, layer.blocks) * kWordsPerBlock];
  for (uint64_t w = 0; w < kWordsPerBlock; ++w) {
    const uint64_t bit = BitOf(h, w);
    if ((block[w].load(std::memory_order_relaxed) & bit) == 0) {
      block[w].fetch_or(bit, std::memory_order_release);
    }
  }
  // Counting every new key would be a shared read-modify-write per key creation; 1 in 64 (by
  // hash) estimates the layer's fill within ~1% at a million keys.
  if (((h >> 48) & kSampleMask) == 0) {
    const uint64_t sampled = layer.sampled_adds.fetch_add(1, std::memory_order_relaxed) + 1;
    if (sampled * (kSampleMask + 1) >= layer.capacity) Grow(n);
  }
}

void KeyFilter::Grow(int seen_count) {
  MutexLock lock(&grow_mu_);
  if (layer_count_.load(std::memory_order_relaxed) != seen_count) return;  // grown already
  if (!on_.load(std::memory_order_relaxed)) return;
  const uint64_t next = layers_[static_cast<size_t>(seen_count - 1)].capacity * 2;
  if (!MakeLayer(next)) {
    // Bounded memory: stop answering rather than grow past max_bytes. Every read goes to
    // RocksDB from now on, as without the filter; the layers stay (readers may be probing them).
    full_.store(true, std::memory_order_relaxed);
    on_.store(false, std::memory_order_release);
    return;
  }
  layer_count_.store(seen_count + 1, std::memory_order_release);
}

KeyFilter::Stats KeyFilter::GetStats() const {
  Stats s;
  MutexLock lock(&grow_mu_);
  s.on = on_.load(std::memory_order_acquire);
  s.full = full_.load(std::memory_order_relaxed);
  s.layers = layer_count_.load(std::memory_order_acquire);
  s.bytes = bytes_;
  for (int i = 0; i < s.layers; ++i) {
    s.keys_added += layers_[static_cast<size_t>(i)].sampled_adds.load(std::memory_order_relaxed) *
                    (kSampleMask + 1);
  }
  return s;
}

}  // namespace rockcache::storage
