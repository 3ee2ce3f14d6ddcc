// storage/encoding — the on-disk format of rockcache. Pure functions, any thread, no RocksDB.
//
// Column families
//   "default" (meta)   user key (raw bytes, unprefixed) -> meta record (below). One entry per key
//                      of any type; its byte order is the order KEYS and SCAN return.
//   "hash"             DataKey(key, version, field)            -> field value
//   "set"              DataKey(key, version, member)           -> "" (empty)
//   "list"             DataKey(key, version, BE64(index))      -> element
//   "zset"             DataKey(key, version, member)           -> EncodeScore(score) (8 bytes)
//   "zscore"           DataKey(key, version, EncodeScore(score) + member) -> "" (the score index)
//   "stream"           DataKey(key, version, EncodeStreamId(id)) -> EncodeStreamFields(fields)
//                      and, after every entry (sub-keys 16 x 0xff + tag, longer than an id, so
//                      an iterator bounded by entry ids never meets them), the consumer groups
//                      (store_stream_group.cc states their records): 'G' + group name ->
//                      group; 'P' + BE64(group id) + id -> pending entry (the group's PEL);
//                      'C' + BE64(group id) + [u32 len] consumer + id -> "" (the consumer's PEL);
//                      'N' + BE64(group id) + consumer name -> consumer. DEL drops them with the
//                      entries (version bump); COPY/RENAME copy them with the entries.
//   "props"            internal figures ("next-version" reservation, "db-map"); never user data.
//   "db1".."dbN"       the meta column families of physical databases 1..N, as "default" is
//                      physical database 0's (store.h "Databases"). "db-map" in "props": the
//                      physical database of each logical one, u16 big-endian each (absent =
//                      identity).
//
// Meta record (all integers big-endian):
//   [type u8][version u64][expire-at ms i64, 0 = none][element count u64]
//   then, by type:  string: the value bytes (to the end of the record)
//                   list:   [head u64][tail u64]; the elements live at indexes [head, tail),
//                           an empty list starts at head = tail = 2^63, so LPUSH and RPUSH are
//                           both O(1) for 2^63 pushes either way.
//                   hash, set, zset: optionally (absent in records written before it existed,
//                           and when the hint is trivial) the live-range hint:
//                           [u32 lo length][lo][u8 flags: 1 = has hi, 2 = has gap]
//                           [u32 hi length][hi], then with flag 2: [u32 gap length][gap]
//                           [u32 gap_last length][gap_last].
//                           Every live entry's sub-key s of the hinted column family (hash:
//                           "hash", set: "set", zset: the score index "zscore") satisfies
//                           lo <= s, s < hi when there is a hi, and, when there is a gap, never
//                           gap_last < s < gap (a dead stretch: nothing there is live). Pops and
//                           removals at either end move the hint past the
//                           tombstones they leave, so iterators bounded by it never walk them;
//                           inserts widen it. Inserts below lo (a queue getting items ahead of
//                           its head) open a dead stretch from the highest of them to the old
//                           lo, so the tombstones of earlier pops stay skipped. It is a bound, not
//                           exact: removals in the middle leave tombstones inside it (compaction
//                           drops those).
//                   stream: [last id 16][first id 16][top id 16] (ids as EncodeStreamId):
//                           the last id ever added (XADD's floor, kept when entries are
//                           deleted), and bounds of the live entries: every live entry's id is
//                           in [first, top]. XTRIM/XDEL at the ends move them past what they
//                           delete, so range reads never walk those tombstones. A stream may
//                           be empty (count 0) and still exist, as in Redis.
//                           Then (absent in records written before consumer groups):
//                           [entries added u64][max deleted id 16][next group id u64]
//                           [groups u64].
//   `count` is the number of elements of a collection (0 for strings). An absent key has no meta
//   record; an empty collection never has one (it is deleted with its last element).
//
// Data keys: [u32 key length][key bytes][u64 version][sub-key]. The length prefix makes every
// binary key safe (empty, containing \0) and means the entries of key "a" and of key "a\0b" never
// share a prefix. The version is taken from a store-wide counter that only grows (persisted in
// "props"), so a collection deleted or overwritten gets a new version: its old entries become
// unreachable at once (O(1) DEL) and the data compaction filter drops them later.
//
// Scores: EncodeScore maps a double to 8 bytes whose memcmp order is numeric order
// (-inf < ... < -0 == 0 < ... < +inf); -0.0 is normalised to 0.0; NaN is never stored.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/stream_id.h"

namespace rockcache::storage {

// The type byte of a meta record. Values are on disk: never renumber.
enum class MetaType : uint8_t {
  kString = 1,
  kHash = 2,
  kList = 3,
  kSet = 4,
  kZSet = 5,
  kStream = 6,
};

inline constexpr uint64_t kListInitialIndex = 1ull << 63;
inline constexpr char kPropsDbMapKey[] = "db-map";
// Server records (Store::PutServerRecord) are props keys "record:<name>".
inline constexpr std::string_view kServerRecordPrefix = "record:";
inline constexpr size_t kMetaHeaderSize = 1 + 8 + 8 + 8;
// The bytes a stream meta has after its three ids (absent in records written before groups).
inline constexpr size_t kStreamMetaTail = 8 + 16 + 8 + 8;

struct Meta {
  MetaType type = MetaType::kString;
  uint64_t version = 0;
  int64_t expire_at_ms = 0;            // 0 = no TTL
  uint64_t count = 0;                  // elements of a collection; 0 for strings
  uint64_t head = kListInitialIndex;   // lists only
  uint64_t tail = kListInitialIndex;   // lists only
  std::string lo;                      // hash, set, zset: live-range hint (see above); "" = none
  std::optional<std::string> hi;       // hash, set, zset: exclusive upper hint; nullopt = none
  std::optional<std::string> gap;      // hash, set, zset: see above; nullopt = none
  std::string gap_last;                // with gap: nothing live in (gap_last, gap)
  std::string value;                   // strings only
  StreamId last_id, first_id, top_id;  // streams only (see above)
  // Streams only: entries ever added (XINFO entries-added), the greatest id XDEL removed (0-0:
  // none), the id the next consumer group gets, the number of groups.
  uint64_t entries_added = 0;
  StreamId max_deleted_id;
  uint64_t next_group_id = 1;
  uint64_t groups = 0;

  bool ExpiredAt(int64_t now_ms) const { return expire_at_ms != 0 && expire_at_ms <= now_ms; }
  // Widens the live-range hint to cover a new entry with sub-key `sub`.
  void CoverInHint(std::string_view sub);
  // Sets lo to `new_lo` (REQUIRES: nothing live below it), dropping what it passed.
  void RaiseLo(std::string new_lo);
};

// True when `a` and `b` encode to the same meta record (EncodeMeta): every field is equal.
bool SameMeta(const Meta& a, const Meta& b);

// The smallest string greater than `s` (s + '\0'): an exclusive bound just past s.
std::string ImmediateSuccessor(std::string_view s);

// Meta record <-> bytes. DecodeMeta returns false on a malformed record. EncodeMetaInto
// replaces *out with the record (a caller's reused buffer: no allocation once it is big enough).
std::string EncodeMeta(const Meta& meta);
void EncodeMetaInto(const Meta& meta, std::string* out);
bool DecodeMeta(std::string_view bytes, Meta* meta);
// Reads only the fixed header (type, version, expire-at, count), cheap for filters and SCAN.
bool DecodeMetaHeader(std::string_view bytes, Meta* meta);

// Fixed-width big-endian integers. Store* write at `p` and return the byte after them.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the byte swaps below assume it");
inline char* StoreFixed32BE(char* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
  return p + 4;
}
inline char* StoreFixed64BE(char* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
  return p + 8;
}
inline void PutFixed32BE(std::string* dst, uint32_t v) {
  char buf[4];
  dst->append(buf, static_cast<size_t>(StoreFixed32BE(buf, v) - buf));
}
inline void PutFixed64BE(std::string* dst, uint64_t v) {
  char buf[8];
  dst->append(buf, static_cast<size_t>(StoreFixed64BE(buf, v) - buf));
}
inline uint32_t GetFixed32BE(const char* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
inline uint64_t GetFixed64BE(const char* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

// [u32 len][key][u64 version]: every data entry of one (key, version) starts with this.
std::string DataPrefix(std::string_view key, uint64_t version);
// DataPrefix + sub_key.
std::string DataKey(std::string_view key, uint64_t version, std::string_view sub_key);
// The size of DataKey(key, version, sub_key), and the same bytes written at `out` (REQUIRES:
// DataKeySize bytes there), for keys built in place: DataKeyBytes, Records::PutEntry.
inline size_t DataKeySize(std::string_view key, std::string_view sub_key) {
  return 4 + key.size() + 8 + sub_key.size();
}
void WriteDataKey(char* out, std::string_view key, uint64_t version, std::string_view sub_key);
// DataKey(key, version, sub_key) built on the stack when it fits kInline bytes (nearly every
// key), on the heap otherwise: a point read of one entry (HSET's, SADD's, ZADD's check of what
// is there) then allocates nothing for its key.
class DataKeyBytes {
 public:
  static constexpr size_t kInline = 128;
  DataKeyBytes(std::string_view key, uint64_t version, std::string_view sub_key)
      : size_(DataKeySize(key, sub_key)) {
    char* out = inline_;
    if (size_ > kInline) {
      heap_.resize(size_);
      out = heap_.data();
    }
    WriteDataKey(out, key, version, sub_key);
  }
  DataKeyBytes(const DataKeyBytes&) = delete;
  DataKeyBytes& operator=(const DataKeyBytes&) = delete;
  const char* data() const { return size_ > kInline ? heap_.data() : inline_; }
  size_t size() const { return size_; }
  std::string_view view() const { return {data(), size_}; }

 private:
  size_t size_;
  char inline_[kInline];
  std::string heap_;
};
// Splits a data key; false when malformed.
bool ParseDataKey(std::string_view data_key, std::string_view* key, uint64_t* version,
                  std::string_view* sub_key);
// The smallest string greater than every string starting with `prefix` (the iterate_upper_bound
// of a prefix scan). REQUIRES: prefix is not all 0xff bytes (a DataPrefix never is).
std::string PrefixSuccessor(std::string_view prefix);

// List element sub-key.
std::string EncodeListIndex(uint64_t index);

// Stream ids: 16 bytes (ms, seq big-endian), memcmp order == id order.
std::string EncodeStreamId(StreamId id);
StreamId DecodeStreamId(const char* p);
// A stream entry's fields: [u32 n] then n times [u32 length][bytes] (field, value, field...).
std::string EncodeStreamFields(
    const std::vector<std::pair<std::string_view, std::string_view>>& fv);
bool DecodeStreamFields(std::string_view bytes,
                        std::vector<std::pair<std::string, std::string>>* out);

// Scores: 8 bytes, memcmp order == numeric order. REQUIRES: !isnan(score).
std::string EncodeScore(double score);
double DecodeScore(const char* p);
// Score index sub-key: EncodeScore(score) + member.
std::string ScoreIndexSubKey(double score, std::string_view member);

}  // namespace rockcache::storage
