#!/usr/bin/python3
"""Replication figures: full sync time of a loaded primary, the primary's SET throughput with one
replica vs none, and replication lag (offsets and milliseconds) under a SET load.

usage: scripts/replication-bench.py [--keys N] [--value-size B] [--compression C]
       [--replica-events KEA] [--redis]
Runs build/rockcache-server (two processes on loopback ports, data under a temporary directory)
and redis-benchmark. With --redis the same figures of redis-server (appendonly yes, appendfsync
everysec, as the peer with rockcache's crash guarantee), the reference for the ratios. Needs
Debian's python3-redis (/usr/bin/python3).
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time

import redis

ap = argparse.ArgumentParser()
ap.add_argument("--binary", default="build/rockcache-server")
ap.add_argument("--keys", type=int, default=2500000)
ap.add_argument("--value-size", type=int, default=400)
ap.add_argument("--compression", default="none")
ap.add_argument("--set-requests", type=int, default=300000)
ap.add_argument("--rounds", type=int, default=3,
                help="SET runs without and with the replica, alternated by REPLICAOF NO ONE")
ap.add_argument("--replica-events", default="",
                help="the replica's notify-keyspace-events (e.g. KEA): the primary then ships "
                     "those events in its WAL records")
ap.add_argument("--redis", action="store_true",
                help="measure redis-server (AOF everysec) instead of --binary")
args = ap.parse_args()
TMP = tempfile.mkdtemp(prefix="rockcache-repl-bench-")
procs = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(name, port, extra=()):
    log = open(os.path.join(TMP, name + ".log"), "a")
    if args.redis:
        os.makedirs(os.path.join(TMP, name), exist_ok=True)
        cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir",
               os.path.join(TMP, name), "--save", "", "--appendonly", "yes", "--appendfsync",
               "everysec"]
    else:
        cmd = [args.binary, "--port", str(port), "--bind", "127.0.0.1", "--dir",
               os.path.join(TMP, name), "--metrics-port", "0", "--rocksdb-compression",
               args.compression]
    p = subprocess.Popen([*cmd, *extra], stdout=log, stderr=subprocess.STDOUT)
    procs.append(p)
    c = redis.Redis(port=port, decode_responses=True)
    for _ in range(200):
        try:
            c.ping()
            return p, c
        except Exception:
            time.sleep(0.1)
    raise RuntimeError(name + " did not start")


def bench(port, extra):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-q", *extra],
                         capture_output=True, text=True).stdout
    m = re.findall(r"([0-9.]+) requests per second", out)
    return float(m[-1]) if m else 0.0


def set_bench(port):
    return bench(port, ["-t", "set", "-c", "50", "-r", "1000000", "-n", str(args.set_requests)])


def rss_peak_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0


def caught_up(p, r):
    ri, pi = r.info("replication"), p.info("replication")
    return ri.get("master_link_status") == "up" and \
        ri.get("slave_repl_offset") == pi.get("master_repl_offset")


try:
    pport, rport = free_port(), free_port()
    pproc, p = start("primary", pport)
    print("loading %d keys x %d B..." % (args.keys, args.value_size), flush=True)
    t0 = time.time()
    bench(pport, ["-t", "set", "-n", str(args.keys), "-r", "1000000000", "-d",
                  str(args.value_size), "-c", "50", "-P", "32"])
    print("loaded %d keys in %.1f s" % (p.dbsize(), time.time() - t0), flush=True)
    base = set_bench(pport)
    print("primary SET, no replica: %.0f req/s" % base, flush=True)

    # Full sync, with a SET load on the primary meanwhile.
    t0 = time.time()
    rproc, r = start("replica", rport, ["--replicaof", "127.0.0.1 %d" % pport,
                                        "--notify-keyspace-events", args.replica_events])
    during = [0.0]
    loader = threading.Thread(target=lambda: during.__setitem__(0, set_bench(pport)))
    loader.start()
    while not caught_up(p, r):
        time.sleep(0.05)
    sync_s = time.time() - t0
    loader.join()
    du = subprocess.run(["du", "-sm", os.path.join(TMP, "primary")], capture_output=True,
                        text=True).stdout.split()[0]
    print("full sync of %s MB on disk (%d keys): %.1f s; replica RSS peak %.0f MB"
          % (du, r.dbsize(), sync_s, rss_peak_mb(rproc.pid)), flush=True)
    print("primary SET during the full sync: %.0f req/s (%.2fx of no replica)"
          % (during[0], during[0] / base if base else 0), flush=True)

    # Throughput with the replica attached, and lag meanwhile.
    lag_offsets, lag_ms = [], []
    stop = threading.Event()

    def sample():
        probe = 0
        while not stop.is_set():
            pi, ri = p.info("replication"), r.info("replication")
            lag_offsets.append(int(pi["master_repl_offset"]) - int(ri["slave_repl_offset"]))
            probe += 1
            t = time.time()
            p.set("lag-probe", probe)
            while r.get("lag-probe") != str(probe) and time.time() - t < 10:
                time.sleep(0.0005)
            lag_ms.append((time.time() - t) * 1000)
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    with_replica = set_bench(pport)
    stop.set()
    sampler.join()
    print("primary SET, one replica: %.0f req/s (%.2fx of no replica)"
          % (with_replica, with_replica / base if base else 0), flush=True)

    def pct(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0

    # Alternate: detach (REPLICAOF NO ONE), SET run, attach again (a full sync), SET run.
    alone, attached = [base], [with_replica]
    for _ in range(args.rounds - 1):
        r.replicaof("NO", "ONE")
        time.sleep(1)
        alone.append(set_bench(pport))
        r.replicaof("127.0.0.1", pport)
        while not caught_up(p, r):
            time.sleep(0.05)
        attached.append(set_bench(pport))
    print("SET req/s without a replica %s, with one %s: medians %.0f vs %.0f (%.2fx)"
          % ([round(x) for x in alone], [round(x) for x in attached], statistics.median(alone),
             statistics.median(attached), statistics.median(attached) / statistics.median(alone)),
          flush=True)
    print("lag under the SET load (%d samples): offsets p50 %d p99 %d; ms p50 %.1f p99 %.1f"
          % (len(lag_ms), pct(lag_offsets, 0.5), pct(lag_offsets, 0.99), pct(lag_ms, 0.5),
             pct(lag_ms, 0.99)), flush=True)
finally:
    for pr in procs:
        pr.terminate()
    for pr in procs:
        try:
            pr.wait(60)
        except subprocess.TimeoutExpired:
            pr.kill()
    shutil.rmtree(TMP, ignore_errors=True)
