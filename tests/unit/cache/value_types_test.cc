// cache::Cache's values beyond strings: hashes (field order, size limit, Update's mutators) and
// list heads (charge, copies, size limit, what Update keeps).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "tests/support/cache_unit_helpers.h"

using rockcache::cache::Cache;
using rockcache::cache::Lookup;
using rockcache::cache::Options;
using rockcache::cache::Value;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace value_types_test {

using rockcache::cache::testing::Cached;
using rockcache::cache::testing::kNow;
using rockcache::cache::testing::SumOfCharges;

TEST_CASE("hashes: FindField, sorted order, size limit, Update mutators", "[cache][hash]") {
  const Value unsorted =
      Value::HashFromUnsorted({{"b", "2"}, {"\xff", "hi"}, {"a", "1"}, {"b", "3"}, {"B", "upper"}});
  REQUIRE(unsorted.IsWellFormed());
  REQUIRE(unsorted.fields.size() == 4);
  CHECK(unsorted.fields[0].first == "B");     // 0x42
  CHECK(unsorted.fields[1].first == "a");     // 0x61
  CHECK(unsorted.fields[3].first == "\xff");  // binary order: above ASCII
  CHECK(*unsorted.FindField("b") == "3");     // the last of a repeated name wins
  CHECK(unsorted.FindField("c") == nullptr);

  Options o;
  o.max_hash_fields = 4;
  Cache cache(o);
  REQUIRE(cache.Put("h", Value::Hash({{"f1", "v1"}, {"f2", "v2"}}), 0));
  std::string f2;
  CHECK(cache.Visit("h", kNow, [&](const Value& v) {
    REQUIRE(v.is_hash());
    f2 = *v.FindField("f2");
  }) == Lookup::kHit);
  CHECK(f2 == "v2");

  SECTION("a hash with too many fields is not cached and drops the old entry") {
    CHECK_FALSE(cache.Put(
        "h", Value::Hash({{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}}), 0));
    CHECK_FALSE(Cached(cache, "h"));
    CHECK(cache.GetStats().rejected == 1);
    CHECK_FALSE(cache.Put("empty", Value::Hash({}), 0));
  }
  SECTION("HSET / HDEL in place") {
    CHECK(cache.Update("h", kNow, [](Value& v, int64_t&) {
      CHECK(v.SetField("f0", "v0"));         // new, inserted in order
      CHECK_FALSE(v.SetField("f1", "v1b"));  // replaced
      CHECK(v.EraseField("f2"));
      return true;
    }));
    std::vector<Value::Field> fields;
    cache.Peek("h", kNow, [&](const Value& v) { fields = v.fields; });
    CHECK(fields == std::vector<Value::Field>{{"f0", "v0"}, {"f1", "v1b"}});
    CHECK(cache.GetStats().updates == 1);
    CHECK(cache.GetStats().bytes_used == SumOfCharges(cache));
  }
  SECTION("a mutator returning false erases") {
    CHECK(cache.Update("h", kNow, [](Value&, int64_t&) { return false; }));
    CHECK_FALSE(Cached(cache, "h"));
    CHECK(cache.GetStats().erases == 1);
    CHECK(cache.GetStats().bytes_used == 0);
  }
  SECTION("growing past max_hash_fields or emptying erases") {
    CHECK(cache.Update("h", kNow, [](Value& v, int64_t&) {
      for (const char* f : {"x", "y", "z"}) v.SetField(f, "1");
      return true;
    }));
    CHECK_FALSE(Cached(cache, "h"));
    REQUIRE(cache.Put("h2", Value::Hash({{"only", "1"}}), 0));
    CHECK(cache.Update("h2", kNow, [](Value& v, int64_t&) { return v.EraseField("only"); }));
    CHECK_FALSE(Cached(cache, "h2"));
    CHECK(cache.GetStats().bytes_used == 0);
  }
  SECTION("Update of an absent key does nothing") {
    bool called = false;
    CHECK_FALSE(cache.Update("nope", kNow, [&](Value&, int64_t&) { return called = true; }));
    CHECK_FALSE(called);
  }
}

TEST_CASE("list heads: charge, copies, size limit, Update keep rule", "[cache][list]") {
  const Value head = Value::List({"a", std::string(20, 'b')}, 5);
  REQUIRE(head.IsWellFormed());
  CHECK(Cache::Charge("l", head) == Cache::kEntryOverhead + 1 + Cache::kHeapBlockOverhead +
                                        Cache::kListHeadOverhead + (Cache::kElementOverhead + 1) +
                                        (Cache::kElementOverhead + 20 + Cache::kHeapBlockOverhead));
  Value copy = head;  // a deep copy: editing it leaves the original alone
  copy.list->PopFront();
  CHECK(head.list->elements.size() == 2);
  CHECK(copy != head);
  // The charge follows edits without walking the head: equal to a head built from scratch.
  copy.list->PushBack(std::string(30, 'c'));
  copy.list->PushFront("d");
  copy.list->PopBack();
  copy.list->PushBack("e");
  CHECK(Cache::Charge("l", copy) == Cache::Charge("l", Value::List(copy.list->elements, 5)));
  CHECK(copy.list->element_bytes == 20 + 1 + 1);
  CHECK(copy.list->heap_elements == 1);

  Options o;
  o.max_list_elements = 3;
  Cache cache(o);
  REQUIRE(cache.Put("l", Value::List({"a", "b"}, 10), 0));
  uint64_t length = 0;
  CHECK(cache.Visit("l", kNow, [&](const Value& v) {
    REQUIRE(v.is_list());
    length = v.list->length;
  }) == Lookup::kHit);
  CHECK(length == 10);

  SECTION("a head longer than max_list_elements is not cached and drops the old entry") {
    CHECK_FALSE(cache.Put("l", Value::List({"a", "b", "c", "d"}, 4), 0));
    CHECK_FALSE(Cached(cache, "l"));
    CHECK(cache.GetStats().rejected == 1);
  }
  SECTION("an edited head is kept while it is well formed and within the limit") {
    CHECK(cache.Update("l", kNow, [](Value& v, int64_t&) {
      v.list->PushFront("z");
      v.list->length = 11;
      return true;
    }));
    CHECK(Cached(cache, "l"));
    CHECK(cache.GetStats().bytes_used == SumOfCharges(cache));
    CHECK(cache.Update("l", kNow, [](Value& v, int64_t&) {
      v.list->PushFront("y");  // 4 elements: past the limit
      return true;
    }));
    CHECK_FALSE(Cached(cache, "l"));
    REQUIRE(cache.Put("l2", Value::List({"a"}, 1), 0));
    CHECK(cache.Update("l2", kNow, [](Value& v, int64_t&) {
      v.list->length = 0;  // longer than its list: dropped
      return true;
    }));
    CHECK_FALSE(Cached(cache, "l2"));
    REQUIRE(cache.Put("l3", Value::List({"a"}, 1), 0));
    CHECK(cache.Update("l3", kNow, [](Value& v, int64_t&) {
      v.list->PopFront();  // an empty head answers nothing: dropped
      return true;
    }));
    CHECK_FALSE(Cached(cache, "l3"));
    CHECK(cache.GetStats().bytes_used == 0);
  }
  SECTION("max_list_elements 0: lists are not cached") {
    Options none;
    none.max_list_elements = 0;
    Cache off(none);
    CHECK_FALSE(off.Put("l", Value::List({"a"}, 1), 0));
    CHECK(off.Put("s", Value::String("a"), 0));
  }
}

}  // namespace value_types_test
