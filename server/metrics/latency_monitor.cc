#include "server/metrics/latency_monitor.h"

#include <algorithm>

namespace rockcache::server {

void LatencyMonitor::Record(const std::string& event, uint64_t latency_ms, int64_t unix_time) {
  MutexLock lock(&mu_);
  Event& e = events_[event];
  e.max_ms = std::max(e.max_ms, latency_ms);
  if (!e.samples.empty() && e.samples.back().unix_time == unix_time) {
    e.samples.back().latency_ms = std::max(e.samples.back().latency_ms, latency_ms);
    return;
  }
  if (e.samples.size() == kHistory) e.samples.erase(e.samples.begin());
  e.samples.push_back({unix_time, latency_ms});
}

std::map<std::string, LatencyMonitor::Event> LatencyMonitor::Events() const {
  MutexLock lock(&mu_);
  return events_;
}

int64_t LatencyMonitor::Reset(const std::vector<std::string>& events) {
  MutexLock lock(&mu_);
  if (events.empty()) {
    auto n = static_cast<int64_t>(events_.size());
    events_.clear();
    return n;
  }
  int64_t n = 0;
  for (const auto& name : events) n += static_cast<int64_t>(events_.erase(name));
  return n;
}

std::string LatencyMonitor::Doctor() const {
  if (threshold_ms() == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this rockcache "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it.\n";
  }
  auto events = Events();
  if (events.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this rockcache instance, "
           "not in the slightest bit. I honestly think you ought to sleep tonight.\n";
  }
  std::string text =
      "Dave, I have observed latency spikes in this rockcache instance. You don't mind talking "
      "about it, do you Dave?\n\n";
  int index = 1;
  for (const auto& [name, event] : events) {
    uint64_t sum = 0;
    for (const auto& s : event.samples) sum += s.latency_ms;
    uint64_t avg = event.samples.empty() ? 0 : sum / event.samples.size();
    text += std::to_string(index++) + ". " + name + ": " + std::to_string(event.samples.size()) +
            " latency spikes (average " + std::to_string(avg) + "ms, worst " +
            std::to_string(event.max_ms) + "ms).\n";
  }
  text +=
      "\nI have a few advices for you:\n\n- Check SLOWLOG GET for the commands involved and "
      "their stage breakdown (queue_wait points at a saturated worker pool, execute at storage).\n"
      "- INFO latencystats and LATENCY HISTOGRAM show the distribution per command.\n";
  return text;
}

}  // namespace rockcache::server
