// The encodings older Redis versions wrote and Redis 7.0 still RESTOREs: ziplist (lists, hashes
// and sorted sets before 7.0, quicklist nodes before 7.0), zipmap (hashes before 2.6) and intset
// (small integer sets, still current). Validating decoders (and the intset encoder); pure, any
// thread. Like DecodeListpack (listpack.h), they never read past their input and allocate one
// value per entry found (each at least 2 bytes of input), never per stated count.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "server/rdb/listpack.h"

namespace rockcache::server::rdb {

// Ziplist: [zlbytes u32 LE][zltail u32 LE][zllen u16 LE, 65535 = unknown] entries [0xFF]; an
// entry is [prevlen: 1 byte < 254, or 0xFE + u32 LE][encoding][data]. False when malformed
// (sizes, tail offset, prevlen chain, count, end byte) or past `max_entries`.
bool DecodeZiplist(std::string_view zl, std::vector<PackedValue>* out,
                   uint64_t max_entries = UINT64_MAX);

// Zipmap: [count u8] then (len key len free value [free bytes]) pairs, [0xFF]; lengths are one
// byte < 254 or 254 + u32 LE. Appends key, value, key, value... False when malformed.
bool DecodeZipmap(std::string_view zm, std::vector<PackedValue>* out);

// Intset: [encoding u32 LE: 2, 4 or 8][length u32 LE] then the integers, little endian, strictly
// ascending. False when malformed.
bool DecodeIntset(std::string_view is, std::vector<int64_t>* out);
// The intset of `sorted` (strictly ascending) in the narrowest encoding that holds them all.
std::string EncodeIntset(const std::vector<int64_t>& sorted);

}  // namespace rockcache::server::rdb
