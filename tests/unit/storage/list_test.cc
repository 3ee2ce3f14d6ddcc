// storage::Store lists against a real RocksDB in a temp dir.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/store.h"
#include "tests/support/store_fixture.h"

using namespace rockcache;
using namespace rockcache::storage;
using namespace rockcache::storage::testing;
using namespace std::string_literals;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace list_test {

namespace {

struct Fixture : StoreFixture {
  std::vector<std::string> All(std::string_view key) { return Ok(store->LRange(key, 0, -1)); }
  void Fill(std::string_view key, const std::vector<std::string_view>& items) {
    REQUIRE(store->Del({key}).ok());
    REQUIRE(store->RPush(key, items).ok());
  }
};

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE_METHOD(Fixture, "push and pop at both ends", "[storage][list]") {
  CHECK(Ok(store->LPush("l", {"a", "b", "c"})) == 3);  // c b a
  CHECK(Ok(store->RPush("l", {"x", "y"})) == 5);       // c b a x y
  CHECK(All("l") == Strings{"c", "b", "a", "x", "y"});
  CHECK(Ok(store->LLen("l")) == 5);
  CHECK(*Ok(store->LPop("l", 1)) == Strings{"c"});
  CHECK(*Ok(store->RPop("l", 2)) == Strings{"y", "x"});  // tail first
  CHECK(Ok(store->LPop("l", 0))->empty());
  CHECK(*Ok(store->LPop("l", 10)) == Strings{"b", "a"});
  CHECK(Ok(store->Exists({"l"})) == 0);  // emptied: gone
  CHECK_FALSE(Ok(store->LPop("l", 1)).has_value());
  CHECK_FALSE(Ok(store->RPop("l", 0)).has_value());
  CHECK(Ok(store->DbSize()) == 0);

  CHECK(Ok(store->LPushX("l", {"a"})) == 0);
  CHECK(Ok(store->RPushX("l", {"a"})) == 0);
  CHECK(Ok(store->Exists({"l"})) == 0);
  Ok(store->RPush("l", {"m"}));
  CHECK(Ok(store->LPushX("l", {"l"})) == 2);
  CHECK(Ok(store->RPushX("l", {"n", "o"})) == 4);
  CHECK(All("l") == Strings{"l", "m", "n", "o"});
  CHECK(Ok(store->Type("l")) == KeyType::kList);
  // Binary elements.
  Ok(store->RPush("b", {"\0"s, ""}));
  CHECK(All("b") == Strings{"\0"s, ""});
}

TEST_CASE_METHOD(Fixture, "LRange / LIndex / LSet index rules", "[storage][list]") {
  Fill("l", {"0", "1", "2", "3", "4"});
  CHECK(Ok(store->LRange("l", 1, 3)) == Strings{"1", "2", "3"});
  CHECK(Ok(store->LRange("l", -2, -1)) == Strings{"3", "4"});
  CHECK(Ok(store->LRange("l", -100, 100)) == Strings{"0", "1", "2", "3", "4"});
  CHECK(Ok(store->LRange("l", 3, 1)).empty());
  CHECK(Ok(store->LRange("l", 5, 10)).empty());
  CHECK(Ok(store->LRange("none", 0, -1)).empty());
  CHECK(Ok(store->LIndex("l", 0)) == "0");
  CHECK(Ok(store->LIndex("l", -1)) == "4");
  CHECK_FALSE(Ok(store->LIndex("l", 5)).has_value());
  CHECK_FALSE(Ok(store->LIndex("l", -6)).has_value());
  CHECK_FALSE(Ok(store->LIndex("none", 0)).has_value());
  REQUIRE(store->LSet("l", -2, "three").ok());
  CHECK(Ok(store->LIndex("l", 3)) == "three");
  Status s = store->LSet("l", 5, "x");
  CHECK(s.IsInvalidArgument());
  CHECK(s.message() == "index out of range");
  s = store->LSet("none", 0, "x");
  CHECK(s.message() == "no such key");
}

TEST_CASE_METHOD(Fixture, "LHead reads the head a range lies in, with the list's length",
                 "[storage][list]") {
  Fill("l", {"0", "1", "2", "3", "4"});
  REQUIRE(Ok(store->ExpireAt("l", 4'000'000'000'000, ExpireCondition::kAlways)));
  ListHeadRead head = Ok(store->LHead("l", 1, 2, 8, kNoByteLimit));
  CHECK(head.found);
  CHECK(head.length == 5);
  CHECK(head.expire_at_ms == 4'000'000'000'000);
  CHECK(head.span.begin == 1);
  CHECK(head.span.end == 3);
  CHECK(head.elements == Strings{"0", "1", "2"});  // from index 0 to the range's end
  head = Ok(store->LHead("l", -2, -1, 8, kNoByteLimit));
  CHECK(head.elements == Strings{"0", "1", "2", "3", "4"});
  // A range ending past max_elements, or selecting nothing: the length, no elements.
  head = Ok(store->LHead("l", 0, 3, 3, kNoByteLimit));
  CHECK(head.length == 5);
  CHECK(head.span.end == 4);
  CHECK(head.elements.empty());
  head = Ok(store->LHead("l", 3, 1, 8, kNoByteLimit));
  CHECK(head.span.begin == head.span.end);
  CHECK(head.elements.empty());
  // Past max_bytes: OverLimit.
  CHECK(store->LHead("l", 0, -1, 8, 3).status().IsOverLimit());
  // Absent, and another type.
  CHECK_FALSE(Ok(store->LHead("none", 0, -1, 8, kNoByteLimit)).found);
  REQUIRE(store->MSet({{"s", "v"}}).ok());
  CHECK(store->LHead("s", 0, -1, 8, kNoByteLimit).status().IsWrongType());
}

TEST_CASE_METHOD(Fixture, "LRem from the head, the tail, or all", "[storage][list]") {
  Fill("l", {"a", "x", "b", "x", "c", "x"});
  CHECK(Ok(store->LRem("l", 2, "x")) == 2);
  CHECK(All("l") == Strings{"a", "b", "c", "x"});
  Fill("l", {"a", "x", "b", "x", "c", "x"});
  CHECK(Ok(store->LRem("l", -2, "x")) == 2);
  CHECK(All("l") == Strings{"a", "x", "b", "c"});
  Fill("l", {"x", "a", "x", "x"});
  CHECK(Ok(store->LRem("l", 0, "x")) == 3);
  CHECK(All("l") == Strings{"a"});
  CHECK(Ok(store->LLen("l")) == 1);
  CHECK(Ok(store->LRem("l", 0, "nope")) == 0);
  CHECK(Ok(store->LRem("l", 1, "a")) == 1);
  CHECK(Ok(store->Exists({"l"})) == 0);
  CHECK(Ok(store->LRem("none", 0, "a")) == 0);
  // After a rewrite both ends still work.
  Fill("l", {"a", "x", "b"});
  Ok(store->LRem("l", 1, "x"));
  Ok(store->LPush("l", {"h"}));
  Ok(store->RPush("l", {"t"}));
  CHECK(All("l") == Strings{"h", "a", "b", "t"});
}

TEST_CASE_METHOD(Fixture, "LTrim", "[storage][list]") {
  Fill("l", {"0", "1", "2", "3", "4"});
  REQUIRE(store->LTrim("l", 1, -2).ok());
  CHECK(All("l") == Strings{"1", "2", "3"});
  REQUIRE(store->LTrim("l", 0, 100).ok());
  CHECK(All("l") == Strings{"1", "2", "3"});
  REQUIRE(store->LTrim("l", -1, -1).ok());
  CHECK(All("l") == Strings{"3"});
  REQUIRE(store->LTrim("l", 5, 10).ok());
  CHECK(Ok(store->Exists({"l"})) == 0);
  REQUIRE(store->LTrim("none", 0, 1).ok());
  // Large trims use range deletions; the survivors and both ends stay right.
  std::vector<std::string> items;
  for (int i = 0; i < 1000; ++i) items.push_back(std::to_string(i));
  std::vector<std::string_view> views(items.begin(), items.end());
  Fill("big", views);
  REQUIRE(store->LTrim("big", 300, 699).ok());
  CHECK(Ok(store->LLen("big")) == 400);
  CHECK(Ok(store->LIndex("big", 0)) == "300");
  CHECK(Ok(store->LIndex("big", -1)) == "699");
  CHECK(*Ok(store->LPop("big", 1)) == Strings{"300"});
  Ok(store->LPush("big", {"new"}));
  Ok(store->RPush("big", {"end"}));
  CHECK(Ok(store->LRange("big", 0, 1)) == Strings{"new", "301"});
  CHECK(Ok(store->LRange("big", -2, -1)) == Strings{"699", "end"});
  CHECK(Ok(store->LLen("big")) == 401);
  CHECK(*Ok(store->RPop("big", 200)) == [] {
    Strings s{"end"};
    for (int i = 699; i > 500; --i) s.push_back(std::to_string(i));
    return s;
  }());
}

TEST_CASE_METHOD(Fixture, "LInsert", "[storage][list]") {
  Fill("l", {"a", "b", "c"});
  CHECK(Ok(store->LInsert("l", true, "b", "x")) == 4);
  CHECK(All("l") == Strings{"a", "x", "b", "c"});
  CHECK(Ok(store->LInsert("l", false, "c", "y")) == 5);
  CHECK(All("l") == Strings{"a", "x", "b", "c", "y"});
  CHECK(Ok(store->LInsert("l", true, "a", "first")) == 6);
  CHECK(Ok(store->LIndex("l", 0)) == "first");
  CHECK(Ok(store->LInsert("l", true, "nope", "z")) == -1);
  CHECK(Ok(store->LInsert("none", true, "a", "z")) == 0);
  CHECK(Ok(store->Exists({"none"})) == 0);
  CHECK(*Ok(store->RPop("l", 1)) == Strings{"y"});
  CHECK(Ok(store->LLen("l")) == 5);
}

TEST_CASE_METHOD(Fixture, "LPos with RANK, COUNT, MAXLEN", "[storage][list]") {
  Fill("l", {"a", "b", "c", "1", "2", "3", "c", "c"});
  using Ints = std::vector<int64_t>;
  CHECK(Ok(store->LPos("l", "c", 1, 1, 0)) == Ints{2});
  CHECK(Ok(store->LPos("l", "c", 2, 1, 0)) == Ints{6});
  CHECK(Ok(store->LPos("l", "c", -1, 1, 0)) == Ints{7});
  CHECK(Ok(store->LPos("l", "c", 1, 0, 0)) == Ints{2, 6, 7});
  CHECK(Ok(store->LPos("l", "c", 1, 2, 0)) == Ints{2, 6});
  CHECK(Ok(store->LPos("l", "c", -1, 2, 0)) == Ints{7, 6});
  CHECK(Ok(store->LPos("l", "c", -2, 0, 0)) == Ints{6, 2});
  CHECK(Ok(store->LPos("l", "c", 1, 0, 3)) == Ints{2});
  CHECK(Ok(store->LPos("l", "c", 1, 0, 2)).empty());
  CHECK(Ok(store->LPos("l", "c", -1, 0, 2)) == Ints{7, 6});
  CHECK(Ok(store->LPos("l", "zz", 1, 0, 0)).empty());
  CHECK(Ok(store->LPos("l", "c", 10, 0, 0)).empty());
  CHECK(Ok(store->LPos("none", "c", 1, 1, 0)).empty());
  CHECK(store->LPos("l", "c", 0, 1, 0).status().IsInvalidArgument());
}

TEST_CASE_METHOD(Fixture, "LMove between and within lists", "[storage][list]") {
  Fill("src", {"a", "b", "c"});
  CHECK(Ok(store->LMove("src", "dst", ListEnd::kRight, ListEnd::kLeft)) == "c");  // RPOPLPUSH
  CHECK(All("src") == Strings{"a", "b"});
  CHECK(All("dst") == Strings{"c"});
  CHECK(Ok(store->LMove("src", "dst", ListEnd::kLeft, ListEnd::kRight)) == "a");
  CHECK(All("dst") == Strings{"c", "a"});
  CHECK(Ok(store->DbSize()) == 2);
  CHECK(Ok(store->LMove("src", "dst", ListEnd::kLeft, ListEnd::kLeft)) == "b");
  CHECK(Ok(store->Exists({"src"})) == 0);
  CHECK(All("dst") == Strings{"b", "c", "a"});
  CHECK(Ok(store->DbSize()) == 1);
  CHECK_FALSE(Ok(store->LMove("src", "dst", ListEnd::kLeft, ListEnd::kLeft)).has_value());
  // Rotation.
  CHECK(Ok(store->LMove("dst", "dst", ListEnd::kRight, ListEnd::kLeft)) == "a");
  CHECK(All("dst") == Strings{"a", "b", "c"});
  CHECK(Ok(store->LMove("dst", "dst", ListEnd::kLeft, ListEnd::kRight)) == "a");
  CHECK(All("dst") == Strings{"b", "c", "a"});
  Fill("one", {"x"});
  CHECK(Ok(store->LMove("one", "one", ListEnd::kLeft, ListEnd::kRight)) == "x");
  CHECK(All("one") == Strings{"x"});
  // Types: src absent wins; then src and dst must be lists.
  Ok(store->Set("str", "v", {}));
  CHECK_FALSE(Ok(store->LMove("none", "str", ListEnd::kLeft, ListEnd::kLeft)).has_value());
  CHECK(store->LMove("dst", "str", ListEnd::kLeft, ListEnd::kLeft).status().IsWrongType());
  CHECK(store->LMove("str", "dst", ListEnd::kLeft, ListEnd::kLeft).status().IsWrongType());
  CHECK(All("dst") == Strings{"b", "c", "a"});
}

TEST_CASE_METHOD(Fixture, "list WRONGTYPE and version isolation", "[storage][list]") {
  Ok(store->Set("s", "v", {}));
  CHECK(store->LPush("s", {"a"}).status().IsWrongType());
  CHECK(store->RPushX("s", {"a"}).status().IsWrongType());
  CHECK(store->LPop("s", 1).status().IsWrongType());
  CHECK(store->LRange("s", 0, -1).status().IsWrongType());
  CHECK(store->LLen("s").status().IsWrongType());
  CHECK(store->LIndex("s", 0).status().IsWrongType());
  CHECK(store->LSet("s", 0, "x").IsWrongType());
  CHECK(store->LRem("s", 0, "x").status().IsWrongType());
  CHECK(store->LTrim("s", 0, 1).IsWrongType());
  CHECK(store->LInsert("s", true, "a", "b").status().IsWrongType());
  CHECK(store->LPos("s", "a", 1, 0, 0).status().IsWrongType());

  Fill("l", {"1", "2", "3"});
  CHECK(Ok(store->Del({"l"})) == 1);
  Ok(store->RPush("l", {"new"}));
  CHECK(All("l") == Strings{"new"});
  CHECK(Ok(store->LLen("l")) == 1);
  // Popping a whole list drops only the meta; the next list does not see the old entries.
  Fill("p", {"1", "2", "3"});
  CHECK(Ok(store->LPop("p", 3))->size() == 3);
  Ok(store->RPush("p", {"x"}));
  CHECK(All("p") == Strings{"x"});
}

// Pops move the list's head or tail and leave the popped elements where they were (no tombstone
// per element): no read may see them, a push reuses their indexes, COPY leaves them behind, and
// compaction drops them.
TEST_CASE_METHOD(Fixture, "popped elements stay invisible and compaction drops them",
                 "[storage][list]") {
  std::vector<std::string> items;
  for (int i = 0; i < 1000; ++i) items.push_back("e" + std::to_string(i));
  std::vector<std::string_view> views(items.begin(), items.end());
  Fill("l", views);
  for (int i = 0; i < 100; ++i) REQUIRE(Ok(store->LPop("l", 1))->at(0) == items[i]);
  REQUIRE(Ok(store->LPop("l", 300))->size() == 300);  // the iterator path
  for (int i = 999; i >= 900; --i) REQUIRE(Ok(store->RPop("l", 1))->at(0) == items[i]);
  REQUIRE(Ok(store->RPop("l", 200))->size() == 200);
  // Live: e400 .. e699.
  Strings want(items.begin() + 400, items.begin() + 700);
  CHECK(All("l") == want);
  CHECK(Ok(store->LLen("l")) == 300);
  CHECK(Ok(store->LIndex("l", 0)) == std::optional<std::string>("e400"));
  CHECK(Ok(store->LIndex("l", -1)) == std::optional<std::string>("e699"));
  CHECK(Ok(store->LIndex("l", 300)) == std::nullopt);
  // LPOS from either end stops at the live range (no popped element is found).
  CHECK(Ok(store->LPos("l", "e950", 1, 0, 0)).empty());
  CHECK(Ok(store->LPos("l", "e50", -1, 0, 0)).empty());
  CHECK(Ok(store->LPos("l", "e699", 1, 0, 0)) == std::vector<int64_t>{299});
  // Pushes reuse the popped indexes.
  REQUIRE(Ok(store->LPush("l", {"front"})) == 301);
  REQUIRE(Ok(store->RPush("l", {"back"})) == 302);
  want.insert(want.begin(), "front");
  want.push_back("back");
  CHECK(All("l") == want);
  REQUIRE(Ok(store->Copy("l", "copy", 0, false)));
  CHECK(All("copy") == want);
  // Compaction keeps the live elements of both lists only.
  REQUIRE(store->CompactAll().ok());
  CHECK(Ok(store->CountDataEntries()) == 2 * 302);
  CHECK(All("l") == want);
}

// A sliced read holds a snapshot: elements popped after it began stay readable through it, even
// across a compaction (RocksDB's compaction filters ignore snapshots; the filter keeps them).
TEST_CASE_METHOD(Fixture, "a sliced LRANGE keeps what it saw while pops and compactions run",
                 "[storage][list][slicing]") {
  std::vector<std::string> items;
  for (int i = 0; i < 2000; ++i) items.push_back("e" + std::to_string(i));
  Fill("l", std::vector<std::string_view>(items.begin(), items.end()));
  REQUIRE(store->CompactAll().ok());  // the elements are in SST files
  RangeQuery q;
  q.kind = RangeQuery::Kind::kList;
  q.key = "l";
  auto read = Ok(store->OpenRangeRead(q));
  std::vector<RangeItem> got;
  uint64_t emitted = 0;
  bool done = false;
  REQUIRE(read->Next(100, &got, &emitted, &done).ok());
  REQUIRE(Ok(store->LPop("l", 1500))->size() == 1500);
  REQUIRE(store->CompactAll().ok());
  while (!done) REQUIRE(read->Next(100, &got, &emitted, &done).ok());
  REQUIRE(got.size() == items.size());
  for (size_t i = 0; i < items.size(); ++i) REQUIRE(got[i].key == items[i]);
  read.reset();
  // With that snapshot gone, the next compaction drops the popped elements, even while a
  // snapshot taken after the pops is open (it does not need them).
  auto later = Ok(store->OpenRangeRead(q));
  REQUIRE(store->CompactAll().ok());
  CHECK(Ok(store->CountDataEntries()) == 500);
  later.reset();
  CHECK(Ok(store->LRange("l", 0, 0)) == Strings{"e1500"});
}

}  // namespace list_test
