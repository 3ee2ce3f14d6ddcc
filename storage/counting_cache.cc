#include "storage/counting_cache.h"

namespace rockcache::storage {

size_t CountingCache::MySlot() {
  static std::atomic<size_t> next{0};
  thread_local const size_t slot = next.fetch_add(1, std::memory_order_relaxed) % kSlots;
  return slot;
}

CountingCache::Counts CountingCache::counts() const {
  Counts out;
  for (const Slot& slot : slots_) {
    out.hits += slot.hits.load(std::memory_order_relaxed);
    out.misses += slot.misses.load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace rockcache::storage
