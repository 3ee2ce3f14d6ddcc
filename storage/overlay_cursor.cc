#include "storage/overlay_cursor.h"

#include "storage/encoding.h"
#include "storage/tx_overlay.h"

namespace rockcache::storage {

CollectionCursor::CollectionCursor(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                   std::string_view collection)
    : cf_id_(cf->GetID()), lo_(collection), hi_(PrefixSuccessor(collection)) {
  lo_slice_ = rocksdb::Slice(lo_);
  hi_slice_ = rocksdb::Slice(hi_);
  rocksdb::ReadOptions ro;
  ro.iterate_lower_bound = &lo_slice_;
  if (!hi_.empty()) ro.iterate_upper_bound = &hi_slice_;
  base_.reset(db->NewIterator(ro, cf));
}

bool CollectionCursor::PassedAllPending(const TxOverlay& tx) const {
  for (const std::string& k : passed_) {
    if (tx.Find(cf_id_, k) == nullptr) return false;
  }
  return true;
}

void CollectionCursor::SeekForward(const rocksdb::Slice& target, const TxOverlay& tx) {
  if (dir_ == Dir::kForward && base_->status().ok() &&
      origin_.compare(0, std::string::npos, target.data(), target.size()) <= 0 &&
      PassedAllPending(tx)) {
    passed_.clear();  // the invariant now covers them: [origin_, here) holds only pending keys
    if (!base_->Valid() || target.compare(base_->key()) <= 0) {
      ++reused_;
      return;  // here is the first key >= target that the overlay does not decide
    }
    // A little ahead: step (the keys stepped over are < target, so they do not matter).
    for (int i = 0; i < kMaxSteps && base_->Valid() && base_->key().compare(target) < 0; ++i) {
      base_->Next();
    }
    if (base_->status().ok() && (!base_->Valid() || base_->key().compare(target) >= 0)) {
      origin_.assign(target.data(), target.size());
      ++reused_;
      return;
    }
  }
  ++seeks_;
  base_->Seek(target);
  origin_.assign(target.data(), target.size());
  passed_.clear();
  dir_ = Dir::kForward;
}

void CollectionCursor::SeekBackward(const rocksdb::Slice& target, const TxOverlay& tx) {
  if (dir_ == Dir::kBackward && base_->status().ok() &&
      origin_.compare(0, std::string::npos, target.data(), target.size()) >= 0 &&
      PassedAllPending(tx)) {
    passed_.clear();  // the invariant now covers them: (here, origin_] holds only pending keys
    if (!base_->Valid() || target.compare(base_->key()) >= 0) {
      ++reused_;
      return;  // here is the last key <= target that the overlay does not decide
    }
    for (int i = 0; i < kMaxSteps && base_->Valid() && base_->key().compare(target) > 0; ++i) {
      base_->Prev();
    }
    if (base_->status().ok() && (!base_->Valid() || base_->key().compare(target) <= 0)) {
      origin_.assign(target.data(), target.size());
      ++reused_;
      return;
    }
  }
  ++seeks_;
  base_->SeekForPrev(target);
  origin_.assign(target.data(), target.size());
  passed_.clear();
  dir_ = Dir::kBackward;
}

void CollectionCursor::Step(Dir dir) {
  if (dir_ == dir && base_->Valid()) {
    if (passed_.size() < kMaxPassed) {
      const rocksdb::Slice k = base_->key();
      passed_.emplace_back(k.data(), k.size());
    } else {
      dir_ = Dir::kNone;
    }
  } else if (dir_ != dir) {
    dir_ = Dir::kNone;  // turning round: the memory is of the other side
  }
  if (dir == Dir::kForward) {
    base_->Next();
  } else {
    base_->Prev();
  }
}

// One read's view of a cursor: the cursor's iterator narrowed to [lo, hi).
class CursorLease final : public rocksdb::Iterator {
 public:
  CursorLease(CollectionCursor* cursor, const TxOverlay* tx, const rocksdb::Slice* lo,
              const rocksdb::Slice* hi)
      : cursor_(cursor), tx_(tx) {
    lo_ = lo != nullptr ? std::string(lo->data(), lo->size()) : cursor->lo_;
    hi_ = hi != nullptr ? std::string(hi->data(), hi->size()) : cursor->hi_;
    cursor_->leased_ = true;
  }
  ~CursorLease() override { cursor_->leased_ = false; }

  bool Valid() const override { return valid_; }
  void SeekToFirst() override { Seek(lo_); }
  void SeekToLast() override {
    if (hi_.empty()) {  // the collection's end is the column family's: no key to seek before
      cursor_->Forget();
      cursor_->base()->SeekToLast();
    } else {
      cursor_->SeekBackward(hi_, *tx_);
      if (cursor_->base()->Valid() && cursor_->base()->key().compare(hi_) >= 0) cursor_->Prev();
    }
    Check();
  }
  void Seek(const rocksdb::Slice& target) override {
    const rocksdb::Slice t = target.compare(lo_) < 0 ? rocksdb::Slice(lo_) : target;
    cursor_->SeekForward(t, *tx_);
    Check();
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    if (!hi_.empty() && target.compare(hi_) >= 0) return SeekToLast();
    cursor_->SeekBackward(target, *tx_);
    Check();
  }
  void Next() override {
    cursor_->Next();
    Check();
  }
  void Prev() override {
    cursor_->Prev();
    Check();
  }
  rocksdb::Slice key() const override { return cursor_->base()->key(); }
  rocksdb::Slice value() const override { return cursor_->base()->value(); }
  rocksdb::Status status() const override { return cursor_->base()->status(); }

 private:
  void Check() {
    rocksdb::Iterator* base = cursor_->base();
    valid_ = base->Valid() && base->key().compare(lo_) >= 0 &&
             (hi_.empty() || base->key().compare(hi_) < 0);
  }

  CollectionCursor* const cursor_;
  const TxOverlay* const tx_;
  std::string lo_, hi_;
  bool valid_ = false;
};

std::unique_ptr<rocksdb::Iterator> CollectionCursor::NewLease(const TxOverlay* tx,
                                                              const rocksdb::Slice* lo,
                                                              const rocksdb::Slice* hi) {
  return std::make_unique<CursorLease>(this, tx, lo, hi);
}

TxOverlay::~TxOverlay() = default;

CollectionCursor* TxOverlay::Cursor(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                    std::string_view collection) {
  const uint32_t id = cf->GetID();
  std::unique_ptr<CollectionCursor>* spare = nullptr;
  for (auto& c : cursors_) {
    if (c->cf_id() == id && c->collection() == collection) return c.get();
    if (spare == nullptr && !c->leased()) spare = &c;
  }
  if (cursors_.size() < kMaxCursors) {
    return cursors_.emplace_back(std::make_unique<CollectionCursor>(db, cf, collection)).get();
  }
  if (spare == nullptr) return nullptr;
  spare->reset(new CollectionCursor(db, cf, collection));
  return spare->get();
}

}  // namespace rockcache::storage
