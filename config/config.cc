#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <unordered_map>

#include "config/buffer_limits.h"
#include "config/events.h"
#include "config/glob.h"
#include "config/redis_options.h"
#include "config/split_args.h"

namespace rockcache::config {
namespace {

constexpr int64_t kKB = 1024;
constexpr int64_t kMB = 1024 * kKB;
constexpr int64_t kGB = 1024 * kMB;

using T = OptionType;

// clang-format off
const std::vector<OptionSpec> kOptionTable = {
  // ---- network ----
  {"bind", T::kString, "127.0.0.1", 0, 0, nullptr, false,
   "Addresses to listen on, space separated; 0.0.0.0 exposes the server to the network."},
  {"port", T::kInt, "6379", 0, 65535, nullptr, false,
   "TCP port for the Redis protocol."},
  {"protected-mode", T::kBool, "yes", 0, 0, nullptr, true,
   "With no requirepass, refuse clients that are not on a loopback address."},
  {"net-threads", T::kInt, "0", 0, 64, nullptr, false,
   "Network event loops, each with its own SO_REUSEPORT listener; 0 = one per 4 cores (min 1)."},
  {"maxclients", T::kInt, "10000", 1, 1000000, nullptr, true,
   "Connections beyond this are refused with an error; bounded by the file descriptor limit."},
  {"timeout", T::kInt, "0", 0, INT_MAX, nullptr, true,
   "Close a client idle this many seconds (0 = never)."},
  {"tcp-keepalive", T::kInt, "300", 0, INT_MAX, nullptr, true,
   "Seconds between TCP keepalive probes on new connections (0 = off)."},
  {"proto-max-bulk-len", T::kMemory, "512mb", 1 * kMB, 4 * kGB, nullptr, true,
   "Largest bulk string a request may carry; bigger requests get a protocol error."},
  {"client-query-buffer-limit", T::kMemory, "1gb", 1 * kMB, LLONG_MAX, nullptr, true,
   "Disconnect a client whose unparsed input plus its partly parsed command exceed this."},
  {"client-output-buffer-limit", T::kBufferLimits,
   "normal 1gb 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60", 0, 0, nullptr, true,
   "Per class <class> <hard> <soft> <seconds>: close a client whose pending replies pass hard, "
   "or stay over soft longer than seconds; replies are checked while they are built, so memory "
   "stays near the limit. Unlike Redis (normal 0 0 0), normal keeps a 1gb hard limit. A single "
   "size sets the normal hard limit."},
  {"requirepass", T::kString, "", 0, 0, nullptr, true,
   "Password clients must AUTH with; empty disables authentication."},
  // ---- replication ----
  {"repl-wal-ttl", T::kInt, "3600", 0, INT_MAX, nullptr, false,
   "Seconds the RocksDB WAL is kept after a flush so replicas can resume from it (with "
   "repl-wal-size-limit; both 0 = deleted at once, every reconnect is a full sync)."},
  {"repl-wal-size-limit", T::kMemory, "1gb", 0, LLONG_MAX, nullptr, false,
   "Disk the kept WAL may use (whole MB); a replica further behind takes a full sync."},
  // ---- pub/sub ----
  {"notify-keyspace-events", T::kEvents, "", 0, 0, nullptr, true,
   "Keyspace notifications: Redis's class letters (K E g $ l s h z x e t m d n A, e.g. KEA) for "
   "__keyspace@0__:/__keyevent@0__: messages after writes and expiries; n (new keys) and m "
   "(key misses) are not in A; empty = off (one atomic load per write). evicted (e) never "
   "fires: cache eviction drops only a cached copy."},
  // ---- process ----
  {"dir", T::kString, "./data", 0, 0, nullptr, false,
   "Data directory (created if missing): the RocksDB database in <dir>/db, BGSAVE checkpoints and "
   "a full sync's staged files beside it; all inside, so it may be a mount point."},
  {"checkpoint-keep", T::kInt, "1", 0, 1000, nullptr, true,
   "BGSAVE/SAVE checkpoints kept under dir (checkpoint-<unix ms>); a new one removes the oldest "
   "beyond this; 0 = keep all (each pins the SST files it links, compacted away or not)."},
  {"rdb-key-save-delay", T::kInt, "0", 0, INT_MAX, nullptr, true,
   "Test aid, as Redis's: a BGSAVE lasts at least this many microseconds per key of database 0 "
   "(0 = no delay)."},
  {"loglevel", T::kEnum, "notice", 0, 0, "debug|verbose|notice|warning", true,
   "Log verbosity; debug logs every connection."},
  {"logfile", T::kString, "", 0, 0, nullptr, false,
   "Log file path; empty logs to standard output."},
  {"pidfile", T::kString, "", 0, 0, nullptr, false,
   "Write the process id here at start-up and remove it at shutdown; empty = none."},
  {"hz", T::kInt, "10", 1, 500, nullptr, true,
   "Background task frequency per second (expired-key sweeps); higher reclaims sooner."},
  // ---- observability ----
  {"latency-tracking", T::kBool, "yes", 0, 0, nullptr, true,
   "Time every command's stages (rdtsc, ~10 ns a stamp) for INFO, SLOWLOG and /metrics."},
  {"slowlog-log-slower-than", T::kInt, "10000", -1, LLONG_MAX, nullptr, true,
   "Log commands whose total time reaches this many microseconds (-1 off, 0 every command)."},
  {"slowlog-max-len", T::kInt, "128", 0, LONG_MAX, nullptr, true,
   "Entries the slow log keeps; older ones are dropped."},
  {"metrics-port", T::kInt, "9121", 0, 65535, nullptr, false,
   "Port of the Prometheus /metrics endpoint on the bind addresses (0 turns it off)."},
  // ---- worker pool ----
  {"pool-threads", T::kInt, "0", 0, 256, nullptr, false,
   "Worker threads for storage commands; 0 = auto (the cores net-threads leave, >= 1; >= 2 if storage-sync always)."},
  {"pool-mode", T::kEnum, "adaptive", 0, 0, "adaptive|classic", false,
   "adaptive = lock-free lists with spin/yield/block waits; classic = one mutex+condvar queue."},
  {"workers-per-list", T::kInt, "0", 0, 256, nullptr, false,
   "Workers sharing one task list; 0 = auto (all of them up to 4 workers, else 2)."},
  {"pool-spin-count", T::kInt, "-1", -1, 1000000, nullptr, true,
   "Spins of an idle worker before it yields; -1 = auto (200 if cores >= net-threads + 3, else 0)."},
  {"pool-max-yield-usec", T::kInt, "-1", -1, 1000000, nullptr, true,
   "Longest an idle worker yields before it blocks; -1 = auto (100 if cores >= net-threads + 3, else 0)."},
  {"pool-slow-yield-usec", T::kInt, "3", 0, 1000000, nullptr, true,
   "A yield slower than this counts as slow (the CPU is contended)."},
  {"pool-max-slow-yields", T::kInt, "3", 1, 1000000, nullptr, true,
   "Slow yields after which the yield phase ends early and the worker blocks."},
  {"pool-yield-sampling", T::kInt, "256", 1, 1 << 20, nullptr, true,
   "One wait in this many tries the yield phase even when the adaptive credit says no."},
  {"pool-queue-slow-size", T::kInt, "100", 1, INT_MAX, nullptr, true,
   "A producer yields once when a task list holds more than this."},
  {"pool-queue-max-size", T::kInt, "100000", 1, INT_MAX, nullptr, true,
   "A producer waits while a task list holds this many tasks (backpressure bound)."},
  {"pool-cpu-affinity", T::kBool, "no", 0, 0, nullptr, false,
   "Pin worker i to core i mod ncores; helps cache locality on dedicated machines."},
  {"slice-items", T::kInt, "1024", 1, 1 << 24, nullptr, true,
   "Entries a big read (KEYS, HGETALL, LRANGE, ZRANGE, SCAN with a big COUNT, SUNION/SINTER/"
   "SDIFF, ZUNION/ZINTER/ZDIFF...) walks or probes per step before it yields the worker; smaller "
   "shares the pool more finely, larger spends less per step."},
  {"slice-usec", T::kInt, "1000", 10, 1000000, nullptr, true,
   "Longest a step of a big read runs before it yields the worker (checked every 64 entries)."},
  {"pool-mlfq", T::kBool, "yes", 0, 0, nullptr, true,
   "Multi-level feedback queue (adaptive mode): a client's requests drop to levels 1-2 as the "
   "execution time it used recently grows, so big commands cannot crowd out small ones; no = one "
   "FIFO level."},
  {"pool-small-share", T::kInt, "80", 1, 99, nullptr, true,
   "Percent of the pool's CPU level-0 (small) requests are owed while small work is around: big "
   "work gets at most the rest; higher protects small requests, lower finishes big ones sooner."},
  {"pool-heavy-lane", T::kBool, "yes", 0, 0, nullptr, true,
   "Big (level 1-2) work runs on its own threads at the OS's idle priority, preempted whenever a "
   "small request's thread wants the core; no = the workers run it at normal priority."},
  // ---- cache ----
  {"cache-maxmemory", T::kMemory, "256mb", 0, LLONG_MAX, nullptr, true,
   "Bytes of keys + values + overhead the in-memory cache may hold (0 turns the cache off)."},
  {"cache-shards", T::kInt, "16", 1, 1024, nullptr, false,
   "Independently locked cache shards; more lowers lock contention, each gets a smaller budget."},
  {"cache-policy", T::kEnum, "allkeys-lru", 0, 0, "allkeys-lru|allkeys-lfu", true,
   "Eviction policy: lru keeps recent keys, lfu keeps frequently read keys through scans."},
  {"cache-sweep-samples", T::kInt, "20", 0, 10000, nullptr, true,
   "Cache entries probed at random per shard hz times a second to free expired and flushed ones "
   "(rounds repeat while a quarter of the probes free something, ~0.5 ms a tick at most); 0 = "
   "off: only lookups and eviction free them."},
  {"cache-max-hash-fields", T::kInt, "1024", 0, 1000000, nullptr, false,
   "Hashes with more fields are not cached (they are read from RocksDB every time)."},
  {"cache-max-list-elements", T::kInt, "1024", 0, 1000000, nullptr, false,
   "LRANGE / LINDEX within a list's first this many elements are answered from a cached head of "
   "the list (with LLEN); 0 = lists are not cached."},
  {"rtc-reads", T::kBool, "yes", 0, 0, nullptr, true,
   "Answer reads the cache holds in the network thread (run to completion), skipping the pool."},
  {"write-coalescing", T::kBool, "yes", 0, 0, nullptr, true,
   "Run a group's consecutive LPUSH/RPUSH/LPOP/RPOP/SADD/HSET on one key as one storage write "
   "(same replies and result) while no client is blocked and keyspace events are off."},
  {"rtc-storage-read-max-bytes", T::kMemory, "16kb", 0, 64 * kMB, nullptr, true,
   "A GET (STRLEN, GETBIT, MGET of one key) the cache misses is tried in the network thread "
   "against RocksDB's memory (memtables, block cache, resident file pages; never a disk read) "
   "and fills the cache, for strings up to this size and absent keys; 0 = every miss goes to the "
   "pool."},
  {"rtc-storage-read-mapped", T::kInt, "-1", -1, 1000000, nullptr, true,
   "With rocksdb-mmap-reads, the first this many misses of a client's pipeline the network thread "
   "tries also read SST file pages the OS holds in memory (mincore, never a disk wait); later ones "
   "go to a worker, read together (MultiGet) beside this thread (but see rtc-storage-read-balance)"
   "; -1 = auto (64 when the network threads have every core, else 2)."},
  {"rtc-storage-read-balance", T::kBool, "yes", 0, 0, nullptr, true,
   "With rocksdb-mmap-reads, while the pool still runs the last batches a network thread sent, "
   "that thread reads its later misses from resident file pages itself instead of queueing them."},
  {"rtc-storage-read-resident-ms", T::kInt, "1000", 0, 60000, nullptr, true,
   "With rocksdb-mmap-reads, a 64 KB stretch of an SST file a network thread found in memory "
   "(one mincore) is trusted for this long without asking again; a page the OS evicts meanwhile "
   "costs that thread one disk read. 0 = ask on every read."},
  {"tracking-table-max-keys", T::kInt, "1000000", 0, LONG_MAX, nullptr, true,
   "Keys CLIENT TRACKING remembers for its readers; past it a key leaves the table and its "
   "readers get an invalidation, as Redis (0 = no limit)."},
  // ---- scripting ----
  {"script-group-commit", T::kBool, "yes", 0, 0, nullptr, true,
   "Scripts (EVAL, EVALSHA, FCALL...) that arrive together share one key-lock segment and one "
   "RocksDB write, each still all-or-nothing; no = each script commits alone."},
  {"script-group-max-scripts", T::kInt, "8", 1, 100000, nullptr, true,
   "Most one-script batches of different clients that share one worker task (and its segment and "
   "commit); more go in further tasks, whose replies need not wait for the first's."},
  {"script-group-max-usec", T::kInt, "1000", 10, 1000000, nullptr, true,
   "A script sharing a commit with other clients' scripts that runs longer is rolled back and run "
   "again alone, and the scripts behind it go on without it."},
  {"busy-reply-threshold", T::kInt, "5000", 0, LONG_MAX, nullptr, true,
   "Milliseconds a script runs before commands that need its keys (and that the cache cannot "
   "answer) get -BUSY instead of waiting for it; other keys are served all along."},
  {"lua-maxmemory", T::kMemory, "128mb", 1 * kMB, LLONG_MAX, nullptr, true,
   "Memory one worker's Lua state may hold (scripts' tables and strings); a script that needs "
   "more fails with an error and its writes are kept as far as it got, as any script error."},
  {"lua-script-cache-bytes", T::kMemory, "64mb", 1 * kMB, LLONG_MAX, nullptr, true,
   "Bytes of EVAL / SCRIPT LOAD script bodies kept for EVALSHA; past it the oldest are dropped "
   "(their clients get NOSCRIPT and load them again)."},
  // ---- storage ----
  {"storage-sync", T::kEnum, "no", 0, 0, "no|always", false,
   "always fsyncs the WAL on every write (safe against power loss, slower); no leaves it to the OS."},
  {"rocksdb-block-cache-size", T::kMemory, "-1", -1, LLONG_MAX, nullptr, false,
   "RocksDB block cache for SST reads (uncompressed blocks, pinned index and filters); -1 = a "
   "quarter of cache-maxmemory, at least 32 MB."},
  {"rocksdb-meta-block-size", T::kMemory, "2kb", 512, 64 * kKB, nullptr, false,
   "Data block size of the key (meta) column families, where strings live: a read of a key "
   "not in the block cache reads, checksums and caches one block; smaller = less work a cold "
   "read, a bigger index. Collections' entries keep RocksDB's 4 KB (they are scanned)."},
  {"rocksdb-pin-metadata", T::kBool, "yes", 0, 0, nullptr, false,
   "Keep every SST file's index and bloom filter pinned in memory, whole (about 1% of the data: "
   "block cache or mapped file pages): a point read then looks none of them up or reads them."},
  {"rocksdb-write-buffer-size", T::kMemory, "16mb", 1 * kMB, LLONG_MAX, nullptr, false,
   "RocksDB memtable size per column family; larger flushes less, each insert searches deeper."},
  {"rocksdb-compression", T::kEnum, "lz4", 0, 0, "none|snappy|lz4|zstd", false,
   "SST block compression; zstd is smallest, lz4 fastest."},
  {"rocksdb-compress-level0", T::kBool, "no", 0, 0, nullptr, false,
   "Also compress the files memtable flushes write (level 0): smaller, but every write pays the "
   "compression at flush time for files compaction soon rewrites."},
  {"rocksdb-mmap-reads", T::kBool, "yes", 0, 0, nullptr, false,
   "Read SST files through a memory mapping instead of pread: a cold read from the OS page cache "
   "costs no system call and no copy (the mapped pages show in RSS as file pages)."},
  {"rocksdb-verify-read-checksums", T::kBool, "no", 0, 0, nullptr, false,
   "Verify a block's checksum on every point read that loads it (GET of a cold key); compactions, "
   "scans and iterations always verify. Off, a cold read skips hashing the whole block."},
  {"rocksdb-partitioned-index", T::kBool, "yes", 0, 0, nullptr, false,
   "With rocksdb-pin-metadata no: cut each file's index and bloom filter into 4 KB partitions, "
   "so a read of a cold key loads one of each once they outgrow the block cache (pinned, they "
   "stay whole: all in memory anyway)."},
  {"rocksdb-memtable", T::kEnum, "rockcache", 0, 0, "rockcache|rocksdb", false,
   "Memtable structure: rockcache's skip list (fewer instructions a write) or RocksDB's own."},
  {"rocksdb-memtable-huge-pages", T::kBool, "yes", 0, 0, nullptr, false,
   "Put rockcache's memtable skip list nodes in 2 MB transparent huge pages (one page fault and "
   "TLB entry per 2 MB); a memtable past 1 MB then holds whole 2 MB chunks."},
  {"rocksdb-max-background-jobs", T::kInt, "2", 1, 64, nullptr, false,
   "RocksDB flush and compaction threads."},
  {"key-filter-bits-per-key", T::kInt, "10", 0, 32, nullptr, false,
   "Bloom filters over every key and over the members of collections made since start, so "
   "writes and reads of keys or members never written skip their RocksDB read (~1% false "
   "positives at 10); 0 = off."},
  {"key-filter-max-memory", T::kMemory, "64mb", 0, LLONG_MAX, nullptr, false,
   "Bound of each filter: they grow with every distinct key (member) written; past this one "
   "turns off until a restart rebuilds it."},
  {"databases", T::kInt, "16", 1, 256, nullptr, false,
   "Databases clients may SELECT (0..N-1); each is a RocksDB column family. At most 256."},
};
// clang-format on

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  size_t i = 0;
  bool neg = false;
  if (text[0] == '-') {
    neg = true;
    i = 1;
    if (text.size() == 1) return false;
  }
  unsigned long long v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    unsigned long long next = v * 10 + static_cast<unsigned>(text[i] - '0');
    if (next / 10 != v) return false;
    v = next;
  }
  if (!neg && v > static_cast<unsigned long long>(LLONG_MAX)) return false;
  if (neg && v > static_cast<unsigned long long>(LLONG_MAX) + 1) return false;
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// The words of `text` separated by spaces (' ' only; buffer_limits.cc's Words splits on any
// whitespace).
std::vector<std::string> SpaceWords(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

struct Index {
  std::vector<OptionSpec> all;
  std::unordered_map<std::string, size_t> by_name;
  Index() {
    all = kOptionTable;
    const auto& redis = RedisOptionRows();
    all.insert(all.end(), redis.begin(), redis.end());
    for (size_t i = 0; i < all.size(); ++i) by_name.emplace(all[i].name, i);
  }
};

const Index& GetIndex() {
  static const Index index;
  return index;
}

}  // namespace

const std::vector<OptionSpec>& OptionTable() { return GetIndex().all; }

const OptionSpec* FindOption(std::string_view name) {
  const Index& index = GetIndex();
  auto it = index.by_name.find(Lower(name));
  return it == index.by_name.end() ? nullptr : &index.all[it->second];
}

const OptionSpec& StorageOption(const OptionSpec& spec) {
  if (spec.kind != OptionKind::kMapped) return spec;
  const OptionSpec* target = FindOption(spec.target);
  assert(target != nullptr);
  return target != nullptr ? *target : spec;
}

bool ParseMemory(std::string_view text, int64_t* bytes) {
  std::string lower = Lower(text);
  size_t digits = 0;
  while (digits < lower.size() && (std::isdigit(static_cast<unsigned char>(lower[digits])) ||
                                   (digits == 0 && lower[0] == '-'))) {
    ++digits;
  }
  int64_t number = 0;
  if (!ParseInt(std::string_view(lower).substr(0, digits), &number)) return false;
  std::string unit = lower.substr(digits);
  int64_t mul = 1;
  if (unit.empty() || unit == "b") {
    mul = 1;
  } else if (unit == "k") {
    mul = 1000;
  } else if (unit == "kb") {
    mul = kKB;
  } else if (unit == "m") {
    mul = 1000 * 1000;
  } else if (unit == "mb") {
    mul = kMB;
  } else if (unit == "g") {
    mul = 1000LL * 1000 * 1000;
  } else if (unit == "gb") {
    mul = kGB;
  } else {
    return false;
  }
  if (number != 0 && (number > LLONG_MAX / mul || number < LLONG_MIN / mul)) return false;
  *bytes = number * mul;
  return true;
}

Config::Config() {
  for (const auto& spec : OptionTable()) {
    if (spec.kind == OptionKind::kMapped) continue;
    std::string canonical;
    Status s = Canonicalize(spec, spec.default_value, &canonical);
    assert(s.ok());
    values_[spec.name] = s.ok() ? canonical : spec.default_value;
  }
}

Status Config::Canonicalize(const OptionSpec& spec, std::string_view value,
                            std::string* out) const {
  switch (spec.type) {
    case OptionType::kBool: {
      std::string v = Lower(value);
      if (v == "yes" || v == "no") {
        *out = v;
        return Status::OK();
      }
      return Status::InvalidArgument("argument must be 'yes' or 'no'");
    }
    case OptionType::kInt:
    case OptionType::kMemory: {
      int64_t n = 0;
      bool ok = spec.type == OptionType::kInt ? ParseInt(value, &n) : ParseMemory(value, &n);
      if (!ok) {
        return Status::InvalidArgument(spec.type == OptionType::kInt
                                           ? "argument couldn't be parsed into an integer"
                                           : "argument must be a memory value");
      }
      if (n < spec.min || n > spec.max) {
        return Status::InvalidArgument("argument must be between " + std::to_string(spec.min) +
                                       " and " + std::to_string(spec.max) + " inclusive");
      }
      *out = std::to_string(n);
      return Status::OK();
    }
    case OptionType::kEnum: {
      std::string v = Lower(value);
      std::string_view choices = spec.choices;
      size_t start = 0;
      while (start <= choices.size()) {
        size_t bar = choices.find('|', start);
        if (bar == std::string_view::npos) bar = choices.size();
        if (choices.substr(start, bar - start) == v) {
          *out = v;
          return Status::OK();
        }
        start = bar + 1;
      }
      std::string list;
      for (char c : choices) list += c == '|' ? std::string(", ") : std::string(1, c);
      return Status::InvalidArgument("argument(s) must be one of the following: " + list);
    }
    case OptionType::kString:
      *out = std::string(value);
      return Status::OK();
    case OptionType::kBufferLimits: {
      // Merged over the current value: a group replaces its class only, as in Redis.
      ClientBufferLimits base, limits;
      std::string current;
      {
        MutexLock lock(&mu_);
        auto it = values_.find(spec.name);
        if (it != values_.end()) current = it->second;
      }
      if (!current.empty()) (void)ParseClientBufferLimits(current, base, &base);
      if (Status s = ParseClientBufferLimits(value, base, &limits); !s.ok()) return s;
      *out = FormatClientBufferLimits(limits);
      return Status::OK();
    }
    case OptionType::kEvents:
      if (!CanonicalEvents(value, out)) {
        return Status::InvalidArgument("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
      }
      return Status::OK();
    case OptionType::kSave: {
      auto words = SpaceWords(value);
      int64_t n = 0;
      if (words.size() % 2 != 0 ||
          !std::all_of(words.begin(), words.end(),
                       [&](const std::string& w) { return ParseInt(w, &n) && n >= 0; })) {
        return Status::InvalidArgument("Invalid save parameters");
      }
      out->clear();
      for (const auto& w : words) *out += (out->empty() ? "" : " ") + w;
      return Status::OK();
    }
    case OptionType::kPercentiles: {
      out->clear();
      for (const auto& w : SpaceWords(value)) {
        char* end = nullptr;
        double p = std::strtod(w.c_str(), &end);
        if (end == w.c_str() || *end != '\0') {
          return Status::InvalidArgument("Invalid latency-tracking-info-percentiles parameters");
        }
        if (p < 0 || p > 100) {
          return Status::InvalidArgument(
              "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
        }
        *out += (out->empty() ? "" : " ") + w;
      }
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown option type");
}

Status Config::Prepare(const OptionSpec& spec, std::string_view value, bool from_config_set,
                       std::string* store) const {
  if (from_config_set && !spec.runtime) {
    return Status::InvalidArgument("can't set immutable config");
  }
  std::string canonical;
  Status s = Canonicalize(spec, value, &canonical);
  if (!s.ok()) return s;
  switch (spec.kind) {
    case OptionKind::kReported:
      if (canonical != spec.default_value) {
        std::string shown =
            *spec.default_value ? "'" + std::string(spec.default_value) + "'" : "\"\"";
        return Status::InvalidArgument("it is always " + shown + " in rockcache: " + spec.doc);
      }
      break;
    case OptionKind::kMapped: {
      std::string target_value;
      s = MapToTarget(spec, canonical, &target_value);
      if (!s.ok()) return s;
      // The target's own rules apply too (its bounds, mutability, or a reported value).
      return Prepare(StorageOption(spec), target_value, from_config_set, store);
    }
    default:
      break;
  }
  *store = std::move(canonical);
  return Status::OK();
}

Status Config::Set(std::string_view name, std::string_view value, bool from_config_set) {
  const OptionSpec* spec = FindOption(name);
  if (spec == nullptr) return Status::InvalidArgument("Unknown option or number of arguments");
  std::string canonical;
  Status s = Prepare(*spec, value, from_config_set, &canonical);
  if (!s.ok()) return s;
  const OptionSpec& stored = StorageOption(*spec);
  std::vector<std::function<void(const std::string&, const std::string&)>> callbacks;
  {
    MutexLock lock(&mu_);
    values_[stored.name] = canonical;
    callbacks = callbacks_;
  }
  for (const auto& cb : callbacks) cb(stored.name, canonical);
  return Status::OK();
}

Status Config::SetMany(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::pair<const OptionSpec*, std::string>> prepared;
  for (const auto& [name, value] : pairs) {
    const OptionSpec* spec = FindOption(name);
    if (spec == nullptr) {
      return Status::InvalidArgument("Unknown option or number of arguments for CONFIG SET - '" +
                                     name + "'");
    }
    auto failed = [&name = name](const std::string& why) {
      std::string message = "CONFIG SET failed (possibly related to argument '";
      message.append(name).append("') - ").append(why);
      return Status::InvalidArgument(message);
    };
    const OptionSpec* stored = &StorageOption(*spec);
    for (const auto& [other, unused] : prepared) {
      if (other == stored) return failed("duplicate parameter");
    }
    std::string canonical;
    Status s = Prepare(*spec, value, /*from_config_set=*/true, &canonical);
    if (!s.ok()) return failed(s.message());
    prepared.emplace_back(stored, std::move(canonical));
  }
  std::vector<std::function<void(const std::string&, const std::string&)>> callbacks;
  {
    MutexLock lock(&mu_);
    for (const auto& [spec, value] : prepared) values_[spec->name] = value;
    callbacks = callbacks_;
  }
  for (const auto& [spec, value] : prepared) {
    for (const auto& cb : callbacks) cb(spec->name, value);
  }
  return Status::OK();
}

Status Config::ApplyLine(std::string_view line) {
  size_t first = line.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || line[first] == '#') return Status::OK();
  auto args = SplitArgs(line);
  if (!args) return Status::InvalidArgument("Unbalanced quotes in configuration line");
  if (args->empty()) return Status::OK();
  const std::string& name = (*args)[0];
  const OptionSpec* spec = FindOption(name);
  if (spec == nullptr)
    return Status::InvalidArgument("'" + name + "': Bad directive or wrong number of arguments");
  if (args->size() < 2 && spec->type != OptionType::kString) {
    return Status::InvalidArgument("'" + name + "': wrong number of arguments");
  }
  bool multiword = spec->type == OptionType::kString || spec->type == OptionType::kSave ||
                   spec->type == OptionType::kPercentiles ||
                   spec->type == OptionType::kBufferLimits;
  if (args->size() > 2 && !multiword) {
    return Status::InvalidArgument("'" + name + "': wrong number of arguments");
  }
  std::string value;
  for (size_t i = 1; i < args->size(); ++i) {
    if (i > 1) value += ' ';
    value += (*args)[i];
  }
  Status s = Set(name, value);
  if (!s.ok()) return Status::InvalidArgument("'" + name + "': " + s.message());
  return Status::OK();
}

Status Config::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("can't open config file '" + path + "'");
  {
    MutexLock lock(&mu_);
    config_file_ = path;
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    Status s = ApplyLine(line);
    if (!s.ok()) {
      return Status::InvalidArgument(path + ":" + std::to_string(number) + ": " + s.message());
    }
  }
  return Status::OK();
}

Status Config::LoadFromArgs(int argc, const char* const* argv) {
  int i = 1;
  if (i < argc && std::string_view(argv[i]).rfind("--", 0) != 0) {
    Status s = LoadFile(argv[i]);
    if (!s.ok()) return s;
    ++i;
  }
  while (i < argc) {
    std::string_view flag = argv[i];
    if (flag.rfind("--", 0) != 0 || flag.size() == 2) {
      return Status::InvalidArgument("command line: expected --name value, got '" +
                                     std::string(flag) + "'");
    }
    std::string name(flag.substr(2));
    std::string value;
    int words = 0;
    ++i;
    while (i < argc && std::string_view(argv[i]).rfind("--", 0) != 0) {
      if (words++ > 0) value += ' ';
      value += argv[i++];
    }
    const OptionSpec* spec = FindOption(name);
    if (spec == nullptr) {
      return Status::InvalidArgument("command line: '--" + name + "': unknown option");
    }
    if (words == 0 && spec->type != OptionType::kString) {
      return Status::InvalidArgument("command line: '--" + name + "': missing value");
    }
    Status s = Set(name, value);
    if (!s.ok()) return Status::InvalidArgument("command line: '--" + name + "': " + s.message());
  }
  return Status::OK();
}

std::string Config::GetLocked(const OptionSpec& spec) const {
  auto it = values_.find(StorageOption(spec).name);
  return it == values_.end() ? "" : it->second;
}

std::string Config::Get(std::string_view name) const {
  const OptionSpec* spec = FindOption(name);
  if (spec == nullptr) return "";
  MutexLock lock(&mu_);
  return GetLocked(*spec);
}

int64_t Config::GetInt(std::string_view name) const {
  int64_t n = 0;
  ParseInt(Get(name), &n);
  return n;
}

bool Config::GetBool(std::string_view name) const { return Get(name) == "yes"; }

std::string Config::GetString(std::string_view name) const { return Get(name); }

std::vector<std::pair<std::string, std::string>> Config::Match(std::string_view pattern) const {
  std::vector<std::pair<std::string, std::string>> out;
  MutexLock lock(&mu_);
  for (const auto& spec : OptionTable()) {
    if (!GlobMatch(pattern, spec.name, /*nocase=*/true)) continue;
    std::string value = GetLocked(spec);
    // notify-keyspace-events: printed as Redis prints it ("A" hides `n`), stored with `n`.
    if (StorageOption(spec).type == OptionType::kEvents) value = DisplayEvents(value);
    out.emplace_back(spec.name, std::move(value));
  }
  return out;
}

std::string Config::config_file() const {
  MutexLock lock(&mu_);
  return config_file_;
}

void Config::OnChange(std::function<void(const std::string&, const std::string&)> callback) {
  MutexLock lock(&mu_);
  callbacks_.push_back(std::move(callback));
}

}  // namespace rockcache::config
