#include "server/scripting/scripting.h"

#include <algorithm>

namespace rockcache::server::scripting {

uint64_t Scripting::RegisterUnit(const std::vector<uint32_t>& stripes, bool all, int64_t start_ms) {
  MutexLock lock(&units_mu_);
  const uint64_t handle = next_handle_++;
  running_units_.push_back(Unit{handle, start_ms, all, all ? std::vector<uint32_t>() : stripes});
  units_.fetch_add(1, std::memory_order_relaxed);
  return handle;
}

void Scripting::UnregisterUnit(uint64_t handle) {
  MutexLock lock(&units_mu_);
  for (size_t i = 0; i < running_units_.size(); ++i) {
    if (running_units_[i].handle != handle) continue;
    running_units_.erase(running_units_.begin() + static_cast<std::ptrdiff_t>(i));
    units_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
}

bool Scripting::AnyRunningSince(int64_t since_ms) const {
  MutexLock lock(&units_mu_);
  for (const Unit& unit : running_units_) {
    if (unit.start_ms <= since_ms) return true;
  }
  return false;
}

bool Scripting::BusyForSlow(const std::vector<uint32_t>& stripes, int64_t now_ms,
                            int64_t threshold_ms) const {
  if (stripes.empty()) return false;
  MutexLock lock(&units_mu_);
  for (const Unit& unit : running_units_) {
    if (now_ms - unit.start_ms < threshold_ms) continue;
    if (unit.all) return true;
    for (uint32_t stripe : stripes) {
      if (std::binary_search(unit.stripes.begin(), unit.stripes.end(), stripe)) return true;
    }
  }
  return false;
}

}  // namespace rockcache::server::scripting
