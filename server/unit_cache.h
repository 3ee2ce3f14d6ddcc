// The cache as an atomic unit sees it. A unit — EXEC (server/tx/transaction.h), a script, a
// segment of scripts that commit together (server/scripting/script_unit.h) — writes nothing
// other clients can observe before its commit, yet its commands should find their keys cached:
// a script's INCR of a cached counter needs no RocksDB read. So what the unit changes goes to a
// staging cache of the worker's own and reaches the shared cache only after the commit.
//
// The rules (the coherence discipline of server/executor.h, for a unit):
// - The unit's caller holds the key stripes of every key the unit touches and a write window
//   over them, from before its first command until after Publish or Discard. So nobody else
//   changes those keys' shared entries meanwhile (fills from the network threads are refused
//   while the window is open): the shared cache keeps their committed state, which is what the
//   network threads go on answering from, without locks.
// - A key becomes staged at the unit's first write of it (Enter): a copy of its shared entry
//   (a string or hash or list head of at most kMaxCopyBytes, or a negative entry) goes into the
//   staging cache; the shared entry is left as it is. Every later command of the unit that
//   touches a staged key runs against the staging cache (Call sets CommandContext::cache to it),
//   which the handlers keep coherent with the unit's own view of storage (its overlay) exactly as
//   they keep the shared cache coherent with RocksDB. A command that touches no staged key uses
//   the shared cache as a worker's command does: its keys hold their committed values there.
// - Publish, after the unit's commit succeeded (still under its locks and window): each staged
//   key's staging entry replaces its shared one, or the shared one is erased when the staging
//   cache has none (never copied, evicted, or dropped by a rollback). Discard (the unit rolled
//   back, or its commit failed): the staging entries are dropped; the shared cache already holds
//   the committed state.
// - RollbackToSavepoint (one script of a shared segment rolled back): every staging entry is
//   dropped; the keys stay staged, so Publish erases them from the shared cache (conservative:
//   the staging cache keeps no history to roll back to).
// - DropAll (a command on every key: FLUSHALL, FLUSHDB, SWAPDB): clears the shared cache and
//   forgets the staged keys. REQUIRES: the unit's writes so far are committed (the units commit
//   before such a command runs).
//
// Threads: worker threads; one UnitCache per thread, reused unit after unit (installed by a
// Scope). The staging cache is the thread's own: no other thread ever looks into it.
#pragma once

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string>
#include <string_view>
#include <vector>

#include "server/flat_key_set.h"

namespace rockcache::cache {
class Cache;
}

namespace rockcache::server {

class UnitCache {
 public:
  // The largest entry (cache::Cache::Charge) copied into the staging cache when a key is staged:
  // a bigger one is not copied (the unit's command reads storage instead), so that staging a key
  // costs no more than its write does.
  static constexpr size_t kMaxCopyBytes = 4096;

  // The running unit's cache on this thread, or nullptr (no unit, or the cache is off).
  static UnitCache* Current();

  // Installs this thread's UnitCache for one unit over the shared cache `shared` (nullptr: no
  // unit cache, Current() stays nullptr). A Scope inside a running unit's (a script queued in
  // EXEC) does nothing: the outer unit's cache serves both. On destruction, Discard unless
  // Publish ran.
  class Scope {
   public:
    explicit Scope(cache::Cache* shared);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

    // The unit's end, by its runner: after a successful commit / after a rollback or a failed
    // commit. Nothing for a Scope that installed nothing.
    void Publish(int64_t now_ms) {
      if (installed_ != nullptr) installed_->Publish(now_ms);
    }
    void Discard() {
      if (installed_ != nullptr) installed_->Discard();
    }

   private:
    UnitCache* installed_ = nullptr;
  };

  // Call, in kAtomic mode, before a kWrite or kCacheRead command on `keys` of the thread's
  // database (CurrentDb): returns the cache the command uses — the staging cache for a write and
  // for a read of a staged key, whose keys are all staged then (see the top), the shared one
  // otherwise.
  cache::Cache* Enter(const std::vector<std::string_view>& keys, bool write, int64_t now_ms);

  // See the top. Publish and Discard end the unit (nothing staged after them).
  void Publish(int64_t now_ms);
  void Discard();
  void RollbackToSavepoint();
  void DropAll();

  // Introspection (DEBUG CACHE-VERIFY): whether the running unit staged `key` of physical
  // database `db`, and the staging cache (its entries are the unit's view of their keys).
  bool IsStaged(std::string_view key, int db) const;
  cache::Cache* staging() const { return staging_.get(); }
  // How many keys the running unit has staged.
  size_t staged_keys() const { return keys_.size(); }

 private:
  UnitCache() = default;
  void Begin(cache::Cache* shared);
  void Stage(std::string_view key, int db, int64_t now_ms);
  void EraseStagingEntries();
  void Reset();

  cache::Cache* shared_ = nullptr;
  std::unique_ptr<cache::Cache> staging_;
  bool active_ = false;
  // The staged keys, each once, with their physical databases. Their bytes are copied into
  // key_bytes_, where they stay put until Reset (staged_ holds views of them too): a unit's keys
  // usually fit in key_buffer_, which the next unit reuses, so staging a key allocates nothing
  // (a std::string per key allocated and freed one for each key over 15 bytes: ~1% of a worker's
  // perf samples running EVALSHA INCR+EXPIRE).
  std::vector<std::string_view> keys_;
  alignas(alignof(std::max_align_t)) char key_buffer_[2048];
  std::pmr::monotonic_buffer_resource key_bytes_{key_buffer_, sizeof(key_buffer_)};
  std::vector<int> dbs_;
  // Whether the shared cache held an entry for keys_[i] when it was staged. One that held none
  // gains none before Publish (the unit's window keeps fills out), which then has nothing to
  // erase there.
  std::vector<bool> shared_had_;
  std::vector<FlatKeySet> staged_;  // per physical database: views into keys_
};

}  // namespace rockcache::server
