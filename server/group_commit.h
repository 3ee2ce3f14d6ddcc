// Group commit: the batches a network loop produced in one pass run as one task on one worker,
// with one lock acquisition, one RocksDB WriteBatch (one WAL append; one fsync with
// `storage-sync always`) and one completion hand-off for all of them — the shape of RocksDB's
// write-group leader (db/write_thread.cc), decided by the loop instead of by racing writers.
// Across loops and across concurrent groups, RocksDB's own write thread joins the groups' writes.
//
// How a group runs (GroupTask::Run, one worker thread):
// 1. Its commands, connection after connection, each connection's in order, are cut into
//    segments at *barriers*: commands with no keys in the command table (KEYS, SCAN, DBSIZE,
//    RANDOMKEY, DEBUG...) and kAllKeys commands (FLUSHALL). A segment locks the key
//    stripes of all its commands at once (cache::KeyLocks::Lock: ascending, so deadlock-free
//    against any other group or command), runs them with Call (server/call.h), commits, unlocks. A
//    barrier runs alone after that commit, taking its own locks (CallWithLocks).
// 2. Storage writes go to the worker's storage::WriteGroup: deferred, not yet visible to
//    storage reads. Read-your-writes: before a command touching a key that an earlier command of
//    the group wrote since the last commit (same connection or another), the pending writes are
//    committed first (still under the locks); from then on the group reads through an index of
//    its own pending writes (WriteGroup::BeginIndexed, storage/tx_overlay.h), so a pipeline of
//    writes to one hot key still costs one commit per group. Distinct keys pay nothing for it.
//    Write runs: consecutive commands of one row on one key that the row lets join (LPUSH,
//    RPUSH, LPOP, RPOP, SADD, HSET..., WriteRun in server/commands/command.h) run as one storage
//    operation (CallRun) while nothing could observe the states between them (no
//    blocked client, no keyspace event: WriteRunsAllowed); each keeps its own reply, timing and
//    budget. A pipeline of 16 pushes on a hot list reads and writes the list's meta once.
// 3. Replies are kept per command and handed back only after the commit that made the
//    command's writes durable, all connections of the group in one PostCompletions call. If a
//    commit fails, every write command since the previous commit gets the storage error as its
//    reply, and its keys are erased from the cache (still under the locks: a write-through entry
//    must not outlive a write that never reached RocksDB).
// Visibility: a write-through cache entry is visible to cache readers of other connections from
// the moment the command ran, a few microseconds before the group's WAL write (as in Redis,
// where a write is visible before its AOF write). No reply that acknowledges it leaves before
// the commit.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "server/batch.h"

namespace rockcache::pool {
class Task;
}

namespace rockcache::server {

class Server;

// A task that runs `group` (batches of loop `loop_index`'s connections) as described above and
// posts one Completion per batch to that loop. Cancel() answers every command with an error.
// With `charge_clients` (the MLFQ is on, pool/worker_pool.h), each batch's share of the run —
// the time from its first command to the next batch's first (its commit included when it
// ends a segment) — is charged to its connection with WorkerPool::Charge: a group runs for
// several clients, so the pool cannot charge it to one.
std::unique_ptr<pool::Task> MakeGroupTask(Server* server, uint32_t loop_index,
                                          std::vector<ConnBatch> group, bool charge_clients);

}  // namespace rockcache::server
