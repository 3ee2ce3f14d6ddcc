// A connection's subscriptions (SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE). Loop thread only: it lives in
// the Connection (null while the connection subscribes to nothing, so "is this connection in
// subscribed mode" is one pointer test) and mirrors the connection's entries in the server-wide
// PubSub registry.
#pragma once

#include <string>
#include <unordered_set>

namespace rockcache::server {

struct PubSubState {
  std::unordered_set<std::string> channels;
  std::unordered_set<std::string> patterns;
  std::unordered_set<std::string> shard_channels;
  // What (P)SUBSCRIBE / (P)UNSUBSCRIBE replies count (Redis: channels and patterns); S* replies
  // count shard_channels alone.
  size_t count() const { return channels.size() + patterns.size(); }
  // Subscribed mode lasts while this is not 0.
  size_t total() const { return count() + shard_channels.size(); }
};

}  // namespace rockcache::server
