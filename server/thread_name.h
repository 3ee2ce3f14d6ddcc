// server/thread_name — names the calling thread, so per-thread CPU (top -H, /proc/PID/task,
// perf) tells rockcache's threads apart: rc-net-N (network loops), rc-pool-N / rc-heavy-N (the
// pool, pool/worker_pool.cc), rc-repl-* (replication), rc-checkpoint, rc-failover, rc-metrics.
// Any thread, about itself only.
#pragma once

#include <pthread.h>

#include <string>

namespace rockcache::server {

// Linux keeps 15 characters of a thread's name: longer names are cut there.
inline void NameThisThread(const std::string& name) {
#ifdef __linux__
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
#else
  (void)name;
#endif
}

}  // namespace rockcache::server
