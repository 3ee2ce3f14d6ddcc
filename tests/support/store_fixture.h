// Shared by the storage unit tests: a temp directory removed at the end of the test, Ok() to
// unwrap a StatusOr (failing the test on an error), and a fixture with a freshly opened Store
// (small memtable and block cache). Storage takes no key locks of its own (storage/store.h): a
// test that writes one key from several threads takes the key locks the way the server does,
// with cache::KeyLocks, and SweepExpired gets a WithKeyLock that takes them too.
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "cache/key_locks.h"
#include "storage/store.h"

namespace rockcache::storage::testing {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/rockcache-storage-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

template <typename T>
T Ok(StatusOr<T> r) {
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

// The server's one lock layer, for tests that write from several threads or sweep.
struct KeyLocking {
  cache::KeyLocks locks;
  // For SweepExpired: runs the critical section holding the key's lock.
  WithKeyLock with_lock = [this](std::string_view key, const std::function<void()>& critical) {
    auto guard = locks.Lock(key);
    critical();
  };
};

struct StoreFixture : KeyLocking {
  TempDir dir;
  std::unique_ptr<Store> store;
  StoreFixture() {
    Options o;
    o.dir = dir.path();
    o.write_buffer_bytes = 4 << 20;
    o.block_cache_bytes = 8 << 20;
    store = Ok(Store::Open(o));
  }
};

}  // namespace rockcache::storage::testing
