// GEO commands on sorted sets whose scores are Redis's 52-bit geohashes
// (server/commands/geohash.h): GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE,
// GEORADIUS, GEORADIUSBYMEMBER and the _RO forms. Arguments are checked in Redis 7.0's order
// with its error texts; distances are written "%.4f" and coordinates as Redis's human long
// doubles, so replies match byte for byte.
//
// A search reads each of the (up to 9) boxes with one score-range read; each read sees one
// snapshot, the boxes may see different ones under concurrent writes (the write commands,
// GEORADIUS ... STORE and GEOSEARCHSTORE, hold their key locks throughout).
#include <algorithm>
#include <cstdio>
#include <optional>

#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/geohash.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "storage/numbers.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// Reads a double as Redis's getDoubleFromObjectOrReply; `error` replaces the default text.
bool ReadDouble(const std::string& arg, double* value, std::string* out,
                std::string_view error = kNotFloat) {
  if (storage::ParseDouble(arg, value)) return true;
  AppendError(out, error);
  return false;
}

// Reads "longitude latitude" at argv[i], checking Redis's limits.
bool ReadLonLat(const Args& argv, size_t i, double* xy, std::string* out) {
  if (!ReadDouble(argv[i], &xy[0], out) || !ReadDouble(argv[i + 1], &xy[1], out)) return false;
  if (xy[0] < geo::kLonMin || xy[0] > geo::kLonMax || xy[1] < geo::kLatMin ||
      xy[1] > geo::kLatMax) {
    char text[160];
    std::snprintf(text, sizeof(text), "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
    AppendError(out, text);
    return false;
  }
  return true;
}

// Meters per unit (m, km, ft, mi; any case).
bool ReadUnit(const std::string& arg, double* to_meters, std::string* out) {
  if (Is(arg, "m")) {
    *to_meters = 1;
  } else if (Is(arg, "km")) {
    *to_meters = 1000;
  } else if (Is(arg, "ft")) {
    *to_meters = 0.3048;
  } else if (Is(arg, "mi")) {
    *to_meters = 1609.34;
  } else {
    AppendError(out, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return false;
  }
  return true;
}

// "radius unit" at argv[i].
bool ReadRadius(const Args& argv, size_t i, geo::Shape* shape, std::string* out) {
  double radius = 0;
  if (!ReadDouble(argv[i], &radius, out, "ERR need numeric radius")) return false;
  if (radius < 0) {
    AppendError(out, "ERR radius cannot be negative");
    return false;
  }
  if (!ReadUnit(argv[i + 1], &shape->conversion, out)) return false;
  shape->type = geo::Shape::Type::kCircle;
  shape->radius = radius;
  return true;
}

// "width height unit" at argv[i].
bool ReadBox(const Args& argv, size_t i, geo::Shape* shape, std::string* out) {
  double width = 0, height = 0;
  if (!ReadDouble(argv[i], &width, out, "ERR need numeric width") ||
      !ReadDouble(argv[i + 1], &height, out, "ERR need numeric height")) {
    return false;
  }
  if (width < 0 || height < 0) {
    AppendError(out, "ERR height or width cannot be negative");
    return false;
  }
  if (!ReadUnit(argv[i + 2], &shape->conversion, out)) return false;
  shape->type = geo::Shape::Type::kBox;
  shape->width = width;
  shape->height = height;
  return true;
}

void AppendDistance(std::string* out, double distance) {
  char buf[128];
  int n = std::snprintf(buf, sizeof(buf), "%.4f", distance);
  AppendBulk(out, std::string_view(buf, static_cast<size_t>(n)));
}

void AppendCoordinates(std::string* out, const double* xy) {
  AppendArrayHeader(out, 2);
  AppendDoubleText(out, storage::FormatLongDouble(xy[0]));  // doubles under RESP3
  AppendDoubleText(out, storage::FormatLongDouble(xy[1]));
}

// The key's type as a sorted set: false (and WRONGTYPE appended) for another type.
bool ZSetOrAbsent(CommandContext& ctx, const std::string& key, bool* exists, std::string* out) {
  auto type = ctx.store->Type(key);
  if (!type.ok()) {
    AppendStatusError(out, type.status());
    return false;
  }
  if (*type != storage::KeyType::kNone && *type != storage::KeyType::kZSet) {
    out->append(kReplyWrongType);
    return false;
  }
  *exists = *type == storage::KeyType::kZSet;
  return true;
}

// GEOADD key [NX|XX] [CH] longitude latitude member [...]
void GeoAdd(CommandContext& ctx, Args& argv, std::string* out) {
  bool nx = false, xx = false;
  storage::ZAddOptions options;
  size_t i = 2;
  for (; i < argv.size(); ++i) {
    if (Is(argv[i], "NX")) {
      nx = true;
    } else if (Is(argv[i], "XX")) {
      xx = true;
    } else if (Is(argv[i], "CH")) {
      options.ch = true;
    } else {
      break;
    }
  }
  if ((argv.size() - i) % 3 != 0 || (nx && xx)) return out->append(kReplySyntaxError), void();
  std::vector<std::pair<double, std::string_view>> members;
  for (; i < argv.size(); i += 3) {
    double xy[2];
    if (!ReadLonLat(argv, i, xy, out)) return;
    members.emplace_back(static_cast<double>(geo::EncodeScore(xy[0], xy[1])), argv[i + 2]);
  }
  if (members.empty()) return out->append(kReplySyntaxError), void();
  using Condition = storage::ZAddOptions::Condition;
  options.condition = nx ? Condition::kIfAbsent : xx ? Condition::kIfPresent : Condition::kAlways;
  auto result = ctx.store->ZAdd(argv[1], members, options);
  if (!result.ok()) return AppendStatusError(out, result.status());
  // As ZADD (GEOADD is ZADD in Redis): without CH updated scores are not counted.
  const bool plain = options.condition == Condition::kAlways;
  if (result->count > 0 || plain) NotifyKeyspaceEvent(ctx, kNotifyZSet, "zadd", argv[1]);
  AppendInteger(out, result->count);
}

// GEODIST key member1 member2 [unit]
void GeoDist(CommandContext& ctx, Args& argv, std::string* out) {
  double to_meters = 1;
  if (argv.size() == 5) {
    if (!ReadUnit(argv[4], &to_meters, out)) return;
  } else if (argv.size() > 5) {
    return out->append(kReplySyntaxError), void();
  }
  auto scores = ctx.store->ZMScore(argv[1], {argv[2], argv[3]});
  if (!scores.ok()) return AppendStatusError(out, scores.status());
  if (!(*scores)[0] || !(*scores)[1]) return out->append(NullBulkReply()), void();
  double a[2], b[2];
  geo::DecodeScore(*(*scores)[0], a);
  geo::DecodeScore(*(*scores)[1], b);
  AppendDistance(out, geo::Distance(a[0], a[1], b[0], b[1]) / to_meters);
}

// GEOHASH / GEOPOS key [member ...]: one entry per member, nil for a missing one.
void GeoHashOrPos(CommandContext& ctx, Args& argv, std::string* out) {
  bool pos = Is(argv[0], "GEOPOS");
  if (argv.size() == 2) {  // no members: only the type matters
    bool exists = false;
    if (!ZSetOrAbsent(ctx, argv[1], &exists, out)) return;
    return AppendArrayHeader(out, 0);
  }
  auto scores = ctx.store->ZMScore(argv[1], ArgViews(argv, 2));
  if (!scores.ok()) return AppendStatusError(out, scores.status());
  AppendArrayHeader(out, static_cast<int64_t>(scores->size()));
  for (const auto& score : *scores) {
    if (!score) {
      out->append(pos ? NullArrayReply() : NullBulkReply());
    } else if (pos) {
      double xy[2];
      geo::DecodeScore(*score, xy);
      AppendCoordinates(out, xy);
    } else {
      AppendBulk(out, geo::StandardGeohash(*score));
    }
  }
}

// Which search command runs (Redis's georadiusGeneric flags).
enum SearchFlags : unsigned {
  kFromCoords = 1u << 0,   // GEORADIUS[_RO]
  kFromMember = 1u << 1,   // GEORADIUSBYMEMBER[_RO]
  kNoStore = 1u << 2,      // the _RO forms
  kSearch = 1u << 3,       // GEOSEARCH syntax
  kSearchStore = 1u << 4,  // GEOSEARCHSTORE
};

struct Found {
  std::string member;
  double score = 0;
  double dist = 0;
  double xy[2] = {0, 0};
};

// The members inside the shape, box by box in Redis's order; with `limit` (ANY), stops once it
// has that many.
bool CollectInShape(CommandContext& ctx, const std::string& key, const geo::Shape& shape,
                    size_t limit, std::vector<Found>* found, std::string* out) {
  geo::SearchBoxes boxes = geo::BoxesForShape(shape);
  size_t last = 0;  // index of the last box read; box 0 is never compared (as Redis)
  for (size_t i = 0; i < 9; ++i) {
    const geo::HashBits& box = boxes.boxes[i];
    if (box.IsZero()) continue;
    if (last != 0 && box.bits == boxes.boxes[last].bits && box.step == boxes.boxes[last].step) {
      continue;  // huge radii make neighbours repeat
    }
    if (!found->empty() && limit != 0 && found->size() >= limit) break;
    uint64_t min = 0, max = 0;
    geo::ScoreRangeOfBox(box, &min, &max);
    storage::ZRangeSpec spec;
    spec.by = storage::ZRangeSpec::By::kScore;
    spec.score.min = static_cast<double>(min);
    spec.score.max = static_cast<double>(max);
    spec.score.max_exclusive = true;
    auto members = ctx.store->ZRange(key, spec);
    if (!members.ok()) {
      AppendStatusError(out, members.status());
      return false;
    }
    for (auto& item : *members) {
      Found f;
      geo::DecodeScore(item.score, f.xy);
      if (geo::WithinShape(shape, f.xy[0], f.xy[1], &f.dist)) {
        f.member = std::move(item.member);
        f.score = item.score;
        found->push_back(std::move(f));
      }
      if (!found->empty() && limit != 0 && found->size() >= limit) break;
    }
    last = i;
  }
  return true;
}

// Replaces `dst` with the members (scores = distances with STOREDIST); deletes it when empty.
// `event`: georadiusstore or geosearchstore.
bool StoreFound(CommandContext& ctx, const std::string& dst, const std::vector<Found>& found,
                size_t n, bool storedist, const char* event, std::string* out) {
  auto deleted = ctx.store->Del({dst});
  if (!deleted.ok()) {
    AppendStatusError(out, deleted.status());
    return false;
  }
  if (n == 0) return NotifyStore(ctx, kNotifyZSet, event, dst, *deleted, 0), true;
  // Group commit defers the delete; the ZADD below reads the key and must see it.
  if (Status s = ctx.store->FlushThreadWriteGroup(); !s.ok()) {
    AppendStatusError(out, s);
    return false;
  }
  std::vector<std::pair<double, std::string_view>> members;
  members.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    members.emplace_back(storedist ? found[i].dist : found[i].score, found[i].member);
  }
  auto added = ctx.store->ZAdd(dst, members, {});
  if (!added.ok()) {
    AppendStatusError(out, added.status());
    return false;
  }
  NotifyStore(ctx, kNotifyZSet, event, dst, *deleted, static_cast<int64_t>(n));
  return true;
}

// GEORADIUS key lon lat radius unit [WITHDIST] [WITHHASH] [WITHCOORD] [ASC|DESC]
//   [COUNT n [ANY]] [STORE key|STOREDIST key]; GEORADIUSBYMEMBER key member radius unit ...;
// GEOSEARCH key FROMMEMBER m|FROMLONLAT lon lat BYRADIUS r unit|BYBOX w h unit ...;
// GEOSEARCHSTORE dst src ... [STOREDIST].
void SearchGeneric(CommandContext& ctx, const Args& argv, size_t src, unsigned flags,
                   std::string* out) {
  bool exists = false;
  if (!ZSetOrAbsent(ctx, argv[src], &exists, out)) return;
  geo::Shape shape;
  double center[2] = {0, 0};
  const std::string* store_key = nullptr;
  bool storedist = false;
  size_t base = 0;
  if (flags & kFromCoords) {
    base = 6;
    if (!ReadLonLat(argv, 2, center, out) || !ReadRadius(argv, 4, &shape, out)) return;
  } else if ((flags & kFromMember) && !exists) {
    base = 5;  // nothing to search, but the options still decide the reply
  } else if (flags & kFromMember) {
    base = 5;
    auto score = ctx.store->ZScore(argv[src], argv[2]);
    if (!score.ok()) return AppendStatusError(out, score.status());
    if (!*score) return AppendError(out, "ERR could not decode requested zset member");
    geo::DecodeScore(**score, center);
    if (!ReadRadius(argv, 3, &shape, out)) return;
  } else {
    base = 2;
    if (flags & kSearchStore) {
      base = 3;
      store_key = &argv[1];
    }
  }

  bool withdist = false, withhash = false, withcoord = false, any = false;
  bool frommember = false, fromlonlat = false, byradius = false, bybox = false;
  enum { kUnsorted, kAsc, kDesc } sort = kUnsorted;
  int64_t count = 0;
  const bool search = flags & kSearch;
  const bool may_store = !(flags & kNoStore) && !search;
  for (size_t i = base; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    size_t left = argv.size() - i - 1;
    if (Is(arg, "WITHDIST")) {
      withdist = true;
    } else if (Is(arg, "WITHHASH")) {
      withhash = true;
    } else if (Is(arg, "WITHCOORD")) {
      withcoord = true;
    } else if (Is(arg, "ANY")) {
      any = true;
    } else if (Is(arg, "ASC")) {
      sort = kAsc;
    } else if (Is(arg, "DESC")) {
      sort = kDesc;
    } else if (Is(arg, "COUNT") && left >= 1) {
      if (!ParseInteger(argv[i + 1], &count)) return out->append(kReplyNotInteger), void();
      if (count <= 0) return AppendError(out, "ERR COUNT must be > 0");
      ++i;
    } else if ((Is(arg, "STORE") || Is(arg, "STOREDIST")) && left >= 1 && may_store) {
      store_key = &argv[i + 1];
      storedist = Is(arg, "STOREDIST");
      ++i;
    } else if (Is(arg, "STOREDIST") && search && (flags & kSearchStore)) {
      storedist = true;
    } else if (Is(arg, "FROMMEMBER") && left >= 1 && search && !fromlonlat) {
      if (exists) {
        auto score = ctx.store->ZScore(argv[src], argv[i + 1]);
        if (!score.ok()) return AppendStatusError(out, score.status());
        if (!*score) return AppendError(out, "ERR could not decode requested zset member");
        geo::DecodeScore(**score, center);
      }
      frommember = true;
      ++i;
    } else if (Is(arg, "FROMLONLAT") && left >= 2 && search && !frommember) {
      if (!ReadLonLat(argv, i + 1, center, out)) return;
      fromlonlat = true;
      i += 2;
    } else if (Is(arg, "BYRADIUS") && left >= 2 && search && !bybox) {
      if (!ReadRadius(argv, i + 1, &shape, out)) return;
      byradius = true;
      i += 2;
    } else if (Is(arg, "BYBOX") && left >= 3 && search && !byradius) {
      if (!ReadBox(argv, i + 1, &shape, out)) return;
      bybox = true;
      i += 3;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }

  if (store_key != nullptr && (withdist || withhash || withcoord)) {
    return AppendError(
        out, std::string("ERR ") +
                 ((flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
                 " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
  }
  if (search && !(frommember || fromlonlat)) {
    return AppendError(
        out, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + argv[0]);
  }
  if (search && !(byradius || bybox)) {
    return AppendError(out,
                       "ERR exactly one of BYRADIUS and BYBOX can be specified for " + argv[0]);
  }
  if (any && count == 0) return AppendError(out, "ERR the ANY argument requires COUNT argument");

  if (!exists) {
    if (store_key == nullptr) return AppendArrayHeader(out, 0);
    auto deleted = ctx.store->Del({*store_key});
    if (!deleted.ok()) return AppendStatusError(out, deleted.status());
    NotifyStore(ctx, kNotifyZSet, "", *store_key, *deleted, 0);
    return AppendInteger(out, 0);
  }
  if (count != 0 && sort == kUnsorted && !any) sort = kAsc;  // the nearest N

  shape.lon = center[0];
  shape.lat = center[1];
  std::vector<Found> found;
  size_t limit = any ? static_cast<size_t>(count) : 0;
  if (!CollectInShape(ctx, argv[src], shape, limit, &found, out)) return;
  if (found.empty() && store_key == nullptr) return AppendArrayHeader(out, 0);

  if (sort == kAsc) {
    std::stable_sort(found.begin(), found.end(),
                     [](const Found& a, const Found& b) { return a.dist < b.dist; });
  } else if (sort == kDesc) {
    std::stable_sort(found.begin(), found.end(),
                     [](const Found& a, const Found& b) { return a.dist > b.dist; });
  }
  size_t n = found.size();
  if (count != 0 && static_cast<uint64_t>(count) < n) n = static_cast<size_t>(count);
  for (size_t i = 0; i < n; ++i) found[i].dist /= shape.conversion;

  if (store_key != nullptr) {
    const char* event = Is(argv[0], "GEOSEARCHSTORE") ? "geosearchstore" : "georadiusstore";
    if (!StoreFound(ctx, *store_key, found, n, storedist, event, out)) return;
    return AppendInteger(out, static_cast<int64_t>(n));
  }
  int options =
      static_cast<int>(withdist) + static_cast<int>(withhash) + static_cast<int>(withcoord);
  AppendArrayHeader(out, static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) {
    const Found& f = found[i];
    if (options > 0) AppendArrayHeader(out, options + 1);
    AppendBulk(out, f.member);
    if (withdist) AppendDistance(out, f.dist);
    if (withhash) AppendInteger(out, static_cast<int64_t>(f.score));
    if (withcoord) AppendCoordinates(out, f.xy);
  }
}

void GeoRadius(CommandContext& ctx, Args& argv, std::string* out) {
  SearchGeneric(ctx, argv, 1, kFromCoords, out);
}
void GeoRadiusRo(CommandContext& ctx, Args& argv, std::string* out) {
  SearchGeneric(ctx, argv, 1, kFromCoords | kNoStore, out);
}
void GeoRadiusByMember(CommandContext& ctx, Args& argv, std::string* out) {
  SearchGeneric(ctx, argv, 1, kFromMember, out);
}
void GeoRadiusByMemberRo(CommandContext& ctx, Args& argv, std::string* out) {
  SearchGeneric(ctx, argv, 1, kFromMember | kNoStore, out);
}
void GeoSearch(CommandContext& ctx, Args& argv, std::string* out) {
  SearchGeneric(ctx, argv, 1, kSearch, out);
}
void GeoSearchStore(CommandContext& ctx, Args& argv, std::string* out) {
  SearchGeneric(ctx, argv, 2, kSearch | kSearchStore, out);
}

// GEORADIUS[BYMEMBER]'s keys: the source and any STORE/STOREDIST target.
std::vector<std::string_view> RadiusKeys(const Args& argv) {
  std::vector<std::string_view> keys{argv[1]};
  for (size_t i = 2; i + 1 < argv.size(); ++i) {
    if (Is(argv[i], "STORE") || Is(argv[i], "STOREDIST")) keys.emplace_back(argv[++i]);
  }
  return keys;
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kGeoCommands = {
    {"geoadd", -5, kWrite, 1, 1, 1, GeoAdd},
    {"geodist", -4, kReadOnly, 1, 1, 1, GeoDist},
    {"geohash", -2, kReadOnly, 1, 1, 1, GeoHashOrPos},
    {"geopos", -2, kReadOnly, 1, 1, 1, GeoHashOrPos},
    {"georadius", -6, kWrite, 1, 1, 1, GeoRadius, nullptr, nullptr, RadiusKeys},
    {"georadius_ro", -6, kReadOnly, 1, 1, 1, GeoRadiusRo},
    {"georadiusbymember", -5, kWrite, 1, 1, 1, GeoRadiusByMember, nullptr, nullptr, RadiusKeys},
    {"georadiusbymember_ro", -5, kReadOnly, 1, 1, 1, GeoRadiusByMemberRo},
    {"geosearch", -7, kReadOnly, 1, 1, 1, GeoSearch},
    {"geosearchstore", -8, kWrite, 1, 2, 1, GeoSearchStore},
};
// clang-format on

}  // namespace rockcache::server
