// GEO commands with Redis 7.0's scores, distances ("%.4f"), coordinates (human long doubles),
// geohash strings, search order and errors (expected values taken from redis-server 7.0):
// GEOADD (NX/XX/CH), GEODIST, GEOHASH, GEOPOS, GEORADIUS, GEORADIUSBYMEMBER, their _RO forms,
// GEOSEARCH, GEOSEARCHSTORE, STORE/STOREDIST.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/test_helpers.h"
#include "tests/support/test_server.h"

using rockcache::testing::Client;
using rockcache::testing::kWrongType;
using rockcache::testing::Run;
using rockcache::testing::TestServer;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace geo_test {

namespace {

const char kPalermoPos[] = "[bulk:13.36138933897018433, bulk:38.11555639549629859]";
const char kCataniaPos[] = "[bulk:15.08726745843887329, bulk:37.50266842333162032]";

void AddSicily(Client& c) {
  REQUIRE(Run(c, {"GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
                  "Catania"}) == "int:2");
}

}  // namespace

TEST_CASE("GEOADD stores 52-bit geohash scores; NX, XX, CH; bad pairs", "[geo]") {
  TestServer server;
  Client c(server.port());
  AddSicily(c);
  CHECK(Run(c, {"ZSCORE", "Sicily", "Palermo"}) == "bulk:3479099956230698");
  CHECK(Run(c, {"TYPE", "Sicily"}) == "status:zset");
  CHECK(Run(c, {"GEOADD", "Sicily", "XX", "CH", "13.4", "38.1", "Palermo", "1", "1", "New"}) ==
        "int:1");  // Palermo changed, New not added
  CHECK(Run(c, {"GEOADD", "Sicily", "NX", "13.5", "38.2", "Palermo", "1", "1", "New"}) == "int:1");
  CHECK(Run(c, {"ZCARD", "Sicily"}) == "int:3");
  CHECK(Run(c, {"GEOADD", "Sicily", "181", "0", "x"}) ==
        "err:ERR invalid longitude,latitude pair 181.000000,0.000000");
  CHECK(Run(c, {"GEOADD", "Sicily", "0", "86", "x"}) ==
        "err:ERR invalid longitude,latitude pair 0.000000,86.000000");
  CHECK(Run(c, {"GEOADD", "Sicily", "abc", "0", "x"}) == "err:ERR value is not a valid float");
  CHECK(Run(c, {"GEOADD", "Sicily", "NX", "XX", "1", "1", "x"}) == "err:ERR syntax error");
  CHECK(Run(c, {"GEOADD", "Sicily", "1", "1", "x", "2"}) == "err:ERR syntax error");
  CHECK(Run(c, {"GEOADD", "Sicily", "0", "x"}) ==
        "err:ERR wrong number of arguments for 'geoadd' command");
  CHECK(Run(c, {"SET", "str", "v"}) == "status:OK");
  CHECK(Run(c, {"GEOADD", "str", "1", "1", "x"}) == kWrongType);
}

TEST_CASE("GEODIST, GEOHASH and GEOPOS", "[geo]") {
  TestServer server;
  Client c(server.port());
  AddSicily(c);
  CHECK(Run(c, {"GEODIST", "Sicily", "Palermo", "Catania"}) == "bulk:166274.1516");
  CHECK(Run(c, {"GEODIST", "Sicily", "Palermo", "Catania", "km"}) == "bulk:166.2742");
  CHECK(Run(c, {"GEODIST", "Sicily", "Palermo", "Catania", "MI"}) == "bulk:103.3182");
  CHECK(Run(c, {"GEODIST", "Sicily", "Palermo", "Catania", "ft"}) == "bulk:545518.8700");
  CHECK(Run(c, {"GEODIST", "Sicily", "Palermo", "nobody"}) == "nil");
  CHECK(Run(c, {"GEODIST", "nokey", "a", "b"}) == "nil");
  CHECK(Run(c, {"GEODIST", "Sicily", "a", "b", "parsecs"}) ==
        "err:ERR unsupported unit provided. please use M, KM, FT, MI");
  CHECK(Run(c, {"GEODIST", "Sicily", "a", "b", "km", "x"}) == "err:ERR syntax error");
  CHECK(Run(c, {"GEOHASH", "Sicily", "Palermo", "Catania", "nobody"}) ==
        "[bulk:sqc8b49rny0, bulk:sqdtr74hyu0, nil]");
  CHECK(Run(c, {"GEOPOS", "Sicily", "Palermo", "nobody", "Catania"}) ==
        std::string("[") + kPalermoPos + ", nil, " + kCataniaPos + "]");
  CHECK(Run(c, {"GEOPOS", "nokey", "a"}) == "[nil]");
  CHECK(Run(c, {"GEOPOS", "Sicily"}) == "[]");
  CHECK(Run(c, {"SET", "str", "v"}) == "status:OK");
  CHECK(Run(c, {"GEOPOS", "str"}) == kWrongType);
  CHECK(Run(c, {"GEOHASH", "str", "a"}) == kWrongType);
  CHECK(Run(c, {"GEODIST", "str", "a", "b"}) == kWrongType);
}

TEST_CASE("GEORADIUS and GEORADIUSBYMEMBER: options, order, STORE", "[geo]") {
  TestServer server;
  Client c(server.port());
  AddSicily(c);
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST"}) ==
        "[[bulk:Palermo, bulk:190.4424], [bulk:Catania, bulk:56.4413]]");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "WITHCOORD",
                "WITHHASH"}) ==
        std::string("[[bulk:Palermo, bulk:190.4424, int:3479099956230698, ") + kPalermoPos +
            "], [bulk:Catania, bulk:56.4413, int:3479447370796909, " + kCataniaPos + "]]");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1"}) == "[bulk:Catania]");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "DESC"}) ==
        "[bulk:Palermo, bulk:Catania]");
  CHECK(Run(c, {"GEORADIUS_RO", "Sicily", "15", "37", "200", "km", "ASC"}) ==
        "[bulk:Catania, bulk:Palermo]");
  CHECK(Run(c, {"GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "WITHDIST"}) ==
        "[[bulk:Palermo, bulk:0.0000], [bulk:Catania, bulk:166.2742]]");
  CHECK(Run(c, {"GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "1", "km"}) == "[bulk:Palermo]");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "dst"}) == "int:2");
  CHECK(Run(c, {"ZRANGE", "dst", "0", "-1", "WITHSCORES"}) ==
        "[bulk:Palermo, bulk:3479099956230698, bulk:Catania, bulk:3479447370796909]");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "dst"}) == "int:2");
  CHECK(Run(c, {"ZRANGE", "dst", "0", "-1"}) == "[bulk:Catania, bulk:Palermo]");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "dst"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "dst"}) == "int:0");  // an empty result deletes the target
  CHECK(Run(c, {"GEORADIUS", "nokey", "15", "37", "200", "km"}) == "[]");
  CHECK(Run(c, {"GEORADIUSBYMEMBER", "nokey", "x", "200", "km", "STORE", "d"}) == "int:0");

  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "-1", "km"}) ==
        "err:ERR radius cannot be negative");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "abc", "km"}) == "err:ERR need numeric radius");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "1", "parsec"}) ==
        "err:ERR unsupported unit provided. please use M, KM, FT, MI");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "0"}) ==
        "err:ERR COUNT must be > 0");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "1", "km", "ANY"}) ==
        "err:ERR the ANY argument requires COUNT argument");
  CHECK(Run(c, {"GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "d", "WITHDIST"}) ==
        "err:ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and "
        "WITHCOORD options");
  CHECK(Run(c, {"GEORADIUS_RO", "Sicily", "15", "37", "1", "km", "STORE", "d"}) ==
        "err:ERR syntax error");
  CHECK(Run(c, {"GEORADIUSBYMEMBER", "Sicily", "nobody", "1", "km"}) ==
        "err:ERR could not decode requested zset member");
}

TEST_CASE("GEOSEARCH and GEOSEARCHSTORE", "[geo]") {
  TestServer server;
  Client c(server.port());
  AddSicily(c);
  CHECK(Run(c, {"GEOADD", "Sicily", "13.583333", "37.316667", "Agrigento"}) == "int:1");
  CHECK(Run(c, {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC",
                "WITHDIST"}) ==
        "[[bulk:Catania, bulk:56.4413], [bulk:Agrigento, bulk:130.4235], "
        "[bulk:Palermo, bulk:190.4424]]");
  CHECK(Run(c, {"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "100", "km"}) ==
        "[bulk:Agrigento, bulk:Palermo]");
  CHECK(Run(c, {"GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200",
                "km"}) == "int:3");
  CHECK(Run(c, {"ZRANGE", "dst", "0", "-1"}) == "[bulk:Agrigento, bulk:Palermo, bulk:Catania]");
  CHECK(Run(c, {"GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200",
                "km", "STOREDIST", "COUNT", "1"}) == "int:1");
  CHECK(Run(c, {"ZRANGE", "dst", "0", "-1"}) == "[bulk:Catania]");
  CHECK(Run(c, {"GEOSEARCHSTORE", "dst", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "1",
                "km"}) == "int:0");
  CHECK(Run(c, {"EXISTS", "dst"}) == "int:0");

  CHECK(Run(c, {"GEOSEARCH", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"}) ==
        "err:ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH");
  CHECK(Run(c, {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "ASC", "WITHDIST"}) ==
        "err:ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH");
  CHECK(Run(c, {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX",
                "1", "1", "km"}) == "err:ERR syntax error");
  CHECK(Run(c, {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "-1", "1", "km"}) ==
        "err:ERR height or width cannot be negative");
  CHECK(Run(c, {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "a", "1", "km"}) ==
        "err:ERR need numeric width");
  CHECK(Run(c, {"GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STORE",
                "x"}) == "err:ERR syntax error");
  CHECK(Run(c, {"GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km",
                "WITHDIST"}) ==
        "err:ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
  CHECK(Run(c, {"SET", "str", "v"}) == "status:OK");
  CHECK(Run(c, {"GEOSEARCH", "str", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"}) ==
        kWrongType);
}

}  // namespace geo_test
