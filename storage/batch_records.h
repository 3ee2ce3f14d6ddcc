// storage/batch_records — the bytes of a rocksdb::WriteBatch, written and read directly
// (internal to storage/).
//
// A WriteBatch's rep (WriteBatch::Data(), db/write_batch.cc, stable since LevelDB) is a 12-byte
// header (sequence fixed64, count fixed32, little endian) followed by its records:
//   Put:    tag 0x1, or 0x5 + varint32 column family id; varint32 key length, key;
//           varint32 value length, value
//   Delete: tag 0x0, or 0x4 + varint32 column family id; varint32 key length, key
//   SingleDelete: tag 0x7, or 0x8 + column family id; as Delete
//   DeleteRange: tag 0xF, or 0xE + column family id; begin key, end key (as a Put's key, value)
// Column family 0 uses the short tags. The write group (write_group.cc) and the transaction
// overlay (tx_overlay.h) build their batches' bytes with these instead of WriteBatch::Put and
// re-parsing a method's batch through WriteBatch::Iterate (a Handler call, a re-encoding and a
// column family lookup per record), and make the WriteBatch from the bytes at the end
// (rocksdb::WriteBatch(std::string rep)).
//
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rockcache::storage::batch_records {

inline constexpr size_t kHeaderSize = 12;

// A rep with no records.
inline std::string EmptyRep() { return std::string(kHeaderSize, '\0'); }

inline void SetCount(std::string* rep, uint32_t count) {
  for (int i = 0; i < 4; ++i) (*rep)[8 + i] = static_cast<char>((count >> (8 * i)) & 0xff);
}

inline void PutVarint32(std::string* rep, uint32_t v) {
  while (v >= 0x80) {
    rep->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  rep->push_back(static_cast<char>(v));
}

// The tag (and column family id) of a record. `tag0` for column family 0, `tag_cf` otherwise.
inline void PutTag(std::string* rep, uint32_t cf_id, char tag0, char tag_cf) {
  if (cf_id == 0) {
    rep->push_back(tag0);
  } else {
    rep->push_back(tag_cf);
    PutVarint32(rep, cf_id);
  }
}

inline void PutSlice(std::string* rep, std::string_view s) {
  PutVarint32(rep, static_cast<uint32_t>(s.size()));
  rep->append(s.data(), s.size());
}

// Appends a Put record; returns the offset of the value's first byte in *rep.
inline size_t AppendPut(std::string* rep, uint32_t cf_id, std::string_view key,
                        std::string_view value) {
  PutTag(rep, cf_id, '\x01', '\x05');
  PutSlice(rep, key);
  PutSlice(rep, value);
  return rep->size() - value.size();
}

// Appends a Put record whose value is `head` then `tail` (a string meta: its header, then the
// string), without joining them first; returns the offset of the value's first byte in *rep.
inline size_t AppendPut(std::string* rep, uint32_t cf_id, std::string_view key,
                        std::string_view head, std::string_view tail) {
  PutTag(rep, cf_id, '\x01', '\x05');
  PutSlice(rep, key);
  PutVarint32(rep, static_cast<uint32_t>(head.size() + tail.size()));
  const size_t value_offset = rep->size();
  rep->append(head.data(), head.size());
  rep->append(tail.data(), tail.size());
  return value_offset;
}

inline void AppendDelete(std::string* rep, uint32_t cf_id, std::string_view key) {
  PutTag(rep, cf_id, '\x00', '\x04');
  PutSlice(rep, key);
}

// A range deletion of [begin, end): tag 0xF, or 0xE + column family id. ForEachRecord does not
// read it (callers write such a batch as it is).
inline void AppendDeleteRange(std::string* rep, uint32_t cf_id, std::string_view begin,
                              std::string_view end) {
  PutTag(rep, cf_id, '\x0f', '\x0e');
  PutSlice(rep, begin);
  PutSlice(rep, end);
}

// One record read back. Offsets are from the start of the bytes parsed.
struct Record {
  size_t start = 0, end = 0;  // the whole record: [start, end)
  bool deleted = false;       // Delete or SingleDelete
  uint32_t cf_id = 0;
  size_t key_offset = 0, key_size = 0;
  size_t value_offset = 0, value_size = 0;  // Put only
};

namespace internal {
inline bool GetVarint32(std::string_view data, size_t* pos, uint32_t* v) {
  uint32_t result = 0;
  for (int shift = 0; shift <= 28 && *pos < data.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(data[(*pos)++]);
    result |= static_cast<uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}
inline bool GetSlice(std::string_view data, size_t* pos, size_t* offset, size_t* size) {
  uint32_t n = 0;
  if (!GetVarint32(data, pos, &n) || data.size() - *pos < n) return false;
  *offset = *pos;
  *size = n;
  *pos += n;
  return true;
}
}  // namespace internal

// Calls fn(const Record&) for every record of `rep` (a whole rep, header included), in order.
// False when a record is not a Put, Delete or SingleDelete, or is malformed: then fn may have
// seen some records, and the caller must not trust a partial result.
template <typename Fn>
bool ForEachRecord(std::string_view rep, Fn&& fn) {
  if (rep.size() < kHeaderSize) return false;
  size_t pos = kHeaderSize;
  while (pos < rep.size()) {
    Record r;
    r.start = pos;
    const char tag = rep[pos++];
    switch (tag) {
      case '\x01':
      case '\x00':
      case '\x07':
        break;
      case '\x05':
      case '\x04':
      case '\x08':
        if (!internal::GetVarint32(rep, &pos, &r.cf_id)) return false;
        break;
      default:
        return false;
    }
    if (!internal::GetSlice(rep, &pos, &r.key_offset, &r.key_size)) return false;
    if (tag == '\x01' || tag == '\x05') {
      if (!internal::GetSlice(rep, &pos, &r.value_offset, &r.value_size)) return false;
    } else {
      r.deleted = true;
    }
    r.end = pos;
    fn(r);
  }
  return true;
}

// True when every record of `rep` is a Put, Delete or SingleDelete (ForEachRecord can read it).
inline bool OnlyPointRecords(std::string_view rep) {
  return ForEachRecord(rep, [](const Record&) {});
}

// Writes into *out the header of `rep` and its records ordered by (column family id, key), the
// records of one key in the order they had, and returns true. RocksDB gives a batch's records
// consecutive sequence numbers in the order they appear, so a key's later write keeps the later
// number and the batch means what it meant. Returns false, leaving *out unspecified, when `rep`
// is already in that order (write `rep` itself) or holds a record ForEachRecord cannot read (a
// range deletion: write `rep` as it is).
// Why: a memtable insert searches its skiplist from the insert hint of the column family
// (memtable_insert_with_hint_prefix_extractor, storage/rocks_options.cc), which is where the insert
// before it went; a key that follows it closely is found in a few steps, a key anywhere is a
// search from the top.
bool SortedByKey(std::string_view rep, std::string* out);

}  // namespace rockcache::storage::batch_records
