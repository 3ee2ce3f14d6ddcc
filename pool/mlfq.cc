#include "pool/mlfq.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace rockcache::pool::internal {

// ---- ClientTable ----

void ClientTable::Decay(Entry* e, int64_t now_ns) const {
  if (now_ns <= e->at_ns) return;
  e->load_ns *= std::exp2(-static_cast<double>(now_ns - e->at_ns) /
                          static_cast<double>(policy_.half_life_ns));
  e->at_ns = now_ns;
}

int ClientTable::Level(uint64_t client, int64_t now_ns) {
  Shard& shard = ShardOf(client);
  MutexLock lock(&shard.mu);
  auto it = shard.map.find(client);
  if (it == shard.map.end()) return 0;
  Entry& e = it->second;
  Decay(&e, now_ns);
  const int level = policy_.LevelOf(e.load_ns);
  if (level > e.level) demotions_.fetch_add(1, std::memory_order_relaxed);
  if (level < e.level) promotions_.fetch_add(1, std::memory_order_relaxed);
  e.level = level;
  return level;
}

void ClientTable::Charge(uint64_t client, int64_t ns, int64_t now_ns) {
  if (ns <= 0) return;
  Shard& shard = ShardOf(client);
  MutexLock lock(&shard.mu);
  if (shard.map.size() >= kSweepAt && shard.map.count(client) == 0) {
    // Entries of closed connections charged after their Forget (a batch in flight), and of
    // clients idle for long: drop every entry that has decayed to nothing.
    for (auto it = shard.map.begin(); it != shard.map.end();) {
      Decay(&it->second, now_ns);
      it = it->second.load_ns < 1000 ? shard.map.erase(it) : std::next(it);
    }
  }
  auto [it, inserted] = shard.map.try_emplace(client);
  Entry& e = it->second;
  if (inserted) e.at_ns = now_ns;
  Decay(&e, now_ns);
  e.load_ns = std::max(e.load_ns, static_cast<double>(ns));
}

void ClientTable::Forget(uint64_t client) {
  Shard& shard = ShardOf(client);
  MutexLock lock(&shard.mu);
  shard.map.erase(client);
}

double ClientTable::Load(uint64_t client, int64_t now_ns) {
  Shard& shard = ShardOf(client);
  MutexLock lock(&shard.mu);
  auto it = shard.map.find(client);
  if (it == shard.map.end()) return 0;
  Decay(&it->second, now_ns);
  return it->second.load_ns;
}

size_t ClientTable::size() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    MutexLock lock(&shard.mu);
    n += shard.map.size();
  }
  return n;
}

// ---- ShareScheduler ----

ShareScheduler::ShareScheduler(int threads, int small_share_percent, int cpu_workers)
    : threads_(std::max(1, threads)),
      cpu_workers_(cpu_workers > 0 ? std::min(cpu_workers, threads_) : threads_) {
  SetSmallShare(small_share_percent);
}

void ShareScheduler::SetSmallShare(int percent) {
  share_.store(std::clamp(percent, 1, 99), std::memory_order_relaxed);
}

int ShareScheduler::HighCap() const {
  const int high_percent = 100 - share_.load(std::memory_order_relaxed);
  return std::max(1, (threads_ * high_percent + 50) / 100);
}

bool ShareScheduler::PushHigh(Task* task, int level, int64_t now_ns) {
  level = std::clamp(level, 1, kLevels - 1);
  {
    MutexLock lock(&mu_);
    if (closed_) return false;
    DecayTo(now_ns);  // before the count moves: a span without high work accrues no capacity
    queue_[level].push_back(task);
  }
  // After the push: a worker that sees the count finds the task under mu_.
  high_queued_.fetch_add(1, std::memory_order_seq_cst);
  high_active_.fetch_add(1, std::memory_order_seq_cst);
  return true;
}

bool ShareScheduler::Contended(int64_t now_ns) const {
  return high_active_.load(std::memory_order_relaxed) > 0 &&
         now_ns - last_level0_ns_.load(std::memory_order_relaxed) < kLevel0LingerNs;
}

void ShareScheduler::DecayTo(int64_t now_ns) {
  if (now_ns <= decayed_at_) return;
  const int64_t dt = now_ns - decayed_at_;
  const double f = std::exp2(-static_cast<double>(dt) / static_cast<double>(kShareHalfLifeNs));
  for (double& u : used_ns_) u *= f;
  capacity_ns_ *= f;
  // The span since the last update counts as contended if it is now (updates come at every
  // push, choice and finish, so a span is at most one task or one hold poll long).
  if (Contended(now_ns)) capacity_ns_ += static_cast<double>(dt) * cpu_workers_;
  decayed_at_ = now_ns;
}

bool ShareScheduler::HighUnderBudget(double hi_ns) const {
  const int share = share_.load(std::memory_order_relaxed);
  return hi_ns * 100 <= capacity_ns_ * (100 - share) + static_cast<double>(kBudgetSlackNs) * 100;
}

double ShareScheduler::InFlight(int level, int64_t now_ns) const {
  return static_cast<double>(running_[level]) * static_cast<double>(now_ns) -
         static_cast<double>(running_start_sum_[level]);
}

bool ShareScheduler::Owed(double lo_ns, double hi_ns) const {
  const int share = share_.load(std::memory_order_relaxed);
  return hi_ns * share <= lo_ns * (100 - share);
}

Task* ShareScheduler::PopHigh(int64_t now_ns, int* level) {
  int l;
  if (queue_[1].empty()) {
    l = 2;
  } else if (queue_[2].empty()) {
    l = 1;
  } else {
    // Level 1 against level 2, by the same rule as level 0 against both.
    l = Owed(used_ns_[1] + InFlight(1, now_ns), used_ns_[2] + InFlight(2, now_ns)) ? 2 : 1;
  }
  Task* task = queue_[l].front();
  queue_[l].pop_front();
  high_queued_.fetch_sub(1, std::memory_order_relaxed);
  ++running_[l];
  running_start_sum_[l] += now_ns;
  *level = l;
  return task;
}

Choice ShareScheduler::Choose(bool level0_waiting, int64_t now_ns, bool drain) {
  Choice c;
  MutexLock lock(&mu_);
  if (queue_[1].empty() && queue_[2].empty()) {
    c.kind = level0_waiting ? Choice::kLevel0 : Choice::kWait;
    return c;
  }
  DecayTo(now_ns);
  auto high = [&] {
    mu_.AssertHeld();  // called only below, under the lock
    c.kind = Choice::kHigh;
    c.task = PopHigh(now_ns, &c.level);
    return c;
  };
  if (drain) {
    if (!level0_waiting) return high();
    c.kind = Choice::kLevel0;
    return c;
  }
  const bool level0_recent =
      level0_waiting || now_ns - last_level0_ns_.load(std::memory_order_relaxed) < kLevel0LingerNs;
  if (!level0_recent) return high();  // nothing small around: work conserving
  const double hi = used_ns_[1] + used_ns_[2] + InFlight(1, now_ns) + InFlight(2, now_ns);
  const bool under_cap = running_[1] + running_[2] < HighCap() && HighUnderBudget(hi);
  if (!level0_waiting) return under_cap ? high() : c;  // kWait: keep this worker for level 0
  if (under_cap && Owed(used_ns_[0], hi)) return high();
  c.kind = Choice::kLevel0;
  return c;
}

void ShareScheduler::Finished(int level, int64_t start_ns, int64_t end_ns, int64_t cpu_ns) {
  MutexLock lock(&mu_);
  DecayTo(end_ns);
  const bool contended = Contended(end_ns);
  if (level > 0) {
    --running_[level];
    running_start_sum_[level] -= start_ns;
    // The worker's start comes a clock read after PopHigh's: without this, the sum would drift
    // by that gap per task and, over millions of slices, read as phantom work in flight.
    if (running_[level] == 0) running_start_sum_[level] = 0;
    high_active_.fetch_sub(1, std::memory_order_relaxed);
  }
  const int64_t used = cpu_ns >= 0 ? std::min(cpu_ns, end_ns - start_ns) : end_ns - start_ns;
  if (!contended || used <= 0) return;
  used_ns_[level] += static_cast<double>(used);
  given_ns_[level] += static_cast<uint64_t>(used);
}

void ShareScheduler::GivenNs(uint64_t out[kLevels]) const {
  MutexLock lock(&mu_);
  for (int l = 0; l < kLevels; ++l) out[l] = given_ns_[l];
}

uint64_t ShareScheduler::queued(int level) const {
  MutexLock lock(&mu_);
  return level > 0 && level < kLevels ? queue_[level].size() : 0;
}

std::deque<Task*> ShareScheduler::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  std::deque<Task*> out;
  for (int l = 1; l < kLevels; ++l) {
    for (Task* t : queue_[l]) out.push_back(t);
    queue_[l].clear();
  }
  high_queued_.store(0, std::memory_order_relaxed);
  return out;
}

}  // namespace rockcache::pool::internal
