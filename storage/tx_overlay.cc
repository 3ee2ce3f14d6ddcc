// DbView: the reads of a transaction or indexed write group through its TxOverlay (TxGet,
// TxMultiGet, TxIter: the slow paths of DbGet / DbMultiGet / NewIter) and the iterators that
// merge the overlay over the database's. See tx_overlay.h, db_view.h.
#include "storage/tx_overlay.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rockcache::storage {

namespace {

// The database's iterator over a range where the overlay holds only deletes (TxOverlay::Within):
// the keys it deletes are skipped, in both directions. What OverlayIterator would show, at the
// cost of one index lookup per seek and a comparison or two per step.
class SkipPendingDeletes final : public rocksdb::Iterator {
 public:
  SkipPendingDeletes(rocksdb::Iterator* base, const TxOverlay::KeyIndex* index)
      : base_(base), index_(index) {}
  bool Valid() const override { return base_->Valid(); }
  void SeekToFirst() override {
    base_->SeekToFirst();
    SkipForward(false);
  }
  void SeekToLast() override {
    base_->SeekToLast();
    SkipBackward();
  }
  void Seek(const rocksdb::Slice& target) override {
    base_->Seek(target);
    SkipForward(false);
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    base_->SeekForPrev(target);
    SkipBackward();
  }
  void Next() override {
    base_->Next();
    SkipForward(true);
  }
  void Prev() override {
    base_->Prev();
    SkipBackward();
  }
  rocksdb::Slice key() const override { return base_->key(); }
  rocksdb::Slice value() const override { return base_->value(); }
  rocksdb::Status status() const override { return base_->status(); }

 private:
  static constexpr int kMaxWalk = 16;  // index entries walked before searching instead

  // Whether the key the base is on has a pending delete. After a forward step, the index is
  // walked from where the last answer left it (both go in key order: a comparison or two per
  // step, instead of a search of the whole index at each, most of a pipelined SPOP's read).
  bool Deleted(bool stepped_forward) {
    const rocksdb::Slice k = base_->key();
    const std::string_view key(k.data(), k.size());
    bool found = false;
    if (stepped_forward && walking_) {
      for (int n = 0; n <= kMaxWalk; ++n) {
        if (pos_ == index_->end() || pos_->first >= key) {
          found = true;
          break;
        }
        ++pos_;
      }
    }
    if (!found) pos_ = index_->lower_bound(key);  // pos_ <= every later key's entry
    walking_ = true;
    return pos_ != index_->end() && pos_->first == key && pos_->second.deleted;
  }
  void SkipForward(bool stepped) {
    while (base_->Valid() && Deleted(stepped)) {
      base_->Next();
      stepped = true;
    }
  }
  void SkipBackward() {
    while (base_->Valid() && Deleted(false)) base_->Prev();
  }

  std::unique_ptr<rocksdb::Iterator> base_;
  const TxOverlay::KeyIndex* index_;
  TxOverlay::KeyIndex::const_iterator pos_;  // with walking_: the first entry >= the last key
  bool walking_ = false;
};

// The database's iterator (which keeps ro's bounds itself) merged with the overlay's index
// within the same bounds: where both hold a key the overlay's write wins, and a delete hides
// the key. Moving in the other direction than the last move re-seeks both sides from the
// current key (rare: a reverse range read that turns round).
class OverlayIterator final : public rocksdb::Iterator {
 public:
  OverlayIterator(rocksdb::Iterator* base, const TxOverlay* overlay,
                  const TxOverlay::KeyIndex* index, const rocksdb::Slice* lo,
                  const rocksdb::Slice* hi)
      : base_(base), overlay_(overlay), index_(index) {
    if (lo != nullptr) lo_ = std::string_view(lo->data(), lo->size());
    if (hi != nullptr) hi_ = std::string_view(hi->data(), hi->size());
  }

  bool Valid() const override { return valid_; }
  void SeekToFirst() override {
    base_->SeekToFirst();
    delta_ = lo_ ? index_->lower_bound(*lo_) : index_->begin();
    Settle(/*forward=*/true);
  }
  void SeekToLast() override {
    base_->SeekToLast();
    SetDeltaBefore(hi_ ? *hi_ : std::string_view(), /*inclusive=*/false, /*unbounded=*/!hi_);
    Settle(/*forward=*/false);
  }
  void Seek(const rocksdb::Slice& target) override {
    base_->Seek(target);
    std::string_view t(target.data(), target.size());
    if (lo_ && t < *lo_) t = *lo_;
    delta_ = index_->lower_bound(t);
    Settle(/*forward=*/true);
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    base_->SeekForPrev(target);
    const std::string_view t(target.data(), target.size());
    if (hi_ && t >= *hi_) {
      SetDeltaBefore(*hi_, /*inclusive=*/false, /*unbounded=*/false);
    } else {
      SetDeltaBefore(t, /*inclusive=*/true, /*unbounded=*/false);
    }
    Settle(/*forward=*/false);
  }
  void Next() override {
    if (!forward_) {  // turn round: both sides to the first key after the current one
      const std::string current = key().ToString();
      base_->Seek(current);
      if (base_->Valid() && base_->key() == rocksdb::Slice(current)) base_->Next();
      delta_ = index_->upper_bound(current);
    } else {
      if (from_delta_) {
        if (base_->Valid() && base_->key() == DeltaKey()) base_->Next();
        ++delta_;
      } else {
        base_->Next();
      }
    }
    Settle(/*forward=*/true);
  }
  void Prev() override {
    if (forward_) {  // turn round: both sides to the last key before the current one
      const std::string current = key().ToString();
      base_->SeekForPrev(current);
      if (base_->Valid() && base_->key() == rocksdb::Slice(current)) base_->Prev();
      SetDeltaBefore(current, /*inclusive=*/false, /*unbounded=*/false);
    } else {
      if (from_delta_) {
        if (base_->Valid() && base_->key() == DeltaKey()) base_->Prev();
        StepDeltaBack();
      } else {
        base_->Prev();
      }
    }
    Settle(/*forward=*/false);
  }
  rocksdb::Slice key() const override { return from_delta_ ? DeltaKey() : base_->key(); }
  rocksdb::Slice value() const override {
    return from_delta_ ? overlay_->value(delta_->second) : base_->value();
  }
  rocksdb::Status status() const override { return base_->status(); }

 private:
  rocksdb::Slice DeltaKey() const { return rocksdb::Slice(delta_->first); }
  // Whether delta_ names an entry within the bounds, in the direction of travel.
  bool DeltaValid(bool forward) const {
    if (forward) return delta_ != index_->end() && (!hi_ || std::string_view(delta_->first) < *hi_);
    return delta_valid_back_ && (!lo_ || std::string_view(delta_->first) >= *lo_);
  }
  // Backward: delta_ to the last entry < key (<= key when inclusive; the last of all when
  // unbounded); delta_valid_back_ false when there is none.
  void SetDeltaBefore(std::string_view key, bool inclusive, bool unbounded) {
    auto it = unbounded   ? index_->end()
              : inclusive ? index_->upper_bound(key)
                          : index_->lower_bound(key);
    delta_valid_back_ = it != index_->begin();
    if (delta_valid_back_) delta_ = std::prev(it);
  }
  void StepDeltaBack() {
    if (delta_ == index_->begin()) {
      delta_valid_back_ = false;
    } else {
      --delta_;
    }
  }
  // From the two sides' positions, the current entry in direction `forward`, stepping over
  // deleted keys.
  void Settle(bool forward) {
    forward_ = forward;
    for (;;) {
      const bool base_ok = base_->Valid();
      const bool delta_ok = DeltaValid(forward);
      if (!base_ok && !delta_ok) {
        valid_ = false;
        from_delta_ = false;
        return;
      }
      int order = 0;  // delta's key against base's: < 0 delta first (in the direction of travel)
      if (!base_ok) {
        order = -1;
      } else if (!delta_ok) {
        order = 1;
      } else {
        order = DeltaKey().compare(base_->key());
        if (!forward) order = -order;
      }
      if (order > 0) {
        valid_ = true;
        from_delta_ = false;
        return;
      }
      if (!delta_->second.deleted) {
        valid_ = true;
        from_delta_ = true;
        return;
      }
      // A deleted key: step over it on both sides.
      if (order == 0) forward ? base_->Next() : base_->Prev();
      if (forward) {
        ++delta_;
      } else {
        StepDeltaBack();
      }
    }
  }

  std::unique_ptr<rocksdb::Iterator> base_;
  const TxOverlay* overlay_;
  const TxOverlay::KeyIndex* index_;
  std::optional<std::string_view> lo_, hi_;
  TxOverlay::KeyIndex::const_iterator delta_;
  bool delta_valid_back_ = false;
  bool forward_ = true;
  bool from_delta_ = false;
  bool valid_ = false;
};

}  // namespace

namespace {

// A point read through the overlay: true when the overlay decides it (a value, or NotFound).
template <typename Out>
bool ReadPending(const TxOverlay* tx, rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key,
                 Out* value, rocksdb::Status* status) {
  const TxOverlay::Write* w = tx->Find(cf->GetID(), key);
  if (w == nullptr) return false;
  if (w->deleted) {
    *status = rocksdb::Status::NotFound();
  } else {
    const rocksdb::Slice v = tx->value(*w);
    if constexpr (std::is_same_v<Out, rocksdb::PinnableSlice>) {
      value->PinSelf(v);
    } else {
      value->assign(v.data(), v.size());
    }
    *status = rocksdb::Status::OK();
  }
  return true;
}

void Assign(rocksdb::PinnableSlice* out, std::string_view v) {
  out->PinSelf(rocksdb::Slice(v.data(), v.size()));
}
void Assign(std::string* out, std::string_view v) { out->assign(v.data(), v.size()); }
rocksdb::Slice Bytes(const rocksdb::PinnableSlice& v) { return v; }
rocksdb::Slice Bytes(const std::string& v) { return v; }

// A point read inside an overlay: its pending write, else what it read of the database before
// (TxOverlay::Recall), else the database, remembered. Reads at a snapshot see an older state:
// they neither recall nor remember.
template <typename Out>
rocksdb::Status OverlayGet(TxOverlay* tx, rocksdb::DB* db, const rocksdb::ReadOptions& ro,
                           rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key, Out* value) {
  rocksdb::Status s;
  if (ReadPending(tx, cf, key, value, &s)) return s;
  if (ro.snapshot != nullptr) return db->Get(ro, cf, key, value);
  const uint32_t cf_id = cf->GetID();
  if (const TxOverlay::Remembered* r = tx->Recall(cf_id, key)) {
    if (!r->found) return rocksdb::Status::NotFound();
    Assign(value, r->value);
    return rocksdb::Status::OK();
  }
  s = db->Get(ro, cf, key, value);
  if (s.ok()) {
    const rocksdb::Slice bytes = Bytes(*value);
    tx->Remember(cf_id, key, &bytes);
  } else if (s.IsNotFound()) {
    tx->Remember(cf_id, key, nullptr);
  }
  return s;
}

}  // namespace

rocksdb::Status DbView::TxGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                              const rocksdb::Slice& key, rocksdb::PinnableSlice* value) {
  TxOverlay* tx = tls_tx_overlay;
  if (tx->store() != this) return db_->Get(ro, cf, key, value);
  return OverlayGet(tx, db_, ro, cf, key, value);
}

rocksdb::Status DbView::TxGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf,
                              const rocksdb::Slice& key, std::string* value) {
  TxOverlay* tx = tls_tx_overlay;
  if (tx->store() != this) return db_->Get(ro, cf, key, value);
  return OverlayGet(tx, db_, ro, cf, key, value);
}

void DbView::TxMultiGet(const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf, size_t n,
                        const rocksdb::Slice* keys, rocksdb::PinnableSlice* values,
                        rocksdb::Status* statuses) {
  TxOverlay* tx = tls_tx_overlay;
  if (tx->store() != this) return db_->MultiGet(ro, cf, n, keys, values, statuses);
  // The keys the overlay does not decide go to the database in one MultiGet.
  std::vector<size_t> rest;
  for (size_t i = 0; i < n; ++i) {
    if (!ReadPending(tx, cf, keys[i], &values[i], &statuses[i])) rest.push_back(i);
  }
  if (rest.size() == n) return db_->MultiGet(ro, cf, n, keys, values, statuses);
  if (rest.empty()) return;
  std::vector<rocksdb::Slice> rest_keys;
  rest_keys.reserve(rest.size());
  for (size_t i : rest) rest_keys.push_back(keys[i]);
  std::vector<rocksdb::PinnableSlice> rest_values(rest.size());
  std::vector<rocksdb::Status> rest_statuses(rest.size());
  db_->MultiGet(ro, cf, rest.size(), rest_keys.data(), rest_values.data(), rest_statuses.data());
  for (size_t j = 0; j < rest.size(); ++j) {
    statuses[rest[j]] = rest_statuses[j];
    values[rest[j]].Reset();
    if (rest_statuses[j].ok()) values[rest[j]].PinSelf(rest_values[j]);
  }
}

bool TxOverlay::Append(std::string_view data) {
  if (data.size() <= batch_records::kHeaderSize) return true;
  if (!batch_records::OnlyPointRecords(data)) return false;
  const size_t base = rep_.size() - batch_records::kHeaderSize;
  rep_.append(data.substr(batch_records::kHeaderSize));
  batch_records::ForEachRecord(data, [&](const batch_records::Record& r) {
    Write& w = Note(r.cf_id, std::string_view(data.data() + r.key_offset, r.key_size));
    w.deleted = r.deleted;
    w.value_offset = r.deleted ? 0 : base + r.value_offset;
    w.value_size = r.deleted ? 0 : r.value_size;
    ++count_;
  });
  batch_records::SetCount(&rep_, count_);
  return true;
}

void TxOverlay::RollbackToSavepoint() {
  if (!savepoint_) return;
  for (size_t i = undo_.size(); i-- > 0;) {
    const Undo& u = undo_[i];
    KeyIndex& index = indexes_[u.index].second;
    auto it = index.find(u.key);
    if (it == index.end()) continue;
    if (u.existed) {
      it->second = u.before;
    } else {
      index.erase(it);
    }
  }
  undo_.clear();
  rep_.resize(savepoint_size_);
  count_ = savepoint_count_;
  batch_records::SetCount(&rep_, count_);
  cursors_.clear();
  DropFront();
}

bool TxOverlay::LastWritesInKeyOrder(rocksdb::WriteBatch* out) const {
  if (count_ < 2) return false;
  size_t distinct = 0;
  for (const auto& entry : indexes_) distinct += entry.second.size();
  std::string rep = batch_records::EmptyRep();
  rep.reserve(rep_.size());  // at most the records it replaces
  for (const auto& [cf_id, index] : indexes_) {
    for (const auto& [key, w] : index) {
      if (w.deleted) {
        batch_records::AppendDelete(&rep, cf_id, key);
      } else {
        batch_records::AppendPut(&rep, cf_id, key, View(value(w)));
      }
    }
  }
  batch_records::SetCount(&rep, static_cast<uint32_t>(distinct));
  *out = rocksdb::WriteBatch(std::move(rep));
  return true;
}

rocksdb::Status DbView::TxGetInOrder(const rocksdb::ReadOptions& ro,
                                     rocksdb::ColumnFamilyHandle* cf, const rocksdb::Slice& key,
                                     size_t collection_size, ReadOrder order, std::string* value) {
  TxOverlay* tx = tls_tx_overlay;
  rocksdb::Status s;
  if (tx->store() != this || ro.snapshot != nullptr) return db_->Get(ro, cf, key, value);
  if (ReadPending(tx, cf, key, value, &s)) return s;
  if (const TxOverlay::Remembered* r = tx->Recall(cf->GetID(), key)) {  // read ahead
    if (!r->found) return rocksdb::Status::NotFound();
    value->assign(r->value.data(), r->value.size());
    return rocksdb::Status::OK();
  }
  CollectionCursor* cursor =
      tx->Cursor(db_, cf, std::string_view(key.data(), std::min(collection_size, key.size())));
  if (cursor == nullptr || cursor->leased()) return db_->Get(ro, cf, key, value);
  if (order == ReadOrder::kBackward) {
    cursor->SeekBackward(key, *tx);
  } else {
    cursor->SeekForward(key, *tx);
  }
  if (!cursor->status().ok()) return cursor->status();
  if (!cursor->Valid() || cursor->key() != key) return rocksdb::Status::NotFound();
  value->assign(cursor->value().data(), cursor->value().size());
  return rocksdb::Status::OK();
}

void DbView::ReadAheadForBackward(rocksdb::ColumnFamilyHandle* cf, const std::string& lo,
                                  const std::string& last) {
  TxOverlay* tx = tls_tx_overlay;
  if (tx == nullptr || tx->store() != this || lo > last) return;
  const uint32_t cf_id = cf->GetID();
  if (tx->Recall(cf_id, last) != nullptr) return;
  const std::string end = last + '\0';  // the successor of `last`
  const rocksdb::Slice lower(lo), upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf));
  for (it->Seek(lower); it->Valid(); it->Next()) {
    const rocksdb::Slice v = it->value();
    tx->Remember(cf_id, it->key(), &v);
  }
}

std::unique_ptr<rocksdb::Iterator> DbView::TxIter(const rocksdb::ReadOptions& ro,
                                                  rocksdb::ColumnFamilyHandle* cf,
                                                  std::string_view collection) {
  TxOverlay* tx = tls_tx_overlay;
  if (tx->store() != this) return std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(ro, cf));
  rocksdb::Iterator* base = nullptr;
  if (!collection.empty() && ro.snapshot == nullptr) {
    CollectionCursor* cursor = tx->Cursor(db_, cf, collection);
    if (cursor != nullptr && !cursor->leased()) {
      base = cursor->NewLease(tx, ro.iterate_lower_bound, ro.iterate_upper_bound).release();
    }
  }
  if (base == nullptr) base = db_->NewIterator(ro, cf);
  const TxOverlay::KeyIndex* index = tx->IndexOf(cf->GetID());
  switch (tx->Within(cf->GetID(), ro.iterate_lower_bound, ro.iterate_upper_bound)) {
    case TxOverlay::Pending::kNone:
      return std::unique_ptr<rocksdb::Iterator>(base);
    case TxOverlay::Pending::kDeletesOnly:
      return std::make_unique<SkipPendingDeletes>(base, index);
    case TxOverlay::Pending::kPuts:
      break;
  }
  return std::make_unique<OverlayIterator>(base, tx, index, ro.iterate_lower_bound,
                                           ro.iterate_upper_bound);
}

}  // namespace rockcache::storage
