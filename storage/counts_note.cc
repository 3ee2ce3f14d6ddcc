#include "storage/counts_note.h"

#include <cstring>

namespace rockcache::storage::counts_note {
namespace {

constexpr size_t kHeaderSize = kMagic.size() + 8 + 4;
constexpr size_t kEntrySize = 4 + 8 + 8 + 8;

template <typename T>
void Put(std::string* out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));  // little endian: every platform rockcache builds on
  out->append(bytes, sizeof(T));
}

template <typename T>
T Get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

void PutEntry(std::string* out, const RocksStore::CounterDelta& d) {
  Put<uint32_t>(out, static_cast<uint32_t>(d.db));
  Put<int64_t>(out, d.keys);
  Put<int64_t>(out, d.expires);
  Put<uint64_t>(out, d.expire_sum);
}

}  // namespace

std::string Encode(int64_t ttl_base_ms, uint32_t records, const RocksStore::CounterDelta* deltas,
                   size_t n, const std::vector<RocksStore::CounterDelta>& more) {
  std::string out;
  out.reserve(kHeaderSize + (n + more.size()) * kEntrySize);
  out.append(kMagic);
  Put<int64_t>(&out, ttl_base_ms);
  Put<uint32_t>(&out, records);
  for (size_t i = 0; i < n; ++i) PutEntry(&out, deltas[i]);
  for (const auto& d : more) PutEntry(&out, d);
  return out;
}

bool Decode(std::string_view blob, int64_t ttl_base_ms, std::vector<RocksStore::CounterDelta>* out,
            uint32_t* records) {
  out->clear();
  if (blob.substr(0, kMagic.size()) != kMagic || blob.size() < kHeaderSize ||
      (blob.size() - kHeaderSize) % kEntrySize != 0) {
    return false;
  }
  const int64_t writer_base = Get<int64_t>(blob.data() + kMagic.size());
  *records = Get<uint32_t>(blob.data() + kMagic.size() + 8);
  // Each key with a TTL added counts expire_at - writer_base there and must count
  // expire_at - ttl_base_ms here (modulo 2^64, as the sums themselves).
  const uint64_t shift = static_cast<uint64_t>(writer_base) - static_cast<uint64_t>(ttl_base_ms);
  for (const char* p = blob.data() + kHeaderSize; p < blob.data() + blob.size(); p += kEntrySize) {
    RocksStore::CounterDelta d;
    d.db = static_cast<int>(Get<uint32_t>(p));
    d.keys = Get<int64_t>(p + 4);
    d.expires = Get<int64_t>(p + 12);
    d.expire_sum = Get<uint64_t>(p + 20) + static_cast<uint64_t>(d.expires) * shift;
    out->push_back(d);
  }
  return true;
}

}  // namespace rockcache::storage::counts_note
