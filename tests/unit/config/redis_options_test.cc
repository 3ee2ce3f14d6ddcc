// The Redis 7.0 rows of the option table: every redis.conf parameter is known, mapped names are
// one setting with their rockcache option, reported ones accept only the truth, no-effect ones
// validate as Redis; CONFIG SET's all-or-nothing; CONFIG REWRITE.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "config/config.h"

using rockcache::config::Config;
using rockcache::config::FindOption;
using rockcache::config::OptionKind;

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace redis_options_test {

namespace {

// `CONFIG GET *` of redis-server 7.0.15 (client-query-buffer-limit is a native row of its own).
const char* kRedisNames[] = {
    "acl-pubsub-default",
    "aclfile",
    "acllog-max-len",
    "active-defrag-cycle-max",
    "active-defrag-cycle-min",
    "active-defrag-ignore-bytes",
    "active-defrag-max-scan-fields",
    "active-defrag-threshold-lower",
    "active-defrag-threshold-upper",
    "active-expire-effort",
    "activedefrag",
    "activerehashing",
    "always-show-logo",
    "aof-disable-auto-gc",
    "aof-load-truncated",
    "aof-rewrite-incremental-fsync",
    "aof-timestamp-enabled",
    "aof-use-rdb-preamble",
    "aof_rewrite_cpulist",
    "appenddirname",
    "appendfilename",
    "appendfsync",
    "appendonly",
    "auto-aof-rewrite-min-size",
    "auto-aof-rewrite-percentage",
    "bgsave_cpulist",
    "bind",
    "bind-source-addr",
    "bio_cpulist",
    "busy-reply-threshold",
    "client-output-buffer-limit",
    "cluster-allow-pubsubshard-when-down",
    "cluster-allow-reads-when-down",
    "cluster-allow-replica-migration",
    "cluster-announce-bus-port",
    "cluster-announce-hostname",
    "cluster-announce-ip",
    "cluster-announce-port",
    "cluster-announce-tls-port",
    "cluster-config-file",
    "cluster-enabled",
    "cluster-link-sendbuf-limit",
    "cluster-migration-barrier",
    "cluster-node-timeout",
    "cluster-port",
    "cluster-preferred-endpoint-type",
    "cluster-replica-no-failover",
    "cluster-replica-validity-factor",
    "cluster-require-full-coverage",
    "cluster-slave-no-failover",
    "cluster-slave-validity-factor",
    "crash-log-enabled",
    "crash-memcheck-enabled",
    "daemonize",
    "databases",
    "dbfilename",
    "dir",
    "disable-thp",
    "dynamic-hz",
    "enable-debug-command",
    "enable-module-command",
    "enable-protected-configs",
    "hash-max-listpack-entries",
    "hash-max-listpack-value",
    "hash-max-ziplist-entries",
    "hash-max-ziplist-value",
    "hll-sparse-max-bytes",
    "hz",
    "ignore-warnings",
    "io-threads",
    "io-threads-do-reads",
    "jemalloc-bg-thread",
    "latency-monitor-threshold",
    "latency-tracking",
    "latency-tracking-info-percentiles",
    "lazyfree-lazy-eviction",
    "lazyfree-lazy-expire",
    "lazyfree-lazy-server-del",
    "lazyfree-lazy-user-del",
    "lazyfree-lazy-user-flush",
    "lfu-decay-time",
    "lfu-log-factor",
    "list-compress-depth",
    "list-max-listpack-size",
    "list-max-ziplist-size",
    "logfile",
    "loglevel",
    "lua-time-limit",
    "masterauth",
    "masteruser",
    "maxclients",
    "maxmemory",
    "maxmemory-clients",
    "maxmemory-eviction-tenacity",
    "maxmemory-policy",
    "maxmemory-samples",
    "min-replicas-max-lag",
    "min-replicas-to-write",
    "min-slaves-max-lag",
    "min-slaves-to-write",
    "no-appendfsync-on-rewrite",
    "notify-keyspace-events",
    "oom-score-adj",
    "oom-score-adj-values",
    "pidfile",
    "port",
    "proc-title-template",
    "propagation-error-behavior",
    "protected-mode",
    "proto-max-bulk-len",
    "rdb-del-sync-files",
    "rdb-save-incremental-fsync",
    "rdbchecksum",
    "rdbcompression",
    "repl-backlog-size",
    "repl-backlog-ttl",
    "repl-disable-tcp-nodelay",
    "repl-diskless-load",
    "repl-diskless-sync",
    "repl-diskless-sync-delay",
    "repl-diskless-sync-max-replicas",
    "repl-ping-replica-period",
    "repl-ping-slave-period",
    "repl-timeout",
    "replica-announce-ip",
    "replica-announce-port",
    "replica-announced",
    "replica-ignore-disk-write-errors",
    "replica-ignore-maxmemory",
    "replica-lazy-flush",
    "replica-priority",
    "replica-read-only",
    "replica-serve-stale-data",
    "replicaof",
    "requirepass",
    "sanitize-dump-payload",
    "save",
    "server_cpulist",
    "set-max-intset-entries",
    "set-proc-title",
    "shutdown-on-sigint",
    "shutdown-on-sigterm",
    "shutdown-timeout",
    "slave-announce-ip",
    "slave-announce-port",
    "slave-ignore-maxmemory",
    "slave-lazy-flush",
    "slave-priority",
    "slave-read-only",
    "slave-serve-stale-data",
    "slaveof",
    "slowlog-log-slower-than",
    "slowlog-max-len",
    "socket-mark-id",
    "stop-writes-on-bgsave-error",
    "stream-node-max-bytes",
    "stream-node-max-entries",
    "supervised",
    "syslog-enabled",
    "syslog-facility",
    "syslog-ident",
    "tcp-backlog",
    "tcp-keepalive",
    "timeout",
    "tls-auth-clients",
    "tls-ca-cert-dir",
    "tls-ca-cert-file",
    "tls-cert-file",
    "tls-ciphers",
    "tls-ciphersuites",
    "tls-client-cert-file",
    "tls-client-key-file",
    "tls-client-key-file-pass",
    "tls-cluster",
    "tls-dh-params-file",
    "tls-key-file",
    "tls-key-file-pass",
    "tls-port",
    "tls-prefer-server-ciphers",
    "tls-protocols",
    "tls-replication",
    "tls-session-cache-size",
    "tls-session-cache-timeout",
    "tls-session-caching",
    "tracking-table-max-keys",
    "unixsocket",
    "unixsocketperm",
    "zset-max-listpack-entries",
    "zset-max-listpack-value",
    "zset-max-ziplist-entries",
    "zset-max-ziplist-value",
};

std::string TempPath() {
  char path[] = "/tmp/rockcache-rewrite-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  return path;
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("every Redis 7.0 parameter is a row, with Redis's default", "[config][redis]") {
  Config config;
  for (const char* name : kRedisNames) {
    INFO(name);
    CHECK(FindOption(name) != nullptr);
  }
  CHECK(config.Get("hash-max-listpack-entries") == "512");
  CHECK(config.Get("hash-max-ziplist-entries") == "512");
  CHECK(config.Get("zset-max-listpack-value") == "64");
  CHECK(config.Get("list-max-listpack-size") == "-2");
  CHECK(config.Get("latency-tracking-info-percentiles") == "50 99 99.9");
  CHECK(config.Get("save").empty());
  CHECK(config.Get("appendonly") == "yes");
  CHECK(config.Get("databases") == "16");
  CHECK(config.Match("*").size() >= sizeof(kRedisNames) / sizeof(kRedisNames[0]));
}

TEST_CASE("a mapped Redis name and its rockcache option are one setting", "[config][redis]") {
  Config config;
  REQUIRE(config.Set("maxmemory", "100mb", true).ok());
  CHECK(config.Get("cache-maxmemory") == "104857600");
  REQUIRE(config.Set("cache-maxmemory", "1kb", true).ok());
  CHECK(config.Get("maxmemory") == "1024");
  REQUIRE(config.Set("maxmemory-policy", "volatile-lfu", true).ok());
  CHECK(config.Get("cache-policy") == "allkeys-lfu");
  CHECK(config.Get("maxmemory-policy") == "allkeys-lfu");
  CHECK_FALSE(config.Set("maxmemory-policy", "noeviction", true).ok());
  CHECK(config.Set("maxmemory-policy", "bogus").message() ==
        "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, "
        "volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction");
  CHECK(config.Get("appendfsync") == "no");
  CHECK(config.Set("appendfsync", "always").ok());  // at start-up: storage-sync is not runtime
  CHECK(config.Get("storage-sync") == "always");
  CHECK(config.Set("appendfsync", "always", true).message() == "can't set immutable config");
  CHECK_FALSE(config.Set("appendfsync", "everysec").ok());
  REQUIRE(config.Set("slave-read-only", "no", true).ok());
  CHECK(config.Get("replica-read-only") == "no");
  std::string seen;
  config.OnChange(
      [&](const std::string& name, const std::string& value) { seen = name + "=" + value; });
  REQUIRE(config.Set("hash-max-ziplist-value", "1kb", true).ok());
  CHECK(seen == "hash-max-listpack-value=1024");
}

TEST_CASE("reported parameters accept only what is true", "[config][redis]") {
  Config config;
  CHECK(config.Set("appendonly", "yes", true).ok());
  auto no = config.Set("appendonly", "no", true);
  CHECK_FALSE(no.ok());
  CHECK(no.message().find("it is always 'yes' in rockcache") == 0);
  CHECK(config.Set("save", "", true).ok());
  CHECK_FALSE(config.Set("save", "3600 1", true).ok());
  CHECK(config.Set("save", "abc", true).message() == "Invalid save parameters");
  CHECK(config.Set("databases", "4").ok());  // at start-up; not at runtime (as Redis)
  CHECK(config.Set("databases", "8", true).message() == "can't set immutable config");
  CHECK_FALSE(config.Set("databases", "0").ok());
  CHECK_FALSE(config.Set("databases", "257").ok());
  CHECK_FALSE(config.Set("slaveof", "127.0.0.1 6380", true).ok());  // REPLICAOF changes it
  CHECK(config.Get("replicaof").empty());
}

TEST_CASE("no-effect parameters validate as Redis and store", "[config][redis]") {
  Config config;
  CHECK(config.Set("hash-max-listpack-entries", "abc", true).message() ==
        "argument couldn't be parsed into an integer");
  CHECK(config.Set("hash-max-listpack-entries", "-1", true).message() ==
        "argument must be between 0 and 9223372036854775807 inclusive");
  CHECK(config.Set("activerehashing", "maybe", true).message() == "argument must be 'yes' or 'no'");
  CHECK(config.Set("zset-max-listpack-value", "abc", true).message() ==
        "argument must be a memory value");
  CHECK(config.Set("daemonize", "no", true).message() == "can't set immutable config");
  REQUIRE(config.Set("list-compress-depth", "3", true).ok());
  CHECK(config.Get("list-compress-depth") == "3");
  CHECK(config.Set("latency-tracking-info-percentiles", "50 101", true).message() ==
        "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
}

TEST_CASE("notify-keyspace-events is kept in Redis's canonical form", "[config][redis]") {
  Config config;
  auto canonical = [&](const char* flags) {
    REQUIRE(config.Set("notify-keyspace-events", flags, true).ok());
    return config.Get("notify-keyspace-events");
  };
  CHECK(canonical("KEA") == "AKE");
  // Redis 7.0 prints "A" for "An" while `n` stays on (and a CONFIG REWRITE then loses it); the
  // server's flags are parsed from this value, so `n` stays in it after "A".
  CHECK(canonical("An") == "An");
  CHECK(canonical("g$lshzxetdmn") == "Anm");
  // CONFIG GET (Match) prints what Redis 7.0 prints: no `n` after "A".
  CHECK(config.Match("notify-keyspace-events").at(0).second == "Am");
  CHECK(canonical("KEn") == "nKE");
  CHECK(config.Match("notify-keyspace-events").at(0).second == "nKE");
  CHECK(canonical("x$") == "$x");
  CHECK(canonical("nK") == "nK");
  CHECK(canonical("") == "");
  CHECK(config.Set("notify-keyspace-events", "Z", true).message() ==
        "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
}

TEST_CASE("SetMany is all or nothing and names the argument", "[config][redis]") {
  Config config;
  auto s = config.SetMany({{"hz", "20"}, {"maxclients", "abc"}});
  CHECK(s.message() ==
        "CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be "
        "parsed into an integer");
  CHECK(config.Get("hz") == "10");
  CHECK(config.SetMany({{"nosuch", "1"}}).message() ==
        "Unknown option or number of arguments for CONFIG SET - 'nosuch'");
  CHECK(config.SetMany({{"hash-max-ziplist-entries", "1"}, {"hash-max-listpack-entries", "2"}})
            .message() ==
        "CONFIG SET failed (possibly related to argument 'hash-max-listpack-entries') - duplicate "
        "parameter");
  CHECK(config.SetMany({{"port", "1"}}).message() ==
        "CONFIG SET failed (possibly related to argument 'port') - can't set immutable config");
  REQUIRE(config.SetMany({{"hz", "20"}, {"maxmemory", "1mb"}}).ok());
  CHECK(config.Get("hz") == "20");
  CHECK(config.Get("cache-maxmemory") == "1048576");
}

TEST_CASE("CONFIG REWRITE keeps comments and order, updates lines, appends the rest",
          "[config][redis]") {
  Config none;
  CHECK(none.Rewrite().message() == "The server is running without a config file");

  std::string path = TempPath();
  Write(path,
        "# my config\n"
        "port 7000\n"
        "\n"
        "maxmemory 1mb\n"
        "hz 10\n"
        "hz 12\n"
        "# end\n");
  Config config;
  REQUIRE(config.LoadFile(path).ok());
  REQUIRE(config
              .SetMany({{"cache-maxmemory", "2mb"},
                        {"timeout", "30"},
                        {"requirepass", "a b"},
                        {"notify-keyspace-events", "KEA"}})
              .ok());
  REQUIRE(config.Rewrite().ok());
  CHECK(Read(path) ==
        "# my config\n"
        "port 7000\n"
        "\n"
        "maxmemory 2097152\n"
        "hz 12\n"
        "# end\n"
        "# Generated by CONFIG REWRITE\n"
        "timeout 30\n"
        "requirepass \"a b\"\n"
        "notify-keyspace-events AKE\n");
  Config reread;
  REQUIRE(reread.LoadFile(path).ok());
  CHECK(reread.Get("requirepass") == "a b");
  CHECK(reread.Get("cache-maxmemory") == "2097152");
  REQUIRE(config.Rewrite().ok());  // idempotent: the marker is not repeated
  std::string twice = Read(path);
  const char* marker = "# Generated by CONFIG REWRITE";
  CHECK(twice.find(marker) == twice.rfind(marker));
  std::remove(path.c_str());
}

}  // namespace redis_options_test
