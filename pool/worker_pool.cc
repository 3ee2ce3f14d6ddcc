#include "pool/worker_pool.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <string>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include "pool/auto_tune.h"
#include "pool/classic_queue.h"
#include "pool/internal.h"
#include "pool/task_list.h"
#include "pool/timer_queue.h"

namespace rockcache::pool {

using internal::TaskAccess;

namespace {

// The pool whose worker or timer runs on this thread, if any: its Submit calls never wait for room.
thread_local const WorkerPool* tls_pool_thread_of = nullptr;

// Set on threads that must never wait for room (network loops): see NeverWaitOnThisThread().
thread_local bool tls_never_wait = false;

// Per-thread round robin for hint 0, seeded per thread so producers start on different lists.
size_t NextRoundRobin() {
  thread_local size_t next = std::hash<std::thread::id>{}(std::this_thread::get_id());
  return next++;
}

void NameThisThread(const std::string& name) {
#ifdef __linux__
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
#endif
}

}  // namespace

std::unique_ptr<WorkerPool> WorkerPool::Create(const Options& options) {
  return std::unique_ptr<WorkerPool>(new WorkerPool(options));
}

WorkerPool::WorkerPool(const Options& options)
    : mode_(options.mode),
      threads_(std::max(1, options.threads)),
      workers_per_list_(std::clamp(options.workers_per_list, 1, threads_)),
      cpu_affinity_(options.cpu_affinity),
      tunables_(std::make_unique<internal::Tunables>(options)),
      clients_(std::make_unique<internal::ClientTable>()),
      timer_(std::make_unique<internal::TimerQueue>()),
      baseline_(std::make_unique<internal::RawStats>()) {
  if (mode_ == Mode::kClassic) {
    classic_ = std::make_unique<internal::ClassicQueue>(tunables_.get());
  } else {
    // The workers that can be on a CPU at once: the cores the network threads leave.
    const int cores = UsableCores();
    sched_ = std::make_unique<internal::ShareScheduler>(threads_, options.small_share,
                                                        std::max(1, cores - AutoNetThreads(cores)));
    const int nlists = (threads_ + workers_per_list_ - 1) / workers_per_list_;
    for (int i = 0; i < nlists; ++i) {
      lists_.push_back(
          std::make_unique<internal::TaskList>(tunables_.get(), sched_.get(), clients_.get()));
    }
    heavy_lane_ = std::make_unique<internal::TaskList>(
        tunables_.get(), sched_.get(), clients_.get(), internal::TaskList::Role::kHeavyLane);
  }
  const int lane_threads = heavy_lane_ ? threads_ : 0;
  for (int i = 0; i < threads_ + lane_threads; ++i) {
    worker_stats_.push_back(std::make_unique<internal::WorkerStats>(i));
  }
  workers_.reserve(threads_ + lane_threads);
  for (int i = 0; i < threads_; ++i) workers_.emplace_back([this, i] { WorkerMain(i); });
  for (int i = 0; i < lane_threads; ++i) {
    workers_.emplace_back([this, i] { HeavyLaneMain(i); });
  }
  timer_thread_ = std::thread([this] {
    tls_pool_thread_of = this;
    NameThisThread("rc-pool-timer");
    // Due tasks all go to list 0, one at a time, so equal deadlines keep ScheduleAt order.
    timer_->Run([this](Task* task) {
      if (!Enqueue(task, 0, /*may_wait=*/false)) TaskAccess::CancelAndDelete(task);
    });
  });
}

WorkerPool::~WorkerPool() { Shutdown(); }

void WorkerPool::WorkerMain(int index) {
  tls_pool_thread_of = this;
  NameThisThread("rc-pool-" + std::to_string(index));
#ifdef __linux__
  if (cpu_affinity_) {
    const unsigned ncores = std::max(1u, std::thread::hardware_concurrency());
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<int>(index % ncores), &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort
  }
#endif
  internal::WorkerStats* stats = worker_stats_[index].get();
  if (classic_) {
    classic_->RunWorker(stats);
  } else {
    lists_[index / workers_per_list_]->RunWorker(stats);
  }
}

void WorkerPool::HeavyLaneMain(int index) {
  tls_pool_thread_of = this;
  NameThisThread("rc-heavy-" + std::to_string(index));
#ifdef __linux__
  // SCHED_IDLE: the kernel runs this thread only on a core no normal thread wants, and preempts
  // it at once when one wakes (a nice value, even 19, lets it finish its time slice first). No
  // privilege is needed to lower one's own policy; best effort (a seccomp profile may refuse).
  sched_param param{};
  heavy_lane_idle_ += pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0 ? 1 : 0;
#endif
  heavy_lane_->RunWorker(worker_stats_[threads_ + index].get());
}

bool WorkerPool::Enqueue(Task* task, size_t list, bool may_wait) {
  if (classic_) return classic_->Push(task, may_wait);
  return lists_[list]->Push(task, may_wait);
}

void WorkerPool::Submit(std::unique_ptr<Task> task, uint64_t hint) {
  Task* t = task.release();
  if (!accepting_.load(std::memory_order_acquire)) {
    TaskAccess::CancelAndDelete(t);
    return;
  }
  if (sched_ != nullptr && tunables_->mlfq.load(std::memory_order_relaxed)) {
    int level = TaskAccess::Level(t);
    if (level < 0) {
      const uint64_t client = TaskAccess::Client(t);
      level = client != 0 ? clients_->Level(client, internal::NowNs()) : 0;
      level =
          std::max(level, clients_->policy().LevelOf(static_cast<double>(TaskAccess::Elapsed(t))));
    }
    if (level > 0) {
      SubmitHigh(t, level);
      return;
    }
  }
  size_t list = 0;
  if (lists_.size() > 1) list = (hint != 0 ? hint : NextRoundRobin()) % lists_.size();
  const bool may_wait = tls_pool_thread_of != this && !tls_never_wait;
  if (!Enqueue(t, list, may_wait)) TaskAccess::CancelAndDelete(t);
}

void WorkerPool::SubmitHigh(Task* task, int level) {
  const int64_t now = internal::NowNs();
  TaskAccess::EnqueueNs(task) = now;
  if (!sched_->PushHigh(task, level, now)) {
    TaskAccess::CancelAndDelete(task);
    return;
  }
  // Dekker with TaskList::BlockForWork: PushHigh's seq_cst increment of the high count, then the
  // lists' sleeper counts here; a worker increments its list's count, then reads the high count.
  if (tunables_->heavy_lane.load(std::memory_order_relaxed)) {
    heavy_lane_->WakeSleeper();
    return;
  }
  for (auto& list : lists_) {
    if (list->HasSleeper()) {
      list->WakeSleeper();
      break;
    }
  }
}

int WorkerPool::ClientLevel(uint64_t client) {
  if (!mlfq_enabled() || client == 0) return 0;
  return clients_->Level(client, internal::NowNs());
}

void WorkerPool::Charge(uint64_t client, int64_t ns) {
  if (!mlfq_enabled() || client == 0) return;
  clients_->Charge(client, ns, internal::NowNs());
}

void WorkerPool::ForgetClient(uint64_t client) { clients_->Forget(client); }

int64_t WorkerPool::RunningTaskElapsedNs() {
  const internal::RunningTask& r = internal::tls_running_task;
  if (r.start_ns == 0) return 0;
  return r.carried_ns + internal::ThreadCpu::Spent(r.start_ns, internal::NowNs());
}

int64_t WorkerPool::RunningTaskCpuNs() {
  const internal::RunningTask& r = internal::tls_running_task;
  if (r.start_ns == 0) return 0;
  return internal::ThreadCpu::Spent(r.start_ns, internal::NowNs());
}

bool WorkerPool::mlfq_enabled() const {
  return sched_ != nullptr && tunables_->mlfq.load(std::memory_order_relaxed);
}

void WorkerPool::NeverWaitOnThisThread() { tls_never_wait = true; }

bool WorkerPool::HasRoom(uint64_t hint) const {
  const int64_t max = tunables_->queue_max_size.load(std::memory_order_relaxed);
  if (classic_) return classic_->depth() < max;
  if (hint != 0 || lists_.size() == 1) return lists_[hint % lists_.size()]->depth() < max;
  for (const auto& list : lists_) {
    if (list->depth() < max) return true;
  }
  return false;
}

int WorkerPool::QueueMaxSize() const {
  return tunables_->queue_max_size.load(std::memory_order_relaxed);
}

void WorkerPool::ScheduleAt(std::chrono::steady_clock::time_point when,
                            std::unique_ptr<Task> task) {
  Task* t = task.release();
  if (!accepting_.load(std::memory_order_acquire) || !timer_->Add(when, t)) {
    TaskAccess::CancelAndDelete(t);
  }
}

void WorkerPool::Shutdown() {
  assert(tls_pool_thread_of != this && "Shutdown from the pool's own thread would deadlock");
  MutexLock lock(&shutdown_mu_);
  if (shut_down_) return;
  accepting_.store(false, std::memory_order_seq_cst);

  // 1. Timer first: a due task it dispatches now still reaches a list the workers drain.
  timer_->Stop();
  timer_thread_.join();
  for (Task* t : timer_->TakePending()) TaskAccess::CancelAndDelete(t);

  // 2. Workers run everything queued, then return.
  if (classic_) {
    classic_->Stop();
  } else {
    for (auto& list : lists_) list->Stop();
    heavy_lane_->Stop();
  }
  for (auto& w : workers_) w.join();

  // 3. Adaptive only: a Submit that passed the accepting_ check before step 0 may have linked
  // its task after its workers left. Close the lists and Cancel those (classic refuses pushes
  // from Stop() on, under its mutex).
  for (auto& list : lists_) {
    for (Task* t = list->Close(); t != nullptr;) {
      Task* next = TaskAccess::Next(t);
      TaskAccess::CancelAndDelete(t);
      t = next;
    }
  }
  if (sched_) {
    for (Task* t : sched_->Close()) TaskAccess::CancelAndDelete(t);
  }
  shut_down_ = true;
}

void WorkerPool::SetTunables(const Options& options) {
  tunables_->Set(options);
  if (sched_) sched_->SetSmallShare(options.small_share);
  // queue_max_size may have grown: let waiting producers re-check.
  if (classic_) classic_->NotifyRoom();
  for (auto& list : lists_) {
    list->NotifyRoom();
    list->WakeWorkers();  // the heavy lane may have been switched: high tasks changed hands
  }
  if (heavy_lane_) heavy_lane_->WakeWorkers();
}

void WorkerPool::CollectRaw(internal::RawStats* raw) const {
  for (const auto& w : worker_stats_) {
    raw->tasks_run += w->tasks_run.Load();
    raw->wakeups_spin += w->wakeups_spin.Load();
    raw->wakeups_yield += w->wakeups_yield.Load();
    raw->wakeups_block += w->wakeups_block.Load();
    for (int l = 0; l < internal::kLevels; ++l) {
      w->queue_wait[l].AddTo(&raw->queue_wait[l]);
      w->exec[l].AddTo(&raw->exec[l]);
    }
  }
  if (sched_) sched_->GivenNs(raw->given_ns);
  raw->demotions = clients_->demotions();
  raw->promotions = clients_->promotions();
  auto add_queue = [raw](const internal::QueueCounters& c) {
    raw->producer_yields += c.producer_yields.load(std::memory_order_relaxed);
    raw->producer_waits += c.producer_waits.load(std::memory_order_relaxed);
  };
  if (classic_) add_queue(classic_->counters());
  for (const auto& list : lists_) add_queue(list->counters());
}

Stats WorkerPool::GetStats() const {
  internal::RawStats raw;
  CollectRaw(&raw);
  {
    MutexLock lock(&stats_mu_);
    raw.tasks_run -= baseline_->tasks_run;
    raw.wakeups_spin -= baseline_->wakeups_spin;
    raw.wakeups_yield -= baseline_->wakeups_yield;
    raw.wakeups_block -= baseline_->wakeups_block;
    raw.producer_yields -= baseline_->producer_yields;
    raw.producer_waits -= baseline_->producer_waits;
    for (int l = 0; l < internal::kLevels; ++l) {
      raw.queue_wait[l].Subtract(baseline_->queue_wait[l]);
      raw.exec[l].Subtract(baseline_->exec[l]);
      raw.given_ns[l] -= baseline_->given_ns[l];
    }
    raw.demotions -= baseline_->demotions;
    raw.promotions -= baseline_->promotions;
  }
  Stats s;
  s.tasks_run = raw.tasks_run;
  s.wakeups_spin = raw.wakeups_spin;
  s.wakeups_yield = raw.wakeups_yield;
  s.wakeups_block = raw.wakeups_block;
  s.producer_yields = raw.producer_yields;
  s.producer_waits = raw.producer_waits;
  auto add_depth = [&s](int64_t depth, const internal::QueueCounters& c) {
    s.queued_now += static_cast<uint64_t>(std::max<int64_t>(0, depth));
    s.depth_high_water = std::max<uint64_t>(
        s.depth_high_water,
        std::max<int64_t>(0, c.depth_high_water.load(std::memory_order_relaxed)));
  };
  if (classic_) add_depth(classic_->depth(), classic_->counters());
  for (const auto& list : lists_) add_depth(list->depth(), list->counters());
  s.delayed_pending = timer_->size();
  if (!classic_) {
    double credit = 0;
    for (const auto& w : worker_stats_) {
      credit += static_cast<double>(w->yield_credit.load(std::memory_order_relaxed)) /
                static_cast<double>(internal::WorkerStats::kCreditMax);
    }
    s.yield_credit = std::clamp(credit / static_cast<double>(worker_stats_.size()), -1.0, 1.0);
  }
  Histogram::Data wait_all = raw.queue_wait[0];
  for (int l = 1; l < internal::kLevels; ++l) {
    for (int b = 0; b < Histogram::kBuckets; ++b)
      wait_all.buckets[b] += raw.queue_wait[l].buckets[b];
    wait_all.sum_ns += raw.queue_wait[l].sum_ns;
  }
  s.queue_wait_count = wait_all.Count();
  s.queue_wait_sum_us = static_cast<double>(wait_all.sum_ns) / 1e3;
  s.queue_wait_p50_us = wait_all.PercentileNs(0.50) / 1e3;
  s.queue_wait_p99_us = wait_all.PercentileNs(0.99) / 1e3;
  s.queue_wait_p999_us = wait_all.PercentileNs(0.999) / 1e3;
  s.mlfq = mlfq_enabled();
  s.small_share = sched_ ? sched_->small_share() : 0;
  s.heavy_lane = s.mlfq && tunables_->heavy_lane.load(std::memory_order_relaxed);
  s.heavy_lane_idle_threads = heavy_lane_idle_.load(std::memory_order_relaxed);
  uint64_t given_total = 0;
  for (uint64_t g : raw.given_ns) given_total += g;
  for (int l = 0; l < internal::kLevels; ++l) {
    LevelStats& ls = s.levels[l];
    ls.tasks = raw.exec[l].Count();
    ls.queued_now = sched_ ? sched_->queued(l) : 0;
    ls.queue_wait_sum_us = static_cast<double>(raw.queue_wait[l].sum_ns) / 1e3;
    ls.queue_wait_p50_us = raw.queue_wait[l].PercentileNs(0.50) / 1e3;
    ls.queue_wait_p99_us = raw.queue_wait[l].PercentileNs(0.99) / 1e3;
    ls.exec_sum_us = static_cast<double>(raw.exec[l].sum_ns) / 1e3;
    ls.exec_p50_us = raw.exec[l].PercentileNs(0.50) / 1e3;
    ls.exec_p99_us = raw.exec[l].PercentileNs(0.99) / 1e3;
    ls.contended_share =
        given_total == 0 ? 0
                         : static_cast<double>(raw.given_ns[l]) / static_cast<double>(given_total);
  }
  s.demotions = raw.demotions;
  s.promotions = raw.promotions;
  s.clients_tracked = clients_->size();
  return s;
}

void WorkerPool::ResetStats() {
  auto fresh = std::make_unique<internal::RawStats>();
  CollectRaw(fresh.get());
  {
    MutexLock lock(&stats_mu_);
    baseline_ = std::move(fresh);
  }
  auto restart = [](int64_t depth, internal::QueueCounters& c) {
    c.depth_high_water.store(depth, std::memory_order_relaxed);
  };
  if (classic_) restart(classic_->depth(), classic_->counters());
  for (auto& list : lists_) restart(list->depth(), list->counters());
}

}  // namespace rockcache::pool
