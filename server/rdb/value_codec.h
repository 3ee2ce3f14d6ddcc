// A key's value in Redis 7.0's RDB object format (what DUMP payloads and RDB files hold): the
// encoder DUMP uses and the decoder RESTORE (and an RDB import) uses. Pure, any thread.
//
// Encoding follows what redis-server 7.0 writes for a value built by its own commands, so a
// payload is byte for byte redis-server's where Redis's layout is deterministic (strings,
// listpack hashes and sorted sets, intsets, quicklists, streams): the encoding is chosen by
// EncodingLimits (the *-max-listpack-* / set-max-intset-entries / list-max-listpack-size /
// stream-node-* options), strings as rdbSaveRawString (int encoding, LZF as lzf_compress).
// Hash tables (big hashes and sets) are written in byte order, Redis writes its table's order.
//
// Decoding accepts every object type redis-server 7.0 writes or still reads (string, list,
// set, zset, hash, zset2, zipmap, ziplist, intset, zset/hash ziplist, quicklist, quicklist2 with
// packed and plain nodes, hash/zset listpack, streams v1/v2 with their consumer groups, PELs
// and consumers, and 7.2's set listpack). Every length is checked against the bytes left before
// anything is allocated; decoded memory is capped by DecodeBudget (at what a valid payload of
// that size can describe); a bad value is rejected whole (duplicates, empty
// collections, NaN scores, malformed packed encodings).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/rdb/rdb_codec.h"
#include "storage/key_value.h"

namespace rockcache::server::rdb {

// RDB object type bytes (rdb.h).
enum ObjectType : uint8_t {
  kTypeString = 0,
  kTypeList = 1,
  kTypeSet = 2,
  kTypeZSet = 3,
  kTypeHash = 4,
  kTypeZSet2 = 5,
  kTypeModule = 6,
  kTypeModule2 = 7,
  kTypeHashZipmap = 9,
  kTypeListZiplist = 10,
  kTypeSetIntset = 11,
  kTypeZSetZiplist = 12,
  kTypeHashZiplist = 13,
  kTypeListQuicklist = 14,
  kTypeStreamListpacks = 15,
  kTypeHashListpack = 16,
  kTypeZSetListpack = 17,
  kTypeListQuicklist2 = 18,
  kTypeStreamListpacks2 = 19,
  kTypeSetListpack = 20,
};

// The encoding thresholds (Redis's options of the same names; defaults are Redis 7.0's).
struct EncodingLimits {
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  int64_t set_max_intset_entries = 512;
  int64_t list_max_listpack_size = -2;
  int64_t stream_node_max_bytes = 4096;
  int64_t stream_node_max_entries = 100;
};

// Appends the object (type byte, then the value) of `value` (REQUIRES: type != kNone).
void AppendObject(std::string* out, const storage::KeyValue& value, const EncodingLimits& limits);
// DUMP's reply: AppendObject and the footer (RDB version 10, CRC-64).
std::string DumpPayload(const storage::KeyValue& value, const EncodingLimits& limits);

// The memory a decode may take: every decoded element is charged its bytes plus 32, every
// packed blob its bytes and 24 per entry, and the decode fails once the charges pass the budget:
// max(1 MiB, 4096 x the input's size). That is what a valid payload can need and no more: LZF
// expands at most 88 times and a listpack entry takes at least 2 bytes, so one payload byte
// describes at most 88 blob bytes and 44 elements (88 + 44 x (24 + 33) = 2596 charged bytes).
// Real data always fits, and no stated length or count makes the decoder allocate beyond what
// the bytes it was given can describe; what it costs beyond Redis is the decoded form (a string
// per element) that the one WriteBatch of the key is built from.
class DecodeBudget {
 public:
  explicit DecodeBudget(size_t input_size)
      : left_(std::max<uint64_t>(uint64_t{1} << 20, uint64_t{4096} * input_size)) {}
  bool Charge(uint64_t bytes) {
    if (bytes + 32 > left_) return false;
    left_ -= bytes + 32;
    return true;
  }

 private:
  uint64_t left_;
};

// Reads one object of RDB type `type` (already read) into *value (type and elements; the
// expire-at is left as it is). False when the object is malformed, truncated, empty (but
// streams), or of a type rockcache does not hold (modules): RESTORE's "Bad data format".
bool ReadObject(Reader* reader, uint8_t type, DecodeBudget* budget, storage::KeyValue* value);
// A payload's body (CheckFooter's *body): the type byte and ReadObject. Trailing bytes after
// the object are ignored, as Redis does.
bool DecodeObject(std::string_view body, storage::KeyValue* value);

}  // namespace rockcache::server::rdb
