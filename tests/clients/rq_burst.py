#!/usr/bin/python3
"""python3-rq against a server: enqueue JOBS jobs, run a real RQ worker process (SimpleWorker:
runs jobs in its own process instead of forking one per job) in burst mode
until the queue is empty, check every result.

Usage: rq_burst.py PORT [JOBS]    exit 0 = pass; 77 when python3-rq is missing (the caller skips).
Prints "rq: port=P enqueued=N finished=N failed=N worker_seconds=S".
"""
import os
import subprocess
import sys
import time

try:
    import redis
    import rq
except ImportError:
    print("python3-rq not installed")
    sys.exit(77)

PORT = int(sys.argv[1])
JOBS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rq_jobs  # noqa: E402

conn = redis.Redis(host="127.0.0.1", port=PORT)
conn.flushall()
queue = rq.Queue("rockcache-test", connection=conn)
jobs = [queue.enqueue(rq_jobs.square_plus, i, 7) for i in range(JOBS)]

env = dict(os.environ, PYTHONPATH=HERE)
worker_code = (
    "import sys, redis, rq\n"
    "conn = redis.Redis(host='127.0.0.1', port=%d)\n"
    "w = rq.SimpleWorker([rq.Queue('rockcache-test', connection=conn)], connection=conn)\n"
    "sys.exit(0 if w.work(burst=True, logging_level='WARNING') else 3)\n" % PORT
)
start = time.time()
proc = subprocess.run(["/usr/bin/python3", "-c", worker_code], env=env, timeout=600)
seconds = time.time() - start

finished = failed = wrong = 0
for i, job in enumerate(jobs):
    job.refresh()
    status = job.get_status()
    if status == "finished":
        finished += 1
        if job.result != i * i + 7:
            wrong += 1
    elif status == "failed":
        failed += 1
print("rq: port=%d enqueued=%d finished=%d failed=%d wrong_results=%d worker_exit=%d "
      "worker_seconds=%.2f" % (PORT, JOBS, finished, failed, wrong, proc.returncode, seconds))
ok = proc.returncode == 0 and finished == JOBS and failed == 0 and wrong == 0 and len(queue) == 0
sys.exit(0 if ok else 1)
