#!/bin/sh
# Redis Sentinel for the compose `ha` profile. Sentinel rewrites its config file (the replicas
# and other sentinels it found, each failover's new primary and epoch), so the file lives in the
# container's own writable /sentinel and is written from the environment only on the first start:
# a restarted sentinel keeps what it learned.
#   SENTINEL_MASTER        "<ip> <port>" of the first primary (Sentinel follows it from there)
#   SENTINEL_QUORUM        sentinels that must agree a primary is down (default 2 of 3)
#   SENTINEL_DOWN_AFTER_MS unanswered for this long = down (default 5000)
#   SENTINEL_FAILOVER_TIMEOUT_MS  (default 20000)
#   ROCKCACHE_PASSWORD     the nodes' requirepass (auth-pass), also this sentinel's own
#                          requirepass and the one it gives other sentinels (sentinel-pass)
# Extra arguments go to redis-sentinel. exec: it becomes PID 1 and exits on SIGTERM.
set -e
conf=/sentinel/sentinel.conf
quote() { printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')"; }
if [ ! -s "$conf" ]; then
  : "${SENTINEL_MASTER:?set SENTINEL_MASTER to \"<ip> <port>\" of the primary}"
  {
    echo "port 26379"
    echo "protected-mode no"
    echo "dir /sentinel"
    echo "sentinel monitor mymaster $SENTINEL_MASTER ${SENTINEL_QUORUM:-2}"
    echo "sentinel down-after-milliseconds mymaster ${SENTINEL_DOWN_AFTER_MS:-5000}"
    echo "sentinel failover-timeout mymaster ${SENTINEL_FAILOVER_TIMEOUT_MS:-20000}"
    echo "sentinel parallel-syncs mymaster 1"
    if [ -n "${ROCKCACHE_PASSWORD:-}" ]; then
      echo "sentinel auth-pass mymaster $(quote "$ROCKCACHE_PASSWORD")"
      echo "requirepass $(quote "$ROCKCACHE_PASSWORD")"
      echo "sentinel sentinel-pass $(quote "$ROCKCACHE_PASSWORD")"
    fi
  } >"$conf.tmp"
  mv "$conf.tmp" "$conf"
fi
exec redis-sentinel "$conf" "$@"
