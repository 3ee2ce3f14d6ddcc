// storage/data_dir — what lives in a data directory (`dir`) and getting it ready at start-up.
//
// Layout. Everything the server writes is inside `dir`, so that every rename between these
// entries stays on one file system (`dir` may be a volume's mount point, e.g. the Docker
// image's /data, whose parent is another file system):
//   dir/LOCK                     held (fcntl write lock) by the one server using `dir`
//   dir/db/                      the RocksDB database
//   dir/checkpoint-<unix ms>/    BGSAVE / SAVE checkpoints (server/persistence/checkpoints.h)
//   dir/sync-checkpoint-<n>/     primary: a checkpoint being sent to a replica (full sync)
//   dir/sync/                    replica: the primary's checkpoint being received
//   dir/replaced/                replica: its old database until the received one is committed
//   dir/discarded/               replica: the old database being removed after the commit
//   dir/db.migrating/            start-up: an old-layout database moving into dir/db
//
// Before this layout the RocksDB files (CURRENT, MANIFEST-*, OPTIONS-*, *.sst, *.log, archive/,
// ...) lay at the root of `dir` and a full sync staged beside it (`<dir>.sync`,
// `<dir>.replaced`, `<dir>.checkpoint-*`): outside a mount point, where the renames fail.
//
// Migration of an old-layout `dir` (CURRENT at its root): the database is moved rather than
// opened in place, because a replica's full sync swaps the database as one directory (two
// renames), which cannot be done to a database that is `dir` itself without staging outside it.
// Crash safety (kill -9 at any point): the RocksDB entries of the root are renamed one by one
// into dir/db.migrating (each rename atomic; a file is in exactly one of the two places), the
// directories are fsynced, then dir/db.migrating is renamed to dir/db in one step. A start that
// finds dir/db.migrating knows a migration was cut short and finishes it: moves whatever RocksDB
// entries are still at the root, then renames. Until that last rename there is no dir/db, so a
// half-moved database is never opened. LOCK stays at the root (it becomes the directory's lock).
// Only RocksDB's own names are moved (CURRENT, IDENTITY, LOG, LOG.old.*, MANIFEST-*, OPTIONS-*,
// METADB-*, archive, and <number>.<anything>); the checkpoint-* directories and any other file stay
// where they are. A `dir` with both CURRENT at its root and dir/db is refused (which one is the
// data is the operator's call). The same migration opens a BGSAVE checkpoint used as `dir` (a
// checkpoint is an old-layout directory).
//
// Leftovers of a crash: dir/sync, dir/sync-checkpoint-* and dir/discarded are removed at
// start-up (a full sync starts over). A replica's swap (RocksStore::ReplaceDatabase) renames
// dir/db to dir/replaced and dir/sync to dir/db, opens it and writes the replication state that
// goes with the new data: that fsynced write is the commit point, after which dir/replaced is
// renamed to dir/discarded (one step) and removed. So dir/replaced at start-up is always the
// database of a swap that did not commit: the new copy at dir/db, if any, is removed (its data
// does not match the replication state it holds) and dir/replaced is put back, with its own
// state; the replica then syncs again from it.
//
// Threads: Prepare runs once, at open, before anything else uses `dir`. The path helpers are pure.
#pragma once

#include <cstdint>
#include <string>

#include "config/status.h"

namespace rockcache::storage::data_dir {

// `dir` without trailing slashes ("/" stays "/").
std::string Trimmed(const std::string& dir);
// dir/db: the RocksDB database.
std::string DatabasePath(const std::string& dir);
// dir/sync: a replica receives the primary's checkpoint here.
std::string ReceivedSyncPath(const std::string& dir);
// dir/replaced: a replica's old database during the swap (ReplaceDatabase).
std::string ReplacedPath(const std::string& dir);
// dir/discarded: the old database once the swap committed, being removed.
std::string DiscardedPath(const std::string& dir);
// dir/sync-checkpoint-<n>: a primary's checkpoint for a replica's full sync (`n` distinct per
// sync within a process; the previous processes' ones are removed by Prepare).
std::string SyncCheckpointPath(const std::string& dir, uint64_t n);

// The fcntl write lock on dir/LOCK, held for the owner's lifetime: a second server on the same
// `dir` (this release or an older one, whose RocksDB locks the same file) is refused. Move-only.
class DirLock {
 public:
  DirLock() = default;
  ~DirLock() { Release(); }
  DirLock(DirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirLock& operator=(DirLock&& other) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

  // Creates `dir` if missing and takes the lock. BLOCKS on the file system (never on the lock:
  // Busy when another process holds it).
  [[nodiscard]] Status Acquire(const std::string& dir);
  void Release();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Gets `dir` ready for opening DatabasePath(dir): recovers a cut swap, removes sync leftovers,
// migrates an old layout (see above). REQUIRES: the caller holds `dir`'s DirLock. BLOCKS on the
// file system (renames, fsyncs, removing leftovers). *notes (when not null) receives one line
// per thing done, for the log.
[[nodiscard]] Status Prepare(const std::string& dir, std::string* notes = nullptr);

// fsyncs the directory `path` (a rename's durability). IOError on failure.
[[nodiscard]] Status SyncDirectory(const std::string& path);

}  // namespace rockcache::storage::data_dir
