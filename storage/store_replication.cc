// RocksStore: replication (store.h "replication"; storage/replication_types.h). The primary's
// side: checkpoints for full synchronizations and the WAL read in commit order
// (DB::GetUpdatesSince; the WAL is kept by Options::wal_ttl_seconds / wal_size_limit_mb). The
// replica's side: decoding a batch into the keys it touches, applying it with its counters and
// filters, and replacing the database with a received checkpoint.
#include <rocksdb/convenience.h>
#include <rocksdb/transaction_log.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "storage/batch_records.h"
#include "storage/counts_note.h"
#include "storage/data_dir.h"
#include "storage/rocks_options.h"
#include "storage/rocks_store.h"

namespace rockcache::storage {

namespace {
// The records of WriteBatch reps (each at least a header).
uint64_t RecordCount(const std::vector<std::string_view>& reps) {
  uint64_t count = 0;
  for (std::string_view rep : reps) {
    uint32_t n = 0;
    std::memcpy(&n, rep.data() + 8, 4);  // little-endian fixed32 (batch_records.h)
    count += n;
  }
  return count;
}
}  // namespace

// A replicated batch's records, decoded (DecodeReplicated) for ApplyReplicated.
struct ReplicatedBatch::Records {
  // What one record does, by column family.
  enum class CfKind : uint8_t { kMeta, kProps, kEntry, kFilteredEntry };
  // A column family as the records name it (by id: the replica's database is a checkpoint of
  // the primary's, so the ids are the same).
  struct CfClass {
    CfKind kind = CfKind::kEntry;
    int db = 0;               // kMeta: physical database
    uint32_t filter_tag = 0;  // kFilteredEntry: the entry filter's tag
  };
  struct Op {
    CfClass cf;
    bool put;
    bool range;
    bool counted = false;      // a counts note covers it (ApplyReplicated)
    std::string_view key;      // in batch's bytes (valid while they are unchanged)
    int64_t expire_at_ms = 0;  // put of a meta
  };
  // A counts note (storage/counts_note.h): it counts records right before it, those of the
  // writer's batch it ended (RocksDB appends a WAL record's batches whole, one after another).
  struct CountsNote {
    std::string_view blob;  // in batch's bytes
    size_t end_op;          // ops before it
  };

  // The batches `reps` (consecutive, each at least a header: DecodeReplicated checks) as one:
  // the first one's header with the records of all, with room for the replication state
  // ApplyReplicated appends, so appending does not copy.
  explicit Records(const std::vector<std::string_view>& reps) : batch(Joined(reps)) {}
  static std::string Joined(const std::vector<std::string_view>& reps) {
    size_t size = 128;
    for (std::string_view rep : reps) size += rep.size();
    std::string bytes;
    bytes.reserve(size);
    bytes.append(reps.front());
    if (reps.size() == 1) return bytes;  // its header already counts its records
    for (size_t i = 1; i < reps.size(); ++i) {
      bytes.append(reps[i].substr(batch_records::kHeaderSize));
    }
    batch_records::SetCount(&bytes, static_cast<uint32_t>(RecordCount(reps)));
    return bytes;
  }

  rocksdb::WriteBatch batch;       // the primary's batches, as received, joined
  std::vector<Op> ops;             // their records, in order
  std::vector<CountsNote> counts;  // in order
};

ReplicatedBatch::ReplicatedBatch() = default;
ReplicatedBatch::~ReplicatedBatch() = default;

namespace {

// Where a replica keeps the replication state it holds ("props": never user data).
const char kPropsReplState[] = "repl-state";
// The version counter's record (rocks_store.cc, NewVersion).
const char kPropsNextVersionRecord[] = "next-version";

// The senders read the WAL without verifying its records' checksums: the records were written
// by this process moments before and are read back from the page cache (RocksDB verifies them
// when it recovers the WAL on open), the link is TCP, and the replica refuses a batch it cannot
// decode. Verifying is a table-driven CRC32C of every byte (the packaged RocksDB has no
// hardware path): most of what a replica costs its primary per write.
const rocksdb::TransactionLogIterator::ReadOptions kWalReadOptions(/*verify_checksums=*/false);

class RocksWalReader final : public WalReader {
 public:
  RocksWalReader(rocksdb::DB* db, uint64_t from) : db_(db), next_(from) {}

  StatusOr<bool> Next(uint64_t* first_seq, std::string* rep) override {
    // Nothing past the last write yet (one atomic load): no WAL read. A caught-up sender polls
    // this every millisecond.
    if (next_ > db_->GetLatestSequenceNumber()) return false;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (iter_ == nullptr) {
        // Nothing past the last write yet: GetUpdatesSince would fail with NotFound.
        if (next_ > db_->GetLatestSequenceNumber()) return false;
        rocksdb::Status s = db_->GetUpdatesSince(next_, &iter_, kWalReadOptions);
        if (!s.ok()) {
          iter_.reset();
          return Status::NotFound("WAL from sequence " + std::to_string(next_) +
                                  " is not available: " + s.ToString());
        }
        consumed_ = false;
      } else if (consumed_ || !iter_->Valid()) {
        iter_->Next();  // at the end of the WAL: reads what was appended since
        consumed_ = false;
      }
      if (!iter_->Valid()) {
        rocksdb::Status s = iter_->status();
        // TryAgain: a newer WAL file was started; a new iterator sees it.
        if (s.IsTryAgain() || (s.ok() && next_ <= db_->GetLatestSequenceNumber() && attempt == 0 &&
                               stale_polls_++ > 100)) {
          iter_.reset();
          stale_polls_ = 0;
          continue;
        }
        if (!s.ok()) {
          iter_.reset();
          return Status::NotFound("WAL read failed: " + s.ToString());
        }
        return false;
      }
      stale_polls_ = 0;
      rocksdb::BatchResult batch = iter_->GetBatch();
      consumed_ = true;
      const uint64_t count = batch.writeBatchPtr->Count();
      const uint64_t first = batch.sequence;
      if (count == 0 || first + count <= next_) continue;  // before `from`: read on
      if (first != next_) {
        iter_.reset();
        return Status::NotFound("WAL does not continue at sequence " + std::to_string(next_) +
                                " (next batch starts at " + std::to_string(first) + ")");
      }
      *first_seq = first;
      *rep = batch.writeBatchPtr->Data();
      next_ = first + count;
      return true;
    }
    return false;
  }

  uint64_t next_sequence() const override { return next_; }

 private:
  rocksdb::DB* const db_;
  uint64_t next_;
  std::unique_ptr<rocksdb::TransactionLogIterator> iter_;
  bool consumed_ = false;  // the iterator's current batch was returned
  // Polls that found nothing although the database has newer writes: the iterator's file list
  // may be outdated without it saying TryAgain; after a while a new iterator is made.
  int stale_polls_ = 0;
};

using CfKind = ReplicatedBatch::Records::CfKind;
using CfClass = ReplicatedBatch::Records::CfClass;
using BatchOp = ReplicatedBatch::Records::Op;

// Collects the records of a batch (its keys as views into the batch).
class BatchDecoder : public rocksdb::WriteBatch::Handler {
 public:
  // classes[id]: the column family with that id (ids past the end: collection entries).
  BatchDecoder(const std::vector<CfClass>& classes, std::vector<BatchOp>* ops,
               std::vector<std::string>* notes,
               std::vector<ReplicatedBatch::Records::CountsNote>* counts)
      : classes_(classes), ops_(*ops), notes_(*notes), counts_(*counts) {}

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    BatchOp& op = Add(cf, key, true, false);
    if (op.cf.kind == CfKind::kMeta) {
      Meta meta;
      if (DecodeMetaHeader(std::string_view(value.data(), value.size()), &meta)) {
        op.expire_at_ms = meta.expire_at_ms;
      }
    }
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    Add(cf, key, false, false);
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    return DeleteCF(cf, key);
  }
  rocksdb::Status DeleteRangeCF(uint32_t cf, const rocksdb::Slice& begin,
                                const rocksdb::Slice& /*end*/) override {
    Add(cf, begin, false, true);
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& key,
                          const rocksdb::Slice& /*value*/) override {
    Add(cf, key, true, false);
    return rocksdb::Status::OK();
  }
  void LogData(const rocksdb::Slice& blob) override {
    if (counts_note::Is(std::string_view(blob.data(), blob.size()))) {
      counts_.push_back({std::string_view(blob.data(), blob.size()), ops_.size()});
      return;
    }
    notes_.emplace_back(blob.data(), blob.size());
  }

 private:
  BatchOp& Add(uint32_t cf, const rocksdb::Slice& key, bool put, bool range) {
    BatchOp& op = ops_.emplace_back();
    if (cf < classes_.size()) op.cf = classes_[cf];
    op.put = put;
    op.range = range;
    op.key = std::string_view(key.data(), key.size());
    return op;
  }

  const std::vector<CfClass>& classes_;
  std::vector<BatchOp>& ops_;
  std::vector<std::string>& notes_;
  std::vector<ReplicatedBatch::Records::CountsNote>& counts_;
};

std::string EncodeState(const ReplicationState& state) {
  char offset[24];
  offset[0] = ':';
  char* end = std::to_chars(offset + 1, offset + sizeof(offset), state.offset).ptr;
  std::string out;
  out.reserve(state.replid.size() + static_cast<size_t>(end - offset));
  out.append(state.replid).append(offset, static_cast<size_t>(end - offset));
  return out;
}

}  // namespace

uint64_t RocksStore::LatestSequence() {
  Hold hold;
  if (!Enter(&hold).ok()) return 0;
  return db_->GetLatestSequenceNumber();
}

StatusOr<CheckpointFiles> RocksStore::CreateCheckpoint(const std::string& dir) {
  CheckpointFiles out;
  out.dir = dir;
  if (Status s = CreateCheckpoint(dir, &out.sequence); !s.ok()) return s;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    out.files.emplace_back(entry.path().filename().string(), entry.file_size());
  }
  if (ec) return Status::IOError("cannot list " + dir + ": " + ec.message());
  return out;
}

StatusOr<std::unique_ptr<WalReader>> RocksStore::ReadWalFrom(uint64_t from) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  auto reader = std::make_unique<RocksWalReader>(db_, from);
  // Check now that the WAL still holds `from` (unless nothing was written past it yet).
  if (from <= db_->GetLatestSequenceNumber()) {
    std::unique_ptr<rocksdb::TransactionLogIterator> iter;
    rocksdb::Status s = db_->GetUpdatesSince(from, &iter, kWalReadOptions);
    if (!s.ok() || !iter->Valid()) {
      return Status::NotFound("WAL from sequence " + std::to_string(from) + " is not available");
    }
    rocksdb::BatchResult first = iter->GetBatch();
    if (first.sequence > from) {
      return Status::NotFound("WAL from sequence " + std::to_string(from) + " was purged");
    }
  }
  return std::unique_ptr<WalReader>(std::move(reader));
}

Status RocksStore::DecodeReplicated(const std::vector<std::string_view>& reps,
                                    ReplicatedBatch* out) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  if (reps.empty()) return Status::InvalidArgument("no batch to decode");
  for (std::string_view rep : reps) {
    if (rep.size() < batch_records::kHeaderSize) return Status::Corruption("short batch");
  }
  if (RecordCount(reps) > UINT32_MAX) {
    return Status::Corruption("too many records in the joined batches");
  }
  // The open database's column families by id (every other id: collection entries).
  uint32_t max_id = 0;
  for (const auto* cf : handles_) max_id = std::max(max_id, cf->GetID());
  std::vector<CfClass> classes(max_id + 1);
  auto classify = [&classes](const rocksdb::ColumnFamilyHandle* cf, CfClass c) {
    classes[cf->GetID()] = c;
  };
  for (size_t db = 0; db < meta_cfs_.size(); ++db) {
    classify(meta_cfs_[db], {CfKind::kMeta, static_cast<int>(db), 0});
  }
  classify(props_cf_, {CfKind::kProps, 0, 0});
  for (const auto* cf : {hash_cf_, set_cf_, zset_cf_}) {
    classify(cf, {CfKind::kFilteredEntry, 0, EntryFilterTag(cf)});
  }

  auto records = std::make_unique<ReplicatedBatch::Records>(reps);
  ReplicatedKeys* keys = &out->keys;
  records->ops.reserve(records->batch.Count());
  BatchDecoder decoder(classes, &records->ops, &keys->notes, &records->counts);
  if (Status s = FromRocks(records->batch.Iterate(&decoder)); !s.ok()) return s;
  for (const BatchOp& op : records->ops) {
    ++keys->records;
    switch (op.cf.kind) {
      case CfKind::kMeta:
        if (op.range) {
          keys->flushed_dbs.push_back(op.cf.db);
        } else if (op.key != kMetaHintBreakerKey) {
          keys->metas.emplace_back(op.cf.db, std::string(op.key));
        }
        break;
      case CfKind::kProps:
        if (op.key == kPropsDbMapKey) keys->all_keys = true;
        if (op.key.substr(0, kServerRecordPrefix.size()) == kServerRecordPrefix) {
          keys->server_records.emplace_back(op.key.substr(kServerRecordPrefix.size()));
        }
        break;
      case CfKind::kEntry:
      case CfKind::kFilteredEntry: {
        if (op.range) {
          keys->all_keys = true;
          break;
        }
        std::string_view user_key;
        uint64_t version = 0;
        std::string_view sub_key;
        if (ParseDataKey(op.key, &user_key, &version, &sub_key)) {
          keys->entry_keys.emplace_back(user_key);
        }
        break;
      }
    }
  }
  std::sort(keys->entry_keys.begin(), keys->entry_keys.end());
  keys->entry_keys.erase(std::unique(keys->entry_keys.begin(), keys->entry_keys.end()),
                         keys->entry_keys.end());
  out->records = std::move(records);
  return Status::OK();
}

bool RocksStore::CountByNotes(ReplicatedBatch::Records* records,
                              std::vector<CounterDelta>* deltas) {
  std::vector<CounterDelta> note_deltas;
  size_t covered_to = 0;  // ops before this are covered by a note or by none
  for (const auto& note : records->counts) {
    uint32_t n = 0;
    bool ok = counts_note::Decode(note.blob, ttl_base_ms_, &note_deltas, &n) &&
              n <= note.end_op - covered_to;
    for (const CounterDelta& d : note_deltas) {
      if (d.db < 0 || d.db >= physical_dbs_) ok = false;
    }
    if (ok) {
      for (size_t i = note.end_op - n; i < note.end_op; ++i) records->ops[i].counted = true;
      deltas->insert(deltas->end(), note_deltas.begin(), note_deltas.end());
    }
    covered_to = note.end_op;
  }
  for (const BatchOp& op : records->ops) {
    if (!op.counted) return false;
  }
  return true;
}

Status RocksStore::ApplyReplicated(ReplicatedBatch* replicated, const ReplicationState& state,
                                   uint64_t* local_first) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::unique_ptr<ReplicatedBatch::Records> records = std::move(replicated->records);
  if (records == nullptr) return Status::InvalidArgument("replicated batch not decoded");
  if (records->batch.Count() == 0) return Status::Corruption("empty replicated batch");

  // The key counters move by what the records did to the metas. A record a counts note covers
  // (its writer's batch) is counted by the note, as the primary counted it; any other record (a
  // write outside a write group, an older primary's) by the meta's state before it: read, or
  // known from a record before it in these batches, counted or not.
  std::vector<CounterDelta> deltas;
  bool all_counted = CountByNotes(records.get(), &deltas);
  struct KeyState {
    bool present = false;
    int64_t expire = 0;
  };
  struct MetaId {
    int db;
    std::string_view key;
    bool operator==(const MetaId& o) const { return db == o.db && key == o.key; }
  };
  struct MetaIdHash {
    size_t operator()(const MetaId& id) const {
      return std::hash<std::string_view>()(id.key) ^ static_cast<size_t>(id.db);
    }
  };
  // Each meta's state after the records so far (only when some record is not counted).
  std::unordered_map<MetaId, KeyState, MetaIdHash> metas;
  std::vector<int> flushed;
  bool db_map_changed = false;
  for (const BatchOp& op : records->ops) {
    if (op.cf.kind == CfKind::kProps) {
      if (op.key == kPropsDbMapKey) db_map_changed = true;
      continue;
    }
    if (op.cf.kind == CfKind::kFilteredEntry && op.put) {
      entry_filter_->Add(op.cf.filter_tag, op.key);  // before the entry can be read (key_filter.h)
      continue;
    }
    if (op.cf.kind != CfKind::kMeta || op.key == kMetaHintBreakerKey) continue;
    if (op.range) {
      flushed.push_back(op.cf.db);  // counted again below
      continue;
    }
    const int db = op.cf.db;
    if (all_counted) {
      if (op.put) key_filter_->Add(static_cast<uint32_t>(db), op.key);
      continue;
    }
    auto [it, inserted] = metas.try_emplace(MetaId{db, op.key});
    KeyState& ks = it->second;
    // A key the key filter rules out has no meta: no read (a new key, most of a SET load).
    if (inserted && !op.counted && key_filter_->MayContain(static_cast<uint32_t>(db), op.key)) {
      rocksdb::PinnableSlice value;
      rocksdb::ReadOptions ro;
      rocksdb::Status s = db_->Get(ro, meta_cfs_[static_cast<size_t>(db)],
                                   rocksdb::Slice(op.key.data(), op.key.size()), &value);
      if (!s.ok() && !s.IsNotFound()) return FromRocks(s);
      if (s.ok()) {
        ks.present = true;
        Meta meta;
        if (DecodeMetaHeader(std::string_view(value.data(), value.size()), &meta)) {
          ks.expire = meta.expire_at_ms;
        }
      }
    }
    const KeyState after{op.put, op.put ? op.expire_at_ms : 0};
    if (!op.counted) {
      CounterDelta d{db, 0, 0, 0};
      d.keys = static_cast<int64_t>(after.present) - static_cast<int64_t>(ks.present);
      if (ks.present && ks.expire != 0) {
        d.expires -= 1;
        d.expire_sum -= static_cast<uint64_t>(ks.expire - ttl_base_ms_);
      }
      if (after.present && after.expire != 0) {
        d.expires += 1;
        d.expire_sum += static_cast<uint64_t>(after.expire - ttl_base_ms_);
      }
      if (d.keys != 0 || d.expires != 0 || d.expire_sum != 0) deltas.push_back(d);
    }
    ks = after;
    if (op.put) key_filter_->Add(static_cast<uint32_t>(db), op.key);
  }
  metas.clear();  // its keys are views into the batch, which the state record extends
  // The batch as received, with the replica's state appended: written as one.
  rocksdb::WriteBatch& batch = records->batch;
  records->ops.clear();
  records->counts.clear();
  if (Status s = FromRocks(batch.Put(props_cf_, kPropsReplState, EncodeState(state))); !s.ok()) {
    return s;
  }
  if (Status s = WriteReplicationRecord(write_options_, &batch); !s.ok()) return s;
  wal_bytes_.fetch_add(batch.GetDataSize(), std::memory_order_relaxed);
  if (local_first != nullptr) {
    // The write set the batch's header to the sequence number it was given.
    uint64_t seq = 0;
    std::memcpy(&seq, batch.Data().data(), 8);
    *local_first = seq;
  }

  ApplyDeltas(deltas.data(), deltas.size());
  // A range deletion of metas (FLUSHDB, FLUSHALL): count the database again (what survives it).
  for (int db : flushed) {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_cfs_[static_cast<size_t>(db)]));
    int64_t n = 0, expires = 0;
    uint64_t sum = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++n;
      Meta meta;
      if (DecodeMetaHeader(std::string_view(it->value().data(), it->value().size()), &meta) &&
          meta.expire_at_ms != 0) {
        ++expires;
        sum += static_cast<uint64_t>(meta.expire_at_ms - ttl_base_ms_);
      }
    }
    if (!it->status().ok()) return FromRocks(it->status());
    DbCounters& c = counters_[static_cast<size_t>(db)];
    c.keys.store(n);
    c.expires.store(expires);
    c.expire_sum.store(sum);
  }
  if (db_map_changed) return LoadDbMap();
  return Status::OK();
}

WalBatchOrigin RocksStore::ClassifyWalBatch(std::string* rep, ReplicationState* state) {
  uint32_t props_id = 0;
  {
    Hold hold;
    if (!Enter(&hold).ok()) return WalBatchOrigin::kOwn;
    props_id = props_cf_->GetID();
  }
  // The last record and the number of records (LogData has no sequence number: not counted).
  struct Last : rocksdb::WriteBatch::Handler {
    uint32_t records = 0;
    bool put = false;
    uint32_t cf = 0;
    std::string key, value;
    void Note(uint32_t c, const rocksdb::Slice& k, const rocksdb::Slice* v) {
      ++records;
      cf = c;
      put = v != nullptr;
      key.assign(k.data(), k.size());
      if (v != nullptr) value.assign(v->data(), v->size());
    }
    rocksdb::Status PutCF(uint32_t c, const rocksdb::Slice& k, const rocksdb::Slice& v) override {
      Note(c, k, &v);
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteCF(uint32_t c, const rocksdb::Slice& k) override {
      Note(c, k, nullptr);
      return rocksdb::Status::OK();
    }
    rocksdb::Status SingleDeleteCF(uint32_t c, const rocksdb::Slice& k) override {
      Note(c, k, nullptr);
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteRangeCF(uint32_t c, const rocksdb::Slice& b,
                                  const rocksdb::Slice&) override {
      Note(c, b, nullptr);
      return rocksdb::Status::OK();
    }
    rocksdb::Status MergeCF(uint32_t c, const rocksdb::Slice& k, const rocksdb::Slice& v) override {
      Note(c, k, nullptr);
      return rocksdb::Status::OK();
    }
  } last;
  {
    rocksdb::WriteBatch batch{*rep};
    if (!batch.Iterate(&last).ok()) return WalBatchOrigin::kOwn;
  }
  if (last.records == 0 || !last.put || last.cf != props_id || last.key != kPropsReplState) {
    return WalBatchOrigin::kOwn;
  }
  if (last.records == 1) return WalBatchOrigin::kStateOnly;
  const size_t colon = last.value.rfind(':');
  if (colon == std::string::npos || colon == 0) return WalBatchOrigin::kOwn;
  // ApplyReplicated appended the state last: its bytes end the batch (batch_records.h).
  std::string record;
  batch_records::AppendPut(&record, props_id, kPropsReplState, last.value);
  if (rep->size() < batch_records::kHeaderSize + record.size() ||
      rep->compare(rep->size() - record.size(), record.size(), record) != 0) {
    return WalBatchOrigin::kOwn;
  }
  state->replid = last.value.substr(0, colon);
  state->offset = std::strtoull(last.value.c_str() + colon + 1, nullptr, 10);
  const uint32_t records = last.records - 1;
  if (state->offset + 1 < records) return WalBatchOrigin::kOwn;
  rep->resize(rep->size() - record.size());
  batch_records::SetCount(rep, records);
  const uint64_t first = state->offset + 1 - records;
  std::memcpy(rep->data(), &first, 8);  // little-endian fixed64 (RocksDB's coding)
  return WalBatchOrigin::kReplicated;
}

Status RocksStore::DropRecordsBefore(std::string* rep, uint64_t from) {
  if (rep->size() < batch_records::kHeaderSize) return Status::Corruption("short batch");
  uint64_t first = 0;
  uint32_t count = 0;
  std::memcpy(&first, rep->data(), 8);  // little-endian fixed64 / fixed32 (batch_records.h)
  std::memcpy(&count, rep->data() + 8, 4);
  if (from <= first || from >= first + count) {
    return Status::InvalidArgument("sequence " + std::to_string(from) + " is not inside the batch");
  }
  // Re-encodes the records from the (from - first)-th on, and the LogData after the first kept.
  struct Trimmer : rocksdb::WriteBatch::Handler {
    uint64_t skip = 0;
    uint64_t seen = 0;
    uint32_t kept = 0;
    std::string out = batch_records::EmptyRep();
    bool Keep() {
      if (seen++ < skip) return false;
      ++kept;
      return true;
    }
    rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& k, const rocksdb::Slice& v) override {
      if (Keep()) batch_records::AppendPut(&out, cf, View(k), View(v));
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& k) override {
      if (Keep()) batch_records::AppendDelete(&out, cf, View(k));
      return rocksdb::Status::OK();
    }
    rocksdb::Status SingleDeleteCF(uint32_t cf, const rocksdb::Slice& k) override {
      if (Keep()) {
        batch_records::PutTag(&out, cf, '\x07', '\x08');
        batch_records::PutSlice(&out, View(k));
      }
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteRangeCF(uint32_t cf, const rocksdb::Slice& b,
                                  const rocksdb::Slice& e) override {
      if (Keep()) batch_records::AppendDeleteRange(&out, cf, View(b), View(e));
      return rocksdb::Status::OK();
    }
    rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& k,
                            const rocksdb::Slice& v) override {
      if (Keep()) {
        batch_records::PutTag(&out, cf, '\x02', '\x06');
        batch_records::PutSlice(&out, View(k));
        batch_records::PutSlice(&out, View(v));
      }
      return rocksdb::Status::OK();
    }
    void LogData(const rocksdb::Slice& blob) override {
      if (kept == 0) return;  // a note of a batch before `from` (notes follow their records)
      out.push_back('\x03');
      batch_records::PutSlice(&out, View(blob));
    }
    static std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }
  } trimmer;
  trimmer.skip = from - first;
  {
    rocksdb::WriteBatch batch{*rep};
    if (Status s = FromRocks(batch.Iterate(&trimmer)); !s.ok()) return s;
  }
  batch_records::SetCount(&trimmer.out, trimmer.kept);
  std::memcpy(trimmer.out.data(), &from, 8);
  rep->swap(trimmer.out);
  return Status::OK();
}

StatusOr<ReplicationState> RocksStore::GetReplicationState() {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), props_cf_, kPropsReplState, &value);
  ReplicationState state;
  if (s.IsNotFound()) return state;
  if (!s.ok()) return FromRocks(s);
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos) return Status::Corruption("bad repl-state in props");
  state.replid = value.substr(0, colon);
  state.offset = std::strtoull(value.c_str() + colon + 1, nullptr, 10);
  return state;
}

Status RocksStore::SetReplicationState(const ReplicationState& state) {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  rocksdb::WriteOptions wo = write_options_;
  wo.sync = true;
  rocksdb::WriteBatch batch;
  if (Status s = FromRocks(batch.Put(props_cf_, kPropsReplState, EncodeState(state))); !s.ok()) {
    return s;
  }
  return WriteReplicationRecord(wo, &batch);
}

void RocksStore::DropDb() {
  filter_ctx_->db.store(nullptr, std::memory_order_release);
  rocksdb::CancelAllBackgroundWork(db_, /*wait=*/true);
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  handles_.clear();
  meta_cfs_.clear();
  (void)db_->Close();
  delete db_;
  db_ = nullptr;
}

Status RocksStore::ReplaceDatabase(const std::string& staged_dir, const ReplicationState& state) {
  WriterMutexLock lock(&lifecycle_);
  if (closed_ || db_ == nullptr) return Status::Shutdown("store is closed");
  namespace fs = std::filesystem;
  // Every rename stays inside the data directory, on one file system. Until the new database
  // holds `state` (the commit point) the old one waits at old_dir, and a crash before it is
  // rolled back by the next open; after it, old_dir is renamed away in one step and then
  // removed (data_dir.h).
  const std::string& base = db_path_;
  const std::string old_dir = data_dir::ReplacedPath(options_.dir);
  const std::string discarded = data_dir::DiscardedPath(options_.dir);
  std::error_code ec;
  // Removes old_dir (an earlier swap's, committed) through `discarded`: a kill while removing
  // never leaves part of it at old_dir, which the next open would put back. Left in place when
  // the rename fails (the next open then rolls back to it: consistent, if older).
  auto discard_old = [&] {
    std::error_code e;
    fs::remove_all(discarded, e);
    if (!fs::exists(old_dir, e)) return;
    fs::rename(old_dir, discarded, e);
    if (e) return;
    (void)data_dir::SyncDirectory(options_.dir);
    fs::remove_all(discarded, e);
  };
  discard_old();
  DropDb();
  fs::rename(base, old_dir, ec);
  if (!ec) fs::rename(staged_dir, base, ec);
  if (ec) {
    // Put the old database back and reopen it.
    std::error_code ignored;
    if (!fs::exists(base, ignored)) fs::rename(old_dir, base, ignored);
    Status reopened = OpenDb();
    if (!reopened.ok()) closed_ = true;
    return Status::IOError("cannot move " + staged_dir + " into place: " + ec.message());
  }
  (void)data_dir::SyncDirectory(options_.dir);  // the swap made durable (best effort)
  Status s = OpenDb();
  if (s.ok()) {
    // The commit point: the replication state that goes with the new data, fsynced.
    rocksdb::WriteOptions wo = write_options_;
    wo.sync = true;
    rocksdb::WriteBatch batch;
    s = FromRocks(batch.Put(props_cf_, kPropsReplState, EncodeState(state)));
    if (s.ok()) s = WriteReplicationRecord(wo, &batch);
  }
  if (!s.ok()) {
    // The old database stays at old_dir; the next open puts it back.
    if (db_ != nullptr) DropDb();
    closed_ = true;
    return s;
  }
  discard_old();
  {
    MutexLock sweep(&sweep_mu_);
    sweep_db_ = 0;
    sweep_has_pos_ = false;
  }
  return Status::OK();
}

Status RocksStore::ResumeWrites() {
  Hold hold;
  if (Status s = Enter(&hold); !s.ok()) return s;
  std::string stored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), props_cf_, kPropsNextVersionRecord, &stored);
  if (!s.ok() && !s.IsNotFound()) return FromRocks(s);
  MutexLock lock(&version_mu_);
  if (s.ok() && stored.size() == 8)
    next_version_ = std::max(next_version_, GetFixed64BE(stored.data()));
  reserved_version_ = next_version_;  // the next new version reserves a chunk above it
  return Status::OK();
}

}  // namespace rockcache::storage
