// The connection side of pub/sub: a connection's subscriptions (server/pubsub/client_state.h)
// kept in step with the server-wide registry (server/pubsub/pubsub.h), and Redis's RESP2
// "subscribed mode" rule. Network thread of the connection only.
#pragma once

#include <string>

#include "server/commands/command.h"

namespace rockcache::server {

struct Connection;
class PubSub;

// Drops every subscription of `conn` from `pubsub` (a closing connection, RESET), with no reply.
void UnsubscribeAll(PubSub& pubsub, Connection* conn);

// For a connection in subscribed mode: true when `spec` may not run there (the reply is Redis's
// "ERR Can't execute '<cmd>': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are
// allowed in this context"), or is PING (answered here as ["pong", <arg or "">]); the reply is
// appended to *out. False: run the command as usual.
bool AnswerInSubscribedMode(const CommandSpec& spec, const Args& argv, std::string* out);
// Pure: whether AnswerInSubscribedMode answers a command of `argc` arguments (with its row).
bool SubscribedModeAnswers(const CommandSpec& spec, size_t argc);

}  // namespace rockcache::server
