#include "server/commands/geohash.h"

#include <cmath>

namespace rockcache::server::geo {
namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr double kEarthRadiusMeters = 6372797.560856;
constexpr double kMercatorMax = 20037726.37;

double DegToRad(double deg) { return deg * kDegToRad; }
double RadToDeg(double rad) { return rad / kDegToRad; }

// Spreads the 32 bits of v over the even bit positions of a 64-bit word.
uint64_t SpreadBits(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// The inverse: gathers the even bits of x into 32 bits.
uint32_t GatherBits(uint64_t x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

const Range kLonRange{kLonMin, kLonMax};
const Range kLatRange{kLatMin, kLatMax};

bool EncodeIn(const Range& lon_range, const Range& lat_range, double lon, double lat, int step,
              HashBits* hash) {
  if (step > 32 || step == 0) return false;
  if (lon > 180 || lon < -180 || lat > kLatMax || lat < kLatMin) return false;
  hash->bits = 0;
  hash->step = static_cast<uint8_t>(step);
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) {
    return false;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  lat_offset *= (1 << step);
  lon_offset *= (1 << step);
  // Latitude on the even bits, longitude on the odd ones (fractions truncated).
  hash->bits = SpreadBits(static_cast<uint32_t>(lat_offset)) |
               (SpreadBits(static_cast<uint32_t>(lon_offset)) << 1);
  return true;
}

Area DecodeIn(const Range& lon_range, const Range& lat_range, const HashBits& hash) {
  Area area;
  area.hash = hash;
  uint32_t lat_cell = GatherBits(hash.bits);
  uint32_t lon_cell = GatherBits(hash.bits >> 1);
  double cells = static_cast<double>(1ULL << hash.step);
  double lat_scale = lat_range.max - lat_range.min;
  double lon_scale = lon_range.max - lon_range.min;
  area.latitude.min = lat_range.min + (lat_cell * 1.0 / cells) * lat_scale;
  area.latitude.max =
      lat_range.min + (static_cast<uint32_t>(lat_cell + 1) * 1.0 / cells) * lat_scale;
  area.longitude.min = lon_range.min + (lon_cell * 1.0 / cells) * lon_scale;
  area.longitude.max =
      lon_range.min + (static_cast<uint32_t>(lon_cell + 1) * 1.0 / cells) * lon_scale;
  return area;
}

// Moves a box one cell east (+1) or west (-1): adds to the odd (longitude) bits only.
void MoveLon(HashBits* hash, int d) {
  uint64_t x = hash->bits & 0xaaaaaaaaaaaaaaaaULL;
  uint64_t y = hash->bits & 0x5555555555555555ULL;
  uint64_t zz = 0x5555555555555555ULL >> (64 - hash->step * 2);
  if (d > 0) {
    x = x + (zz + 1);
  } else {
    x = x | zz;
    x = x - (zz + 1);
  }
  x &= (0xaaaaaaaaaaaaaaaaULL >> (64 - hash->step * 2));
  hash->bits = x | y;
}

// Moves a box one cell north (+1) or south (-1): the even (latitude) bits.
void MoveLat(HashBits* hash, int d) {
  uint64_t x = hash->bits & 0xaaaaaaaaaaaaaaaaULL;
  uint64_t y = hash->bits & 0x5555555555555555ULL;
  uint64_t zz = 0xaaaaaaaaaaaaaaaaULL >> (64 - hash->step * 2);
  if (d > 0) {
    y = y + (zz + 1);
  } else {
    y = y | zz;
    y = y - (zz + 1);
  }
  y &= (0x5555555555555555ULL >> (64 - hash->step * 2));
  hash->bits = x | y;
}

HashBits Neighbor(const HashBits& hash, int dlon, int dlat) {
  HashBits n = hash;
  if (dlon != 0) MoveLon(&n, dlon);
  if (dlat != 0) MoveLat(&n, dlat);
  return n;
}

// Redis's precision for a radius: the coarsest step whose cells are still about the radius, one
// or two steps coarser near the poles.
int StepForRadius(double range_meters, double lat) {
  if (range_meters == 0) return 26;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > 26) step = 26;
  return step;
}

// The search area's bounds: min lon, min lat, max lon, max lat.
void BoundingBox(const Shape& shape, double* bounds) {
  bool circle = shape.type == Shape::Type::kCircle;
  double height = shape.conversion * (circle ? shape.radius : shape.height / 2);
  double width = shape.conversion * (circle ? shape.radius : shape.width / 2);
  const double lat_delta = RadToDeg(height / kEarthRadiusMeters);
  const double lon_delta_top =
      RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(shape.lat + lat_delta)));
  const double lon_delta_bottom =
      RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(shape.lat - lat_delta)));
  // The wider edge is the one nearer the equator.
  bool southern = shape.lat < 0;
  bounds[0] = southern ? shape.lon - lon_delta_bottom : shape.lon - lon_delta_top;
  bounds[2] = southern ? shape.lon + lon_delta_bottom : shape.lon + lon_delta_top;
  bounds[1] = shape.lat - lat_delta;
  bounds[3] = shape.lat + lat_delta;
}

}  // namespace

bool Encode(double lon, double lat, int step, HashBits* hash) {
  return EncodeIn(kLonRange, kLatRange, lon, lat, step, hash);
}

uint64_t EncodeScore(double lon, double lat) {
  HashBits hash;
  if (!Encode(lon, lat, kStepMax, &hash)) return 0;
  return hash.bits << (52 - hash.step * 2);
}

void DecodeScore(double score, double* xy) {
  // C's (uint64_t) cast of the score, as x86-64 code does it for any double (scores of members
  // not added by GEOADD may be negative or huge).
  uint64_t bits;
  constexpr double kTwo63 = 9223372036854775808.0;
  if (std::isnan(score) || score <= -kTwo63) {
    bits = 0x8000000000000000ULL;
  } else if (score < kTwo63) {
    bits = static_cast<uint64_t>(static_cast<int64_t>(score));
  } else if (score < 2 * kTwo63) {
    bits = static_cast<uint64_t>(static_cast<int64_t>(score - kTwo63)) ^ 0x8000000000000000ULL;
  } else {
    bits = 0;
  }
  HashBits hash{bits, kStepMax};
  Area area = DecodeIn(kLonRange, kLatRange, hash);
  xy[0] = (area.longitude.min + area.longitude.max) / 2;
  if (xy[0] > kLonMax) xy[0] = kLonMax;
  if (xy[0] < kLonMin) xy[0] = kLonMin;
  xy[1] = (area.latitude.min + area.latitude.max) / 2;
  if (xy[1] > kLatMax) xy[1] = kLatMax;
  if (xy[1] < kLatMin) xy[1] = kLatMin;
}

std::string StandardGeohash(double score) {
  static const char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double xy[2];
  DecodeScore(score, xy);
  HashBits hash;
  EncodeIn(Range{-180, 180}, Range{-90, 90}, xy[0], xy[1], 26, &hash);
  std::string out(11, '0');
  for (int i = 0; i < 10; ++i) {  // 52 bits make 10 characters; the 11th is always '0'
    out[static_cast<size_t>(i)] = kAlphabet[(hash.bits >> (52 - (i + 1) * 5)) & 0x1f];
  }
  return out;
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  double lat1r = DegToRad(lat1);
  double lon1r = DegToRad(lon1);
  double lat2r = DegToRad(lat2);
  double lon2r = DegToRad(lon2);
  double u = std::sin((lat2r - lat1r) / 2);
  double v = std::sin((lon2r - lon1r) / 2);
  return 2.0 * kEarthRadiusMeters *
         std::asin(std::sqrt(u * u + std::cos(lat1r) * std::cos(lat2r) * v * v));
}

bool WithinShape(const Shape& shape, double lon, double lat, double* distance) {
  if (shape.type == Shape::Type::kCircle) {
    *distance = Distance(shape.lon, shape.lat, lon, lat);
    return *distance <= shape.radius * shape.conversion;
  }
  double width_m = shape.width * shape.conversion;
  double height_m = shape.height * shape.conversion;
  double lon_distance = Distance(lon, lat, shape.lon, lat);
  double lat_distance = Distance(lon, lat, lon, shape.lat);
  if (lon_distance > width_m / 2 || lat_distance > height_m / 2) return false;
  *distance = Distance(shape.lon, shape.lat, lon, lat);
  return true;
}

SearchBoxes BoxesForShape(const Shape& shape) {
  double bounds[4];
  BoundingBox(shape, bounds);
  const double min_lon = bounds[0], min_lat = bounds[1], max_lon = bounds[2], max_lat = bounds[3];
  double radius_meters = shape.type == Shape::Type::kCircle
                             ? shape.radius
                             : std::sqrt((shape.width / 2) * (shape.width / 2) +
                                         (shape.height / 2) * (shape.height / 2));
  radius_meters *= shape.conversion;

  int step = StepForRadius(radius_meters, shape.lat);
  HashBits hash;
  EncodeIn(kLonRange, kLatRange, shape.lon, shape.lat, step, &hash);
  Area north = DecodeIn(kLonRange, kLatRange, Neighbor(hash, 0, 1));
  Area south = DecodeIn(kLonRange, kLatRange, Neighbor(hash, 0, -1));
  Area east = DecodeIn(kLonRange, kLatRange, Neighbor(hash, 1, 0));
  Area west = DecodeIn(kLonRange, kLatRange, Neighbor(hash, -1, 0));
  // A step too fine for an area near the edge of its box: one step coarser.
  bool coarser = north.latitude.max < max_lat || south.latitude.min > min_lat ||
                 east.longitude.max < max_lon || west.longitude.min > min_lon;
  if (step > 1 && coarser) {
    step--;
    EncodeIn(kLonRange, kLatRange, shape.lon, shape.lat, step, &hash);
  }
  Area area = DecodeIn(kLonRange, kLatRange, hash);

  SearchBoxes out;
  HashBits* b = out.boxes;
  b[0] = hash;
  b[1] = Neighbor(hash, 0, 1);    // north
  b[2] = Neighbor(hash, 0, -1);   // south
  b[3] = Neighbor(hash, 1, 0);    // east
  b[4] = Neighbor(hash, -1, 0);   // west
  b[5] = Neighbor(hash, 1, 1);    // north east
  b[6] = Neighbor(hash, -1, 1);   // north west
  b[7] = Neighbor(hash, 1, -1);   // south east
  b[8] = Neighbor(hash, -1, -1);  // south west
  // Drop the neighbours on a side the search area does not reach.
  if (step >= 2) {
    if (area.latitude.min < min_lat) b[2] = b[8] = b[7] = HashBits{};
    if (area.latitude.max > max_lat) b[1] = b[5] = b[6] = HashBits{};
    if (area.longitude.min < min_lon) b[4] = b[8] = b[6] = HashBits{};
    if (area.longitude.max > max_lon) b[3] = b[7] = b[5] = HashBits{};
  }
  return out;
}

void ScoreRangeOfBox(const HashBits& box, uint64_t* min, uint64_t* max) {
  int shift = 52 - box.step * 2;
  *min = box.bits << shift;
  *max = (box.bits + 1) << shift;
}

}  // namespace rockcache::server::geo
