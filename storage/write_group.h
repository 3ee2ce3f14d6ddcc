// storage/write_group — group commit and transactions of RocksStore (internal to storage/).
//
// Internal: includes RocksDB, so only storage/*.cc may include it. storage::WriteGroup (store.h)
// is the contract; this file holds the plumbing between a Store method's WriteBatch and the
// RocksDB write:
// - PendingDeltas: the key-counter changes (TTL figures) a method notes while it builds its
//   batch (RocksStore::PutMeta/DeleteMeta), applied by its successful Write, or handed to the
//   group open on the thread.
// - TxOverlay: a transaction's pending writes, indexed (rocksdb::WriteBatchWithIndex), so the
//   reads of the transaction (RocksStore::DbGet / NewIter) see them merged over the database
//   while none of them is in RocksDB. Commit() writes the overlay's batch as ONE WriteBatch.
//
// Threads: everything here is thread-local to the thread that opened the group; nothing is shared.
#pragma once

#include <rocksdb/utilities/write_batch_with_index.h>
#include <rocksdb/write_batch.h>

#include "storage/rocks_store.h"

namespace rockcache::storage {

// TTL figure changes noted by PutMeta/DeleteMeta, applied by the next successful Write (see
// rocks_store.h). A method writes at most two databases (MOVE, COPY): four slots are plenty.
struct PendingDeltas {
  RocksStore::CounterDelta slots[4];
  int n = 0;
  bool empty() const { return n == 0; }
  void clear() { n = 0; }
  void Add(const RocksStore::CounterDelta& d) {
    for (int i = 0; i < n; ++i) {
      if (slots[i].db == d.db) {
        slots[i].expires += d.expires;
        slots[i].expire_sum += d.expire_sum;
        return;
      }
    }
    if (n < 4) slots[n++] = d;
  }
};
extern thread_local PendingDeltas tls_pending;

// The pending writes of one transaction (WriteGroup::BeginAtomic .. Commit), indexed for reads.
// Installed in tls_tx_overlay (rocks_store.h) while open. Owned by the write group.
class TxOverlay {
 public:
  explicit TxOverlay(const RocksStore* store)
      : store_(store), batch_(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/true) {}
  TxOverlay(const TxOverlay&) = delete;
  TxOverlay& operator=(const TxOverlay&) = delete;

  const RocksStore* store() const { return store_; }
  rocksdb::WriteBatchWithIndex* batch() { return &batch_; }
  // Records in the batch (what Commit will write).
  uint32_t count() { return batch_.GetWriteBatch()->Count(); }

 private:
  const RocksStore* const store_;
  rocksdb::WriteBatchWithIndex batch_;
};

}  // namespace rockcache::storage
