// Keyspace notifications (Redis's notify.c): after a write succeeds, its handler calls
//   NotifyKeyspaceEvent(ctx, kNotifyList, "lpush", key);
// which publishes "__keyspace@<db>__:<key>" -> "lpush" (class K) and "__keyevent@<db>__:lpush"
// -> "<key>" (class E) when notify-keyspace-events enables the event's class.
//
// Cost while disabled (the default ""): one relaxed atomic load and a branch per call.
//
// `new` (n, not part of A, as Redis 7): a key was created. A worker that runs a write while `n`
// is on first notes which of its keys do not exist (NewKeyWatch, one storage read per key); the
// first event the command then publishes for such a key (its own: set, lpush, rename_to...) is
// preceded by `new`, as Redis's dbAdd announces the key before the command's event. RENAME, COPY
// and MOVE announce their destination (also a replaced one) before their own events, as Redis.
//
// `keymiss` (m, not part of A): a read of a key that does not exist. Redis emits it from its
// read lookups (lookupKeyRead): every key of a read command (not OBJECT, MEMORY, WATCH) and the
// source keys of a few writes (GETDEL, GETEX, COPY, SORT, PFCOUNT, PFMERGE, BITOP, *STORE). On a
// worker the keys are checked before the command runs (one storage read per key); a command the
// network thread answers from the cache (a negative entry is a known miss) publishes from there
// (Publish is loop-safe). Cost while `n` and `m` are off: one relaxed load per command.
//
// Events rockcache never emits: `evicted` (cache eviction drops a cached copy, never a key: every
// key stays in RocksDB until it is deleted or expires, so no key is ever deleted for memory) and
// the module (d) class (no such commands). Their letters are accepted and shown by CONFIG GET as
// Redis does.
//
// Any thread (workers mostly): Publish only queues messages to the subscribers' loops.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/command.h"
#include "server/pubsub/pubsub.h"

namespace rockcache::cache {
class Cache;
}

namespace rockcache::server {

// Redis's NOTIFY_* bits (server.h), one per flag letter.
enum NotifyClass : uint32_t {
  kNotifyKeyspace = 1u << 0,  // K
  kNotifyKeyevent = 1u << 1,  // E
  kNotifyGeneric = 1u << 2,   // g
  kNotifyString = 1u << 3,    // $
  kNotifyList = 1u << 4,      // l
  kNotifySet = 1u << 5,       // s
  kNotifyHash = 1u << 6,      // h
  kNotifyZSet = 1u << 7,      // z
  kNotifyExpired = 1u << 8,   // x
  kNotifyEvicted = 1u << 9,   // e (never emitted, see above)
  kNotifyStream = 1u << 10,   // t
  kNotifyKeyMiss = 1u << 11,  // m
  kNotifyModule = 1u << 12,   // d
  kNotifyNew = 1u << 13,      // n
};

// The flags of a notify-keyspace-events value ("KEA", "Elg$"...). Unknown letters are ignored
// (the config validated the value already).
uint32_t ParseNotifyFlags(std::string_view letters);

// The database a handler's keys live in: the one the connection SELECTed.
inline int NotifyDb(const CommandContext& ctx) { return ctx.db; }

// One event (of class `type`, in logical database `db`): published to this server's
// subscribers as its notify-keyspace-events says, and, when replicas asked for its class
// (PubSub::shipped_flags), noted into the calling thread's write group so that it reaches them
// with the write (see "Replicas" below). `flags`: the notify_flags() the caller loaded. Any
// thread.
void PublishKeyspaceEvent(PubSub& pubsub, uint32_t flags, uint32_t type, std::string_view event,
                          std::string_view key, int db);
// Publishes the keyspace and/or keyevent message of one event to this server's subscribers
// only, as `local_flags` (a local_notify_flags()) says. Any thread.
void PublishKeyspaceEventLocally(PubSub& pubsub, uint32_t local_flags, uint32_t type,
                                 std::string_view event, std::string_view key, int db);

// Replicas. A rockcache replica applies its primary's WriteBatches, not its commands, so it
// cannot tell an LPUSH from an RPUSH. A replica declares the event classes it publishes
// (REPLCONF rc-events, whenever its notify-keyspace-events changes); from then on the primary
// writes every event of those classes into the WAL record of the write that caused it
// (storage::Store::NoteForReplicas, one note per event), and the replica publishes the events of
// each batch it applied, after applying it, as a Redis replica does when it runs the commands.
struct ShippedEvent {
  uint32_t type = 0;
  int db = 0;
  std::string_view event;
  std::string_view key;
};
std::string EncodeShippedEvent(uint32_t type, std::string_view event, std::string_view key, int db);
// False when `note` is not an encoded event (the views point into `note`).
bool DecodeShippedEvent(std::string_view note, ShippedEvent* out);

// True when events of class `type` are on (one relaxed load).
inline bool NotifyEnabled(const PubSub& pubsub, uint32_t type) {
  return (pubsub.notify_flags() & type) != 0;
}
inline bool NotifyEnabled(const CommandContext& ctx, uint32_t type) {
  return NotifyEnabled(ctx.pubsub(), type);
}

// The keys of one write that did not exist before it ran, and which of them were announced
// with `new` already (CommandContext::new_keys). One command, one worker thread.
struct NewKeyWatch {
  std::vector<std::string_view> absent;  // views of the command's arguments
  std::vector<bool> announced;
};

// The call handlers make, after their write succeeded.
void NotifyKeyspaceEventSlow(CommandContext& ctx, uint32_t type, std::string_view event,
                             std::string_view key);
inline void NotifyKeyspaceEvent(CommandContext& ctx, uint32_t type, std::string_view event,
                                std::string_view key) {
  if (NotifyEnabled(ctx, type | kNotifyNew)) NotifyKeyspaceEventSlow(ctx, type, event, key);
}
// Publishes `new` for `key` now (n on): a key the running write (re)creates whether or not it
// existed, as Redis's RENAME and COPY ... REPLACE delete the destination and add it again. Not
// repeated by the command's later events.
void AnnounceNewKey(CommandContext& ctx, std::string_view key);

// Worker, under the command's key locks, before its handler runs: publishes `keymiss` for the
// keys it reads that do not exist (m on), and while `n` is on fills *watch with the keys of a
// write that do not exist and points ctx.new_keys at it. One relaxed load when both are off.
void BeforeCommandSlow(CommandContext& ctx, const CommandSpec& spec, const Args& argv,
                       NewKeyWatch* watch);
inline void BeforeCommand(CommandContext& ctx, const CommandSpec& spec, const Args& argv,
                          NewKeyWatch* watch) {
  if (NotifyEnabled(ctx, kNotifyNew | kNotifyKeyMiss)) {
    BeforeCommandSlow(ctx, spec, argv, watch);
  }
}
// Network thread, after a command was answered from the cache (`now_ms` as the lookup, inside
// the DbScope of its database): `keymiss` for the keys `cache` knows absent. Never blocks.
void NotifyCacheMissesSlow(PubSub& pubsub, cache::Cache& cache, const CommandSpec& spec,
                           const Args& argv, int64_t now_ms, int db);
inline void NotifyCacheMisses(PubSub& pubsub, cache::Cache& cache, const CommandSpec& spec,
                              const Args& argv, int64_t now_ms, int db) {
  if (NotifyEnabled(pubsub, kNotifyKeyMiss)) {
    NotifyCacheMissesSlow(pubsub, cache, spec, argv, now_ms, db);
  }
}

// For the "del" Redis emits when a removal empties a collection: the collection's length before
// the write (`len` returns a StatusOr<int64_t>), read only while generic events are on; -1
// otherwise. (A write's own changes are not visible to storage reads until its group commits, so
// the length is read before and compared with what the write removed.)
template <typename LenFn>
int64_t LengthIfNotifying(CommandContext& ctx, LenFn len) {
  if (!NotifyEnabled(ctx, kNotifyGeneric)) return -1;
  auto n = len();
  return n.ok() ? *n : -1;
}

// "del" when removing `removed` elements emptied a collection of `before` (LengthIfNotifying).
inline void NotifyIfEmptied(CommandContext& ctx, int64_t before, int64_t removed,
                            std::string_view key) {
  if (before > 0 && removed >= before) NotifyKeyspaceEvent(ctx, kNotifyGeneric, "del", key);
}

// A *STORE command's events: `event` on dst when the result has members, else "del" when dst
// existed (`existed` from LengthIfNotifying over Exists).
inline void NotifyStore(CommandContext& ctx, uint32_t type, std::string_view event,
                        std::string_view dst, int64_t existed, int64_t size) {
  if (size > 0) {
    NotifyKeyspaceEvent(ctx, type, event, dst);
  } else if (existed > 0) {
    NotifyKeyspaceEvent(ctx, kNotifyGeneric, "del", dst);
  }
}

}  // namespace rockcache::server
