// The fixture of the storage unit tests of the string and keyspace commands and of the Store
// itself (tests/unit/storage/string_test.cc, keyspace_test.cc, store_test.cc): a Store opened in
// a temp dir, with Get / Set / DbSize that fail the test on an error; Now() in Unix ms; the
// SetOptions and Expiry a test asks for.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "storage/store.h"
#include "tests/support/store_fixture.h"

namespace rockcache::storage::testing::store_commands {

inline int64_t Now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::unique_ptr<Store> OpenAt(const std::string& dir) {
  Options o;
  o.dir = dir;
  o.write_buffer_bytes = 4 << 20;
  o.block_cache_bytes = 8 << 20;
  auto s = Store::Open(o);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(s).value();
}

struct Fixture : rockcache::storage::testing::KeyLocking {
  TempDir dir;
  std::unique_ptr<Store> store = OpenAt(dir.path());

  std::optional<std::string> Get(std::string_view key) {
    auto r = store->Get(key);
    REQUIRE(r.ok());
    return *r;
  }
  void Set(std::string_view key, std::string_view value, SetOptions o = {}) {
    auto r = store->Set(key, value, o);
    REQUIRE(r.ok());
    REQUIRE(r->written);
  }
  int64_t DbSize() {
    auto r = store->DbSize();
    REQUIRE(r.ok());
    return *r;
  }
};

inline SetOptions Cond(SetOptions::Condition c) {
  SetOptions o;
  o.condition = c;
  return o;
}

inline Expiry At(int64_t at_ms) {
  Expiry e;
  e.mode = Expiry::Mode::kAt;
  e.at_ms = at_ms;
  return e;
}

}  // namespace rockcache::storage::testing::store_commands
