#include "server/pubsub/subscriptions.h"

#include <cctype>

#include "server/connection.h"
#include "server/protocol/reply.h"
#include "server/pubsub/pubsub.h"

namespace rockcache::server {
namespace {

bool IsName(const char* name, std::string_view want) { return want == name; }

// Redis's fullname: "container|sub" for a subcommand the command table lists.
std::string FullName(const CommandSpec& spec, const Args& argv) {
  std::string name = spec.name;
  if (spec.subcommands == nullptr || argv.size() < 2) return name;
  std::string sub;
  for (char c : argv[1])
    sub.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::string_view list = spec.subcommands;
  while (!list.empty()) {
    size_t bar = list.find('|');
    std::string_view item = list.substr(0, bar);
    if (item == sub) {
      std::string full = name;
      full.append("|").append(sub);
      return full;
    }
    if (bar == std::string_view::npos) break;
    list.remove_prefix(bar + 1);
  }
  return name;
}

}  // namespace

void UnsubscribeAll(PubSub& pubsub, Connection* conn) {
  if (conn->pubsub == nullptr) return;
  for (const auto& channel : conn->pubsub->channels) pubsub.Unsubscribe(channel, conn->id);
  for (const auto& pattern : conn->pubsub->patterns) pubsub.PUnsubscribe(pattern, conn->id);
  for (const auto& channel : conn->pubsub->shard_channels) {
    pubsub.SUnsubscribe(channel, conn->id);
  }
  conn->pubsub.reset();
  conn->info->subscriptions.store(0, std::memory_order_relaxed);
  conn->info->pattern_subscriptions.store(0, std::memory_order_relaxed);
  conn->info->shard_subscriptions.store(0, std::memory_order_relaxed);
}

bool SubscribedModeAnswers(const CommandSpec& spec, size_t argc) {
  const char* name = spec.name;
  if (IsName(name, "ping")) return argc <= 2;  // more: the arity error, as usual
  for (const char* allowed : {"subscribe", "ssubscribe", "unsubscribe", "sunsubscribe",
                              "psubscribe", "punsubscribe", "quit", "reset"}) {
    if (IsName(name, allowed)) return false;
  }
  return true;
}

bool AnswerInSubscribedMode(const CommandSpec& spec, const Args& argv, std::string* out) {
  if (!SubscribedModeAnswers(spec, argv.size())) return false;
  if (IsName(spec.name, "ping")) {
    AppendArrayHeader(out, 2);
    AppendBulk(out, "pong");
    AppendBulk(out, argv.size() == 2 ? std::string_view(argv[1]) : std::string_view());
    return true;
  }
  AppendError(out, "ERR Can't execute '" + FullName(spec, argv) +
                       "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                       "allowed in this context");
  return true;
}

}  // namespace rockcache::server
