#include "server/client_pause.h"

#include <algorithm>
#include <cstring>

#include "server/commands/command.h"

namespace rockcache::server {

void ClientPause::Pause(int64_t now_ms, int64_t end_ms, PauseMode mode) {
  MutexLock lock(&mu_);
  // A pause that has ended counts as none: the new one replaces it.
  const int64_t old_end = end_ms_.load(std::memory_order_relaxed);
  const bool ended = old_end <= now_ms;
  const int old_mode = ended ? 0 : mode_.load(std::memory_order_relaxed);
  end_ms_.store(ended ? end_ms : std::max(end_ms, old_end), std::memory_order_relaxed);
  mode_.store(std::max(old_mode, static_cast<int>(mode)), std::memory_order_relaxed);
}

void ClientPause::Unpause() {
  {
    MutexLock lock(&mu_);
    mode_.store(0, std::memory_order_relaxed);
    end_ms_.store(0, std::memory_order_relaxed);
  }
  if (resume_hook_) resume_hook_();
}

void ClientPause::ClearIfEnded(int64_t now_ms) {
  MutexLock lock(&mu_);
  if (end_ms_.load(std::memory_order_relaxed) <= now_ms) mode_.store(0, std::memory_order_relaxed);
}

bool MayWriteDuringPause(const CommandSpec& spec) {
  if (spec.flags & kWrite) return true;
  if ((spec.flags & kScript) && !(spec.flags & kReadOnly)) return true;
  return std::strcmp(spec.name, "publish") == 0 || std::strcmp(spec.name, "spublish") == 0;
}

bool HeldByPause(PauseMode mode, const CommandSpec* spec, bool exec_with_writes) {
  switch (mode) {
    case PauseMode::kNone:
      return false;
    case PauseMode::kAll:
      return true;
    case PauseMode::kWrite:
      return spec != nullptr && (MayWriteDuringPause(*spec) || exec_with_writes);
  }
  return false;
}

}  // namespace rockcache::server
