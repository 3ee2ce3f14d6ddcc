// What a replica fires after it applied one of its primary's batches, beside storage and cache
// (replication.cc does those, under the batch's key locks): what a Redis replica's execution of
// the same commands fires, so clients of a replica see the replicated writes as they would on
// Redis:
// - FUNCTION libraries: reloaded when the batch changed their records (FUNCTION LOAD, DELETE,
//   FLUSH, RESTORE on the primary) or a full sync replaced the database;
// - WATCH: the transactions watching the keys fail their EXEC;
// - client tracking: the keys' invalidation messages;
// - keyspace notifications: the events the primary shipped with the batch (server/pubsub/
//   notify.h, "Replicas"), published as this replica's notify-keyspace-events says;
// - blocked clients (XREAD BLOCK; with replica-read-only no, also BLPOP, BLMOVE, BZPOPMIN,
//   XREADGROUP...) waiting on the keys: served by a pool task, as after a command's write.
#pragma once

#include "storage/replication_types.h"

namespace rockcache::server {

class Server;

namespace replication {

// The replica's link thread, after the batch described by `keys` is in storage and its key
// locks are released. Never blocks on a client.
void FireAppliedEffects(Server& server, const storage::ReplicatedKeys& keys);

// After a full sync replaced the whole database: the function libraries, every watcher and
// tracked key, and every blocked client's keys.
void FireReplacedEffects(Server& server);

// A primary becomes a replica (REPLICAOF host port): every blocked client gets Redis's
// "-UNBLOCKED force unblock from blocking operation, instance state changed (master ->
// replica?)", so no pop a client asked for as a primary's client runs on a replica. Any thread.
void UnblockClientsForRoleChange(Server& server);

}  // namespace replication
}  // namespace rockcache::server
