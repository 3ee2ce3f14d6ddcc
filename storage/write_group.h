// storage/write_group — group commit and transactions of RocksStore (internal to storage/).
//
// Internal: includes RocksDB, so only storage/*.cc may include it. storage::WriteGroup (store.h)
// is the contract; this file and write_group.cc hold the plumbing between a Store method's
// WriteBatch and the RocksDB write:
// - PendingDeltas: the key-counter changes (TTL figures) a method notes while it builds its
//   batch (RocksStore::PutMeta/DeleteMeta), applied by its successful Write, or handed to the
//   group open on the thread.
// - The group's TxOverlay (tx_overlay.h): a transaction's (or indexed group's) pending writes,
//   indexed, so its reads (DbView::DbGet / NewIter, db_view.h) see them merged over the database
//   while none of them is in RocksDB. Commit() writes the overlay's batch as ONE WriteBatch.
//
// Threads: everything here is thread-local to the thread that opened the group; nothing is shared.
#pragma once

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

}  // namespace rockcache::storage
