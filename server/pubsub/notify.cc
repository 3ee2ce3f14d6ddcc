#include "server/pubsub/notify.h"

#include "cache/cache.h"
#include "storage/store.h"

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

void PublishKeyspaceEvent(PubSub& pubsub, uint32_t flags, uint32_t type, std::string_view event,
                          std::string_view key, int db) {
  if (!(flags & type)) return;
  if (const uint32_t local = pubsub.local_notify_flags(); local & type) {
    PublishKeyspaceEventLocally(pubsub, local, type, event, key, db);
  }
  if (pubsub.shipped_flags() & type) pubsub.ShipEvent(EncodeShippedEvent(type, event, key, db));
}

namespace {
constexpr std::string_view kShippedMagic = "rcev1";

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i, v >>= 8) out->push_back(static_cast<char>(v & 0xff));
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
}  // namespace

std::string EncodeShippedEvent(uint32_t type, std::string_view event, std::string_view key,
                               int db) {
  std::string out;
  out.reserve(kShippedMagic.size() + 12 + event.size() + key.size());
  out.append(kShippedMagic);
  PutU32(&out, type);
  PutU32(&out, static_cast<uint32_t>(db));
  PutU32(&out, static_cast<uint32_t>(event.size()));
  out.append(event);
  out.append(key);
  return out;
}

bool DecodeShippedEvent(std::string_view note, ShippedEvent* out) {
  const size_t head = kShippedMagic.size() + 12;
  if (note.size() < head || note.substr(0, kShippedMagic.size()) != kShippedMagic) return false;
  const char* p = note.data() + kShippedMagic.size();
  out->type = GetU32(p);
  out->db = static_cast<int>(GetU32(p + 4));
  const uint32_t event_len = GetU32(p + 8);
  if (event_len > note.size() - head) return false;
  out->event = note.substr(head, event_len);
  out->key = note.substr(head + event_len);
  return true;
}

void PublishKeyspaceEventLocally(PubSub& pubsub, uint32_t flags, uint32_t type,
                                 std::string_view event, std::string_view key, int db) {
  if (!(flags & type)) return;
  const std::string prefix = "@" + std::to_string(db) + "__:";
  if (flags & kNotifyKeyspace) {
    std::string channel = "__keyspace" + prefix;
    channel.append(key);
    pubsub.Publish(channel, event);
  }
  if (flags & kNotifyKeyevent) {
    std::string channel = "__keyevent" + prefix;
    channel.append(event);
    pubsub.Publish(channel, key);
  }
}

namespace {

// Publishes `new` for `key` when the running write found it absent and has not announced it.
void AnnounceIfNew(CommandContext& ctx, uint32_t flags, std::string_view key) {
  NewKeyWatch* watch = ctx.new_keys;
  for (size_t i = 0; i < watch->absent.size(); ++i) {
    if (watch->absent[i] != key || watch->announced[i]) continue;
    watch->announced[i] = true;
    PublishKeyspaceEvent(ctx.pubsub(), flags, kNotifyNew, "new", key, NotifyDb(ctx));
    return;
  }
}

// Which keys a command reads through Redis's lookupKeyRead (see notify.h).
enum class MissKeys { kNone, kAll, kFirst, kRest };

MissKeys MissKeysOf(const CommandSpec& spec) {
  std::string_view name = spec.name;
  if (!(spec.flags & kWrite)) {
    if (name == "object" || name == "memory" || name == "watch") return MissKeys::kNone;
    return MissKeys::kAll;
  }
  if (name == "getdel" || name == "getex" || name == "copy" || name == "sort" ||
      name == "georadius" || name == "georadiusbymember") {
    return MissKeys::kFirst;
  }
  if (name == "pfcount" || name == "pfmerge") return MissKeys::kAll;
  if (name == "bitop" || name == "sinterstore" || name == "sunionstore" || name == "sdiffstore" ||
      name == "zunionstore" || name == "zinterstore" || name == "zdiffstore" ||
      name == "zrangestore" || name == "geosearchstore") {
    return MissKeys::kRest;
  }
  return MissKeys::kNone;
}

// The keys of the command that a `keymiss` may name, in argument order.
std::vector<std::string_view> MissCandidates(const CommandSpec& spec, const Args& argv) {
  const MissKeys which = MissKeysOf(spec);
  if (which == MissKeys::kNone) return {};
  std::vector<std::string_view> keys = CommandKeys(spec, argv);
  if (keys.empty()) return keys;
  if (which == MissKeys::kFirst) keys.resize(1);
  if (which == MissKeys::kRest) keys.erase(keys.begin());
  return keys;
}

void PublishKeyMiss(PubSub& pubsub, uint32_t flags, std::string_view key, int db) {
  PublishKeyspaceEvent(pubsub, flags, kNotifyKeyMiss, "keymiss", key, db);
}

}  // namespace

void NotifyKeyspaceEventSlow(CommandContext& ctx, uint32_t type, std::string_view event,
                             std::string_view key) {
  const uint32_t flags = ctx.pubsub().notify_flags();
  if (ctx.new_keys != nullptr && (flags & kNotifyNew) && event != "del" && event != "expired" &&
      event != "evicted") {
    AnnounceIfNew(ctx, flags, key);
  }
  PublishKeyspaceEvent(ctx.pubsub(), flags, type, event, key, NotifyDb(ctx));
}

void AnnounceNewKey(CommandContext& ctx, std::string_view key) {
  const uint32_t flags = ctx.pubsub().notify_flags();
  if (!(flags & kNotifyNew)) return;
  if (NewKeyWatch* watch = ctx.new_keys) {
    for (size_t i = 0; i < watch->absent.size(); ++i) {
      if (watch->absent[i] == key) {
        if (watch->announced[i]) return;
        watch->announced[i] = true;
      }
    }
  }
  PublishKeyspaceEvent(ctx.pubsub(), flags, kNotifyNew, "new", key, NotifyDb(ctx));
}

void BeforeCommandSlow(CommandContext& ctx, const CommandSpec& spec, const Args& argv,
                       NewKeyWatch* watch) {
  const uint32_t flags = ctx.pubsub().notify_flags();
  storage::Store* store = ctx.store;
  if (store == nullptr) return;
  auto exists = [&](std::string_view key) {
    auto n = store->Exists({key});
    return !n.ok() || *n > 0;  // an error: say nothing
  };
  if (flags & kNotifyKeyMiss) {
    for (auto key : MissCandidates(spec, argv)) {
      if (!exists(key)) PublishKeyMiss(ctx.pubsub(), flags, key, NotifyDb(ctx));
    }
  }
  if ((flags & kNotifyNew) && (spec.flags & kWrite) && !(spec.flags & kAllKeys) &&
      watch != nullptr) {
    watch->absent.clear();
    for (auto key : CommandKeys(spec, argv)) {
      if (!exists(key)) watch->absent.push_back(key);
    }
    watch->announced.assign(watch->absent.size(), false);
    ctx.new_keys = watch;
  }
}

void NotifyCacheMissesSlow(PubSub& pubsub, cache::Cache& cache, const CommandSpec& spec,
                           const Args& argv, int64_t now_ms, int db) {
  const uint32_t flags = pubsub.notify_flags();
  for (auto key : MissCandidates(spec, argv)) {
    if (cache.Inspect(key, now_ms, [](const cache::Value&, int64_t) {}) == cache::Lookup::kAbsent) {
      PublishKeyMiss(pubsub, flags, key, db);
    }
  }
}

}  // namespace rockcache::server
