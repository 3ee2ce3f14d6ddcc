#!/bin/sh
# Writes the twemproxy pool with the nodes' password (ROCKCACHE_PASSWORD; clients AUTH to the
# proxy with the same one) and the nodes' network (SHARDNET, its first three octets), and execs
# nutcracker as PID 1 (it exits on SIGTERM).
set -e
conf=/tmp/nutcracker.yml
awk '/^  redis_auth:/ {
       v = ENVIRON["ROCKCACHE_PASSWORD"]
       if (v == "") next
       gsub(/[\\"]/, "\\\\&", v)
       print "  redis_auth: \"" v "\""
       next
     }
     /^    - 172\.29\.14\./ && ENVIRON["SHARDNET"] != "" {
       sub(/172\.29\.14\./, ENVIRON["SHARDNET"] ".")
     }
     { print }' /etc/nutcracker/rockcache.yml.in > "$conf"
nutcracker --test-conf --conf-file="$conf"
exec nutcracker --conf-file="$conf" --stats-port=22222 --stats-addr=0.0.0.0 --output=/dev/stderr --verbose=6 "$@"
