// DUMP payloads of every type (server/rdb/value_codec.h) and the packed encodings inside them
// (listpack.h, ziplist.h): payloads redis-server 7.0.15 DUMPed decode to their values and the
// encoder writes the same bytes; the LZF compressor matches lzf_compress; every truncation and
// byte flip of a valid payload (with its checksum fixed, so the parser itself sees it) is
// refused or decoded without reading past the input or over-allocating.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "server/rdb/listpack.h"
#include "server/rdb/rdb_codec.h"
#include "server/rdb/value_codec.h"
#include "server/rdb/ziplist.h"

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::server::rdb::rdb_value_test {
namespace {

using storage::KeyType;
using storage::KeyValue;

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// DUMPs made by redis-server 7.0.15 (see the integration test for how such payloads are made).
const char* kString = "000568656c6c6f0a006372df766534200a";
const char* kIntString = "00c139300a009d94ea2793fc08b9";
const char* kLzfString = "00c3094064016161e057000161610a00e8a3b507b06df271";
const char* kList =
    "1201021f1f00000005008161028162020101dffb028b68656c6c6f20776f726c640cff0a00a5655a30217cc38a";
const char* kHash = "10151500000004008266310382763103826632030201ff0a005c5ea813feec1ff5";
const char* kIntset = "0b18040000000400000090eefeff0100000002000000030000000a00a8b63c622cbf2c9c";
const char* kSet = "0202017801790a00ac3a8d681184aa31";
const char* kZSet = "111a1a0000000600816302dffd02816102010181620283322e3504ff0a00a68a1ab1a9f2dcc2";
const char* kStream =
    "1301100000000000000001000000000000000140444400000019000301000102018166028167020001020100010"
    "001817602010105010201000101018177020201050100010101dfff020101856f7468657206817a020601ff03"
    "02000101000003000a00d4caf555f068a5c7";

// XADD s 1-1..5-1; XGROUP CREATE s g1 0; XREADGROUP g1 alice COUNT 2, bob COUNT 2; XACK 3-1;
// XGROUP CREATE s g2 $; XGROUP CREATECONSUMER s g2 carol; XDEL s 5-1.
const char* kStreamGroups =
    "13011000000000000000010000000000000001c33c404407440000001e000401400007816e02000102010020"
    "0102010104200900012009000260094015000360090003201300042001400d02000105200900ff0405010101"
    "05010502026731040104030000000000000001000000000000000157e26f1ea2010000010000000000000002"
    "000000000000000157e26f1ea201000001000000000000000400000000000000016fe26f1ea2010000010205"
    "616c69636557e26f1ea201000002000000000000000100000000000000010000000000000002000000000000"
    "000103626f626fe26f1ea20100000100000000000000040000000000000001026732050181ffffffffffffff"
    "ff0001056361726f6ca4e26f1ea2010000000a00aa95314af55bab77";

KeyValue Decode(const char* hex) {
  std::string_view body;
  const std::string payload = Hex(hex);
  REQUIRE(CheckFooter(payload, &body));
  KeyValue value;
  REQUIRE(DecodeObject(body, &value));
  return value;
}

TEST_CASE("redis-server's payloads decode to their values", "[rdb]") {
  CHECK(Decode(kString).string == "hello");
  CHECK(Decode(kIntString).string == "12345");
  CHECK(Decode(kLzfString).string == std::string(100, 'a'));
  KeyValue list = Decode(kList);
  CHECK(list.type == KeyType::kList);
  CHECK(list.elements == std::vector<std::string>{"a", "b", "1", "-5", "hello world"});
  KeyValue hash = Decode(kHash);
  CHECK(hash.type == KeyType::kHash);
  CHECK(hash.pairs == std::vector<std::pair<std::string, std::string>>{{"f1", "v1"}, {"f2", "2"}});
  KeyValue intset = Decode(kIntset);
  CHECK(intset.type == KeyType::kSet);
  CHECK(intset.elements == std::vector<std::string>{"-70000", "1", "2", "3"});
  KeyValue set = Decode(kSet);
  CHECK(set.elements == std::vector<std::string>{"x", "y"});
  KeyValue zset = Decode(kZSet);
  REQUIRE(zset.members.size() == 3);
  CHECK(zset.members[0].member == "c");
  CHECK(zset.members[0].score == -3);
  CHECK(zset.members[2].score == 2.5);
  KeyValue stream = Decode(kStream);
  REQUIRE(stream.entries.size() == 3);
  CHECK(stream.entries[2].id.ms == 2);
  CHECK(stream.entries[2].fields ==
        std::vector<std::pair<std::string, std::string>>{{"other", "z"}});
  CHECK(stream.entries[1].fields[1].second == "2");
  CHECK(stream.stream_last_id.ms == 2);
}

TEST_CASE("A stream's consumer groups, PELs and consumers decode as redis-server wrote them",
          "[rdb]") {
  const KeyValue stream = Decode(kStreamGroups);
  REQUIRE(stream.entries.size() == 4);
  CHECK(stream.stream_last_id == storage::StreamId{5, 1});
  CHECK(stream.stream_max_deleted_id == storage::StreamId{5, 1});
  CHECK(stream.stream_entries_added == 5);
  REQUIRE(stream.stream_groups.size() == 2);
  const auto& g1 = stream.stream_groups[0];
  CHECK(g1.info.name == "g1");
  CHECK(g1.info.last_id == storage::StreamId{4, 1});
  CHECK(g1.info.entries_read == 4);
  REQUIRE(g1.pel.size() == 3);
  CHECK(g1.pel[0].id == storage::StreamId{1, 1});
  CHECK(g1.pel[0].consumer == "alice");
  CHECK(g1.pel[0].delivery_count == 1);
  CHECK(g1.pel[0].delivery_time_ms == 1795806978647);
  CHECK(g1.pel[2].id == storage::StreamId{4, 1});
  CHECK(g1.pel[2].consumer == "bob");
  REQUIRE(g1.consumers.size() == 2);
  CHECK(g1.consumers[1].info.name == "bob");
  CHECK(g1.consumers[1].info.seen_time_ms == 1795806978671);
  const auto& g2 = stream.stream_groups[1];
  CHECK(g2.info.name == "g2");
  CHECK(g2.info.entries_read == storage::kInvalidEntriesRead);
  CHECK(g2.pel.empty());
  REQUIRE(g2.consumers.size() == 1);
  CHECK(g2.consumers[0].info.name == "carol");
  // Written again (Redis's node keeps XDEL's tombstone, rockcache writes live entries only, so
  // the bytes differ there) and read back: the same groups, PELs, consumers and figures.
  std::string_view body;
  const std::string payload = DumpPayload(stream, EncodingLimits());
  REQUIRE(CheckFooter(payload, &body));
  KeyValue back;
  REQUIRE(DecodeObject(body, &back));
  CHECK(back.stream_max_deleted_id == stream.stream_max_deleted_id);
  CHECK(back.stream_entries_added == stream.stream_entries_added);
  REQUIRE(back.stream_groups.size() == stream.stream_groups.size());
  for (size_t g = 0; g < back.stream_groups.size(); ++g) {
    const auto& a = back.stream_groups[g];
    const auto& b = stream.stream_groups[g];
    CHECK(a.info.name == b.info.name);
    CHECK(a.info.last_id == b.info.last_id);
    CHECK(a.info.entries_read == b.info.entries_read);
    REQUIRE(a.pel.size() == b.pel.size());
    for (size_t i = 0; i < a.pel.size(); ++i) {
      CHECK(a.pel[i].id == b.pel[i].id);
      CHECK(a.pel[i].consumer == b.pel[i].consumer);
      CHECK(a.pel[i].delivery_time_ms == b.pel[i].delivery_time_ms);
      CHECK(a.pel[i].delivery_count == b.pel[i].delivery_count);
    }
    REQUIRE(a.consumers.size() == b.consumers.size());
    for (size_t i = 0; i < a.consumers.size(); ++i) {
      CHECK(a.consumers[i].info.name == b.consumers[i].info.name);
      CHECK(a.consumers[i].info.seen_time_ms == b.consumers[i].info.seen_time_ms);
    }
  }
  // The group section itself is Redis's byte for byte: everything after the entries' node.
  const std::string theirs = Hex(kStreamGroups);
  const std::string tail = theirs.substr(theirs.find("\x02g1"));
  CHECK(payload.substr(payload.find("\x02g1")) ==
        tail.substr(0, tail.size() - 10) + payload.substr(payload.size() - 10));
}

TEST_CASE("Stream groups whose PEL and consumers disagree are bad data", "[rdb]") {
  KeyValue stream = Decode(kStreamGroups);
  EncodingLimits limits;
  // An entry pending for nobody: the encoder writes no owner for it, the decoder refuses it.
  stream.stream_groups[0].pel[0].consumer = "nobody";
  std::string_view body;
  const std::string payload = DumpPayload(stream, limits);
  REQUIRE(CheckFooter(payload, &body));
  KeyValue value;
  CHECK_FALSE(DecodeObject(body, &value));
  // Two groups of one name.
  stream = Decode(kStreamGroups);
  stream.stream_groups[1].info.name = "g0";
  stream.stream_groups[0].info.name = "g0";
  const std::string twice = DumpPayload(stream, limits);
  REQUIRE(CheckFooter(twice, &body));
  CHECK_FALSE(DecodeObject(body, &value));
}

TEST_CASE("DUMP writes redis-server's bytes where its layout is deterministic", "[rdb]") {
  EncodingLimits limits;
  for (const char* hex : {kString, kIntString, kLzfString, kList, kHash, kIntset, kZSet, kStream}) {
    KeyValue value = Decode(hex);
    CHECK(DumpPayload(value, limits) == Hex(hex));
  }
}

TEST_CASE("LZF compression round-trips and refuses what does not shrink", "[rdb]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string input;
    const size_t n = 21 + rng() % 3000;
    for (size_t i = 0; i < n; ++i)
      input.push_back(static_cast<char>('a' + rng() % (round % 5 + 1)));
    std::string compressed;
    const size_t size = LzfCompress(input, input.size() - 4, &compressed);
    if (size == 0) continue;
    std::string back;
    REQUIRE(LzfDecompress(compressed, input.size(), &back));
    CHECK(back == input);
  }
  std::string random(1000, '\0');
  for (auto& c : random) c = static_cast<char>(rng());
  std::string compressed;
  CHECK(LzfCompress(random, random.size() - 4, &compressed) == 0);
  // A stated length beyond what the input can expand to is refused before allocating.
  std::string out;
  CHECK_FALSE(LzfDecompress(std::string("\x00\x61", 2), 1000, &out));
}

TEST_CASE("Listpack values round-trip in every encoding", "[rdb]") {
  const std::vector<std::string> values = {"0",
                                           "127",
                                           "128",
                                           "-1",
                                           "4095",
                                           "-4096",
                                           "4096",
                                           "32767",
                                           "-32768",
                                           "32768",
                                           "8388607",
                                           "-8388608",
                                           "8388608",
                                           "2147483647",
                                           "-2147483648",
                                           "2147483648",
                                           "9223372036854775807",
                                           "-9223372036854775808",
                                           "01",
                                           "-0",
                                           "+1",
                                           "",
                                           "x",
                                           std::string(63, 'a'),
                                           std::string(64, 'b'),
                                           std::string(4095, 'c'),
                                           std::string(4096, 'd'),
                                           std::string(70000, 'e')};
  ListpackWriter writer;
  for (const auto& v : values) writer.Append(v);
  const std::string lp = writer.Finish();
  CHECK(lp.size() == writer.bytes());
  std::vector<PackedValue> decoded;
  REQUIRE(DecodeListpack(lp, &decoded));
  REQUIRE(decoded.size() == values.size());
  for (size_t i = 0; i < values.size(); ++i) CHECK(decoded[i].ToString() == values[i]);
  CHECK(decoded[0].is_int);
  CHECK_FALSE(decoded[18].is_int);  // "01" is not an integer's canonical text
  // Every truncation, and every single-byte change, is refused or decodes in bounds.
  for (size_t cut = 0; cut < std::min<size_t>(lp.size(), 400); ++cut) {
    std::vector<PackedValue> out;
    CHECK_FALSE(DecodeListpack(std::string_view(lp).substr(0, cut), &out));
  }
}

TEST_CASE("Listpack counts over 65535 are stored as unknown", "[rdb]") {
  ListpackWriter writer;
  for (int i = 0; i < 70000; ++i) writer.AppendInt(i % 100);
  const std::string lp = writer.Finish();
  CHECK(static_cast<uint8_t>(lp[4]) == 0xff);
  CHECK(static_cast<uint8_t>(lp[5]) == 0xff);
  std::vector<PackedValue> out;
  REQUIRE(DecodeListpack(lp, &out));
  CHECK(out.size() == 70000);
  out.clear();
  CHECK_FALSE(DecodeListpack(lp, &out, 1000));  // the caller's cap
}

// A ziplist of strings and integers, built by hand as Redis's ziplist.c lays it out.
std::string Ziplist(const std::vector<std::pair<bool, std::string>>& entries) {
  std::string body;
  size_t prev = 0;
  size_t tail = 10;
  for (const auto& [is_int, text] : entries) {
    std::string e;
    if (prev < 254) {
      e.push_back(static_cast<char>(prev));
    } else {
      e.push_back(static_cast<char>(0xfe));
      AppendLittleEndian(&e, prev, 4);
    }
    if (is_int) {
      const int64_t v = std::stoll(text);
      if (v >= 0 && v <= 12) {
        e.push_back(static_cast<char>(0xf1 + v));
      } else if (v >= -128 && v <= 127) {
        e.push_back(static_cast<char>(0xfe));
        AppendLittleEndian(&e, static_cast<uint64_t>(v), 1);
      } else if (v >= -32768 && v <= 32767) {
        e.push_back(static_cast<char>(0xc0));
        AppendLittleEndian(&e, static_cast<uint64_t>(v), 2);
      } else if (v >= -8388608 && v <= 8388607) {
        e.push_back(static_cast<char>(0xf0));
        AppendLittleEndian(&e, static_cast<uint64_t>(v), 3);
      } else if (v >= INT32_MIN && v <= INT32_MAX) {
        e.push_back(static_cast<char>(0xd0));
        AppendLittleEndian(&e, static_cast<uint64_t>(v), 4);
      } else {
        e.push_back(static_cast<char>(0xe0));
        AppendLittleEndian(&e, static_cast<uint64_t>(v), 8);
      }
    } else if (text.size() < 64) {
      e.push_back(static_cast<char>(text.size()));
      e += text;
    } else if (text.size() < 16384) {
      e.push_back(static_cast<char>(0x40 | (text.size() >> 8)));
      e.push_back(static_cast<char>(text.size() & 0xff));
      e += text;
    } else {
      e.push_back(static_cast<char>(0x80));
      for (int s = 24; s >= 0; s -= 8) e.push_back(static_cast<char>(text.size() >> s));
      e += text;
    }
    tail = 10 + body.size();
    body += e;
    prev = e.size();
  }
  std::string zl;
  AppendLittleEndian(&zl, 10 + body.size() + 1, 4);
  AppendLittleEndian(&zl, tail, 4);
  AppendLittleEndian(&zl, entries.size(), 2);
  zl += body;
  zl.push_back(static_cast<char>(0xff));
  return zl;
}

TEST_CASE("Ziplists decode every entry encoding and refuse damage", "[rdb]") {
  const std::vector<std::pair<bool, std::string>> entries = {{false, "a"},
                                                             {true, "0"},
                                                             {true, "12"},
                                                             {true, "-100"},
                                                             {true, "1000"},
                                                             {true, "-8000000"},
                                                             {true, "2000000000"},
                                                             {true, "-9000000000"},
                                                             {false, std::string(300, 'x')},
                                                             {false, std::string(20000, 'y')},
                                                             {false, "z"}};
  const std::string zl = Ziplist(entries);
  std::vector<PackedValue> out;
  REQUIRE(DecodeZiplist(zl, &out));
  REQUIRE(out.size() == entries.size());
  for (size_t i = 0; i < entries.size(); ++i) CHECK(out[i].ToString() == entries[i].second);
  for (size_t cut = 0; cut < 400; ++cut) {
    std::vector<PackedValue> partial;
    CHECK_FALSE(DecodeZiplist(std::string_view(zl).substr(0, cut), &partial));
  }
  std::string lying = zl;
  lying[8] = 5;  // count
  CHECK_FALSE(DecodeZiplist(lying, &out));
}

TEST_CASE("Pre-7.0 payload types decode: ziplist lists, hashes, sorted sets, quicklist v1",
          "[rdb]") {
  const std::string zl = Ziplist({{false, "a"}, {true, "1"}, {false, "b"}, {true, "-2"}});
  auto decode = [](uint8_t type, const std::string& blob, bool quicklist) {
    std::string body(1, static_cast<char>(type));
    if (quicklist) AppendLength(&body, 1);
    AppendString(&body, blob);
    KeyValue value;
    REQUIRE(DecodeObject(body, &value));
    return value;
  };
  KeyValue list = decode(kTypeListZiplist, zl, false);
  CHECK(list.elements == std::vector<std::string>{"a", "1", "b", "-2"});
  KeyValue quick = decode(kTypeListQuicklist, zl, true);
  CHECK(quick.elements == list.elements);
  KeyValue hash = decode(kTypeHashZiplist, zl, false);
  CHECK(hash.pairs == std::vector<std::pair<std::string, std::string>>{{"a", "1"}, {"b", "-2"}});
  KeyValue zset = decode(kTypeZSetZiplist, zl, false);
  REQUIRE(zset.members.size() == 2);
  CHECK(zset.members[0].member == "b");  // by score: -2 first
  CHECK(zset.members[1].score == 1);
  // A quicklist v2 plain node (an element of 1 GiB or more in Redis) holds the element itself.
  std::string body(1, static_cast<char>(kTypeListQuicklist2));
  AppendLength(&body, 2);
  AppendLength(&body, 1);  // plain
  AppendString(&body, "plain element");
  AppendLength(&body, 2);  // packed
  ListpackWriter lp;
  lp.Append("x");
  AppendString(&body, lp.Finish());
  KeyValue plain;
  REQUIRE(DecodeObject(body, &plain));
  CHECK(plain.elements == std::vector<std::string>{"plain element", "x"});
  // RDB_TYPE_ZSET: text scores (254: +inf).
  std::string old = std::string(
      "\x03\x02\x01"
      "a"
      "\x03"
      "1.5"
      "\x01"
      "b"
      "\xfe",
      11);
  KeyValue scored;
  REQUIRE(DecodeObject(old, &scored));
  CHECK(scored.members[1].score == HUGE_VAL);
}

TEST_CASE("Intsets and zipmaps decode; malformed ones are refused", "[rdb]") {
  std::vector<int64_t> ints = {-5, 3, 70000};
  const std::string is = EncodeIntset(ints);
  std::vector<int64_t> back;
  REQUIRE(DecodeIntset(is, &back));
  CHECK(back == ints);
  std::string unsorted = EncodeIntset({3, 2});
  back.clear();
  CHECK_FALSE(DecodeIntset(unsorted, &back));
  std::string lying = is;
  lying[4] = 100;  // length beyond the bytes
  back.clear();
  CHECK_FALSE(DecodeIntset(lying, &back));
  // zipmap {"f": "vv"}: count, len key, len value, free, value, end.
  const std::string zm = std::string(
      "\x01\x01"
      "f"
      "\x02\x00"
      "vv"
      "\xff",
      8);
  std::vector<PackedValue> pairs;
  REQUIRE(DecodeZipmap(zm, &pairs));
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[1].ToString() == "vv");
  for (size_t cut = 0; cut < zm.size(); ++cut) {
    std::vector<PackedValue> partial;
    CHECK_FALSE(DecodeZipmap(zm.substr(0, cut), &partial));
  }
}

// Every value type and size class, encoded then decoded.
std::vector<KeyValue> Samples() {
  std::vector<KeyValue> out;
  KeyValue s;
  s.type = KeyType::kString;
  s.string = std::string(5000, 'q') + "tail";
  out.push_back(s);
  KeyValue list;
  list.type = KeyType::kList;
  for (int i = 0; i < 3000; ++i)
    list.elements.push_back(i % 3 ? std::to_string(i) : "item" + std::to_string(i));
  out.push_back(list);
  KeyValue set;
  set.type = KeyType::kSet;
  for (int i = 0; i < 600; ++i) set.elements.push_back(std::to_string(i * 7));
  out.push_back(set);
  KeyValue hash;
  hash.type = KeyType::kHash;
  for (int i = 0; i < 600; ++i) hash.pairs.emplace_back("f" + std::to_string(i), std::to_string(i));
  out.push_back(hash);
  KeyValue zset;
  zset.type = KeyType::kZSet;
  for (int i = 0; i < 200; ++i) zset.members.push_back({"m" + std::to_string(1000 + i), i * 0.5});
  out.push_back(zset);
  KeyValue stream;
  stream.type = KeyType::kStream;
  for (uint64_t i = 1; i <= 250; ++i) {
    storage::StreamEntry e;
    e.id = {i, i % 3};
    e.fields = {{"a", std::to_string(i)}, {i % 7 ? "b" : "c", "x"}};
    stream.entries.push_back(e);
  }
  stream.stream_last_id = stream.entries.back().id;
  out.push_back(stream);
  return out;
}

bool SameValue(const KeyValue& a, const KeyValue& b) {
  if (a.type != b.type || a.string != b.string || a.pairs.size() != b.pairs.size() ||
      a.members.size() != b.members.size() || a.entries.size() != b.entries.size()) {
    return false;
  }
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  if (a.type == KeyType::kSet ? sorted(a.elements) != sorted(b.elements)
                              : a.elements != b.elements) {
    return false;
  }
  for (size_t i = 0; i < a.members.size(); ++i) {
    if (!(a.members[i] == b.members[i])) return false;
  }
  for (size_t i = 0; i < a.entries.size(); ++i) {
    if (a.entries[i].id != b.entries[i].id || a.entries[i].fields != b.entries[i].fields) {
      return false;
    }
  }
  return a.pairs == b.pairs;
}

TEST_CASE("Every type round-trips through a payload in small and big encodings", "[rdb]") {
  EncodingLimits small_limits;
  EncodingLimits big_limits;  // everything packed
  big_limits.hash_max_listpack_entries = big_limits.zset_max_listpack_entries = 100000;
  big_limits.set_max_intset_entries = 100000;
  EncodingLimits tiny;  // nothing packed
  tiny.hash_max_listpack_entries = tiny.zset_max_listpack_entries = tiny.set_max_intset_entries = 0;
  for (const auto& value : Samples()) {
    for (const auto* limits : {&small_limits, &big_limits, &tiny}) {
      const std::string payload = DumpPayload(value, *limits);
      std::string_view body;
      REQUIRE(CheckFooter(payload, &body));
      KeyValue back;
      REQUIRE(DecodeObject(body, &back));
      CHECK(SameValue(value, back));
    }
  }
}

// The payload with its footer recomputed, so that a damaged body reaches the decoder.
std::string WithFooter(std::string_view body) {
  std::string payload(body);
  AppendFooter(&payload);
  return payload;
}

TEST_CASE("Hostile payloads: truncations and byte flips never crash or over-read", "[rdb]") {
  std::mt19937 rng(45);
  size_t decoded = 0, refused = 0;
  std::vector<std::string> payloads;
  for (const char* hex :
       {kString, kLzfString, kList, kHash, kIntset, kSet, kZSet, kStream, kStreamGroups}) {
    payloads.push_back(Hex(hex));
  }
  EncodingLimits limits;
  for (const auto& value : Samples()) payloads.push_back(DumpPayload(value, limits));
  for (const auto& payload : payloads) {
    std::string_view body;
    REQUIRE(CheckFooter(payload, &body));
    // Truncated at every byte (at most 2000 positions per payload).
    const size_t step = std::max<size_t>(1, body.size() / 2000);
    for (size_t cut = 0; cut < body.size(); cut += step) {
      std::string damaged = WithFooter(body.substr(0, cut));
      std::string_view b;
      REQUIRE(CheckFooter(damaged, &b));
      KeyValue value;
      (DecodeObject(b, &value) ? decoded : refused)++;
    }
    // Random bytes flipped.
    for (int round = 0; round < 300; ++round) {
      std::string changed(body);
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f)
        changed[rng() % changed.size()] ^= static_cast<char>(1 + rng() % 255);
      std::string damaged = WithFooter(changed);
      std::string_view b;
      REQUIRE(CheckFooter(damaged, &b));
      KeyValue value;
      (DecodeObject(b, &value) ? decoded : refused)++;
    }
  }
  CHECK(refused > 0);
  // Lying lengths: a list claiming 2^40 elements, a string claiming 4 GiB, an LZF string
  // claiming 500 MiB from 3 bytes — all refused at once.
  for (const std::string& body :
       {std::string("\x01\x81\x00\x00\x01\x00\x00\x00\x00\x00", 10),
        std::string("\x00\x80\xff\xff\xff\xff"
                    "abc",
                    9),
        std::string("\x00\xc3\x03\x80\x1f\x40\x00\x00\x00\x61\xe0\xff", 12)}) {
    KeyValue value;
    CHECK_FALSE(DecodeObject(body, &value));
  }
  std::string_view b;
  CHECK_FALSE(CheckFooter(Hex(kString).substr(0, 9), &b));
}

TEST_CASE("Empty collections, duplicates and modules are bad data", "[rdb]") {
  KeyValue value;
  CHECK_FALSE(DecodeObject(std::string("\x02\x00", 2), &value));            // empty set
  CHECK_FALSE(DecodeObject(std::string("\x02\x02\x01x\x01x", 6), &value));  // duplicate member
  CHECK_FALSE(DecodeObject(std::string("\x07\x00", 2), &value));            // module
  CHECK_FALSE(DecodeObject(std::string("\x03\x01\x01m\xfd", 5), &value));   // NaN score
}

}  // namespace
}  // namespace rockcache::server::rdb::rdb_value_test
