// Databases: SELECT, MOVE, SWAPDB, COPY, FLUSHDB. (DBSIZE, KEYS, SCAN, RANDOMKEY need nothing
// of their own: they run in the connection's database like every command, see
// config/current_db.h and "Databases" in storage/store.h.)
#include <climits>

#include "cache/cache.h"
#include "config/current_db.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/connection.h"
#include "server/protocol/reply.h"
#include "server/pubsub/notify.h"
#include "server/pubsub/pubsub.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

// Parses a database number as Redis's getIntFromObjectOrReply does, then checks its range.
// On failure appends the error (`not_integer`: Redis's message for a bad number, nullptr = the
// generic one) and returns false.
bool ParseDb(CommandContext& ctx, const std::string& arg, int* db, std::string* out,
             const char* not_integer = nullptr) {
  int64_t value = 0;
  if (!ParseInteger(arg, &value)) {
    if (not_integer != nullptr) return AppendError(out, not_integer), false;
    return out->append(kReplyNotInteger), false;
  }
  if (value < INT_MIN || value > INT_MAX) {
    return AppendError(
               out,
               not_integer != nullptr
                   ? not_integer
                   : "ERR value is out of range, value must between -2147483648 and 2147483647"),
           false;
  }
  if (value < 0 || value >= ctx.databases()) {
    return AppendError(out, "ERR DB index is out of range"), false;
  }
  *db = static_cast<int>(value);
  return true;
}

// SELECT index (network thread: changes the connection).
void Select(CommandContext& ctx, Args& argv, std::string* out) {
  int db = 0;
  if (!ParseDb(ctx, argv[1], &db, out)) return;
  ctx.conn->db = db;
  ctx.conn->info->db.store(db, std::memory_order_relaxed);
  out->append(kReplyOk);
}

// Erases `key` from the cache of logical database `db` (the executor erased it in the current
// one): a write that lands in another database. Key lock held.
void EraseInDb(CommandContext& ctx, int db, std::string_view key) {
  if (ctx.cache == nullptr) return;
  DbScope scope(ctx.store->PhysicalDb(db));
  ctx.cache->Erase(key);
}

// A keyspace event in logical database `db` (MOVE and COPY ... DB announce the key there).
void NotifyInDb(CommandContext& ctx, uint32_t type, std::string_view event, std::string_view key,
                int db) {
  const uint32_t flags = ctx.pubsub().notify_flags();
  if (flags & type) PublishKeyspaceEvent(ctx.pubsub(), flags, type, event, key, db);
}

// MOVE key db. Events as Redis: new (in db), move_from, move_to (in db).
void Move(CommandContext& ctx, Args& argv, std::string* out) {
  int db = 0;
  if (!ParseDb(ctx, argv[2], &db, out)) return;
  if (db == ctx.db) return AppendError(out, "ERR source and destination objects are the same");
  EraseInDb(ctx, db, argv[1]);  // a negative entry there must not survive the key's arrival
  auto moved = ctx.store->Move(argv[1], db);
  if (!moved.ok()) return AppendStatusError(out, moved.status());
  if (*moved) {
    NotifyInDb(ctx, kNotifyNew, "new", argv[1], db);  // MOVE only moves to an absent key
    NotifyKeyspaceEvent(ctx, kNotifyGeneric, "move_from", argv[1]);
    NotifyInDb(ctx, kNotifyGeneric, "move_to", argv[1], db);
  }
  AppendInteger(out, *moved ? 1 : 0);
}

// COPY source destination [DB destination-db] [REPLACE]
void Copy(CommandContext& ctx, Args& argv, std::string* out) {
  int db = ctx.db;
  bool replace = false;
  for (size_t i = 3; i < argv.size(); ++i) {
    if (Is(argv[i], "REPLACE")) {
      replace = true;
    } else if (Is(argv[i], "DB") && i + 1 < argv.size()) {
      if (!ParseDb(ctx, argv[++i], &db, out)) return;
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  if (db == ctx.db && argv[1] == argv[2]) {
    return AppendError(out, "ERR source and destination objects are the same");
  }
  if (db != ctx.db) EraseInDb(ctx, db, argv[2]);
  auto copied = ctx.store->Copy(argv[1], argv[2], db == ctx.db ? -1 : db, replace);
  if (!copied.ok()) return AppendStatusError(out, copied.status());
  if (*copied) {  // events as Redis: new (when created), copy_to, in the destination database
    // (Redis deletes a replaced destination and adds it again: `new` either way.)
    if (db == ctx.db) {
      AnnounceNewKey(ctx, argv[2]);
      NotifyKeyspaceEvent(ctx, kNotifyGeneric, "copy_to", argv[2]);
    } else {
      NotifyInDb(ctx, kNotifyNew, "new", argv[2], db);
      NotifyInDb(ctx, kNotifyGeneric, "copy_to", argv[2], db);
    }
  }
  AppendInteger(out, *copied ? 1 : 0);
}

// SWAPDB index1 index2. Holds every key lock (kAllKeys). The cache needs nothing: its entries
// are tagged with physical databases, and only the logical -> physical mapping changes.
void SwapDb(CommandContext& ctx, Args& argv, std::string* out) {
  int a = 0, b = 0;
  // As Redis: both indexes must be integers before either is range-checked (SWAPDB -1 x is
  // "invalid second DB index", not "out of range").
  auto is_int = [](const std::string& arg) {
    int64_t v = 0;
    return ParseInteger(arg, &v) && v >= INT_MIN && v <= INT_MAX;
  };
  if (!is_int(argv[1])) return AppendError(out, "ERR invalid first DB index");
  if (!is_int(argv[2])) return AppendError(out, "ERR invalid second DB index");
  if (!ParseDb(ctx, argv[1], &a, out, "ERR invalid first DB index")) return;
  if (!ParseDb(ctx, argv[2], &b, out, "ERR invalid second DB index")) return;
  if (a != b) {
    if (Status s = ctx.store->SwapDb(a, b); !s.ok()) return AppendStatusError(out, s);
  }
  out->append(kReplyOk);
}

// FLUSHDB [ASYNC|SYNC]. Holds every key lock (kAllKeys).
void FlushDb(CommandContext& ctx, Args& argv, std::string* out) {
  if (argv.size() > 2) return out->append(kReplySyntaxError), void();
  if (argv.size() == 2 && !Is(argv[1], "ASYNC") && !Is(argv[1], "SYNC")) {
    return out->append(kReplySyntaxError), void();
  }
  Status s = ctx.store->FlushDb();
  if (ctx.cache != nullptr) ctx.cache->ClearDb(CurrentDb());  // even on error: it may be partial
  if (!s.ok()) return AppendStatusError(out, s);
  out->append(kReplyOk);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kDatabaseCommands = {
    {"select", 2, kConnection | kFast, 0, 0, 0, Select},
    {"move", 3, kWrite | kFast, 1, 1, 1, Move},
    {"copy", -3, kWrite, 1, 2, 1, Copy},
    {"swapdb", 3, kWrite | kAllKeys | kCacheAware | kFast, 0, 0, 0, SwapDb},
    {"flushdb", -1, kWrite | kAllKeys | kCacheAware, 0, 0, 0, FlushDb},
};
// clang-format on

}  // namespace rockcache::server
