#!/usr/bin/python3
"""redis-py (Debian's python3-redis) stream consumer-group workers against a server: a producer
adds N jobs while W worker threads loop on xreadgroup(block=...) / xack, one worker "crashes"
with jobs unacknowledged, and a rescuer takes them over with xautoclaim. Every job must be
processed exactly once by a worker that acknowledged it, and the group must end with an empty
PEL. Also checks redis-py's parsing of xinfo_groups / xinfo_consumers / xpending / xclaim.

Usage: redis_py_stream_workers.py PORT     exit 0 = pass; prints one line per check.
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
N, W = 2000, 4
r = redis.Redis(host="127.0.0.1", port=PORT, decode_responses=True)
r.flushall()
failures = []


def check(name, got, want):
    ok = got == want
    print(("ok   " if ok else "FAIL ") + name + ": " + repr(got) + ("" if ok else " want " + repr(want)))
    if not ok:
        failures.append(name)


r.xgroup_create("jobs", "workers", id="$", mkstream=True)
done_lock = threading.Lock()
done = {}  # job number -> worker
errors = []


def worker(name, crash_after=None):
    c = redis.Redis(host="127.0.0.1", port=PORT, decode_responses=True)
    handled = 0
    try:
        while True:
            with done_lock:
                if len(done) >= N:
                    return
            got = c.xreadgroup("workers", name, {"jobs": ">"}, count=10, block=200)
            if not got:
                continue
            for _, entries in got:
                for entry_id, fields in entries:
                    if crash_after is not None and handled >= crash_after:
                        return  # dies holding what it read: those stay pending
                    with done_lock:
                        n = int(fields["n"])
                        if n in done:
                            errors.append("job %d processed twice (%s, %s)" % (n, done[n], name))
                        done[n] = name
                    c.xack("jobs", "workers", entry_id)
                    handled += 1
    except Exception as e:  # noqa: BLE001
        errors.append("%s: %r" % (name, e))


threads = [threading.Thread(target=worker, args=("w%d" % i,)) for i in range(W)]
threads.append(threading.Thread(target=worker, args=("crasher", 5)))
for t in threads:
    t.start()
p = redis.Redis(host="127.0.0.1", port=PORT, decode_responses=True)
for i in range(N):
    p.xadd("jobs", {"n": str(i)})
# The crasher's unacknowledged jobs: a rescuer claims those idle for a second and finishes them
# (a live worker acks what it read within milliseconds, so only a dead one's entries get that old;
# with min idle 0 a slow live worker's entry could be taken from it and run twice).
threads[-1].join()
rescued = 0
cursor = "0-0"
while True:
    with done_lock:
        if len(done) >= N:
            break
    cursor, claimed, deleted = r.xautoclaim("jobs", "workers", "rescuer", 1000, cursor, count=50)
    for entry_id, fields in claimed:
        with done_lock:
            n = int(fields["n"])
            if n in done:
                errors.append("job %d processed twice (rescuer)" % n)
            done[n] = "rescuer"
        r.xack("jobs", "workers", entry_id)
        rescued += 1
    if cursor == "0-0" and not claimed:
        threading.Event().wait(0.05)
for t in threads[:-1]:
    t.join()

check("errors", errors, [])
check("every job processed once", sorted(done) == list(range(N)), True)
check("the crasher's jobs were rescued", rescued >= 1, True)
check("xpending summary", r.xpending("jobs", "workers")["pending"], 0)
groups = r.xinfo_groups("jobs")
check("xinfo_groups pending", groups[0]["pending"], 0)
check("xinfo_groups last-delivered-id", groups[0]["last-delivered-id"], r.xinfo_stream("jobs")["last-generated-id"])
names = sorted(c["name"] for c in r.xinfo_consumers("jobs", "workers"))
check("xinfo_consumers", "crasher" in names and "rescuer" in names, True)
# xclaim / xpending_range parsing.
entry = r.xadd("jobs", {"n": "extra"})
r.xreadgroup("workers", "w0", {"jobs": ">"}, count=1)
rng = r.xpending_range("jobs", "workers", min="-", max="+", count=10)
check("xpending_range", [(e["message_id"], e["consumer"]) for e in rng], [(entry, "w0")])
claimed = r.xclaim("jobs", "workers", "w1", 0, [entry])
check("xclaim", [c[0] for c in claimed], [entry])
check("xack", r.xack("jobs", "workers", entry), 1)

print("FAILED: " + ", ".join(failures) if failures else "all passed")
sys.exit(1 if failures else 0)
