// server/commands/geohash: Redis 7.0's GEO arithmetic (golden values from redis-server 7.0).
#include "server/commands/geohash.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "storage/numbers.h"

namespace geo = rockcache::server::geo;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace geohash_test {

namespace {

std::string Meters(double d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f", d);
  return buf;
}

}  // namespace

TEST_CASE("geohash: scores, decoded positions and standard geohashes", "[geo][unit]") {
  uint64_t palermo = geo::EncodeScore(13.361389, 38.115556);
  CHECK(palermo == 3479099956230698ULL);
  double xy[2];
  geo::DecodeScore(static_cast<double>(palermo), xy);
  CHECK(rockcache::storage::FormatLongDouble(xy[0]) == "13.36138933897018433");
  CHECK(rockcache::storage::FormatLongDouble(xy[1]) == "38.11555639549629859");
  CHECK(geo::StandardGeohash(static_cast<double>(palermo)) == "sqc8b49rny0");
  CHECK(geo::StandardGeohash(static_cast<double>(geo::EncodeScore(15.087269, 37.502669))) ==
        "sqdtr74hyu0");
  geo::HashBits out;
  CHECK_FALSE(geo::Encode(0, 86, 26, &out));
  CHECK_FALSE(geo::Encode(181, 0, 26, &out));
}

TEST_CASE("geohash: haversine distance as Redis", "[geo][unit]") {
  double a[2], b[2];
  geo::DecodeScore(static_cast<double>(geo::EncodeScore(13.361389, 38.115556)), a);
  geo::DecodeScore(static_cast<double>(geo::EncodeScore(15.087269, 37.502669)), b);
  CHECK(Meters(geo::Distance(a[0], a[1], b[0], b[1])) == "166274.1516");
  CHECK(geo::Distance(a[0], a[1], a[0], a[1]) == 0);
}

TEST_CASE("geohash: the search boxes cover the centre", "[geo][unit]") {
  for (double radius : {1.0, 100.0, 10000.0, 1e6, 7e6}) {
    geo::Shape shape;
    shape.lon = 13.361389;
    shape.lat = 38.115556;
    shape.radius = radius;
    geo::SearchBoxes boxes = geo::BoxesForShape(shape);
    uint64_t min = 0, max = 0;
    geo::ScoreRangeOfBox(boxes.boxes[0], &min, &max);
    uint64_t centre = geo::EncodeScore(shape.lon, shape.lat);
    CHECK(min <= centre);
    CHECK(centre < max);
    double d = 0;
    CHECK(geo::WithinShape(shape, shape.lon, shape.lat, &d));
  }
  geo::Shape box;
  box.type = geo::Shape::Type::kBox;
  box.width = 2000;
  box.height = 1000;
  double d = 0;
  CHECK(geo::WithinShape(box, 0.005, 0.004, &d));        // ~556 m east, ~445 m north
  CHECK_FALSE(geo::WithinShape(box, 0.005, 0.005, &d));  // ~556 m north: outside
}

}  // namespace geohash_test
