"""Sentinel-managed failover of rockcache: one primary, two replicas, three redis-sentinel
processes (Debian's 7.0.15) on loopback ports. redis-py's Sentinel client writes continuously
(SET, then WAIT 1 for some of them); the primary is killed with SIGKILL; checks that a replica is
promoted, the other follows it, the client carries on by itself, every write acknowledged by
WAIT before the kill is on the new primary, and the old primary rejoins as a replica after a
restart. Prints the figures. Exit 0 = pass, 1 = fail, 77 = redis-py or redis-sentinel missing.

usage: sentinel_failover.py <rockcache-server binary>
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import redis
    from redis.sentinel import Sentinel
except ImportError:
    sys.exit(77)
SENTINEL_BIN = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"
if not os.path.exists(SENTINEL_BIN):
    sys.exit(77)

BINARY = sys.argv[1]
DOWN_AFTER_MS = 2000
TMP = tempfile.mkdtemp(prefix="rockcache-sentinel-")
procs = {}
failures = []
writer_stop = [None]  # the writer thread's stop event, once it runs


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


# Ports the test binary reserved for this run (its FreePort: a block no other test process uses),
# comma-separated; without them, ports the kernel picks.
RESERVED_PORTS = [int(p) for p in os.environ.get("ROCKCACHE_TEST_PORTS", "").split(",") if p]


def free_port():
    if RESERVED_PORTS:
        return RESERVED_PORTS.pop(0)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(pred, timeout, step=0.1):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if pred():
                return True
        except Exception:
            pass
        time.sleep(step)
    return False


def client(port):
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, decode_responses=True)


def start_server(name, port, replicaof=None):
    conf = os.path.join(TMP, name + ".conf")
    if not os.path.exists(conf):
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\nmetrics-port 0\n"
                    % (port, os.path.join(TMP, name + "-data")))
            if replicaof:
                f.write("replicaof 127.0.0.1 %d\n" % replicaof)
    log = open(os.path.join(TMP, name + ".log"), "a")
    procs[name] = subprocess.Popen([BINARY, conf], stdout=log, stderr=subprocess.STDOUT)
    if not wait_for(lambda: client(port).ping(), 20):
        raise RuntimeError(name + " did not start")


def start_sentinel(name, port, primary_port):
    conf = os.path.join(TMP, name + ".conf")
    with open(conf, "w") as f:
        f.write("port %d\nbind 127.0.0.1\ndir %s\n" % (port, TMP))
        f.write("sentinel monitor mymaster 127.0.0.1 %d 2\n" % primary_port)
        f.write("sentinel down-after-milliseconds mymaster %d\n" % DOWN_AFTER_MS)
        f.write("sentinel failover-timeout mymaster 20000\n")
        f.write("sentinel parallel-syncs mymaster 1\n")
    log = open(os.path.join(TMP, name + ".log"), "a")
    procs[name] = subprocess.Popen([SENTINEL_BIN, conf], stdout=log, stderr=subprocess.STDOUT)
    if not wait_for(lambda: client(port).ping(), 20):
        raise RuntimeError(name + " did not start")


def info(port):
    return client(port).info("replication")


def main():
    ports = {n: free_port() for n in ("a", "b", "c")}
    start_server("a", ports["a"])
    start_server("b", ports["b"], replicaof=ports["a"])
    start_server("c", ports["c"], replicaof=ports["a"])
    check(wait_for(lambda: info(ports["a"])["connected_slaves"] == 2 and all(
        info(ports[n])["master_link_status"] == "up" for n in ("b", "c")), 30),
        "two replicas online")
    sports = [free_port() for _ in range(3)]
    for i, p in enumerate(sports):
        start_sentinel("sentinel%d" % i, p, ports["a"])
    check(wait_for(lambda: all(
        len(client(p).sentinel_slaves("mymaster")) == 2 and
        len(client(p).sentinel_sentinels("mymaster")) == 2 for p in sports), 30),
        "sentinels see two replicas and each other")

    sentinel = Sentinel([("127.0.0.1", p) for p in sports], socket_timeout=1)
    master = sentinel.master_for("mymaster", socket_timeout=1, decode_responses=True)
    acked, waited, errors = [], [], [0]
    stop = threading.Event()
    killed_at = [None]
    first_after = [None]

    def writer():
        i = 0
        while not stop.is_set():
            i += 1
            try:
                master.set("k%d" % i, str(i))
                acked.append(i)
                if killed_at[0] is not None and first_after[0] is None:
                    first_after[0] = time.time()
                if i % 10 == 0 and master.execute_command("WAIT", 1, 1000) >= 1:
                    waited.append(i)  # this and every earlier write of this client
            except Exception:
                errors[0] += 1
                time.sleep(0.05)

    # A daemon, stopped in `finally` too: a failed check must not leave it writing forever
    # (the interpreter would wait for it at exit, and the test with it).
    t = threading.Thread(target=writer, daemon=True)
    writer_stop[0] = stop
    t.start()
    time.sleep(3)
    last_waited_before = waited[-1] if waited else 0
    acked_before = len(acked)
    os.kill(procs["a"].pid, signal.SIGKILL)
    procs["a"].wait()
    killed_at[0] = time.time()
    old = ("127.0.0.1", ports["a"])
    promoted = wait_for(lambda: sentinel.discover_master("mymaster")[1] != ports["a"], 60, 0.05)
    promotion_s = time.time() - killed_at[0]
    check(promoted, "a replica promoted (%.1f s after the kill, down-after %d ms)"
          % (promotion_s, DOWN_AFTER_MS))
    new_host, new_port = sentinel.discover_master("mymaster")
    check(promotion_s < DOWN_AFTER_MS / 1000 + 15, "promotion within down-after + 15 s")
    other = [n for n in ("b", "c") if ports[n] != new_port][0]
    check(wait_for(lambda: info(ports[other])["master_port"] == new_port and
                   info(ports[other])["master_link_status"] == "up", 60),
          "the other replica follows the new primary")
    check(wait_for(lambda: first_after[0] is not None, 30), "the client writes again by itself")
    time.sleep(1)
    stop.set()
    t.join()
    new = client(new_port)
    missing_waited = [i for i in range(1, last_waited_before + 1)
                      if new.get("k%d" % i) != str(i)]
    lost = [i for i in acked[:acked_before] if new.get("k%d" % i) != str(i)]
    check(not missing_waited, "every write acknowledged with WAIT before the kill is there "
          "(%d writes, %d missing)" % (last_waited_before, len(missing_waited)))
    print("writes acknowledged before the kill: %d; lost without WAIT: %d; client errors: %d"
          % (acked_before, len(lost), errors[0]), flush=True)

    # The old primary comes back and is turned into a replica of the new one.
    start_server("a", ports["a"])
    check(wait_for(lambda: info(ports["a"])["role"] == "slave" and
                   info(ports["a"])["master_port"] == new_port and
                   info(ports["a"])["master_link_status"] == "up", 90),
          "the old primary rejoins as a replica")
    check(wait_for(lambda: client(ports["a"]).get("k1") == "1", 10),
          "the old primary holds the new primary's data")


try:
    main()
except Exception as e:  # noqa: BLE001
    failures.append(repr(e))
    print("FAIL", repr(e), flush=True)
finally:
    if writer_stop[0] is not None:
        writer_stop[0].set()
    for p in procs.values():
        if p.poll() is None:
            p.terminate()
    for p in procs.values():
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
    if failures:
        print("logs kept in", TMP)
    else:
        shutil.rmtree(TMP, ignore_errors=True)
sys.exit(1 if failures else 0)
