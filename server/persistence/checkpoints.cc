#include "server/persistence/checkpoints.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "config/config.h"
#include "server/thread_name.h"
#include "storage/store.h"

namespace rockcache::server {
namespace {

constexpr const char* kPrefix = "checkpoint-";

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The time in a "checkpoint-<unix ms>" name, or -1 for any other name.
int64_t CheckpointTime(const std::string& name) {
  const std::string prefix = kPrefix;
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size()) return -1;
  int64_t ms = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || ms > (INT64_MAX - 9) / 10) return -1;
    ms = ms * 10 + (name[i] - '0');
  }
  return ms;
}

}  // namespace

Checkpoints::Checkpoints(config::Config* config, storage::Store* store)
    : config_(config), store_(store) {
  MutexLock lock(&mu_);
  figures_.last_save_unix = UnixMs() / 1000;  // as Redis: the data counts as saved at start-up
}

Checkpoints::~Checkpoints() { Stop(); }

std::string Checkpoints::PathFor(const std::string& dir, int64_t unix_ms) {
  return (std::filesystem::path(dir) / (kPrefix + std::to_string(unix_ms))).string();
}

Checkpoints::Start Checkpoints::StartBackground(uint64_t changes) {
  std::thread finished;
  {
    MutexLock lock(&mu_);
    if (stopped_) return Start::kStopped;
    if (running_) return Start::kInProgress;
    running_ = true;
    const int64_t started_ms = UnixMs();
    figures_.in_progress = true;
    figures_.current_started_ms = started_ms;
    finished = std::move(thread_);  // done (running_ was false): joined below, at once
    thread_ = std::thread([this, changes, started_ms] {
      NameThisThread("rc-checkpoint");
      [[maybe_unused]] Status s = Save(true, changes, started_ms);
    });
  }
  if (finished.joinable()) finished.join();
  return Start::kStarted;
}

Status Checkpoints::SaveBlocking(uint64_t changes) {
  {
    MutexLock lock(&mu_);
    if (stopped_) return Status::Shutdown();
    if (running_) return Status::Busy("Background save already in progress");
    running_ = true;
  }
  return Save(false, changes, UnixMs());
}

Status Checkpoints::Save(bool background, uint64_t changes, int64_t started_ms) {
  const std::string dir = config_->GetString("dir");
  const int64_t keep = config_->GetInt("checkpoint-keep");
  // A fresh name: two saves in one millisecond (SAVE right after BGSAVE) get distinct ones.
  int64_t stamp = started_ms;
  std::error_code ec;
  while (std::filesystem::exists(PathFor(dir, stamp), ec)) ++stamp;
  const std::string path = PathFor(dir, stamp);
  spdlog::info("{} started: {}", background ? "Background saving" : "DB saving", path);
  uint64_t sequence = 0;
  Status s = store_->CreateCheckpoint(path, &sequence);
  if (const int64_t delay_us = config_->GetInt("rdb-key-save-delay"); background && delay_us > 0) {
    const StatusOr<int64_t> keys = store_->DbSize();
    if (keys.ok()) std::this_thread::sleep_for(std::chrono::microseconds(delay_us * *keys));
  }
  const int64_t done_ms = UnixMs();
  if (s.ok()) {
    spdlog::info("Checkpoint {} written in {} ms (RocksDB sequence {})", path, done_ms - started_ms,
                 sequence);
    Prune(dir, keep);
  } else {
    spdlog::warn("Checkpoint {} failed: {}", path, s.ToString());
  }
  MutexLock lock(&mu_);
  running_ = false;
  figures_.in_progress = false;
  if (s.ok()) {
    figures_.last_save_unix = done_ms / 1000;
    figures_.changes_at_last_save = changes;
    figures_.last_path = path;
    figures_.last_sequence = sequence;
    ++figures_.saves;
  }
  if (background) {
    figures_.last_bgsave_ok = s.ok();
    figures_.last_bgsave_seconds = (done_ms - started_ms) / 1000;
  } else if (s.ok()) {
    figures_.last_bgsave_ok = true;  // as Redis: a good SAVE clears a failed BGSAVE's status
  }
  return s;
}

void Checkpoints::Prune(const std::string& dir, int64_t keep) {
  if (keep <= 0) return;
  std::vector<std::pair<int64_t, std::filesystem::path>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const int64_t ms = CheckpointTime(entry.path().filename().string());
    if (ms >= 0 && entry.is_directory(ec)) found.emplace_back(ms, entry.path());
  }
  if (found.size() <= static_cast<size_t>(keep)) return;
  std::sort(found.begin(), found.end());
  for (size_t i = 0; i + static_cast<size_t>(keep) < found.size(); ++i) {
    std::filesystem::remove_all(found[i].second, ec);
    if (ec) {
      spdlog::warn("removing old checkpoint {}: {}", found[i].second.string(), ec.message());
    } else {
      spdlog::info("Removed old checkpoint {} (checkpoint-keep {})", found[i].second.string(),
                   keep);
    }
  }
}

void Checkpoints::Stop() {
  std::thread thread;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

Checkpoints::Figures Checkpoints::Read() const {
  MutexLock lock(&mu_);
  return figures_;
}

int64_t Checkpoints::LastSaveUnix() const {
  MutexLock lock(&mu_);
  return figures_.last_save_unix;
}

}  // namespace rockcache::server
