#include "server/metrics/metrics.h"

#include <chrono>

#include "server/commands/command.h"

namespace rockcache::server {

const char* StageName(int stage) {
  switch (stage) {
    case kBeforeQueue:
      return "before_queue";
    case kQueueWait:
      return "queue_wait";
    case kExecute:
      return "execute";
    case kHandBack:
      return "hand_back";
    default:
      return "total";
  }
}

void CommandSnapshot::Subtract(const CommandSnapshot& base) {
  calls -= base.calls;
  exec_ns -= base.exec_ns;
  rejected -= base.rejected;
  failed -= base.failed;
  rtc_calls -= base.rtc_calls;
  for (int s = 0; s < kStageCount; ++s) stages[s].Subtract(base.stages[s]);
}

namespace {

// Single-writer increment: a relaxed load and store, no locked instruction.
void Bump(std::atomic<uint64_t>& counter, uint64_t by = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

void AddCommand(const CommandMetrics& m, CommandSnapshot* out) {
  out->calls += m.calls.load(std::memory_order_relaxed);
  out->exec_ns += m.exec_ns.load(std::memory_order_relaxed);
  out->rejected += m.rejected.load(std::memory_order_relaxed);
  out->failed += m.failed.load(std::memory_order_relaxed);
  out->rtc_calls += m.rtc_calls.load(std::memory_order_relaxed);
  for (int s = 0; s < kStageCount; ++s) m.stages[s].AddTo(&out->stages[s]);
}

void RecordInto(CommandMetrics& m, const CommandSample& sample) {
  Bump(m.calls);
  Bump(m.exec_ns, sample.stage_ns[kExecute]);
  if (sample.failed) Bump(m.failed);
  if (sample.rtc) Bump(m.rtc_calls);
  if (sample.in_loop) {
    m.stages[kExecute].Record(sample.stage_ns[kExecute]);
    m.stages[kTotal].Record(sample.stage_ns[kTotal]);
    return;
  }
  for (int s = 0; s < kStageCount; ++s) m.stages[s].Record(sample.stage_ns[s]);
}

}  // namespace

LoopMetrics::LoopMetrics(size_t command_count, LatencyMonitor* monitor)
    : commands_(command_count), owned_(command_count), monitor_(monitor) {
  for (auto& slot : commands_) slot.store(nullptr, std::memory_order_relaxed);
}

CommandMetrics& LoopMetrics::For(int command_id) {
  auto& slot = owned_[static_cast<size_t>(command_id)];
  if (!slot) {
    slot = std::make_unique<CommandMetrics>();
    commands_[static_cast<size_t>(command_id)].store(slot.get(), std::memory_order_release);
  }
  return *slot;
}

void LoopMetrics::Record(const CommandSample& sample) {
  RecordInto(KnownCommand(sample.command_id) ? For(sample.command_id) : unknown_, sample);
  if (sample.keyspace > 0) Bump(keyspace_hits_);
  if (sample.keyspace < 0) Bump(keyspace_misses_);
  if (monitor_ != nullptr && monitor_->ShouldRecord(sample.stage_ns[kTotal])) RecordSpike(sample);
}

void LoopMetrics::RecordSpike(const CommandSample& sample) {
  bool fast = false;
  if (sample.command_id >= 0 && static_cast<size_t>(sample.command_id) < AllCommands().size()) {
    fast = (AllCommands()[static_cast<size_t>(sample.command_id)]->flags & kFast) != 0;
  }
  auto now = std::chrono::system_clock::now().time_since_epoch();
  monitor_->Record(fast ? "fast-command" : "command", sample.stage_ns[kTotal] / 1000000,
                   std::chrono::duration_cast<std::chrono::seconds>(now).count());
}

void LoopMetrics::RecordRejected(int command_id) {
  Bump((KnownCommand(command_id) ? For(command_id) : unknown_).rejected);
}

void LoopMetrics::RecordError(const std::string& code) {
  MutexLock lock(&errors_mu_);
  ++errors_[code];
}

void LoopMetrics::AddTo(std::vector<CommandSnapshot>* per_command, CommandSnapshot* overall,
                        std::map<std::string, uint64_t>* errors, uint64_t* keyspace_hits,
                        uint64_t* keyspace_misses) const {
  // The overall figures are the sum of every command's and the unknown commands': a command's
  // sample is recorded once, in its own metrics.
  AddCommand(unknown_, overall);
  *keyspace_hits += keyspace_hits_.load(std::memory_order_relaxed);
  *keyspace_misses += keyspace_misses_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < commands_.size(); ++i) {
    const CommandMetrics* m = commands_[i].load(std::memory_order_acquire);
    if (m == nullptr) continue;
    AddCommand(*m, &(*per_command)[i]);
    AddCommand(*m, overall);
  }
  MutexLock lock(&errors_mu_);
  for (const auto& [code, count] : errors_) (*errors)[code] += count;
}

Metrics::Metrics(size_t loops, size_t command_count) : command_count_(command_count) {
  for (size_t i = 0; i < loops; ++i) {
    loops_.push_back(std::make_unique<LoopMetrics>(command_count, &latency_monitor_));
  }
  baseline_.per_command.resize(command_count);
}

Metrics::Snapshot Metrics::ReadRaw() const {
  Snapshot snapshot;
  snapshot.per_command.resize(command_count_);
  for (const auto& loop : loops_) {
    loop->AddTo(&snapshot.per_command, &snapshot.overall, &snapshot.errors, &snapshot.keyspace_hits,
                &snapshot.keyspace_misses);
  }
  return snapshot;
}

Metrics::Snapshot Metrics::Read() const {
  Snapshot snapshot = ReadRaw();
  MutexLock lock(&baseline_mu_);
  for (size_t i = 0; i < command_count_; ++i) {
    snapshot.per_command[i].Subtract(baseline_.per_command[i]);
  }
  snapshot.overall.Subtract(baseline_.overall);
  snapshot.keyspace_hits -= baseline_.keyspace_hits;
  snapshot.keyspace_misses -= baseline_.keyspace_misses;
  for (auto& [code, count] : snapshot.errors) {
    auto it = baseline_.errors.find(code);
    if (it != baseline_.errors.end()) count -= it->second;
  }
  for (auto it = snapshot.errors.begin(); it != snapshot.errors.end();) {
    it = it->second == 0 ? snapshot.errors.erase(it) : std::next(it);
  }
  return snapshot;
}

void Metrics::Reset() {
  Snapshot raw = ReadRaw();
  MutexLock lock(&baseline_mu_);
  baseline_ = std::move(raw);
}

std::string ErrorCode(const char* reply, size_t length) {
  if (length < 2 || reply[0] != '-') return "";
  size_t end = 1;
  while (end < length && end < 33 && reply[end] != ' ' && reply[end] != '\r') ++end;
  return std::string(reply + 1, end - 1);
}

}  // namespace rockcache::server
