#!/usr/bin/python3
"""redis-py (Debian's python3-redis) against a server: transactional pipelines and WATCH retries.

Usage: redis_py_transactions.py PORT     exit 0 = pass; prints one line per check.
Exit 77 when the redis module is missing (the caller skips).
"""
import sys
import threading

try:
    import redis
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


# pipeline(transaction=True): MULTI ... EXEC in one round trip.
with r.pipeline(transaction=True) as p:
    p.set("a", "1").incr("a").rpush("l", "x", "y").lrange("l", 0, -1).get("a")
    check("transactional pipeline", p.execute(), [True, 2, 2, ["x", "y"], "2"])

# A runtime error inside EXEC is that command's entry; the others ran.
with r.pipeline(transaction=True) as p:
    p.set("s", "text").incr("s").set("after", "1")
    res = p.execute(raise_on_error=False)
    check("runtime error entry", [type(x).__name__ for x in res], ["bool", "ResponseError", "bool"])
    check("commands after the error ran", r.get("after"), "1")

# A queuing error aborts the whole transaction (EXECABORT).
with r.pipeline(transaction=True) as p:
    p.set("never", "1").execute_command("NOSUCHCOMMAND")
    try:
        p.execute()
        check("queue error aborts", "no error", "ResponseError")
    except redis.exceptions.ResponseError as e:
        check("queue error aborts", "unknown command" in str(e), True)
check("aborted transaction wrote nothing", r.exists("never"), 0)

# WATCH: a write by another client makes execute() raise WatchError.
with r.pipeline(transaction=True) as p:
    p.watch("w")
    p.get("w")
    r.set("w", "other")
    p.multi()
    p.set("w", "mine")
    try:
        p.execute()
        check("WatchError", "executed", "WatchError")
    except redis.exceptions.WatchError:
        check("WatchError", "WatchError", "WatchError")
check("watched key kept the other write", r.get("w"), "other")

# Optimistic increments with retries (Redis.transaction re-runs on WatchError).
THREADS, EACH = 6, 60
retries = [0] * THREADS


def worker(t):
    client = redis.Redis(host="127.0.0.1", port=PORT, decode_responses=True)

    def incr(pipe):
        value = int(pipe.get("counter") or 0)
        pipe.multi()
        pipe.set("counter", value + 1)

    for _ in range(EACH):
        while True:
            try:
                with client.pipeline(transaction=True) as pipe:
                    pipe.watch("counter")
                    incr(pipe)
                    pipe.execute()
                break
            except redis.exceptions.WatchError:
                retries[t] += 1


threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print("watch retries:", sum(retries))
check("optimistic counter", int(r.get("counter")), THREADS * EACH)

# Redis.transaction helper with watches.
def move(pipe):
    n = int(pipe.get("src") or 0)
    pipe.multi()
    pipe.set("src", n - 1)
    pipe.incr("dst")


r.set("src", 10)
for _ in range(5):
    r.transaction(move, "src", "dst")
check("transaction() helper", (r.get("src"), r.get("dst")), ("5", "5"))

sys.exit(1 if failures else 0)
