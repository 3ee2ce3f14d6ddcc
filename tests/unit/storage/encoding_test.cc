#include "storage/encoding.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "storage/numbers.h"

using namespace rockcache::storage;
using namespace std::string_literals;

TEST_CASE("meta records round-trip for every type", "[storage][encoding]") {
  Meta str;
  str.type = MetaType::kString;
  str.version = 42;
  str.expire_at_ms = 1700000000123;
  str.value = "va\0lue"s;
  Meta out;
  REQUIRE(DecodeMeta(EncodeMeta(str), &out));
  CHECK(out.type == MetaType::kString);
  CHECK(out.version == 42);
  CHECK(out.expire_at_ms == 1700000000123);
  CHECK(out.value == "va\0lue"s);

  Meta list;
  list.type = MetaType::kList;
  list.version = 7;
  list.head = kListInitialIndex - 3;
  list.tail = kListInitialIndex + 2;
  list.count = 5;
  REQUIRE(DecodeMeta(EncodeMeta(list), &out));
  CHECK(out.type == MetaType::kList);
  CHECK(out.head == kListInitialIndex - 3);
  CHECK(out.tail == kListInitialIndex + 2);
  CHECK(out.count == 5);

  Meta hash;
  hash.type = MetaType::kHash;
  hash.version = UINT64_MAX;
  hash.count = 1000000;
  std::string bytes = EncodeMeta(hash);
  CHECK(bytes.size() == kMetaHeaderSize);
  REQUIRE(DecodeMeta(bytes, &out));
  CHECK(out.type == MetaType::kHash);
  CHECK(out.version == UINT64_MAX);
  CHECK(out.count == 1000000);
  CHECK(out.expire_at_ms == 0);

  CHECK_FALSE(DecodeMeta("", &out));
  CHECK_FALSE(DecodeMeta(std::string(kMetaHeaderSize, '\0'), &out));  // type 0 is not a type
  list.count = 4;                                                     // inconsistent with head/tail
  CHECK_FALSE(DecodeMeta(EncodeMeta(list), &out));
}

TEST_CASE("data keys are binary safe and never collide across keys", "[storage][encoding]") {
  for (std::string key : {""s, "a"s, "a\0b"s, "\0"s, "\xff\xff"s}) {
    std::string dk = DataKey(key, 99, "field\0x"s);
    std::string_view k, sub;
    uint64_t version = 0;
    REQUIRE(ParseDataKey(dk, &k, &version, &sub));
    CHECK(k == key);
    CHECK(version == 99);
    CHECK(sub == "field\0x"s);
  }
  // The entries of "a" never start with the prefix of "a\0b" and vice versa.
  std::string pa = DataPrefix("a", 1);
  std::string pab = DataPrefix("a\0b"s, 1);
  CHECK(DataKey("a\0b"s, 1, "").compare(0, pa.size(), pa) != 0);
  CHECK(DataKey("a", 1, "\0b"s).compare(0, pab.size(), pab) != 0);
  // Versions of one key are disjoint ranges.
  std::string v1 = DataPrefix("k", 1), v2 = DataPrefix("k", 2);
  CHECK(DataKey("k", 1, "\xff\xff\xff"s) < v2);
  CHECK(DataKey("k", 1, "") >= v1);
  // Everything under a prefix sorts below its successor.
  std::string succ = PrefixSuccessor(v1);
  CHECK(DataKey("k", 1, std::string(100, '\xff')) < succ);
  CHECK(PrefixSuccessor("ab\xff"s) == "ac");

  std::string_view k, sub;
  uint64_t version = 0;
  CHECK_FALSE(ParseDataKey("abc", &k, &version, &sub));
  CHECK_FALSE(
      ParseDataKey("\0\0\0\x05"s
                   "ab",
                   &k, &version, &sub));
}

TEST_CASE("list indexes sort numerically", "[storage][encoding]") {
  CHECK(EncodeListIndex(kListInitialIndex - 1) < EncodeListIndex(kListInitialIndex));
  CHECK(EncodeListIndex(kListInitialIndex) < EncodeListIndex(kListInitialIndex + 1));
  CHECK(GetFixed64BE(EncodeListIndex(12345).data()) == 12345);
}

TEST_CASE("score encoding: byte order is numeric order", "[storage][encoding]") {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> scores = {-inf,
                                -1e300,
                                -2.5,
                                -1,
                                -std::numeric_limits<double>::min(),
                                -std::numeric_limits<double>::denorm_min(),
                                0.0,
                                std::numeric_limits<double>::denorm_min(),
                                1e-300,
                                0.5,
                                1,
                                2,
                                1e300,
                                inf};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1e6, 1e6);
  for (int i = 0; i < 1000; ++i) scores.push_back(dist(rng));
  std::sort(scores.begin(), scores.end());
  for (size_t i = 1; i < scores.size(); ++i) {
    std::string a = EncodeScore(scores[i - 1]), b = EncodeScore(scores[i]);
    if (scores[i - 1] < scores[i]) CHECK(a < b);
    CHECK(DecodeScore(b.data()) == scores[i]);
  }
  CHECK(EncodeScore(-0.0) == EncodeScore(0.0));
  CHECK_FALSE(std::signbit(DecodeScore(EncodeScore(-0.0).data())));
  // Index sub-keys order by score, then by member bytes.
  CHECK(ScoreIndexSubKey(1, "b") < ScoreIndexSubKey(2, "a"));
  CHECK(ScoreIndexSubKey(1, "a") < ScoreIndexSubKey(1, "b"));
  CHECK(ScoreIndexSubKey(1, "a") < ScoreIndexSubKey(1, "a\0"s));
}

TEST_CASE("ParseInt64 is as strict as Redis string2ll", "[storage][numbers]") {
  int64_t v = 0;
  CHECK(ParseInt64("0", &v));
  CHECK(v == 0);
  CHECK(ParseInt64("-1", &v));
  CHECK(v == -1);
  CHECK(ParseInt64("9223372036854775807", &v));
  CHECK(v == INT64_MAX);
  CHECK(ParseInt64("-9223372036854775808", &v));
  CHECK(v == INT64_MIN);
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "01", "-0", "00", "1a", "9223372036854775808",
                          "-9223372036854775809", "18446744073709551616", "1.0", "0x10"}) {
    INFO(bad);
    CHECK_FALSE(ParseInt64(bad, &v));
  }
}

TEST_CASE("float parsing and formatting match Redis", "[storage][numbers]") {
  long double ld = 0;
  CHECK(ParseLongDouble("10.5", &ld));
  CHECK(ParseLongDouble("5.0e3", &ld));
  CHECK(ld == 5000);
  CHECK(ParseLongDouble("inf", &ld));
  CHECK_FALSE(ParseLongDouble("nan", &ld));
  CHECK_FALSE(ParseLongDouble(" 1", &ld));
  CHECK_FALSE(ParseLongDouble("1 ", &ld));
  CHECK_FALSE(ParseLongDouble("", &ld));
  CHECK_FALSE(ParseLongDouble("1e99999", &ld));
  CHECK_FALSE(ParseLongDouble("abc", &ld));

  CHECK(FormatLongDouble(10.5L + 0.1L) == "10.6");
  CHECK(FormatLongDouble(10.6L + 5.0e3L) == "5010.60000000000000009");  // as redis-server
  CHECK(FormatLongDouble(3.0L) == "3");
  CHECK(FormatLongDouble(-0.0L) == "0");
  CHECK(FormatLongDouble(1.5L) == "1.5");
  CHECK(FormatLongDouble(-2.25L) == "-2.25");
  CHECK(FormatLongDouble(1e20L) == "100000000000000000000");
  long double a = 0, b = 0;
  REQUIRE(ParseLongDouble("10.50", &a));
  REQUIRE(ParseLongDouble("0.1", &b));
  CHECK(FormatLongDouble(a + b) == "10.6");

  double d = 0;
  CHECK(ParseDouble("1.5", &d));
  CHECK(ParseDouble("-inf", &d));
  CHECK(std::isinf(d));
  CHECK_FALSE(ParseDouble("nan", &d));
  CHECK_FALSE(ParseDouble("1x", &d));

  CHECK(FormatDouble(1.5) == "1.5");
  CHECK(FormatDouble(0) == "0");
  CHECK(FormatDouble(3) == "3");
  CHECK(FormatDouble(-3) == "-3");
  CHECK(FormatDouble(0.1) == "0.1");
  CHECK(FormatDouble(0.0001) == "0.0001");
  CHECK(FormatDouble(1e-7) == "1e-7");
  CHECK(FormatDouble(10000000) == "10000000");
  CHECK(FormatDouble(1.5e10) == "15000000000");
  CHECK(FormatDouble(1700000000) == "1700000000");
  CHECK(FormatDouble(-0.0) == "0");
  CHECK(FormatDouble(1e20) == "1e+20");
  CHECK(FormatDouble(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(FormatDouble(123.456) == "123.456");
  CHECK(FormatDouble(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(FormatDouble(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(FormatDouble(0.1 + 0.2) == "0.30000000000000004");
}

TEST_CASE("Meta live-range hint round-trips; records without one decode as unhinted",
          "[storage][encoding]") {
  Meta m;
  m.type = MetaType::kZSet;
  m.version = 7;
  m.count = 3;
  Meta plain;
  REQUIRE(DecodeMeta(EncodeMeta(m), &plain));  // no hint: the old, shorter record
  CHECK(EncodeMeta(m).size() == kMetaHeaderSize);
  CHECK(plain.lo.empty());
  CHECK_FALSE(plain.hi.has_value());

  m.lo = "a\0b"s;
  m.hi = ""s;  // an empty exclusive upper bound is still a bound
  Meta back;
  REQUIRE(DecodeMeta(EncodeMeta(m), &back));
  CHECK(back.lo == m.lo);
  REQUIRE(back.hi.has_value());
  CHECK(back.hi->empty());
  std::string truncated = EncodeMeta(m);
  truncated.pop_back();
  CHECK_FALSE(DecodeMeta(truncated, &back));

  Meta h;
  h.type = MetaType::kSet;
  h.lo = "m";
  h.hi = "p";
  h.CoverInHint("k");
  h.CoverInHint("n");
  h.CoverInHint("q");
  CHECK(h.lo == "k");
  CHECK(*h.hi == "q\0"s);
  CHECK(ImmediateSuccessor("q") > "q");
}
