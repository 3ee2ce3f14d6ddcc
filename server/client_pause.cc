#include "server/client_pause.h"

#include <algorithm>
#include <cstring>

#include "server/commands/command.h"

namespace rockcache::server {

void ClientPause::Pause(PausePurpose purpose, int64_t now_ms, int64_t end_ms, PauseMode mode) {
  MutexLock lock(&mu_);
  PurposePause& pause = purposes_[static_cast<int>(purpose)];
  // A pause that has ended counts as none: the new one replaces it.
  const bool ended = pause.end_ms <= now_ms;
  pause.mode = std::max(ended ? 0 : pause.mode, static_cast<int>(mode));
  pause.end_ms = ended ? end_ms : std::max(end_ms, pause.end_ms);
  Combine(now_ms);
}

void ClientPause::Unpause(PausePurpose purpose, int64_t now_ms) {
  {
    MutexLock lock(&mu_);
    purposes_[static_cast<int>(purpose)] = PurposePause();
    Combine(now_ms);
  }
  if (resume_hook_) resume_hook_();
}

void ClientPause::ClearIfEnded(int64_t now_ms) {
  MutexLock lock(&mu_);
  Combine(now_ms);
}

void ClientPause::Combine(int64_t now_ms) {
  int mode = 0;
  int64_t end = 0;
  for (const PurposePause& pause : purposes_) {
    if (pause.mode == 0 || pause.end_ms <= now_ms) continue;
    mode = std::max(mode, pause.mode);
    end = end == 0 ? pause.end_ms : std::min(end, pause.end_ms);
  }
  mode_.store(mode, std::memory_order_relaxed);
  end_ms_.store(end, std::memory_order_relaxed);
}

PauseMode ClientPause::ModeAfterEarliestEnd(int64_t now_ms) const {
  MutexLock lock(&mu_);
  int mode = 0;
  for (const PurposePause& pause : purposes_) {
    if (pause.end_ms > now_ms) mode = std::max(mode, pause.mode);
  }
  return static_cast<PauseMode>(mode);
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
