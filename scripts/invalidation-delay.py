#!/usr/bin/python3
"""Invalidation delay of client-side caching (CLIENT TRACKING), beside redis-server.

For each server on the command line (host:port), a RESP3 tracking client reads a key, another
connection writes it, and the delay from the write's acknowledgement to the invalidation's
arrival at the tracking client is recorded; repeated ROUNDS times while `redis-benchmark -t set
-c 50` loads the server (unless LOAD=0). Prints p50 / p99 / max per server.

Usage: scripts/invalidation-delay.py 127.0.0.1:7001 127.0.0.1:7002   (ROUNDS=2000 LOAD=1)
"""
import os
import socket
import subprocess
import sys
import time


def encode(*parts):
    out = b"*%d\r\n" % len(parts)
    for p in parts:
        p = p.encode() if isinstance(p, str) else p
        out += b"$%d\r\n%s\r\n" % (len(p), p)
    return out


class Conn:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, *parts):
        self.sock.sendall(encode(*parts))

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def frame(self):
        """The next whole frame as (type byte, payload)."""
        line = self._line()
        kind = line[:1]
        if kind in (b"+", b"-", b":", b"_", b",", b"#"):
            return kind, line[1:]
        n = int(line[1:])
        if kind in (b"$", b"="):
            if n < 0:
                return kind, None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(65536)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return kind, data
        count = n * 2 if kind == b"%" else n
        return kind, [self.frame() for _ in range(max(count, 0))]

    def call(self, *parts):
        self.send(*parts)
        while True:
            kind, payload = self.frame()
            if kind != b">":
                return kind, payload


def measure(host, port, rounds):
    tracker = Conn(host, port)
    tracker.call("HELLO", "3")
    tracker.call("CLIENT", "TRACKING", "ON")
    writer = Conn(host, port)
    delays = []
    for i in range(rounds):
        key = "inv:%d" % (i % 100)
        tracker.call("GET", key)
        writer.send("SET", key, str(i))
        writer.frame()
        acked = time.perf_counter()
        while True:
            kind, payload = tracker.frame()
            if kind == b">":
                break
        delays.append((time.perf_counter() - acked) * 1000.0)
    delays.sort()
    return delays


def main():
    rounds = int(os.environ.get("ROUNDS", "2000"))
    load = os.environ.get("LOAD", "1") != "0"
    for target in sys.argv[1:]:
        host, port = target.rsplit(":", 1)
        bench = None
        if load:
            bench = subprocess.Popen(
                ["redis-benchmark", "-h", host, "-p", port, "-t", "set", "-c", "50",
                 "-n", "100000000", "-r", "1000000", "-q"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        try:
            d = measure(host, int(port), rounds)
        finally:
            if bench is not None:
                bench.terminate()
                bench.wait()
        print("%s: invalidation delay after the write's ack, %d rounds%s: p50 %.3f ms, "
              "p99 %.3f ms, max %.3f ms" % (target, rounds, " under SET load" if load else "",
                                             d[len(d) // 2], d[int(len(d) * 0.99)], d[-1]))


if __name__ == "__main__":
    main()
