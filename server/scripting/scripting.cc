#include "server/scripting/scripting.h"

#include <algorithm>
#include <cctype>

#include "server/scripting/sha1.h"

namespace rockcache::server::scripting {

uint64_t Scripting::RegisterUnit(const std::vector<uint32_t>& stripes, bool all, int64_t start_ms,
                                 const std::vector<std::string>* command) {
  MutexLock lock(&units_mu_);
  const uint64_t handle = next_handle_++;
  running_units_.push_back(
      Unit{handle, start_ms, all, all ? std::vector<uint32_t>() : stripes, command});
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

bool Scripting::OldestRunning(int64_t now_ms, RunningScript* out) const {
  MutexLock lock(&units_mu_);
  const Unit* oldest = nullptr;
  for (const Unit& unit : running_units_) {
    if (unit.command != nullptr && (oldest == nullptr || unit.start_ms < oldest->start_ms)) {
      oldest = &unit;
    }
  }
  if (oldest == nullptr) return false;
  const std::vector<std::string>& command = *oldest->command;
  out->command = command;
  out->duration_ms = now_ms - oldest->start_ms;
  std::string verb = command.empty() ? std::string() : command[0];
  std::transform(verb.begin(), verb.end(), verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (command.size() < 2) {
    out->name.clear();
  } else if (verb == "eval" || verb == "eval_ro") {
    out->name = "f_" + Sha1Hex(command[1]);
  } else if (verb == "evalsha" || verb == "evalsha_ro") {
    out->name = "f_" + command[1];
    std::transform(out->name.begin(), out->name.end(), out->name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  } else {
    out->name = command[1];  // FCALL, FCALL_RO: the function
  }
  return true;
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
