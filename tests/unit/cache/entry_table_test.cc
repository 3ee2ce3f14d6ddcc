// cache/shard.h EntryTable: lookups, inserts and removals stay right when chains are long and
// their first entries' tags collide, match or differ (the bucket word's tag and "more" bit),
// compared against a std::map through a random sequence of operations; growth keeps them right.
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cache/shard.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace entry_table_test {

namespace {

using rockcache::cache::Value;
using rockcache::cache::internal::DeleteChain;
using rockcache::cache::internal::Entry;
using rockcache::cache::internal::EntryTable;
using rockcache::cache::internal::NewEntry;

// A hash that puts key n into one of 4 buckets of a 64-bucket table (bits 32+) with one of 3
// tags (bits 16-30): chains of dozens of entries where tags collide.
uint64_t CraftedHash(uint64_t n) {
  return ((n % 4) << 32) | (((n / 4) % 3) << 16) | ((n * 0x9e3779b97f4a7c15ull) & 0xffff);
}

}  // namespace

TEST_CASE("entry_table: chains with colliding tags answer like a map", "[cache]") {
  EntryTable table;
  std::map<std::string, Entry*> model;
  std::mt19937_64 rng(11);
  Entry* garbage = nullptr;
  auto drop = [&](Entry* e) {
    e->next_hash = garbage;
    garbage = e;
  };
  for (int step = 0; step < 20000; ++step) {
    const uint64_t n = rng() % 200;
    const std::string key = "k" + std::to_string(n);
    const uint64_t hash = CraftedHash(n);
    Entry* found = table.Lookup(key, hash, 0);
    auto it = model.find(key);
    REQUIRE(found == (it == model.end() ? nullptr : it->second));
    // Another database's entry of the same key and hash is another entry.
    REQUIRE(table.Lookup(key, hash, 1) == nullptr);
    if (found == nullptr) {
      Entry* e = NewEntry(key, hash, Value::String("v"), 0, 1);
      table.Insert(e);
      model[key] = e;
    } else if (rng() % 2 == 0) {
      table.Remove(found);
      model.erase(it);
      drop(found);
    }
    REQUIRE(table.size() == model.size());
  }
  // Past 64 entries the table has grown, and every key is still found.
  for (uint64_t n = 200; n < 400; ++n) {
    Entry* e = NewEntry("k" + std::to_string(n), CraftedHash(n), Value::String("v"), 0, 1);
    table.Insert(e);
    model["k" + std::to_string(n)] = e;
  }
  CHECK(table.bucket_count() >= 256);
  for (uint64_t n = 0; n < 400; ++n) {
    const std::string key = "k" + std::to_string(n);
    auto it = model.find(key);
    REQUIRE(table.Lookup(key, CraftedHash(n), 0) == (it == model.end() ? nullptr : it->second));
  }
  for (auto& [key, e] : model) {
    table.Remove(e);
    drop(e);
  }
  CHECK(table.size() == 0);
  DeleteChain(garbage);
}

}  // namespace entry_table_test
