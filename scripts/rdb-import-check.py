#!/usr/bin/env python3
"""Compares every key of a source redis-server with a rockcache that imported its RDB file
(rockcache-server --import-rdb): type, data (sets and hashes compared as sets, scores as numbers)
and TTL presence, database by database. Prints the counts; exit status 1 on any difference.

Usage: /usr/bin/python3 scripts/rdb-import-check.py SOURCE_PORT ROCKCACHE_PORT [DATABASES]
"""
import sys

import redis


def canonical(pipe_results, kind):
    if kind in (b"string", b"list"):
        return pipe_results
    if kind == b"set":
        return sorted(pipe_results)
    if kind == b"hash":
        return sorted(pipe_results.items())
    if kind == b"zset":
        return [(m, float(s)) for m, s in pipe_results]
    if kind == b"stream":
        return pipe_results
    return pipe_results


def read(pipe, key, kind):
    if kind == b"string":
        pipe.get(key)
    elif kind == b"list":
        pipe.lrange(key, 0, -1)
    elif kind == b"set":
        pipe.smembers(key)
    elif kind == b"hash":
        pipe.hgetall(key)
    elif kind == b"zset":
        pipe.zrange(key, 0, -1, withscores=True)
    elif kind == b"stream":
        pipe.xrange(key)
    else:
        pipe.type(key)
    pipe.pttl(key)


def main():
    src_port, dst_port = int(sys.argv[1]), int(sys.argv[2])
    databases = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    checked = differences = 0
    for db in range(databases):
        src = redis.Redis(port=src_port, db=db)
        dst = redis.Redis(port=dst_port, db=db)
        if src.dbsize() == 0 and dst.dbsize() == 0:
            continue
        if src.dbsize() != dst.dbsize():
            print("db %d: dbsize %d vs %d" % (db, src.dbsize(), dst.dbsize()))
            differences += 1
        cursor = 0
        while True:
            cursor, keys = src.scan(cursor, count=1000)
            if keys:
                p = src.pipeline(transaction=False)
                for k in keys:
                    p.type(k)
                kinds = p.execute()
                results = []
                for side in (src, dst):
                    p = side.pipeline(transaction=False)
                    for k, kind in zip(keys, kinds):
                        read(p, k, kind)
                    results.append(p.execute())
                for i, (k, kind) in enumerate(zip(keys, kinds)):
                    a = canonical(results[0][2 * i], kind)
                    b = canonical(results[1][2 * i], kind)
                    ttl_a, ttl_b = results[0][2 * i + 1], results[1][2 * i + 1]
                    if a != b or (ttl_a < 0) != (ttl_b < 0):
                        differences += 1
                        if differences <= 5:
                            print("db %d key %r (%s) differs" % (db, k, kind))
                    checked += 1
            if cursor == 0:
                break
    print("checked %d keys, %d differences" % (checked, differences))
    sys.exit(1 if differences else 0)


main()
