#include "storage/scan_cursor.h"

namespace rockcache::storage {

namespace {
constexpr uint32_t kIdMask = (1u << kCursorIdBits) - 1;
}  // namespace

uint64_t EncodeScanCursor(std::string_view prefix, uint32_t id) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < kCursorPrefixBytes; ++i) {
    bytes = (bytes << 8) | (i < prefix.size() ? static_cast<unsigned char>(prefix[i]) : 0);
  }
  return (bytes << 24) | (static_cast<uint64_t>(prefix.size()) << kCursorIdBits) | (id & kIdMask);
}

DecodedCursor DecodeScanCursor(uint64_t cursor) {
  DecodedCursor out;
  size_t len = (cursor >> kCursorIdBits) & 7;
  if (cursor == 0 || len == 0 || len > kCursorPrefixBytes) return out;
  out.valid = true;
  out.id = static_cast<uint32_t>(cursor & kIdMask);
  for (size_t i = 0; i < len; ++i) {
    out.prefix.push_back(static_cast<char>((cursor >> (56 - 8 * i)) & 0xff));
  }
  return out;
}

uint64_t ResumeTable::Put(std::string_view scope, std::string_view prefix, std::string_view last) {
  uint32_t id = next_id_.fetch_add(1, std::memory_order_relaxed) & kIdMask;
  if (id == 0) id = next_id_.fetch_add(1, std::memory_order_relaxed) & kIdMask;
  uint64_t cursor = EncodeScanCursor(prefix, id);
  size_t slot = id % kSlots;
  Stripe& stripe = stripes_[slot % kLocks];
  MutexLock lock(&stripe.mu);
  Slot& s = stripe.slots[slot / kLocks];
  s.cursor = cursor;
  s.scope.assign(scope.data(), scope.size());
  s.last.assign(last.data(), last.size());
  return cursor;
}

bool ResumeTable::Get(uint64_t cursor, std::string_view scope, std::string* last) {
  uint32_t id = static_cast<uint32_t>(cursor & kIdMask);
  if (id == 0) return false;
  size_t slot = id % kSlots;
  Stripe& stripe = stripes_[slot % kLocks];
  MutexLock lock(&stripe.mu);
  const Slot& s = stripe.slots[slot / kLocks];
  if (s.cursor != cursor || s.scope != scope) return false;
  *last = s.last;
  return true;
}

}  // namespace rockcache::storage
