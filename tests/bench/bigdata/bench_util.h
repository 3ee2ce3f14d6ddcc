// tests/bench/bigdata/bench_util — what bigbench and rocksdb-reference share: `--name value` flag
// parsing, the SplitMix64 generator and the benchmark's key names (key:%012d, as
// redis-benchmark -r makes them). Header-only; no state; any thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace bigdata {

// One flag: its name ("--port") and what to do with its value.
struct FlagSetter {
  const char* name;
  std::function<void(const char* value)> set;
};

// Applies argv's `--name value` pairs through `flags`; false (after a message naming `program`)
// for an unknown flag or a flag without a value.
inline bool ParseFlagPairs(int argc, char** argv, const char* program,
                           const std::vector<FlagSetter>& flags) {
  for (int i = 1; i < argc; i += 2) {
    const FlagSetter* match = nullptr;
    for (const FlagSetter& f : flags) {
      if (std::strcmp(argv[i], f.name) == 0) match = &f;
    }
    if (match == nullptr) {
      std::fprintf(stderr, "%s: unknown flag %s\n", program, argv[i]);
      return false;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", program, argv[i]);
      return false;
    }
    match->set(argv[i + 1]);
  }
  return true;
}

inline uint64_t ToU64(const char* v) { return std::strtoull(v, nullptr, 10); }

// SplitMix64: a tiny, fast generator (and a good 64-bit mix of its seed).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

// Key names: "key:" and 12 decimal digits, 16 bytes.
constexpr size_t kKeySize = 16;
constexpr uint64_t kMaxKeys = 1000000000000ull;  // 12 digits

// Writes the 12 digits of key `n` (< kMaxKeys) at `out`.
inline void WriteKeyDigits(uint64_t n, char* out) {
  for (int i = 11; i >= 0; --i, n /= 10) out[i] = static_cast<char>('0' + n % 10);
}

// Writes the whole name of key `n` (kKeySize bytes, no terminator) at `out`.
inline void WriteKey(uint64_t n, char* out) {
  std::memcpy(out, "key:", 4);
  WriteKeyDigits(n, out + 4);
}

}  // namespace bigdata
