#include "storage/meta_read_ahead.h"

#include <cassert>

namespace rockcache::storage {

uint32_t MetaReadAhead::Hash(int db, std::string_view key) {
  // FNV-1a: the keys are short and few (one segment's), the table sparse.
  uint32_t h = 2166136261u ^ static_cast<uint32_t>(db);
  for (char c : key) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h;
}

void MetaReadAhead::Reset(size_t n) {
  Clear();
  assert(n < UINT16_MAX);
  size_t slots = 4;
  while (slots < 2 * n) slots *= 2;
  slots_.assign(slots, 0);
  mask_ = static_cast<uint32_t>(slots - 1);
  keys_.reserve(n);
  records_.resize(n);
  statuses_.resize(n);
}

void MetaReadAhead::Add(int db, std::string_view key) {
  assert(keys_.size() < records_.size());
  const uint32_t hash = Hash(db, key);
  keys_.push_back(Key{db, hash, false, key});
  for (uint32_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
    if (slots_[slot] == 0) {
      slots_[slot] = static_cast<uint16_t>(keys_.size());
      return;
    }
    const Key& other = keys_[slots_[slot] - 1];
    if (other.hash == hash && other.db == db && other.key == key) return;  // a duplicate
  }
}

int MetaReadAhead::Find(int db, std::string_view key) const {
  const uint32_t hash = Hash(db, key);
  for (uint32_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
    const uint16_t entry = slots_[slot];
    if (entry == 0) return -1;
    const Key& k = keys_[entry - 1];
    if (k.hash == hash && k.db == db && k.key == key) return k.forgotten ? -1 : entry - 1;
  }
}

void MetaReadAhead::Forget(int db, std::string_view key) {
  if (const int i = Find(db, key); i >= 0) keys_[static_cast<size_t>(i)].forgotten = true;
}

void MetaReadAhead::Clear() {
  for (size_t i = 0; i < keys_.size(); ++i) records_[i].Reset();
  keys_.clear();
}

}  // namespace rockcache::storage
