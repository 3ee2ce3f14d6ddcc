#!/usr/bin/python3
"""A durable queue's throughput, rockcache vs redis-server in one run: 50 producers XADD N
entries (redis-benchmark -c 50) while 10 consumer processes of one group loop on
XREADGROUP COUNT 100 BLOCK 100 ... > then one XACK of what they got (python3-redis). Reports,
per server, the producers' XADD rate and the end-to-end rate (entries added, delivered once and
acknowledged, per second, from the first XADD to the last XACK), and checks that the group's
PEL ends empty with every entry delivered exactly once.

redis-server runs with appendonly yes, appendfsync everysec (its durable setting closest to
rockcache's WAL, which rockcache writes for every command).

Usage: scripts/stream-group-bench.py [N] [rockcache-server binary]
(default N 200000, build/rockcache-server). Both servers run on free loopback ports with data
in temporary directories, stopped by pid at the end.
"""
import multiprocessing as mp
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
ROCKCACHE = sys.argv[2] if len(sys.argv) > 2 else "build/rockcache-server"
PRODUCERS, CONSUMERS = 50, 10


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_ready(port):
    for _ in range(200):
        try:
            if redis.Redis(port=port).ping():
                return
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    raise SystemExit("server on %d did not start" % port)


def consumer(port, name, total, counter, seen_dup):
    r = redis.Redis(port=port)
    seen = set()
    while counter.value < total:
        got = r.xreadgroup("g", name, {"q": ">"}, count=100, block=100)
        if not got:
            continue
        ids = [entry_id for entry_id, _ in got[0][1]]
        for i in ids:
            if i in seen:
                seen_dup.value += 1
            seen.add(i)
        r.xack("q", "g", *ids)
        with counter.get_lock():
            counter.value += len(ids)


def run(label, port):
    r = redis.Redis(port=port)
    r.flushall()
    r.xgroup_create("q", "g", id="$", mkstream=True)
    counter = mp.Value("l", 0)
    dup = mp.Value("l", 0)
    procs = [mp.Process(target=consumer, args=(port, "c%d" % i, N, counter, dup))
             for i in range(CONSUMERS)]
    for p in procs:
        p.start()
    time.sleep(0.5)
    start = time.time()
    bench = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-c", str(PRODUCERS), "-n", str(N), "-q",
         "XADD", "q", "*", "field", "value"], capture_output=True, text=True)
    produced = time.time() - start
    for p in procs:
        p.join()
    total = time.time() - start
    pending = r.xpending("q", "g")["pending"]
    length = r.xlen("q")
    line = [l for l in bench.stdout.replace("\r", "\n").split("\n") if "requests per second" in l]
    print("%-12s XADD (50 producers): %8.0f/s   added+delivered+acked: %8.0f/s   "
          "(%d entries, %.1f s; pending after: %d, duplicates: %d, XLEN %d)"
          % (label, N / produced, N / total, N, total, pending, dup.value, length))
    if line:
        print("%-12s redis-benchmark: %s" % (label, line[-1].strip()))
    return N / total


def main():
    tmp = tempfile.mkdtemp(prefix="stream-bench-")
    servers = []
    try:
        rc_port, redis_port = free_port(), free_port()
        servers.append(subprocess.Popen(
            [ROCKCACHE, "--port", str(rc_port), "--bind", "127.0.0.1", "--dir",
             os.path.join(tmp, "rockcache")], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
        servers.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "everysec", "--dir", tmp],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_ready(rc_port)
        wait_ready(redis_port)
        ours = run("rockcache", rc_port)
        theirs = run("redis-server", redis_port)
        print("end-to-end ratio rockcache / redis-server (AOF everysec): %.2f" % (ours / theirs))
    finally:
        for s in servers:
            s.terminate()
            s.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
