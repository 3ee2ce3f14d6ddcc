#!/bin/sh
# Container entrypoint: the packaged config, listening on all interfaces (Docker publishes the
# ports), data in /data, and requirepass from ROCKCACHE_PASSWORD when set, masterauth too (the
# password a replica gives its primary: the nodes of a deployment share it; compose's ha profile).
# Extra arguments are more options (`docker run rockcache --cache-maxmemory 2gb`, `--replicaof
# <ip> <port>`). exec: the server becomes PID 1.
set -e
case "${1:-}" in
  --version | -v | --help | -h) exec rockcache-server "$@" ;;
esac
if [ -n "${ROCKCACHE_PASSWORD:-}" ]; then
  exec rockcache-server /etc/rockcache/rockcache.conf --bind 0.0.0.0 --dir /data \
    --requirepass "$ROCKCACHE_PASSWORD" --masterauth "$ROCKCACHE_PASSWORD" "$@"
fi
exec rockcache-server /etc/rockcache/rockcache.conf --bind 0.0.0.0 --dir /data "$@"
