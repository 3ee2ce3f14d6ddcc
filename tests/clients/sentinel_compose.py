"""The Sentinel client of scripts/compose-test.sh's ha checks (docker compose profile `ha`). It
runs inside the ha-client container, on the compose network, where the addresses Sentinel hands
out are reachable: `docker exec -i <ha-client> python3 - <command> ... < this file`. The test
script does the docker side (kill, network disconnect, start); this file talks to the sentinels
(HA_SENTINELS, "ip:port,...") and nodes (password ROCKCACHE_PASSWORD) with redis-py's Sentinel
client, as tests/clients/sentinel_failover.py does on loopback. Exit 0 = ok, 1 = failed check.

  ready TIMEOUT                 primary with two replicas online; each sentinel sees both
                                replicas and the two other sentinels. Prints the primary.
  master                        the primary's address according to the sentinels
  writer PREFIX STOPFILE        writes PREFIX:i = i through Sentinel's master_for, WAIT 1 1000 after
                                every 10th; prints progress every second, `error` when writes start
                                failing, `resumed` when they succeed again. Stops once STOPFILE
                                exists; it holds the time (epoch s) of the kill or cut: then checks
                                that every write acknowledged by WAIT before it is on the primary
                                Sentinel names now, and prints a `summary` line.
  wait-promoted OLD T0 TIMEOUT  until the sentinels name a primary other than OLD; prints it and
                                the seconds since T0 (epoch s)
  wait-replica IP MASTER TIMEOUT  until IP is a replica of MASTER with its link up
  role IP                       role, master_host, master_link_status of IP
  syncs IP                      full and partial syncs IP served as a primary
  get IP KEY                    GET on that node
"""
import os
import sys
import time

import redis
from redis.sentinel import Sentinel

PASSWORD = os.environ.get("ROCKCACHE_PASSWORD") or None
SENTINELS = [(h, int(p)) for h, p in
             (a.rsplit(":", 1) for a in os.environ["HA_SENTINELS"].split(",") if a)]
NAME = "mymaster"


def sentinel():
    return Sentinel(SENTINELS, socket_timeout=1, password=PASSWORD,
                    sentinel_kwargs={"password": PASSWORD, "socket_timeout": 1})


def node(ip, port=6379):
    return redis.Redis(host=ip, port=int(port), password=PASSWORD, socket_timeout=2,
                       socket_connect_timeout=2, decode_responses=True)


def sentinel_conn(addr):
    return redis.Redis(host=addr[0], port=addr[1], password=PASSWORD, socket_timeout=2,
                       decode_responses=True)


def wait_for(pred, timeout, step=0.1):
    end = time.time() + float(timeout)
    while time.time() < end:
        try:
            if pred():
                return True
        except Exception:  # noqa: BLE001
            pass
        time.sleep(step)
    return False


def out(*a):
    print(*a, flush=True)


def ready(timeout):
    s = sentinel()

    def ok():
        host, port = s.discover_master(NAME)
        info = node(host, port).info("replication")
        if info["role"] != "master" or info["connected_slaves"] != 2:
            return False
        for i in range(2):
            if info["slave%d" % i]["state"] != "online":
                return False
        for a in SENTINELS:
            c = sentinel_conn(a)
            if c.sentinel_master(NAME)["ip"] != host or len(c.sentinel_sentinels(NAME)) != 2:
                return False
            replicas = c.sentinel_slaves(NAME)
            if len(replicas) != 2 or any(
                    r["is_sdown"] or r["is_disconnected"] or r.get("master-link-status") != "ok"
                    for r in replicas):
                return False
        return True

    if not wait_for(ok, timeout, 0.5):
        out("not ready after %s s" % timeout)
        return 1
    host, port = s.discover_master(NAME)
    info = node(host, port).info("replication")
    out("%s replicas %s" % (host, " ".join(
        "%s(%s)" % (info["slave%d" % i]["ip"], info["slave%d" % i]["state"]) for i in range(2))))
    return 0


def master():
    out(sentinel().discover_master(NAME)[0])
    return 0


def writer(prefix, stopfile):
    s = sentinel()
    # A socket timeout above WAIT's 1000 ms: a WAIT that times out (no replica yet) is an answer.
    m = s.master_for(NAME, socket_timeout=2, decode_responses=True)
    acked, waited, error_times = [], [], []  # (i, time acknowledged); times of failed writes
    errors, failing, i = 0, False, 0
    event = None
    next_progress = time.time() + 1
    while True:
        if i % 10 == 0 and os.path.exists(stopfile):
            try:
                event = float(open(stopfile).read().strip())
                break
            except ValueError:
                pass
        i += 1
        try:
            m.set("%s:%d" % (prefix, i), str(i))
            acked.append((i, time.time()))
            if failing:
                failing = False
                out("resumed %d %.3f" % (i, time.time()))
            if i % 10 == 0 and m.execute_command("WAIT", 1, 1000) >= 1:
                waited.append((i, time.time()))  # this and every earlier write of this client
        except Exception as e:  # noqa: BLE001
            errors += 1
            error_times.append(time.time())
            if not failing:
                failing = True
                out("error %.3f %s" % (time.time(), str(e).replace("\n", " ")[:80]))
            time.sleep(0.05)
        if time.time() >= next_progress:
            next_progress += 1
            out("progress acked=%d waited=%d %.3f" % (len(acked), waited[-1][0] if waited else 0,
                                                       time.time()))
    waited_before = max([w for w, t in waited if t < event] or [0])
    acked_before = [a for a, t in acked if t < event]
    # The first write acknowledged after the first one that failed after the event.
    first_error = min([t for t in error_times if t > event] or [event])
    first_after = min([t for a, t in acked if t > first_error] or [0])
    host, port = s.discover_master(NAME)
    c = node(host, port)
    values = {}
    keys = ["%s:%d" % (prefix, k) for k in range(1, i + 1)]
    for lo in range(0, len(keys), 1000):
        batch = keys[lo:lo + 1000]
        values.update(zip(batch, c.mget(batch)))
    missing_waited = sum(1 for k in range(1, waited_before + 1)
                         if values["%s:%d" % (prefix, k)] != str(k))
    lost = sum(1 for k in acked_before if values["%s:%d" % (prefix, k)] != str(k))
    out("summary primary=%s acked=%d acked_before=%d waited_before=%d missing_waited=%d "
        "lost_unwaited=%d errors=%d writing_again_after=%.1f" % (
            host, len(acked), len(acked_before), waited_before, missing_waited, lost, errors,
            first_after - event if first_after else -1))
    return 0 if waited_before > 0 and missing_waited == 0 else 1


def wait_promoted(old, t0, timeout):
    s = sentinel()
    new = [None]

    def moved():
        host = s.discover_master(NAME)[0]
        if host != old:
            new[0] = host
            return True
        return False

    if not wait_for(moved, timeout, 0.05):
        out("still %s after %s s" % (old, timeout))
        return 1
    out("%s %.1f" % (new[0], time.time() - float(t0)))
    return 0


def wait_replica(ip, master_ip, timeout):
    t0 = time.time()

    def ok():
        info = node(ip).info("replication")
        return (info["role"] == "slave" and info["master_host"] == master_ip and
                info["master_link_status"] == "up")

    if not wait_for(ok, timeout, 0.2):
        out("%s not a replica of %s after %s s (%s)" % (ip, master_ip, timeout, role(ip, True)))
        return 1
    out("%.1f" % (time.time() - t0))
    return 0


def role(ip, text=False):
    try:
        info = node(ip).info("replication")
        r = "%s %s %s" % (info["role"], info.get("master_host", "-"),
                          info.get("master_link_status", "-"))
    except Exception as e:  # noqa: BLE001
        r = "unreachable (%s)" % e
    if text:
        return r
    out(r)
    return 0


def syncs(ip):
    st = node(ip).info("stats")
    out("full=%s partial=%s" % (st.get("sync_full"), st.get("sync_partial_ok")))
    return 0


def get(ip, key):
    out(node(ip).get(key))
    return 0


COMMANDS = {"ready": ready, "master": master, "writer": writer, "wait-promoted": wait_promoted,
            "wait-replica": wait_replica, "role": role, "syncs": syncs, "get": get}
sys.exit(COMMANDS[sys.argv[1]](*sys.argv[2:]))
