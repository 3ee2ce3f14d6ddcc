// A connection's subscriptions (SUBSCRIBE / PSUBSCRIBE). Loop thread only: it lives in the
// Connection (null while the connection subscribes to nothing, so "is this connection in
// subscribed mode" is one pointer test) and mirrors the connection's entries in the server-wide
// PubSub registry.
#pragma once

#include <string>
#include <unordered_set>

namespace rockcache::server {

struct PubSubState {
  std::unordered_set<std::string> channels;
  std::unordered_set<std::string> patterns;
  size_t count() const { return channels.size() + patterns.size(); }
};

}  // namespace rockcache::server
