// Keyspace notifications (Redis's notify.c): after a write succeeds, its handler calls
//   NotifyKeyspaceEvent(ctx, kNotifyList, "lpush", key);
// which publishes "__keyspace@<db>__:<key>" -> "lpush" (class K) and "__keyevent@<db>__:lpush"
// -> "<key>" (class E) when notify-keyspace-events enables the event's class.
//
// Cost while disabled (the default ""): one relaxed atomic load and a branch per call.
//
// Events rockcache never emits: `evicted` (cache eviction drops a cached copy, never a key: every
// key stays in RocksDB until it is deleted or expires, so no key is ever deleted for memory),
// `keymiss` (m) and the module (d) class (no such commands). Their letters are
// accepted and shown by CONFIG GET as Redis does.
//
// Any thread (workers mostly): Publish only queues messages to the subscribers' loops.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "server/commands/command.h"
#include "server/pubsub/pubsub.h"
#include "server/server.h"

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

// Publishes the keyspace and/or keyevent message of one event. Any thread.
void PublishKeyspaceEvent(Server& server, uint32_t flags, uint32_t type, std::string_view event,
                          std::string_view key, int db);

// True when events of class `type` are on (one relaxed load).
inline bool NotifyEnabled(Server& server, uint32_t type) {
  return (server.pubsub().notify_flags() & type) != 0;
}

// The call handlers make, after their write succeeded.
void NotifyKeyspaceEventSlow(CommandContext& ctx, uint32_t type, std::string_view event,
                             std::string_view key);
inline void NotifyKeyspaceEvent(CommandContext& ctx, uint32_t type, std::string_view event,
                                std::string_view key) {
  if (NotifyEnabled(*ctx.server, type)) NotifyKeyspaceEventSlow(ctx, type, event, key);
}

// For the "del" Redis emits when a removal empties a collection: the collection's length before
// the write (`len` returns a StatusOr<int64_t>), read only while generic events are on; -1
// otherwise. (A write's own changes are not visible to storage reads until its group commits, so
// the length is read before and compared with what the write removed.)
template <typename LenFn>
int64_t LengthIfNotifying(CommandContext& ctx, LenFn len) {
  if (!NotifyEnabled(*ctx.server, kNotifyGeneric)) return -1;
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
