// Pub/sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE
// (kConnection: they change
// the connection's subscriptions on its network thread), PUBLISH, SPUBLISH and PUBSUB (kAnywhere:
// they read
// or fan out through the registry, server/pubsub/pubsub.h, and never go to the pool as a task of
// their own), and RESET. Replies are Redis 7.0's RESP2 ones.
#include "server/pubsub/pubsub.h"

#include <algorithm>

#include "server/commands/args.h"
#include "server/commands/client_tracking.h"
#include "server/commands/command.h"
#include "server/commands/subcommand.h"
#include "server/connection.h"
#include "server/protocol/reply.h"
#include "server/pubsub/subscriptions.h"
#include "server/settings.h"
#include "server/tracking/tracking.h"
#include "server/tx/transaction.h"
#include "server/tx/watch.h"

namespace rockcache::server {
namespace {

// ["<kind>", <name or nil>, <subscriptions left>]
void AppendSubscriptionReply(std::string* out, std::string_view kind, const std::string* name,
                             size_t count) {
  AppendPushHeader(out, 3);
  AppendBulk(out, kind);
  if (name != nullptr) {
    AppendBulk(out, *name);
  } else {
    out->append(NullBulkReply());
  }
  AppendInteger(out, static_cast<int64_t>(count));
}

PubSubState& PubSubOf(Connection* conn) {
  if (conn->pubsub == nullptr) conn->pubsub = std::make_unique<PubSubState>();
  return *conn->pubsub;
}

void SyncInfo(Connection* conn) {  // CLIENT LIST sub= / psub=
  conn->info->subscriptions.store(static_cast<uint32_t>(conn->pubsub->channels.size()),
                                  std::memory_order_relaxed);
  conn->info->pattern_subscriptions.store(static_cast<uint32_t>(conn->pubsub->patterns.size()),
                                          std::memory_order_relaxed);
  conn->info->shard_subscriptions.store(static_cast<uint32_t>(conn->pubsub->shard_channels.size()),
                                        std::memory_order_relaxed);
}

// Leaves subscribed mode once nothing is left.
void Settle(Connection* conn) {
  SyncInfo(conn);
  if (conn->pubsub->total() == 0) conn->pubsub.reset();
}

// SSUBSCRIBE shardchannel [shardchannel ...]: ["ssubscribe", channel, shard subscriptions].
void SSubscribe(CommandContext& ctx, Args& argv, std::string* out) {
  Connection* conn = ctx.conn;
  PubSubState& state = PubSubOf(conn);
  for (size_t i = 1; i < argv.size(); ++i) {
    if (state.shard_channels.insert(argv[i]).second) {
      ctx.pubsub().SSubscribe(argv[i], conn->id, conn->info->loop_index);
    }
    AppendSubscriptionReply(out, "ssubscribe", &argv[i], state.shard_channels.size());
  }
  Settle(conn);
}

// SUNSUBSCRIBE [shardchannel ...] (none: all of them).
void SUnsubscribe(CommandContext& ctx, Args& argv, std::string* out) {
  Connection* conn = ctx.conn;
  PubSubState& state = PubSubOf(conn);
  auto drop = [&](const std::string& name) {
    if (state.shard_channels.erase(name) != 0) ctx.pubsub().SUnsubscribe(name, conn->id);
    AppendSubscriptionReply(out, "sunsubscribe", &name, state.shard_channels.size());
  };
  if (argv.size() == 1) {
    if (state.shard_channels.empty()) {
      AppendSubscriptionReply(out, "sunsubscribe", nullptr, 0);
    } else {
      std::vector<std::string> names(state.shard_channels.begin(), state.shard_channels.end());
      for (const auto& name : names) drop(name);
    }
  } else {
    for (size_t i = 1; i < argv.size(); ++i) drop(argv[i]);
  }
  Settle(conn);
}

void SPublishCommand(CommandContext& ctx, Args& argv, std::string* out) {
  AppendInteger(out, ctx.pubsub().SPublish(argv[1], argv[2]));
}

void Subscribe(CommandContext& ctx, Args& argv, std::string* out) {
  Connection* conn = ctx.conn;
  PubSubState& state = PubSubOf(conn);
  const bool pattern = Is(argv[0], "psubscribe");
  auto& set = pattern ? state.patterns : state.channels;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (set.insert(argv[i]).second) {
      if (pattern) {
        ctx.pubsub().PSubscribe(argv[i], conn->id, conn->info->loop_index);
      } else {
        ctx.pubsub().Subscribe(argv[i], conn->id, conn->info->loop_index);
      }
    }
    AppendSubscriptionReply(out, pattern ? "psubscribe" : "subscribe", &argv[i], state.count());
  }
  Settle(conn);
}

void Unsubscribe(CommandContext& ctx, Args& argv, std::string* out) {
  Connection* conn = ctx.conn;
  const bool pattern = Is(argv[0], "punsubscribe");
  const std::string_view kind = pattern ? "punsubscribe" : "unsubscribe";
  PubSubState& state = PubSubOf(conn);
  auto& set = pattern ? state.patterns : state.channels;
  auto drop = [&](const std::string& name) {
    if (set.erase(name) == 0) return;
    if (pattern) {
      ctx.pubsub().PUnsubscribe(name, conn->id);
    } else {
      ctx.pubsub().Unsubscribe(name, conn->id);
    }
  };
  if (argv.size() == 1) {
    if (set.empty()) {
      AppendSubscriptionReply(out, kind, nullptr, state.count());
    } else {
      std::vector<std::string> names(set.begin(), set.end());
      for (const auto& name : names) {
        drop(name);
        AppendSubscriptionReply(out, kind, &name, state.count());
      }
    }
  } else {
    for (size_t i = 1; i < argv.size(); ++i) {
      drop(argv[i]);
      AppendSubscriptionReply(out, kind, &argv[i], state.count());
    }
  }
  Settle(conn);
}

void PublishCommand(CommandContext& ctx, Args& argv, std::string* out) {
  AppendInteger(out, ctx.pubsub().Publish(argv[1], argv[2]));
}

void PubSubCommand(CommandContext& ctx, Args& argv, std::string* out) {
  PubSub& pubsub = ctx.pubsub();
  const std::string& sub = argv[1];
  if ((Is(sub, "CHANNELS") || Is(sub, "SHARDCHANNELS")) && argv.size() <= 3) {
    const std::string_view pattern = argv.size() == 3 ? std::string_view(argv[2]) : "";
    std::vector<std::string> channels =
        Is(sub, "CHANNELS") ? pubsub.Channels(pattern) : pubsub.ShardChannels(pattern);
    AppendArrayHeader(out, static_cast<int64_t>(channels.size()));
    for (const auto& channel : channels) AppendBulk(out, channel);
    return;
  }
  if (Is(sub, "NUMSUB") || Is(sub, "SHARDNUMSUB")) {
    AppendArrayHeader(out, static_cast<int64_t>((argv.size() - 2) * 2));
    for (size_t i = 2; i < argv.size(); ++i) {
      AppendBulk(out, argv[i]);
      AppendInteger(out, Is(sub, "NUMSUB") ? pubsub.NumSub(argv[i]) : pubsub.ShardNumSub(argv[i]));
    }
    return;
  }
  if (Is(sub, "NUMPAT") && argv.size() == 2) return AppendInteger(out, pubsub.PatternCount());
  if (Is(sub, "HELP") && argv.size() == 2) {
    const char* shard_channels_help =
        "    Return the currently active shard level channels matching a <pattern> "
        "(default: '*').";
    return AppendHelp(
        out,
        {"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "CHANNELS [<pattern>]",
         "    Return the currently active channels matching a <pattern> (default: '*').", "NUMPAT",
         "    Return number of subscriptions to patterns.", "NUMSUB [<channel> ...]",
         "    Return the number of subscribers for the specified channels, excluding",
         "    pattern subscriptions(default: no channels).", "SHARDCHANNELS [<pattern>]",
         shard_channels_help, "SHARDNUMSUB [<shardchannel> ...]",
         "    Return the number of subscribers for the specified shard level channel(s)", "HELP",
         "    Prints this help."});
  }
  AppendSubcommandError(out, argv,
                        {"CHANNELS", "NUMPAT", "NUMSUB", "SHARDCHANNELS", "SHARDNUMSUB", "HELP"});
}

// RESET: leaves subscribed mode (every subscription dropped), clears the name and, with
// requirepass set, the authentication, as Redis's clearClientConnectionState.
void Reset(CommandContext& ctx, Args&, std::string* out) {
  Connection* conn = ctx.conn;
  UnsubscribeAll(ctx.pubsub(), conn);
  if (conn->tx != nullptr) {  // leaves MULTI and drops WATCHes, as DISCARD + UNWATCH
    if (conn->tx->watcher != nullptr) ctx.watches().Remove(conn->tx->watcher.get());
    conn->tx->Reset();
    conn->info->multi.store(-1, std::memory_order_relaxed);
  }
  conn->info->set_name("");
  // CLIENT REPLY ON, NO-EVICT OFF, as Redis (a SKIP given just before drops RESET's reply).
  conn->reply.off = false;
  conn->reply.skip_next = false;
  conn->info->no_evict.store(false, std::memory_order_relaxed);
  DisableTracking(ctx.tracking(), conn);
  conn->protocol = Protocol::kResp2;  // as Redis: RESET goes back to RESP2
  conn->info->resp.store(2, std::memory_order_relaxed);
  conn->db = 0;  // as Redis: RESET selects database 0
  conn->info->db.store(0, std::memory_order_relaxed);
  conn->authenticated = !ctx.settings().auth_required.load(std::memory_order_relaxed);
  AppendSimple(out, "RESET");
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kPubSubCommands = {
    {"subscribe", -2, kConnection, 0, 0, 0, Subscribe},
    {"psubscribe", -2, kConnection, 0, 0, 0, Subscribe},
    {"unsubscribe", -1, kConnection, 0, 0, 0, Unsubscribe},
    {"punsubscribe", -1, kConnection, 0, 0, 0, Unsubscribe},
    {"publish", 3, kAnywhere | kFast, 0, 0, 0, PublishCommand},
    // Shard channels: their key positions (COMMAND INFO) come from the metadata; none here, so
    // the pool never locks or looks up a channel name as a key.
    {"ssubscribe", -2, kConnection, 0, 0, 0, SSubscribe},
    {"sunsubscribe", -1, kConnection, 0, 0, 0, SUnsubscribe},
    {"spublish", 3, kAnywhere | kFast, 0, 0, 0, SPublishCommand},
    {"pubsub", -2, kAnywhere, 0, 0, 0, PubSubCommand, nullptr,
     "channels|numpat|numsub|shardchannels|shardnumsub|help"},
    {"reset", 1, kConnection | kNoAuth | kFast, 0, 0, 0, Reset},
};
// clang-format on

}  // namespace rockcache::server
