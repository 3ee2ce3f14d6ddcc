// storage/records — the writes of one Store method, as WriteBatch bytes built directly
// (internal to storage/).
//
// A Store method collects its writes (entries, then the meta record) in a Records and hands it to
// RocksStore::Write, which appends the bytes to the thread's write group or transaction overlay
// (write_group.cc), or, outside a group, writes them as one rocksdb::WriteBatch. The bytes are
// exactly a WriteBatch's rep (storage/batch_records.h), so nothing is re-encoded on the way.
//
// Why not rocksdb::WriteBatch: its Put costs ~800 instructions in Debian's RocksDB 7.8 (a column
// family lookup, save-point and protection bookkeeping, a content-flag update, and a string that
// grows from nothing in every command), where appending the record is ~80. A pipelined HSET is
// ~11k instructions in all, so this was 7-9% of it. A Records also reuses one buffer per thread:
// its bytes come from the thread's spare buffer when that is free and go back to it (up to
// kMaxSpareBytes of capacity) when the Records is destroyed.
//
// Threads: a Records is used by one thread; the spare buffer is thread-local.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "storage/batch_records.h"
#include "storage/encoding.h"

namespace rockcache::storage {

class Records {
 public:
  Records() : rep_(TakeSpare()) {}
  ~Records() { GiveBack(std::move(rep_)); }
  Records(const Records&) = delete;
  Records& operator=(const Records&) = delete;

  void Put(rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key,
           const rocksdb::Slice& value) {
    batch_records::AppendPut(&rep_, cf->GetID(), View(key), View(value));
    Counted();
  }
  // A Put whose value is `head` then `tail` (a meta's header, then a string), not joined first.
  void Put(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view head,
           std::string_view tail) {
    batch_records::AppendPut(&rep_, cf->GetID(), key, head, tail);
    Counted();
  }
  // A Put of the entry DataKey(key, version, sub_key) of a collection, its key written straight
  // into the bytes (no DataKey string of its own). RocksStore writes entries through
  // RocksStore::PutEntry, which notes them in its entry filter before calling this.
  void PutEntry(rocksdb::ColumnFamilyHandle* cf, std::string_view key, uint64_t version,
                std::string_view sub_key, std::string_view value) {
    batch_records::PutTag(&rep_, cf->GetID(), '\x01', '\x05');
    AppendDataKey(key, version, sub_key);
    batch_records::PutSlice(&rep_, value);
    Counted();
  }
  // A Delete of the entry DataKey(key, version, sub_key), as PutEntry.
  void DeleteEntry(rocksdb::ColumnFamilyHandle* cf, std::string_view key, uint64_t version,
                   std::string_view sub_key) {
    batch_records::PutTag(&rep_, cf->GetID(), '\x00', '\x04');
    AppendDataKey(key, version, sub_key);
    Counted();
  }
  void Delete(rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key) {
    batch_records::AppendDelete(&rep_, cf->GetID(), View(key));
    Counted();
  }
  // Deletes [begin, end) of `cf`. A batch with a range deletion is written as it is by the
  // write group (no sorting, no overlay index: write_group.cc).
  void DeleteRange(rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& begin,
                   const rocksdb::Slice& end) {
    batch_records::AppendDeleteRange(&rep_, cf->GetID(), View(begin), View(end));
    Counted();
    has_delete_range_ = true;
  }

  uint32_t Count() const { return count_; }
  bool HasDeleteRange() const { return has_delete_range_; }
  // The rep: the 12-byte header (sequence 0, count Count()) and the records.
  std::string_view Data() const { return rep_; }
  // The records as a rocksdb::WriteBatch; the Records is left empty.
  rocksdb::WriteBatch TakeBatch() {
    rocksdb::WriteBatch batch(std::move(rep_));
    rep_ = batch_records::EmptyRep();
    count_ = 0;
    has_delete_range_ = false;
    return batch;
  }

  // The capacity above which a buffer is not kept for the thread's next Records.
  static constexpr size_t kMaxSpareBytes = 64 * 1024;

 private:
  static std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }
  void Counted() { batch_records::SetCount(&rep_, ++count_); }
  void AppendDataKey(std::string_view key, uint64_t version, std::string_view sub_key) {
    const size_t size = DataKeySize(key, sub_key);
    batch_records::PutVarint32(&rep_, static_cast<uint32_t>(size));
    const size_t at = rep_.size();
    rep_.resize(at + size);
    WriteDataKey(rep_.data() + at, key, version, sub_key);
  }
  static std::string TakeSpare() {
    std::string rep = std::move(tls_spare);
    tls_spare = std::string();
    rep.assign(batch_records::kHeaderSize, '\0');
    return rep;
  }
  static void GiveBack(std::string&& rep) {
    if (rep.capacity() > kMaxSpareBytes || tls_spare.capacity() >= rep.capacity()) return;
    tls_spare = std::move(rep);
  }

  static inline thread_local std::string tls_spare;
  std::string rep_;
  uint32_t count_ = 0;
  bool has_delete_range_ = false;
};

}  // namespace rockcache::storage
