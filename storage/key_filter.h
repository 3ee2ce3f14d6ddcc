// storage/key_filter — which keys may exist: a Bloom filter over every key of every meta column
// family, so that a read of a key never written is answered without asking RocksDB (internal to
// storage/). RocksStore owns two: one over keys, and one over the entries (data keys) of the
// hashes, sets and sorted sets created since it opened (rocks_store.h: entry_filter_, added to
// by RocksStore::PutEntry).
//
// Why: every write of a key the cache does not know first reads the key's meta record (is it
// new? what type, TTL, version does it have?), and every miss reads it too. For a key that is
// not there, that Get walks the memtables and probes a filter in each file (a quarter of a
// spread SET's cost): RocksDB answers "absent" only after asking every level. This filter answers
// it with one cache line per layer.
//
// Contract: MayContain(db, key) is false only if Add(db, key) was never called (while the filter
// is on). RocksStore makes that "only if the key has no meta record": OpenRocks adds every meta
// its counting pass sees, and every meta Put adds its key before the record enters a batch
// (PutMeta, WriteStringToThreadGroup). A delete does not remove a key (a Bloom filter cannot):
// the filter holds every distinct key written since the store opened, plus those it opened
// with, and a reopen starts again from the live keys.
//
// Layout: layers of 64-byte blocks; a key sets one bit in each of its block's eight 64-bit
// words (block and bits from one 64-bit hash), ~0.9% false positives at 10 bits a key. A layer
// is sized for a number of keys; when that many new keys went into it, the next layer is twice as
// large. Adds go to the newest layer; lookups probe every layer. When the next layer would pass
// `max_bytes`, the filter turns itself off for good (MayContain is then always true: reads go
// to RocksDB as they would without it) — bounded memory over a workload that creates keys
// without end; a restart rebuilds it from the live keys.
//
// Threads: Add and MayContain from any thread, lock-free. Words are read with acquire and set
// with fetch_or (release), so a reader ordered after a writer's Add (the key's lock, or the
// completion that carried the write's reply) sees its bits. A new layer is made under a mutex
// and published with a release store of the layer count.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "config/mutex.h"

namespace rockcache::storage {

class KeyFilter {
 public:
  // `bits_per_key` 0 makes a filter that is off (MayContain always true, Add a no-op).
  // `expected_keys`: the first layer is sized for twice as many (at least kMinLayerKeys).
  KeyFilter(uint32_t bits_per_key, uint64_t max_bytes, uint64_t expected_keys);
  ~KeyFilter() = default;
  KeyFilter(const KeyFilter&) = delete;
  KeyFilter& operator=(const KeyFilter&) = delete;

  // Notes that `key` of physical database `db` has (or may have) a meta record. A key that
  // already has one was added when it got it: callers may skip those.
  void Add(uint32_t db, std::string_view key);
  // False only when `key` of `db` was never Added (and the filter is on).
  bool MayContain(uint32_t db, std::string_view key) const;

  struct Stats {
    bool on = false;     // answering (false: never built, or full)
    bool full = false;   // turned off because the next layer would pass max_bytes
    uint64_t bytes = 0;  // memory of the layers
    int layers = 0;
    uint64_t keys_added = 0;  // new keys added, estimated (1 in 64 counted)
  };
  Stats GetStats() const;

  static constexpr uint64_t kMinLayerKeys = uint64_t{1} << 20;

 private:
  // The layers' words come from calloc (key_filter.cc).
  struct FreeWords {
    void operator()(std::atomic<uint64_t>* words) const;
  };
  struct Layer {
    std::unique_ptr<std::atomic<uint64_t>[], FreeWords> words;
    uint64_t blocks = 0;                    // 8 words each
    uint64_t capacity = 0;                  // new keys this layer is sized for
    std::atomic<uint64_t> sampled_adds{0};  // new keys added whose hash is 0 mod 64
  };
  static constexpr int kMaxLayers = 32;

  // Whether some layer has every bit of hash `h` set.
  bool Holds(uint64_t h) const;
  // Makes the layer after the newest one (or turns the filter off when it would not fit).
  void Grow(int seen_count);
  bool MakeLayer(uint64_t capacity) REQUIRES(grow_mu_);

  const uint32_t bits_per_key_;
  const uint64_t max_bytes_;
  std::atomic<bool> on_{false};
  std::atomic<bool> full_{false};
  std::atomic<int> layer_count_{0};
  std::array<Layer, kMaxLayers> layers_;
  uint64_t bytes_ GUARDED_BY(grow_mu_) = 0;  // read by GetStats under it
  mutable Mutex grow_mu_;
};

}  // namespace rockcache::storage
