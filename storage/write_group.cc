// RocksStore: write groups (group commit, transactions) and the batch plumbing every write goes
// through (Write, counters). See write_group.h, rocks_store.h; a transaction's reads of its own
// writes: tx_overlay.{h,cc}.
#include "storage/write_group.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "storage/batch_records.h"
#include "storage/counts_note.h"
#include "storage/encoding.h"
#include "storage/tx_overlay.h"

namespace rockcache::storage {

thread_local PendingDeltas tls_pending;

namespace {

constexpr size_t kBatchHeader = batch_records::kHeaderSize;

}  // namespace

// ---- write groups ----

class RocksWriteGroup final : public WriteGroup {
 public:
  explicit RocksWriteGroup(RocksStore* store) : store_(store) {
    rep_ = batch_records::EmptyRep();
    previous_ = tls_group;
    tls_group = this;
  }
  ~RocksWriteGroup() override {
    (void)Commit();
    tls_group = previous_;
  }

  Status Commit() override {
    indexing_ = false;
    if (overlay_ != nullptr) return CommitAtomic();
    if (!failed_.ok()) {  // an early flush failed: the writes it held are lost, say so once
      Status s = failed_;
      failed_ = Status::OK();
      if (count_ == 0) return s;
      (void)Flush();
      return s;
    }
    return Flush();
  }
  // Writes what is pending now (a command that reads back its own earlier write); an error is
  // kept and returned by the next Commit(), so the group fails every write it acknowledged.
  // In a transaction there is nothing to do: its reads see its writes through the overlay. In an
  // indexed group the overlay is written, and the next write opens a new one (see
  // WriteGroup::BeginIndexed).
  Status FlushEarly() {
    if (overlay_ != nullptr) {
      if (!indexing_) return Status::OK();
      Status s = CommitAtomic();
      if (!s.ok() && failed_.ok()) failed_ = s;
      return s;
    }
    Status s = Flush();
    if (!s.ok() && failed_.ok()) failed_ = s;
    return s;
  }

  void BeginAtomic() override {
    if (overlay_ != nullptr) return;
    // REQUIRES says nothing pending; be safe (this also ends an indexed run: the overlay opened
    // here is atomic).
    if (count_ > 0 || !failed_.ok() || indexing_) (void)Commit();
    OpenOverlay();
  }

  void Rollback() override {
    if (overlay_ == nullptr || indexing_) return;
    overlay_.reset();
    notes_.clear();
    tls_tx_overlay = previous_overlay_;
    previous_overlay_ = nullptr;
    failed_ = Status::OK();
    ndeltas_ = 0;
    more_deltas_.clear();
  }

  void Savepoint() override {
    if (overlay_ == nullptr || indexing_) return;
    overlay_->SetSavepoint();
    savepoint_ = true;
    savepoint_failed_ = failed_;
    savepoint_notes_ = notes_.size();
    std::copy(deltas_, deltas_ + ndeltas_, savepoint_deltas_);
    savepoint_ndeltas_ = ndeltas_;
    savepoint_more_deltas_ = more_deltas_;
  }

  void RollbackToSavepoint() override {
    if (overlay_ == nullptr || indexing_ || !savepoint_) return;
    overlay_->RollbackToSavepoint();
    failed_ = savepoint_failed_;
    notes_.resize(savepoint_notes_);
    std::copy(savepoint_deltas_, savepoint_deltas_ + savepoint_ndeltas_, deltas_);
    ndeltas_ = savepoint_ndeltas_;
    more_deltas_ = savepoint_more_deltas_;
  }

  // The overlay opens here, before any write: its reads of the database are remembered too
  // (TxOverlay::Recall), so a run of writes that change nothing (SADD of a member already
  // there) reads the key once. After an early commit (FlushEarly, a range deletion) the next
  // write opens a new one (Append).
  void BeginIndexed() override {
    if (overlay_ != nullptr || indexing_) return;
    if (count_ > 0) {  // an error is kept for Commit(), as FlushEarly does
      Status s = Flush();
      if (!s.ok() && failed_.ok()) failed_ = s;
    }
    indexing_ = true;
    OpenOverlay();
  }

  Status CommitAndReindex() override {
    TxOverlay::FrontWindow front;
    const bool keep = indexing_ && overlay_ != nullptr && overlay_->TakeFront(&front);
    Status s = Commit();
    BeginIndexed();
    // Nothing was written between: the window is as true of the database as it was of the
    // overlay (the caller's locks keep other writers off the collection).
    if (s.ok() && keep && overlay_ != nullptr) overlay_->AdoptFront(std::move(front));
    return s;
  }

  // Between BeginIndexed() and Commit().
  bool indexed() const { return indexing_; }

  // Store::NoteForReplicas: written with the next batch of records.
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }

  size_t pending() const override { return overlay_ != nullptr ? overlay_->count() : count_; }

  // The group open on this thread for `store`, or nullptr.
  static RocksWriteGroup* Current(const RocksStore* store) {
    RocksWriteGroup* g = tls_group;
    return g != nullptr && g->store_ == store ? g : nullptr;
  }
  // Appends one Put record of a string meta (type, version, expire-at, count 0, value: the
  // EncodeMeta layout) without a WriteBatch or an encoded value of its own: straight into the
  // group's batch (storage/batch_records.h), or into the overlay of an indexed group or a
  // transaction, which indexes it as it would the same record in a batch (Append).
  void AppendStringPut(uint32_t cf_id, std::string_view key, uint64_t version, int64_t expire_at_ms,
                       std::string_view value) {
    char header[kMetaHeaderSize];
    header[0] = static_cast<char>(MetaType::kString);
    auto put64 = [](char* p, uint64_t v) {
      for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
    };
    put64(header + 1, version);
    put64(header + 9, static_cast<uint64_t>(expire_at_ms));
    put64(header + 17, 0);  // count
    const std::string_view head(header, kMetaHeaderSize);
    if (indexing_ && overlay_ == nullptr) OpenOverlay();  // as Append does
    if (overlay_ != nullptr) {
      overlay_->Put(cf_id, key, head, value);
      return;
    }
    batch_records::AppendPut(&rep_, cf_id, key, head, value);
    ++count_;
  }
  void Append(const Records& batch) {
    if (indexing_ && overlay_ == nullptr && batch.Count() > 0) {
      if (batch.HasDeleteRange()) {  // written as it is (nothing is pending before it)
        rep_.append(batch.Data().substr(kBatchHeader));
        count_ += batch.Count();
        Status s = Flush();
        if (!s.ok() && failed_.ok()) failed_ = s;
        return;
      }
      OpenOverlay();
    }
    if (overlay_ != nullptr) {
      if (indexing_ && batch.HasDeleteRange()) return AppendAroundOverlay(batch);
      return AppendToOverlay(batch);
    }
    if (batch.Count() == 0) return;
    rep_.append(batch.Data().substr(kBatchHeader));
    count_ += batch.Count();
  }
  void AddDelta(const RocksStore::CounterDelta& d) {
    for (int i = 0; i < ndeltas_; ++i) {
      if (deltas_[i].db == d.db) {
        deltas_[i].keys += d.keys;
        deltas_[i].expires += d.expires;
        deltas_[i].expire_sum += d.expire_sum;
        return;
      }
    }
    if (ndeltas_ < kInlineDeltas) {
      deltas_[ndeltas_++] = d;
      return;
    }
    RocksStore::AddDelta(&more_deltas_, d);
  }
  // The change of database `db`'s key count that the transaction holds (0 outside one).
  int64_t PendingKeys(int db) const {
    if (overlay_ == nullptr) return 0;
    int64_t n = 0;
    for (int i = 0; i < ndeltas_; ++i) {
      if (deltas_[i].db == db) n += deltas_[i].keys;
    }
    for (const auto& d : more_deltas_) {
      if (d.db == db) n += d.keys;
    }
    return n;
  }

 private:
  // Replays a method's batch into the overlay record by record, for the batches
  // TxOverlay::Append refuses: those with a range deletion. The overlay has no range deletion: a
  // DeleteRange becomes point deletes of the keys the transaction sees in the range (data keys of
  // one collection: as many deletes as entries).
  class Replay final : public rocksdb::WriteBatch::Handler {
   public:
    Replay(RocksStore* store, TxOverlay* overlay) : store_(store), overlay_(overlay) {}
    rocksdb::Status PutCF(uint32_t id, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
      rocksdb::ColumnFamilyHandle* cf = Cf(id);
      if (cf == nullptr) return rocksdb::Status::InvalidArgument("unknown column family");
      return overlay_->Put(cf, key, value);
    }
    rocksdb::Status DeleteCF(uint32_t id, const rocksdb::Slice& key) override {
      rocksdb::ColumnFamilyHandle* cf = Cf(id);
      if (cf == nullptr) return rocksdb::Status::InvalidArgument("unknown column family");
      return overlay_->Delete(cf, key);
    }
    rocksdb::Status DeleteRangeCF(uint32_t id, const rocksdb::Slice& begin,
                                  const rocksdb::Slice& end) override {
      rocksdb::ColumnFamilyHandle* cf = Cf(id);
      if (cf == nullptr) return rocksdb::Status::InvalidArgument("unknown column family");
      rocksdb::ReadOptions ro;
      ro.iterate_lower_bound = &begin;
      ro.iterate_upper_bound = &end;
      std::vector<std::string> keys;  // collected first: the batch must not change under `it`
      {
        std::unique_ptr<rocksdb::Iterator> it = store_->TxIter(ro, cf, {});
        for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
        if (!it->status().ok()) return it->status();
      }
      for (const auto& key : keys) {
        rocksdb::Status s = overlay_->Delete(cf, key);
        if (!s.ok()) return s;
      }
      return rocksdb::Status::OK();
    }
    rocksdb::Status SingleDeleteCF(uint32_t id, const rocksdb::Slice& key) override {
      return DeleteCF(id, key);
    }
    rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
      return rocksdb::Status::NotSupported("merge in a transaction");
    }
    void LogData(const rocksdb::Slice&) override {}

   private:
    rocksdb::ColumnFamilyHandle* Cf(uint32_t id) const {
      for (auto* h : store_->handles_) {
        if (h->GetID() == id) return h;
      }
      return nullptr;
    }
    RocksStore* store_;
    TxOverlay* overlay_;
  };

  void AppendToOverlay(const Records& batch) {
    if (batch.Count() == 0 || overlay_->Append(batch.Data())) return;
    Replay replay(store_, overlay_.get());  // a range deletion: point deletes of what it covers
    rocksdb::Status s = rocksdb::WriteBatch(std::string(batch.Data())).Iterate(&replay);
    if (!s.ok() && failed_.ok()) failed_ = FromRocks(s);
  }

  // Indexed group only: a method's batch with a range deletion goes to RocksDB as it is, right
  // after the overlay it was computed over; the next write opens a new overlay.
  void AppendAroundOverlay(const Records& batch) {
    Status s = CommitAtomic();
    if (s.ok()) {
      rep_.append(batch.Data().substr(kBatchHeader));
      count_ += batch.Count();
      s = Flush();
    }
    if (!s.ok() && failed_.ok()) failed_ = s;
  }

  void OpenOverlay() {
    savepoint_ = false;
    overlay_ = std::make_unique<TxOverlay>(store_);
    previous_overlay_ = tls_tx_overlay;
    tls_tx_overlay = overlay_.get();
  }

  // Ends the transaction: its whole batch as one RocksDB write, or nothing of it.
  Status CommitAtomic() {
    std::unique_ptr<TxOverlay> overlay = std::move(overlay_);
    tls_tx_overlay = previous_overlay_;
    previous_overlay_ = nullptr;
    Status s = failed_;
    failed_ = Status::OK();
    if (s.ok() && overlay->count() > 0) {
      rocksdb::WriteBatch batch;
      if (!overlay->LastWritesInKeyOrder(&batch)) batch = rocksdb::WriteBatch(overlay->TakeRep());
      AttachCounts(&batch);
      AttachNotes(&batch);
      s = store_->WriteGroupBatch(&batch);
    }
    if (s.ok()) {
      ApplyPendingDeltas();
    } else {
      ndeltas_ = 0;
      more_deltas_.clear();
    }
    return s;
  }

  Status Flush() {
    if (count_ == 0) return Status::OK();
    batch_records::SetCount(&rep_, count_);
    // In key order, each memtable insert starts from the one before it (SortedByKey).
    if (count_ > 1 && batch_records::SortedByKey(rep_, &sorted_)) rep_.swap(sorted_);
    rocksdb::WriteBatch batch(std::move(rep_));
    AttachCounts(&batch);
    AttachNotes(&batch);
    Status s = store_->WriteGroupBatch(&batch);
    if (s.ok()) {
      ApplyPendingDeltas();
    } else {
      ndeltas_ = 0;
      more_deltas_.clear();
    }
    rep_ = batch_records::EmptyRep();
    count_ = 0;
    return s;
  }
  // The counter changes of `batch`'s records (the pending deltas), as a LogData record for
  // replicas (storage/counts_note.h).
  void AttachCounts(rocksdb::WriteBatch* batch) {
    (void)batch->PutLogData(counts_note::Encode(store_->ttl_base_ms_, batch->Count(), deltas_,
                                                static_cast<size_t>(ndeltas_), more_deltas_));
  }
  // The pending notes, as LogData records of `batch` (which holds records: LogData alone would
  // make no WAL record a replica reads).
  void AttachNotes(rocksdb::WriteBatch* batch) {
    if (notes_.empty()) return;
    for (const auto& note : notes_) (void)batch->PutLogData(note);
    notes_.clear();
  }
  // The counter changes of the records written since the last call.
  void ApplyPendingDeltas() {
    store_->ApplyDeltas(deltas_, static_cast<size_t>(ndeltas_));
    if (!more_deltas_.empty()) store_->ApplyDeltas(more_deltas_.data(), more_deltas_.size());
    ndeltas_ = 0;
    more_deltas_.clear();
  }

  static thread_local RocksWriteGroup* tls_group;
  RocksStore* const store_;
  RocksWriteGroup* previous_ = nullptr;
  Status failed_;
  std::string rep_;
  std::string sorted_;  // Flush's reordered rep_ (kept for its capacity)
  uint32_t count_ = 0;
  // Between BeginAtomic() and Commit(): the transaction's writes (rep_ stays empty meanwhile).
  std::unique_ptr<TxOverlay> overlay_;
  TxOverlay* previous_overlay_ = nullptr;
  bool indexing_ = false;  // between BeginIndexed() and Commit(): the overlay is not atomic
  // Counter changes, applied at a successful Flush: a few databases inline (no allocation on
  // the common path), the rest in more_deltas_.
  static constexpr int kInlineDeltas = 4;
  RocksStore::CounterDelta deltas_[kInlineDeltas];
  int ndeltas_ = 0;
  std::vector<RocksStore::CounterDelta> more_deltas_;
  std::vector<std::string> notes_;  // Store::NoteForReplicas, for the next batch written
  // Savepoint(): the group's part of the mark (the overlay keeps its own). Valid while
  // savepoint_ (reset when an overlay opens).
  bool savepoint_ = false;
  Status savepoint_failed_;
  size_t savepoint_notes_ = 0;
  RocksStore::CounterDelta savepoint_deltas_[kInlineDeltas];
  int savepoint_ndeltas_ = 0;
  std::vector<RocksStore::CounterDelta> savepoint_more_deltas_;
};

thread_local RocksWriteGroup* RocksWriteGroup::tls_group = nullptr;

std::unique_ptr<WriteGroup> RocksStore::OpenWriteGroup() {
  return std::make_unique<RocksWriteGroup>(this);
}

Status RocksStore::FlushIndexedGroup() {
  RocksWriteGroup* group = RocksWriteGroup::Current(this);
  if (group == nullptr || !group->indexed() || group->pending() == 0) return Status::OK();
  return group->FlushEarly();
}

Status RocksStore::FlushThreadWriteGroup() {
  RocksWriteGroup* group = RocksWriteGroup::Current(this);
  return group == nullptr ? Status::OK() : group->FlushEarly();
}

void RocksStore::NoteForReplicas(std::string note) {
  if (RocksWriteGroup* group = RocksWriteGroup::Current(this)) group->AddNote(std::move(note));
}

bool RocksStore::WriteStringToThreadGroup(std::string_view key, const MetaLookup& old, Meta* meta,
                                          std::string_view value) {
  RocksWriteGroup* group = RocksWriteGroup::Current(this);
  if (group == nullptr) return false;
  // The common path of SET/INCR/APPEND: the record goes straight into the group's batch or
  // overlay (no WriteBatch, no encoded copy of the value); counters as Write() would hand them
  // over.
  const int db = CurrentDb();
  NoteTtlChange(db, old, meta);
  if (!old.present) key_filter_->Add(db, key);  // as PutMeta does
  ForgetReadAhead(db, key);
  group->AppendStringPut(meta_cfs_[static_cast<size_t>(db)]->GetID(), key, meta->version,
                         meta->expire_at_ms, value);
  for (int i = 0; i < tls_pending.n; ++i) group->AddDelta(tls_pending.slots[i]);
  tls_pending.clear();
  if (!old.present) group->AddDelta(CounterDelta{db, 1, 0, 0});
  return true;
}

int64_t RocksStore::PendingKeyDelta(int db) const {
  const RocksWriteGroup* group = RocksWriteGroup::Current(this);
  return group == nullptr ? 0 : group->PendingKeys(db);
}

// ---- counters ----

void RocksStore::AddDelta(std::vector<CounterDelta>* deltas, const CounterDelta& d) {
  for (CounterDelta& x : *deltas) {
    if (x.db == d.db) {
      x.keys += d.keys;
      x.expires += d.expires;
      x.expire_sum += d.expire_sum;
      return;
    }
  }
  deltas->push_back(d);
}

void RocksStore::ApplyDeltas(const CounterDelta* deltas, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const CounterDelta& d = deltas[i];
    DbCounters& c = counters_[static_cast<size_t>(d.db)];
    if (d.keys != 0) c.keys.fetch_add(d.keys, std::memory_order_relaxed);
    if (d.expires != 0) c.expires.fetch_add(d.expires, std::memory_order_relaxed);
    if (d.expire_sum != 0) c.expire_sum.fetch_add(d.expire_sum, std::memory_order_relaxed);
  }
}

void RocksStore::AddKeyCount(int64_t delta, int db) {
  if (db < 0) db = CurrentDb();
  if (RocksWriteGroup* group = RocksWriteGroup::Current(this)) {
    if (delta != 0) group->AddDelta(CounterDelta{db, delta, 0, 0});
    return;
  }
  counters_[static_cast<size_t>(db)].keys.fetch_add(delta, std::memory_order_relaxed);
}

void RocksStore::NoteTtlChange(int db, const MetaLookup& old, const Meta* new_meta) {
  const bool had = old.present && old.meta.expire_at_ms != 0;
  const bool has = new_meta != nullptr && new_meta->expire_at_ms != 0;
  if (!had && !has) return;  // the common case: no TTL before or after
  CounterDelta d{db, 0, 0, 0};
  if (had) {
    d.expires -= 1;
    d.expire_sum -= static_cast<uint64_t>(old.meta.expire_at_ms - ttl_base_ms_);
  }
  if (has) {
    d.expires += 1;
    d.expire_sum += static_cast<uint64_t>(new_meta->expire_at_ms - ttl_base_ms_);
  }
  tls_pending.Add(d);
}

// ---- writes ----

Status RocksStore::Write(Records* batch) {
  if (RocksWriteGroup* group = RocksWriteGroup::Current(this)) {
    group->Append(*batch);
    if (!tls_pending.empty()) {
      for (int i = 0; i < tls_pending.n; ++i) group->AddDelta(tls_pending.slots[i]);
      tls_pending.clear();
    }
    return Status::OK();
  }
  rocksdb::WriteBatch write_batch = batch->TakeBatch();
  Status s = WriteNow(&write_batch);
  if (!tls_pending.empty()) {
    if (s.ok()) ApplyDeltas(tls_pending.slots, static_cast<size_t>(tls_pending.n));
    tls_pending.clear();
  }
  return s;
}

Status RocksStore::WriteNow(rocksdb::WriteBatch* batch) {
  Status s = WriteOwn(write_options_, batch);
  if (s.ok()) wal_bytes_.fetch_add(batch->GetDataSize(), std::memory_order_relaxed);
  return s;
}

Status RocksStore::WriteOwn(const rocksdb::WriteOptions& options, rocksdb::WriteBatch* batch) {
  if (!order_own_writes_.load(std::memory_order_acquire)) {
    return FromRocks(db_->Write(options, batch));
  }
  MutexLock ordered(&applied_write_mu_);
  return FromRocks(db_->Write(options, batch));
}

Status RocksStore::WriteReplicationRecord(const rocksdb::WriteOptions& options,
                                          rocksdb::WriteBatch* batch) {
  MutexLock alone(&applied_write_mu_);
  return FromRocks(db_->Write(options, batch));
}

Status RocksStore::PutOwn(const rocksdb::WriteOptions& options, rocksdb::ColumnFamilyHandle* cf,
                          std::string_view key, std::string_view value) {
  rocksdb::WriteBatch batch;
  if (Status s = FromRocks(batch.Put(cf, rocksdb::Slice(key.data(), key.size()),
                                     rocksdb::Slice(value.data(), value.size())));
      !s.ok()) {
    return s;
  }
  return WriteOwn(options, &batch);
}

Status RocksStore::WriteGroupBatch(rocksdb::WriteBatch* batch) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  return WriteNow(batch);
}

}  // namespace rockcache::storage
