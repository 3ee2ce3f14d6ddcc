#include "server/metrics/slowlog.h"

namespace rockcache::server {

namespace {
constexpr size_t kMaxArgs = 32;
constexpr size_t kMaxArgBytes = 128;
}  // namespace

std::vector<std::string> SlowLog::TruncateArgs(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  size_t shown = argv.size() > kMaxArgs ? kMaxArgs - 1 : argv.size();
  for (size_t i = 0; i < shown; ++i) {
    const std::string& arg = argv[i];
    if (arg.size() > kMaxArgBytes) {
      out.push_back(arg.substr(0, kMaxArgBytes) + "... (" +
                    std::to_string(arg.size() - kMaxArgBytes) + " more bytes)");
    } else {
      out.push_back(arg);
    }
  }
  if (argv.size() > kMaxArgs) {
    out.push_back("... (" + std::to_string(argv.size() - shown) + " more arguments)");
  }
  return out;
}

void SlowLog::Add(SlowLogEntry entry, size_t max_len) {
  MutexLock lock(&mu_);
  entry.id = next_id_++;
  entries_.push_front(std::move(entry));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowLogEntry> SlowLog::Get(int64_t count) const {
  MutexLock lock(&mu_);
  size_t n = count < 0 ? entries_.size() : std::min(entries_.size(), static_cast<size_t>(count));
  return std::vector<SlowLogEntry>(entries_.begin(), entries_.begin() + static_cast<long>(n));
}

size_t SlowLog::size() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

void SlowLog::Reset() {
  MutexLock lock(&mu_);
  entries_.clear();
}

void SlowLog::Trim(size_t max_len) {
  MutexLock lock(&mu_);
  while (entries_.size() > max_len) entries_.pop_back();
}

}  // namespace rockcache::server
