// HyperLogLog in Redis 7.0's exact representation, so that a value written by redis-server
// (PFADD, then GET/SET across) is read here and the other way round, and counts agree.
//
// A HyperLogLog is a string: a 16-byte header ("HYLL", encoding byte 0 = dense / 1 = sparse,
// three zero bytes, 8 bytes of cached cardinality, little endian, whose top bit set means
// "stale") followed by 16384 registers of 6 bits:
// - dense: 12288 bytes, register i at bit 6*i, least significant bits first;
// - sparse: a run-length code of ZERO (00xxxxxx: 1..64 zero registers), XZERO (01xxxxxx
//   yyyyyyyy: 1..16384 zero registers) and VAL (1vvvvvxx: 1..4 registers of value 1..32).
// A new HyperLogLog is sparse; it turns dense when a register needs a value above 32 or when
// the sparse form would pass kSparseMaxBytes (Redis's hll-sparse-max-bytes default).
// Elements are hashed with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick the register,
// the run of zeros above them (plus one) is the candidate value. The estimate is Otmar Ertl's
// ("New cardinality estimation algorithms for HyperLogLog sketches", arXiv:1702.01284), as
// Redis 7 computes it.
//
// Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rockcache::server::hll {

inline constexpr size_t kRegisters = 16384;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kDenseSize = kHeaderSize + kRegisters * 6 / 8;  // 12304
// Redis's hll-sparse-max-bytes default; a larger sparse form is converted to dense.
inline constexpr size_t kSparseMaxBytes = 3000;

// Redis's 64-bit MurmurHash2 (endian-neutral variant).
uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed);

// An empty sparse HyperLogLog (header + XZERO 16384), as PFADD creates it.
std::string NewSparse();

// Redis's header check (isHLLObjectOrReply): at least a header long, "HYLL" magic, a known
// encoding, and a dense value of exactly kDenseSize bytes. A corrupt sparse body passes; the
// operations below report it.
bool LooksValid(std::string_view value);

// Adds an element. Returns 1 when a register changed, 0 when none did, -1 when the sparse body is
// corrupt (the value is then unspecified). Does not touch the cached cardinality unless the
// sparse code changed (PFADD invalidates it itself when anything changed).
// REQUIRES: LooksValid(*value).
int Add(std::string* value, std::string_view element);

// Sets register `index` to `count` when that is larger, in whichever encoding the value has
// (possibly turning it dense). Same return values as Add. REQUIRES: LooksValid, index < 16384.
int SetRegister(std::string* value, size_t index, uint8_t count);

// Turns a sparse value dense (no-op when dense). False when the sparse body is corrupt.
bool ToDense(std::string* value);

bool IsDense(std::string_view value);

// max[i] = max(max[i], register i) for every register. False when the sparse body is corrupt.
// REQUIRES: LooksValid(value); max has kRegisters bytes.
bool MergeInto(std::string_view value, uint8_t* max);

// The estimate for raw registers (one byte each; PFCOUNT of several keys).
uint64_t CountRaw(const uint8_t* registers);
// The estimate for a value; nullopt when its sparse body is corrupt. Ignores the cache bytes.
std::optional<uint64_t> Count(std::string_view value);

// The cached cardinality when it is valid (top bit clear).
std::optional<uint64_t> CachedCount(std::string_view value);
void SetCachedCount(std::string* value, uint64_t count);
void InvalidateCachedCount(std::string* value);

}  // namespace rockcache::server::hll
