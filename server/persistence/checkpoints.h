// Checkpoints: BGSAVE, SAVE and LASTSAVE over RocksDB checkpoints, and the figures INFO
// persistence shows.
//
// A save is a RocksDB checkpoint (storage::Store::CreateCheckpoint) in `<dir>/checkpoint-<unix
// ms>`: SST files hard-linked, the live WAL copied; writes never stop. The directory is a whole
// rockcache data directory: a server started with `dir` set to it serves the data as of the save.
// After a successful save, older `checkpoint-*` directories beyond `checkpoint-keep` are removed
// (oldest first), so repeated saves keep a bounded number, as Redis's one dump.rdb.
//
// BGSAVE runs the checkpoint on a thread of its own (neither a network thread nor a worker);
// SAVE runs it on the calling worker. One save at a time: a second one is refused while one runs.
// Every method is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <thread>

#include "config/mutex.h"
#include "config/status.h"
#include "config/thread_annotations.h"

namespace rockcache::config {
class Config;
}
namespace rockcache::storage {
class Store;
}

namespace rockcache::server {

class Checkpoints {
 public:
  // `config` gives `dir` and `checkpoint-keep` at each save. Both outlive this object.
  Checkpoints(config::Config* config, storage::Store* store);
  ~Checkpoints();  // Stop()
  Checkpoints(const Checkpoints&) = delete;
  Checkpoints& operator=(const Checkpoints&) = delete;

  enum class Start { kStarted, kInProgress, kStopped };
  // BGSAVE: starts a checkpoint on a background thread and returns at once (kInProgress while
  // another save runs, kStopped after Stop()). `changes` is the server's write count now
  // (rdb_changes_since_last_save counts from it once the save succeeds). Never blocks on the disk.
  Start StartBackground(uint64_t changes);
  // SAVE: the checkpoint on the calling thread. BLOCKS until it is written. Busy while another
  // save runs, Shutdown after Stop(); the store's error when the checkpoint fails.
  [[nodiscard]] Status SaveBlocking(uint64_t changes);
  // Waits for a background save to finish; later saves are refused. For shutdown, before the
  // store closes.
  void Stop();

  struct Figures {
    bool in_progress = false;
    int64_t current_started_ms = 0;  // set while in_progress
    int64_t last_save_unix = 0;      // LASTSAVE: start-up time until the first successful save
    bool last_bgsave_ok = true;
    int64_t last_bgsave_seconds = -1;  // duration of the last background save; -1 = none yet
    uint64_t saves = 0;                // successful saves, background or not
    uint64_t changes_at_last_save = 0;
    std::string last_path;  // the last successful checkpoint's directory
    uint64_t last_sequence = 0;
  };
  Figures Read() const;
  int64_t LastSaveUnix() const;

  // The directory a save started at `unix_ms` writes: `<dir>/checkpoint-<unix_ms>`.
  static std::string PathFor(const std::string& dir, int64_t unix_ms);

 private:
  // Writes one checkpoint and records its outcome. BLOCKS. REQUIRES: running_ was set by the
  // caller.
  Status Save(bool background, uint64_t changes, int64_t started_ms);
  // Removes the oldest `checkpoint-*` directories of `dir` beyond `keep` (0 = keep all).
  static void Prune(const std::string& dir, int64_t keep);

  config::Config* const config_;
  storage::Store* const store_;
  mutable Mutex mu_;
  bool running_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::thread thread_ GUARDED_BY(mu_);  // the last background save's; joined before the next
  Figures figures_ GUARDED_BY(mu_);
};

}  // namespace rockcache::server
