// Serving blocked clients after a write (see wait_registry.h for the registry and the waiter
// state machine).
//
// ServeBlockedOn is the one "these keys were written" step. The executor calls it after every
// write command (server/executor.cc), and EXEC must call it after each write it runs: on a
// worker, while the command still holds the key locks of its keys. For each key somebody waits
// on it serves the waiters in the order they blocked, each exactly once (kWaiting -> kServed
// CAS), running the waiter's pop right there under the key lock, so no other client can take
// the element in between. Order of effects as Redis: the writer's reply was produced before
// (LPUSH's length counts the pushed element); each served pop is made durable
// (WriteGroup flush) before its reply is posted to the waiter's loop. A BLMOVE/BRPOPLPUSH waiter
// pushes into its destination, which may serve further waiters in the same pass (iteratively).
//
// Locks: a BLMOVE waiter also needs its destination's stripe. When the caller does not hold it,
// it is try-locked (never waits, so any order is deadlock-free); when that fails the rest of
// the key's queue is handed to a pool task that takes all the stripes it needs in ascending
// order and serves it then (FIFO kept; another client may pop the element meanwhile, in which
// case the waiters just keep waiting).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/status.h"
#include "server/blocking/wait_registry.h"
#include "server/commands/command.h"

namespace rockcache::storage {
class Store;
}

namespace rockcache::server {

class Server;

// Worker thread. REQUIRES: the caller holds the key-stripe locks `held` (covering `keys`);
// `in_write_window`: it also has a write window open over them (cache::KeyLocks::WriteWindow),
// as Call does around a write. May block on disk. Cheap to skip: callers test
// server.blocking().any() first.
void ServeBlockedOn(Server& server, const std::vector<std::string_view>& keys,
                    const std::vector<uint32_t>& held, bool in_write_window);

// After a write command (Call, server/call.h): ServeBlockedOn(the command's keys). REQUIRES as
// above.
void ServeBlockedAfterCommand(Server& server, const CommandSpec& spec, const Args& argv,
                              bool in_write_window);

// Any thread, holding no key lock: serves the waiters on `key` of physical database `db` from
// a pool task (taking the key's stripe as a command would), for a write that did not run as a
// command (a replica's applied batch). Nothing when nobody waits there.
void ScheduleServeBlocked(Server& server, std::string key, int db);

// Runs `op` on `key` with ctx.store and appends the reply: [key, element] (BLPOP), [key, member,
// score] (BZPOPMIN), [key, [elements]] (BLMPOP/BZMPOP) or the moved element (BLMOVE); publishes
// Redis's keyspace events in ctx.db (lpop/rpop or zpopmin/zpopmax on key, "del" when it emptied;
// for a move first lpush/rpush on op.dst, with `new` through ctx.new_keys). REQUIRES: the key
// locks of key (and op.dst); key holds the op's type.
Status PopFor(CommandContext& ctx, const WaitOp& op, std::string_view key, std::string* out);

// XREAD / XREADGROUP waiters. ProbeStreamWait reads only: kReady when `key` has entries past
// what `waiter` waits for; kError (with Redis's error in *error_reply) when a group reader's
// stream or group is gone; kNotReady otherwise (it keeps waiting). ServeStreamWait then reads
// (XREADGROUP: delivers) the entries of `key` and appends the reply, one key's worth:
// [[key, entries]] (RESP3: {key: entries}). REQUIRES: the key lock of `key`; the probe said
// kReady under the same hold.
enum class StreamReadiness { kNotReady, kReady, kError };
StreamReadiness ProbeStreamWait(storage::Store& store, const Waiter& waiter, std::string_view key,
                                std::string* error_reply);
Status ServeStreamWait(CommandContext& ctx, const Waiter& waiter, std::string_view key,
                       std::string* out);

}  // namespace rockcache::server
