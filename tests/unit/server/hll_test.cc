// server/commands/hll: Redis 7.0's HyperLogLog representation and estimate (golden values from
// redis-server 7.0).
#include "server/commands/hll.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

namespace hll = rockcache::server::hll;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace hll_test {

namespace {

std::string Bytes(const char* data, size_t n) { return std::string(data, n); }

std::vector<uint8_t> Registers(const std::string& value) {
  std::vector<uint8_t> regs(hll::kRegisters, 0);
  REQUIRE(hll::MergeInto(value, regs.data()));
  return regs;
}

}  // namespace

TEST_CASE("hll: a new value is sparse, empty, with a valid zero cache", "[hll][unit]") {
  std::string v = hll::NewSparse();
  CHECK(v == Bytes("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff", 18));
  CHECK(hll::LooksValid(v));
  CHECK_FALSE(hll::IsDense(v));
  CHECK(hll::Count(v) == 0u);
  CHECK(hll::CachedCount(v) == 0u);
}

TEST_CASE("hll: PFADD a gives redis-server's bytes", "[hll][unit]") {
  std::string v = hll::NewSparse();
  CHECK(hll::Add(&v, "a") == 1);
  CHECK(hll::Add(&v, "a") == 0);
  CHECK(v == Bytes("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80q\xa6\x84NW", 21));
  CHECK_FALSE(hll::CachedCount(v).has_value());  // stale after a change
  CHECK(hll::Count(v) == 1u);
  hll::SetCachedCount(&v, 1);
  CHECK(hll::CachedCount(v) == 1u);
}

TEST_CASE("hll: sparse grows to dense past the size limit, registers kept", "[hll][unit]") {
  std::string v = hll::NewSparse();
  int i = 0;
  while (!hll::IsDense(v)) {
    REQUIRE(hll::Add(&v, "e" + std::to_string(i++)) >= 0);
    if (!hll::IsDense(v)) {
      REQUIRE(v.size() <= hll::kSparseMaxBytes);
      std::string dense = v;
      REQUIRE(hll::ToDense(&dense));
      REQUIRE(Registers(dense) == Registers(v));  // both encodings hold the same registers
    }
  }
  CHECK(v.size() == hll::kDenseSize);
  while (i < 5000) REQUIRE(hll::Add(&v, "e" + std::to_string(i++)) >= 0);
  CHECK(hll::Count(v) == 4968u);  // redis-server: PFADD e0..e4999, PFCOUNT -> 4968
  CHECK(hll::CountRaw(Registers(v).data()) == 4968u);
}

TEST_CASE("hll: header checks and corrupt sparse bodies", "[hll][unit]") {
  CHECK_FALSE(hll::LooksValid("HYLL"));
  CHECK_FALSE(hll::LooksValid(Bytes("HYLX\x01\0\0\0\0\0\0\0\0\0\0\0", 16)));
  CHECK_FALSE(hll::LooksValid(Bytes("HYLL\x02\0\0\0\0\0\0\0\0\0\0\0", 16)));
  CHECK_FALSE(hll::LooksValid(Bytes("HYLL\0\0\0\0\0\0\0\0\0\0\0\0", 16)));  // dense, too short
  std::string corrupt = Bytes("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x41", 17);    // covers 257 registers
  CHECK(hll::LooksValid(corrupt));
  CHECK_FALSE(hll::Count(corrupt).has_value());
  std::vector<uint8_t> regs(hll::kRegisters, 0);
  CHECK_FALSE(hll::MergeInto(corrupt, regs.data()));
  CHECK_FALSE(hll::ToDense(&corrupt));
}

TEST_CASE("hll: MurmurHash64A is Redis's (endian-neutral) hash", "[hll][unit]") {
  // Same input, same output whatever the length's tail; seed matters.
  CHECK(hll::MurmurHash64A("abcdefghi", 9, 0xadc83b19) != hll::MurmurHash64A("abcdefghi", 9, 0));
  CHECK(hll::MurmurHash64A("", 0, 0) == hll::MurmurHash64A("", 0, 0));
}

TEST_CASE("hll: random register updates agree with a plain array in both encodings",
          "[hll][unit]") {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 20; ++round) {
    std::string v = hll::NewSparse();
    std::vector<uint8_t> model(hll::kRegisters, 0);
    int updates = 1 + static_cast<int>(rng() % 3000);
    bool clustered = round % 2 == 0;  // neighbouring registers exercise the VAL merges
    for (int i = 0; i < updates; ++i) {
      size_t index = clustered ? (rng() % 64) * 7 + rng() % 5 : rng() % hll::kRegisters;
      auto count = static_cast<uint8_t>(1 + rng() % (rng() % 50 == 0 ? 50 : 6));
      int changed = hll::SetRegister(&v, index, count);
      REQUIRE(changed == (count > model[index] ? 1 : 0));
      if (count > model[index]) model[index] = count;
    }
    REQUIRE(hll::LooksValid(v));
    REQUIRE(Registers(v) == model);
    REQUIRE(hll::Count(v) == hll::CountRaw(model.data()));
  }
}

}  // namespace hll_test
