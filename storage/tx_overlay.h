// storage/tx_overlay — the pending writes of a transaction or an indexed write group, indexed so
// that the thread's reads see them before they are written (internal to storage/).
//
// Internal: includes RocksDB, so only storage/*.cc may include it. A TxOverlay is owned by the
// write group open on the thread (write_group.{h,cc}), which installs it in tls_tx_overlay
// (db_view.h) while it is open; RocksStore's reads (its DbView: DbGet / DbMultiGet / NewIter) then
// merge it over the database (tx_overlay.cc: TxGet / TxMultiGet / TxIter and the merged iterators).
//
// Threads: thread-local to the thread that opened the group; nothing is shared.
#pragma once

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/batch_records.h"
#include "storage/overlay_cursor.h"
#include "storage/rocks_store.h"

namespace rockcache::storage {

// The pending writes of one transaction (WriteGroup::BeginAtomic .. Commit) or indexed group
// (WriteGroup::BeginIndexed), readable before they are written. Installed in tls_tx_overlay
// (db_view.h) while open. Owned by the write group.
//
// It holds the bytes of the WriteBatch that Commit writes as one RocksDB write (a Store method's
// records are appended as they are: storage/batch_records.h), and beside it an ordered index
// of the keys written, per column family: each key's last write (a value, or a delete). Reads of
// the store see the index over the database (DbView::TxGet / TxMultiGet / TxIter):
// - a point read of a key not written reads the database, once: the overlay remembers what it
//   read (Recall), as the group holds the key for the overlay's life;
// - an iteration with no pending write in its bounds uses the database's iterator alone, one
//   with only deletes there (a run of pops) skips the deleted keys, and otherwise the database's
//   iterator and the index are merged (OverlayIterator, tx_overlay.cc);
// - the "database's iterator" of a read within one collection (NewIter with a collection, and
//   DbGetInOrder's point reads) is a cursor the overlay keeps for that collection until it is
//   destroyed (storage/overlay_cursor.h), so a run of pops steps instead of seeking each time.
// rocksdb::WriteBatchWithIndex did this before, at thousands of instructions per write to index
// (a quarter of a pipelined SADD's cost in an indexed group) and ~3,000-7,000 per step of its
// merged iterator (RocksDB 7.8). The index here costs one std::map insert per write (its node and
// key bytes from an arena) and one std::map step per merged step; it refers to values in the
// batch's bytes rather than copying them, so a transaction's big values are held once (as
// WriteBatchWithIndex held them).
class TxOverlay {
 public:
  // The last pending write of a key: a delete, or a value, which is where the Put record left
  // it at the end of the batch's bytes (not copied; see value()).
  struct Write {
    bool deleted = false;
    size_t value_offset = 0;
    size_t value_size = 0;
  };
  // Key -> its last pending write, in key order (BytewiseComparator's, every column family's).
  // Keys and nodes live in the overlay's arena (nothing is erased before the overlay goes).
  using KeyIndex = std::pmr::map<std::string_view, Write, std::less<>>;

  explicit TxOverlay(const DbView* store) : store_(store) {}
  ~TxOverlay();  // destroys the cursors (storage/overlay_cursor.cc)
  TxOverlay(const TxOverlay&) = delete;
  TxOverlay& operator=(const TxOverlay&) = delete;

  // The view whose reads merge this overlay (its RocksStore).
  const DbView* store() const { return store_; }
  // The pending records, in order, as WriteBatch bytes (storage/batch_records.h): what Commit
  // writes, as rocksdb::WriteBatch(rep()).
  const std::string& rep() const { return rep_; }
  // Moves rep() out (at commit, when nothing reads the overlay any more).
  std::string TakeRep() { return std::move(rep_); }
  uint32_t count() const { return count_; }

  rocksdb::Status Put(rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key,
                      const rocksdb::Slice& value) {
    const uint32_t cf_id = cf->GetID();
    const size_t value_offset = batch_records::AppendPut(&rep_, cf_id, View(key), View(value));
    Counted();
    Write& w = Note(cf_id, View(key));
    w.deleted = false;
    w.value_offset = value_offset;
    w.value_size = value.size();
    return rocksdb::Status::OK();
  }
  // Put of a value given in two pieces (batch_records::AppendPut): the write group's string
  // path, with no WriteBatch of its own.
  void Put(uint32_t cf_id, std::string_view key, std::string_view head, std::string_view tail) {
    const size_t value_offset = batch_records::AppendPut(&rep_, cf_id, key, head, tail);
    Counted();
    Write& w = Note(cf_id, key);
    w.deleted = false;
    w.value_offset = value_offset;
    w.value_size = head.size() + tail.size();
  }
  rocksdb::Status Delete(rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key) {
    const uint32_t cf_id = cf->GetID();
    batch_records::AppendDelete(&rep_, cf_id, View(key));
    Counted();
    Note(cf_id, View(key)).deleted = true;
    return rocksdb::Status::OK();
  }
  // Appends every record of `rep` (a Store method's writes: Records::Data(), header included)
  // and indexes them, as Put and Delete one by one would, without re-encoding them. False, with
  // nothing appended, when it holds a record other than Put, Delete and SingleDelete (a range
  // deletion): the caller replays it record by record.
  bool Append(std::string_view rep);
  // Savepoint: from here on, the index changes are logged so that RollbackToSavepoint() can
  // return the overlay to this state (records, index, count). Replaces any earlier savepoint.
  void SetSavepoint() {
    savepoint_ = true;
    savepoint_size_ = rep_.size();
    savepoint_count_ = count_;
    undo_.clear();
  }
  // Drops every record written since SetSavepoint() and restores each key's last write as it
  // was then. The cursors go (a cursor may have stepped over a key on the strength of an index
  // entry the rollback removes; see overlay_cursor.h) and so does the front window; what
  // Remember() holds stays true (the database did not change). REQUIRES: a savepoint, no lease
  // of a cursor out. The savepoint stays set at the same place.
  void RollbackToSavepoint();
  // The value of a pending Put: valid until the next Put or Delete (the batch may grow).
  rocksdb::Slice value(const Write& w) const {
    return rocksdb::Slice(rep_.data() + w.value_offset, w.value_size);
  }

  // The index of column family `cf_id`; nullptr when nothing was written to it.
  const KeyIndex* IndexOf(uint32_t cf_id) const {
    for (const auto& [id, index] : indexes_) {
      if (id == cf_id) return &index;
    }
    return nullptr;
  }
  // The last pending write of `key` in `cf_id`, or nullptr.
  const Write* Find(uint32_t cf_id, const rocksdb::Slice& key) const {
    const KeyIndex* index = IndexOf(cf_id);
    if (index == nullptr) return nullptr;
    auto it = index->find(std::string_view(key.data(), key.size()));
    return it == index->end() ? nullptr : &it->second;
  }

  // What is pending for `cf_id` within [lo, hi) (nullptr: unbounded).
  enum class Pending { kNone, kDeletesOnly, kPuts };
  Pending Within(uint32_t cf_id, const rocksdb::Slice* lo, const rocksdb::Slice* hi) const {
    const KeyIndex* index = IndexOf(cf_id);
    if (index == nullptr) return Pending::kNone;
    auto it = lo != nullptr ? index->lower_bound(std::string_view(lo->data(), lo->size()))
                            : index->begin();
    const std::string_view end = hi != nullptr ? std::string_view(hi->data(), hi->size()) : "";
    Pending found = Pending::kNone;
    for (; it != index->end() && (hi == nullptr || std::string_view(it->first) < end); ++it) {
      if (!it->second.deleted) return Pending::kPuts;
      found = Pending::kDeletesOnly;
    }
    return found;
  }

  // When the overlay holds more than one record, fills *out with what Commit should write
  // instead of rep(): each key's last write only, per column family in key order. The final
  // state is the same (the batch is applied atomically, so no reader sees the records between),
  // with one memtable insert per key instead of one per write (a pipeline of SETs or INCRs to
  // one hot key), each starting its skiplist search from the one before it (the insert hint,
  // batch_records::SortedByKey). False with one record: write rep().
  bool LastWritesInKeyOrder(rocksdb::WriteBatch* out) const;

  // A point read of the database made while the overlay is open: whether the key was there, and
  // its value (bytes in the overlay's arena).
  struct Remembered {
    bool found = false;
    std::string_view value;
  };
  // What the database held for `key` of `cf_id` when the overlay last read it (Remember), or
  // nullptr. Why it is still true: the group holds the stripes of every key it reads for the
  // overlay's whole life (as for the cursors, storage/overlay_cursor.h), so only the overlay
  // changes those keys, and a key the overlay wrote is decided by Find() before this is asked.
  // A pipeline of writes that change nothing (SADD or ZADD of a member already there, 50
  // clients' on one hot key) then reads the key's meta and the member once per overlay instead
  // of once per command.
  const Remembered* Recall(uint32_t cf_id, const rocksdb::Slice& key) const {
    for (const auto& [id, index] : reads_) {
      if (id != cf_id) continue;
      auto it = index.find(View(key));
      return it == index.end() ? nullptr : &it->second;
    }
    return nullptr;
  }
  // Remembers a database point read of `key` (nullptr value: not found), within
  // kMaxRemembered reads and kMaxRememberedBytes of values; beyond them reads are not kept.
  void Remember(uint32_t cf_id, const rocksdb::Slice& key, const rocksdb::Slice* value) {
    const size_t value_size = value != nullptr ? value->size() : 0;
    if (remembered_ >= kMaxRemembered || remembered_bytes_ + value_size > kMaxRememberedBytes) {
      return;
    }
    RememberedIndex* index = nullptr;
    for (auto& [id, reads] : reads_) {
      if (id == cf_id) index = &reads;
    }
    if (index == nullptr) index = &reads_.emplace_back(cf_id, RememberedIndex(&arena_)).second;
    auto it = index->lower_bound(View(key));
    if (it != index->end() && it->first == View(key)) return;  // the database did not change
    ++remembered_;
    remembered_bytes_ += value_size;
    Remembered& r = index->emplace_hint(it, CopyToArena(View(key)), Remembered())->second;
    r.found = value != nullptr;
    if (value != nullptr) r.value = CopyToArena(View(*value));
  }

  // The first live entries of one collection (sub-keys from its hint on, in key order) that the
  // last pop in this overlay read and did not take (RocksStore::FrontEntries, for SPOP and
  // ZPOPMIN). True only while nothing was written since that pop wrote its own records (count()
  // unchanged since StampFront) and for the same collection (key and version): any other write,
  // to any key, drops them.
  struct FrontWindow {
    std::string key;
    uint64_t version = 0;
    std::vector<std::string> members;
  };
  FrontWindow* FrontOf(std::string_view key, uint64_t version) {
    if (front_stamp_ != count_ || front_.version != version || front_.key != key) return nullptr;
    return &front_;
  }
  // A FrontWindow for (key, version), emptied, to fill; not valid until StampFront().
  FrontWindow* NewFront(std::string_view key, uint64_t version) {
    front_stamp_ = kNoStamp;
    front_.key.assign(key.data(), key.size());
    front_.version = version;
    front_.members.clear();
    return &front_;
  }
  // The entries are true now (after the pop's own writes) / no longer known to be.
  void StampFront() { front_stamp_ = count_; }
  void DropFront() { front_stamp_ = kNoStamp; }
  // Hands the window to the overlay that follows this one after its commit
  // (WriteGroup::CommitAndReindex): false when it is not true now (FrontOf would not return it).
  bool TakeFront(FrontWindow* out) {
    if (front_stamp_ != count_) return false;
    *out = std::move(front_);
    front_stamp_ = kNoStamp;
    return true;
  }
  // REQUIRES: `front` is true of the database now (nothing was written since TakeFront).
  void AdoptFront(FrontWindow front) {
    front_ = std::move(front);
    front_stamp_ = count_;
  }

  // The cursor over `collection` (a DataPrefix) in `cf`, kept for the overlay's life
  // (storage/overlay_cursor.h): created on first use; nullptr when kMaxCursors cursors are all
  // leased out. A returned cursor may be leased (the caller then reads without it).
  CollectionCursor* Cursor(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                           std::string_view collection);

 private:
  static constexpr size_t kMaxCursors = 4;
  // Point reads remembered per overlay (Remember): enough for a group's reads of one hot key and
  // a run of list elements read ahead for backward pops (DbView::ReadAheadForBackward).
  static constexpr size_t kMaxRemembered = 256;
  static constexpr size_t kMaxRememberedBytes = 64 * 1024;
  using RememberedIndex = std::pmr::map<std::string_view, Remembered, std::less<>>;

  static std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }
  void Counted() { batch_records::SetCount(&rep_, ++count_); }
  Write& Note(uint32_t cf_id, std::string_view key) {
    KeyIndex* index = nullptr;
    size_t position = 0;
    for (auto& [id, keys] : indexes_) {
      if (id == cf_id) {
        index = &keys;
        break;
      }
      ++position;
    }
    if (index == nullptr) index = &indexes_.emplace_back(cf_id, KeyIndex(&arena_)).second;
    auto it = index->lower_bound(key);
    if (it == index->end() || it->first != key) {
      it = index->emplace_hint(it, CopyToArena(key), Write());
      if (savepoint_) undo_.push_back(Undo{position, it->first, false, Write()});
    } else if (savepoint_) {
      undo_.push_back(Undo{position, it->first, true, it->second});
    }
    return it->second;
  }
  std::string_view CopyToArena(std::string_view bytes) {
    auto* copy = static_cast<char*>(arena_.allocate(bytes.empty() ? 1 : bytes.size(), 1));
    if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
    return std::string_view(copy, bytes.size());
  }

  const DbView* const store_;
  std::string rep_ = batch_records::EmptyRep();
  uint32_t count_ = 0;
  // The indexes' keys and nodes: one allocation per few KiB instead of two per key written.
  std::pmr::monotonic_buffer_resource arena_{4096};
  std::vector<std::pair<uint32_t, KeyIndex>> indexes_;  // a few column families
  std::vector<std::unique_ptr<CollectionCursor>> cursors_;
  std::vector<std::pair<uint32_t, RememberedIndex>> reads_;  // per column family; see Recall
  size_t remembered_ = 0, remembered_bytes_ = 0;
  static constexpr uint32_t kNoStamp = UINT32_MAX;
  // SetSavepoint's mark, and the index entries changed since (in order): an entry's state before
  // the change (`existed` false: the key was not in the index). `index`: position in indexes_.
  struct Undo {
    size_t index;
    std::string_view key;  // the index's own copy, in the arena
    bool existed;
    Write before;
  };
  bool savepoint_ = false;
  size_t savepoint_size_ = 0;
  uint32_t savepoint_count_ = 0;
  std::vector<Undo> undo_;
  FrontWindow front_;
  uint32_t front_stamp_ = kNoStamp;  // count() when front_ was last true; see FrontOf
};

}  // namespace rockcache::storage
