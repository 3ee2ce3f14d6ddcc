"""redis-py (Debian's python3-redis) blocking pops against a running server.

Usage: /usr/bin/python3 blocking_blpop.py PORT   -> prints "OK" or fails with a traceback.
Run by the [blocking][python] integration test.
"""
import sys
import threading
import time

import redis

port = int(sys.argv[1])
r = redis.Redis(host="127.0.0.1", port=port)
w = redis.Redis(host="127.0.0.1", port=port)


def wait_blocked(n):
    deadline = time.time() + 20
    while int(r.info("clients")["blocked_clients"]) != n:
        assert time.time() < deadline, "never saw %d blocked clients" % n
        time.sleep(0.005)


# Data already there: answered at once.
r.rpush("py:q", "a", "b")
assert w.blpop(["py:q"], timeout=1) == (b"py:q", b"a")
assert w.brpop("py:q", timeout=0) == (b"py:q", b"b")
# Nothing there: a fractional timeout returns None.
assert w.blpop(["py:q", "py:other"], timeout=0.05) is None

# A worker blocked in blpop (timeout 0 = forever) is served by a push from another client.
got = {}


def worker():
    got["job"] = w.blpop(["py:jobs"], timeout=0)


t = threading.Thread(target=worker)
t.start()
wait_blocked(1)
assert r.lpush("py:jobs", "job-1") == 1
t.join(20)
assert not t.is_alive()
assert got["job"] == (b"py:jobs", b"job-1"), got
assert r.llen("py:jobs") == 0

# The RQ/Sidekiq pattern: move a job to a processing list atomically.
r.rpush("py:pending", "j2")
assert w.blmove("py:pending", "py:processing", 1, "RIGHT", "LEFT") == b"j2"
assert w.brpoplpush("py:pending", "py:processing", timeout=0.05) is None
assert r.lrange("py:processing", 0, -1) == [b"j2"]

# Sorted sets.
r.zadd("py:z", {"low": 1, "high": 9})
assert w.bzpopmin("py:z", timeout=1) == (b"py:z", b"low", 1.0)
assert w.bzpopmax(["py:z"], timeout=1) == (b"py:z", b"high", 9.0)
print("OK")
