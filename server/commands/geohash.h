// Geohash arithmetic as Redis 7.0's GEO commands do it, so that scores, decoded coordinates,
// distances and the boxes a search visits are the same bit for bit.
//
// A position is stored as a sorted-set score: the 52-bit interleaving of 26 bits of latitude
// (even bits) and 26 bits of longitude (odd bits), both as fixed-point fractions of Redis's
// ranges (longitude -180..180, latitude -85.05112878..85.05112878, the Web Mercator limits).
// A search picks a precision ("step") from the radius, takes the box around the centre and its
// 8 neighbours at that step, drops neighbours the search area cannot reach, and filters the
// members of each box by haversine distance (earth radius 6372797.560856 m).
//
// Pure functions, any thread.
#pragma once

#include <cstdint>
#include <string>

namespace rockcache::server::geo {

inline constexpr double kLonMin = -180;
inline constexpr double kLonMax = 180;
inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
inline constexpr int kStepMax = 26;  // 52 bits

struct HashBits {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool IsZero() const { return bits == 0 && step == 0; }
};

struct Range {
  double min = 0;
  double max = 0;
};

struct Area {
  HashBits hash;
  Range longitude;
  Range latitude;
};

// A search: a circle (radius) or an axis-aligned box (width x height) around xy, in the unit
// whose size in meters is `conversion`.
struct Shape {
  enum class Type { kCircle, kBox };
  Type type = Type::kCircle;
  double lon = 0, lat = 0;
  double conversion = 1;
  double radius = 0;
  double width = 0, height = 0;
};

// The centre box and its neighbours, in the order Redis visits them; zeroed boxes are skipped.
struct SearchBoxes {
  HashBits boxes[9];  // self, N, S, E, W, NE, NW, SE, SW
};

// Encodes with Redis's ranges at `step` bits per coordinate. False when out of range.
bool Encode(double lon, double lat, int step, HashBits* hash);
// The 52-bit score GEOADD stores. REQUIRES: lon/lat within the limits above.
uint64_t EncodeScore(double lon, double lat);
// Decodes a score (as Redis: the double is truncated to a 64-bit integer) into the centre of its
// box, clamped to the limits. xy[0] = longitude, xy[1] = latitude.
void DecodeScore(double score, double* xy);
// GEOHASH's 11-character standard geohash of a stored score (latitude range -90..90).
std::string StandardGeohash(double score);

// Haversine distance in meters.
double Distance(double lon1, double lat1, double lon2, double lat2);
// True (and *distance) when (lon, lat) is inside the shape.
bool WithinShape(const Shape& shape, double lon, double lat, double* distance);
// The boxes to visit for `shape`.
SearchBoxes BoxesForShape(const Shape& shape);
// The score interval [*min, *max) of every point inside `box`.
void ScoreRangeOfBox(const HashBits& box, uint64_t* min, uint64_t* max);

}  // namespace rockcache::server::geo
