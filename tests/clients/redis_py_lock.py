#!/usr/bin/python3
"""redis-py (Debian's python3-redis) scripts against a server: Lock (its acquire, extend,
reacquire and release are Lua scripts) and register_script (EVALSHA, NOSCRIPT, reload).

Usage: redis_py_lock.py PORT     exit 0 = pass; prints one line per check.
Exit 77 when the redis module is missing (the caller skips).
"""
import sys
import threading
import time

try:
    import redis
    from redis.exceptions import LockNotOwnedError
except ImportError:
    print("python3-redis not installed")
    sys.exit(77)

PORT = int(sys.argv[1])
r = redis.Redis(host="127.0.0.1", port=PORT, decode_responses=True)
r.flushall()
failures = []


def check(name, got, want):
    ok = got == want
    print(("ok   " if ok else "FAIL ") + name + ": " + repr(got) + ("" if ok else " want " + repr(want)))
    if not ok:
        failures.append(name)


# One holder at a time; a second acquire times out; extend and release.
lock = r.lock("resource", timeout=5)
check("acquire", lock.acquire(blocking=False), True)
other = r.lock("resource", timeout=5)
check("competing acquire times out", other.acquire(blocking=True, blocking_timeout=0.2), False)
check("extend", lock.extend(5), True)
check("ttl after extend > 5s", r.pttl("resource") > 5000, True)
check("reacquire", lock.reacquire(), True)
lock.release()
check("released", r.exists("resource"), 0)
check("the other acquires now", other.acquire(blocking=False), True)
check("the first no longer owns it", lock.owned(), False)
# A holder whose token was replaced (its lock expired and was taken) cannot release it.
stale = r.lock("resource", timeout=5)
stale.local.token = b"not-the-owner"
try:
    stale.release()
    check("releasing a lock not owned raises", False, True)
except LockNotOwnedError:
    check("releasing a lock not owned raises", True, True)
other.release()

# An expired lock is free again.
short = r.lock("expiring", timeout=0.2)
check("short acquire", short.acquire(blocking=False), True)
time.sleep(0.4)
check("acquire after expiry", r.lock("expiring", timeout=5).acquire(blocking=False), True)

# Competing threads: the lock makes a non-atomic GET/SET increment safe.
r.set("counter", 0)
THREADS, ROUNDS = 8, 25


def worker():
    client = redis.Redis(host="127.0.0.1", port=PORT, decode_responses=True)
    for _ in range(ROUNDS):
        with client.lock("counter-lock", timeout=10, blocking_timeout=30):
            v = int(client.get("counter"))
            client.set("counter", v + 1)


threads = [threading.Thread(target=worker) for _ in range(THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
check("locked increments", r.get("counter"), str(THREADS * ROUNDS))

# register_script: EVALSHA, then EVAL again after SCRIPT FLUSH (NOSCRIPT).
incr = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
check("registered script", incr(keys=["x"], args=[5]), 5)
r.script_flush()
check("after SCRIPT FLUSH", incr(keys=["x"], args=[5]), 10)
check("script_exists", r.script_exists(incr.sha), [True])
with r.pipeline() as p:
    incr(keys=["x"], args=[1], client=p)
    p.get("x")
    check("script in a pipeline", p.execute(), [11, "11"])

sys.exit(1 if failures else 0)
