// storage/overlay_cursor — a database iterator over one collection that a TxOverlay keeps
// between reads, so a run of pops in one group or transaction does not pay a new iterator and a
// full seek each (internal to storage/; includes RocksDB).
//
// Why: inside an indexed group (a pipeline of writes to one key) or a transaction, every ZPOPMIN
// read its sorted set's head with a new RocksDB iterator and a Seek (~10,000 instructions: the
// merging iterator seeks the memtable and every level), then again to move the live-range hint;
// every LPOP read its head element with a point Get (a full memtable search). The next pop's
// entry is the database's next key, one Next() away.
//
// Why it is correct: the overlay lives between two commits of its group, and the group holds the
// key stripes of every key it reads (cache::KeyLocks) for that whole time, so nothing but the
// overlay itself changes a collection the group reads. An iterator created during the overlay's
// life therefore shows exactly what a new one would, for that collection, until the overlay is
// written and destroyed (which destroys its cursors). Reads with an explicit snapshot never use a
// cursor.
//
// What a cursor remembers: `origin`, the target of its last real Seek, and `passed`, every
// database key in [origin, here) — `here` being the key the iterator is on — in the order it was
// stepped over, with its value when the value is small. A Seek(t) with origin <= t <= here is
// then answered without the database: it replays the passed entries from the first one >= t that
// the overlay does not decide, then goes on from `here`. A passed key kept without its value must
// have an entry in the overlay's index (a pending delete or put) by then: skipping such keys never
// changes a read, since the overlay decides them (SkipPendingDeletes hides a deleted key,
// OverlayIterator shows the overlay's version, a point read asks the overlay first). A target a few
// keys ahead is reached with Next(); anything else is a real Seek. The same holds backward
// (SeekForPrev, Prev: the keys in (here, origin]), for RPOP and ZPOPMAX; turning round forgets
// the memory. The replay is what lets SPOP, which re-reads the members it looked at and left,
// reuse one seek across a pipeline of pops.
//
// Threads: the thread that owns the overlay.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rockcache::storage {

class TxOverlay;

class CollectionCursor {
 public:
  // An iterator over the keys of `cf` that start with `collection` (a DataPrefix), on `db`'s
  // latest state.
  CollectionCursor(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, std::string_view collection);
  CollectionCursor(const CollectionCursor&) = delete;
  CollectionCursor& operator=(const CollectionCursor&) = delete;

  uint32_t cf_id() const { return cf_id_; }
  const std::string& collection() const { return lo_; }
  // True for a key of this cursor's collection.
  bool Holds(const rocksdb::Slice& key) const {
    return key.size() >= lo_.size() && std::string_view(key.data(), lo_.size()) == lo_;
  }
  // A lease is out (see NewLease): a second reader of the collection gets a plain iterator.
  bool leased() const { return leased_; }

  // Positions the cursor at the first key >= `target` (a key of the collection), reusing what it
  // knows (see top). `tx` is the overlay that owns the cursor.
  void SeekForward(const rocksdb::Slice& target, const TxOverlay& tx);
  // The same backward: the cursor at the last key <= `target`.
  void SeekBackward(const rocksdb::Slice& target, const TxOverlay& tx);
  // The last key of the column family (a collection whose end is the column family's end); not
  // remembered.
  void SeekToLastOfFamily();
  // Next() / Prev(), remembering the entry stepped over (a step against the remembered
  // direction voids the memory).
  void Next() { Step(Dir::kForward); }
  void Prev() { Step(Dir::kBackward); }
  // Where the cursor is: a replayed entry, else the database iterator's.
  bool Valid() const { return replay_ < passed_.size() || base_->Valid(); }
  rocksdb::Slice key() const {
    return replay_ < passed_.size() ? rocksdb::Slice(passed_[replay_].key) : base_->key();
  }
  rocksdb::Slice value() const {
    return replay_ < passed_.size() ? rocksdb::Slice(passed_[replay_].value) : base_->value();
  }
  rocksdb::Status status() const { return base_->status(); }

  // An iterator for one read within [lo, hi) (nullptr: the collection's bound), which hands the
  // cursor back when destroyed. REQUIRES: !leased(); the bounds lie within the collection.
  std::unique_ptr<rocksdb::Iterator> NewLease(const TxOverlay* tx, const rocksdb::Slice* lo,
                                              const rocksdb::Slice* hi);

  // Counters for tests: real seeks, and seeks answered from memory or by stepping.
  uint64_t seeks() const { return seeks_; }
  uint64_t reused() const { return reused_; }

 private:
  friend class CursorLease;
  static constexpr size_t kMaxPassed = 64;       // steps remembered before the memory is dropped
  static constexpr size_t kMaxValueBytes = 256;  // a bigger value is not kept
  static constexpr size_t kMaxPassedBytes = 16 << 10;  // nor values beyond this many in all
  static constexpr int kMaxSteps = 4;  // a target this many keys ahead is stepped to
  static constexpr size_t kNotReplaying = SIZE_MAX;

  enum class Dir { kNone, kForward, kBackward };
  struct Passed {
    std::string key;
    std::string value;  // empty unless has_value
    bool has_value = false;
  };
  // Answers a seek to `target` in direction `dir` from memory when it can (see top).
  bool Reuse(const rocksdb::Slice& target, Dir dir, const TxOverlay& tx);
  // Stops a replay: the database iterator is moved to the replayed key (a real seek).
  void Materialize();
  void Forget();
  void RealSeek(const rocksdb::Slice& target, Dir dir);
  void Step(Dir dir);

  const uint32_t cf_id_;
  std::string lo_, hi_;  // the collection's bounds, which base_'s ReadOptions point at
  rocksdb::Slice lo_slice_, hi_slice_;
  std::unique_ptr<rocksdb::Iterator> base_;
  Dir dir_ = Dir::kNone;        // which memory holds (none: a real seek comes next)
  std::string origin_;          // the target of the last real seek in that direction
  std::vector<Passed> passed_;  // every key in [origin_, here) (or (here, origin_]), in step order
  size_t passed_bytes_ = 0;     // values kept in passed_
  size_t replay_ = kNotReplaying;  // < passed_.size(): the cursor is on passed_[replay_]
  bool leased_ = false;
  uint64_t seeks_ = 0, reused_ = 0;
};

}  // namespace rockcache::storage
