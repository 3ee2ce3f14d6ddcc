// storage/tx_overlay — the pending writes of a transaction or an indexed write group, indexed so
// that the thread's reads see them before they are written (internal to storage/).
//
// Internal: includes RocksDB, so only storage/*.cc may include it. A TxOverlay is owned by the
// write group open on the thread (write_group.{h,cc}), which installs it in tls_tx_overlay
// (rocks_store.h) while it is open; RocksStore's reads (DbGet / DbMultiGet / NewIter) then merge it
// over the database (tx_overlay.cc: TxGet / TxMultiGet / TxIter and the merged iterators).
//
// Threads: thread-local to the thread that opened the group; nothing is shared.
#pragma once

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/overlay_cursor.h"
#include "storage/rocks_store.h"

namespace rockcache::storage {

// The pending writes of one transaction (WriteGroup::BeginAtomic .. Commit) or indexed group
// (WriteGroup::BeginIndexed), readable before they are written. Installed in tls_tx_overlay
// (rocks_store.h) while open. Owned by the write group.
//
// It holds the WriteBatch that Commit writes as one RocksDB write, and beside it an ordered index
// of the keys written, per column family: each key's last write (a value, or a delete). Reads of
// the store see the index over the database (RocksStore::TxGet / TxMultiGet / TxIter):
// - a point read of a key not written reads the database alone;
// - an iteration with no pending write in its bounds uses the database's iterator alone, one
//   with only deletes there (a run of pops) skips the deleted keys, and otherwise the database's
//   iterator and the index are merged (OverlayIterator, tx_overlay.cc);
// - the "database's iterator" of a read within one collection (NewIter with a collection, and
//   DbGetInOrder's point reads) is a cursor the overlay keeps for that collection until it is
//   destroyed (storage/overlay_cursor.h), so a run of pops steps instead of seeking each time.
// rocksdb::WriteBatchWithIndex did this before, at thousands of instructions per write to index
// (a quarter of a pipelined SADD's cost in an indexed group) and ~3,000-7,000 per step of its
// merged iterator (RocksDB 7.8). The index here costs one std::map insert per write and one
// std::map step per merged step; it refers to values in the batch's bytes rather than copying
// them, so a transaction's big values are held once (as WriteBatchWithIndex held them).
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
  using KeyIndex = std::map<std::string, Write, std::less<>>;

  explicit TxOverlay(const RocksStore* store) : store_(store) {}
  ~TxOverlay();  // destroys the cursors (storage/overlay_cursor.cc)
  TxOverlay(const TxOverlay&) = delete;
  TxOverlay& operator=(const TxOverlay&) = delete;

  const RocksStore* store() const { return store_; }
  // What Commit writes, every record in order.
  rocksdb::WriteBatch* write_batch() { return &batch_; }
  uint32_t count() const { return batch_.Count(); }

  rocksdb::Status Put(rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key,
                      const rocksdb::Slice& value) {
    rocksdb::Status s = batch_.Put(cf, key, value);
    if (!s.ok()) return s;
    // A Put record ends with its value: [varint32 length][value].
    Write& w = Note(cf, key);
    w.deleted = false;
    w.value_offset = batch_.Data().size() - value.size();
    w.value_size = value.size();
    return s;
  }
  rocksdb::Status Delete(rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key) {
    rocksdb::Status s = batch_.Delete(cf, key);
    if (!s.ok()) return s;
    Note(cf, key).deleted = true;
    return s;
  }
  // The value of a pending Put: valid until the next Put or Delete (the batch may grow).
  rocksdb::Slice value(const Write& w) const {
    return rocksdb::Slice(batch_.Data().data() + w.value_offset, w.value_size);
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

  // When some key was written more than once, fills *out with what Commit should write instead
  // of write_batch(): each key's last write only, per column family in key order. The final
  // state is the same (the batch is applied atomically, so no reader sees the records between),
  // with one memtable insert per key instead of one per write (a pipeline of SETs or INCRs to
  // one hot key). False when every record is a different key's: write write_batch().
  bool LastWritesOnly(rocksdb::WriteBatch* out) const;

  // The cursor over `collection` (a DataPrefix) in `cf`, kept for the overlay's life
  // (storage/overlay_cursor.h): created on first use; nullptr when kMaxCursors cursors are all
  // leased out. A returned cursor may be leased (the caller then reads without it).
  CollectionCursor* Cursor(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                           std::string_view collection);

 private:
  static constexpr size_t kMaxCursors = 4;

  Write& Note(rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key) {
    const uint32_t cf_id = cf->GetID();
    KeyIndex* index = nullptr;
    for (auto& [id, keys] : indexes_) {
      if (id == cf_id) index = &keys;
    }
    if (index == nullptr) {
      index = &indexes_.emplace_back(cf_id, KeyIndex()).second;
      index_cfs_.push_back(cf);
    }
    const std::string_view k(key.data(), key.size());
    auto it = index->lower_bound(k);
    if (it == index->end() || it->first != k) it = index->emplace_hint(it, std::string(k), Write());
    return it->second;
  }

  const RocksStore* const store_;
  rocksdb::WriteBatch batch_;
  std::vector<std::pair<uint32_t, KeyIndex>> indexes_;   // a few column families
  std::vector<rocksdb::ColumnFamilyHandle*> index_cfs_;  // indexes_[i]'s column family
  std::vector<std::unique_ptr<CollectionCursor>> cursors_;
};

}  // namespace rockcache::storage
