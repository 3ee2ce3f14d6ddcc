// Services: the server's shared parts a command handler may reach besides its keys, its reply
// and its connection — one pointer per part, filled by the Server once its parts exist (before
// any command runs) and constant afterwards. Handlers never read it directly: CommandContext
// (server/commands/command.h) names each part with an accessor that states who may use it, and
// a handler includes the header of the part it uses, never server/server.h.
//
// The administrative commands (INFO, CONFIG, DEBUG, CLIENT KILL, SHUTDOWN, SAVE, SLOWLOG...)
// need much of the server; they reach it through the one interface that says so, ServerAdmin
// (server/server_admin.h).
#pragma once

namespace rockcache::config {
class Config;
}
namespace rockcache::cache {
class KeyLocks;
}

namespace rockcache::server {
namespace scripting {
class Scripting;
}
namespace replication {
class Replication;
}

class Server;
class ServerAdmin;
class ClientRegistry;
class PubSub;
class Tracking;
class WaitRegistry;
class WatchRegistry;
struct Settings;
struct ServerStats;

struct Services {
  const Settings* settings = nullptr;               // server/settings.h
  ServerStats* stats = nullptr;                     // server/server_stats.h
  const config::Config* config = nullptr;           // config/config.h, read-only
  int databases = 0;                                // the `databases` the store opened with
  cache::KeyLocks* key_locks = nullptr;             // cache/key_locks.h
  PubSub* pubsub = nullptr;                         // server/pubsub/pubsub.h
  Tracking* tracking = nullptr;                     // server/tracking/tracking.h
  WaitRegistry* blocking = nullptr;                 // server/blocking/wait_registry.h
  WatchRegistry* watches = nullptr;                 // server/tx/watch.h
  scripting::Scripting* scripting = nullptr;        // server/scripting/scripting.h
  ClientRegistry* clients = nullptr;                // server/client_registry.h
  replication::Replication* replication = nullptr;  // server/replication/replication.h
  ServerAdmin* admin = nullptr;                     // server/server_admin.h
  // Opaque to handlers: only the call path (CallNested, server/call.h) runs commands through it.
  Server* calls = nullptr;
};

}  // namespace rockcache::server
