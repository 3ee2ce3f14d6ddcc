// OBJECT, MEMORY and TOUCH: what a key is and what it costs. They run on workers (they read
// storage) and never change a key.
//
// OBJECT ENCODING answers by Redis 7.0's size rules, so tools that read it behave as with Redis:
//   string  "int" (an integer of at most 20 characters), "embstr" (at most 44 bytes), "raw";
//   hash    "listpack" while it has at most hash-max-listpack-entries fields and every field and
//           value is at most hash-max-listpack-value bytes, else "hashtable";
//   set     "intset" while it has at most set-max-intset-entries members, all integers, else
//           "hashtable";
//   zset    "listpack" under zset-max-listpack-entries / -value, else "skiplist";
//   list    "quicklist" (Redis 7.0 has no other list encoding).
// Only a collection under the entry limit is read (at most that many elements), so the answer
// costs O(limit), not O(size).
//
// MEMORY USAGE estimates the bytes the key takes in rockcache, cache and disk:
//   cache: Cache::Charge of the cached entry, when it is cached (0 otherwise);
//   disk:  the RocksDB entries before block compression — the meta record (key + 25-byte header
//          + the string value or list bounds) and, per element, its data key (4 + key + 8 +
//          sub-key) and value (a zset member has two entries: by member and by score), each
//          entry with kRocksEntryOverhead for RocksDB's internal key trailer and lengths.
//   For a collection the element sizes are averaged over the first SAMPLES elements (default 5,
//   0 = all) and multiplied by the element count, as Redis samples nested values.
// OBJECT FREQ / IDLETIME come from the cache: FREQ is the cached entry's LFU counter (0 when the
// key is not cached); IDLETIME the seconds since the cached entry's last access under LRU (0 when
// the key is not cached: access times are kept for cached keys only).
#include <climits>
#include <optional>

#include "cache/cache.h"
#include "config/config.h"
#include "server/client_registry.h"
#include "server/commands/args.h"
#include "server/commands/command.h"
#include "server/commands/subcommand.h"
#include "server/metrics/info.h"
#include "server/protocol/reply.h"
#include "server/server_admin.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

constexpr uint64_t kRocksEntryOverhead = 8 + 3;  // sequence/type trailer + key and value lengths
constexpr uint64_t kDataKeyOverhead = 4 + 8;     // key length prefix + version
constexpr uint64_t kMetaHeaderBytes = 25;  // type, version, expire-at, count (storage/encoding.h)

// A key's type, element count and up to `limit` elements (hash: field, value; list, set, zset:
// the element, ""), or its string value.
struct KeySample {
  storage::KeyType type = storage::KeyType::kNone;
  uint64_t count = 0;
  uint64_t value_size = 0;  // strings
  std::string value;        // strings of at most 20 bytes (the ones that may be integers)
  std::vector<std::pair<std::string, std::string>> elements;
};

StatusOr<KeySample> SampleKey(storage::Store* store, const std::string& key, uint64_t limit) {
  KeySample sample;
  auto type = store->Type(key);
  if (!type.ok()) return type.status();
  sample.type = *type;
  auto add = [&sample](std::vector<std::string> items) {
    for (auto& item : items) sample.elements.emplace_back(std::move(item), std::string());
  };
  switch (sample.type) {
    case storage::KeyType::kNone:
      return sample;
    case storage::KeyType::kStream: {
      auto len = store->XLen(key);
      if (!len.ok()) return len.status();
      sample.count = static_cast<uint64_t>(*len);
      if (limit == 0 || sample.count == 0) return sample;
      auto some = store->XRange(key, storage::StreamId::Min(), storage::StreamId::Max(), false,
                                std::min<uint64_t>(limit, sample.count));
      if (!some.ok()) return some.status();
      for (auto& entry : *some) {
        std::string fields;
        for (auto& [f, v] : entry.fields) fields += f + v;
        sample.elements.emplace_back(entry.id.ToString(), std::move(fields));
      }
      return sample;
    }
    case storage::KeyType::kString: {
      // The length alone, unless the value is short enough to be an integer: a big string is
      // never copied out of RocksDB to be measured.
      auto len = store->StrLen(key);
      if (!len.ok()) return len.status();
      sample.value_size = static_cast<uint64_t>(*len);
      if (sample.value_size <= 20) {
        auto value = store->Get(key);
        if (!value.ok()) return value.status();
        if (*value) sample.value = std::move(**value);
      }
      return sample;
    }
    case storage::KeyType::kHash: {
      auto len = store->HLen(key);
      if (!len.ok()) return len.status();
      sample.count = static_cast<uint64_t>(*len);
      if (limit >= sample.count) {
        auto all = store->HGetAll(key);
        if (!all.ok()) return all.status();
        sample.elements = std::move(*all);
      } else if (limit > 0) {
        auto some = store->HScan(key, 0, "", limit);
        if (!some.ok()) return some.status();
        sample.elements = std::move(some->items);
      }
      return sample;
    }
    case storage::KeyType::kList: {
      auto len = store->LLen(key);
      if (!len.ok()) return len.status();
      sample.count = static_cast<uint64_t>(*len);
      if (limit == 0) return sample;
      auto some = store->LRange(key, 0, limit >= sample.count ? -1 : int64_t(limit) - 1);
      if (!some.ok()) return some.status();
      add(std::move(*some));
      return sample;
    }
    case storage::KeyType::kSet: {
      auto len = store->SCard(key);
      if (!len.ok()) return len.status();
      sample.count = static_cast<uint64_t>(*len);
      if (limit >= sample.count) {
        auto all = store->SMembers(key);
        if (!all.ok()) return all.status();
        add(std::move(*all));
      } else if (limit > 0) {
        auto some = store->SScan(key, 0, "", limit);
        if (!some.ok()) return some.status();
        add(std::move(some->keys));
      }
      return sample;
    }
    case storage::KeyType::kZSet: {
      auto len = store->ZCard(key);
      if (!len.ok()) return len.status();
      sample.count = static_cast<uint64_t>(*len);
      if (limit == 0) return sample;
      storage::ZRangeSpec spec;
      spec.stop = limit >= sample.count ? -1 : int64_t(limit) - 1;
      auto some = store->ZRange(key, spec);
      if (!some.ok()) return some.status();
      for (auto& m : *some) sample.elements.emplace_back(std::move(m.member), std::string());
      return sample;
    }
  }
  return sample;
}

bool IsRedisInt(const std::string& s) {
  int64_t n = 0;
  return s.size() <= 20 && ParseInteger(s, &n);
}

const char* Encoding(const KeySample& sample, const config::Config& config) {
  auto fits = [&](const char* entries, const char* value) {
    if (sample.count > static_cast<uint64_t>(config.GetInt(entries))) return false;
    auto max_len = static_cast<uint64_t>(config.GetInt(value));
    for (const auto& [a, b] : sample.elements) {
      if (a.size() > max_len || b.size() > max_len) return false;
    }
    return true;
  };
  switch (sample.type) {
    case storage::KeyType::kString:
      if (IsRedisInt(sample.value)) return "int";
      return sample.value_size <= 44 ? "embstr" : "raw";
    case storage::KeyType::kHash:
      return fits("hash-max-listpack-entries", "hash-max-listpack-value") ? "listpack"
                                                                          : "hashtable";
    case storage::KeyType::kZSet:
      return fits("zset-max-listpack-entries", "zset-max-listpack-value") ? "listpack" : "skiplist";
    case storage::KeyType::kSet: {
      if (sample.count > static_cast<uint64_t>(config.GetInt("set-max-intset-entries"))) {
        return "hashtable";
      }
      for (const auto& element : sample.elements) {
        if (!IsRedisInt(element.first)) return "hashtable";
      }
      return "intset";
    }
    case storage::KeyType::kList:
      return "quicklist";
    case storage::KeyType::kStream:
      return "stream";
    case storage::KeyType::kNone:
      break;
  }
  return "none";
}

// Bytes on disk of one element (see the file comment).
uint64_t ElementDiskBytes(storage::KeyType type, size_t key_size,
                          const std::pair<std::string, std::string>& element) {
  uint64_t data_key = kDataKeyOverhead + key_size + kRocksEntryOverhead;
  switch (type) {
    case storage::KeyType::kHash:
      return data_key + element.first.size() + element.second.size();
    case storage::KeyType::kSet:
      return data_key + element.first.size();
    case storage::KeyType::kList:
      return data_key + 8 + element.first.size();
    case storage::KeyType::kZSet:
      return 2 * (data_key + element.first.size() + 8);
    case storage::KeyType::kStream:  // element: (id text, fields and values concatenated)
      return data_key + 16 + element.second.size();
    default:
      return 0;
  }
}

uint64_t DiskBytes(const std::string& key, const KeySample& sample) {
  uint64_t meta = key.size() + kMetaHeaderBytes + kRocksEntryOverhead;
  if (sample.type == storage::KeyType::kString) return meta + sample.value_size;
  if (sample.type == storage::KeyType::kList) meta += 16;
  if (sample.type == storage::KeyType::kStream) meta += 48;
  if (sample.elements.empty()) return meta;
  uint64_t sampled = 0;
  for (const auto& element : sample.elements) {
    sampled += ElementDiskBytes(sample.type, key.size(), element);
  }
  return meta + sampled * sample.count / sample.elements.size();
}

uint64_t CacheBytes(CommandContext& ctx, const std::string& key) {
  cache::Cache* cache = ctx.admin().cache();
  uint64_t bytes = 0;
  if (cache == nullptr) return 0;
  cache->Inspect(key, ctx.now_ms, [&](const cache::Value& value, int64_t) {
    bytes = cache::Cache::Charge(key, value);
  });
  return bytes;
}

bool LfuPolicy(CommandContext& ctx) {
  return ctx.admin().cache() != nullptr &&
         ctx.admin().cache()->policy() == cache::Policy::kAllKeysLfu;
}

void Object(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  if (Is(sub, "HELP") && argv.size() == 2) {
    return AppendHelp(
        out, {"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "ENCODING <key>",
              "    Return the kind of internal representation used in order to store the value",
              "    associated with a <key>.", "FREQ <key>",
              "    Return the access frequency index of the <key>. The returned integer is",
              "    proportional to the logarithm of the recent access frequency of the key.",
              "IDLETIME <key>",
              "    Return the idle time of the <key>, that is the approximated number of",
              "    seconds elapsed since the last access to the key.", "REFCOUNT <key>",
              "    Return the number of references of the value associated with the specified",
              "    <key>.", "HELP", "    Prints this help."});
  }
  bool encoding = Is(sub, "ENCODING"), freq = Is(sub, "FREQ"), idle = Is(sub, "IDLETIME"),
       refcount = Is(sub, "REFCOUNT");
  if (argv.size() != 3 || !(encoding || freq || idle || refcount)) {
    return AppendSubcommandError(out, argv, {"ENCODING", "FREQ", "IDLETIME", "REFCOUNT", "HELP"});
  }
  const std::string& key = argv[2];
  // Encoding needs the elements up to the largest listpack/intset limit; the others only the
  // type (an absent key replies nil before any policy error, as Redis).
  uint64_t limit = 0;
  if (encoding) {
    const config::Config& config = ctx.config();
    limit = static_cast<uint64_t>(std::max({config.GetInt("hash-max-listpack-entries"),
                                            config.GetInt("zset-max-listpack-entries"),
                                            config.GetInt("set-max-intset-entries")})) +
            1;
  }
  auto sample = SampleKey(ctx.store, key, encoding ? limit : 0);
  if (!sample.ok()) return AppendStatusError(out, sample.status());
  if (sample->type == storage::KeyType::kNone) return out->append(NullBulkReply()), void();
  if (encoding) return AppendBulk(out, Encoding(*sample, ctx.config()));
  if (refcount) {
    // Redis shares the integers 0..9999 (OBJ_SHARED_REFCOUNT).
    int64_t n = -1;
    bool shared = sample->type == storage::KeyType::kString && IsRedisInt(sample->value) &&
                  ParseInteger(sample->value, &n) && n >= 0 && n < 10000;
    return AppendInteger(out, shared ? INT_MAX : 1);
  }
  // FREQ and IDLETIME come from the cache's entry for the key, read without touching it.
  const cache::Cache* cache = ctx.admin().cache();
  if (freq) {
    if (!LfuPolicy(ctx)) {
      return AppendError(out,
                         "ERR An LFU maxmemory policy is not selected, access frequency not "
                         "tracked. Please note that when switching between policies at runtime "
                         "LRU and LFU data will take some time to adjust.");
    }
    auto counter = cache->LfuFrequency(key, ctx.now_ms);
    return AppendInteger(out, counter.value_or(0));
  }
  if (LfuPolicy(ctx)) {
    return AppendError(out,
                       "ERR An LFU maxmemory policy is selected, idle time not tracked. Please "
                       "note that when switching between policies at runtime LRU and LFU data "
                       "will take some time to adjust.");
  }
  // A key the cache does not hold has no access time kept: 0, as if just accessed (never
  // reported idler than it is).
  AppendInteger(out, cache == nullptr ? 0 : cache->IdleSeconds(key, ctx.now_ms).value_or(0));
}

void MemoryUsage(CommandContext& ctx, Args& argv, std::string* out) {
  int64_t samples = 5;
  for (size_t i = 3; i < argv.size(); i += 2) {
    if (Is(argv[i], "SAMPLES") && i + 1 < argv.size()) {
      if (!ParseInteger(argv[i + 1], &samples)) return out->append(kReplyNotInteger), void();
      if (samples < 0) return out->append(kReplySyntaxError), void();
    } else {
      return out->append(kReplySyntaxError), void();
    }
  }
  uint64_t limit = samples == 0 ? UINT64_MAX : static_cast<uint64_t>(samples);
  auto sample = SampleKey(ctx.store, argv[2], limit);
  if (!sample.ok()) return AppendStatusError(out, sample.status());
  if (sample->type == storage::KeyType::kNone) return out->append(NullBulkReply()), void();
  AppendInteger(out, static_cast<int64_t>(DiskBytes(argv[2], *sample) + CacheBytes(ctx, argv[2])));
}

// MEMORY STATS: Redis's field names where rockcache has the figure (the process's RSS stands
// for allocated memory), then the cache's.
void MemoryStats(CommandContext& ctx, std::string* out) {
  uint64_t rss = ResidentBytes();
  auto keys = ctx.store->DbSize();
  uint64_t key_count = keys.ok() ? static_cast<uint64_t>(*keys) : 0;
  cache::Stats cache{};
  if (ctx.admin().cache() != nullptr) cache = ctx.admin().cache()->GetStats();
  uint64_t clients = ctx.clients().Snapshot().size();
  std::vector<std::pair<const char*, uint64_t>> fields = {
      {"peak.allocated", rss},
      {"total.allocated", rss},
      {"startup.allocated", 0},
      {"replication.backlog", 0},
      {"clients.slaves", 0},
      {"clients.normal", clients},
      {"cluster.links", 0},
      {"aof.buffer", 0},
      {"lua.caches", 0},
      {"functions.caches", 0},
      {"overhead.total", rss - std::min(rss, cache.bytes_used)},
      {"keys.count", key_count},
      {"keys.bytes-per-key", key_count ? rss / key_count : 0},
      {"dataset.bytes", cache.bytes_used},
      {"cache.bytes", cache.bytes_used},
      {"cache.keys", cache.keys},
      {"cache.maxmemory", cache.max_memory},
  };
  AppendMapHeader(out, static_cast<int64_t>(fields.size()));
  for (const auto& [name, value] : fields) {
    AppendBulk(out, name);
    AppendInteger(out, static_cast<int64_t>(value));
  }
}

std::string MemoryDoctor(CommandContext& ctx) {
  if (ctx.admin().cache() == nullptr || !ctx.admin().cache()->enabled()) {
    return "Hi Sam, the cache is off (cache-maxmemory 0): every read goes to RocksDB. Set "
           "maxmemory (or cache-maxmemory) to keep hot keys in memory.\n";
  }
  cache::Stats stats = ctx.admin().cache()->GetStats();
  if (stats.keys == 0) {
    return "Hi Sam, this instance is empty or is using very little memory, my issues detector "
           "can't be used in these conditions. Please, leave for your mission on Earth and fill "
           "it with some data. The new Sam and I will be back to our programming as soon as I "
           "finished rebooting.\n";
  }
  std::string text;
  if (stats.evictions > 0 && stats.bytes_used * 10 >= stats.max_memory * 9) {
    text += " * Cache pressure: the cache is full (" + std::to_string(stats.bytes_used) + " of " +
            std::to_string(stats.max_memory) + " bytes) and has evicted " +
            std::to_string(stats.evictions) +
            " keys; reads of evicted keys go to RocksDB. Raise maxmemory if the hit ratio in "
            "INFO cache is low.\n";
  }
  if (text.empty())
    return "Hi Sam, I can't find any memory issue in your instance. I can only "
           "account for what happened on this base.\n";
  return "Sam, I detected a few issues in this rockcache instance memory implants:\n\n" + text;
}

void Memory(CommandContext& ctx, Args& argv, std::string* out) {
  const std::string& sub = argv[1];
  if (Is(sub, "USAGE") && argv.size() >= 3) return MemoryUsage(ctx, argv, out);
  if (Is(sub, "STATS") && argv.size() == 2) return MemoryStats(ctx, out);
  if (Is(sub, "DOCTOR") && argv.size() == 2) return AppendVerbatim(out, MemoryDoctor(ctx));
  if (Is(sub, "MALLOC-STATS") && argv.size() == 2) {
    return AppendBulk(out, "Stats not supported for the current allocator");
  }
  if (Is(sub, "PURGE") && argv.size() == 2) return out->append(kReplyOk), void();
  if (Is(sub, "HELP") && argv.size() == 2) {
    return AppendHelp(
        out, {"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "DOCTOR",
              "    Return memory problems reports.", "MALLOC-STATS",
              "    Return internal statistics report from the memory allocator.", "PURGE",
              "    Attempt to purge dirty pages for reclamation by the allocator.", "STATS",
              "    Return information about the memory usage of the server.",
              "USAGE <key> [SAMPLES <count>]",
              "    Return memory in bytes used by <key> and its value. Nested values are",
              "    sampled up to <count> times (default: 5, 0 means sample all).", "HELP",
              "    Prints this help."});
  }
  AppendSubcommandError(out, argv, {"USAGE", "STATS", "DOCTOR", "MALLOC-STATS", "PURGE", "HELP"});
}

// TOUCH: counts the keys that exist and marks the cached ones as accessed (LRU/LFU).
void Touch(CommandContext& ctx, Args& argv, std::string* out) {
  auto keys = ArgViews(argv, 1);
  auto found = ctx.store->Exists(keys);
  if (!found.ok()) return AppendStatusError(out, found.status());
  if (cache::Cache* cache = ctx.admin().cache()) {
    for (auto key : keys) cache->Visit(key, ctx.now_ms, [](const cache::Value&, int64_t) {});
  }
  AppendInteger(out, *found);
}

}  // namespace

// clang-format off
const std::vector<CommandSpec> kIntrospectionCommands = {
    {"object", -2, kReadOnly, 0, 0, 0, Object, nullptr,
     "encoding|freq|idletime|refcount|help"},
    {"memory", -2, kReadOnly, 0, 0, 0, Memory, nullptr,
     "doctor|malloc-stats|purge|stats|usage|help"},
    {"touch", -2, kReadOnly | kFast, 1, -1, 1, Touch},
};
// clang-format on

}  // namespace rockcache::server
