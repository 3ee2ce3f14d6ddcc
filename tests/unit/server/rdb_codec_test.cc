// The RDB pieces of DUMP payloads (server/rdb/rdb_codec.h): CRC-64/Jones, lengths, strings in
// each encoding, LZF, footers, and malformed input refused without reading past it.
#include "server/rdb/rdb_codec.h"

#include <catch2/catch.hpp>
#include <string>

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::server::rdb::rdb_codec_test {
namespace {

TEST_CASE("CRC-64/Jones has Redis's check value", "[rdb]") {
  CHECK(Crc64(0, "123456789") == 0xe9c6d914c4b8d9caULL);
  CHECK(Crc64(0, "") == 0);
}

TEST_CASE("Lengths and strings round-trip at every size class", "[rdb]") {
  for (uint64_t length : {0ull, 1ull, 63ull, 64ull, 16383ull, 16384ull, 70000ull}) {
    std::string encoded;
    AppendString(&encoded, std::string(length, 'x'));
    Reader reader(encoded);
    std::string value;
    REQUIRE(reader.ReadString(&value));
    CHECK(value.size() == length);
    CHECK(reader.done());
  }
  std::string big;
  AppendLength(&big, 1ull << 33);
  CHECK(big.size() == 9);
}

TEST_CASE("Integer-encoded and LZF strings decode as Redis writes them", "[rdb]") {
  // int8 -3, int16 1000, int32 -70000.
  const std::string ints = std::string("\xc0\xfd\xc1\xe8\x03\xc2\x90\xee\xfe\xff", 10);
  Reader reader(ints);
  std::string value;
  REQUIRE(reader.ReadString(&value));
  CHECK(value == "-3");
  REQUIRE(reader.ReadString(&value));
  CHECK(value == "1000");
  REQUIRE(reader.ReadString(&value));
  CHECK(value == "-70000");
  // LZF: a literal "abc", then a back reference of 6 bytes at distance 3 -> "abcabcabc".
  const std::string lzf = std::string(
      "\xc3\x06\x09\x02"
      "abc"
      "\x80\x02",
      9);
  Reader lzf_reader(lzf);
  REQUIRE(lzf_reader.ReadString(&value));
  CHECK(value == "abcabcabc");
}

TEST_CASE("Malformed input is refused without reading past it", "[rdb]") {
  std::string value;
  for (const std::string& bad : {std::string("\x05"
                                             "ab",
                                             3),
                                 std::string("\x40", 1), std::string("\xc1\x01", 2),
                                 std::string("\xc3\x06\x09\x02"
                                             "abc"
                                             "\x80\x09",
                                             9),  // reference before the start
                                 std::string("\xc3\x02\x80\x00\x00\x00\x00\x00", 8)}) {
    Reader reader(bad);
    CHECK_FALSE(reader.ReadString(&value));
  }
  // An LZF string claiming a huge expansion is refused before allocating it.
  const std::string huge = std::string("\xc3\x01\x81\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
  Reader reader(huge);
  CHECK_FALSE(reader.ReadString(&value));
}

TEST_CASE("Payload footers carry the version and a checksum", "[rdb]") {
  std::string payload = "\xf5";
  AppendString(&payload, "#!lua name=x\n");
  AppendFooter(&payload);
  std::string_view body;
  REQUIRE(CheckFooter(payload, &body));
  CHECK(body.size() == payload.size() - 10);
  std::string corrupt = payload;
  corrupt[3] ^= 1;
  CHECK_FALSE(CheckFooter(corrupt, &body));
  CHECK_FALSE(CheckFooter("short", &body));
}

}  // namespace
}  // namespace rockcache::server::rdb::rdb_codec_test
