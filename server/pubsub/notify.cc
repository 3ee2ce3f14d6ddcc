#include "server/pubsub/notify.h"

namespace rockcache::server {

uint32_t ParseNotifyFlags(std::string_view letters) {
  uint32_t flags = 0;
  for (char c : letters) {
    switch (c) {
      case 'A':
        flags |= kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
                 kNotifyZSet | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule;
        break;
      case 'g':
        flags |= kNotifyGeneric;
        break;
      case '$':
        flags |= kNotifyString;
        break;
      case 'l':
        flags |= kNotifyList;
        break;
      case 's':
        flags |= kNotifySet;
        break;
      case 'h':
        flags |= kNotifyHash;
        break;
      case 'z':
        flags |= kNotifyZSet;
        break;
      case 'x':
        flags |= kNotifyExpired;
        break;
      case 'e':
        flags |= kNotifyEvicted;
        break;
      case 't':
        flags |= kNotifyStream;
        break;
      case 'm':
        flags |= kNotifyKeyMiss;
        break;
      case 'd':
        flags |= kNotifyModule;
        break;
      case 'n':
        flags |= kNotifyNew;
        break;
      case 'K':
        flags |= kNotifyKeyspace;
        break;
      case 'E':
        flags |= kNotifyKeyevent;
        break;
      default:
        break;
    }
  }
  return flags;
}

void PublishKeyspaceEvent(Server& server, uint32_t flags, uint32_t type, std::string_view event,
                          std::string_view key, int db) {
  if (!(flags & type)) return;
  const std::string prefix = "@" + std::to_string(db) + "__:";
  if (flags & kNotifyKeyspace) {
    std::string channel = "__keyspace" + prefix;
    channel.append(key);
    server.pubsub().Publish(channel, event);
  }
  if (flags & kNotifyKeyevent) {
    std::string channel = "__keyevent" + prefix;
    channel.append(event);
    server.pubsub().Publish(channel, key);
  }
}

void NotifyKeyspaceEventSlow(CommandContext& ctx, uint32_t type, std::string_view event,
                             std::string_view key) {
  PublishKeyspaceEvent(*ctx.server, ctx.server->pubsub().notify_flags(), type, event, key,
                       NotifyDb(ctx));
}

}  // namespace rockcache::server
