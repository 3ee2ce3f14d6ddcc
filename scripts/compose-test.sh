#!/usr/bin/env bash
# make compose-test: builds the images and checks each docker compose profile through its
# published ports (docker/docker-compose.yml; README, "Docker"):
#   default     data survives stop/start and SIGKILL during writes; healthy; down keeps the volume
#   monitoring  Prometheus scrapes rockcache; every Grafana panel's PromQL returns data under load
#   sharded     30,000 keys through nutcracker spread over three nodes; a node killed and a node
#               cut off the network: ejected, others answer, re-added; proxy vs single-node speed
#   ha          primary, two replicas, three Redis Sentinels: writes through redis-py's Sentinel
#               client (in the ha-client container, tests/clients/sentinel_compose.py) while the
#               primary is killed (docker kill): a replica promoted within down-after + 15 s, the
#               other follows it, the client carries on by itself, every write acknowledged with
#               WAIT 1 before the kill is on the new primary, the old primary restarted rejoins as
#               a replica; then the same with the new primary cut off the network (docker network
#               disconnect) instead of killed, and reconnected: back as a replica (full sync)
# COMPOSE_TEST_PROFILES="ha" (or any of "default monitoring sharded ha") checks only those, after
# the same image builds; the default is all four.
# Everything it creates (containers, networks, volumes) is removed at the end, also on failure;
# the images stay as the build cache. Host ports: a base (COMPOSE_TEST_PORT_BASE, default the
# first free block of 26300, 26600, ...) + 79 RESP, +21 /metrics, +90 Prometheus, +121 nutcracker,
# +222 nutcracker stats.
set -euo pipefail
cd "$(dirname "$0")/.."

PROJECT="rcct$$"
# The first port block (of 26300, 26600, ...: below the ephemeral range, where the test's own
# client connections would take ports) none of whose ports is in use, so that a run right
# after another (whose port proxies may still hold a port) or another server does not collide.
port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
BASE=${COMPOSE_TEST_PORT_BASE:-}
if [ -z "$BASE" ]; then
  for BASE in 26300 26600 26900 27200 27500; do
    port_free $((BASE + 79)) && port_free $((BASE + 21)) && port_free $((BASE + 90)) &&
      port_free $((BASE + 121)) && port_free $((BASE + 222)) && break
  done
fi
export ROCKCACHE_PORT=$((BASE + 79)) ROCKCACHE_METRICS_PORT=$((BASE + 21))
export PROMETHEUS_PORT=$((BASE + 90)) NUTCRACKER_PORT=$((BASE + 121))
export NUTCRACKER_STATS_PORT=$((BASE + 222))
export ROCKCACHE_PASSWORD="ct-$PROJECT-secret"
# The ha profile's Sentinels: a primary unanswered for 2 s is down (the loopback test's figure).
export SENTINEL_DOWN_AFTER_MS=2000
# A killed container stays down until the test starts it again.
export ROCKCACHE_RESTART=no
PASS=$ROCKCACHE_PASSWORD
# The private networks' /24s: two that no Docker network nor host route overlaps (another
# project, or a run beside this one, may hold the defaults), picked at random among
# 172.29.14-254.0/24 (or 10.213.x.0/24, 192.168.x.0/24 if those are all taken) so that runs
# started together rarely pick the same.
free_subnets() {
  { for n in $(docker network ls -q); do
      docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "$n"
    done
    ip -4 route show 2>/dev/null | awk '$1 ~ /\// {print $1}'
  } | python3 -c '
import ipaddress, random, sys
used = [ipaddress.ip_network(w, strict=False) for w in sys.stdin.read().split() if ":" not in w]
for prefix, first in (("172.29", 14), ("10.213", 0), ("192.168", 100)):
    free = [f"{prefix}.{c}" for c in range(first, 255)
            if not any(ipaddress.ip_network(f"{prefix}.{c}.0/24").overlaps(u) for u in used)]
    if len(free) >= 2:
        sys.exit(print(" ".join(random.sample(free, 2))))
sys.exit("no two free /24s in 172.29/16, 10.213/16, 192.168/16")'
}
SHARDNET="${PROJECT}_shardnet"
HANET="${PROJECT}_hanet"
PROFILES=" ${COMPOSE_TEST_PROFILES:-default monitoring sharded ha} "
want() { [[ "$PROFILES" == *" $1 "* ]]; }
TMP=$(mktemp -d /tmp/rockcache-compose-test.XXXXXX)
T0=$(date +%s)

if docker compose version >/dev/null 2>&1; then COMPOSE=(docker compose); else COMPOSE=(docker-compose); fi
dc() { "${COMPOSE[@]}" -p "$PROJECT" -f docker/docker-compose.yml "$@"; }
ALL_PROFILES=(--profile monitoring --profile sharded --profile ha)
# The interpreter itself, not a version manager's shim (which can take seconds to start).
PY=$(python3 -c 'import sys; print(sys.executable)')
python3() { "$PY" "$@"; }

# up [compose options] [services]: `up -d`, its output shown only when it fails.
up() {
  local args=() svcs=()
  while [ $# -gt 0 ]; do
    case $1 in --profile) args+=("$1" "$2"); shift 2 ;; *) svcs+=("$1"); shift ;; esac
  done
  dc "${args[@]}" up -d "${svcs[@]}" >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log" >&2; fail "docker-compose up failed"; }
}
fail() { echo "compose-test: FAIL: $*" >&2; exit 1; }
note() { echo "    [+$(since "$STEP_START") s] $*"; }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  # (A killed job's wait returns 143: under set -e that must not end the cleanup right here.)
  local pid
  for pid in "${BENCH_PID:-}" "${WRITER_PID:-}"; do
    [ -n "$pid" ] || continue
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ]; then
    echo "--- logs (last 30 lines per service) ---"
    dc "${ALL_PROFILES[@]}" logs --no-color --tail 30 2>/dev/null || true
  fi
  dc "${ALL_PROFILES[@]}" down -v --remove-orphans -t 10 >/dev/null 2>&1 || true
  # Anything compose lost track of (a container disconnected from its network, say).
  docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" | xargs -r docker rm -f >/dev/null
  docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT" | xargs -r docker volume rm >/dev/null
  docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" | xargs -r docker network rm >/dev/null
  rm -rf "$TMP"
  local left
  left=$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT"; docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")
  [ -z "$left" ] && echo "cleanup: containers, networks and volumes of $PROJECT removed" \
    || echo "cleanup: LEFT OVER: $left"
  echo "compose-test: $([ "$rc" -eq 0 ] && echo PASS || echo FAIL) in $(($(date +%s) - T0)) s"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# step NAME FUNCTION: runs it and prints how long it took.
step() {
  local name=$1 start
  shift
  echo "== $name"
  start=$(date +%s.%N)
  STEP_START=$start
  "$@"
  echo "-- $name: $(since "$start") s"
}

since() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

cid() {  # the container of service $1 (docker ps: much faster than docker-compose ps)
  docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" \
    --filter "label=com.docker.compose.service=$1"
}

# Waits for a container's health check (the one thing this test retries), at most $2 s.
wait_healthy() {
  local id status i
  id=$(cid "$1")
  for ((i = 0; i < ${2:-90}; i++)); do
    status=$(docker inspect -f '{{.State.Health.Status}}' "$id" 2>/dev/null || echo gone)
    [ "$status" = healthy ] && return 0
    sleep 1
  done
  fail "$1 not healthy after ${2:-90} s (status $status)"
}

# A small RESP client (pipelined, no dependencies but python3).
cat >"$TMP/resp.py" <<'EOF'
import socket, sys, time

class Conn:
    def __init__(self, port, password):
        # Docker's port proxy has been seen refusing a connection right after a container
        # start although the server answered: a few tries, 0.5 s apart, and say so.
        for attempt in range(10):
            try:
                self.s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
                break
            except ConnectionRefusedError:
                if attempt == 9: raise
                sys.stderr.write("    (port %s refused a connection; retrying)\n" % port)
                time.sleep(0.5)
        self.buf = b""
        if password:
            self.send([["AUTH", password]])
            r = self.reply()
            if r != "OK": raise SystemExit("AUTH failed: %r" % (r,))
    def send(self, cmds):
        out = []
        for c in cmds:
            out.append(b"*%d\r\n" % len(c))
            for a in c:
                a = a.encode() if isinstance(a, str) else a
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))
    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d: raise ConnectionError("closed")
            self.buf += d
        l, self.buf = self.buf.split(b"\r\n", 1)
        return l
    def reply(self):
        l = self.line(); t, v = l[:1], l[1:]
        if t == b"+": return v.decode()
        if t == b"-": return Exception(v.decode())
        if t == b":": return int(v)
        if t == b"$":
            n = int(v)
            if n < 0: return None
            while len(self.buf) < n + 2:
                d = self.s.recv(65536)
                if not d: raise ConnectionError("closed")
                self.buf += d
            r, self.buf = self.buf[:n], self.buf[n + 2:]
            return r.decode()
        if t == b"*": return [self.reply() for _ in range(int(v))]
        raise ValueError("bad reply %r" % l)

def load(port, pw, prefix, n):
    """SET prefix:i i for i < n, pipelined; prints how many were acknowledged."""
    c, ok = Conn(port, pw), 0
    for lo in range(0, n, 500):
        hi = min(n, lo + 500)
        c.send([["SET", "%s:%d" % (prefix, i), str(i)] for i in range(lo, hi)])
        ok += sum(1 for _ in range(lo, hi) if c.reply() == "OK")
    print(ok)

def writer(port, pw, prefix, seconds):
    """SET prefix:i i one at a time until the connection breaks; prints acknowledged count."""
    c, i, end = Conn(port, pw), 0, time.time() + float(seconds)
    try:
        while time.time() < end:
            c.send([["SET", "%s:%d" % (prefix, i), str(i)]])
            if c.reply() != "OK": break
            i += 1
    except (OSError, ConnectionError):
        pass
    print(i)

def check(port, pw, keyfile):
    """GETs every key of keyfile (name:index; value must be index): hit/miss/wrong/error."""
    keys = [k for k in open(keyfile).read().split() if k]
    counts = {"hit": 0, "miss": 0, "wrong": 0, "error": 0}
    for lo in range(0, len(keys), 100):
        batch = keys[lo:lo + 100]
        try:
            c = Conn(port, pw)
            c.send([["GET", k] for k in batch])
            for k in batch:
                r = c.reply()
                if isinstance(r, Exception): counts["error"] += 1
                elif r is None: counts["miss"] += 1
                elif r == k.rsplit(":", 1)[1]: counts["hit"] += 1
                else: counts["wrong"] += 1
            c.s.close()
        except (OSError, ConnectionError, SystemExit):
            counts["error"] += len(batch)
    print(" ".join("%s=%d" % kv for kv in counts.items()))

def keys(prefix, lo, hi):
    print("\n".join("%s:%d" % (prefix, i) for i in range(int(lo), int(hi))))

{"load": lambda a: load(a[0], a[1], a[2], int(a[3])), "writer": lambda a: writer(*a),
 "check": lambda a: check(*a), "keys": lambda a: keys(*a)}[sys.argv[1]](sys.argv[2:])
EOF
resp() { timeout 120 "$PY" "$TMP/resp.py" "$@"; }
# check PORT KEYFILE -> "hit=.. miss=.. wrong=.. error=.."
check() { resp check "$1" "$PASS" "$2"; }
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$2"; }

# --- build ---------------------------------------------------------------------------------
base_images() { scripts/docker-base.sh; }
build_images() {
  # The tags docker-compose.yml names, built with `docker build` (the layer cache keeps repeated
  # runs to seconds; one rockcache image serves every node); nice: the compiler shares the cores.
  local img
  for img in rockcache:Dockerfile rockcache-prometheus:prometheus.Dockerfile \
             rockcache-nutcracker:nutcracker.Dockerfile rockcache-sentinel:sentinel.Dockerfile; do
    nice docker build -q -f "docker/${img#*:}" -t "${img%%:*}:latest" . >/dev/null 2>"$TMP/build.err" \
      || { cat "$TMP/build.err" >&2; fail "docker build of ${img%%:*} failed"; }
  done
  docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^(rockcache|debian)' |
    sed 's/^/    /'
}

# --- default profile -----------------------------------------------------------------------
default_up() {
  up rockcache
  wait_healthy rockcache 60
  note "health: $(docker inspect -f '{{.State.Health.Status}}' "$(cid rockcache)")"
  docker logs "$(cid rockcache)" 2>&1 | grep -E 'starting|ready to accept' | sed 's/^/    log: /'
  [ "$(docker exec "$(cid rockcache)" id -un)" = rockcache ] || fail "server not running as rockcache"
  redis-cli -p "$ROCKCACHE_PORT" ping 2>&1 | grep -q NOAUTH || fail "no password required"
}

default_restart() {
  local n
  n=$(resp load "$ROCKCACHE_PORT" "$PASS" restart 1000)
  [ "$n" = 1000 ] || fail "wrote $n of 1000"
  local id t
  id=$(cid rockcache)
  t=$(date +%s.%N)
  dc stop -t 30 rockcache >/dev/null 2>&1
  note "docker stop took $(since "$t") s, exit code $(docker inspect -f '{{.State.ExitCode}}' "$id")"
  [ "$(docker inspect -f '{{.State.ExitCode}}' "$id")" = 0 ] || fail "SIGTERM did not end the server cleanly"
  docker logs "$id" 2>&1 | grep -E 'received|bye bye' | sed 's/^/    log: /'
  dc start rockcache >/dev/null 2>&1
  wait_healthy rockcache 60
  resp keys restart 0 1000 >"$TMP/restart.keys"
  local r
  r=$(check "$ROCKCACHE_PORT" "$TMP/restart.keys")
  note "after stop/start: $r"
  [ "$(field hit "$r")" = 1000 ] || fail "keys lost across stop/start"
}

default_sigkill() {
  local id acked r
  id=$(cid rockcache)
  resp writer "$ROCKCACHE_PORT" "$PASS" killed 30 >"$TMP/acked" &
  local wpid=$!
  sleep 3
  docker kill -s KILL "$id" >/dev/null
  wait "$wpid" || true
  acked=$(cat "$TMP/acked")
  note "SIGKILL after $acked acknowledged SETs; exit code $(docker inspect -f '{{.State.ExitCode}}' "$id")"
  [ "$acked" -gt 100 ] || fail "write load too small ($acked)"
  dc start rockcache >/dev/null 2>&1
  wait_healthy rockcache 60
  resp keys killed 0 "$acked" >"$TMP/killed.keys"
  r=$(check "$ROCKCACHE_PORT" "$TMP/killed.keys")
  note "after SIGKILL + start: $r (of $acked acknowledged)"
  [ "$(field hit "$r")" = "$acked" ] || fail "acknowledged writes lost after SIGKILL"
}

default_down() {
  dc down >/dev/null 2>&1
  docker volume inspect "${PROJECT}_rockcache-data" >/dev/null || fail "down removed the volume"
  note "after down: volume ${PROJECT}_rockcache-data still there"
  up rockcache
  wait_healthy rockcache 60
  local r
  r=$(check "$ROCKCACHE_PORT" "$TMP/restart.keys")
  note "new container on the same volume: $r"
  [ "$(field hit "$r")" = 1000 ] || fail "data not on the volume"
}

# --- monitoring profile --------------------------------------------------------------------
promql() {  # promql EXPR -> "N series: v1 v2 ..." (values rounded)
  curl -sfG "http://127.0.0.1:$PROMETHEUS_PORT/api/v1/query" --data-urlencode "query=$1" |
    python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
vals = []
for s in r[:6]:
    v = float(s["value"][1]); m = s["metric"]
    lab = ",".join("%s=%s" % kv for kv in m.items() if kv[0] not in ("job", "instance", "__name__"))
    vals.append(("%s:" % lab if lab else "") + ("%.4g" % v))
print("%d series: %s" % (len(r), " ".join(vals)))'
}

monitoring() {
  up --profile monitoring
  wait_healthy rockcache 60
  wait_healthy prometheus 60
  local i up=""
  for ((i = 0; i < 30; i++)); do  # the first scrape (every 5 s)
    up=$(promql 'up{job="rockcache"}')
    [[ "$up" == "1 series: 1" ]] && break
    sleep 1
  done
  note "target up{job=\"rockcache\"}: $up"
  [[ "$up" == "1 series: 1" ]] || fail "Prometheus target not up"
  local before after
  before=$(promql 'sum(rockcache_command_calls_total)')
  # Short rounds (-n 10000) in a loop: every command of the mix runs within any 20 s window.
  redis-benchmark -p "$ROCKCACHE_PORT" -a "$PASS" -l -q -c 20 -n 10000 -r 10000 \
    -t set,get,hset,lpush >/dev/null 2>&1 &
  BENCH_PID=$!
  sleep 20
  after=$(promql 'sum(rockcache_command_calls_total)')
  note "sum(rockcache_command_calls_total): before ${before#*: }, after 20 s of redis-benchmark ${after#*: }"
  python3 -c "import sys; sys.exit(0 if float('${after#*: }') > float('${before#*: }' or 0) else 1)" \
    || fail "rockcache_command_calls_total did not rise"
  note "request rate sum(rate(rockcache_command_calls_total[30s])): $(promql 'sum(rate(rockcache_command_calls_total[30s]))') /s"
  note "by command sum by (cmd) (rate(rockcache_command_calls_total[30s])): $(promql 'sum by (cmd) (rate(rockcache_command_calls_total[30s]))')"
  # Every query of every Grafana panel must return data while the benchmark runs.
  local bad=0 title expr res
  while IFS=$'\t' read -r title expr; do
    res=$(promql "$expr")
    note "panel \"$title\": $expr -> $res"
    if [[ "$res" == "0 series"* ]]; then bad=1; fi
    [[ "$res" == *nan* || "$res" == *NaN* ]] && note "  (NaN: a series with no observations in the window)"
  done < <(python3 -c '
import json
for p in json.load(open("docker/grafana-dashboard.json"))["panels"]:
    for t in p.get("targets", []):
        print("%s\t%s" % (p["title"], t["expr"]))')
  kill "$BENCH_PID"; wait "$BENCH_PID" 2>/dev/null || true; BENCH_PID=""
  [ "$bad" = 0 ] || fail "a dashboard query returned no data"
  dc --profile monitoring stop prometheus >/dev/null 2>&1
}

# --- sharded profile -----------------------------------------------------------------------
nc_stats() {  # nutcracker's JSON stats for one server: ejected_at, errors, requests
  timeout 10 "$PY" -c '
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3); b = b""
while True:
    d = s.recv(65536)
    if not d: break
    b += d
p = json.loads(b)["rockcache"]; n = p[sys.argv[2]]
print("ejected_at=%d server_err=%d server_timedout=%d server_eof=%d requests=%d pool_server_ejects=%d" % (
    n["server_ejected_at"], n["server_err"], n["server_timedout"], n["server_eof"], n["requests"],
    p["server_ejects"]))
' "$NUTCRACKER_STATS_PORT" "$1"
}

sharded_up() {
  up --profile sharded
  for s in node1 node2 node3 nutcracker; do wait_healthy "$s" 90; done
  for s in node1 node2 node3; do
    note "$s at $(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$(cid $s)") on $SHARDNET, volume ${PROJECT}_${s}-data"
  done
}

node_keys() {  # node_keys NODE: the shard:* keys a node holds
  docker exec "$(cid "$1")" redis-cli -a "$PASS" --no-auth-warning --scan --pattern 'shard:*'
}

sharded_distribution() {
  local n total=0 s c pct
  n=$(resp load "$NUTCRACKER_PORT" "$PASS" shard 30000)
  note "30000 SETs through nutcracker: $n acknowledged"
  [ "$n" = 30000 ] || fail "proxy acknowledged $n of 30000"
  for s in node1 node2 node3; do
    node_keys "$s" | sort >"$TMP/$s.keys"
    c=$(wc -l <"$TMP/$s.keys")
    total=$((total + c))
    pct=$((c * 100 / 30000))
    note "$s: $c keys ($(ratio "$((c * 100))" 30000)%)"
    [ "$pct" -ge 20 ] && [ "$pct" -lt 47 ] || fail "$s holds $pct% of the keys"
  done
  [ "$total" = 30000 ] || fail "nodes hold $total keys, not 30000"
  cat "$TMP/node1.keys" "$TMP/node3.keys" >"$TMP/others13.keys"
  cat "$TMP/node1.keys" "$TMP/node2.keys" >"$TMP/others12.keys"
}

# wait_served KEYFILE: until every key of the file is a hit through the proxy (the node is back
# and nutcracker has retried it); at most 60 s.
wait_served() {
  local i r
  for ((i = 0; i < 60; i++)); do
    r=$(check "$NUTCRACKER_PORT" "$1")
    [ "$(field miss "$r")$(field error "$r")$(field wrong "$r")" = 000 ] && { echo "$i"; return 0; }
    sleep 1
  done
  fail "keys of $1 not served again after 60 s ($r)"
}

# lost NODE OTHERS: while NODE is unreachable, its keys fail then miss, the others hit.
lost() {
  local node=$1 others=$2 r i
  head -200 "$TMP/$node.keys" >"$TMP/$node.sample"
  r=$(check "$NUTCRACKER_PORT" "$TMP/$node.sample")
  note "its keys, first requests: $r"
  for ((i = 0; i < 30; i++)); do  # nutcracker ejects after server_failure_limit failures
    [ "$(nc_stats "$node" | sed 's/ejected_at=\([0-9]*\).*/\1/')" != 0 ] && break
    check "$NUTCRACKER_PORT" "$TMP/$node.sample" >/dev/null
    sleep 1
  done
  note "nutcracker stats for $node: $(nc_stats "$node")"
  [ "$(nc_stats "$node" | sed 's/ejected_at=\([0-9]*\).*/\1/')" != 0 ] || fail "$node not ejected"
  r=$(check "$NUTCRACKER_PORT" "$TMP/$node.sample")
  note "its keys, once ejected: $r"
  [ "$(field hit "$r")" = 0 ] || fail "$node's keys still served"
  r=$(check "$NUTCRACKER_PORT" "$TMP/$others.keys")
  note "the other nodes' keys: $r"
  [ "$(field hit "$r")" = "$(wc -l <"$TMP/$others.keys")" ] || fail "other nodes did not answer"
}

sharded_node_loss() {
  docker kill -s KILL "$(cid node2)" >/dev/null
  note "node2 killed (SIGKILL)"
  lost node2 others13
  local t
  t=$(date +%s)
  dc --profile sharded start node2 >/dev/null 2>&1
  wait_healthy node2 60
  note "node2 started again, healthy after $(($(date +%s) - t)) s"
  local w
  w=$(wait_served "$TMP/node2.sample") || exit 1
  note "node2's 200 keys served again through the proxy after $w s more (server_retry_timeout 5 s)"
  r=$(check "$NUTCRACKER_PORT" "$TMP/node2.keys")
  note "all of node2's keys through the proxy: $r"
  note "nutcracker stats for node2 now: $(nc_stats node2)"
}

sharded_partition() {
  local id
  id=$(cid node3)
  docker network disconnect "$SHARDNET" "$id"
  note "node3 disconnected from $SHARDNET (still running: $(docker inspect -f '{{.State.Status}}' "$id"))"
  lost node3 others12
  docker network connect --ip "$ROCKCACHE_SHARDNET.13" "$SHARDNET" "$id"
  local w
  w=$(wait_served "$TMP/node3.sample") || exit 1
  note "node3 reconnected; its keys served again after $w s"
  local r
  r=$(check "$NUTCRACKER_PORT" "$TMP/node3.keys")
  note "all of node3's keys through the proxy: $r"
}

bench() {  # bench PORT -> "SET rps GET rps"; fails on any error reply
  local out
  # redis-benchmark 7 stops at the first error reply (and says so); its CONFIG GET warning is
  # expected through twemproxy, which does not proxy CONFIG.
  out=$(timeout 120 redis-benchmark -p "$1" -a "$PASS" -t set,get -n 100000 -c 50 -r 100000 --csv 2>&1) \
    || { echo "$out" >&2; fail "redis-benchmark failed"; }
  if grep -v '^WARNING' <<<"$out" | grep -qiE 'error|refused'; then
    echo "$out" >&2; fail "redis-benchmark reported errors"
  fi
  awk -F'"' '/^"SET"/ {s=$4} /^"GET"/ {g=$4} END {print s, g}' <<<"$out"
}

sharded_bench() {
  local proxy single
  proxy=$(bench "$NUTCRACKER_PORT")
  single=$(bench "$ROCKCACHE_PORT")
  set -- $proxy $single
  note "redis-benchmark -t set,get -n 100000 -c 50 -r 100000 (requests/s):"
  note "  through nutcracker (3 nodes): SET $1  GET $2"
  note "  single node:                  SET $3  GET $4"
  note "  ratio proxy/single:           SET $(ratio "$1" "$3")  GET $(ratio "$2" "$4")"
}

# --- ha profile ----------------------------------------------------------------------------
# The nodes' fixed addresses on hanet (docker-compose.yml); Sentinel names nodes by address.
HA_NODES=(ha1 ha2 ha3)
ip_of() { echo "$ROCKCACHE_HANET.1${1#ha}"; }
svc_of() { echo "ha${1##*.1}"; }
# hacli COMMAND ARGS: tests/clients/sentinel_compose.py in the ha-client container, on hanet.
hacli() {
  timeout 200 docker exec -i "$(cid ha-client)" python3 - "$@" <tests/clients/sentinel_compose.py
}

ha_up() {
  up --profile ha "${HA_NODES[@]}" sentinel1 sentinel2 sentinel3 ha-client
  local s r
  for s in "${HA_NODES[@]}" sentinel1 sentinel2 sentinel3; do wait_healthy "$s" 90; done
  r=$(hacli ready 60) || fail "ha: $r"
  note "primary $r; three sentinels see both replicas and each other"
  note "sentinel down-after-milliseconds $SENTINEL_DOWN_AFTER_MS, quorum 2"
}

# writer_start NAME: tests/clients/sentinel_compose.py's writer (keys NAME:i) in the background,
# its lines in $TMP/NAME.writer; at least one write acknowledged by WAIT within 3 s.
writer_start() {
  hacli writer "$1" "/tmp/stop-$1" >"$TMP/$1.writer" 2>&1 &
  WRITER_PID=$!
  sleep 3
  local last
  last=$(grep '^progress' "$TMP/$1.writer" | tail -1)
  note "writing through Sentinel's master_for: $last"
  [[ "$last" =~ waited=[1-9] ]] || { cat "$TMP/$1.writer" >&2; fail "no write acknowledged by WAIT"; }
}

# writer_stop NAME T0: tells the writer the kill/cut was at T0 and waits for its checks.
writer_stop() {
  docker exec "$(cid ha-client)" sh -c "echo $2 >/tmp/stop-$1.tmp && mv /tmp/stop-$1.tmp /tmp/stop-$1"
  local rc=0 sum
  wait "$WRITER_PID" || rc=$?
  WRITER_PID=""
  sum=$(grep '^summary' "$TMP/$1.writer" || true)
  note "writer: ${sum#summary }"
  note "writer errors/resumes: $(grep -E '^(error|resumed)' "$TMP/$1.writer" | awk -v t0="$2" '
    $1 == "error" { printf "error at +%.1f s (%s); ", $2 - t0, substr($0, index($0, $3)) }
    $1 == "resumed" { printf "resumed at +%.1f s; ", $3 - t0 }')"
  [ "$rc" = 0 ] || { cat "$TMP/$1.writer" >&2; fail "writes acknowledged with WAIT missing (or none)"; }
}

# wait_resumed NAME T0: a write acknowledged after T0 (the client reconnected by itself), 30 s.
wait_resumed() {
  local i r
  for ((i = 0; i < 300; i++)); do
    r=$(awk -v t0="$2" '$1 == "resumed" && $3 > t0 { printf "%.1f", $3 - t0; exit }' "$TMP/$1.writer")
    [ -n "$r" ] && { echo "$r"; return 0; }
    sleep 0.1
  done
  cat "$TMP/$1.writer" >&2
  fail "the client did not write again within 30 s"
}

# promoted OLD_IP T0: waits for the sentinels to name another primary; sets NEW and OTHER (the
# remaining replica), checks the other one follows it and the client carries on.
promoted() {
  local r secs limit s
  r=$(hacli wait-promoted "$1" "$2" 60) || fail "no replica promoted: $r"
  NEW=${r% *} secs=${r#* }
  limit=$((SENTINEL_DOWN_AFTER_MS / 1000 + 15))
  note "$(svc_of "$NEW") ($NEW) promoted ${secs} s after (limit: down-after + 15 s = $limit s)"
  awk -v s="$secs" -v l="$limit" 'BEGIN { exit !(s < l) }' || fail "promotion took $secs s"
  OTHER=""
  for s in "${HA_NODES[@]}"; do
    [ "$(ip_of "$s")" != "$1" ] && [ "$(ip_of "$s")" != "$NEW" ] && OTHER=$(ip_of "$s")
  done
  r=$(hacli wait-replica "$OTHER" "$NEW" 60) || fail "the other replica: $r"
  note "$(svc_of "$OTHER") ($OTHER) replicates from $(svc_of "$NEW") $r s later"
}

ha_kill() {
  local t0 r
  OLD=$(hacli master) || fail "no primary named by the sentinels: $OLD"
  writer_start failover
  t0=$(date +%s.%N)
  docker kill -s KILL "$(cid "$(svc_of "$OLD")")" >/dev/null
  note "$(svc_of "$OLD") ($OLD), the primary, killed (SIGKILL)"
  promoted "$OLD" "$t0"
  r=$(wait_resumed failover "$t0") || exit 1
  note "the client wrote again by itself $r s after the kill"
  sleep 1
  writer_stop failover "$t0"
}

ha_rejoin() {
  local svc r t
  svc=$(svc_of "$OLD")
  t=$(date +%s)
  dc --profile ha start "$svc" >/dev/null 2>&1
  wait_healthy "$svc" 60
  r=$(hacli wait-replica "$OLD" "$NEW" 90) || fail "old primary: $r"
  note "$svc started again: a replica of $(svc_of "$NEW") after $(($(date +%s) - t)) s"
  r=$(hacli get "$OLD" failover:1)
  [ "$r" = 1 ] || fail "the old primary does not hold the new primary's data (failover:1 = $r)"
  r=$(hacli ready 60) || fail "ha: $r"
  note "primary $r"
}

ha_partition() {
  local t0 r id cut before after
  cut=$(hacli master) || fail "no primary named by the sentinels: $cut"
  id=$(cid "$(svc_of "$cut")")
  writer_start partition
  t0=$(date +%s.%N)
  docker network disconnect "$HANET" "$id"
  note "$(svc_of "$cut") ($cut), the primary, disconnected from $HANET (still running: $(docker inspect -f '{{.State.Status}}' "$id"))"
  promoted "$cut" "$t0"
  r=$(wait_resumed partition "$t0") || exit 1
  note "the client wrote again by itself $r s after the cut"
  note "$(svc_of "$cut") meanwhile, on its own: $(docker exec "$id" redis-cli -a "$PASS" --no-auth-warning role | head -1) (its clients are cut off too)"
  sleep 1
  writer_stop partition "$t0"
  before=$(hacli syncs "$NEW")
  t0=$(date +%s)
  docker network connect --ip "$cut" "$HANET" "$id"
  r=$(hacli wait-replica "$cut" "$NEW" 90) || fail "the cut primary: $r"
  after=$(hacli syncs "$NEW")
  note "$(svc_of "$cut") reconnected: a replica of $(svc_of "$NEW") after $(($(date +%s) - t0)) s (syncs served by $(svc_of "$NEW"): $before -> $after)"
  r=$(hacli get "$cut" partition:1)
  [ "$r" = 1 ] || fail "the reconnected node does not hold the new primary's data (partition:1 = $r)"
  r=$(hacli ready 60) || fail "ha: $r"
  note "primary $r"
}

command -v docker >/dev/null || fail "docker is needed"
missing=()
command -v redis-benchmark >/dev/null || missing+=(redis-tools)
command -v python3 >/dev/null || missing+=(python3)
command -v curl >/dev/null || missing+=(curl)
[ "${#missing[@]}" -eq 0 ] || ./scripts/install-deps.sh "${missing[@]}"
nets=$(free_subnets) || fail "no free /24 for the private networks"
read -r ROCKCACHE_SHARDNET ROCKCACHE_HANET <<<"$nets"
export ROCKCACHE_SHARDNET ROCKCACHE_HANET
echo "compose-test: project $PROJECT, compose: ${COMPOSE[*]}, ports $ROCKCACHE_PORT (rockcache)," \
  "$ROCKCACHE_METRICS_PORT (metrics), $PROMETHEUS_PORT (prometheus), $NUTCRACKER_PORT (nutcracker)," \
  "networks $ROCKCACHE_SHARDNET.0/24 (sharded), $ROCKCACHE_HANET.0/24 (ha)"
dc "${ALL_PROFILES[@]}" config -q || fail "docker/docker-compose.yml does not parse"
step "base images (debian:12, debian:12-slim)" base_images
step "build images" build_images
if want default; then
  step "default: up, healthy" default_up
  step "default: stop/start keeps data" default_restart
  step "default: SIGKILL during writes" default_sigkill
  step "default: down keeps the volume" default_down
fi
want monitoring && step "monitoring: Prometheus and the dashboard queries" monitoring
if want sharded; then
  step "sharded: up" sharded_up
  step "sharded: 30000 keys over three nodes" sharded_distribution
  step "sharded: node killed and restarted" sharded_node_loss
  step "sharded: node cut off the network and reconnected" sharded_partition
  step "sharded: redis-benchmark through the proxy vs one node" sharded_bench
fi
if want ha; then
  step "ha: primary, two replicas, three sentinels up" ha_up
  step "ha: primary killed under Sentinel-client writes" ha_kill
  step "ha: old primary restarted rejoins as a replica" ha_rejoin
  step "ha: primary cut off the network, then reconnected" ha_partition
fi
