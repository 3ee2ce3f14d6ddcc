"""Debian's python3-redis against rockcache: pubsub() subscribe/get_message and psubscribe.
Run by tests/integration/pubsub_test.cc as: /usr/bin/python3 pubsub_client.py <port>
Prints OK and exits 0 when every check holds."""
import sys
import time

import redis

port = int(sys.argv[1])
r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
p = r.pubsub()


def get(timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = p.get_message(timeout=1.0)
        if m is not None:
            return m
    raise AssertionError("no message within %s s" % timeout)


p.subscribe("jobs")
m = get()
assert m["type"] == "subscribe" and m["channel"] == "jobs" and m["data"] == 1, m
p.psubscribe("events.*")
m = get()
assert m["type"] == "psubscribe" and m["channel"] == "events.*" and m["data"] == 2, m

assert r.publish("jobs", "job-1") == 1
m = get()
assert m == {"type": "message", "pattern": None, "channel": "jobs", "data": "job-1"}, m
assert r.publish("events.login", "alice") == 1
m = get()
assert m == {"type": "pmessage", "pattern": "events.*", "channel": "events.login",
             "data": "alice"}, m

assert r.pubsub_numsub("jobs") == [("jobs", 1)], r.pubsub_numsub("jobs")
assert r.pubsub_numpat() == 1
assert r.pubsub_channels() == ["jobs"], r.pubsub_channels()

# Keyspace notifications as frameworks use them (Spring Session: expired events).
r.config_set("notify-keyspace-events", "Ex")
assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "xE"}
p.subscribe("__keyevent@0__:expired")
m = get()
assert m["type"] == "subscribe", m
r.set("session:1", "data", px=50)
m = get(timeout=20)
assert m["type"] == "message" and m["channel"] == "__keyevent@0__:expired", m
assert m["data"] == "session:1", m

p.unsubscribe()
p.punsubscribe()
seen = set()
for _ in range(3):
    m = get()
    seen.add((m["type"], m["channel"]))
assert ("unsubscribe", "jobs") in seen and ("punsubscribe", "events.*") in seen, seen
p.close()
assert r.publish("jobs", "nobody") == 0
print("OK")
