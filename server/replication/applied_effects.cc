#include "server/replication/applied_effects.h"

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>
#include <vector>

#include "server/blocking/serve.h"
#include "server/blocking/wait_registry.h"
#include "server/net_loop.h"
#include "server/pubsub/notify.h"
#include "server/scripting/functions.h"
#include "server/scripting/script_vm.h"
#include "server/scripting/scripting.h"
#include "server/server.h"
#include "server/tracking/tracking.h"
#include "server/tx/watch.h"
#include "storage/store.h"

namespace rockcache::server::replication {
namespace {

// FUNCTION libraries live in server records: the registry follows what storage holds now.
void ReloadFunctions(Server& server) {
  Status s = scripting::ReloadStoredLibraries(*server.store(), &server.scripting().functions());
  if (!s.ok()) spdlog::error("replication: reloading the function libraries: {}", s.ToString());
}

void ServeAllWaited(Server& server) {
  if (!server.blocking().any()) return;
  for (auto& [db, key] : server.blocking().WaitedKeys()) {
    ScheduleServeBlocked(server, std::move(key), db);
  }
}

}  // namespace

void FireAppliedEffects(Server& server, const storage::ReplicatedKeys& keys) {
  const bool all = keys.all_keys || !keys.flushed_dbs.empty();
  if (all) {
    server.watches().TouchAll();
    if (server.tracking().active()) server.tracking().InvalidateAll();
  } else {
    std::vector<std::string_view> user_keys;
    user_keys.reserve(keys.metas.size() + keys.entry_keys.size());
    for (const auto& [db, key] : keys.metas) user_keys.push_back(key);
    for (const auto& key : keys.entry_keys) user_keys.push_back(key);
    if (server.watches().active()) server.watches().Touch(user_keys);
    if (server.tracking().active()) server.tracking().Invalidate(user_keys);
  }

  for (const auto& name : keys.server_records) {
    if (name.rfind(scripting::kLibraryRecordPrefix, 0) == 0) {
      ReloadFunctions(server);
      break;
    }
  }

  // Events in the order the primary's commands fired them, after the batch is readable (a
  // subscriber that reads the key on the event sees the new value, as on Redis).
  if (const uint32_t local = server.pubsub().local_notify_flags();
      local != 0 && !keys.notes.empty()) {
    ShippedEvent event;
    for (const auto& note : keys.notes) {
      if (DecodeShippedEvent(note, &event)) {
        PublishKeyspaceEventLocally(server.pubsub(), local, event.type, event.event, event.key,
                                    event.db);
      }
    }
  }

  if (!server.blocking().any()) return;
  if (all) return ServeAllWaited(server);
  // A push changes its collection's meta (length, ends), an XADD its stream's: the metas name
  // every key a waiter could be served from.
  for (const auto& [db, key] : keys.metas) ScheduleServeBlocked(server, key, db);
}

void FireReplacedEffects(Server& server) {
  ReloadFunctions(server);
  server.watches().TouchAll();
  if (server.tracking().active()) server.tracking().InvalidateAll();
  ServeAllWaited(server);
}

void UnblockClientsForRoleChange(Server& server) {
  WaitRegistry& registry = server.blocking();
  if (!registry.any()) return;
  for (const auto& waiter : registry.All()) {
    if (!registry.Finish(waiter.get(), WaitState::kUnblocked)) continue;
    Completion completion;
    completion.conn_id = waiter->client_id;
    completion.unblock = Completion::Unblock::kTimedOut;
    completion.replies =
        "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
        "replica?)\r\n";
    server.loop(waiter->loop_index)->PostCompletion(std::move(completion));
  }
}

}  // namespace rockcache::server::replication
