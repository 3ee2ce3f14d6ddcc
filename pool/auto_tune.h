// pool/auto_tune — the worker pool's defaults, derived from the machine (the "auto" value, 0 or
// -1, of pool-threads, workers-per-list, pool-spin-count and pool-max-yield-usec).
//
// The network threads: one per 4 cores, at least one. Two on 2 cores (net-threads 2) serve reads
// the cache or memory holds on both cores — a network thread does all such a read needs by
// itself — and were measured (2026-11-29, 1M keys of 400 B, a sixth in memory, one binary in
// alternated runs) at +9-16% uniform GET, +16-40% Zipf GET and +10-31% for the 90/10 GET/SET mix
// at pipeline 16; but each loop hands the pool groups half the size, and the one worker's CPU per
// write rose 10-30% (SET -r 1000000 at pipelines 1 and 16: -6% and -4-20% requests a second) and
// 30-100% for a hot key's SADD at pipeline 16 (its write runs split across two loops: -12-23%).
// So one stays the default, where writes keep their group sizes; README ("Data bigger than
// memory") advises 2 for read-heavy loads on data bigger than the cache.
// With as many network threads as cores, a miss handed to a worker buys no parallelism, only the
// hop, so the network thread reads up to 64 misses of a pipeline itself
// (AutoMappedReadsPerPipeline); with cores to spare, 2, and the rest go to the workers (read
// together with one MultiGet). With net-threads 2 on 2 cores, 64 instead of 2: uniform GET P16
// 126-151k -> 155-176k a second (alternated runs).
//
// The rule: the pool must not take the CPU of the threads that produce its work. A network
// thread parses commands, answers cache hits and hands everything else to the pool; a worker
// that spins or yields while idle, or a worker too many, competes with it for a core, and every
// microsecond a network thread waits for a core is a microsecond every one of its clients waits.
// So:
//  * threads = cores - net_threads: the cores the network threads leave, at least one. Group
//    commit runs a whole network-loop pass as one task, so a worker more than the free cores
//    buys no parallelism, only contention: on 2 cores (one network thread), two workers ran
//    SET/INCR/HSET -P 16 -r 1000000 at 0.7-0.9x the speed of one (lock and RocksDB write-thread
//    hand-offs, three runnable threads on two cores). Big commands do not need a second worker
//    to keep small ones moving: the heavy lane runs them (worker_pool.h).
//    With storage-sync always, at least two: a worker spends most of a group waiting for its
//    fsync, off the CPU, and a second one runs the next group meanwhile (RocksDB joins its WAL
//    write to the next sync); one worker alone ran SET -P 16 at 0.9x and -P 1 at 0.6-0.85x.
//  * workers_per_list = threads when threads <= 4 (one list: whichever worker is free takes
//    the next task; no task waits behind a busy worker while another idles), else 2.
//  * spin_count 200, max_yield_usec 100 only when a core is spare for an idle worker to spin
//    on: cores >= net_threads + 3 (the network threads, the worker running the current task,
//    RocksDB's flush/compaction thread, and then one to spin). Otherwise 0 and 0: an idle worker
//    blocks at once; a futex wake (~3-10 us) is cheaper than the core a spinner would steal.
//  * cores is the number of CPUs this process may run on (sched_getaffinity: taskset, cpusets,
//    container CPU sets), not the machine's.
//
// Pure functions; any thread.
#pragma once

namespace rockcache::pool {

struct AutoTune {
  int threads = 2;
  int workers_per_list = 2;
  int spin_count = 0;
  int max_yield_usec = 0;
};

// The CPUs the calling process may run on (>= 1).
int UsableCores();

// The network threads' default: one per 4 cores, at least 1.
int AutoNetThreads(int cores);

// rtc-storage-read-mapped's default: 64 when the network threads have every core (a hop to a
// worker would buy no parallelism), else 2.
int AutoMappedReadsPerPipeline(int cores, int net_threads);

// workers_per_list for `threads` workers, whether the thread count is auto or set: all of them
// in one list up to 4, else lists of 2.
int AutoWorkersPerList(int threads);

// The pool defaults for `cores` usable CPUs, `net_threads` network threads and whether every
// write fsyncs (storage-sync always), as explained at the top.
// REQUIRES: cores >= 1, net_threads >= 1.
AutoTune DerivePoolDefaults(int cores, int net_threads, bool sync_writes);

}  // namespace rockcache::pool
