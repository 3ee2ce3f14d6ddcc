// storage/db_view — the calling thread's view of rockcache's RocksDB database: RocksStore's one
// door for reading a key, a data entry or a range (internal to storage/).
//
// Internal: includes RocksDB, so only storage/*.cc may include it. RocksStore is a DbView; every
// read in storage/ goes through DbGet / DbMultiGet / NewIter / DbGetInOrder. Outside a
// transaction or an indexed write group they are plain RocksDB reads (one thread-local load
// more). Inside one, the group's TxOverlay (tx_overlay.h) is installed in tls_tx_overlay, and the
// reads merge its pending writes over the database, so the group reads its own writes while
// none of them is in RocksDB until its commit writes them as one batch (the Tx* slow paths live
// in tx_overlay.cc).
//
// Threads: any thread; what is thread-local is the overlay, never shared. An overlay belongs to
// one view (TxOverlay::store()): another store's reads on the same thread go straight to its own
// database.
#pragma once

#include <rocksdb/db.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "storage/rocks_support.h"  // ReadOrder

namespace rockcache::storage {

class TxOverlay;  // tx_overlay.h
// The transaction overlay open on the calling thread, or nullptr (see the top of this file).
inline thread_local TxOverlay* tls_tx_overlay = nullptr;

class DbView {
 protected:
  DbView() = default;
  ~DbView() = default;
  DbView(const DbView&) = delete;
  DbView& operator=(const DbView&) = delete;

  // Point reads (DbGet, DbMultiGet, DbGetInOrder) verify the checksum of a block they load from
  // a file only when verify_point_checksums_ (rocksdb-verify-read-checksums) says so: hashing a
  // whole block to return one entry of it is most of the memory traffic of a cold read, and
  // every block is verified when a compaction reads it. Iterators always verify.
  rocksdb::Status DbGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                        const rocksdb::Slice& key, rocksdb::PinnableSlice* value) {
    if (tls_tx_overlay != nullptr) return TxGet(ro, cf, key, value);
    if (SkipsChecksum(ro)) return db_->Get(Unverified(ro), cf, key, value);
    return db_->Get(ro, cf, key, value);
  }
  rocksdb::Status DbGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                        const rocksdb::Slice& key, std::string* value) {
    if (tls_tx_overlay != nullptr) return TxGet(ro, cf, key, value);
    if (SkipsChecksum(ro)) return db_->Get(Unverified(ro), cf, key, value);
    return db_->Get(ro, cf, key, value);
  }
  void DbMultiGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf, size_t n,
                  const rocksdb::Slice* keys, rocksdb::PinnableSlice* values,
                  rocksdb::Status* statuses) {
    if (tls_tx_overlay != nullptr) return TxMultiGet(ro, cf, n, keys, values, statuses);
    if (SkipsChecksum(ro)) return db_->MultiGet(Unverified(ro), cf, n, keys, values, statuses);
    db_->MultiGet(ro, cf, n, keys, values, statuses);
  }
  // An iterator over `cf` (within ro's iterate bounds, which the caller's Slices must outlive).
  // `collection`: the DataPrefix every key read lies under, when there is one; inside a
  // transaction or indexed group the overlay then serves the read from a cursor it keeps across
  // reads (storage/overlay_cursor.h).
  std::unique_ptr<rocksdb::Iterator> NewIter(const rocksdb::ReadOptions& ro,
                                             rocksdb::ColumnFamilyHandle* cf,
                                             std::string_view collection = {}) {
    if (tls_tx_overlay != nullptr) return TxIter(ro, cf, collection);
    return std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(ro, cf));
  }
  // DbGet of a data key whose first `collection_size` bytes are its DataPrefix, for reads that
  // walk a collection in key order (a run of pops): inside a transaction or indexed group, read
  // with the overlay's cursor over that collection (one Next() from the previous read).
  rocksdb::Status DbGetInOrder(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                               const rocksdb::Slice& key, size_t collection_size, ReadOrder order,
                               std::string* value) {
    if (tls_tx_overlay != nullptr) {
      return TxGetInOrder(ro, cf, key, collection_size, order, value);
    }
    if (SkipsChecksum(ro)) return db_->Get(Unverified(ro), cf, key, value);
    return db_->Get(ro, cf, key, value);
  }
  // Inside a transaction or indexed group, before a run of backward point reads (DbGetInOrder,
  // ReadOrder::kBackward) ending at `last`: reads the database's entries in [lo, last] with
  // one forward iteration and remembers them in the overlay (TxOverlay::Remember), unless `last`
  // is remembered already. A memtable iterator has no back links, so each backward step is a
  // new search from the top; a pipeline of RPOPs then costs what one of LPOPs does. No-op
  // outside an overlay.
  void ReadAheadForBackward(rocksdb::ColumnFamilyHandle* cf, const std::string& lo,
                            const std::string& last);

  rocksdb::DB* db_ = nullptr;           // owned by the RocksStore (opened and closed there)
  bool verify_point_checksums_ = true;  // Options::verify_point_read_checksums, set before Open

  bool SkipsChecksum(const rocksdb::ReadOptions& ro) const {
    return !verify_point_checksums_ && ro.verify_checksums;
  }
  static rocksdb::ReadOptions Unverified(const rocksdb::ReadOptions& ro) {
    rocksdb::ReadOptions copy = ro;
    copy.verify_checksums = false;
    return copy;
  }

  // The slow paths of the reads above (tx_overlay.cc), for when tls_tx_overlay is set.
  rocksdb::Status TxGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                        const rocksdb::Slice& key, rocksdb::PinnableSlice* value);
  rocksdb::Status TxGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                        const rocksdb::Slice& key, std::string* value);
  void TxMultiGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf, size_t n,
                  const rocksdb::Slice* keys, rocksdb::PinnableSlice* values,
                  rocksdb::Status* statuses);
  std::unique_ptr<rocksdb::Iterator> TxIter(const rocksdb::ReadOptions& ro,
                                            rocksdb::ColumnFamilyHandle* cf,
                                            std::string_view collection);
  rocksdb::Status TxGetInOrder(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                               const rocksdb::Slice& key, size_t collection_size, ReadOrder order,
                               std::string* value);
};

}  // namespace rockcache::storage
